#include "controllers/daemonset/daemonset_controller.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/node_placement.h"
#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "controllers/replicaset/replicaset_controller.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::stringAt;
using api::uidOf;

const client::Resource kDaemonSets{"apps", "v1", "daemonsets", true};

namespace {

using client::resources::kPods;

std::string createdAt(const json& o) { return stringAt(o, "/metadata/creationTimestamp"); }

// What every daemon pod tolerates, as Kubernetes adds them.
json daemonTolerations(bool hostNetwork) {
  json t = json::array();
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    t.push_back({{"key", key}, {"operator", "Exists"}, {"effect", "NoExecute"}});
  }
  for (const char* key : {"node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure",
                          "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable"}) {
    t.push_back({{"key", key}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
  }
  if (hostNetwork) {
    t.push_back({{"key", "node.kubernetes.io/network-unavailable"},
                 {"operator", "Exists"},
                 {"effect", "NoSchedule"}});
  }
  return t;
}

// The template's tolerations plus the daemon ones it does not have yet.
json withDaemonTolerations(const json& podSpec) {
  json out = podSpec.value("tolerations", json::array());
  if (!out.is_array()) out = json::array();
  for (const auto& t : daemonTolerations(podSpec.value("hostNetwork", false))) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

bool isFinished(const json& pod) {
  const std::string phase = stringAt(pod, "/status/phase");
  return phase == "Failed" || phase == "Succeeded";
}

}  // namespace

bool daemonPodShouldRun(const json& podTemplate, const json& node, bool newPod) {
  const json spec = podTemplate.value("spec", json::object());
  json pod = {{"spec", spec}};
  if (!api::matchesNodeSelectorAndAffinity(pod, node)) return false;
  const json tolerations = withDaemonTolerations(spec);
  const json taints = valueAt(node, "/spec/taints", json::array());
  if (!taints.is_array()) return true;
  for (const auto& taint : taints) {
    const std::string effect = taint.value("effect", "");
    if (effect != "NoExecute" && !(newPod && effect == "NoSchedule")) continue;
    if (!api::toleratesTaint(tolerations, taint)) return false;
  }
  return true;
}

std::string daemonPodNode(const json& pod) {
  const std::string bound = stringAt(pod, "/spec/nodeName");
  if (!bound.empty()) return bound;
  const json terms = pod.value(
      "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"_json_pointer,
      json::array());
  if (!terms.is_array()) return "";
  for (const auto& term : terms) {
    for (const auto& f : term.value("matchFields", json::array())) {
      const json values = f.value("values", json::array());
      if (f.value("key", "") == "metadata.name" && f.value("operator", "") == "In" &&
          values.is_array() && values.size() == 1 && values[0].is_string()) {
        return values[0].get<std::string>();
      }
    }
  }
  return "";
}

DaemonSetController::DaemonSetController(client::RestClient& rest, client::Informer& daemonSets,
                                         client::Informer& pods, client::Informer& nodes,
                                         client::Informer& revisions,
                                         DaemonSetControllerOptions options)
    : rest_(rest),
      daemonSets_(daemonSets),
      pods_(pods),
      nodes_(nodes),
      revisions_(revisions),
      options_(std::move(options)),
      queue_(*options_.clock),
      expectations_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "daemonset") {
  daemonSets_.addHandlers(
      {[this](const json& ds) { queue_.add(client::objectKey(ds)); },
       [this](const json&, const json& ds) { queue_.add(client::objectKey(ds)); },
       [this](const json& ds) {
         expectations_.erase(client::objectKey(ds));
         queue_.add(client::objectKey(ds));
       }});
  auto ownerKey = [](const json& o) -> std::string {
    auto ref = controllerRef(o);
    if (!ref || ref->value("kind", "") != "DaemonSet") return "";
    return namespaceOf(o) + "/" + ref->value("name", "");
  };
  pods_.addHandlers({[this, ownerKey](const json& pod) {
                       const std::string key = ownerKey(pod);
                       if (key.empty()) return;
                       expectations_.creationObserved(key);
                       queue_.add(key);
                     },
                     [this, ownerKey](const json& oldPod, const json& pod) {
                       const std::string key = ownerKey(pod);
                       if (key.empty()) return;
                       if (isTerminating(pod) && !isTerminating(oldPod)) {
                         expectations_.deletionObserved(key, uidOf(pod));
                       }
                       queue_.add(key);
                     },
                     [this, ownerKey](const json& pod) {
                       const std::string key = ownerKey(pod);
                       if (key.empty()) return;
                       expectations_.deletionObserved(key, uidOf(pod));
                       queue_.add(key);
                     }});
  // Only what decides eligibility: a node's heartbeats do not wake every DaemonSet.
  auto placement = [](const json& node) {
    return json{{"labels", valueAt(node, "/metadata/labels", json())},
                {"taints", valueAt(node, "/spec/taints", json())}};
  };
  nodes_.addHandlers({[this](const json&) { enqueueAll(); },
                      [this, placement](const json& a, const json& b) {
                        if (placement(a) != placement(b)) enqueueAll();
                      },
                      [this](const json&) { enqueueAll(); }});
  revisions_.addHandlers({[this, ownerKey](const json& r) {
                            if (auto k = ownerKey(r); !k.empty()) queue_.add(k);
                          },
                          nullptr,
                          [this, ownerKey](const json& r) {
                            if (auto k = ownerKey(r); !k.empty()) queue_.add(k);
                          }});
}

DaemonSetController::~DaemonSetController() { stop(); }
void DaemonSetController::start() { workers_.start(options_.workers); }
void DaemonSetController::stop() { workers_.stop(); }

void DaemonSetController::enqueueAll() {
  for (const json& ds : daemonSets_.list()) queue_.add(client::objectKey(ds));
}

void DaemonSetController::recordEvent(const json& ds, const std::string& type,
                                      const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  json involved = ds;
  involved["kind"] = "DaemonSet";
  involved["apiVersion"] = "apps/v1";
  options_.events->record(involved, type, reason, message);
}

Result<std::string> DaemonSetController::syncRevisions(const json& ds,
                                                       const std::vector<json>& pods) {
  std::set<std::string> inUse;
  for (const auto& p : pods) inUse.insert(revisionHashOf(p));
  auto revisions = syncControllerRevisions(rest_, revisions_, ds, kDaemonSets, inUse);
  if (!revisions.ok()) return revisions.status();
  return revisionHashOf(revisions->current);
}

Status DaemonSetController::createPod(const json& ds, const std::string& key,
                                      const std::string& node, const std::string& hash) {
  const json templ = valueAt(ds, "/spec/template", json::object());
  const json meta = templ.value("metadata", json::object());
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", json::object()}};
  pod["metadata"]["generateName"] = nameOf(ds) + "-";
  pod["metadata"]["namespace"] = namespaceOf(ds);
  pod["metadata"]["labels"] = meta.value("labels", json::object());
  pod["metadata"]["labels"][kControllerRevisionHashLabel] = hash;
  pod["metadata"]["labels"]["pod-template-generation"] =
      std::to_string(valueAt(ds, "/metadata/generation", int64_t{1}));
  if (meta.contains("annotations")) pod["metadata"]["annotations"] = meta["annotations"];
  pod["metadata"]["ownerReferences"] = json::array({makeControllerRef(ds)});
  pod["spec"] = templ.value("spec", json::object());
  // The node, by required affinity on its name: the scheduler binds it there.
  pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {"nodeSelectorTerms",
       json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                   {"operator", "In"},
                                                   {"values", json::array({node})}}})}}})}};
  pod["spec"]["tolerations"] = withDaemonTolerations(pod["spec"]);
  auto r = rest_.create(kPods, namespaceOf(ds), pod);
  if (r.ok()) {
    recordEvent(ds, "Normal", "SuccessfulCreate", "Created pod: " + nameOf(*r));
    return Status::Ok();
  }
  expectations_.creationObserved(key);
  recordEvent(ds, "Warning", "FailedCreate", "Error creating: " + r.status().message());
  return r.status();
}

Status DaemonSetController::deletePods(const json& ds, const std::string& key,
                                       const std::vector<json>& pods) {
  if (pods.empty()) return Status::Ok();
  std::set<std::string> uids;
  for (const auto& p : pods) uids.insert(uidOf(p));
  expectations_.expectDeletions(key, uids);
  Status first = Status::Ok();
  for (const auto& p : pods) {
    auto r = rest_.remove(kPods, namespaceOf(p), nameOf(p));
    if (r.ok()) {
      recordEvent(ds, "Normal", "SuccessfulDelete", "Deleted pod: " + nameOf(p));
      continue;
    }
    expectations_.deletionObserved(key, uidOf(p));
    if (r.status().code() != 404 && first.ok()) first = r.status();
  }
  return first;
}

Status DaemonSetController::sync(const std::string& key) {
  auto cached = daemonSets_.get(key);
  if (!cached) {
    expectations_.erase(key);
    return Status::Ok();
  }
  const json& ds = *cached;
  if (isTerminating(ds)) return Status::Ok();  // the garbage collector takes the pods
  const std::string ns = namespaceOf(ds), uid = uidOf(ds);
  const json spec = ds.value("spec", json::object());
  const json templ = spec.value("template", json::object());
  const int64_t minReady = spec.value("minReadySeconds", int64_t{0});
  const auto now = options_.now();
  // Before the pods are read (see the Job controller): never act on a snapshot older than an
  // observed creation or deletion.
  const bool expectationsMet = expectations_.satisfied(key);

  std::vector<json> owned;
  for (const auto& pod : pods_.byIndexShared("namespace", ns)) {
    auto ref = controllerRef(*pod);
    if (ref && ref->value("uid", "") == uid && !isTerminating(*pod)) owned.push_back(*pod);
  }
  auto hash = syncRevisions(ds, owned);
  if (!hash.ok()) return hash.status();

  std::map<std::string, std::vector<json>> byNode;
  for (auto& pod : owned) byNode[daemonPodNode(pod)].push_back(pod);
  auto available = [&](const json& p) { return isPodAvailable(p, minReady, now); };

  struct NodeState {
    std::string name;
    const json* current = nullptr;  // the pod of the current template, if any
    const json* old = nullptr;      // a pod of an older template, if any
  };
  std::vector<NodeState> eligible;
  std::vector<json> toDelete;
  std::vector<std::string> toCreate;
  int64_t misscheduled = 0;
  const std::vector<json> nodes = nodes_.list();
  std::set<std::string> known;
  std::map<std::string, std::vector<json>> sorted;
  for (const json& node : nodes) {
    const std::string name = nameOf(node);
    known.insert(name);
    auto it = byNode.find(name);
    std::vector<json> pods = it == byNode.end() ? std::vector<json>{} : it->second;
    if (!daemonPodShouldRun(templ, node, /*newPod=*/pods.empty())) {
      if (!pods.empty()) ++misscheduled;
      toDelete.insert(toDelete.end(), pods.begin(), pods.end());
      continue;
    }
    std::vector<json> current, old;
    for (auto& p : pods) {
      if (isFinished(p)) {
        recordEvent(ds, "Warning", "FailedDaemonPod",
                    "Found failed daemon pod " + ns + "/" + nameOf(p) + " on node " + name +
                        ", will try to kill it");
        toDelete.push_back(p);
      } else {
        (revisionHashOf(p) == *hash ? current : old).push_back(p);
      }
    }
    auto byAge = [](const json& a, const json& b) { return createdAt(a) < createdAt(b); };
    std::sort(current.begin(), current.end(), byAge);
    std::sort(old.begin(), old.end(), byAge);
    for (size_t i = 1; i < current.size(); ++i) toDelete.push_back(current[i]);
    for (size_t i = 1; i < old.size(); ++i) toDelete.push_back(old[i]);
    current.resize(std::min<size_t>(current.size(), 1));
    old.resize(std::min<size_t>(old.size(), 1));
    if (!current.empty() && !old.empty() && available(current[0])) {
      toDelete.push_back(old[0]);  // a surge finished: the new pod serves
      old.clear();
    }
    if (current.empty() && old.empty()) toCreate.push_back(name);
    auto& keep = sorted[name];
    keep = current;
    keep.insert(keep.end(), old.begin(), old.end());
    NodeState st{name};
    if (!current.empty()) st.current = &keep[0];
    if (!old.empty()) st.old = &keep[current.empty() ? 0 : 1];
    eligible.push_back(st);
  }
  for (const auto& [node, pods] : byNode) {
    if (!known.count(node)) toDelete.insert(toDelete.end(), pods.begin(), pods.end());
  }

  const json strategy = spec.value("updateStrategy", json::object());
  if (strategy.value("type", "RollingUpdate") == "RollingUpdate") {
    const int64_t desired = static_cast<int64_t>(eligible.size());
    const json rolling = strategy.value("rollingUpdate", json::object());
    auto unavailableMax = scaledValue(rolling.value("maxUnavailable", json(1)), desired, true);
    auto surgeMax = scaledValue(rolling.value("maxSurge", json(0)), desired, true);
    int64_t maxUnavailable = unavailableMax.ok() ? *unavailableMax : 1;
    const int64_t maxSurge = surgeMax.ok() ? *surgeMax : 0;
    if (maxUnavailable == 0 && maxSurge == 0) maxUnavailable = 1;
    std::set<std::string> deleting;
    for (const auto& p : toDelete) deleting.insert(uidOf(p));
    auto servedBy = [&](const json* p) { return p && !deleting.count(uidOf(*p)) && available(*p); };
    if (maxSurge == 0) {
      int64_t unavailable = 0;
      for (const auto& st : eligible) unavailable += !(servedBy(st.current) || servedBy(st.old));
      for (const auto& st : eligible) {
        if (!st.old || st.current || deleting.count(uidOf(*st.old))) continue;
        if (!available(*st.old)) {
          toDelete.push_back(*st.old);  // already down: replacing it costs nothing
        } else if (unavailable < maxUnavailable) {
          toDelete.push_back(*st.old);
          ++unavailable;
        }
      }
    } else {
      int64_t surging = 0;
      for (const auto& st : eligible) surging += st.old && st.current;
      for (const auto& st : eligible) {
        if (!st.old || st.current || deleting.count(uidOf(*st.old))) continue;
        if (!available(*st.old)) {
          toDelete.push_back(*st.old);
        } else if (surging < maxSurge) {
          toCreate.push_back(st.name);
          ++surging;
        }
      }
    }
  }

  Status firstError = Status::Ok();
  if (expectationsMet) {
    if (toDelete.size() > static_cast<size_t>(options_.burst)) toDelete.resize(options_.burst);
    if (toCreate.size() > static_cast<size_t>(options_.burst)) toCreate.resize(options_.burst);
    if (Status s = deletePods(ds, key, toDelete); !s.ok()) firstError = s;
    expectations_.expectCreations(key, static_cast<int>(toCreate.size()));
    for (const auto& node : toCreate) {
      Status s = createPod(ds, key, node, *hash);
      if (!s.ok() && firstError.ok()) firstError = s;
    }
  }

  // Status, as kubectl rollout status reads it.
  int64_t current = 0, ready = 0, availableCount = 0, updated = 0;
  std::optional<WallClock::time_point> nextAvailable;
  for (const auto& st : eligible) {
    const json* pods[] = {st.current, st.old};
    bool anyReady = false, anyAvailable = false;
    for (const json* p : pods) {
      if (!p) continue;
      anyReady |= isPodReady(*p);
      anyAvailable |= available(*p);
      if (isPodReady(*p) && !available(*p)) {
        if (auto at = podAvailableAt(*p, minReady); at && (!nextAvailable || *at < *nextAvailable))
          nextAvailable = at;
      }
    }
    current += st.current || st.old;
    ready += anyReady;
    availableCount += anyAvailable;
    updated += st.current != nullptr;
  }
  if (nextAvailable) {
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(*nextAvailable - now);
    queue_.addAfter(key,
                    std::max(wait, std::chrono::milliseconds(0)) + std::chrono::milliseconds(100));
  }
  const json oldStatus = ds.value("status", json::object());
  json status = oldStatus.is_object() ? oldStatus : json::object();
  const int64_t desired = static_cast<int64_t>(eligible.size());
  status["desiredNumberScheduled"] = desired;
  status["currentNumberScheduled"] = current;
  status["numberMisscheduled"] = misscheduled;
  status["numberReady"] = ready;
  status["numberAvailable"] = availableCount;
  status["updatedNumberScheduled"] = updated;
  status["observedGeneration"] = valueAt(ds, "/metadata/generation", int64_t{1});
  if (desired - availableCount > 0) {
    status["numberUnavailable"] = desired - availableCount;
  } else {
    status.erase("numberUnavailable");
  }
  if (status != oldStatus) {
    json next = ds;
    next["status"] = status;
    auto r = rest_.update(kDaemonSets, next, "status");
    if (!r.ok() && r.status().code() != 404) return r.status();
  }
  return firstError;
}

}  // namespace minik8s::controllers
