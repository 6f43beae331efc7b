// Strict decoding: what Kubernetes' strict JSON decoder would say about an object.
//
// checkAgainstSchema() walks an object against its kind's type schema (api/schema/definitions.h)
// and reports unknown fields as dotted paths with list indexes, the way Kubernetes prints them
// ("spec.template.spec.containers[0].imagePullPolcy"), and type mismatches with Go's JSON decoder
// wording ("json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of
// type int32"). Maps (labels, annotations, data) accept any key; free-form fields
// (x-kubernetes-preserve-unknown-fields) accept anything; int-or-string fields accept both;
// quantities accept strings and numbers; null is accepted for every field, as Go decodes it to
// the zero value. apiVersion, kind, metadata and status are known fields of every kind. Integral
// floats (3.0) are accepted for integer fields. Pure function of its inputs: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::api {

struct SchemaFindings {
  std::vector<std::string> unknownFields;  // "spec.foo", in the object's (sorted) key order
  std::vector<std::string> typeErrors;     // full messages, starting with "json: "
  bool empty() const { return unknownFields.empty() && typeErrors.empty(); }
};

// Findings for `obj` as an object of `resource`'s kind. A kind without a schema yields none.
SchemaFindings checkAgainstSchema(const ResourceInfo& resource, const json& obj);

}  // namespace minik8s::api
