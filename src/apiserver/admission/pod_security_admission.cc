#include "apiserver/admission/pod_security_admission.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <set>

#include "api/object_meta.h"
#include "common/logging.h"
#include "common/metrics.h"
#include "common/random.h"

namespace minik8s::apiserver::admission {

using podsecurity::Level;
using podsecurity::LevelVersion;
using podsecurity::Policy;

namespace {

using api::member;
using api::stringMember;

// Kubernetes' limits on the pods a namespace label change is checked against.
constexpr size_t kMaxPodsToCheck = 3000;
constexpr auto kPodCheckTimeout = std::chrono::seconds(1);

// Subresources of pods that never change what runs (Kubernetes ignores the same ones).
bool ignoredPodSubresource(const std::string& sub) {
  static const std::set<std::string> kIgnored = {"exec", "attach",      "binding", "eviction",
                                                 "log",  "portforward", "proxy",   "status"};
  return kIgnored.count(sub) > 0;
}

// Where a workload keeps its pod template; nullptr for resources without one.
const json* podTemplateOf(const std::string& group, const std::string& resource, const json& obj) {
  auto at = [&](const json::json_pointer& ptr) -> const json* {
    return obj.contains(ptr) ? &obj.at(ptr) : nullptr;
  };
  if (group.empty() && resource == "podtemplates") return at("/template"_json_pointer);
  if (group.empty() && resource == "replicationcontrollers")
    return at("/spec/template"_json_pointer);
  if (group == "apps" && (resource == "replicasets" || resource == "deployments" ||
                          resource == "statefulsets" || resource == "daemonsets")) {
    return at("/spec/template"_json_pointer);
  }
  if (group == "batch" && resource == "jobs") return at("/spec/template"_json_pointer);
  if (group == "batch" && resource == "cronjobs") {
    return at("/spec/jobTemplate/spec/template"_json_pointer);
  }
  return nullptr;
}

bool hasPodTemplate(const std::string& group, const std::string& resource) {
  static const std::set<std::pair<std::string, std::string>> kResources = {
      {"", "podtemplates"},    {"", "replicationcontrollers"}, {"apps", "replicasets"},
      {"apps", "deployments"}, {"apps", "statefulsets"},       {"apps", "daemonsets"},
      {"batch", "jobs"},       {"batch", "cronjobs"}};
  return kResources.count({group, resource}) > 0;
}

// A pod update matters only when it can change what runs: another image, or containers added
// (ephemeral containers through their subresource). Label, annotation, owner and finalizer
// changes by controllers pass without a second look, as in Kubernetes.
bool isSignificantPodUpdate(const json& pod, const json& oldPod) {
  const json& spec = member(pod, "spec");
  const json& oldSpec = member(oldPod, "spec");
  auto list = [](const json& s, const char* key) {
    const json& v = member(s, key);
    return v.is_array() ? v : json::array();
  };
  for (const char* key : {"containers", "initContainers"}) {
    json now = list(spec, key), before = list(oldSpec, key);
    if (now.size() != before.size()) return true;
    for (size_t i = 0; i < now.size(); ++i) {
      if (stringMember(now[i], "image") != stringMember(before[i], "image")) return true;
    }
  }
  json before = list(oldSpec, "ephemeralContainers");
  for (const auto& c : list(spec, "ephemeralContainers")) {
    auto old = std::find_if(before.begin(), before.end(), [&](const json& o) {
      return stringMember(o, "name") == stringMember(c, "name");
    });
    if (old == before.end()) return true;
    if (stringMember(c, "image") != stringMember(*old, "image")) return true;
  }
  return false;
}

bool sameErrors(const std::vector<Cause>& a, const std::vector<Cause>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Cause& x, const Cause& y) {
    return x.field == y.field && x.message == y.message;
  });
}

std::string errorsText(const std::vector<Cause>& errors) {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : ", ") + e.field + ": " + e.message;
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return !s.empty() && std::find(list.begin(), list.end(), s) != list.end();
}

Result<std::vector<std::string>> stringList(const json& config, const char* key) {
  const json& v = member(member(config, "exemptions"), key);
  if (v.is_null()) return std::vector<std::string>();
  if (!v.is_array())
    return Status::BadRequest(std::string("exemptions.") + key + " must be a list");
  std::vector<std::string> out;
  for (const auto& item : v) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return Status::BadRequest(std::string("exemptions.") + key +
                                " must be a list of non-empty strings");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

// Kubernetes' pod_security_* metrics, on the server's /metrics.
struct PodSecurityMetrics {
  metrics::CounterVec& evaluations;
  metrics::CounterVec& exemptions;
  metrics::CounterVec& errors;
};

PodSecurityMetrics& podSecurityMetrics() {
  static PodSecurityMetrics m = [] {
    metrics::Registry& r = metrics::defaultRegistry();
    return PodSecurityMetrics{
        r.counterVec("pod_security_evaluations_total",
                     "Number of policy evaluations that occurred, not counting ignored or exempt "
                     "requests.",
                     {"decision", "policy_level", "policy_version", "mode", "request_operation",
                      "resource", "subresource"}),
        r.counterVec("pod_security_exemptions_total",
                     "Number of exempt requests, not counting ignored or out of scope requests.",
                     {"request_operation", "resource", "subresource"}),
        r.counterVec("pod_security_errors_total",
                     "Number of errors preventing normal evaluation. Non-fatal errors may result "
                     "in the latest restricted profile being used for evaluation.",
                     {"fatal", "request_operation", "resource", "subresource"}),
    };
  }();
  return m;
}

std::string operationLabel(const auth::AdmissionRequest& r) {
  std::string op = r.operation;
  std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return std::tolower(c); });
  return op;
}

std::string resourceLabel(const auth::AdmissionRequest& r) {
  if (r.request.group.empty() && r.request.resource == "pods") return "pod";
  if (r.request.group.empty() && r.request.resource == "namespaces") return "namespace";
  return "controller";
}

void recordEvaluation(const auth::AdmissionRequest& r, bool allowed, const LevelVersion& lv,
                      const char* mode) {
  std::string version = "latest";
  if (!lv.version.latest && lv.level != Level::kPrivileged) {
    version = lv.version.minor <= podsecurity::kMaxPolicyMinor ? lv.version.toString() : "future";
  }
  podSecurityMetrics()
      .evaluations
      .with({allowed ? "allow" : "deny", podsecurity::levelName(lv.level), version, mode,
             operationLabel(r), resourceLabel(r), r.request.subresource})
      .inc();
}

void recordExemption(const auth::AdmissionRequest& r) {
  podSecurityMetrics()
      .exemptions.with({operationLabel(r), resourceLabel(r), r.request.subresource})
      .inc();
}

void recordError(const auth::AdmissionRequest& r, bool fatal) {
  podSecurityMetrics()
      .errors
      .with({fatal ? "true" : "false", operationLabel(r), resourceLabel(r), r.request.subresource})
      .inc();
}

}  // namespace

Result<PodSecurityConfiguration> PodSecurityConfiguration::fromJson(const json& config) {
  PodSecurityConfiguration out;
  if (config.is_null()) return out;
  if (!config.is_object()) return Status::BadRequest("PodSecurityConfiguration must be an object");
  const json& defaults = member(config, "defaults");
  struct Mode {
    podsecurity::LevelVersion& lv;
    const char* level;
    const char* version;
  };
  for (const Mode& m : {Mode{out.defaults.enforce, "enforce", "enforce-version"},
                        Mode{out.defaults.audit, "audit", "audit-version"},
                        Mode{out.defaults.warn, "warn", "warn-version"}}) {
    if (const std::string v = stringMember(defaults, m.level); !v.empty()) {
      auto level = podsecurity::parseLevel(v);
      if (!level) {
        return Status::BadRequest(std::string("defaults.") + m.level + ": Invalid value: \"" + v +
                                  "\": must be one of privileged, baseline, restricted");
      }
      m.lv.level = *level;
    }
    if (const std::string v = stringMember(defaults, m.version); !v.empty()) {
      auto version = podsecurity::parseVersion(v);
      if (!version) {
        return Status::BadRequest(std::string("defaults.") + m.version + ": Invalid value: \"" + v +
                                  "\": must be \"latest\" or \"v1.x\"");
      }
      m.lv.version = *version;
    }
  }
  for (auto [list, key] : {std::pair{&out.exemptUsernames, "usernames"},
                           std::pair{&out.exemptNamespaces, "namespaces"},
                           std::pair{&out.exemptRuntimeClasses, "runtimeClasses"}}) {
    auto items = stringList(config, key);
    if (!items.ok()) return items.status();
    *list = std::move(items.value());
  }
  return out;
}

bool PodSecurity::exempt(const auth::AdmissionRequest& request, const std::string& ns) const {
  return contains(config_.exemptNamespaces, ns) ||
         contains(config_.exemptUsernames, request.user.name);
}

std::string PodSecurity::exemptNamespaceWarning(const std::string& ns, const Policy& policy,
                                                const json& labels) const {
  if (policy.fullyPrivileged() || policy.equivalent(config_.defaults)) return "";
  auto has = [&](const char* key) { return labels.is_object() && labels.contains(key); };
  std::string modes;
  auto add = [&](const char* name, const LevelVersion& lv, const char* levelKey,
                 const char* versionKey) {
    if (lv.level == Level::kPrivileged || (!has(levelKey) && !has(versionKey))) return;
    modes += (modes.empty() ? "" : ", ") + std::string(name) + "=" + lv.toString();
  };
  add("enforce", policy.enforce, podsecurity::kEnforceLevelLabel,
      podsecurity::kEnforceVersionLabel);
  add("audit", policy.audit, podsecurity::kAuditLevelLabel, podsecurity::kAuditVersionLabel);
  add("warn", policy.warn, podsecurity::kWarnLevelLabel, podsecurity::kWarnVersionLabel);
  return "namespace \"" + ns + "\" is exempt from Pod Security, and the policy (" + modes +
         ") will be ignored";
}

Status PodSecurity::admit(auth::AdmissionRequest& request) {
  if (request.operation != "CREATE" && request.operation != "UPDATE") return Status::Ok();
  if (request.newObject == nullptr) return Status::Ok();
  const RequestInfo& ri = request.request;
  if (ri.group.empty() && ri.resource == "namespaces") return admitNamespace(request);
  if (ri.group.empty() && ri.resource == "pods") return admitPod(request);
  if (!hasPodTemplate(ri.group, ri.resource) || !ri.subresource.empty()) return Status::Ok();
  const json* tmpl = podTemplateOf(ri.group, ri.resource, *request.newObject);
  if (tmpl == nullptr || tmpl->is_null()) return Status::Ok();
  return admitTemplate(request, member(*tmpl, "metadata"), member(*tmpl, "spec"));
}

Result<std::optional<json>> PodSecurity::namespaceLabels(const std::string& ns) {
  const auto* namespaces = registry_.scheme().byResource("", "v1", "namespaces");
  if (namespaces == nullptr || ns.empty()) return std::optional<json>();
  auto got = lister_->get(*namespaces, "", ns);
  if (!got.ok()) {
    if (got.status().code() == 404) return std::optional<json>();
    return got.status();
  }
  return std::optional<json>(member(member(**got, "metadata"), "labels"));
}

Status PodSecurity::admitNamespace(auth::AdmissionRequest& request) {
  if (!request.request.subresource.empty()) return Status::Ok();
  const json& ns = *request.newObject;
  const std::string name = stringMember(member(ns, "metadata"), "name");
  const json& labels = member(member(ns, "metadata"), "labels");
  auto next = podsecurity::policyFromLabels(labels, config_.defaults);
  if (request.operation == "CREATE" || request.oldObject == nullptr) {
    if (!next.errors.empty()) return Status::Invalid("Namespace", name, next.errors);
    if (contains(config_.exemptNamespaces, name)) {
      if (auto w = exemptNamespaceWarning(name, next.policy, labels); !w.empty()) request.warn(w);
    }
    return Status::Ok();
  }
  auto previous = podsecurity::policyFromLabels(
      member(member(*request.oldObject, "metadata"), "labels"), config_.defaults);
  // Labels that were already bad may stay bad (the namespace can still be written), but a change
  // must not introduce new errors.
  if (!next.errors.empty() &&
      (previous.errors.empty() || !sameErrors(next.errors, previous.errors))) {
    return Status::Invalid("Namespace", name, next.errors);
  }
  const LevelVersion& enforce = next.policy.enforce;
  const LevelVersion& before = previous.policy.enforce;
  if (enforce == before || enforce.level == Level::kPrivileged) return Status::Ok();
  if (enforce.version == before.version &&
      podsecurity::compareLevels(enforce.level, before.level) < 1) {
    return Status::Ok();  // relaxed
  }
  if (contains(config_.exemptNamespaces, name)) {
    if (auto w = exemptNamespaceWarning(name, next.policy, labels); !w.empty()) request.warn(w);
    return Status::Ok();
  }
  for (auto& w : evaluatePodsInNamespace(name, enforce)) request.warn(std::move(w));
  return Status::Ok();
}

std::vector<std::string> PodSecurity::evaluatePodsInNamespace(const std::string& ns,
                                                              const LevelVersion& enforce) {
  const auto* podsInfo = registry_.scheme().byResource("", "v1", "pods");
  if (podsInfo == nullptr) return {};
  auto page = registry_.list(*podsInfo, ns, ListOptions{});
  if (!page.ok()) return {"failed to list pods while checking new PodSecurity enforce level"};
  // One pod per controller first: replicas share a template, so they would repeat one warning.
  std::vector<const json*> pods, duplicates;
  std::set<std::string> controllers;
  for (const auto& pod : page->items) {
    if (contains(config_.exemptRuntimeClasses,
                 stringMember(member(pod, "spec"), "runtimeClassName"))) {
      continue;
    }
    std::string controller;
    const json& refs = member(member(pod, "metadata"), "ownerReferences");
    if (refs.is_array()) {
      for (const auto& ref : refs) {
        if (member(ref, "controller") == true) controller = stringMember(ref, "uid");
      }
    }
    if (controller.empty() || controllers.insert(controller).second) {
      pods.push_back(&pod);
    } else {
      duplicates.push_back(&pod);
    }
  }
  pods.insert(pods.end(), duplicates.begin(), duplicates.end());
  const size_t total = pods.size();
  if (pods.size() > kMaxPodsToCheck) pods.resize(kMaxPodsToCheck);

  struct Count {
    std::string firstPod;
    int pods = 0;
  };
  std::vector<std::string> reasons;  // in the order first seen
  std::map<std::string, Count> counts;
  size_t checked = pods.size();
  const auto deadline = std::chrono::steady_clock::now() + kPodCheckTimeout;
  for (size_t i = 0; i < pods.size(); ++i) {
    const json& pod = *pods[i];
    auto result = podsecurity::evaluatePod(enforce, member(pod, "metadata"), member(pod, "spec"));
    if (!result.allowed()) {
      const std::string reason = result.forbiddenReason();
      const std::string podName = stringMember(member(pod, "metadata"), "name");
      auto [it, inserted] = counts.try_emplace(reason, Count{podName, 0});
      if (inserted) reasons.push_back(reason);
      if (podName < it->second.firstPod) it->second.firstPod = podName;
      ++it->second.pods;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      checked = i + 1;
      break;
    }
  }
  std::vector<std::string> warnings;
  if (checked < total) {
    warnings.push_back("new PodSecurity enforce level only checked against the first " +
                       std::to_string(checked) + " of " + std::to_string(total) + " existing pods");
  }
  if (!reasons.empty()) {
    warnings.push_back("existing pods in namespace \"" + ns +
                       "\" violate the new PodSecurity enforce level \"" + enforce.toString() +
                       "\"");
  }
  std::vector<std::string> podWarnings;
  for (const auto& reason : reasons) {
    const Count& c = counts[reason];
    std::string who = c.firstPod;
    if (c.pods == 2) who += " (and 1 other pod)";
    if (c.pods > 2) who += " (and " + std::to_string(c.pods - 1) + " other pods)";
    podWarnings.push_back(who + ": " + reason);
  }
  std::sort(podWarnings.begin(), podWarnings.end());
  warnings.insert(warnings.end(), podWarnings.begin(), podWarnings.end());
  return warnings;
}

Status PodSecurity::admitPod(auth::AdmissionRequest& request) {
  if (ignoredPodSubresource(request.request.subresource)) return Status::Ok();
  std::string ns = request.request.namespaceName;
  if (ns.empty()) ns = stringMember(member(*request.newObject, "metadata"), "namespace");
  if (exempt(request, ns)) {
    recordExemption(request);
    return Status::Ok();
  }
  auto labels = namespaceLabels(ns);
  if (!labels.ok()) {
    recordError(request, true);
    return Status::Internal("failed to lookup namespace \"" + ns +
                            "\": " + labels.status().message());
  }
  // A missing namespace is refused by storage with its own NotFound.
  if (!labels->has_value()) return Status::Ok();
  auto policy = podsecurity::policyFromLabels(**labels, config_.defaults);
  if (policy.errors.empty() && policy.policy.fullyPrivileged()) {
    recordEvaluation(request, true, policy.policy.enforce, "enforce");
    return Status::Ok();
  }
  if (request.operation == "UPDATE" && request.oldObject != nullptr &&
      !isSignificantPodUpdate(*request.newObject, *request.oldObject)) {
    return Status::Ok();
  }
  if (!policy.errors.empty()) {
    LOG_INFO(
        "PodSecurity: namespace {} has invalid labels ({}); evaluating what they fall "
        "back to",
        ns, errorsText(policy.errors));
  }
  const json& pod = *request.newObject;
  return evaluate(request, policy.policy, member(pod, "metadata"), member(pod, "spec"), true,
                  !policy.errors.empty());
}

Status PodSecurity::admitTemplate(auth::AdmissionRequest& request, const json& podMetadata,
                                  const json& podSpec) {
  std::string ns = request.request.namespaceName;
  if (ns.empty()) ns = stringMember(member(*request.newObject, "metadata"), "namespace");
  if (exempt(request, ns)) {
    recordExemption(request);
    return Status::Ok();
  }
  auto labels = namespaceLabels(ns);
  // Templates are only warned about: never refuse a workload because its namespace is unknown.
  if (!labels.ok()) recordError(request, true);
  if (!labels.ok() || !labels->has_value()) return Status::Ok();
  auto policy = podsecurity::policyFromLabels(**labels, config_.defaults);
  if (policy.errors.empty() && policy.policy.warn.level == Level::kPrivileged &&
      policy.policy.audit.level == Level::kPrivileged) {
    return Status::Ok();
  }
  return evaluate(request, policy.policy, podMetadata, podSpec, false, !policy.errors.empty());
}

Status PodSecurity::evaluate(auth::AdmissionRequest& request, const Policy& policy,
                             const json& podMetadata, const json& podSpec, bool enforce,
                             bool badLabels) {
  if (contains(config_.exemptRuntimeClasses, stringMember(podSpec, "runtimeClassName"))) {
    recordExemption(request);
    return Status::Ok();
  }
  if (badLabels) recordError(request, false);
  Status response = Status::Ok();
  if (enforce) {
    auto result = podsecurity::evaluatePod(policy.enforce, podMetadata, podSpec);
    if (!result.allowed()) {
      // The name the pod would have had: a generateName pod (a controller's replica) is named
      // when stored, after admission, as kube-apiserver names it before its validating plugins.
      std::string name = stringMember(member(*request.newObject, "metadata"), "name");
      if (name.empty()) {
        const std::string prefix =
            stringMember(member(*request.newObject, "metadata"), "generateName");
        if (!prefix.empty()) name = prefix + randomSuffix();
      }
      response = Status::Forbidden("pods \"" + name + "\" is forbidden: violates PodSecurity \"" +
                                   policy.enforce.toString() + "\": " + result.forbiddenDetail());
      response.withDetails(name, "", "pods");
    }
    recordEvaluation(request, result.allowed(), policy.enforce, "enforce");
  }
  auto audit = podsecurity::evaluatePod(policy.audit, podMetadata, podSpec);
  if (!audit.allowed()) {
    recordEvaluation(request, false, policy.audit, "audit");
    // minik8s has no audit log: the audit-violations annotation goes to the server's log.
    LOG_INFO("PodSecurity audit: {} {}/{} would violate PodSecurity \"{}\": {}",
             request.request.resource, request.request.namespaceName,
             stringMember(member(*request.newObject, "metadata"), "name"), policy.audit.toString(),
             audit.forbiddenDetail());
  }
  // No warnings on a request that is refused anyway.
  if (response.ok()) {
    auto warn = podsecurity::evaluatePod(policy.warn, podMetadata, podSpec);
    if (!warn.allowed()) {
      recordEvaluation(request, false, policy.warn, "warn");
      request.warn("would violate PodSecurity \"" + policy.warn.toString() +
                   "\": " + warn.forbiddenDetail());
    }
  }
  return response;
}

}  // namespace minik8s::apiserver::admission
