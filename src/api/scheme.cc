// The built-in resource table: names, verbs and subresources as Kubernetes 1.32 publishes them in
// discovery, so kubectl's short names, `get all` and subresource calls behave the same.
#include "api/scheme.h"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <utility>

namespace minik8s::api {

const SubresourceInfo* ResourceInfo::subresource(const std::string& name) const {
  for (const auto& s : subresources) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Scheme::Scheme(std::vector<ResourceInfo> resources) {
  resources_.reserve(resources.size());
  for (auto& r : resources) resources_.push_back(std::make_shared<ResourceInfo>(std::move(r)));
  rebuildGroups();
}

void Scheme::rebuildGroups() {
  // Groups appear in the order of their first resource; versions in the order they are first
  // seen, so callers list the preferred version of a group first.
  groups_.clear();
  for (const auto& r : resources_) {
    auto g = std::find_if(groups_.begin(), groups_.end(),
                          [&](const GroupInfo& gi) { return gi.name == r->group; });
    if (g == groups_.end()) {
      groups_.push_back(GroupInfo{r->group, {r->version}});
    } else if (std::find(g->versions.begin(), g->versions.end(), r->version) == g->versions.end()) {
      g->versions.push_back(r->version);
    }
  }
}

std::vector<ResourceInfo> Scheme::resources() const {
  std::shared_lock lock(mu_);
  std::vector<ResourceInfo> out;
  out.reserve(resources_.size());
  for (const auto& r : resources_) out.push_back(*r);
  return out;
}

std::vector<GroupInfo> Scheme::groups() const {
  std::shared_lock lock(mu_);
  return groups_;
}

uint64_t Scheme::generation() const {
  std::shared_lock lock(mu_);
  return generation_;
}

const ResourceInfo* Scheme::byResource(const std::string& group, const std::string& version,
                                       const std::string& plural) const {
  std::shared_lock lock(mu_);
  for (const auto& r : resources_) {
    if (r->group == group && r->version == version && r->plural == plural) return r.get();
  }
  return nullptr;
}

const ResourceInfo* Scheme::byKind(const std::string& group, const std::string& version,
                                   const std::string& kind) const {
  std::shared_lock lock(mu_);
  for (const auto& r : resources_) {
    if (r->group == group && r->version == version && r->kind == kind) return r.get();
  }
  return nullptr;
}

void Scheme::setCustomResources(const std::string& group, const std::string& plural,
                                std::vector<ResourceInfo> resources) {
  std::unique_lock lock(mu_);
  std::vector<std::shared_ptr<const ResourceInfo>> kept;
  bool changed = false;
  for (auto& r : resources_) {
    if (r->group == group && r->plural == plural && r->custom) {
      retired_.push_back(std::move(r));
      changed = true;
    } else {
      kept.push_back(std::move(r));
    }
  }
  resources_ = std::move(kept);
  for (auto& r : resources) {
    resources_.push_back(std::make_shared<ResourceInfo>(std::move(r)));
    changed = true;
  }
  if (!changed) return;
  ++generation_;
  rebuildGroups();
}

std::vector<const ResourceInfo*> Scheme::groupVersion(const std::string& group,
                                                      const std::string& version) const {
  std::shared_lock lock(mu_);
  std::vector<const ResourceInfo*> out;
  for (const auto& r : resources_) {
    if (r->group == group && r->version == version) out.push_back(r.get());
  }
  std::sort(out.begin(), out.end(),
            [](const ResourceInfo* a, const ResourceInfo* b) { return a->plural < b->plural; });
  return out;
}

namespace {

using Verbs = std::vector<std::string>;

const Verbs kAllVerbs = {"create", "delete", "deletecollection", "get",
                         "list",   "patch",  "update",           "watch"};
const Verbs kStatusVerbs = {"get", "patch", "update"};

// A resource of `group/version` with the full verb set; callers adjust the rest.
ResourceInfo resource(std::string group, std::string version, std::string kind, std::string plural,
                      std::string singular) {
  ResourceInfo r;
  r.group = std::move(group);
  r.version = std::move(version);
  r.listKind = kind + "List";
  r.kind = std::move(kind);
  r.plural = std::move(plural);
  r.singular = std::move(singular);
  r.verbs = kAllVerbs;
  r.storageVersion = r.version;
  return r;
}

SubresourceInfo statusOf(const ResourceInfo& r) {
  return SubresourceInfo{"status", r.group, r.version, r.kind, kStatusVerbs};
}

SubresourceInfo scaleSubresource() {
  return SubresourceInfo{"scale", "autoscaling", "v1", "Scale", kStatusVerbs};
}

std::vector<ResourceInfo> builtinResources() {
  std::vector<ResourceInfo> out;

  // core/v1, in the order kubectl lists them.
  {
    auto r = resource("", "v1", "Binding", "bindings", "binding");
    r.verbs = {"create"};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "ConfigMap", "configmaps", "configmap");
    r.shortNames = {"cm"};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "Endpoints", "endpoints", "endpoints");
    r.shortNames = {"ep"};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "Event", "events", "event");
    r.shortNames = {"ev"};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "LimitRange", "limitranges", "limitrange");
    r.shortNames = {"limits"};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "Namespace", "namespaces", "namespace");
    r.namespaced = false;
    r.verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
    r.shortNames = {"ns"};
    r.subresources = {SubresourceInfo{"finalize", "", "v1", "Namespace", {"update"}}, statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "Node", "nodes", "node");
    r.namespaced = false;
    r.shortNames = {"no"};
    r.subresources = {
        SubresourceInfo{
            "proxy", "", "v1", "NodeProxyOptions", {"create", "delete", "get", "patch", "update"}},
        statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims",
                      "persistentvolumeclaim");
    r.shortNames = {"pvc"};
    r.subresources = {statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume");
    r.namespaced = false;
    r.shortNames = {"pv"};
    r.subresources = {statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "Pod", "pods", "pod");
    r.shortNames = {"po"};
    r.categories = {"all"};
    r.subresources = {
        SubresourceInfo{"attach", "", "v1", "PodAttachOptions", {"create", "get"}},
        SubresourceInfo{"binding", "", "v1", "Binding", {"create"}},
        SubresourceInfo{"ephemeralcontainers", "", "v1", "Pod", kStatusVerbs},
        SubresourceInfo{"eviction", "policy", "v1", "Eviction", {"create"}},
        SubresourceInfo{"exec", "", "v1", "PodExecOptions", {"create", "get"}},
        SubresourceInfo{"log", "", "v1", "Pod", {"get"}},
        SubresourceInfo{"portforward", "", "v1", "PodPortForwardOptions", {"create", "get"}},
        statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "ResourceQuota", "resourcequotas", "resourcequota");
    r.shortNames = {"quota"};
    r.subresources = {statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "Secret", "secrets", "secret");
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount");
    r.shortNames = {"sa"};
    r.subresources = {
        SubresourceInfo{"token", "authentication.k8s.io", "v1", "TokenRequest", {"create"}}};
    out.push_back(r);
  }
  {
    auto r = resource("", "v1", "Service", "services", "service");
    r.shortNames = {"svc"};
    r.categories = {"all"};
    r.subresources = {SubresourceInfo{"proxy",
                                      "",
                                      "v1",
                                      "ServiceProxyOptions",
                                      {"create", "delete", "get", "patch", "update"}},
                      statusOf(r)};
    out.push_back(r);
  }

  // apps/v1
  {
    auto r = resource("apps", "v1", "Deployment", "deployments", "deployment");
    r.shortNames = {"deploy"};
    r.categories = {"all"};
    r.subresources = {scaleSubresource(), statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("apps", "v1", "ReplicaSet", "replicasets", "replicaset");
    r.shortNames = {"rs"};
    r.categories = {"all"};
    r.subresources = {scaleSubresource(), statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("apps", "v1", "DaemonSet", "daemonsets", "daemonset");
    r.shortNames = {"ds"};
    r.categories = {"all"};
    r.subresources = {statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("apps", "v1", "StatefulSet", "statefulsets", "statefulset");
    r.shortNames = {"sts"};
    r.categories = {"all"};
    r.subresources = {scaleSubresource(), statusOf(r)};
    out.push_back(r);
  }
  out.push_back(
      resource("apps", "v1", "ControllerRevision", "controllerrevisions", "controllerrevision"));

  // autoscaling: v2 is preferred and stored; v1 is served by conversion.
  for (const char* version : {"v2", "v1"}) {
    auto r = resource("autoscaling", version, "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                      "horizontalpodautoscaler");
    r.shortNames = {"hpa"};
    r.categories = {"all"};
    r.subresources = {statusOf(r)};
    r.storageVersion = "v2";
    out.push_back(r);
  }

  {
    auto r = resource("batch", "v1", "Job", "jobs", "job");
    r.categories = {"all"};
    r.subresources = {statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("batch", "v1", "CronJob", "cronjobs", "cronjob");
    r.shortNames = {"cj"};
    r.categories = {"all"};
    r.subresources = {statusOf(r)};
    out.push_back(r);
  }
  out.push_back(resource("coordination.k8s.io", "v1", "Lease", "leases", "lease"));
  out.push_back(
      resource("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "endpointslice"));
  {
    auto r =
        resource("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", "networkpolicy");
    r.shortNames = {"netpol"};
    out.push_back(r);
  }
  // rbac.authorization.k8s.io/v1
  for (auto [kind, plural, singular, namespaced] :
       {std::tuple{"ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding", false},
        std::tuple{"ClusterRole", "clusterroles", "clusterrole", false},
        std::tuple{"RoleBinding", "rolebindings", "rolebinding", true},
        std::tuple{"Role", "roles", "role", true}}) {
    auto r = resource("rbac.authorization.k8s.io", "v1", kind, plural, singular);
    r.namespaced = namespaced;
    out.push_back(r);
  }
  // authorization.k8s.io/v1 and authentication.k8s.io/v1: create-only reviews, never stored.
  for (auto [group, kind, plural, singular, namespaced] :
       {std::tuple{"authorization.k8s.io", "LocalSubjectAccessReview", "localsubjectaccessreviews",
                   "localsubjectaccessreview", true},
        std::tuple{"authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
                   "selfsubjectaccessreview", false},
        std::tuple{"authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
                   "selfsubjectrulesreview", false},
        std::tuple{"authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews",
                   "subjectaccessreview", false},
        std::tuple{"authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews",
                   "selfsubjectreview", false},
        std::tuple{"authentication.k8s.io", "TokenReview", "tokenreviews", "tokenreview", false}}) {
    auto r = resource(group, "v1", kind, plural, singular);
    r.namespaced = namespaced;
    r.verbs = {"create"};
    out.push_back(r);
  }
  {
    auto r = resource("certificates.k8s.io", "v1", "CertificateSigningRequest",
                      "certificatesigningrequests", "certificatesigningrequest");
    r.namespaced = false;
    r.shortNames = {"csr"};
    r.subresources = {SubresourceInfo{"approval", r.group, r.version, r.kind, kStatusVerbs},
                      statusOf(r)};
    out.push_back(r);
  }
  // storage.k8s.io/v1
  {
    auto r = resource("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass");
    r.namespaced = false;
    r.shortNames = {"sc"};
    out.push_back(r);
  }
  {
    auto r = resource("storage.k8s.io", "v1", "CSIDriver", "csidrivers", "csidriver");
    r.namespaced = false;
    out.push_back(r);
  }
  {
    auto r = resource("storage.k8s.io", "v1", "CSINode", "csinodes", "csinode");
    r.namespaced = false;
    out.push_back(r);
  }
  for (auto [kind, plural, singular] :
       {std::tuple{"MutatingWebhookConfiguration", "mutatingwebhookconfigurations",
                   "mutatingwebhookconfiguration"},
        std::tuple{"ValidatingWebhookConfiguration", "validatingwebhookconfigurations",
                   "validatingwebhookconfiguration"}}) {
    auto r = resource("admissionregistration.k8s.io", "v1", kind, plural, singular);
    r.namespaced = false;
    r.categories = {"api-extensions"};
    out.push_back(r);
  }
  {
    auto r = resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                      "customresourcedefinitions", "customresourcedefinition");
    r.namespaced = false;
    r.shortNames = {"crd", "crds"};
    r.categories = {"api-extensions"};
    r.subresources = {statusOf(r)};
    out.push_back(r);
  }
  {
    auto r = resource("minik8s.io", "v1", "Dns", "dnses", "dns");
    r.subresources = {statusOf(r)};
    out.push_back(r);
  }
  return out;
}

}  // namespace

const Scheme& Scheme::builtin() {
  static const Scheme scheme(builtinResources());
  return scheme;
}

std::pair<std::string, std::string> splitApiVersion(const std::string& apiVersion) {
  const size_t slash = apiVersion.find('/');
  if (slash == std::string::npos) return {"", apiVersion};
  return {apiVersion.substr(0, slash), apiVersion.substr(slash + 1)};
}

}  // namespace minik8s::api
