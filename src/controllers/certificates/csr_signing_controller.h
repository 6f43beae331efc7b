// CsrSigningController: issues certificates for approved CSRs of the signers
// kubernetes.io/kube-apiserver-client-kubelet, kubernetes.io/kubelet-serving and
// kubernetes.io/kube-apiserver-client with the cluster CA, as kube-controller-manager's
// csrsigning controller does: status.certificate (base64 PEM) through the `status`
// subresource. Denied, failed, already issued or foreign-signer CSRs are left alone; a request
// the signer refuses (usages that do not fit the signer, a malformed CSR) gets condition Failed,
// reason SignerValidationFailure. Thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "common/pki.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers::certificates {

struct CsrSigningOptions {
  pki::KeyAndCert ca;  // the cluster CA: <data-dir>/pki/ca.crt and ca.key
  // Without spec.expirationSeconds (--cluster-signing-duration), and the upper bound.
  std::chrono::seconds defaultValidity = std::chrono::hours(24 * 365);
  std::chrono::seconds maxValidity = std::chrono::hours(24 * 365);
  NowFn now = [] { return WallClock::now(); };
};

class CsrSigningController {
 public:
  // Registers handlers on `csrs`: construct before it starts.
  CsrSigningController(client::RestClient& rest, client::Informer& csrs, CsrSigningOptions options);
  ~CsrSigningController();

  void start();
  void stop();
  Status sync(const std::string& name);

 private:
  client::RestClient& rest_;
  client::Informer& csrs_;
  CsrSigningOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers::certificates
