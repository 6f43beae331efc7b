// The schema text blocks (schema_dsl.h notation), one per API package group. Internal to
// api/schema; read-only string constants.
#pragma once

#include <string_view>

namespace minik8s::api::schema {

std::string_view metaSchemaText();         // meta/v1 and resource.Quantity
std::string_view coreV1SchemaText();       // core/v1 workloads: Pod and everything inside PodSpec
std::string_view coreV1OtherSchemaText();  // core/v1: Service, Node, Event, ConfigMap, ...
std::string_view appsBatchSchemaText();    // apps/v1, batch/v1
std::string_view otherGroupsSchemaText();  // autoscaling, coordination, discovery, policy,
                                           // authentication, minik8s.io
std::string_view securityGroupsSchemaText();  // rbac, authorization, authentication reviews,
                                              // certificates
std::string_view storageSchemaText();         // core/v1 PersistentVolume(Claim), storage.k8s.io/v1
std::string_view quotaSchemaText();           // core/v1 ResourceQuota, LimitRange
std::string_view networkingSchemaText();      // networking.k8s.io/v1 NetworkPolicy

}  // namespace minik8s::api::schema
