#include "common/status.h"

namespace minik8s {

Status Status::NotFound(const std::string& resource, const std::string& name) {
  return Status(404, "NotFound", resource + " \"" + name + "\" not found");
}
Status Status::NotFoundMessage(std::string message) {
  return Status(404, "NotFound", std::move(message));
}
Status Status::AlreadyExists(const std::string& resource, const std::string& name) {
  return Status(409, "AlreadyExists", resource + " \"" + name + "\" already exists");
}
Status Status::Conflict(const std::string& resource, const std::string& name) {
  return Status(409, "Conflict",
                "Operation cannot be fulfilled on " + resource + " \"" + name +
                    "\": the object has been modified; please apply your changes to the latest "
                    "version and try again");
}
Status Status::ConflictMessage(std::string message) {
  return Status(409, "Conflict", std::move(message));
}
Status Status::Invalid(const std::string& kind, const std::string& name,
                       std::vector<Cause> causes) {
  std::string msg = kind + " \"" + name + "\" is invalid: ";
  if (causes.size() == 1) {
    msg += causes[0].field + ": " + causes[0].message;
  } else {
    msg += "[";
    for (size_t i = 0; i < causes.size(); ++i) {
      if (i) msg += ", ";
      msg += causes[i].field + ": " + causes[i].message;
    }
    msg += "]";
  }
  Status s(422, "Invalid", msg);
  s.detailName_ = name;
  s.detailKind_ = kind;
  s.causes_ = std::move(causes);
  return s;
}
Status Status::BadRequest(std::string m) { return Status(400, "BadRequest", std::move(m)); }
Status Status::Expired(std::string m) { return Status(410, "Expired", std::move(m)); }
Status Status::Gone(std::string m) { return Status(410, "Gone", std::move(m)); }
Status Status::MethodNotAllowed(std::string m) {
  return Status(405, "MethodNotAllowed", std::move(m));
}
Status Status::UnsupportedMediaType(std::string m) {
  return Status(415, "UnsupportedMediaType", std::move(m));
}
Status Status::NotAcceptable(std::string m) { return Status(406, "NotAcceptable", std::move(m)); }
Status Status::Forbidden(std::string m) { return Status(403, "Forbidden", std::move(m)); }
Status Status::Unauthorized(std::string m) { return Status(401, "Unauthorized", std::move(m)); }
Status Status::TooManyRequests(std::string m) {
  return Status(429, "TooManyRequests", std::move(m));
}
Status Status::Internal(std::string m) { return Status(500, "InternalError", std::move(m)); }
Status Status::Unavailable(std::string m) {
  return Status(503, "ServiceUnavailable", std::move(m));
}
Status Status::Timeout(std::string m) { return Status(504, "Timeout", std::move(m)); }

Status& Status::withDetails(std::string name, std::string group, std::string kind) {
  detailName_ = std::move(name);
  detailGroup_ = std::move(group);
  detailKind_ = std::move(kind);
  return *this;
}

Status& Status::withCauses(std::vector<Cause> causes) {
  causes_ = std::move(causes);
  return *this;
}

json Status::toJson() const {
  json j = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}};
  if (ok()) {
    j["status"] = "Success";
    return j;
  }
  j["status"] = "Failure";
  j["message"] = message_;
  j["reason"] = reason_;
  j["code"] = code_;
  json details = json::object();
  if (!detailName_.empty()) details["name"] = detailName_;
  if (!detailGroup_.empty()) details["group"] = detailGroup_;
  if (!detailKind_.empty()) details["kind"] = detailKind_;
  if (!causes_.empty()) {
    json cs = json::array();
    for (const auto& c : causes_) {
      json cj = {{"reason", c.reason}, {"message", c.message}};
      if (!c.field.empty()) cj["field"] = c.field;
      cs.push_back(cj);
    }
    details["causes"] = cs;
  }
  if (!details.empty()) j["details"] = details;
  return j;
}

std::string Status::toString() const { return ok() ? "OK" : reason_ + ": " + message_; }

}  // namespace minik8s
