// ServingCertificateRotation: keeps the API server's serving certificate fresh while it runs.
//
// The server serves <data-dir>/pki/apiserver.crt and .key by file (common/tls.h), so whatever
// replaces those files reaches new connections at their handshake, established ones (watches,
// exec streams) keep theirs, and the process is not restarted. This class replaces them: at a
// jittered 70-90% of the certificate's lifetime (pki::rotationDeadline), or at once when
// reissueNow() is called (the server does on SIGHUP), with a certificate of the same CA and SANs
// and a new key. A failed re-issue is logged and retried after a doubling back-off (1 s to 1 min);
// the old certificate stays. apiserver_serving_certificate_ttl_seconds reports the time left.
// An administrator may also write the files (key first): the TLS server picks them up, and the
// next deadline is read from the new certificate. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "apiserver/server_pki.h"
#include "common/metrics.h"

namespace minik8s::apiserver {

class ServingCertificateRotation {
 public:
  // Copies `pki` (its CA signs the new certificates).
  explicit ServingCertificateRotation(ServerPki pki);
  ~ServingCertificateRotation();
  ServingCertificateRotation(const ServingCertificateRotation&) = delete;
  ServingCertificateRotation& operator=(const ServingCertificateRotation&) = delete;

  void start();
  void stop();
  // Re-issues in the background thread as soon as it can (SIGHUP).
  void reissueNow();

  std::string certFile() const { return pki_.dir + "/apiserver.crt"; }
  std::string keyFile() const { return pki_.dir + "/apiserver.key"; }

 private:
  void run();

  ServerPki pki_;
  metrics::CallbackHandle ttl_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool reissue_ = false;
  std::thread thread_;
};

}  // namespace minik8s::apiserver
