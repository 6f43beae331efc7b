#include "api/defaults.h"

#include <string>
#include <string_view>

#include "api/custom_resource.h"
#include "api/defaulting.h"
#include "api/resource_type.h"
#include "api/volume_sources.h"

namespace minik8s::api {
namespace {

// obj[key] as an object, created when absent or null; nullptr when it has another type.
json* objectField(json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  json& v = obj[key];
  if (v.is_null()) v = json::object();
  return v.is_object() ? &v : nullptr;
}

// obj[key] as an object only if it is one already.
json* existingObject(json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? &*it : nullptr;
}

json* existingArray(json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? &*it : nullptr;
}

// Sets obj[key] = value when the field is absent, null or an empty string.
// `value` is a copy: it may be another member of obj, which inserting key could move.
void setDefault(json& obj, const char* key, json value) {
  if (!obj.is_object()) return;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null() ||
      (it->is_string() && it->get_ref<const std::string&>().empty())) {
    obj[key] = std::move(value);
  }
}

// Sets obj[key] = value when the field is absent or null: Kubernetes' defaults of pointer fields,
// which keep an empty string for validation to reject.
void setIfMissing(json& obj, const char* key, json value) {
  if (!obj.is_object()) return;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) obj[key] = std::move(value);
}

bool isEmptyMap(const json* v) { return !v || v->is_null() || (v->is_object() && v->empty()); }

// The tag of an image reference ("latest" when it has neither tag nor digest, as Docker does).
std::string imageTag(std::string_view image) {
  size_t at = image.find('@');
  bool digest = at != std::string_view::npos;
  if (digest) image = image.substr(0, at);
  size_t slash = image.rfind('/');
  size_t colon = image.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    return std::string(image.substr(colon + 1));
  }
  return digest ? "" : "latest";
}

void defaultHTTPGet(json& handler) {
  if (json* get = existingObject(handler, "httpGet")) {
    setDefault(*get, "path", "/");
    setDefault(*get, "scheme", "HTTP");
  }
}

void defaultProbe(json& container, const char* name) {
  json* probe = existingObject(container, name);
  if (!probe) return;
  setDefault(*probe, "timeoutSeconds", 1);
  setDefault(*probe, "periodSeconds", 10);
  setDefault(*probe, "successThreshold", 1);
  setDefault(*probe, "failureThreshold", 3);
  defaultHTTPGet(*probe);
  if (json* grpc = existingObject(*probe, "grpc")) setDefault(*grpc, "service", "");
}

void defaultFieldRef(json& holder) {
  if (json* ref = existingObject(holder, "fieldRef")) setDefault(*ref, "apiVersion", "v1");
  if (json* ref = existingObject(holder, "resourceFieldRef")) setDefault(*ref, "divisor", "0");
}

void defaultContainer(json& c) {
  if (!c.is_object()) return;
  auto policy = c.find("imagePullPolicy");
  if (policy == c.end() || policy->is_null() || *policy == "") {
    // Kubernetes ignores a parse failure here: no usable tag means IfNotPresent.
    auto image = c.find("image");
    std::string tag =
        image != c.end() && image->is_string() ? imageTag(image->get<std::string>()) : "";
    c["imagePullPolicy"] = tag == "latest" ? "Always" : "IfNotPresent";
  }
  setDefault(c, "terminationMessagePath", "/dev/termination-log");
  setDefault(c, "terminationMessagePolicy", "File");
  objectField(c, "resources");
  if (json* ports = existingArray(c, "ports")) {
    for (auto& p : *ports) setDefault(p, "protocol", "TCP");
  }
  if (json* env = existingArray(c, "env")) {
    for (auto& e : *env) {
      if (json* from = existingObject(e, "valueFrom")) defaultFieldRef(*from);
    }
  }
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    defaultProbe(c, probe);
  }
  if (json* lifecycle = existingObject(c, "lifecycle")) {
    for (const char* hook : {"postStart", "preStop"}) {
      if (json* h = existingObject(*lifecycle, hook)) defaultHTTPGet(*h);
    }
  }
}

void defaultVolume(json& v) {
  if (!v.is_object()) return;
  bool any = false;
  for (const char* s : kVolumeSources) {
    auto it = v.find(s);
    if (it != v.end() && !it->is_null()) any = true;
  }
  if (!any) v["emptyDir"] = json::object();
  for (const char* s : {"configMap", "secret", "downwardAPI", "projected"}) {
    if (json* src = existingObject(v, s)) setDefault(*src, "defaultMode", 420);
  }
  if (json* hostPath = existingObject(v, "hostPath")) {
    if (!hostPath->contains("type")) (*hostPath)["type"] = "";
  }
  if (json* downward = existingObject(v, "downwardAPI")) {
    if (json* items = existingArray(*downward, "items")) {
      for (auto& item : *items) defaultFieldRef(item);
    }
  }
}

struct PodSpecDefaults {
  bool isPod = false;            // Pods get admission/Pod-only defaults; templates do not
  bool setRestartPolicy = true;  // Job templates must state theirs
};

void defaultPodSpec(json& spec, const PodSpecDefaults& d) {
  setDefault(spec, "dnsPolicy", "ClusterFirst");
  if (d.setRestartPolicy) setDefault(spec, "restartPolicy", "Always");
  objectField(spec, "securityContext");
  setDefault(spec, "terminationGracePeriodSeconds", 30);
  setDefault(spec, "schedulerName", "default-scheduler");
  bool hostNetwork = spec.value("hostNetwork", json(false)) == true;
  for (const char* list : {"containers", "initContainers"}) {
    json* containers = existingArray(spec, list);
    if (!containers) continue;
    for (auto& c : *containers) {
      defaultContainer(c);
      if (hostNetwork) {
        // With the host's network a container port is a host port.
        if (json* ports = existingArray(c, "ports")) {
          for (auto& p : *ports) {
            if (p.is_object() && p.contains("containerPort"))
              setDefault(p, "hostPort", p["containerPort"]);
          }
        }
      }
      if (!d.isPod) continue;
      // Pods (not templates): requests default to limits, resource by resource.
      json* resources = existingObject(c, "resources");
      if (!resources || !existingObject(*resources, "limits")) continue;
      json* requests = objectField(*resources, "requests");
      if (!requests) continue;
      const json* limits = existingObject(*resources, "limits");  // after requests' insertion
      for (auto it = limits->begin(); it != limits->end(); ++it) {
        if (!requests->contains(it.key())) (*requests)[it.key()] = *it;
      }
    }
  }
  if (json* volumes = existingArray(spec, "volumes")) {
    for (auto& v : *volumes) defaultVolume(v);
  }
  if (!d.isPod) return;
  if (!spec.contains("enableServiceLinks") || spec["enableServiceLinks"].is_null()) {
    spec["enableServiceLinks"] = true;
  }
  setDefault(spec, "preemptionPolicy", "PreemptLowerPriority");
  setDefault(spec, "priority", 0);
  // serviceAccount is the deprecated alias: either one names the account.
  if (spec.value("serviceAccountName", json("")) == "" && spec.contains("serviceAccount") &&
      spec["serviceAccount"].is_string()) {
    json alias = spec["serviceAccount"];
    spec["serviceAccountName"] = std::move(alias);
  }
  setDefault(spec, "serviceAccountName", "default");
  setDefault(spec, "serviceAccount", spec["serviceAccountName"]);
}

void defaultPodTemplate(json& spec, const PodSpecDefaults& d) {
  json* tmpl = objectField(spec, "template");
  if (!tmpl) return;
  json* podSpec = objectField(*tmpl, "spec");
  if (podSpec) defaultPodSpec(*podSpec, d);
}

// metadata.labels default to the pod template's labels (Jobs, and Deployments/ReplicaSets here).
void defaultLabelsFromTemplate(json& obj, json& spec) {
  json* tmpl = existingObject(spec, "template");
  json* tmeta = tmpl ? existingObject(*tmpl, "metadata") : nullptr;
  json* tlabels = tmeta ? existingObject(*tmeta, "labels") : nullptr;
  if (!tlabels || tlabels->empty()) return;
  json* meta = objectField(obj, "metadata");
  if (!meta) return;
  auto it = meta->find("labels");
  if (it == meta->end() || isEmptyMap(&*it)) (*meta)["labels"] = *tlabels;
}

void defaultPod(json& obj) {
  json* spec = objectField(obj, "spec");
  if (spec) defaultPodSpec(*spec, {.isPod = true});
}

void defaultDeployment(json& obj) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  setDefault(*spec, "replicas", 1);
  if (json* strategy = objectField(*spec, "strategy")) {
    setDefault(*strategy, "type", "RollingUpdate");
    if ((*strategy)["type"] == "RollingUpdate") {
      if (json* rolling = objectField(*strategy, "rollingUpdate")) {
        setDefault(*rolling, "maxUnavailable", "25%");
        setDefault(*rolling, "maxSurge", "25%");
      }
    }
  }
  setDefault(*spec, "revisionHistoryLimit", 10);
  setDefault(*spec, "progressDeadlineSeconds", 600);
  defaultPodTemplate(*spec, {});
  defaultLabelsFromTemplate(obj, *spec);
}

void defaultDaemonSet(json& obj) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  if (json* strategy = objectField(*spec, "updateStrategy")) {
    setDefault(*strategy, "type", "RollingUpdate");
    if ((*strategy)["type"] == "RollingUpdate") {
      if (json* rolling = objectField(*strategy, "rollingUpdate")) {
        setDefault(*rolling, "maxUnavailable", 1);
        setDefault(*rolling, "maxSurge", 0);
      }
    }
  }
  setDefault(*spec, "revisionHistoryLimit", 10);
  defaultPodTemplate(*spec, {});
  defaultLabelsFromTemplate(obj, *spec);
}

void defaultStatefulSet(json& obj) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  setDefault(*spec, "replicas", 1);
  setDefault(*spec, "podManagementPolicy", "OrderedReady");
  if (json* strategy = objectField(*spec, "updateStrategy")) {
    setDefault(*strategy, "type", "RollingUpdate");
    if ((*strategy)["type"] == "RollingUpdate") {
      if (json* rolling = objectField(*strategy, "rollingUpdate")) {
        setDefault(*rolling, "partition", 0);
      }
    }
  }
  setDefault(*spec, "revisionHistoryLimit", 10);
  if (json* retention = objectField(*spec, "persistentVolumeClaimRetentionPolicy")) {
    setDefault(*retention, "whenDeleted", "Retain");
    setDefault(*retention, "whenScaled", "Retain");
  }
  defaultPodTemplate(*spec, {});
  defaultLabelsFromTemplate(obj, *spec);
}

void defaultReplicaSet(json& obj) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  setDefault(*spec, "replicas", 1);
  defaultPodTemplate(*spec, {});
  defaultLabelsFromTemplate(obj, *spec);
}

// The registry of Kubernetes generates a Job's selector from its uid unless manualSelector is set,
// and labels the pod template to match.
void generateJobSelector(json& obj, json& spec) {
  if (spec.value("manualSelector", json(false)) == true) return;
  auto selIt = spec.find("selector");
  if (selIt != spec.end() && !selIt->is_null()) return;
  const json* meta = existingObject(obj, "metadata");
  if (!meta) return;
  std::string uid = meta->value("uid", json("")).is_string() ? meta->value("uid", "") : "";
  std::string name = meta->value("name", json("")).is_string() ? meta->value("name", "") : "";
  if (uid.empty()) return;
  json* tmpl = objectField(spec, "template");
  json* tmeta = tmpl ? objectField(*tmpl, "metadata") : nullptr;
  json* labels = tmeta ? objectField(*tmeta, "labels") : nullptr;
  if (!labels) return;
  for (const char* k : {"job-name", "batch.kubernetes.io/job-name"}) {
    if (!labels->contains(k)) (*labels)[k] = name;
  }
  for (const char* k : {"controller-uid", "batch.kubernetes.io/controller-uid"}) {
    if (!labels->contains(k)) (*labels)[k] = uid;
  }
  spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
}

void defaultJob(json& obj) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  auto unset = [&](const char* k) { return !spec->contains(k) || (*spec)[k].is_null(); };
  if (unset("completions") && unset("parallelism")) {
    (*spec)["completions"] = 1;
    (*spec)["parallelism"] = 1;
  }
  if (unset("parallelism")) (*spec)["parallelism"] = 1;
  if (unset("backoffLimit"))
    (*spec)["backoffLimit"] = unset("backoffLimitPerIndex") ? 6 : 2147483647;
  setDefault(*spec, "completionMode", "NonIndexed");
  if (unset("suspend")) (*spec)["suspend"] = false;
  setDefault(*spec, "podReplacementPolicy",
             unset("podFailurePolicy") ? "TerminatingOrFailed" : "Failed");
  generateJobSelector(obj, *spec);
  defaultPodTemplate(*spec, {.setRestartPolicy = false});
  defaultLabelsFromTemplate(obj, *spec);
}

// A CronJob's defaults; its jobTemplate gets the pod defaults now and the Job's own (completions,
// backoffLimit, selector...) when each Job is created from it, as in Kubernetes.
void defaultCronJob(json& obj) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  setDefault(*spec, "concurrencyPolicy", "Allow");
  setDefault(*spec, "suspend", false);
  setDefault(*spec, "successfulJobsHistoryLimit", 3);
  setDefault(*spec, "failedJobsHistoryLimit", 1);
  json* tmpl = objectField(*spec, "jobTemplate");
  json* jobSpec = tmpl ? objectField(*tmpl, "spec") : nullptr;
  if (jobSpec) defaultPodTemplate(*jobSpec, {.setRestartPolicy = false});
}

void defaultService(json& obj) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  setDefault(*spec, "sessionAffinity", "None");
  if ((*spec)["sessionAffinity"] == "None") {
    spec->erase("sessionAffinityConfig");
  } else if ((*spec)["sessionAffinity"] == "ClientIP") {
    json* config = objectField(*spec, "sessionAffinityConfig");
    json* clientIP = config ? objectField(*config, "clientIP") : nullptr;
    if (clientIP) setDefault(*clientIP, "timeoutSeconds", 10800);
  }
  setDefault(*spec, "type", "ClusterIP");
  const json type = (*spec)["type"];
  if (json* ports = existingArray(*spec, "ports")) {
    for (auto& p : *ports) {
      if (!p.is_object()) continue;
      setDefault(p, "protocol", "TCP");
      auto t = p.find("targetPort");
      if ((t == p.end() || t->is_null() || *t == 0 || *t == "") && p.contains("port")) {
        json port = p["port"];
        p["targetPort"] = std::move(port);
      }
    }
  }
  const json* externalIPs = existingArray(*spec, "externalIPs");
  bool external = type == "NodePort" || type == "LoadBalancer" ||
                  (type == "ClusterIP" && externalIPs && !externalIPs->empty());
  if (external) setDefault(*spec, "externalTrafficPolicy", "Cluster");
  if (type == "ClusterIP" || type == "NodePort" || type == "LoadBalancer") {
    setDefault(*spec, "internalTrafficPolicy", "Cluster");
    json* families = existingArray(*spec, "ipFamilies");
    if (!spec->contains("ipFamilies") || (*spec)["ipFamilies"].is_null() ||
        (families && families->empty())) {
      (*spec)["ipFamilies"] = json::array({"IPv4"});
    }
    setDefault(*spec, "ipFamilyPolicy", "SingleStack");
  }
  if (type == "LoadBalancer" && !spec->contains("allocateLoadBalancerNodePorts")) {
    (*spec)["allocateLoadBalancerNodePorts"] = true;
  }
}

void defaultHorizontalPodAutoscaler(json& obj, const std::string& version) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  setDefault(*spec, "minReplicas", 1);
  if (version != "v2") return;
  auto metrics = spec->find("metrics");
  if (metrics == spec->end() || metrics->is_null() || (metrics->is_array() && metrics->empty())) {
    (*spec)["metrics"] = json::array(
        {{{"type", "Resource"},
          {"resource",
           {{"name", "cpu"}, {"target", {{"type", "Utilization"}, {"averageUtilization", 80}}}}}}});
  }
}

void defaultNamespace(json& obj) {
  json* meta = objectField(obj, "metadata");
  if (meta && meta->contains("name") && (*meta)["name"].is_string() && (*meta)["name"] != "") {
    json* labels = objectField(*meta, "labels");
    if (labels) (*labels)["kubernetes.io/metadata.name"] = (*meta)["name"];
  }
  if (json* status = objectField(obj, "status")) setDefault(*status, "phase", "Active");
}

void defaultNode(json& obj) {
  json* status = existingObject(obj, "status");
  if (!status) return;
  json* capacity = existingObject(*status, "capacity");
  auto alloc = status->find("allocatable");
  if (capacity && (alloc == status->end() || alloc->is_null())) {
    json copy = *capacity;
    (*status)["allocatable"] = std::move(copy);
  }
}

// core/v1 SetDefaults_PersistentVolume: the phase a new volume starts in, Retain for volumes made
// by hand (provisioners copy their class's policy), Filesystem volumes.
void defaultPersistentVolume(json& obj) {
  if (json* status = objectField(obj, "status")) setDefault(*status, "phase", "Pending");
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  setDefault(*spec, "persistentVolumeReclaimPolicy", "Retain");
  setIfMissing(*spec, "volumeMode", "Filesystem");
  if (json* hostPath = existingObject(*spec, "hostPath")) setIfMissing(*hostPath, "type", "");
}

void defaultPersistentVolumeClaim(json& obj) {
  if (json* status = objectField(obj, "status")) setDefault(*status, "phase", "Pending");
  if (json* spec = objectField(obj, "spec")) setIfMissing(*spec, "volumeMode", "Filesystem");
}

// core/v1 SetDefaults_LimitRangeItem: a Container item's default limit is its max, its default
// request the default limit, else its min.
void defaultLimitRange(json& obj) {
  json* spec = existingObject(obj, "spec");
  json* limits = spec ? existingArray(*spec, "limits") : nullptr;
  if (!limits) return;
  for (auto& item : *limits) {
    if (!item.is_object() || item.value("type", json()) != "Container") continue;
    auto fill = [&](const char* into, const char* from) {
      if (!item.contains(from) || !item[from].is_object()) return;
      if (!item.contains(into) || !item[into].is_object()) item[into] = json::object();
      for (const auto& [k, v] : item[from].items()) {
        if (!item[into].contains(k)) item[into][k] = v;
      }
      if (item[into].empty()) item.erase(into);
    };
    fill("default", "max");
    fill("defaultRequest", "default");
    fill("defaultRequest", "min");
  }
}

// networking/v1 SetDefaults_NetworkPolicy: policyTypes [Ingress] (plus Egress when egress rules are
// given) when none are listed; each port's protocol TCP.
void defaultNetworkPolicy(json& obj) {
  json* spec = existingObject(obj, "spec");
  if (!spec) return;
  for (const char* direction : {"ingress", "egress"}) {
    json* rules = existingArray(*spec, direction);
    if (!rules) continue;
    for (auto& rule : *rules) {
      json* ports = existingArray(rule, "ports");
      if (!ports) continue;
      for (auto& port : *ports) setIfMissing(port, "protocol", "TCP");
    }
  }
  json* types = existingArray(*spec, "policyTypes");
  if (types && !types->empty()) return;
  json defaulted = json::array({"Ingress"});
  json* egress = existingArray(*spec, "egress");
  if (egress && !egress->empty()) defaulted.push_back("Egress");
  (*spec)["policyTypes"] = std::move(defaulted);
}

// storage.k8s.io/v1 SetDefaults_StorageClass and SetDefaults_CSIDriver.
void defaultStorageClass(json& obj) {
  setIfMissing(obj, "reclaimPolicy", "Delete");
  setIfMissing(obj, "volumeBindingMode", "Immediate");
}

void defaultCSIDriver(json& obj) {
  json* spec = objectField(obj, "spec");
  if (!spec) return;
  setIfMissing(*spec, "attachRequired", true);
  setIfMissing(*spec, "podInfoOnMount", false);
  setIfMissing(*spec, "storageCapacity", false);
  setIfMissing(*spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
  auto modes = spec->find("volumeLifecycleModes");
  if (modes == spec->end() || modes->is_null() || (modes->is_array() && modes->empty())) {
    (*spec)["volumeLifecycleModes"] = json::array({"Persistent"});
  }
  setIfMissing(*spec, "requiresRepublish", false);
  setIfMissing(*spec, "seLinuxMount", false);
}

void defaultEndpointPorts(json& holder) {
  if (json* ports = existingArray(holder, "ports")) {
    for (auto& p : *ports) setDefault(p, "protocol", "TCP");
  }
}

}  // namespace

namespace {

// admissionregistration.k8s.io/v1 webhook configurations.
void defaultWebhookConfiguration(const std::string& kind, json& obj) {
  json* webhooks =
      obj.contains("webhooks") && obj["webhooks"].is_array() ? &obj["webhooks"] : nullptr;
  if (!webhooks) return;
  for (auto& w : *webhooks) {
    if (!w.is_object()) continue;
    if (!w.contains("failurePolicy")) w["failurePolicy"] = "Fail";
    if (!w.contains("matchPolicy")) w["matchPolicy"] = "Equivalent";
    if (!w.contains("namespaceSelector")) w["namespaceSelector"] = json::object();
    if (!w.contains("objectSelector")) w["objectSelector"] = json::object();
    if (!w.contains("timeoutSeconds")) w["timeoutSeconds"] = 10;
    if (kind == "MutatingWebhookConfiguration" && !w.contains("reinvocationPolicy")) {
      w["reinvocationPolicy"] = "Never";
    }
    if (w.contains("rules") && w["rules"].is_array()) {
      for (auto& rule : w["rules"]) {
        if (rule.is_object() && !rule.contains("scope")) rule["scope"] = "*";
      }
    }
    if (w.contains("clientConfig") && w["clientConfig"].is_object() &&
        w["clientConfig"].contains("service") && w["clientConfig"]["service"].is_object() &&
        !w["clientConfig"]["service"].contains("port")) {
      w["clientConfig"]["service"]["port"] = 443;
    }
  }
}

}  // namespace

void applyDefaults(const ResourceInfo& r, json& obj) {
  if (!obj.is_object()) return;
  if (r.custom) return r.custom->pruneAndDefault(obj);
  const ResourceType* type = builtinResourceType(r);
  if (type && type->defaults) type->defaults(obj);
}

namespace defaulting {

void pod(json& obj) { defaultPod(obj); }
void service(json& obj) { defaultService(obj); }
void namespaceObject(json& obj) { defaultNamespace(obj); }
void secret(json& obj) { setDefault(obj, "type", "Opaque"); }
void node(json& obj) { defaultNode(obj); }
void persistentVolume(json& obj) { defaultPersistentVolume(obj); }
void persistentVolumeClaim(json& obj) { defaultPersistentVolumeClaim(obj); }
void limitRange(json& obj) { defaultLimitRange(obj); }
void endpoints(json& obj) {
  if (json* subsets = existingArray(obj, "subsets")) {
    for (auto& s : *subsets) defaultEndpointPorts(s);
  }
}
void deployment(json& obj) { defaultDeployment(obj); }
void replicaSet(json& obj) { defaultReplicaSet(obj); }
void daemonSet(json& obj) { defaultDaemonSet(obj); }
void statefulSet(json& obj) { defaultStatefulSet(obj); }
void job(json& obj) { defaultJob(obj); }
void cronJob(json& obj) { defaultCronJob(obj); }
void horizontalPodAutoscalerV2(json& obj) { defaultHorizontalPodAutoscaler(obj, "v2"); }
void horizontalPodAutoscalerV1(json& obj) { defaultHorizontalPodAutoscaler(obj, "v1"); }
void networkPolicy(json& obj) { defaultNetworkPolicy(obj); }
void storageClass(json& obj) { defaultStorageClass(obj); }
void csiDriver(json& obj) { defaultCSIDriver(obj); }
void endpointSlice(json& obj) {
  if (json* ports = existingArray(obj, "ports")) {
    for (auto& p : *ports) {
      if (p.is_object() && !p.contains("name")) p["name"] = "";
      setDefault(p, "protocol", "TCP");
    }
  }
}
void mutatingWebhookConfiguration(json& obj) {
  defaultWebhookConfiguration("MutatingWebhookConfiguration", obj);
}
void validatingWebhookConfiguration(json& obj) {
  defaultWebhookConfiguration("ValidatingWebhookConfiguration", obj);
}
void customResourceDefinition(json& obj) { defaultCustomResourceDefinition(obj); }

}  // namespace defaulting

}  // namespace minik8s::api
