#include "kubelet/certificate_manager.h"

#include <algorithm>
#include <random>

#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::kubelet {

using SystemClock = std::chrono::system_clock;

std::chrono::milliseconds nextBackoff(std::chrono::milliseconds previous,
                                      std::chrono::milliseconds initial,
                                      std::chrono::milliseconds max) {
  if (previous.count() <= 0) return std::min(initial, max);
  return std::min(previous * 2, max);
}

namespace {

// The seconds left on the certificate in `path` (0 when it is missing or unreadable).
double secondsLeft(const std::string& path) {
  auto pem = pki::readPemFile(path);
  if (!pem.ok()) return 0;
  auto info = pki::parseCertificate(*pem);
  if (!info.ok()) return 0;
  return std::chrono::duration<double>(info->notAfter - SystemClock::now()).count();
}

}  // namespace

CertificateManager::CertificateManager(NodeCredentials& credentials, ClientFactory clients,
                                       CertificateRotationOptions options)
    : credentials_(credentials), clients_(std::move(clients)), options_(std::move(options)) {
  auto& registry = metrics::defaultRegistry();
  clientTtl_ = registry.gaugeCallback(
      "kubelet_certificate_manager_client_ttl_seconds",
      "Seconds until the kubelet's client certificate expires (negative: expired).",
      [path = credentials_.clientCertPath()] { return secondsLeft(path); });
  if (options_.rotateServing) {
    servingTtl_ = registry.gaugeCallback(
        "kubelet_certificate_manager_server_ttl_seconds",
        "Seconds until the kubelet's serving certificate expires (negative: expired).",
        [path = credentials_.servingCertPath()] { return secondsLeft(path); });
  }
}

CertificateManager::~CertificateManager() { stop(); }

double CertificateManager::random() {
  if (options_.random) return options_.random();
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(gen);
}

SystemClock::time_point CertificateManager::step(bool serving, Tracked& tracked,
                                                 SystemClock::time_point now, bool renewIfDue) {
  const std::string what = serving ? "serving" : "client";
  const std::string path = serving ? credentials_.servingCertPath() : credentials_.clientCertPath();
  std::string oldSerial;
  if (auto pem = pki::readPemFile(path); pem.ok()) {
    if (auto info = pki::parseCertificate(*pem); info.ok()) {
      oldSerial = info->serialHex;
      if (!tracked.deadline) {
        tracked.deadline =
            pki::rotationDeadline(*info, random(), options_.minFraction, options_.maxFraction);
        LOG_INFO(
            "certificate rotation: {} certificate {} (serial {}) expires {}, rotation deadline {}",
            what, path, info->serialHex, formatRfc3339(info->notAfter),
            formatRfc3339(*tracked.deadline));
      }
    }
  }
  if (!tracked.deadline) tracked.deadline = now;  // missing or unreadable: ask at once
  if (!renewIfDue || now < *tracked.deadline) return *tracked.deadline;

  Status status = Status::Ok();
  if (serving) {
    auto key = pki::readPemFile(credentials_.clientKeyPath());
    auto cert = pki::readPemFile(credentials_.clientCertPath());
    if (!key.ok() || !cert.ok()) {
      status = !key.ok() ? key.status() : cert.status();
    } else {
      status = credentials_.ensureServingCertificate(clients_, {*key, *cert}, true).status();
    }
  } else {
    status = credentials_.ensureClientCertificate(clients_, true).status();
  }
  if (!status.ok()) {
    tracked.backoff = nextBackoff(tracked.backoff, options_.initialBackoff, options_.maxBackoff);
    LOG_WARN(
        "certificate rotation: renewing the {} certificate failed ({}); the current one stays, "
        "retrying in {} ms",
        what, status.message(), tracked.backoff.count());
    tracked.deadline = now + tracked.backoff;
    return *tracked.deadline;
  }
  tracked.backoff = std::chrono::milliseconds(0);
  tracked.deadline.reset();
  std::string newSerial;
  if (auto pem = pki::readPemFile(path); pem.ok()) {
    if (auto info = pki::parseCertificate(*pem); info.ok()) newSerial = info->serialHex;
  }
  LOG_INFO("certificate rotation: {} certificate rotated (serial {} -> {}); new connections use it",
           what, oldSerial.empty() ? "none" : oldSerial, newSerial);
  // The new certificate's deadline (read from the file); due or not, it waits for the next pass.
  return step(serving, tracked, now, false);
}

SystemClock::time_point CertificateManager::rotateDue(SystemClock::time_point now) {
  SystemClock::time_point next = step(false, client_, now);
  if (options_.rotateServing) next = std::min(next, step(true, serving_, now));
  return next;
}

void CertificateManager::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void CertificateManager::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CertificateManager::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    const auto now = options_.now();
    const auto next = rotateDue(now);
    lock.lock();
    // Wake at the deadline, but at least once a minute: the wall clock may jump.
    auto wait = std::clamp<SystemClock::duration>(
        next - options_.now(), std::chrono::milliseconds(100), std::chrono::minutes(1));
    cv_.wait_for(lock, wait, [this] { return stopping_; });
  }
}

}  // namespace minik8s::kubelet
