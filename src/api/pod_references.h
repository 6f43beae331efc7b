// The objects a pod references by name, which the node it is bound to needs to run it: what
// Kubernetes' node authorizer puts in its graph (pod -> secret, configmap, claim, service
// account). Read from volumes (secret, configMap, projected sources, persistentVolumeClaim,
// generic ephemeral claims, CSI inline nodePublishSecretRef), every container's env and envFrom
// (containers, initContainers, ephemeralContainers) and imagePullSecrets. Malformed parts are
// skipped, never thrown on.
#pragma once

#include <set>
#include <string>

#include "common/status.h"

namespace minik8s::api {

struct PodReferences {
  std::set<std::string> secrets;
  std::set<std::string> configMaps;
  std::set<std::string> claims;
  std::string serviceAccount;  // "default" when the spec names none
};

PodReferences podReferences(const json& pod);

}  // namespace minik8s::api
