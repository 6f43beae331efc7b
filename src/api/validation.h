// Validation of API objects, as kube-apiserver validates them before storing.
//
// validate() checks an object (already defaulted, see api/defaults.h) of any kind minik8s serves
// and returns every problem as a Cause with Kubernetes' reason (FieldValueRequired,
// FieldValueInvalid, FieldValueNotSupported, ...), field path ("spec.containers[0].image") and
// message ("Invalid value: -1: must be greater than or equal to 0"), so Status::Invalid renders
// exactly what kubectl users know. An empty vector means valid. On update, `old` is the stored
// object and the kind's immutable fields are checked too. It never throws, whatever shape the
// JSON has: a field of the wrong JSON type is reported as FieldValueTypeInvalid. Stateless and
// safe to call from any thread.
#pragma once

#include <vector>

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::api {

// `old` is nullptr on create, else the stored object being replaced.
std::vector<Cause> validate(const ResourceInfo& r, const json& obj, const json* old);

}  // namespace minik8s::api
