// The seams of API security: who is asking (authentication), may they (authorization), and is
// what they send acceptable for who they are (admission). The ApiServer runs them in that
// order for every request (see ApiServerOptions); implementations live beside this header
// (RBAC, node authorizer, node restriction, service-account tokens). Implementations must be
// thread-safe: the server calls them from every connection's thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/user_groups.h"
#include "apiserver/request_info.h"
#include "common/status.h"

namespace minik8s::apiserver {
class WatchCache;
}

namespace minik8s::apiserver::auth {

// Well-known users and groups (the same strings as Kubernetes).
// Kubernetes' special user and group names (api/user_groups.h).
using api::kAnonymousUser;
using api::kAuthenticated;
using api::kBootstrappersGroup;
using api::kNodesGroup;
using api::kNodeUserPrefix;
using api::kServiceAccountsGroup;
using api::kServiceAccountUserPrefix;
using api::kSystemMasters;
using api::kUnauthenticated;

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;

  bool inGroup(const std::string& group) const;
  // authentication.k8s.io/v1 UserInfo: {username, uid, groups, extra}.
  json toJson() const;
};

// Recognises one kind of bearer token. nullopt: not this authenticator's kind of token (the
// next one is asked); an error (Unauthorized, with a message): its kind, but invalid or
// expired; a UserInfo: the caller's identity (system:authenticated is added by the server).
class TokenAuthenticator {
 public:
  virtual ~TokenAuthenticator() = default;
  virtual std::optional<Result<UserInfo>> authenticate(const std::string& token) = 0;
};

// What a request wants to do, as authorizers see it.
struct Attributes {
  UserInfo user;
  std::string verb;  // get list watch create update patch delete deletecollection; or the
                     // HTTP verb in lower case for non-resource requests
  bool resourceRequest = false;
  std::string apiGroup, apiVersion, resource, subresource, namespaceName, name;
  std::string path;  // non-resource requests: "/healthz", "/version", "/apis"
};

struct Decision {
  enum class Kind { kAllow, kDeny, kNoOpinion };
  Kind kind = Kind::kNoOpinion;
  std::string reason;  // why (shown in 403 messages and SubjectAccessReview status)

  static Decision allow(std::string reason = "") { return {Kind::kAllow, std::move(reason)}; }
  static Decision deny(std::string reason) { return {Kind::kDeny, std::move(reason)}; }
  static Decision noOpinion(std::string reason = "") {
    return {Kind::kNoOpinion, std::move(reason)};
  }
  bool allowed() const { return kind == Kind::kAllow; }
};

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  virtual Decision authorize(const Attributes& attributes) const = 0;
};

// One write after authorization and before storage. operation CREATE (oldObject null), UPDATE
// (PUT and PATCH: both set, newObject already patched), DELETE (newObject null). A plugin may
// change *newObject (mutating admission, e.g. service-account defaults) or refuse with a Status
// (Forbidden with a message naming what is not allowed). A plugin may also add warnings, which
// the server returns as `Warning: 299 - "..."` headers that kubectl prints.
struct AdmissionRequest {
  const UserInfo& user;
  const RequestInfo& request;
  std::string operation;
  const json* oldObject = nullptr;
  json* newObject = nullptr;
  bool dryRun = false;
  std::vector<std::string>* warnings = nullptr;  // null: the caller does not collect warnings

  void warn(std::string text) const {
    if (warnings) warnings->push_back(std::move(text));
  }
};

class AdmissionPlugin {
 public:
  virtual ~AdmissionPlugin() = default;
  virtual Status admit(AdmissionRequest& request) = 0;
  // Told after every successful write the server served, before it answers (plugins keeping
  // objects, through an AdmissionLister, read what changed from the store again).
  virtual void resourceWritten(const api::ResourceInfo& /*resource*/) {}
  // Told once the server serves, with its watch cache: plugins that keep objects follow the
  // store's changes through it (AdmissionLister) instead of reading the store on every write.
  virtual void serverStarted(WatchCache& /*watchCache*/) {}
};

// A create-only API that stores nothing (SelfSubjectAccessReview, TokenReview, TokenRequest on
// serviceaccounts/token): the server authenticates and authorizes the request, decodes its body
// (JSON, YAML or kubectl's protobuf) and answers 201 with the returned object.
using CreateOnlyHandler =
    std::function<Result<json>(const UserInfo& user, const RequestInfo& request, json body)>;

}  // namespace minik8s::apiserver::auth
