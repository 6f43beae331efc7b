// MeshCertificateController: the signer of the mesh's workload certificates (signerName
// minik8s.io/mesh-workload, mesh/identity.h), approver and signer in one, as Istio's CA is for
// its sidecars. A pending CSR of that signer is approved (condition Approved, reason
// AutoApproved, through the `approval` subresource) when mesh::decideWorkloadCsr allows: the
// requester is a service account and the request names exactly its SPIFFE ID; otherwise it is
// denied (condition Denied, reason MeshIdentityMismatch, with why). An approved one is signed
// with the cluster CA into status.certificate (empty subject, the URI SAN, server and client
// auth, the validity asked within 10 minutes..7 days). Other signers' CSRs are left alone.
// Thread-safe.
#pragma once

#include <string>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "common/pki.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

struct MeshCertificateOptions {
  pki::KeyAndCert ca;  // the cluster CA
  NowFn now = [] { return WallClock::now(); };
};

class MeshCertificateController {
 public:
  // Registers handlers on `csrs` (certificatesigningrequests): construct before it starts.
  MeshCertificateController(client::RestClient& rest, client::Informer& csrs,
                            MeshCertificateOptions options);
  ~MeshCertificateController();
  void start();
  void stop();
  Status sync(const std::string& name);

 private:
  client::RestClient& rest_;
  client::Informer& csrs_;
  MeshCertificateOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
