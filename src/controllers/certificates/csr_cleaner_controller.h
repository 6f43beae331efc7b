// CsrCleanerController: deletes CertificateSigningRequests nobody needs any more, as
// kube-controller-manager's csrcleaner does. Sidecars (mesh/workload_certificate.h) and kubelets
// ask for a certificate at every start and renewal, so without it CSRs pile up forever. A CSR
// goes (csrCleanupReason() is the pure rule):
//   - approved and issued, 1 h after its Approved condition was last updated;
//   - denied or failed, 1 h after that condition was last updated;
//   - pending (no condition at all), 24 h after it was created;
//   - approved and issued with a certificate whose notAfter has passed, at once.
// An approved CSR without a certificate stays (its signer may still come), as in Kubernetes.
// A pass over every CSR in the informer runs at start (once the informer has synced) and then
// every `period` (1 h, as Kubernetes), on one worker. Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers::certificates {

struct CsrCleanerOptions {
  std::chrono::milliseconds period = std::chrono::hours(1);  // between passes
  std::chrono::seconds approvedExpiration = std::chrono::hours(1);
  std::chrono::seconds deniedExpiration = std::chrono::hours(1);
  std::chrono::seconds failedExpiration = std::chrono::hours(1);
  std::chrono::seconds pendingExpiration = std::chrono::hours(24);
  NowFn now = [] { return WallClock::now(); };
  // The queue's clock (the delay between passes); tests pass a fake one.
  const client::Clock* clock = &client::RealClock::instance();
};

// Why `csr` should be deleted at `now` under `options`' expirations ("approved and issued more
// than 1h0m0s ago", ...), or nothing when it stays. Pure.
std::optional<std::string> csrCleanupReason(const json& csr, const CsrCleanerOptions& options,
                                            WallClock::time_point now);

class CsrCleanerController {
 public:
  // Registers nothing on `csrs` (passes are periodic, as in Kubernetes); it must be started
  // by the caller (the controller manager starts the shared informers).
  CsrCleanerController(client::RestClient& rest, client::Informer& csrs,
                       CsrCleanerOptions options = {});
  ~CsrCleanerController();

  void start();  // the first pass at once, then one every period
  void stop();
  // One pass: every CSR of the informer that csrCleanupReason() condemns is deleted. The
  // number deleted; the first error other than 404 (the rest of the pass still runs).
  Result<int> cleanOnce();

 private:
  client::RestClient& rest_;
  client::Informer& csrs_;
  CsrCleanerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers::certificates
