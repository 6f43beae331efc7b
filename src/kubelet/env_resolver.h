// Environment of a container as Kubernetes computes it: env (value with $(VAR) expansion,
// fieldRef, configMapKeyRef, secretKeyRef, resourceFieldRef) and envFrom (configMapRef,
// secretRef with prefix). A missing non-optional ConfigMap, Secret or key is an error the pod
// sync reports as CreateContainerConfigError. Pure functions (objects come from an
// ObjectSource), thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kubelet/object_source.h"

namespace minik8s::kubelet {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// What fieldRef may read beyond the pod object itself.
struct PodRuntimeFields {
  std::string podIP;
  std::vector<std::string> podIPs;
  std::string hostIP;
};

Result<EnvList> resolveEnv(const json& pod, const json& container, const PodRuntimeFields& fields,
                           ObjectSource& objects);

// Expands $(NAME) references from `env` as Kubernetes does ($$ escapes, unknown names stay).
std::string expandEnvRefs(const std::string& in, const EnvList& env);

}  // namespace minik8s::kubelet
