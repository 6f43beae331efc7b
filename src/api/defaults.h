// Defaulting of API objects, as Kubernetes 1.32 fills unset fields.
//
// applyDefaults() sets what kube-apiserver's defaulters (and the few admission steps every
// cluster runs, such as the default ServiceAccount and priority of a Pod) would set on an object
// of the given kind: restartPolicy Always, imagePullPolicy from the image tag, Service
// targetPort = port, Deployment strategy 25%/25%, and so on. Fields the object already has are
// never changed, so applying defaults twice is the same as once. Objects are nlohmann::json in
// Kubernetes' JSON form; values of the wrong JSON type are left alone for validation to report.
// Jobs need metadata.name and metadata.uid set beforehand: their generated selector uses them.
// Stateless and safe to call from any thread.
#pragma once

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::api {

void applyDefaults(const ResourceInfo& r, json& obj);

}  // namespace minik8s::api
