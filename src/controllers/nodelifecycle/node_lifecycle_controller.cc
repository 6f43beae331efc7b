#include "controllers/nodelifecycle/node_lifecycle_controller.h"

#include <algorithm>
#include <set>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::controllers {

using api::nameOf;

namespace {

namespace res = client::resources;

constexpr const char* kNodeConditions[] = {"Ready", "MemoryPressure", "DiskPressure",
                                           "PIDPressure"};

json conditionOf(const json& node, const std::string& type) {
  const json conds = valueAt(node, "/status/conditions", json::array());
  if (!conds.is_array()) return nullptr;
  for (const auto& c : conds) {
    if (c.is_object() && c.value("type", "") == type) return c;
  }
  return nullptr;
}

// Node list items carry no kind; the Event's involvedObject needs it.
json nodeReference(const std::string& name, const std::string& uid) {
  return {{"kind", "Node"}, {"apiVersion", "v1"}, {"metadata", {{"name", name}, {"uid", uid}}}};
}

bool managedTaint(const json& taint) {
  const std::string key = taint.value("key", "");
  const std::string effect = taint.value("effect", "");
  return (key == kTaintNodeUnreachable || key == kTaintNodeNotReady) &&
         (effect == "NoSchedule" || effect == "NoExecute");
}

}  // namespace

bool tolerates(const json& toleration, const json& taint) {
  if (!toleration.is_object() || !taint.is_object()) return false;
  const std::string effect = toleration.value("effect", "");
  if (!effect.empty() && effect != taint.value("effect", "")) return false;
  const std::string key = toleration.value("key", "");
  const std::string op = toleration.value("operator", "Equal");
  if (op == "Exists") return key.empty() || key == taint.value("key", "");
  return key == taint.value("key", "") && toleration.value("value", "") == taint.value("value", "");
}

json effectiveTolerations(const json& pod, std::chrono::seconds defaultTolerationSeconds) {
  json tolerations = valueAt(pod, "/spec/tolerations", json::array());
  if (!tolerations.is_array()) tolerations = json::array();
  for (const char* key : {kTaintNodeNotReady, kTaintNodeUnreachable}) {
    json taint = {{"key", key}, {"effect", "NoExecute"}};
    bool tolerated = std::any_of(tolerations.begin(), tolerations.end(),
                                 [&](const json& t) { return tolerates(t, taint); });
    if (!tolerated) {
      tolerations.push_back({{"key", key},
                             {"operator", "Exists"},
                             {"effect", "NoExecute"},
                             {"tolerationSeconds", defaultTolerationSeconds.count()}});
    }
  }
  return tolerations;
}

std::optional<WallClock::time_point> evictionTime(const json& pod, const json& taints,
                                                  std::chrono::seconds defaultTolerationSeconds,
                                                  WallClock::time_point now) {
  const json tolerations = effectiveTolerations(pod, defaultTolerationSeconds);
  std::optional<int64_t> minSeconds;  // nullopt: tolerated forever
  std::optional<WallClock::time_point> since;
  bool any = false;
  for (const auto& taint : taints) {
    if (!taint.is_object() || taint.value("effect", "") != "NoExecute") continue;
    any = true;
    auto used = std::find_if(tolerations.begin(), tolerations.end(),
                             [&](const json& t) { return tolerates(t, taint); });
    if (used == tolerations.end()) return WallClock::time_point::min();
    if (used->contains("tolerationSeconds") && (*used)["tolerationSeconds"].is_number()) {
      int64_t s = std::max<int64_t>((*used)["tolerationSeconds"].get<int64_t>(), 0);
      minSeconds = minSeconds ? std::min(*minSeconds, s) : s;
    }
    auto added = parseRfc3339(taint.value("timeAdded", std::string()));
    WallClock::time_point t = added ? *added : now;
    since = since ? std::min(*since, t) : t;
  }
  if (!any || !minSeconds) return std::nullopt;
  if (*minSeconds == 0) return WallClock::time_point::min();
  return *since + std::chrono::seconds(*minSeconds);
}

NodeLifecycleController::NodeLifecycleController(client::RestClient& rest, client::Informer& nodes,
                                                 client::Informer& pods, client::Informer& leases,
                                                 NodeLifecycleOptions options)
    : rest_(rest), nodes_(nodes), pods_(pods), leases_(leases), options_(std::move(options)) {
  pods_.addIndex("nodeName", [](const json& p) {
    std::string node = valueAt(p, "/spec/nodeName", std::string());
    return node.empty() ? std::vector<std::string>{} : std::vector<std::string>{node};
  });
}

NodeLifecycleController::~NodeLifecycleController() { stop(); }

void NodeLifecycleController::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, options_.monitorPeriod, [this] { return stopping_; })) {
      lock.unlock();
      Status s = monitorNodeHealth();
      if (!s.ok()) LOG_WARN("node-lifecycle: {}", s.message());
      lock.lock();
    }
  });
}

void NodeLifecycleController::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status NodeLifecycleController::monitorNodeHealth() {
  std::lock_guard pass(passMu_);
  const WallClock::time_point now = options_.now();
  Status first;
  std::set<std::string> present;
  for (const auto& node : nodes_.list()) {
    present.insert(nameOf(node));
    Status s = syncNode(node, now);
    if (!s.ok() && first.ok()) first = s;
  }
  for (auto it = health_.begin(); it != health_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    record(nodeReference(it->first, it->second.uid), "Normal", "RemovingNode",
           "Node " + it->first + " event: Removing Node " + it->first + " from Controller");
    it = health_.erase(it);
  }
  return first;
}

Status NodeLifecycleController::syncNode(const json& cachedNode, WallClock::time_point now) {
  const std::string name = nameOf(cachedNode);
  json node = cachedNode;
  const json ready = conditionOf(node, "Ready");
  // A heartbeat is any change of what the agent writes, seen on our own clock.
  Health& h = health_[name];
  const std::string heartbeat =
      ready.is_object() ? ready.value("lastHeartbeatTime", std::string()) : std::string();
  std::string renew;
  if (auto lease = leases_.get("kube-node-lease/" + name)) {
    renew = valueAt(*lease, "/spec/renewTime", std::string());
  }
  if (!h.seen) {
    h.uid = valueAt(node, "/metadata/uid", std::string());
    record(nodeReference(name, h.uid), "Normal", "RegisteredNode",
           "Node " + name + " event: Registered Node " + name + " in Controller");
  }
  if (!h.seen || heartbeat != h.readyHeartbeat || renew != h.leaseRenew) {
    h.seen = true;
    h.readyHeartbeat = heartbeat;
    h.leaseRenew = renew;
    h.probeTime = now;
  }
  const auto grace = ready.is_object() ? options_.gracePeriod : options_.startupGracePeriod;
  std::string readyStatus = ready.is_object() ? ready.value("status", "Unknown") : "Unknown";

  if (now - h.probeTime > grace && readyStatus != "Unknown") {
    const std::string nowText = formatRfc3339(now);
    json conds = valueAt(node, "/status/conditions", json::array());
    if (!conds.is_array()) conds = json::array();
    for (const char* type : kNodeConditions) {
      auto it = std::find_if(conds.begin(), conds.end(),
                             [&](const json& c) { return c.value("type", "") == type; });
      if (it == conds.end()) {
        conds.push_back(
            {{"type", type},
             {"status", "Unknown"},
             {"reason", "NodeStatusNeverUpdated"},
             {"message", "Kubelet never posted node status."},
             {"lastHeartbeatTime", valueAt(node, "/metadata/creationTimestamp", nowText)},
             {"lastTransitionTime", nowText}});
      } else if (it->value("status", "") != "Unknown") {
        (*it)["status"] = "Unknown";
        (*it)["reason"] = "NodeStatusUnknown";
        (*it)["message"] = "Kubelet stopped posting node status.";
        (*it)["lastTransitionTime"] = nowText;
      }
    }
    node["status"]["conditions"] = conds;
    auto updated = rest_.update(res::kNodes, node, "status");
    if (!updated.ok()) return updated.status();
    node = *updated;
    // Kubernetes reports the change only when it takes a Ready node away.
    if (readyStatus == "True") {
      record(nodeReference(name, h.uid), "Normal", "NodeNotReady",
             "Node " + name + " status is now: NodeNotReady");
    }
    readyStatus = "Unknown";
    LOG_WARN("node-lifecycle: node {} stopped posting status for {} s: Ready=Unknown", name,
             std::chrono::duration_cast<std::chrono::seconds>(now - h.probeTime).count());
    Status s = markPodsNotReady(name, now);
    if (!s.ok()) return s;
  }
  if (Status s = updateTaints(node, readyStatus, now); !s.ok()) return s;
  evictPods(node, now);
  return Status::Ok();
}

Status NodeLifecycleController::markPodsNotReady(const std::string& nodeName,
                                                 WallClock::time_point now) {
  const std::string nowText = formatRfc3339(now);
  for (auto pod : pods_.byIndex("nodeName", nodeName)) {
    if (!pod.contains("status") || !pod["status"].contains("conditions")) continue;
    bool changed = false;
    for (auto& c : pod["status"]["conditions"]) {
      if (c.value("type", "") == "Ready" && c.value("status", "") != "False") {
        c["status"] = "False";
        c["lastTransitionTime"] = nowText;
        changed = true;
      }
    }
    if (!changed) continue;
    auto r = rest_.update(res::kPods, pod, "status");
    if (r.ok()) record(pod, "Warning", "NodeNotReady", "Node is not ready");
    if (!r.ok() && r.status().code() != 404 && r.status().code() != 409) return r.status();
  }
  return Status::Ok();
}

Status NodeLifecycleController::updateTaints(const json& node, const std::string& readyStatus,
                                             WallClock::time_point now) {
  const std::string wantKey = readyStatus == "Unknown" ? kTaintNodeUnreachable
                              : readyStatus == "False" ? kTaintNodeNotReady
                                                       : "";
  const json current = valueAt(node, "/spec/taints", json::array());
  json taints = json::array();
  bool changed = false;
  bool haveNoSchedule = false, haveNoExecute = false;
  for (const auto& t : current.is_array() ? current : json::array()) {
    if (managedTaint(t) && t.value("key", "") != wantKey) {
      changed = true;  // a taint of a state the node is no longer in
      continue;
    }
    if (managedTaint(t)) {
      (t.value("effect", "") == "NoSchedule" ? haveNoSchedule : haveNoExecute) = true;
    }
    taints.push_back(t);
  }
  if (!wantKey.empty() && !haveNoSchedule) {
    taints.push_back({{"key", wantKey}, {"effect", "NoSchedule"}});
    changed = true;
  }
  if (!wantKey.empty() && !haveNoExecute) {
    taints.push_back(
        {{"key", wantKey}, {"effect", "NoExecute"}, {"timeAdded", formatRfc3339(now)}});
    changed = true;
  }
  if (!changed) return Status::Ok();
  // A merge patch of the whole list, guarded by the resourceVersion we read.
  json patch = {{"metadata", {{"resourceVersion", node["metadata"]["resourceVersion"]}}},
                {"spec", {{"taints", taints.empty() ? json(nullptr) : taints}}}};
  auto r = rest_.patch(res::kNodes, "", nameOf(node), patch, "merge");
  if (!r.ok()) return r.status();
  LOG_INFO("node-lifecycle: node {} taints now {}", nameOf(node),
           taints.empty() ? std::string("<none>") : taints.dump());
  return Status::Ok();
}

void NodeLifecycleController::evictPods(const json& node, WallClock::time_point now) {
  const json taints = valueAt(node, "/spec/taints", json::array());
  if (!taints.is_array() || taints.empty()) return;
  json noExecute = json::array();
  for (const auto& t : taints) {
    if (t.value("effect", "") == "NoExecute") noExecute.push_back(t);
  }
  if (noExecute.empty()) return;
  for (const auto& cached : pods_.byIndexShared("nodeName", nameOf(node))) {
    const json& pod = *cached;
    if (isTerminating(pod)) continue;
    auto at = evictionTime(pod, noExecute, options_.defaultTolerationSeconds, now);
    if (!at || *at > now) continue;
    const std::string ns = valueAt(pod, "/metadata/namespace", std::string());
    record(pod, "Normal", "TaintManagerEviction",
           "Marking for deletion Pod " + ns + "/" + nameOf(pod));
    auto r = rest_.remove(res::kPods, ns, nameOf(pod));
    if (r.ok() || r.status().code() == 404) {
      LOG_INFO("node-lifecycle: evicted pod {}/{} from node {} (NoExecute taint)", ns, nameOf(pod),
               nameOf(node));
    } else {
      LOG_WARN("node-lifecycle: cannot evict pod {}/{}: {}", ns, nameOf(pod), r.status().message());
    }
  }
}

void NodeLifecycleController::record(const json& object, const std::string& type,
                                     const std::string& reason, const std::string& message) {
  if (options_.events) options_.events->record(object, type, reason, message);
}

}  // namespace minik8s::controllers
