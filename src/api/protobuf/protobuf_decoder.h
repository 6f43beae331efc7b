// Decoding of Kubernetes protobuf request bodies (Content-Type
// application/vnd.kubernetes.protobuf).
//
// kubectl 1.32 sends protobuf, not JSON, for the objects its generators build (`kubectl create
// namespace|deployment|configmap|secret|service|serviceaccount|job|cronjob|role|...`, `create
// token`, `autoscale`, `auth can-i`). A body is the magic "k8s\0" followed by a runtime.Unknown
// envelope {typeMeta{apiVersion, kind}, raw}. decodeProtobufObject() turns such a body into the
// JSON object Kubernetes would have stored, so the rest of the API server only ever sees JSON.
// Stateless and thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace minik8s::api {

inline constexpr std::string_view kProtobufContentType = "application/vnd.kubernetes.protobuf";

// The object as JSON with apiVersion and kind taken from the envelope. Unset fields are omitted,
// Quantity becomes its string, IntOrString an int or a string, Time RFC 3339, bytes base64.
// Errors: 415 UnsupportedMediaType for a kind (or a field of it) this server cannot decode from
// protobuf, with a hint to send JSON instead; 400 BadRequest for a malformed body.
Result<json> decodeProtobufObject(std::string_view body);

// "apps/v1 Deployment", ...: every kind decodeProtobufObject() understands.
std::vector<std::string> protobufDecodableKinds();

}  // namespace minik8s::api
