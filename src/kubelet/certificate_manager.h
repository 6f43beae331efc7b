// CertificateManager: rotates the node's client and serving certificates while the agent runs,
// as client-go's certificate manager does for a kubelet.
//
// Each certificate is renewed at a jittered 70-90% of its lifetime (notBefore..notAfter): a new
// key and a new CertificateSigningRequest through NodeCredentials (signers
// kube-apiserver-client-kubelet and kubelet-serving), written next to the old files (key, then
// certificate, each by an atomic rename). A failed renewal is retried with a doubling back-off
// (capped) and never removes the old certificate, which stays in use while it is valid. Nothing
// is swapped in memory: every TLS user of the agent names the files (TlsClientConfig::certFile,
// TlsServerConfig::certFile) and picks the new pair up at its next handshake, so established
// watches and exec/attach/port-forward streams continue on their connections.
//
// Each rotation is logged; kubelet_certificate_manager_client_ttl_seconds and
// kubelet_certificate_manager_server_ttl_seconds report the time left on the stored
// certificates. Thread-safe: start() and stop() from one thread; the work runs in its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "common/metrics.h"
#include "common/pki.h"
#include "kubelet/node_credentials.h"

namespace minik8s::kubelet {

struct CertificateRotationOptions {
  double minFraction = 0.7;  // renew between these fractions of the lifetime
  double maxFraction = 0.9;
  std::chrono::milliseconds initialBackoff{1000};  // after a failed renewal, doubling ...
  std::chrono::milliseconds maxBackoff{std::chrono::minutes(5)};  // ... up to this
  bool rotateServing = true;
  std::function<double()> random;  // uniform in [0, 1); unset: a random device
  std::function<std::chrono::system_clock::time_point()> now = [] {
    return std::chrono::system_clock::now();
  };
};

// The next wait after a failed renewal: `previous` doubled (initial when zero), at most `max`.
std::chrono::milliseconds nextBackoff(std::chrono::milliseconds previous,
                                      std::chrono::milliseconds initial,
                                      std::chrono::milliseconds max);

class CertificateManager {
 public:
  // Borrows `credentials` (used by this manager's thread only once started).
  CertificateManager(NodeCredentials& credentials, ClientFactory clients,
                     CertificateRotationOptions options = {});
  ~CertificateManager();
  CertificateManager(const CertificateManager&) = delete;
  CertificateManager& operator=(const CertificateManager&) = delete;

  void start();
  void stop();

  // One pass of the loop at `now`: renews what is due; returns when to look again.
  std::chrono::system_clock::time_point rotateDue(std::chrono::system_clock::time_point now);

 private:
  struct Tracked {
    std::optional<std::chrono::system_clock::time_point> deadline;  // unset: read the file
    std::chrono::milliseconds backoff{0};
  };
  // Renews one certificate when due (and `renewIfDue`); returns its next deadline.
  std::chrono::system_clock::time_point step(bool serving, Tracked& tracked,
                                             std::chrono::system_clock::time_point now,
                                             bool renewIfDue = true);
  double random();
  void run();

  NodeCredentials& credentials_;
  ClientFactory clients_;
  CertificateRotationOptions options_;
  Tracked client_, serving_;
  metrics::CallbackHandle clientTtl_, servingTtl_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace minik8s::kubelet
