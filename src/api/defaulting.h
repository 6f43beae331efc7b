// The defaulting of each built-in kind, as its ResourceType entry (api/resource_type.h) names
// it; applyDefaults() (api/defaults.h) is what the rest of the tree calls. Each fills only unset
// fields and leaves values of the wrong JSON type for validation. Internal to src/api.
#pragma once

#include "common/status.h"

namespace minik8s::api::defaulting {

void pod(json& obj);
void service(json& obj);
void namespaceObject(json& obj);
void secret(json& obj);
void node(json& obj);
void persistentVolume(json& obj);
void persistentVolumeClaim(json& obj);
void limitRange(json& obj);
void endpoints(json& obj);
void deployment(json& obj);
void replicaSet(json& obj);
void daemonSet(json& obj);
void statefulSet(json& obj);
void job(json& obj);
void cronJob(json& obj);
void horizontalPodAutoscalerV2(json& obj);
void horizontalPodAutoscalerV1(json& obj);
void networkPolicy(json& obj);
void storageClass(json& obj);
void csiDriver(json& obj);
void endpointSlice(json& obj);
void mutatingWebhookConfiguration(json& obj);
void validatingWebhookConfiguration(json& obj);
void customResourceDefinition(json& obj);

}  // namespace minik8s::api::defaulting
