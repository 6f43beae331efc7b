// Environment of a container as Kubernetes computes it: service variables (the `kubernetes`
// Service of namespace default always; the Services of the pod's namespace unless
// spec.enableServiceLinks is false: <NAME>_SERVICE_HOST/_PORT/_PORT_<PORTNAME> and the Docker
// link variables <NAME>_PORT, <NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]), then envFrom
// (configMapRef, secretRef with prefix) and env (value with $(VAR) expansion, fieldRef,
// configMapKeyRef, secretKeyRef, resourceFieldRef), which win over service variables. A missing
// non-optional ConfigMap, Secret or key is an error the pod sync reports as
// CreateContainerConfigError. Pure functions (objects come from an ObjectSource), thread-safe.
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

// The variables Kubernetes derives from `services` (Services with a cluster IP only), in a
// stable order (by service name, then variable).
EnvList serviceEnv(const std::vector<json>& services);

// A pod field for env fieldRef and downward API volumes (metadata.name, namespace, uid,
// labels['k'], annotations['k'], spec.nodeName, spec.serviceAccountName, status.podIP, ...).
Result<std::string> podFieldRefValue(const json& pod, const std::string& fieldPath,
                                     const PodRuntimeFields& fields);
// A container resource (limits.cpu, requests.memory, ...) in units of ref.divisor.
Result<std::string> containerResourceFieldValue(const json& container, const json& ref);

// Expands $(NAME) references from `env` as Kubernetes does ($$ escapes, unknown names stay).
std::string expandEnvRefs(const std::string& in, const EnvList& env);

}  // namespace minik8s::kubelet
