// ApiServer: the Kubernetes REST API over HTTP, backed by a Store.
//
// It serves /version, health, discovery, OpenAPI v3 and every resource of the scheme: CRUD,
// list with selectors and pagination, watch (through the WatchCache), server-side Tables,
// PATCH (merge, JSON, strategic, apply), registered subresources (status, scale, binding,
// eviction, finalize, approval, ...), field validation (Strict/Warn/Ignore) and kubectl's protobuf
// request bodies. It also runs the server's own housekeeping: default namespaces and compaction of
// old revisions (the content of a terminating namespace is deleted by the namespace controller,
// controllers/namespace). handle() is thread-safe and blocks only the calling connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <thread>

#include "apiserver/auth/auth.h"
#include "apiserver/custom_resources.h"
#include "apiserver/flow_control.h"
#include "apiserver/metrics_api.h"
#include "apiserver/node_proxy.h"
#include "apiserver/registry.h"
#include "apiserver/request_info.h"
#include "apiserver/service_allocator.h"
#include "apiserver/watch_cache.h"
#include "common/http.h"

namespace minik8s::apiserver {

struct ApiServerOptions {
  std::string advertiseAddress = "127.0.0.1:6443";  // host:port clients use
  std::chrono::seconds compactionInterval{60};
  std::chrono::seconds compactionRetention{300};          // history kept for watches to resume
  std::chrono::milliseconds namespaceSyncInterval{1000};  // housekeeping's tick
  std::string serviceClusterIPRange = "10.96.0.0/16";
  int serviceNodePortMin = 30000, serviceNodePortMax = 32767;
  // How often leaked ClusterIP/nodePort records are given back (see service_allocator.h).
  std::chrono::seconds serviceRepairInterval{60};
  // Legacy bearer tokens (the node join token): each authenticates as the bootstrap user
  // "system:bootstrap:<first 6 characters>" in group system:bootstrappers.
  std::vector<std::string> bearerTokens;

  // Security (auth/auth.h). Authentication: a verified client certificate (user = CN, groups =
  // O), else a bearer token recognised by one of tokenAuthenticators; otherwise the request is
  // anonymous, which gets 401 unless allowAnonymous (health checks are always served).
  std::vector<std::shared_ptr<auth::TokenAuthenticator>> tokenAuthenticators;
  bool allowAnonymous = true;
  std::shared_ptr<auth::Authorizer> authorizer;  // null: every request is allowed
  std::vector<std::shared_ptr<auth::AdmissionPlugin>> admissionPlugins;
  // Create-only APIs by "resource.group" ("selfsubjectaccessreviews.authorization.k8s.io") or
  // "resource/subresource" for core ("serviceaccounts/token").
  std::map<std::string, auth::CreateOnlyHandler> createOnlyHandlers;
  // The cluster CA certificate (PEM), served without authentication at GET /cacerts so agents
  // holding only the join token can fetch it and check it against the token's hash. "" = 404.
  std::string caPem;
  // How logs, exec and metrics reach the agents (TLS with the kubelet-client certificate).
  NodeProxyOptions nodeProxy;
  // Paths other rooms serve through this server, by prefix, after authentication and
  // authorization: non-resource URLs ("/monitoring/sd": RBAC on the URL, like /metrics) and API
  // groups served elsewhere ("/apis/custom.metrics.k8s.io": RBAC on the group's resources, as
  // for an aggregated API). The handler must be thread-safe.
  std::map<std::string, std::function<void(const http::Request&, http::ResponseWriter&)>>
      pathHandlers;
  // Overload protection (flow_control.h): in-flight limits, 429 with Retry-After past them.
  FlowControlOptions flowControl;
};

// The REST handler of one subresource (scale, binding, eviction, approval, status, log, ...).
using SubresourceHandler = std::function<void(const http::Request&, http::ResponseWriter&,
                                              const RequestInfo&, const auth::UserInfo&)>;

class ApiServer {
 public:
  ApiServer(storage::Store& store, const api::Scheme& scheme, ApiServerOptions options = {});
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Starts the watch cache and housekeeping, creates the default namespaces, repairs the service
  // IP/port records and creates or repairs the `kubernetes` service.
  Status start();
  void stop();

  void handle(const http::Request& req, http::ResponseWriter& w);

  Registry& registry() { return registry_; }
  // The one store watch every watch client shares (started by start()); in-server followers of
  // stored objects (the node authorizer's graph) watch through it too.
  WatchCache& watchCache() { return watchCache_; }

  // Serves `subresource` of group/resource ("*" for both: of every resource whose scheme entry
  // declares that subresource, custom resources included) for `verbs` (empty: every verb; the
  // handler answers the ones it refuses). Requests with another verb get 503 "not available on
  // this server yet", as subresources nobody serves. A specific registration wins over "*"; a
  // later one replaces an earlier one. Call before serving. The built-in ones (status,
  // finalize, scale, pods' binding/eviction/log/exec/attach/portforward, nodes' proxy,
  // certificatesigningrequests' approval) are registered by the constructor.
  void registerSubresource(const std::string& group, const std::string& resource,
                           const std::string& subresource, std::vector<std::string> verbs,
                           SubresourceHandler handler);

 private:
  // Authentication (and impersonation) of a request: the caller, or the 401/403 to send.
  Result<auth::UserInfo> authenticateCaller(const http::Request& req) const;
  // Authorization of the caller's request: OK or the 403 to send.
  Status authorizeCaller(const http::Request& req, const RequestInfo& ri,
                         const auth::UserInfo& user) const;
  // Runs the admission plugins on one write; the first refusal wins. Their warnings are added
  // to `warnings` when given.
  Status runAdmission(const auth::UserInfo& user, const RequestInfo& ri, const std::string& op,
                      const json* oldObject, json* newObject, bool dryRun,
                      std::vector<std::string>* warnings = nullptr) const;
  struct SubresourceRoute {
    std::vector<std::string> verbs;
    SubresourceHandler handler;
  };
  void registerBuiltinSubresources();
  const SubresourceRoute* subresourceRoute(const api::ResourceInfo& r,
                                           const std::string& subresource) const;
  // GET, PUT and PATCH of the status and finalize subresources.
  void serveStatus(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                   const auth::UserInfo& user);

  void serveCreateOnly(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                       const auth::UserInfo& user, const auth::CreateOnlyHandler& handler);
  void serveApproval(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                     const auth::UserInfo& user);

  void serveResource(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                     const auth::UserInfo& user);
  void serveList(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri);
  void serveStoredList(http::ResponseWriter& w, const api::ResourceInfo& r, const RequestInfo& ri,
                       const ListOptions& opts);
  void serveWatch(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri);
  void serveCreate(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                   const auth::UserInfo& user);
  void serveUpdate(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                   const auth::UserInfo& user);
  void servePatch(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                  const auth::UserInfo& user);
  void serveDelete(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                   const auth::UserInfo& user);
  void serveDeleteCollection(const http::Request& req, http::ResponseWriter& w,
                             const RequestInfo& ri, const auth::UserInfo& user);
  void serveScale(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri);
  void serveNodeProxy(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri);
  void serveBinding(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                    const auth::UserInfo& user);
  void serveEviction(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                     const auth::UserInfo& user);

  // Storage version -> the version the request named (apiVersion and kind set).
  Result<json> toRequestVersion(const api::ResourceInfo& r, json obj) const;
  Result<json> toStorageVersion(const api::ResourceInfo& r, json obj) const;
  // Decodes a request body (JSON, YAML or protobuf) into an object of `r`, applying the
  // fieldValidation directive; warnings are added to `warnings`.
  Result<json> decodeObject(const http::Request& req, const api::ResourceInfo& r,
                            std::vector<std::string>& warnings) const;
  Status checkFields(const http::Request& req, const api::ResourceInfo& r, const json& obj,
                     std::vector<std::string>& warnings) const;
  // Answers `obj` in the request's version (or as a Table). `storedText`, when not empty, is the
  // text `obj` was stored as (Registry's writes give it): an answer in the stored version is then
  // written from it (stored_json.h) instead of encoding `obj` again.
  void sendObject(const http::Request& req, http::ResponseWriter& w, int code,
                  const api::ResourceInfo& r, json obj,
                  const std::vector<std::string>& warnings = {},
                  std::string_view storedText = {}) const;

  // Called after a successful write of `r`.
  void noteWrite(const api::ResourceInfo& r);

  void housekeeping();
  void compactOnce();
  void repairServiceAllocations();

  storage::Store& store_;
  // A copy of the scheme given: the resources of CustomResourceDefinitions come and go in it.
  api::Scheme scheme_;
  ApiServerOptions options_;
  // options_.tokenAuthenticators plus the legacy bearerTokens as bootstrap users.
  std::vector<std::shared_ptr<auth::TokenAuthenticator>> tokenAuthenticators_;
  Registry registry_;
  WatchCache watchCache_;
  CustomResourceManager customResources_;
  MetricsApi metrics_;
  FlowControl flowControl_;
  std::map<std::string, SubresourceRoute> subresources_;  // "group/resource/subresource"
  std::unique_ptr<ServiceAllocator> serviceAllocator_;
  std::thread housekeeper_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::pair<std::chrono::steady_clock::time_point, int64_t>> revisionHistory_;
};

}  // namespace minik8s::apiserver
