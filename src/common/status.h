// Status and Result<T>: the error currency of minik8s.
//
// A Status is either OK or a Kubernetes-style failure: an HTTP code, a machine-readable reason
// (NotFound, AlreadyExists, Conflict, Invalid, BadRequest, Expired, ...), a message a user can act
// on, and for Invalid the causes with their field paths. toJson() renders the meta/v1 Status object
// the API server returns and kubectl prints. Functions return Status / Result<T> across module
// boundaries instead of throwing. Values are immutable and safe to copy between threads.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/flat_object.h"

namespace minik8s {

// Every JSON value in minik8s. Objects keep their members in a sorted vector
// (common/flat_object.h): a reference into an object's members does not survive an insertion into
// that object.
using json = nlohmann::basic_json<FlatObject>;

// One reason a request was rejected, e.g. {FieldValueInvalid, "spec.replicas", "Invalid value..."}.
struct Cause {
  std::string reason;  // FieldValueInvalid, FieldValueRequired, FieldValueDuplicate, FieldValueNotSupported, ...
  std::string field;   // dotted path with indexes: spec.containers[0].name
  std::string message;
};

class Status {
 public:
  Status() = default;  // OK
  Status(int code, std::string reason, std::string message)
      : code_(code), reason_(std::move(reason)), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  // `resource` is the plural with group as kubectl prints it: "pods", "deployments.apps".
  static Status NotFound(const std::string& resource, const std::string& name);
  static Status NotFoundMessage(std::string message);
  static Status AlreadyExists(const std::string& resource, const std::string& name);
  // Optimistic concurrency failure on update.
  static Status Conflict(const std::string& resource, const std::string& name);
  static Status ConflictMessage(std::string message);
  // 422 with causes; kind is e.g. "Deployment".
  static Status Invalid(const std::string& kind, const std::string& name, std::vector<Cause> causes);
  static Status BadRequest(std::string message);
  static Status Expired(std::string message);  // 410: resourceVersion compacted
  static Status Gone(std::string message);
  static Status MethodNotAllowed(std::string message);
  static Status UnsupportedMediaType(std::string message);
  static Status NotAcceptable(std::string message);
  static Status Forbidden(std::string message);
  static Status Unauthorized(std::string message);
  static Status TooManyRequests(std::string message);
  static Status Internal(std::string message);
  static Status Unavailable(std::string message);  // 503
  static Status Timeout(std::string message);      // 504

  bool ok() const { return code_ == 0; }
  int code() const { return code_; }  // HTTP code; 0 when OK
  const std::string& reason() const { return reason_; }
  const std::string& message() const { return message_; }
  const std::vector<Cause>& causes() const { return causes_; }

  // details.{name, group, kind} of the Status object.
  Status& withDetails(std::string name, std::string group, std::string kind);
  Status& withCauses(std::vector<Cause> causes);

  // The meta/v1 Status object: {"kind":"Status","apiVersion":"v1","status":"Failure",...}.
  json toJson() const;
  std::string toString() const;  // "NotFound: pods \"x\" not found"

 private:
  int code_ = 0;
  std::string reason_;
  std::string message_;
  std::string detailName_, detailGroup_, detailKind_;
  std::vector<Cause> causes_;
};

// A value or a failure Status.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace minik8s
