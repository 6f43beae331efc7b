#include "apiserver/serving_cert_rotation.h"

#include <algorithm>
#include <optional>
#include <random>

#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::apiserver {

namespace {

using SystemClock = std::chrono::system_clock;

std::optional<pki::CertInfo> certificateIn(const std::string& path) {
  auto pem = pki::readPemFile(path);
  if (!pem.ok()) return std::nullopt;
  auto info = pki::parseCertificate(*pem);
  if (!info.ok()) return std::nullopt;
  return *info;
}

}  // namespace

ServingCertificateRotation::ServingCertificateRotation(ServerPki pki) : pki_(std::move(pki)) {
  ttl_ = metrics::defaultRegistry().gaugeCallback(
      "apiserver_serving_certificate_ttl_seconds",
      "Seconds until the API server's serving certificate expires (negative: expired).",
      [path = certFile()] {
        auto info = certificateIn(path);
        return info ? std::chrono::duration<double>(info->notAfter - SystemClock::now()).count()
                    : 0.0;
      });
}

ServingCertificateRotation::~ServingCertificateRotation() { stop(); }

void ServingCertificateRotation::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void ServingCertificateRotation::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ServingCertificateRotation::reissueNow() {
  {
    std::lock_guard lock(mu_);
    reissue_ = true;
  }
  cv_.notify_all();
}

void ServingCertificateRotation::run() {
  std::mt19937_64 random{std::random_device{}()};
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::string serial;  // of the certificate the deadline belongs to
  SystemClock::time_point deadline = SystemClock::now();
  std::chrono::milliseconds backoff{0};
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    // A new certificate on disk (ours or an administrator's) gets its own deadline.
    auto info = certificateIn(certFile());
    if (info && info->serialHex != serial) {
      serial = info->serialHex;
      deadline = pki::rotationDeadline(*info, uniform(random));
      backoff = std::chrono::milliseconds(0);
      LOG_INFO("serving certificate {} (serial {}) expires {}, rotation deadline {}", certFile(),
               serial, formatRfc3339(info->notAfter), formatRfc3339(deadline));
    }
    lock.lock();
    const bool asked = reissue_;
    reissue_ = false;
    lock.unlock();
    if (asked || SystemClock::now() >= deadline) {
      Status s = reissueServingCertificate(pki_);
      auto issued = certificateIn(certFile());
      if (s.ok()) {
        LOG_INFO("serving certificate re-issued ({}): serial {} -> {}; new connections use it",
                 asked ? "on request" : "rotation deadline", serial,
                 issued ? issued->serialHex : "?");
      } else {
        backoff = std::clamp<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(1),
                                                        std::chrono::minutes(1));
        deadline = SystemClock::now() + backoff;
        LOG_WARN(
            "re-issuing the serving certificate failed ({}); the current one stays, "
            "retrying in {} ms",
            s.message(), backoff.count());
      }
      lock.lock();
      continue;
    }
    lock.lock();
    // Wake at the deadline, at least every few seconds to notice files written by others.
    auto wait = std::clamp<SystemClock::duration>(
        deadline - SystemClock::now(), std::chrono::milliseconds(100), std::chrono::seconds(5));
    cv_.wait_for(lock, wait, [this] { return stopping_ || reissue_; });
  }
}

}  // namespace minik8s::apiserver
