#include "controllers/certificates/csr_cleaner_controller.h"

#include <fmt/core.h>

#include "api/csr_rules.h"
#include "common/base64.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/pki.h"
#include "common/time_util.h"

namespace minik8s::controllers::certificates {

namespace {

constexpr char kCleanerKey[] = "csr-cleaner-pass";

std::string csrDurationText(std::chrono::seconds d) {
  const auto s = d.count();
  return fmt::format("{}h{}m{}s", s / 3600, (s / 60) % 60, s % 60);
}

// When the condition `type` was last updated (lastUpdateTime, else lastTransitionTime), if the
// CSR has it with status True.
std::optional<WallClock::time_point> csrConditionUpdated(const json& csr, const std::string& type) {
  for (const auto& c : valueAt(csr, "/status/conditions", json::array())) {
    if (!c.is_object() || c.value("type", "") != type || c.value("status", "True") != "True") {
      continue;
    }
    for (const char* field : {"lastUpdateTime", "lastTransitionTime"}) {
      if (auto t = parseRfc3339(c.value(field, ""))) return *t;
    }
  }
  return std::nullopt;
}

bool csrOlderThan(std::optional<WallClock::time_point> t, std::chrono::seconds d,
                  WallClock::time_point now) {
  return t && now - *t > d;
}

// The issued certificate's notAfter, when status.certificate parses.
std::optional<WallClock::time_point> certificateNotAfter(const json& csr) {
  auto pem = base64::decode(valueAt(csr, "/status/certificate", std::string()));
  if (!pem.ok() || pem->empty()) return std::nullopt;
  auto info = pki::parseCertificate(*pem);
  if (!info.ok()) return std::nullopt;
  return info->notAfter;
}

}  // namespace

std::optional<std::string> csrCleanupReason(const json& csr, const CsrCleanerOptions& o,
                                            WallClock::time_point now) {
  const bool issued = api::csr::isIssued(csr);
  if (issued && csrConditionUpdated(csr, "Approved")) {
    if (auto notAfter = certificateNotAfter(csr); notAfter && now > *notAfter) {
      return "its certificate expired at " + formatRfc3339(*notAfter);
    }
    if (csrOlderThan(csrConditionUpdated(csr, "Approved"), o.approvedExpiration, now)) {
      return "approved and issued more than " + csrDurationText(o.approvedExpiration) + " ago";
    }
  }
  if (csrOlderThan(csrConditionUpdated(csr, "Denied"), o.deniedExpiration, now)) {
    return "denied more than " + csrDurationText(o.deniedExpiration) + " ago";
  }
  if (csrOlderThan(csrConditionUpdated(csr, "Failed"), o.failedExpiration, now)) {
    return "failed more than " + csrDurationText(o.failedExpiration) + " ago";
  }
  const json conditions = valueAt(csr, "/status/conditions", json::array());
  if ((!conditions.is_array() || conditions.empty()) &&
      csrOlderThan(parseRfc3339(valueAt(csr, "/metadata/creationTimestamp", std::string())),
                   o.pendingExpiration, now)) {
    return "pending for more than " + csrDurationText(o.pendingExpiration);
  }
  return std::nullopt;
}

CsrCleanerController::CsrCleanerController(client::RestClient& rest, client::Informer& csrs,
                                           CsrCleanerOptions options)
    : rest_(rest),
      csrs_(csrs),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_,
          [this](const std::string&) {
            auto r = cleanOnce();
            queue_.addAfter(kCleanerKey, options_.period);  // the next periodic pass
            return r.ok() ? Status::Ok() : r.status();
          },
          "csr-cleaner") {}

CsrCleanerController::~CsrCleanerController() { stop(); }

void CsrCleanerController::start() {
  queue_.add(kCleanerKey);
  workers_.start(1);
}

void CsrCleanerController::stop() { workers_.stop(); }

Result<int> CsrCleanerController::cleanOnce() {
  if (!csrs_.hasSynced()) return 0;  // the informer's first list is not in yet
  const auto now = options_.now();
  Status first;
  int deleted = 0;
  for (const json& csr : csrs_.list()) {
    auto reason = csrCleanupReason(csr, options_, now);
    if (!reason) continue;
    const std::string name = valueAt(csr, "/metadata/name", std::string());
    // Only the CSR we judged: a new one of the same name must not go with it.
    json precondition = {{"uid", valueAt(csr, "/metadata/uid", std::string())}};
    auto r = rest_.remove(client::resources::kCertificateSigningRequests, "", name,
                          {{"preconditions", precondition}});
    if (!r.ok()) {
      if (r.status().code() == 404) continue;  // gone already
      LOG_WARN("csr-cleaner: cannot delete {}: {}", name, r.status().message());
      if (first.ok()) first = r.status();
      continue;
    }
    ++deleted;
    LOG_INFO("csr-cleaner: deleted {}: {}", name, *reason);
  }
  if (!first.ok()) return first;
  return deleted;
}

}  // namespace minik8s::controllers::certificates
