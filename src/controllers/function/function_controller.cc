#include "controllers/function/function_controller.h"

#include <fmt/format.h>

#include <cstring>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::stringAt;
using api::uidOf;
namespace sl = serverless;

namespace {

using client::resources::kDeployments;
using client::resources::kServices;

Status okOrGone(const Result<json>& r) {
  return r.ok() || r.status().code() == 404 ? Status() : r.status();
}

// Whether `obj` is controlled by a Function named `name`; `uid` set: by that very one.
bool ownedByFunction(const json& obj, const std::string& name, const std::string& uid = "") {
  auto ref = controllerRef(obj);
  return ref && ref->value("kind", "") == "Function" &&
         ref->value("apiVersion", "") == sl::kApiVersion && ref->value("name", "") == name &&
         (uid.empty() || ref->value("uid", "") == uid);
}

// The runtime container's status of a pod, null when it has none yet.
json functionContainerStatus(const json& pod) {
  for (const auto& c : valueAt(pod, "/status/containerStatuses", json::array())) {
    if (c.value("name", "") == "function") return c;
  }
  return nullptr;
}

}  // namespace

FunctionController::FunctionController(client::RestClient& rest, client::Informer& functions,
                                       client::Informer& deployments, client::Informer& services,
                                       client::Informer& pods, FunctionControllerOptions options)
    : rest_(rest),
      functions_(functions),
      deployments_(deployments),
      services_(services),
      pods_(pods),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "function") {
  auto enqueue = [this](const json& fn) { queue_.add(client::objectKey(fn)); };
  functions_.addHandlers(
      {enqueue, [enqueue](const json&, const json& fn) { enqueue(fn); }, enqueue});
  // Deployments, Services and pods of a Function carry its name in a label.
  auto enqueueOwner = [this](const json& obj) {
    std::string owner = api::labelValue(obj, sl::kFunctionLabel);
    if (!owner.empty()) queue_.add(namespaceOf(obj) + "/" + owner);
  };
  auto handlers = client::EventHandlers{
      enqueueOwner, [enqueueOwner](const json&, const json& o) { enqueueOwner(o); }, enqueueOwner};
  deployments_.addHandlers(handlers);
  services_.addHandlers(handlers);
  pods_.addHandlers({enqueueOwner, [enqueueOwner](const json&, const json& p) { enqueueOwner(p); },
                     [this, enqueueOwner](const json& pod) {
                       {
                         std::lock_guard lock(mu_);
                         importErrors_.erase(uidOf(pod));
                       }
                       enqueueOwner(pod);
                     }});
}

FunctionController::~FunctionController() { stop(); }
void FunctionController::start() { workers_.start(options_.workers); }
void FunctionController::stop() { workers_.stop(); }

void FunctionController::recordEvent(const json& fn, const std::string& type,
                                     const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  json involved = fn;
  involved["kind"] = "Function";
  involved["apiVersion"] = sl::kApiVersion;
  options_.events->record(involved, type, reason, message);
}

Status FunctionController::syncDeleted(const std::string& ns, const std::string& name) {
  if (auto dep = deployments_.get(ns + "/" + sl::deploymentName(name));
      dep && ownedByFunction(*dep, name)) {
    LOG_INFO("function controller: Function {}/{} is gone: deleting Deployment {}", ns, name,
             nameOf(*dep));
    Status s = okOrGone(
        rest_.remove(kDeployments, ns, nameOf(*dep), {{"propagationPolicy", "Background"}}));
    if (!s.ok()) return s;
  }
  if (auto svc = services_.get(ns + "/" + sl::serviceName(name));
      svc && ownedByFunction(*svc, name)) {
    LOG_INFO("function controller: Function {}/{} is gone: deleting Service {}", ns, name,
             nameOf(*svc));
    return okOrGone(rest_.remove(kServices, ns, nameOf(*svc)));
  }
  return {};
}

std::string FunctionController::importError(const std::string& ns, const std::string& name,
                                            bool* recheck) {
  const auto now = Clock::now();
  for (const auto& cached : pods_.byIndexShared("namespace", ns)) {
    const json& pod = *cached;
    if (api::labelValue(pod, sl::kFunctionLabel) != name || isTerminating(pod)) continue;
    const json c = functionContainerStatus(pod);
    if (!c.is_object() || c.value("ready", false)) continue;
    auto started = parseRfc3339(stringAt(c, "/state/running/startedAt"));
    if (!started) continue;
    if (now - *started < options_.importCheckAfter) {
      *recheck = true;
      continue;
    }
    const std::string uid = uidOf(pod);
    {
      std::lock_guard lock(mu_);
      auto it = importErrors_.find(uid);
      if (it != importErrors_.end()) {
        if (!it->second.empty()) return it->second;
        continue;
      }
    }
    // Running for a while and not ready: the runtime says why in its log when the handler
    // does not import.
    auto log = rest_.requestText("GET", "/api/v1/namespaces/" + ns + "/pods/" + nameOf(pod) +
                                            "/log?container=function&tailLines=50");
    if (!log.ok()) {
      *recheck = true;
      continue;
    }
    std::string found;
    const size_t at = log->find(sl::kImportFailedMarker);
    if (at != std::string::npos) {
      size_t end = log->find('\n', at);
      found = log->substr(
          at + std::strlen("minik8s-function: "),
          (end == std::string::npos ? log->size() : end) - at - std::strlen("minik8s-function: "));
    }
    std::lock_guard lock(mu_);
    if (!found.empty()) {
      importErrors_[uid] = found;
      return found;
    }
    *recheck = true;  // slow to start rather than broken: look again later
  }
  return "";
}

Status FunctionController::sync(const std::string& key) {
  const auto [ns, name] = client::splitObjectKey(key);
  auto cached = functions_.get(key);
  if (!cached || isTerminating(*cached)) return syncDeleted(ns, name);
  const json& fn = *cached;

  sl::FunctionObservation observed;
  observed.image = options_.runtimeImage;
  auto dep = deployments_.get(ns + "/" + sl::deploymentName(name));
  if (dep && !ownedByFunction(*dep, name, uidOf(fn))) {
    if (ownedByFunction(*dep, name)) {
      // An earlier Function of the same name left it: replace it.
      Status s = okOrGone(
          rest_.remove(kDeployments, ns, nameOf(*dep), {{"propagationPolicy", "Background"}}));
      if (!s.ok()) return s;
      queue_.addAfter(key, std::chrono::seconds(1));
      return {};
    }
    observed.foreignDeployment = true;
    dep.reset();
  }

  auto spec = sl::parseFunctionSpec(fn);
  if (!spec.ok()) {
    observed.specError = spec.status();
  } else {
    auto cm = rest_.get(client::resources::kConfigMaps, ns, spec->codeConfigMap);
    if (cm.ok()) {
      observed.codeRevision = stringAt(*cm, "/metadata/resourceVersion");
    } else if (cm.status().code() == 404) {
      observed.codeMissing = true;
      queue_.addAfter(key, std::chrono::seconds(5));
    } else {
      return cm.status();
    }
  }

  if (spec.ok() && !observed.codeMissing && !observed.foreignDeployment) {
    json want = sl::functionDeployment(fn, *spec, options_.runtimeImage, observed.codeRevision,
                                       spec->scale.minScale);
    const std::string wantHash =
        stringAt(want, json::json_pointer("/metadata/annotations") / sl::kTemplateHashAnnotation);
    if (!dep) {
      auto created = rest_.create(kDeployments, ns, want);
      if (!created.ok() && created.status().code() != 409) return created.status();
      if (created.ok()) {
        dep = *created;
        recordEvent(fn, "Normal", "DeploymentCreated",
                    fmt::format("created Deployment {} with {} instance(s)", nameOf(want),
                                spec->scale.minScale));
      }
    } else if (api::annotationValue(*dep, sl::kTemplateHashAnnotation) != wantHash) {
      // A new revision: the template changes, the replicas (the autoscaler's) stay.
      json updated = *dep;
      updated["metadata"]["annotations"][sl::kTemplateHashAnnotation] = wantHash;
      updated["spec"]["template"] = want["spec"]["template"];
      auto r = rest_.update(kDeployments, updated);
      if (!r.ok()) return r.status();
      dep = *r;
      recordEvent(fn, "Normal", "RevisionUpdated",
                  "rolling out code revision " + observed.codeRevision + " (handler " +
                      spec->handler + ")");
    }
    if (!services_.get(ns + "/" + sl::serviceName(name))) {
      auto created = rest_.create(kServices, ns, sl::functionService(fn));
      if (!created.ok() && created.status().code() != 409) return created.status();
    }
  }
  observed.deployment = dep;
  if (dep) {
    bool recheck = false;
    observed.importError = importError(ns, name, &recheck);
    if (recheck) queue_.addAfter(key, std::chrono::seconds(2));
  }

  json status = sl::functionStatus(fn, observed, formatRfc3339(Clock::now()));
  const json current = fn.value("status", json::object());
  if (current == status) return {};
  json patch = status;
  for (const auto& [field, value] : current.items()) {
    if (!status.contains(field)) patch[field] = nullptr;  // a merge patch removes it
  }
  const json before = valueAt(fn, "/status/conditions/0", json::object());
  const json& after = status["conditions"][0];
  if (before.value("reason", "") != after.value("reason", "") &&
      (after["reason"] == "ImportFailed" || after["reason"] == "CodeMissing" ||
       after["reason"] == "InvalidSpec")) {
    recordEvent(fn, "Warning", after["reason"], after.value("message", ""));
  }
  return okOrGone(rest_.patch(sl::kFunctions, ns, name, {{"status", patch}}, "merge", "status"));
}

}  // namespace minik8s::controllers
