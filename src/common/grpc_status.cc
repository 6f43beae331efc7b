#include "common/grpc_status.h"

namespace minik8s {

Status statusFromGrpc(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  std::string message = std::string(what) + ": " + status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::NOT_FOUND:
      return Status::NotFoundMessage(std::move(message));
    case grpc::StatusCode::ALREADY_EXISTS:
      return Status(409, "AlreadyExists", std::move(message));
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Status::BadRequest(std::move(message));
    case grpc::StatusCode::PERMISSION_DENIED:
      return Status::Forbidden(std::move(message));
    case grpc::StatusCode::UNAUTHENTICATED:
      return Status::Unauthorized(std::move(message));
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Status::TooManyRequests(std::move(message));
    case grpc::StatusCode::UNIMPLEMENTED:
      return Status(501, "NotImplemented", std::move(message));
    case grpc::StatusCode::UNAVAILABLE:
      return Status::Unavailable(std::move(message));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Status::Timeout(std::move(message));
    default:
      return Status::Internal(std::move(message));
  }
}

grpc::Status grpcFromStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (status.code()) {
    case 400:
    case 422:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case 401:
      code = grpc::StatusCode::UNAUTHENTICATED;
      break;
    case 403:
      code = grpc::StatusCode::PERMISSION_DENIED;
      break;
    case 404:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case 409:
      code = grpc::StatusCode::ALREADY_EXISTS;
      break;
    case 429:
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
    case 501:
      code = grpc::StatusCode::UNIMPLEMENTED;
      break;
    case 503:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case 504:
      code = grpc::StatusCode::DEADLINE_EXCEEDED;
      break;
    default:
      break;
  }
  return grpc::Status(code, status.message());
}

std::string grpcEndpoint(const std::string& endpoint) {
  if (endpoint.find("://") != std::string::npos) return endpoint;
  return "unix://" + endpoint;
}

}  // namespace minik8s
