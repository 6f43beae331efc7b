// Conversion of a parsed Kubernetes protobuf message to its Kubernetes JSON form, by reflection
// over the message descriptors of proto/k8s/. Internal to the protobuf decoder.
//
// Go's protobuf marshalling writes every non-pointer field even when empty, so "present" on the
// wire does not mean "set": zero scalars are dropped unless the Go field is a pointer or has no
// omitempty (a short list below). Inline Go structs (Volume.volumeSource, Probe.handler,
// *.localObjectReference, IngressRule.ingressRuleValue) are merged into their parent. A field
// this server does not model and that carries a non-zero value is an error, never silently lost.
// Stateless and thread-safe.
#pragma once

#include <google/protobuf/message.h>

#include "common/status.h"

namespace minik8s::api::protobuf {

Result<json> messageToJson(const google::protobuf::Message& message);

}  // namespace minik8s::api::protobuf
