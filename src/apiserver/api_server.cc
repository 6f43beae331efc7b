#include "apiserver/api_server.h"

#include <strings.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "api/conversion.h"
#include "api/custom_resource.h"
#include "api/field_selector.h"
#include "api/object_meta.h"
#include "api/openapi.h"
#include "api/patch.h"
#include "api/protobuf/protobuf_decoder.h"
#include "api/selector.h"
#include "api/strict_decoding.h"
#include "api/table.h"
#include "apiserver/auth/authentication.h"
#include "apiserver/auth/authorization.h"
#include "apiserver/auth/impersonation.h"
#include "apiserver/auth/rbac_escalation.h"
#include "apiserver/auth/review_handlers.h"
#include "apiserver/auth/static_token_authenticator.h"
#include "apiserver/discovery.h"
#include "apiserver/kubernetes_service.h"
#include "apiserver/node_proxy.h"
#include "apiserver/request_metrics.h"
#include "apiserver/stored_json.h"
#include "common/json_depth.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "common/time_util.h"
#include "common/yaml_json.h"

namespace minik8s::apiserver {

using api::nameOf;

namespace {

const char* kJson = "application/json";

// Warning headers, as kube-apiserver writes them.
void addWarnings(http::Response& r, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) {
    std::string escaped;
    for (char c : w) {
      if (c == '"' || c == '\\') escaped.push_back('\\');
      escaped.push_back(c);
    }
    r.headers.emplace_back("Warning", "299 - \"" + escaped + "\"");
  }
}

http::Response jsonResponse(int code, const json& body,
                            const std::vector<std::string>& warnings = {}) {
  http::Response r = http::Response::json(code, body);
  addWarnings(r, warnings);
  return r;
}

void sendError(http::ResponseWriter& w, const Status& s) { w.send(http::Response::error(s)); }

Status notFoundPath() {
  return Status::NotFoundMessage("the server could not find the requested resource");
}

bool wantsTable(const http::Request& req) {
  return req.header("Accept").find("as=Table") != std::string::npos;
}

bool isDryRun(const http::Request& req) {
  for (const auto& v : req.params("dryRun")) {
    if (v == "All") return true;
  }
  return false;
}

json partialMetadata(const json& obj) {
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", obj.value("metadata", json::object())}};
}

std::vector<api::TableColumn> tableColumnsOf(const api::ResourceInfo& r) {
  return r.custom ? r.custom->columns() : api::tableColumns(r.kind);
}

json tableColumnsJson(const api::ResourceInfo& r) {
  json cols = json::array();
  for (const auto& c : tableColumnsOf(r)) {
    cols.push_back({{"name", c.name},
                    {"type", c.type},
                    {"format", c.format},
                    {"description", c.description},
                    {"priority", c.priority}});
  }
  return cols;
}

json tableRow(const http::Request& req, const api::ResourceInfo& r, const json& obj) {
  json row = {{"cells", r.custom ? r.custom->cells(obj, Clock::now())
                                 : api::tableCells(r.kind, obj, Clock::now())}};
  std::string include = req.param("includeObject").value_or("Metadata");
  if (include == "Object") {
    row["object"] = obj;
  } else if (include != "None") {
    row["object"] = partialMetadata(obj);
  }
  return row;
}

json makeTable(const http::Request& req, const api::ResourceInfo& r, const std::vector<json>& objs,
               const json& listMeta, bool withColumns = true) {
  json rows = json::array();
  for (const auto& o : objs) rows.push_back(tableRow(req, r, o));
  json t = {
      {"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", listMeta}, {"rows", rows}};
  t["columnDefinitions"] = withColumns ? tableColumnsJson(r) : json::array();
  return t;
}

json versionInfo() {
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", "v1.32.0-minik8s"},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-11-21T00:00:00Z"},
          {"goVersion", "go1.23.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

}  // namespace

ApiServer::ApiServer(storage::Store& store, const api::Scheme& scheme, ApiServerOptions options)
    : store_(store),
      scheme_(scheme.resources()),
      options_(std::move(options)),
      registry_(store, scheme_),
      watchCache_(store),
      customResources_(registry_, scheme_, watchCache_),
      metrics_(registry_, [proxy = options_.nodeProxy](
                              const NodeEndpoint& ep) { return fetchSummary(ep, proxy); }),
      flowControl_(options_.flowControl) {
  tokenAuthenticators_ = options_.tokenAuthenticators;
  if (!options_.bearerTokens.empty()) {
    tokenAuthenticators_.push_back(std::make_shared<auth::StaticTokenAuthenticator>(
        auth::StaticTokenAuthenticator::bootstrapUsers(options_.bearerTokens)));
  }
  // The review APIs answer from this server's own authenticators and authorizer unless the
  // caller supplied its own handlers.
  for (auto& [key, handler] : auth::reviewHandlers(options_.authorizer, tokenAuthenticators_)) {
    options_.createOnlyHandlers.emplace(key, std::move(handler));
  }
  // RBAC escalation prevention belongs to the RBAC storage in Kubernetes: always on when
  // requests are authorized, and before the configurable admission plugins.
  if (options_.authorizer) {
    options_.admissionPlugins.insert(
        options_.admissionPlugins.begin(),
        auth::RbacEscalationCheck::fromRegistry(registry_, options_.authorizer));
  }
  registerBuiltinSubresources();
}

void ApiServer::registerSubresource(const std::string& group, const std::string& resource,
                                    const std::string& subresource, std::vector<std::string> verbs,
                                    SubresourceHandler handler) {
  subresources_[group + "/" + resource + "/" + subresource] =
      SubresourceRoute{std::move(verbs), std::move(handler)};
}

void ApiServer::registerBuiltinSubresources() {
  using namespace std::placeholders;  // NOLINT(google-build-using-namespace): _1.._4 below
  auto member = [this](auto fn) { return std::bind(fn, this, _1, _2, _3, _4); };
  auto withoutUser = [this](auto fn) {
    return [this, fn](const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                      const auth::UserInfo&) { (this->*fn)(req, w, ri); };
  };
  registerSubresource("*", "*", "status", {}, member(&ApiServer::serveStatus));
  registerSubresource("*", "*", "finalize", {}, member(&ApiServer::serveStatus));
  registerSubresource("*", "*", "scale", {}, withoutUser(&ApiServer::serveScale));
  registerSubresource("", "pods", "binding", {"create"}, member(&ApiServer::serveBinding));
  registerSubresource("", "pods", "eviction", {"create"}, member(&ApiServer::serveEviction));
  for (const char* s : {"log", "exec", "attach", "portforward"}) {
    registerSubresource(
        "", "pods", s, {},
        [this](const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
               const auth::UserInfo&) { proxyToNode(registry_, req, w, ri, options_.nodeProxy); });
  }
  registerSubresource("", "nodes", "proxy", {"get"}, withoutUser(&ApiServer::serveNodeProxy));
  registerSubresource("certificates.k8s.io", "certificatesigningrequests", "approval", {},
                      member(&ApiServer::serveApproval));
}

const ApiServer::SubresourceRoute* ApiServer::subresourceRoute(
    const api::ResourceInfo& r, const std::string& subresource) const {
  auto it = subresources_.find(r.group + "/" + r.plural + "/" + subresource);
  if (it == subresources_.end()) it = subresources_.find("*/*/" + subresource);
  return it == subresources_.end() ? nullptr : &it->second;
}

void ApiServer::serveStatus(const http::Request& req, http::ResponseWriter& w,
                            const RequestInfo& ri, const auth::UserInfo& user) {
  const api::ResourceInfo& r = *ri.info;
  if (ri.verb == "get") {
    auto obj = registry_.get(r, ri.namespaceName, ri.name);
    return obj.ok() ? sendObject(req, w, 200, r, *obj) : sendError(w, obj.status());
  }
  if (ri.verb == "update") return serveUpdate(req, w, ri, user);
  if (ri.verb == "patch") return servePatch(req, w, ri, user);
  sendError(w, Status::MethodNotAllowed("the server does not allow this method on the requested "
                                        "resource"));
}

ApiServer::~ApiServer() { stop(); }

void ApiServer::noteWrite(const api::ResourceInfo& r) {
  // A CRD written through this server is served (or gone) when the response arrives.
  if (CustomResourceManager::isCrdResource(r)) customResources_.reconcile();
  for (const auto& plugin : options_.admissionPlugins) {
    if (plugin) plugin->resourceWritten(r);
  }
}

Status ApiServer::start() {
  Status s = watchCache_.start();
  if (!s.ok()) return s;
  for (const auto& plugin : options_.admissionPlugins) {
    if (plugin) plugin->serverStarted(watchCache_);
  }
  if (Status crds = customResources_.start(); !crds.ok()) return crds;
  const auto* nsInfo = scheme_.byResource("", "v1", "namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto created = registry_.create(*nsInfo, "", ns);
    if (!created.ok() && created.status().reason() != "AlreadyExists") return created.status();
  }
  ServiceAllocatorOptions allocOpts;
  allocOpts.clusterIPRange = options_.serviceClusterIPRange;
  allocOpts.nodePortMin = options_.serviceNodePortMin;
  allocOpts.nodePortMax = options_.serviceNodePortMax;
  auto allocator = ServiceAllocator::create(store_, allocOpts);
  if (!allocator.ok()) return allocator.status();
  serviceAllocator_ = std::move(allocator.value());
  registry_.setServiceAllocator(serviceAllocator_.get());
  repairServiceAllocations();
  s = reconcileKubernetesService(registry_,
                                 {serviceAllocator_->range().at(1), options_.advertiseAddress});
  if (!s.ok()) LOG_WARN("the kubernetes service: {}", s.toString());
  housekeeper_ = std::thread([this] { housekeeping(); });
  return Status::Ok();
}

void ApiServer::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (housekeeper_.joinable()) housekeeper_.join();
  customResources_.stop();
  watchCache_.stop();
}

void ApiServer::housekeeping() {
  auto nextCompaction = std::chrono::steady_clock::now() + options_.compactionInterval;
  auto nextServiceRepair = std::chrono::steady_clock::now() + options_.serviceRepairInterval;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, options_.namespaceSyncInterval);
    if (stopping_) break;
    lock.unlock();
    if (std::chrono::steady_clock::now() >= nextCompaction) {
      compactOnce();
      nextCompaction = std::chrono::steady_clock::now() + options_.compactionInterval;
    }
    if (std::chrono::steady_clock::now() >= nextServiceRepair) {
      repairServiceAllocations();
      nextServiceRepair = std::chrono::steady_clock::now() + options_.serviceRepairInterval;
    }
    lock.lock();
  }
}

void ApiServer::compactOnce() {
  auto now = std::chrono::steady_clock::now();
  auto rev = store_.currentRevision();
  if (!rev.ok()) return;
  revisionHistory_.emplace_back(now, *rev);
  int64_t target = 0;
  while (!revisionHistory_.empty() &&
         revisionHistory_.front().first + options_.compactionRetention <= now) {
    target = revisionHistory_.front().second;
    revisionHistory_.erase(revisionHistory_.begin());
  }
  if (target > store_.compactedRevision()) {
    Status s = store_.compact(target);
    if (!s.ok()) LOG_WARN("compaction to {} failed: {}", target, s.toString());
  }
}

// Like Kubernetes' service IP and node port repair controllers: records follow the stored
// Services, leaked ones are given back.
void ApiServer::repairServiceAllocations() {
  const auto* services = scheme_.byResource("", "v1", "services");
  auto list = registry_.list(*services, "", {});
  if (!list.ok()) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  Status s = serviceAllocator_->repair(list->items, now);
  if (!s.ok()) LOG_WARN("service allocation repair: {}", s.toString());
}

Result<json> ApiServer::toRequestVersion(const api::ResourceInfo& r, json obj) const {
  const auto& s = registry_.storageInfo(r);
  if (&s != &r) return api::convertToVersion(scheme_, obj, r.apiVersion());
  obj["apiVersion"] = r.apiVersion();
  obj["kind"] = r.kind;
  return obj;
}

Result<json> ApiServer::toStorageVersion(const api::ResourceInfo& r, json obj) const {
  const auto& s = registry_.storageInfo(r);
  if (&s != &r) return api::convertToVersion(scheme_, obj, s.apiVersion());
  return obj;
}

Status ApiServer::checkFields(const http::Request& req, const api::ResourceInfo& r, const json& obj,
                              std::vector<std::string>& warnings) const {
  std::string mode = req.param("fieldValidation").value_or("Warn");
  if (mode != "Strict" && mode != "Warn" && mode != "Ignore") {
    return Status::BadRequest("fieldValidation must be one of Strict, Warn or Ignore, got \"" +
                              mode + "\"");
  }
  auto findings = api::checkAgainstSchema(r, obj);
  const std::string prefix =
      r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind + ": ";
  if (!findings.typeErrors.empty()) return Status::BadRequest(prefix + findings.typeErrors[0]);
  if (findings.unknownFields.empty() || mode == "Ignore") return Status::Ok();
  if (mode == "Warn") {
    for (const auto& f : findings.unknownFields) warnings.push_back("unknown field \"" + f + "\"");
    return Status::Ok();
  }
  std::string msg = prefix + "strict decoding error: ";
  for (size_t i = 0; i < findings.unknownFields.size(); ++i) {
    if (i) msg += ", ";
    msg += "unknown field \"" + findings.unknownFields[i] + "\"";
  }
  return Status::BadRequest(msg);
}

Result<json> ApiServer::decodeObject(const http::Request& req, const api::ResourceInfo& r,
                                     std::vector<std::string>& warnings) const {
  const std::string ct = req.header("Content-Type");
  json obj;
  if (ct.find("protobuf") != std::string::npos) {
    auto decoded = api::decodeProtobufObject(req.body);
    if (!decoded.ok()) return decoded.status();
    obj = std::move(decoded.value());
  } else if (ct.find("yaml") != std::string::npos) {
    auto decoded = parseYaml(req.body);
    if (!decoded.ok()) return decoded.status();
    obj = std::move(decoded.value());
  } else {
    obj = json::parse(req.body, nullptr, false);
    if (obj.is_discarded()) {
      return Status::BadRequest(
          "couldn't get version/kind; json parse error: the request body "
          "is not valid JSON");
    }
  }
  if (!obj.is_object()) {
    return Status::BadRequest(
        "couldn't get version/kind; json parse error: expected a JSON "
        "object");
  }
  // Clients such as the Python client omit apiVersion and kind: the URL says what it is.
  std::string apiVersion = obj.value("apiVersion", "");
  std::string kind = obj.value("kind", "");
  if (!apiVersion.empty() && apiVersion != r.apiVersion()) {
    return Status::BadRequest("the API version in the data (" + apiVersion +
                              ") does not match the expected API version (" + r.apiVersion() + ")");
  }
  if (!kind.empty() && kind != r.kind) {
    return Status::BadRequest("the kind in the data (" + kind +
                              ") does not match the expected kind (" + r.kind + ")");
  }
  obj["apiVersion"] = r.apiVersion();
  obj["kind"] = r.kind;
  Status fields = checkFields(req, r, obj, warnings);
  if (!fields.ok()) return fields;
  return obj;
}

void ApiServer::sendObject(const http::Request& req, http::ResponseWriter& w, int code,
                           const api::ResourceInfo& r, json obj,
                           const std::vector<std::string>& warnings,
                           std::string_view storedText) const {
  if (!storedText.empty() && !wantsTable(req) && &registry_.storageInfo(r) == &r) {
    const std::string rv = valueAt(obj, "/metadata/resourceVersion", std::string());
    http::Response res;
    res.status = code;
    res.headers.emplace_back("Content-Type", "application/json");
    if (!rv.empty() &&
        appendServedText(res.body, storedText, std::stoll(rv), r.apiVersion(), r.kind)) {
      addWarnings(res, warnings);
      return w.send(std::move(res));
    }
  }
  auto out = toRequestVersion(r, std::move(obj));
  if (!out.ok()) return sendError(w, out.status());
  if (wantsTable(req)) {
    json meta = {{"resourceVersion", valueAt(*out, "/metadata/resourceVersion", std::string())}};
    w.send(jsonResponse(code, makeTable(req, r, {*out}, meta), warnings));
    return;
  }
  w.send(jsonResponse(code, *out, warnings));
}

void ApiServer::handle(const http::Request& req, http::ResponseWriter& writer) {
  RequestMetricsWriter w(req, writer);  // apiserver_request_* when the request ends
  const std::string& p = req.path;
  const std::string accept = req.header("Accept");
  // Health checks and the CA certificate are served to anyone, credentials or not.
  if (p == "/healthz" || p == "/livez" || p == "/readyz") {
    return w.send(http::Response::text(200, "ok"));
  }
  if (p == "/cacerts" && (req.method == "GET" || req.method == "HEAD")) {
    if (options_.caPem.empty()) return sendError(w, notFoundPath());
    return w.send(http::Response::text(200, options_.caPem));
  }
  const RequestInfo& ri = w.setRequestInfo(parseRequestInfo(req, scheme_));
  auto caller = authenticateCaller(req);
  if (!caller.ok()) return sendError(w, caller.status());
  // Overload protection between authentication and authorization, as in kube-apiserver: a seat
  // held until this request ends, or 429 now. Long-running requests (watches) take none.
  FlowControl::Seat seat;
  if (!isLongRunning(ri)) {
    seat = flowControl_.admit(requestKind(req), *caller);
    if (!seat.admitted()) return w.send(tooManyRequestsResponse());
  }
  if (Status allowed = authorizeCaller(req, ri, *caller); !allowed.ok()) {
    return sendError(w, allowed);
  }
  if (const std::string ct = req.header("Content-Type"); !req.body.empty() &&
                                                         ct.find("protobuf") == std::string::npos &&
                                                         ct.find("yaml") == std::string::npos) {
    // Hostile input: every handler below parses JSON bodies and walks them recursively.
    if (Status depth = checkJsonDepth(req.body); !depth.ok()) return sendError(w, depth);
  }
  if (p == "/version" || p == "/version/") return w.send(jsonResponse(200, versionInfo()));
  // As kube-apiserver: for callers RBAC lets GET the non-resource URL /metrics.
  if (p == "/metrics" && req.method == "GET") {
    return w.send(metrics::metricsResponse(metrics::defaultRegistry()));
  }
  if (p.rfind("/apis/metrics.k8s.io", 0) == 0 && metrics_.handle(req, w)) return;
  for (const auto& [prefix, handler] : options_.pathHandlers) {
    if (p.rfind(prefix, 0) == 0 && (p.size() == prefix.size() || p[prefix.size()] == '/'))
      return handler(req, w);
  }
  if (p == "/api" || p == "/api/" || p == "/apis" || p == "/apis/") {
    const bool legacy = p.rfind("/api/", 0) == 0 || p == "/api";
    if (wantsAggregatedDiscovery(accept)) {
      json doc = aggregatedDiscovery(scheme_, legacy);
      if (!legacy) doc["items"].push_back(MetricsApi::aggregatedGroup());
      std::string ct = aggregatedContentType(accept);
      if (ct.find("v2beta1") != std::string::npos)
        doc["apiVersion"] = "apidiscovery.k8s.io/v2beta1";
      http::Response r = http::Response::json(200, doc);
      r.headers = {{"Content-Type", ct}};
      return w.send(std::move(r));
    }
    if (legacy) return w.send(jsonResponse(200, legacyApiVersions(options_.advertiseAddress)));
    json groups = legacyApiGroupList(scheme_);
    groups["groups"].push_back(MetricsApi::legacyGroup());
    return w.send(jsonResponse(200, groups));
  }
  if (p == "/openapi/v3" || p == "/openapi/v3/") {
    return w.send(jsonResponse(200, api::openapiV3Index(scheme_)));
  }
  if (p.rfind("/openapi/v3/", 0) == 0) {
    auto doc = api::openapiV3Document(scheme_, p.substr(strlen("/openapi/v3/")));
    if (!doc.ok()) return sendError(w, doc.status());
    return w.send(jsonResponse(200, *doc));
  }
  if (!ri.isResourceRequest) {
    // Group and group/version discovery documents.
    std::vector<std::string> parts;
    size_t start = 1;
    while (start <= p.size()) {
      size_t slash = p.find('/', start);
      if (slash == std::string::npos) slash = p.size();
      if (slash > start) parts.push_back(p.substr(start, slash - start));
      start = slash + 1;
    }
    if (parts.size() == 2 && parts[0] == "api") {
      auto doc = legacyResourceList(scheme_, "", parts[1]);
      return doc.ok() ? w.send(jsonResponse(200, *doc)) : sendError(w, doc.status());
    }
    if (parts.size() == 2 && parts[0] == "apis") {
      auto doc = legacyApiGroup(scheme_, parts[1]);
      return doc.ok() ? w.send(jsonResponse(200, *doc)) : sendError(w, doc.status());
    }
    if (parts.size() == 3 && parts[0] == "apis") {
      auto doc = legacyResourceList(scheme_, parts[1], parts[2]);
      return doc.ok() ? w.send(jsonResponse(200, *doc)) : sendError(w, doc.status());
    }
    return sendError(w, notFoundPath());
  }
  if (!ri.info) return sendError(w, notFoundPath());
  serveResource(req, w, ri, *caller);
}

Result<auth::UserInfo> ApiServer::authenticateCaller(const http::Request& req) const {
  auto caller = auth::authenticateRequest(req, tokenAuthenticators_, options_.allowAnonymous);
  if (!caller.ok()) return caller.status();
  return auth::impersonate(req, *caller, options_.authorizer.get());
}

Status ApiServer::authorizeCaller(const http::Request& req, const RequestInfo& ri,
                                  const auth::UserInfo& user) const {
  if (!options_.authorizer) return Status::Ok();
  auth::Attributes attributes = auth::requestAttributes(user, req, ri);
  auth::Decision decision = options_.authorizer->authorize(attributes);
  if (!decision.allowed()) return auth::forbidden(attributes, decision.reason);
  return Status::Ok();
}

Status ApiServer::runAdmission(const auth::UserInfo& user, const RequestInfo& ri,
                               const std::string& op, const json* oldObject, json* newObject,
                               bool dryRun, std::vector<std::string>* warnings) const {
  for (const auto& plugin : options_.admissionPlugins) {
    if (!plugin) continue;
    auth::AdmissionRequest request{user, ri, op, oldObject, newObject, dryRun, warnings};
    Status s = plugin->admit(request);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

namespace {

// "selfsubjectaccessreviews.authorization.k8s.io", "tokenreviews.authentication.k8s.io",
// "serviceaccounts/token": how ApiServerOptions.createOnlyHandlers names its APIs.
std::string createOnlyKey(const RequestInfo& ri) {
  if (!ri.subresource.empty()) {
    return (ri.group.empty() ? ri.resource : ri.resource + "." + ri.group) + "/" + ri.subresource;
  }
  return ri.group.empty() ? ri.resource : ri.resource + "." + ri.group;
}

Result<json> applyPatchBody(const std::string& contentType, const json& current,
                            const std::string& body, const std::string& kind);

// Review APIs are answered, never stored.
bool isReviewResource(const api::ResourceInfo& r) {
  return r.group == "authorization.k8s.io" ||
         (r.group == "authentication.k8s.io" && r.kind != "TokenRequest");
}

}  // namespace

void ApiServer::serveCreateOnly(const http::Request& req, http::ResponseWriter& w,
                                const RequestInfo& ri, const auth::UserInfo& user,
                                const auth::CreateOnlyHandler& handler) {
  if (ri.verb != "create") {
    return sendError(w, Status::MethodNotAllowed("the server does not allow this method on the "
                                                 "requested resource"));
  }
  json body;
  std::vector<std::string> warnings;
  const api::SubresourceInfo* sub = nullptr;
  if (!ri.subresource.empty()) sub = ri.info->subresource(ri.subresource);
  if (sub == nullptr) {
    auto decoded = decodeObject(req, *ri.info, warnings);
    if (!decoded.ok()) return sendError(w, decoded.status());
    body = std::move(decoded.value());
  } else {
    // A subresource body (TokenRequest) has no resource of its own in the scheme.
    const std::string ct = req.header("Content-Type");
    Result<json> decoded = json();
    if (ct.find("protobuf") != std::string::npos) {
      decoded = api::decodeProtobufObject(req.body);
    } else if (ct.find("yaml") != std::string::npos) {
      decoded = parseYaml(req.body);
    } else {
      json parsed = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
      decoded = parsed.is_discarded()
                    ? Result<json>(Status::BadRequest("the request body is not valid JSON"))
                    : Result<json>(std::move(parsed));
    }
    if (!decoded.ok()) return sendError(w, decoded.status());
    body = std::move(decoded.value());
    if (!body.is_object()) return sendError(w, Status::BadRequest("expected a JSON object"));
    const std::string apiVersion =
        sub->group.empty() ? sub->version : sub->group + "/" + sub->version;
    if (body.value("kind", sub->kind) != sub->kind) {
      return sendError(
          w, Status::BadRequest("the kind in the data (" + body.value("kind", "") +
                                ") does not match the expected kind (" + sub->kind + ")"));
    }
    body["apiVersion"] = apiVersion;
    body["kind"] = sub->kind;
  }
  Status admitted = runAdmission(user, ri, "CREATE", nullptr, &body, isDryRun(req));
  if (!admitted.ok()) return sendError(w, admitted);
  auto answer = handler(user, ri, std::move(body));
  if (!answer.ok()) return sendError(w, answer.status());
  w.send(jsonResponse(201, *answer, warnings));
}

// certificatesigningrequests/approval: only the Approved/Denied/Failed conditions change.
void ApiServer::serveApproval(const http::Request& req, http::ResponseWriter& w,
                              const RequestInfo& ri, const auth::UserInfo& user) {
  const api::ResourceInfo& r = *ri.info;
  if (ri.verb == "get") {
    auto obj = registry_.get(r, ri.namespaceName, ri.name);
    return obj.ok() ? sendObject(req, w, 200, r, *obj) : sendError(w, obj.status());
  }
  if (ri.verb != "update" && ri.verb != "patch") {
    return sendError(w, Status::MethodNotAllowed("the approval subresource allows get, update "
                                                 "and patch"));
  }
  std::vector<std::string> warnings;
  json desired;
  if (ri.verb == "update") {
    auto obj = decodeObject(req, r, warnings);
    if (!obj.ok()) return sendError(w, obj.status());
    desired = std::move(obj.value());
  }
  auto mutate = [&](json current) -> Result<json> {
    json wanted = desired;
    if (ri.verb == "patch") {
      auto patched = applyPatchBody(req.header("Content-Type"), current, req.body, r.kind);
      if (!patched.ok()) return patched.status();
      wanted = std::move(patched.value());
    }
    json next = current;
    next["status"]["conditions"] = valueAt(wanted, "/status/conditions", json::array());
    std::string rv = valueAt(wanted, "/metadata/resourceVersion", std::string());
    if (!rv.empty()) next["metadata"]["resourceVersion"] = rv;
    Status admitted = runAdmission(user, ri, "UPDATE", &current, &next, isDryRun(req));
    if (!admitted.ok()) return admitted;
    return next;
  };
  auto updated =
      registry_.guaranteedUpdate(r, ri.namespaceName, ri.name, mutate, "status", isDryRun(req));
  if (!updated.ok()) return sendError(w, updated.status());
  noteWrite(r);
  sendObject(req, w, 200, r, std::move(updated.value()), warnings);
}

void ApiServer::serveResource(const http::Request& req, http::ResponseWriter& w,
                              const RequestInfo& ri, const auth::UserInfo& user) {
  const api::ResourceInfo& r = *ri.info;
  if (r.namespaced && ri.namespaceName.empty() && !ri.name.empty()) {
    return sendError(w, Status::NotFoundMessage("the server could not find the requested "
                                                "resource (namespace required)"));
  }
  if (auto h = options_.createOnlyHandlers.find(createOnlyKey(ri));
      h != options_.createOnlyHandlers.end() && h->second) {
    if (!ri.subresource.empty() && !r.subresource(ri.subresource)) {
      return sendError(w, notFoundPath());
    }
    return serveCreateOnly(req, w, ri, user, h->second);
  }
  if (isReviewResource(r)) {
    return sendError(w, Status::Unavailable("the " + r.qualifiedResource() +
                                            " API is not enabled on this server"));
  }
  if (!ri.subresource.empty()) {
    const auto* sub = r.subresource(ri.subresource);
    if (!sub) return sendError(w, notFoundPath());
    const SubresourceRoute* route = subresourceRoute(r, ri.subresource);
    if (route && (route->verbs.empty() || std::find(route->verbs.begin(), route->verbs.end(),
                                                    ri.verb) != route->verbs.end())) {
      return route->handler(req, w, ri, user);
    }
    // services' proxy, serviceaccounts' token (without its create-only handler): not served.
    return sendError(w, Status::Unavailable("the " + r.plural + "/" + ri.subresource +
                                            " subresource is not available on this server yet"));
  }
  const std::string& v = ri.verb;
  if (v == "get") {
    if (!wantsTable(req) && &registry_.storageInfo(r) == &r) {
      // In the stored version: the stored text with its resourceVersion (stored_json.h).
      auto kv = registry_.getStored(r, ri.namespaceName, ri.name);
      if (!kv.ok()) return sendError(w, kv.status());
      http::Response res;
      res.status = 200;
      res.headers.emplace_back("Content-Type", "application/json");
      if (appendServedText(res.body, kv->value, kv->modRevision, r.apiVersion(), r.kind)) {
        return w.send(std::move(res));
      }
      auto obj = decodeStored(*kv);
      return obj.ok() ? sendObject(req, w, 200, r, *obj) : sendError(w, obj.status());
    }
    auto obj = registry_.get(r, ri.namespaceName, ri.name);
    return obj.ok() ? sendObject(req, w, 200, r, *obj) : sendError(w, obj.status());
  }
  if (v == "list") return serveList(req, w, ri);
  if (v == "watch") return serveWatch(req, w, ri);
  if (v == "create") {
    if (!ri.name.empty()) {
      return sendError(w, Status::MethodNotAllowed("POST is not allowed on a named " + r.singular +
                                                   "; use PUT or PATCH"));
    }
    return serveCreate(req, w, ri, user);
  }
  if (v == "update") return serveUpdate(req, w, ri, user);
  if (v == "patch") return servePatch(req, w, ri, user);
  if (v == "delete") return serveDelete(req, w, ri, user);
  if (v == "deletecollection") return serveDeleteCollection(req, w, ri, user);
  sendError(w, Status::MethodNotAllowed("method " + req.method + " is not allowed"));
}

void ApiServer::serveList(const http::Request& req, http::ResponseWriter& w,
                          const RequestInfo& ri) {
  const api::ResourceInfo& r = *ri.info;
  ListOptions opts;
  opts.labelSelector = req.param("labelSelector").value_or("");
  opts.fieldSelector = req.param("fieldSelector").value_or("");
  opts.continueToken = req.param("continue").value_or("");
  try {
    opts.limit = std::stoll(req.param("limit").value_or("0"));
  } catch (...) {
    return sendError(w, Status::BadRequest("limit must be an integer"));
  }
  if (!wantsTable(req) && &registry_.storageInfo(r) == &r) return serveStoredList(w, r, ri, opts);
  auto page = registry_.list(registry_.storageInfo(r), ri.namespaceName, opts);
  if (!page.ok()) return sendError(w, page.status());
  std::vector<json> items;
  items.reserve(page->items.size());
  for (auto& obj : page->items) {
    auto out = toRequestVersion(r, std::move(obj));
    if (!out.ok()) return sendError(w, out.status());
    items.push_back(std::move(out.value()));
  }
  json meta = {{"resourceVersion", std::to_string(page->revision)}};
  if (!page->continueToken.empty()) meta["continue"] = page->continueToken;
  if (wantsTable(req)) return w.send(jsonResponse(200, makeTable(req, r, items, meta)));
  json list = {{"kind", r.listKind}, {"apiVersion", r.apiVersion()}, {"metadata", meta}};
  list["items"] = json::array();
  for (auto& i : items) list["items"].push_back(std::move(i));
  w.send(jsonResponse(200, list));
}

// A list in the version it is stored in, written from the stored texts (stored_json.h): the same
// bytes as decoding every object and encoding the list, without a tree per object. A list over
// kStreamedListBytes is streamed (chunked, as kube-apiserver's large lists are): written in
// pieces of kListChunkBytes as it is built, so it is never held whole (a list of 10,000 pods is
// 14 MiB, and each fresh page of such a body was a page fault: a quarter of the list's CPU) and
// the client reads one piece while the next is built.
void ApiServer::serveStoredList(http::ResponseWriter& w, const api::ResourceInfo& r,
                                const RequestInfo& ri, const ListOptions& opts) {
  constexpr size_t kStreamedListBytes = 1024 * 1024, kListChunkBytes = 256 * 1024;
  auto page = registry_.listStored(r, ri.namespaceName, opts);
  if (!page.ok()) return sendError(w, page.status());
  const std::string apiVersion = r.apiVersion();
  size_t size = 128;
  for (const auto& kv : page->items) size += kv.value.size() + 32;
  const bool streamed = size > kStreamedListBytes;
  http::Response res;
  res.status = 200;
  res.headers.emplace_back("Content-Type", "application/json");
  std::string& body = res.body;
  body.reserve(streamed ? kListChunkBytes + 64 * 1024 : size);
  bool begun = false;  // the stream's header is written: an error can no longer be answered
  auto flush = [&] {
    if (!begun) {
      begun = true;
      if (!w.beginStream(200, res.headers)) return false;
    }
    const bool written = w.write(body);
    body.clear();
    return written;
  };
  body.append("{\"apiVersion\":").append(json(apiVersion).dump()).append(",\"items\":[");
  bool first = true;
  for (const auto& kv : page->items) {
    if (!first) body.push_back(',');
    first = false;
    if (!appendServedText(body, kv.value, kv.modRevision, apiVersion, r.kind)) {
      // Not the shape the text can be patched in (written without apiVersion, say): the long way.
      auto obj = decodeStored(kv);
      auto out = obj.ok() ? toRequestVersion(r, std::move(obj.value())) : obj;
      // Once streaming, the client sees the connection close before the list's end.
      if (!out.ok()) return begun ? void() : sendError(w, out.status());
      body.append(out->dump(-1, ' ', false, json::error_handler_t::replace));
    }
    if (streamed && body.size() >= kListChunkBytes && !flush()) return;
  }
  json meta = {{"resourceVersion", std::to_string(page->revision)}};
  if (!page->continueToken.empty()) meta["continue"] = page->continueToken;
  body.append("],\"kind\":")
      .append(json(r.listKind).dump())
      .append(",\"metadata\":")
      .append(meta.dump())
      .push_back('}');
  if (!begun) return w.send(std::move(res));
  if (flush()) w.end();
}

void ApiServer::serveWatch(const http::Request& req, http::ResponseWriter& w,
                           const RequestInfo& ri) {
  const api::ResourceInfo& r = *ri.info;
  const api::ResourceInfo& sr = registry_.storageInfo(r);
  std::string fieldSel = req.param("fieldSelector").value_or("");
  if (!ri.name.empty()) {
    fieldSel = "metadata.name=" + ri.name + (fieldSel.empty() ? "" : "," + fieldSel);
  }
  std::optional<api::LabelSelector> labels;
  if (auto ls = req.param("labelSelector"); ls && !ls->empty()) {
    auto sel = api::LabelSelector::parse(*ls);
    if (!sel.ok()) return sendError(w, Status::BadRequest(sel.status().message()));
    labels = std::move(sel.value());
  }
  std::optional<api::FieldSelector> fields;
  if (!fieldSel.empty()) {
    auto sel = api::FieldSelector::parse(fieldSel);
    if (!sel.ok()) return sendError(w, Status::BadRequest(sel.status().message()));
    Status valid = api::FieldSelector::validate(r.kind, *sel);
    if (!valid.ok()) return sendError(w, valid);
    fields = std::move(sel.value());
  }
  auto matches = [&](const json& obj) {
    if (labels && !labels->matches(obj["metadata"].value("labels", json()))) return false;
    if (fields) {
      auto m = fields->matches(r.kind, obj);
      if (!m.ok() || !*m) return false;
    }
    return true;
  };
  // The same for a version of an event's object, read from its shared attributes: a watch
  // without selectors decodes nothing.
  auto selects = [&](ObjectAttributes* attributes) {
    if (!attributes) return false;
    if (!labels && !fields) return true;
    auto values = attributes->get(r.kind);
    return (!labels || labels->matches(values->labels)) &&
           (!fields || fields->matches(values->fields));
  };
  const bool bookmarks = isTrueParam(req.param("allowWatchBookmarks").value_or(""));
  const std::string sendInitial = req.param("sendInitialEvents").value_or("");
  const std::string rvParam = req.param("resourceVersion").value_or("");
  if (!sendInitial.empty() && isTrueParam(sendInitial) &&
      req.param("resourceVersionMatch").value_or("") != "NotOlderThan") {
    return sendError(w, Status::Invalid("", "",
                                        {{"FieldValueInvalid", "resourceVersionMatch",
                                          "sendInitialEvents requires "
                                          "resourceVersionMatch=NotOlderThan"}}));
  }
  const bool initialEvents =
      sendInitial.empty() ? (rvParam.empty() || rvParam == "0") : isTrueParam(sendInitial);
  int64_t timeoutSeconds = 1800;
  try {
    if (auto t = req.param("timeoutSeconds")) timeoutSeconds = std::stoll(*t);
  } catch (...) {
    return sendError(w, Status::BadRequest("timeoutSeconds must be an integer"));
  }

  std::vector<json> initial;
  int64_t from = 0;
  if (initialEvents) {
    auto page = registry_.list(sr, ri.namespaceName, {});
    if (!page.ok()) return sendError(w, page.status());
    from = page->revision;
    if (!rvParam.empty() && rvParam != "0") {
      try {
        from = std::max<int64_t>(from, std::stoll(rvParam));
      } catch (...) {
      }
    }
    initial = std::move(page->items);
  } else {
    try {
      from = std::stoll(rvParam);
    } catch (...) {
      return sendError(w, Status::BadRequest("invalid resourceVersion \"" + rvParam + "\""));
    }
  }

  const bool table = wantsTable(req);
  bool firstTable = true;
  // The events ready to go are written as one chunk: one TLS record and one send() for all of a
  // batch instead of one per event (a watcher behind a backlog otherwise pays a write, and its
  // client a wake-up, per event). The stream's bytes are the same; only the chunking differs.
  std::string pending;
  constexpr size_t kFlushBytes = 256 * 1024;
  auto flush = [&]() -> bool {
    if (pending.empty()) return true;
    const bool ok = w.write(pending);
    pending.clear();
    return ok;
  };
  auto queued = [&]() -> bool { return pending.size() < kFlushBytes || flush(); };
  auto writeEvent = [&](const char* type, json obj) -> bool {
    auto out = toRequestVersion(r, std::move(obj));
    if (!out.ok()) return true;
    json ev = {{"type", type}};
    if (table) {
      json meta = {{"resourceVersion", valueAt(*out, "/metadata/resourceVersion", std::string())}};
      ev["object"] = makeTable(req, r, {*out}, meta, firstTable);
      firstTable = false;
    } else {
      ev["object"] = std::move(out.value());
    }
    pending.append(ev.dump(-1, ' ', false, json::error_handler_t::replace)).push_back('\n');
    return queued();
  };
  // An event of the cache, sent as stored: its text is encoded once for all watchers.
  const bool asStored = !table && &registry_.storageInfo(r) == &r;
  auto encodedText = [&](const CachedEvent& ev) -> const std::string* {
    return asStored && ev.encoded ? ev.encoded->get(*ev.text, ev.revision, r.apiVersion(), r.kind)
                                  : nullptr;
  };
  auto appendEncoded = [](std::string& out, const char* type, const std::string& text) {
    out.append("{\"object\":").append(text).append(",\"type\":\"").append(type).append("\"}\n");
  };
  auto writeCached = [&](const char* type, const CachedEvent& ev) -> bool {
    const std::string* text = encodedText(ev);
    if (!text) return writeEvent(type, eventObject(ev));
    appendEncoded(pending, type, *text);
    return queued();
  };
  auto writeBookmark = [&](int64_t rev, bool initialEnd) -> bool {
    json obj = {{"kind", r.kind},
                {"apiVersion", r.apiVersion()},
                {"metadata", {{"resourceVersion", std::to_string(rev)}}}};
    if (initialEnd) obj["metadata"]["annotations"] = {{"k8s.io/initial-events-end", "true"}};
    json ev = {{"type", "BOOKMARK"}, {"object", obj}};
    pending.append(ev.dump()).push_back('\n');
    return flush();
  };

  auto watcher = watchCache_.watch(Registry::prefix(sr, ri.namespaceName), from);
  w.beginStream(200, {{"Content-Type", kJson}});
  if (!watcher.ok()) {
    json ev = {{"type", "ERROR"}, {"object", watcher.status().toJson()}};
    w.write(ev.dump() + "\n");
    w.end();
    return;
  }
  for (auto& obj : initial) {
    if (matches(obj) && !writeEvent("ADDED", std::move(obj))) return (*watcher)->stop();
  }
  if (isTrueParam(sendInitial) && bookmarks && !writeBookmark(from, true)) {
    return (*watcher)->stop();
  }
  if (!flush()) return (*watcher)->stop();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  auto nextBookmark = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int64_t lastRev = from;
  // What this watch sends for an event: its type as the selectors see the change, or nullptr.
  auto eventType = [&](const CachedEvent& ev) -> const char* {
    const bool now = selects(ev.attributes.get());
    const bool before = selects(ev.prevAttributes.get());
    switch (ev.type) {
      case CachedEvent::Type::kAdded:
        return now ? "ADDED" : nullptr;
      case CachedEvent::Type::kModified:
        return now && before ? "MODIFIED" : now ? "ADDED" : before ? "DELETED" : nullptr;
      case CachedEvent::Type::kDeleted:
        return now ? "DELETED" : nullptr;
    }
    return nullptr;
  };
  // Write-through (Watcher::setSink): while this thread waits, the cache's thread writes events
  // already encoded for every watcher when the socket takes them at once; anything else (an
  // object to convert or decode, a client behind) is left to this thread. `lastRev` and the
  // writer are this thread's, used by the sink only while this thread is inside next().
  if (asStored && w.writesIfReady()) {
    (*watcher)->setSink([&](const std::vector<CachedEvent>& batch) {
      std::string out;
      for (const auto& ev : batch) {
        const char* type = eventType(ev);
        if (!type) continue;
        const std::string* text = encodedText(ev);
        if (!text) return false;
        appendEncoded(out, type, *text);
      }
      if (!out.empty() && !w.writeIfReady(out)) return false;
      lastRev = batch.back().revision;
      return true;
    });
  }
  std::vector<CachedEvent> events;
  while (std::chrono::steady_clock::now() < deadline) {
    events.clear();
    Status s = (*watcher)->next(events, std::chrono::milliseconds(500));
    bool ok = true;
    for (const auto& ev : events) {
      lastRev = ev.revision;
      if (const char* type = eventType(ev)) ok = writeCached(type, ev);
      if (!ok) break;
    }
    if (!ok || !flush()) break;
    if (!s.ok()) {
      Status err = s.code() == 410 ? s : Status::Expired(s.message());
      json ev = {{"type", "ERROR"}, {"object", err.toJson()}};
      w.write(ev.dump() + "\n");
      break;
    }
    if (w.clientGone()) break;
    if (bookmarks && std::chrono::steady_clock::now() >= nextBookmark) {
      if (!writeBookmark(std::max(lastRev, watchCache_.latestRevision()), false)) break;
      nextBookmark = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    }
  }
  (*watcher)->stop();
  w.end();
}

void ApiServer::serveCreate(const http::Request& req, http::ResponseWriter& w,
                            const RequestInfo& ri, const auth::UserInfo& user) {
  const api::ResourceInfo& r = *ri.info;
  std::vector<std::string> warnings;
  auto obj = decodeObject(req, r, warnings);
  if (!obj.ok()) return sendError(w, obj.status());
  std::string bodyNs = valueAt(*obj, "/metadata/namespace", std::string());
  if (r.namespaced && !bodyNs.empty() && bodyNs != ri.namespaceName) {
    return sendError(w, Status::BadRequest("the namespace of the provided object does not match "
                                           "the namespace sent on the request"));
  }
  if (r.namespaced && ri.namespaceName.empty()) {
    return sendError(w, Status::BadRequest("a namespace is required to create " + r.plural));
  }
  if (r.kind == "CertificateSigningRequest") {
    // The server records who asked, as Kubernetes does; clients cannot claim another identity.
    json& spec = (*obj)["spec"];
    if (spec.is_object()) {
      spec["username"] = user.name;
      spec["groups"] = user.groups;
      if (!user.uid.empty()) spec["uid"] = user.uid;
      if (!user.extra.empty()) spec["extra"] = user.extra;
    }
  }
  if (Status admitted = runAdmission(user, ri, "CREATE", nullptr, &*obj, isDryRun(req), &warnings);
      !admitted.ok()) {
    return sendError(w, admitted);
  }
  auto stored = toStorageVersion(r, std::move(obj.value()));
  if (!stored.ok()) return sendError(w, stored.status());
  std::string storedText;
  auto created = registry_.create(registry_.storageInfo(r), ri.namespaceName,
                                  std::move(stored.value()), isDryRun(req), &storedText);
  if (!created.ok()) return sendError(w, created.status());
  noteWrite(r);
  sendObject(req, w, 201, r, std::move(created.value()), warnings, storedText);
}

void ApiServer::serveUpdate(const http::Request& req, http::ResponseWriter& w,
                            const RequestInfo& ri, const auth::UserInfo& user) {
  const api::ResourceInfo& r = *ri.info;
  std::vector<std::string> warnings;
  auto obj = decodeObject(req, r, warnings);
  if (!obj.ok()) return sendError(w, obj.status());
  auto stored = toStorageVersion(r, std::move(obj.value()));
  if (!stored.ok()) return sendError(w, stored.status());
  Result<json> updated = Status::Internal("not updated");
  std::string storedText;
  std::vector<std::string> admissionWarnings;  // of the last try
  if (options_.admissionPlugins.empty()) {
    updated =
        registry_.update(registry_.storageInfo(r), ri.namespaceName, ri.name,
                         std::move(stored.value()), ri.subresource, isDryRun(req), &storedText);
  } else {
    // Admission needs the stored object: a read-modify-write with the same precondition
    // (the body's resourceVersion, when set) as a plain update.
    auto mutate = [&](json current) -> Result<json> {
      json next = *stored;
      admissionWarnings.clear();
      Status admitted =
          runAdmission(user, ri, "UPDATE", &current, &next, isDryRun(req), &admissionWarnings);
      if (!admitted.ok()) return admitted;
      return next;
    };
    updated = registry_.guaranteedUpdate(registry_.storageInfo(r), ri.namespaceName, ri.name,
                                         mutate, ri.subresource, isDryRun(req), &storedText);
  }
  if (!updated.ok()) return sendError(w, updated.status());
  warnings.insert(warnings.end(), admissionWarnings.begin(), admissionWarnings.end());
  noteWrite(r);
  sendObject(req, w, 200, r, std::move(updated.value()), warnings, storedText);
}

namespace {

Result<json> applyPatchBody(const std::string& contentType, const json& current,
                            const std::string& body, const std::string& kind) {
  json patch;
  if (contentType.find("apply-patch+yaml") != std::string::npos) {
    auto parsed = parseYaml(body);
    if (!parsed.ok()) return parsed.status();
    patch = std::move(parsed.value());
  } else {
    patch = json::parse(body, nullptr, false);
    if (patch.is_discarded()) return Status::BadRequest("the patch is not valid JSON");
  }
  if (contentType.find("application/json-patch+json") != std::string::npos) {
    return api::applyJsonPatch(current, patch);
  }
  if (contentType.find("application/merge-patch+json") != std::string::npos) {
    return api::applyMergePatch(current, patch);
  }
  if (contentType.find("application/strategic-merge-patch+json") != std::string::npos ||
      contentType.find("application/apply-patch+yaml") != std::string::npos) {
    return api::applyStrategicMergePatch(current, patch, kind);
  }
  return Status::UnsupportedMediaType(
      "the body of the request was in an unknown format - "
      "accepted media types include: "
      "application/json-patch+json, "
      "application/merge-patch+json, "
      "application/apply-patch+yaml, "
      "application/strategic-merge-patch+json");
}

}  // namespace

void ApiServer::servePatch(const http::Request& req, http::ResponseWriter& w, const RequestInfo& ri,
                           const auth::UserInfo& user) {
  const api::ResourceInfo& r = *ri.info;
  const api::ResourceInfo& sr = registry_.storageInfo(r);
  const std::string ct = req.header("Content-Type");
  const bool apply = ct.find("apply-patch+yaml") != std::string::npos;
  if (apply && req.param("fieldManager").value_or("").empty()) {
    return sendError(w, Status::BadRequest("PATCH, application/apply-patch+yaml requires "
                                           "fieldManager to be set"));
  }
  std::vector<std::string> warnings;
  auto mutate = [&](const json& current) -> Result<json> {
    // The stored object is patched where it lies when it already is in the request's version
    // (the usual case): a copy of it less per PATCH.
    std::optional<json> converted;
    const json* inRequestVersion = &current;
    if (&sr != &r || api::stringMember(current, "apiVersion") != r.apiVersion() ||
        api::stringMember(current, "kind") != r.kind) {
      auto c = toRequestVersion(r, current);
      if (!c.ok()) return c.status();
      converted = std::move(c.value());
      inRequestVersion = &*converted;
    }
    if (r.custom && ct.find("strategic-merge-patch") != std::string::npos) {
      return Status::UnsupportedMediaType(
          "the body of the request was in an unknown format - accepted media types include: "
          "application/json-patch+json, application/merge-patch+json, "
          "application/apply-patch+yaml");
    }
    auto patched = applyPatchBody(ct, *inRequestVersion, req.body, r.kind);
    if (!patched.ok()) return patched.status();
    warnings.clear();
    Status fields = checkFields(req, r, *patched, warnings);
    if (!fields.ok()) return fields;
    auto next = toStorageVersion(r, std::move(patched.value()));
    if (!next.ok()) return next;
    Status admitted = runAdmission(user, ri, "UPDATE", &current, &*next, isDryRun(req), &warnings);
    if (!admitted.ok()) return admitted;
    return next;
  };
  std::string storedText;
  auto updated = registry_.guaranteedUpdate(sr, ri.namespaceName, ri.name, mutate, ri.subresource,
                                            isDryRun(req), &storedText);
  if (!updated.ok() && updated.status().code() == 404 && apply && ri.subresource.empty()) {
    // Server-side apply of an absent object creates it.
    auto obj = decodeObject(req, r, warnings);
    if (!obj.ok()) return sendError(w, obj.status());
    (*obj)["metadata"]["name"] = ri.name;
    if (Status admitted =
            runAdmission(user, ri, "CREATE", nullptr, &*obj, isDryRun(req), &warnings);
        !admitted.ok()) {
      return sendError(w, admitted);
    }
    auto stored = toStorageVersion(r, std::move(obj.value()));
    if (!stored.ok()) return sendError(w, stored.status());
    auto created = registry_.create(sr, ri.namespaceName, std::move(stored.value()), isDryRun(req),
                                    &storedText);
    if (!created.ok()) return sendError(w, created.status());
    noteWrite(r);
    return sendObject(req, w, 201, r, std::move(created.value()), warnings, storedText);
  }
  if (!updated.ok()) return sendError(w, updated.status());
  noteWrite(r);
  sendObject(req, w, 200, r, std::move(updated.value()), warnings, storedText);
}

namespace {

Result<DeleteOptions> parseDeleteOptions(const http::Request& req) {
  DeleteOptions opts;
  opts.dryRun = isDryRun(req);
  opts.propagationPolicy = req.param("propagationPolicy").value_or("");
  if (auto g = req.param("gracePeriodSeconds")) {
    try {
      opts.gracePeriodSeconds = std::stoll(*g);
    } catch (...) {
      return Status::BadRequest("gracePeriodSeconds must be an integer");
    }
  }
  if (!req.body.empty()) {
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      return Status::BadRequest("the DeleteOptions body is not a valid JSON object");
    }
    if (body.contains("gracePeriodSeconds") && body["gracePeriodSeconds"].is_number_integer()) {
      opts.gracePeriodSeconds = body["gracePeriodSeconds"].get<int64_t>();
    }
    if (body.contains("preconditions") && body["preconditions"].is_object()) {
      opts.preconditionUid = body["preconditions"].value("uid", "");
      opts.preconditionResourceVersion = body["preconditions"].value("resourceVersion", "");
    }
    if (body.contains("propagationPolicy") && body["propagationPolicy"].is_string()) {
      opts.propagationPolicy = body["propagationPolicy"].get<std::string>();
    } else if (body.contains("orphanDependents") && body["orphanDependents"] == true) {
      opts.propagationPolicy = "Orphan";
    }
    if (body.contains("dryRun") && body["dryRun"].is_array()) {
      for (const auto& d : body["dryRun"]) opts.dryRun = opts.dryRun || d == "All";
    }
  }
  if (!opts.propagationPolicy.empty() && opts.propagationPolicy != "Background" &&
      opts.propagationPolicy != "Foreground" && opts.propagationPolicy != "Orphan") {
    return Status::BadRequest("propagationPolicy must be Background, Foreground or Orphan, got \"" +
                              opts.propagationPolicy + "\"");
  }
  return opts;
}

}  // namespace

void ApiServer::serveDelete(const http::Request& req, http::ResponseWriter& w,
                            const RequestInfo& ri, const auth::UserInfo& user) {
  const api::ResourceInfo& r = *ri.info;
  auto opts = parseDeleteOptions(req);
  if (!opts.ok()) return sendError(w, opts.status());
  if (!options_.admissionPlugins.empty()) {
    auto current = registry_.get(registry_.storageInfo(r), ri.namespaceName, ri.name);
    if (!current.ok()) return sendError(w, current.status());
    Status admitted = runAdmission(user, ri, "DELETE", &*current, nullptr, opts->dryRun);
    if (!admitted.ok()) return sendError(w, admitted);
  }
  auto res = registry_.remove(registry_.storageInfo(r), ri.namespaceName, ri.name, *opts);
  if (!res.ok()) return sendError(w, res.status());
  noteWrite(r);
  sendObject(req, w, res->deleted ? 200 : 202, r, std::move(res->object));
}

void ApiServer::serveDeleteCollection(const http::Request& req, http::ResponseWriter& w,
                                      const RequestInfo& ri, const auth::UserInfo& user) {
  const api::ResourceInfo& r = *ri.info;
  const api::ResourceInfo& sr = registry_.storageInfo(r);
  auto opts = parseDeleteOptions(req);
  if (!opts.ok()) return sendError(w, opts.status());
  ListOptions lo;
  lo.labelSelector = req.param("labelSelector").value_or("");
  lo.fieldSelector = req.param("fieldSelector").value_or("");
  auto page = registry_.list(sr, ri.namespaceName, lo);
  if (!page.ok()) return sendError(w, page.status());
  json list = {{"kind", r.listKind},
               {"apiVersion", r.apiVersion()},
               {"metadata", {{"resourceVersion", std::to_string(page->revision)}}},
               {"items", json::array()}};
  for (const auto& obj : page->items) {
    std::string ns = valueAt(obj, "/metadata/namespace", std::string());
    RequestInfo itemInfo = ri;
    itemInfo.verb = "delete";
    itemInfo.namespaceName = ns;
    itemInfo.name = nameOf(obj);
    if (Status admitted = runAdmission(user, itemInfo, "DELETE", &obj, nullptr, opts->dryRun);
        !admitted.ok()) {
      return sendError(w, admitted);
    }
    auto res = registry_.remove(sr, ns, nameOf(obj), *opts);
    if (!res.ok()) {
      if (res.status().code() == 404) continue;
      return sendError(w, res.status());
    }
    auto out = toRequestVersion(r, std::move(res->object));
    if (out.ok()) list["items"].push_back(std::move(out.value()));
  }
  noteWrite(r);
  w.send(jsonResponse(200, list));
}

void ApiServer::serveNodeProxy(const http::Request& req, http::ResponseWriter& w,
                               const RequestInfo& ri) {
  // GET /api/v1/nodes/{name}/proxy/{path}: the agent's {path} (metrics, healthz, stats/summary),
  // as Prometheus scrapes kubelets through the API server.
  const std::string marker = "/nodes/" + ri.name + "/proxy";
  const size_t at = req.path.find(marker);
  std::string target = at == std::string::npos ? "/" : req.path.substr(at + marker.size());
  if (target.empty()) target = "/";
  if (size_t q = req.target.find('?'); q != std::string::npos) target += req.target.substr(q);
  auto endpoint = nodeAgentEndpoint(registry_, ri.name);
  if (!endpoint.ok()) return sendError(w, endpoint.status());
  auto answer = requestAgent(*endpoint, "GET", target, options_.nodeProxy);
  if (!answer.ok()) {
    return sendError(w, Status::Unavailable("error trying to reach node " + ri.name + ": " +
                                            answer.status().message()));
  }
  http::Response out;
  out.status = answer->status;
  out.body = std::move(answer->body);
  for (const auto& [name, value] : answer->headers) {
    if (strcasecmp(name.c_str(), "Content-Type") == 0) out.headers.emplace_back(name, value);
  }
  w.send(std::move(out));
}

void ApiServer::serveScale(const http::Request& req, http::ResponseWriter& w,
                           const RequestInfo& ri) {
  const api::ResourceInfo& r = *ri.info;
  // Custom resources name their replica fields in the CRD (scale subresource paths).
  const api::CustomResource* custom = r.custom && r.custom->hasScale() ? r.custom.get() : nullptr;
  const json::json_pointer specReplicas(custom ? custom->specReplicasPointer() : "/spec/replicas");
  const json::json_pointer statusReplicas(custom ? custom->statusReplicasPointer()
                                                 : "/status/replicas");
  auto toScale = [&](const json& obj) {
    std::string selector;
    if (custom) {
      selector = custom->labelSelector(obj);
    } else if (obj.contains("spec") && obj["spec"].contains("selector")) {
      auto sel = api::LabelSelector::fromJson(obj["spec"]["selector"]);
      if (sel.ok()) selector = sel->toString();
    }
    const json& meta = obj["metadata"];
    json scaleMeta = json::object();
    for (const char* f : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
      if (meta.contains(f)) scaleMeta[f] = meta[f];
    }
    return json{
        {"kind", "Scale"},
        {"apiVersion", "autoscaling/v1"},
        {"metadata", scaleMeta},
        {"spec", {{"replicas", obj.value(specReplicas, int64_t{0})}}},
        {"status", {{"replicas", obj.value(statusReplicas, int64_t{0})}, {"selector", selector}}}};
  };
  if (ri.verb == "get") {
    auto obj = registry_.get(r, ri.namespaceName, ri.name);
    if (!obj.ok()) return sendError(w, obj.status());
    return w.send(jsonResponse(200, toScale(*obj)));
  }
  if (ri.verb != "update" && ri.verb != "patch") {
    return sendError(w, Status::MethodNotAllowed("the scale subresource allows get, update and "
                                                 "patch"));
  }
  auto mutate = [&](json current) -> Result<json> {
    json scale = toScale(current);
    json desired;
    if (ri.verb == "update") {
      desired = json::parse(req.body, nullptr, false);
      if (desired.is_discarded() || !desired.is_object()) {
        return Status::BadRequest("the Scale body is not a valid JSON object");
      }
    } else {
      auto patched = applyPatchBody(req.header("Content-Type"), scale, req.body, "Scale");
      if (!patched.ok()) return patched.status();
      desired = std::move(patched.value());
    }
    const json replicas = valueAt(desired, "/spec/replicas", json());
    if (!replicas.is_number_integer()) {
      return Status::Invalid(
          "Scale", ri.name,
          {{"FieldValueRequired", "spec.replicas", "Required value: an integer is required"}});
    }
    if (replicas.get<int64_t>() < 0) {
      return Status::Invalid(
          "Scale", ri.name,
          {{"FieldValueInvalid", "spec.replicas",
            "Invalid value: " + replicas.dump() + ": must be greater than or equal to 0"}});
    }
    std::string rv = valueAt(desired, "/metadata/resourceVersion", std::string());
    if (!rv.empty()) current["metadata"]["resourceVersion"] = rv;
    current[specReplicas] = replicas;
    return current;
  };
  auto updated =
      registry_.guaranteedUpdate(r, ri.namespaceName, ri.name, mutate, "", isDryRun(req));
  if (!updated.ok()) return sendError(w, updated.status());
  w.send(jsonResponse(200, toScale(*updated)));
}

void ApiServer::serveBinding(const http::Request& req, http::ResponseWriter& w,
                             const RequestInfo& ri, const auth::UserInfo& user) {
  json binding = json::parse(req.body, nullptr, false);
  if (binding.is_discarded() || !binding.is_object()) {
    return sendError(w, Status::BadRequest("the Binding body is not a valid JSON object"));
  }
  if (Status admitted = runAdmission(user, ri, "CREATE", nullptr, &binding, isDryRun(req));
      !admitted.ok()) {
    return sendError(w, admitted);
  }
  std::string node = valueAt(binding, "/target/name", std::string());
  if (node.empty()) {
    return sendError(w, Status::Invalid("Binding", ri.name,
                                        {{"FieldValueRequired", "target.name", "Required value"}}));
  }
  auto mutate = [&](json pod) -> Result<json> {
    std::string current = valueAt(pod, "/spec/nodeName", std::string());
    if (!current.empty()) {
      return Status::ConflictMessage("Operation cannot be fulfilled on pods/binding \"" + ri.name +
                                     "\": pod " + ri.name + " is already assigned to node \"" +
                                     current + "\"");
    }
    if (pod["metadata"].contains("deletionTimestamp")) {
      return Status::ConflictMessage("pod " + ri.name + " is being deleted, cannot be assigned");
    }
    pod["spec"]["nodeName"] = node;
    // The PodScheduled condition goes in the same write, as the binding REST handler upstream
    // sets it (one store write and one watch event per binding).
    json conds = json::array();
    for (const auto& c : valueAt(pod, "/status/conditions", json::array())) {
      if (c.value("type", "") != "PodScheduled") conds.push_back(c);
    }
    conds.push_back({{"type", "PodScheduled"},
                     {"status", "True"},
                     {"lastProbeTime", nullptr},
                     {"lastTransitionTime", formatRfc3339(Clock::now())}});
    pod["status"]["conditions"] = std::move(conds);
    return pod;
  };
  auto updated = registry_.guaranteedUpdate(*ri.info, ri.namespaceName, ri.name, mutate, "binding",
                                            isDryRun(req));
  if (!updated.ok()) return sendError(w, updated.status());
  w.send(jsonResponse(201, Status::Ok().toJson()));
}

void ApiServer::serveEviction(const http::Request& req, http::ResponseWriter& w,
                              const RequestInfo& ri, const auth::UserInfo& user) {
  json eviction = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
  if (eviction.is_discarded() || !eviction.is_object()) {
    return sendError(w, Status::BadRequest("the Eviction body is not a valid JSON object"));
  }
  if (Status admitted = runAdmission(user, ri, "CREATE", nullptr, &eviction, isDryRun(req));
      !admitted.ok()) {
    return sendError(w, admitted);
  }
  DeleteOptions opts;
  if (eviction.contains("deleteOptions") && eviction["deleteOptions"].is_object()) {
    const json& d = eviction["deleteOptions"];
    if (d.contains("gracePeriodSeconds") && d["gracePeriodSeconds"].is_number_integer()) {
      opts.gracePeriodSeconds = d["gracePeriodSeconds"].get<int64_t>();
    }
  }
  opts.dryRun = isDryRun(req);
  auto res = registry_.remove(*ri.info, ri.namespaceName, ri.name, opts);
  if (!res.ok()) return sendError(w, res.status());
  w.send(jsonResponse(201, Status::Ok().toJson()));
}

}  // namespace minik8s::apiserver
