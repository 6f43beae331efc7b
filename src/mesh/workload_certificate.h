// WorkloadCertificateManager: a sidecar's own certificate (mesh/identity.h), obtained and kept
// fresh with its service account: a new key, a CertificateSigningRequest for signer
// minik8s.io/mesh-workload naming spiffe://cluster.local/ns/NS/sa/SA, then status.certificate
// once the mesh controller has approved and signed it. Renewed at half its lifetime (a new key
// each time), retried with backoff (1 s doubling to 30 s) when the API server or the signer does
// not answer. Each certificate goes to the callback (the proxy swaps its TLS contexts: new
// connections get it, established ones keep theirs). The trust bundle is the cluster CA the pod
// already has (the service account volume's ca.crt). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "client/rest_client.h"
#include "mesh/identity.h"

namespace minik8s::mesh {

struct WorkloadCertificateOptions {
  WorkloadId id;
  std::string podName;  // in the CSR's name, for people listing CSRs
  std::string caPem;    // the trust bundle
  std::chrono::seconds ttl = kDefaultWorkloadCertTtl;
  std::chrono::milliseconds poll{200};  // while waiting for status.certificate
  std::chrono::seconds waitLimit{30};   // per request
};

class WorkloadCertificateManager {
 public:
  using Callback = std::function<void(const WorkloadCredentials&)>;
  WorkloadCertificateManager(client::RestClient& rest, WorkloadCertificateOptions options,
                             Callback onCertificate);
  ~WorkloadCertificateManager();
  WorkloadCertificateManager(const WorkloadCertificateManager&) = delete;
  WorkloadCertificateManager& operator=(const WorkloadCertificateManager&) = delete;

  void start();
  void stop();

  // One round trip (key, CSR, wait for the certificate); what the loop does.
  Result<WorkloadCredentials> requestCertificate();

 private:
  void run();
  bool sleepFor(std::chrono::steady_clock::duration d);  // false when stopping

  client::RestClient& rest_;
  WorkloadCertificateOptions options_;
  Callback onCertificate_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace minik8s::mesh
