// The API side of `minik8s mesh rollout` (mesh/rollout.h runs the steps):
//
//   ApiRolloutTarget   the service's current Deployment (the one whose pods its selector picks)
//                      is the old version; the new version is a copy of it named after the new
//                      version (reviews-v1 -> reviews-v2) with the new image and `version` label.
//                      The rollout owns the DestinationRule and VirtualService named after the
//                      service (subsets by `version`, one weighted route).
//   ExecRolloutMetrics the new version's requests and 5xx answers, read from every sidecar of the
//                      service's namespace: `minik8s-mesh-proxy mesh-proxy-metrics` run in each
//                      istio-proxy container (kSidecarBinary) through the API server's pods/exec
//                      (WebSocket, v5.channel.k8s.io), as `kubectl exec` does, so it works
//                      wherever the API server is reachable (pod IPs need not be).
//
// Both are used from one thread.
#pragma once

#include <map>
#include <string>

#include "client/rest_client.h"
#include "mesh/rollout.h"

namespace minik8s::mesh {

struct RolloutRequest {
  std::string ns, service;
  std::string image;
  std::string version;    // "" = from the image's tag (shop/reviews:v2 -> v2)
  std::string container;  // "" = the first container
};

// The version a rollout to `image` gets when none is given: its tag made a label value
// ("" when the image has no usable tag).
std::string versionOfImage(const std::string& image);

// The new version's Deployment: `old` renamed `name`, its pods labelled version=`version` (the
// selector too when it names a version), `container` ("" = the first) running `image`, no
// replicas, and none of the old one's status or server-set metadata. Pure; for tests.
Result<json> newVersionDeployment(const json& old, const std::string& name,
                                  const std::string& version, const std::string& image,
                                  const std::string& container);

// The rollout's rules: subsets by version, and one route (weights in the order of `weights`).
json rolloutDestinationRule(const std::string& ns, const std::string& service,
                            const std::vector<std::string>& versions);
json rolloutVirtualService(const std::string& ns, const std::string& service,
                           const std::vector<std::pair<std::string, int>>& weights);

// One sidecar's /metrics text: requests and 5xx answers to `serviceKey` ("ns/name") by version.
std::map<std::string, RequestCounts> parseDestinationCounts(const std::string& metricsText,
                                                            const std::string& serviceKey);

class ApiRolloutTarget : public RolloutTarget {
 public:
  ApiRolloutTarget(client::RestClient& rest, RolloutRequest request);
  // Finds the old Deployment and names the new one; a clear error when the service cannot be
  // rolled (no selector, no Deployment or several, no version label, same version).
  Status resolve();
  // Instead of resolve(), for a rollout under way: the names it resolved then.
  void restore(std::string oldDeployment, std::string newDeployment, std::string oldVersion,
               std::string newVersion);
  const std::string& oldVersion() const { return oldVersion_; }
  const std::string& newVersion() const { return newVersion_; }
  const std::string& oldDeployment() const { return oldName_; }
  const std::string& newDeployment() const { return newName_; }

  Result<int> oldReplicas() override;
  // Also when it was done before (a resumed rollout): the new Deployment that this rollout
  // created (annotation mesh.minik8s.io/rollout-from) is taken as it is.
  Status prepare() override;
  Status scaleNew(int replicas) override;
  Status scaleOld(int replicas) override;
  Result<int> readyNewEndpoints() override;
  Status setWeights(int oldWeight, int newWeight) override;
  Status promote() override;
  Status rollBack(int oldReplicas) override;

 private:
  Status scale(const std::string& name, int replicas);
  Status apply(const client::Resource& r, const json& obj);
  Status loadOld();  // old_ from the API, after restore()

  client::RestClient& rest_;
  RolloutRequest req_;
  json old_;
  std::string oldName_, newName_, oldVersion_, newVersion_;
};

// The sidecar's binary in the mesh-proxy image (images/mesh-proxy/image.yaml).
inline constexpr char kSidecarBinary[] = "/usr/bin/minik8s-mesh-proxy";

class ExecRolloutMetrics : public RolloutMetrics {
 public:
  ExecRolloutMetrics(client::ClientConfig config, client::RestClient& rest, std::string ns,
                     std::string service);
  // Every running sidecar of the namespace, read at once; one that fails is `unreadable`.
  Result<CounterReading> read() override;

  // Runs `command` in `container` of a pod through the API server; its standard output.
  Result<std::string> exec(const std::string& pod, const std::string& container,
                           const std::vector<std::string>& command);

 private:
  client::ClientConfig config_;
  client::RestClient& rest_;
  std::string ns_, serviceKey_;
};

}  // namespace minik8s::mesh
