// gRPC at our boundaries (the CRI runtime, CSI drivers): status codes mapped to Status with the
// HTTP codes the rest of minik8s speaks, and endpoints as Kubernetes writes them.
#pragma once

#include <grpcpp/support/status.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace minik8s {

// NOT_FOUND 404, ALREADY_EXISTS 409, INVALID_ARGUMENT/OUT_OF_RANGE/FAILED_PRECONDITION 400,
// PERMISSION_DENIED 403, UNAUTHENTICATED 401, RESOURCE_EXHAUSTED 429, UNIMPLEMENTED 501,
// UNAVAILABLE 503, DEADLINE_EXCEEDED 504, anything else 500. The message is "WHAT: message".
Status statusFromGrpc(const grpc::Status& status, std::string_view what);

// The reverse, for our gRPC servers: a Status as the gRPC code a client expects.
grpc::Status grpcFromStatus(const Status& status);

// "unix:///run/x.sock" and "dns:..." as given; a bare path means a unix socket.
std::string grpcEndpoint(const std::string& endpoint);

}  // namespace minik8s
