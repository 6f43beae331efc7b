// CsrApprovingController: approves node certificate requests automatically, as
// kube-controller-manager's csrapproving controller does for kubelets (the rules are in
// csr_rules.h: kubelet client certificates from bootstrappers or the node itself, kubelet
// serving certificates for the node's own addresses). Approval goes through the `approval`
// subresource with condition Approved, reason AutoApproved; CSRs it does not approve are left
// pending for `kubectl certificate approve|deny`. Thread-safe.
#pragma once

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers::certificates {

struct CsrApprovingOptions {
  NowFn now = [] { return WallClock::now(); };
};

class CsrApprovingController {
 public:
  // Registers handlers on `csrs` (an informer of certificatesigningrequests): construct before
  // it starts. Nodes are read through `rest` when a serving CSR needs their addresses.
  CsrApprovingController(client::RestClient& rest, client::Informer& csrs,
                         CsrApprovingOptions options = {});
  ~CsrApprovingController();

  void start();
  void stop();
  // Approves the CSR `name` if the rules allow; an error makes the queue retry (a serving CSR
  // whose Node is not there yet, a conflict).
  Status sync(const std::string& name);

 private:
  client::RestClient& rest_;
  client::Informer& csrs_;
  CsrApprovingOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers::certificates
