#include "apiserver/admission/webhook_admission.h"

#include <algorithm>

#include "api/patch.h"
#include "api/selector.h"
#include "common/base64.h"
#include "common/http_client.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/random.h"

namespace minik8s::apiserver::admission {
namespace {

constexpr const char* kGroup = "admissionregistration.k8s.io";

bool listHas(const json& list, const std::string& value) {
  if (!list.is_array()) return false;
  for (const auto& v : list) {
    if (v == "*" || v == value) return true;
  }
  return false;
}

// "pods", "pods/status", "*", "*/*", "*/status", "pods/*" against a resource and subresource.
bool resourceMatches(const json& resources, const std::string& resource,
                     const std::string& subresource) {
  if (!resources.is_array()) return false;
  for (const auto& entry : resources) {
    if (!entry.is_string()) continue;
    const std::string e = entry.get<std::string>();
    const size_t slash = e.find('/');
    const std::string res = e.substr(0, slash);
    const std::string sub = slash == std::string::npos ? "" : e.substr(slash + 1);
    if (res != "*" && res != resource) continue;
    if (slash == std::string::npos) {
      if (subresource.empty()) return true;
      continue;
    }
    if (sub == "*" || sub == subresource) return true;
  }
  return false;
}

bool ruleMatches(const json& rule, const auth::AdmissionRequest& req) {
  const RequestInfo& ri = req.request;
  if (!listHas(rule.value("operations", json::array()), req.operation)) return false;
  if (!listHas(rule.value("apiGroups", json::array()), ri.group)) return false;
  if (!listHas(rule.value("apiVersions", json::array()), ri.version)) return false;
  if (!resourceMatches(rule.value("resources", json::array()), ri.resource, ri.subresource)) {
    return false;
  }
  const std::string scope = rule.value("scope", "*");
  const bool namespaced = ri.info && ri.info->namespaced;
  if (scope == "Cluster" && namespaced) return false;
  if (scope == "Namespaced" && !namespaced) return false;
  return true;
}

json labelsOf(const json* obj) {
  if (!obj || !obj->is_object()) return json();
  return valueAt(*obj, "/metadata/labels", json());
}

std::string callFailure(const std::string& name, const std::string& why) {
  return "failed calling webhook \"" + name + "\": " + why;
}

// kube-apiserver's wording of a refusal (webhook errors' ToStatusErr).
Status denied(const std::string& name, const json& status) {
  std::string message = "admission webhook \"" + name + "\" denied the request";
  const std::string m = status.value("message", "");
  const std::string reason = status.value("reason", "");
  if (!m.empty()) {
    message += ": " + m;
  } else if (!reason.empty()) {
    message += ": " + reason;
  } else {
    message += " without explanation";
  }
  int code = status.value("code", 400);
  if (code < 400) code = 400;
  return Status(code, reason, message);
}

}  // namespace

WebhookAdmission::WebhookAdmission(Registry& registry, Kind kind,
                                   std::shared_ptr<AdmissionLister> lister)
    : ListerBackedPlugin(registry, std::move(lister)), registry_(registry), kind_(kind) {}

const char* WebhookAdmission::resource() const {
  return kind_ == Kind::kMutating ? "mutatingwebhookconfigurations"
                                  : "validatingwebhookconfigurations";
}

std::vector<AdmissionLister::Object> WebhookAdmission::configurations() {
  const auto* info = registry_.scheme().byResource(kGroup, "v1", resource());
  if (!info) return {};
  // Sorted by key, which for cluster-scoped objects is by name.
  auto listed = lister_->list(*info, "");
  if (!listed.ok()) {
    LOG_WARN("listing {}: {}", resource(), listed.status().toString());
    return {};
  }
  return std::move(listed.value());
}

bool WebhookAdmission::matches(const json& webhook, const auth::AdmissionRequest& req) {
  bool anyRule = false;
  for (const auto& rule : webhook.value("rules", json::array())) {
    if (ruleMatches(rule, req)) {
      anyRule = true;
      break;
    }
  }
  if (!anyRule) return false;
  // objectSelector: the new or the old object's labels.
  if (webhook.contains("objectSelector")) {
    auto sel = api::LabelSelector::fromJson(webhook["objectSelector"]);
    // A null object (the old one of a create, the new one of a delete) never matches.
    auto matchesObject = [&](const json* obj) {
      return obj && obj->is_object() && sel->matches(labelsOf(obj));
    };
    if (sel.ok() && !sel->empty() && !matchesObject(req.newObject) &&
        !matchesObject(req.oldObject)) {
      return false;
    }
  }
  // namespaceSelector: the namespace of a namespaced object, or a Namespace itself.
  if (webhook.contains("namespaceSelector")) {
    auto sel = api::LabelSelector::fromJson(webhook["namespaceSelector"]);
    if (sel.ok() && !sel->empty()) {
      const RequestInfo& ri = req.request;
      json labels;
      if (ri.group.empty() && ri.resource == "namespaces") {
        labels = req.newObject ? labelsOf(req.newObject) : labelsOf(req.oldObject);
      } else if (ri.info && ri.info->namespaced) {
        const auto* nsInfo = registry_.scheme().byResource("", "v1", "namespaces");
        auto ns = nsInfo
                      ? lister_->get(*nsInfo, "", ri.namespaceName)
                      : Result<AdmissionLister::Object>(Status::NotFoundMessage("no namespaces"));
        if (ns.ok()) labels = labelsOf(ns->get());
      } else {
        return true;  // cluster-scoped objects are not filtered by namespace
      }
      if (!sel->matches(labels)) return false;
    }
  }
  return true;
}

Status WebhookAdmission::callWebhook(const json& webhook, auth::AdmissionRequest& req) {
  const std::string name = webhook.value("name", "");
  const bool failOpen = webhook.value("failurePolicy", "Fail") == "Ignore";
  auto failure = [&](const std::string& why) -> Status {
    if (failOpen) {
      LOG_WARN("{} (failurePolicy Ignore)", callFailure(name, why));
      return Status::Ok();
    }
    return Status::Internal(callFailure(name, why));
  };
  const json config = webhook.value("clientConfig", json::object());
  std::string url = config.value("url", "");
  if (url.empty()) {
    return failure(
        "clientConfig.service is not reachable from this API server; give the "
        "webhook a clientConfig.url");
  }
  const size_t schemeEnd = url.find("://");
  const size_t pathStart =
      schemeEnd == std::string::npos ? std::string::npos : url.find('/', schemeEnd + 3);
  const std::string base = pathStart == std::string::npos ? url : url.substr(0, pathStart);
  const std::string path = pathStart == std::string::npos ? "/" : url.substr(pathStart);

  const RequestInfo& ri = req.request;
  const std::string uid = newUid();
  json request = {
      {"uid", uid},
      {"kind",
       {{"group", ri.info ? ri.info->group : ri.group},
        {"version", ri.info ? ri.info->version : ri.version},
        {"kind", ri.info ? ri.info->kind : ""}}},
      {"resource", {{"group", ri.group}, {"version", ri.version}, {"resource", ri.resource}}},
      {"operation", req.operation},
      {"userInfo", req.user.toJson()},
      {"dryRun", req.dryRun}};
  // Copies first: inserting a member into request may move the others (common/flat_object.h).
  json requestKind = request["kind"], requestResource = request["resource"];
  request["requestKind"] = std::move(requestKind);
  request["requestResource"] = std::move(requestResource);
  if (!ri.subresource.empty()) {
    request["subResource"] = ri.subresource;
    request["requestSubResource"] = ri.subresource;
  }
  std::string objName = ri.name;
  if (objName.empty() && req.newObject) {
    objName = valueAt(*req.newObject, "/metadata/name", std::string());
  }
  if (!objName.empty()) request["name"] = objName;
  if (!ri.namespaceName.empty()) request["namespace"] = ri.namespaceName;
  request["object"] = req.newObject ? *req.newObject : json();
  request["oldObject"] = req.oldObject ? *req.oldObject : json();
  const std::string optionsKind = req.operation == "CREATE"   ? "CreateOptions"
                                  : req.operation == "UPDATE" ? "UpdateOptions"
                                                              : "DeleteOptions";
  request["options"] = {{"apiVersion", "meta.k8s.io/v1"}, {"kind", optionsKind}};
  json review = {
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};

  http::TlsClientConfig tls;
  if (const std::string bundle = config.value("caBundle", ""); !bundle.empty()) {
    auto pem = base64::decode(bundle);
    if (!pem.ok()) return failure("clientConfig.caBundle is not valid base64");
    tls.caPem = *pem;
  }
  const auto timeout = std::chrono::seconds(webhook.value("timeoutSeconds", 10));
  http::ClientTimeouts timeouts;
  timeouts.connect = timeout;
  timeouts.request = timeout;
  http::Client client(base, tls, timeouts);
  auto response =
      client.request("POST", path, review.dump(),
                     {{"Content-Type", "application/json"}, {"Accept", "application/json"}});
  if (!response.ok()) {
    return failure("failed to call webhook: Post \"" + url + "\": " + response.status().message());
  }
  if (response->status != 200) {
    return failure("received invalid webhook response: HTTP " + std::to_string(response->status));
  }
  json answer = json::parse(response->body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object() || !answer.contains("response") ||
      !answer["response"].is_object()) {
    return failure(
        "received invalid webhook response: expected an AdmissionReview with a "
        "response");
  }
  const json& r = answer["response"];
  if (r.value("uid", "") != uid) {
    return failure("received invalid webhook response: expected response.uid=\"" + uid +
                   "\", got \"" + r.value("uid", "") + "\"");
  }
  if (!r.value("allowed", false)) return denied(name, r.value("status", json::object()));
  if (r.contains("patch") && !r["patch"].is_null()) {
    if (kind_ != Kind::kMutating) {
      return failure("validating webhooks may not return a patch");
    }
    if (r.value("patchType", "JSONPatch") != "JSONPatch") {
      return failure("unsupported patchType \"" + r.value("patchType", "") + "\"");
    }
    auto text = base64::decode(r["patch"].is_string() ? r["patch"].get<std::string>() : "");
    json patch = text.ok() ? json::parse(*text, nullptr, false) : json();
    if (!text.ok() || patch.is_discarded()) {
      return failure("received invalid webhook response: the patch is not base64 JSON");
    }
    if (req.newObject) {
      auto patched = api::applyJsonPatch(*req.newObject, patch);
      if (!patched.ok()) {
        return Status::Internal(
            callFailure(name, "the patch does not apply: " + patched.status().message()));
      }
      *req.newObject = std::move(patched.value());
    }
  }
  return Status::Ok();
}

Status WebhookAdmission::admit(auth::AdmissionRequest& request) {
  const RequestInfo& ri = request.request;
  // Never the webhook configurations themselves: a broken webhook must stay removable.
  if (ri.group == kGroup) return Status::Ok();
  for (const auto& config : configurations()) {
    for (const auto& webhook : config->value("webhooks", json::array())) {
      if (!webhook.is_object() || !matches(webhook, request)) continue;
      const std::string effects = webhook.value("sideEffects", "None");
      if (request.dryRun && effects != "None" && effects != "NoneOnDryRun") {
        return Status::BadRequest("admission webhook \"" + webhook.value("name", "") +
                                  "\" has sideEffects " + effects +
                                  " and cannot be called on a dry run");
      }
      if (Status s = callWebhook(webhook, request); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace minik8s::apiserver::admission
