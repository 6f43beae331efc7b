#include "controllers/podgc/pod_gc_controller.h"

#include <algorithm>
#include <set>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::nodeNameOf;

namespace {

namespace res = client::resources;

constexpr char kGcKey[] = "gc";  // the one key: "run a pass"

std::string str(const json& obj, const json::json_pointer& ptr) {
  return obj.value(ptr, std::string());
}
std::string phaseOf(const json& pod) { return str(pod, "/status/phase"_json_pointer); }

bool isTerminated(const json& pod) {
  const std::string phase = phaseOf(pod);
  return phase == "Succeeded" || phase == "Failed";
}

bool isEvicted(const json& pod) {
  return phaseOf(pod) == "Failed" && str(pod, "/status/reason"_json_pointer) == "Evicted";
}

// Oldest first by creationTimestamp (RFC 3339 in UTC compares as text), then name.
bool createdBefore(const json& a, const json& b) {
  const std::string ca = str(a, "/metadata/creationTimestamp"_json_pointer);
  const std::string cb = str(b, "/metadata/creationTimestamp"_json_pointer);
  auto ta = parseRfc3339(ca), tb = parseRfc3339(cb);
  if (ta && tb && *ta != *tb) return *ta < *tb;
  if (!ta || !tb) {
    if (ca != cb) return ca < cb;
  }
  return nameOf(a) < nameOf(b);
}

bool hasTaint(const json& node, const std::string& key) {
  const json taints = valueAt(node, "/spec/taints", json::array());
  if (!taints.is_array()) return false;
  return std::any_of(taints.begin(), taints.end(),
                     [&](const json& t) { return t.is_object() && t.value("key", "") == key; });
}

}  // namespace

std::vector<json> terminatedPodsToDelete(const std::vector<json>& pods, int threshold) {
  if (threshold <= 0) return {};
  std::vector<json> terminated;
  for (const auto& p : pods) {
    if (isTerminated(p)) terminated.push_back(p);
  }
  if (terminated.size() <= static_cast<size_t>(threshold)) return {};
  std::sort(terminated.begin(), terminated.end(), [](const json& a, const json& b) {
    const bool ea = isEvicted(a), eb = isEvicted(b);
    if (ea != eb) return ea;
    return createdBefore(a, b);
  });
  terminated.resize(terminated.size() - static_cast<size_t>(threshold));
  return terminated;
}

PodGcController::PodGcController(client::RestClient& rest, client::Informer& pods,
                                 client::Informer& nodes, PodGcOptions options)
    : rest_(rest),
      pods_(pods),
      nodes_(nodes),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_,
          [this](const std::string&) {
            Status s = gc();
            queue_.addAfter(kGcKey, options_.gcPeriod);  // the periodic pass
            return s;
          },
          "pod-gc") {
  nodes_.addHandlers({
      [this](const json& node) {
        if (hasTaint(node, kTaintNodeOutOfService)) queue_.add(kGcKey);
      },
      [this](const json&, const json& node) {
        if (hasTaint(node, kTaintNodeOutOfService)) queue_.add(kGcKey);
      },
      [this](const json&) { queue_.add(kGcKey); },  // its pods are orphans now
  });
  auto podChanged = [this](const json& pod) {
    if (needsAttention(pod)) queue_.add(kGcKey);
  };
  pods_.addHandlers(
      {podChanged, [podChanged](const json&, const json& pod) { podChanged(pod); }, nullptr});
}

PodGcController::~PodGcController() { stop(); }

void PodGcController::start() {
  queue_.add(kGcKey);
  workers_.start(1);
}

void PodGcController::stop() { workers_.stop(); }

bool PodGcController::needsAttention(const json& pod) const {
  const std::string node = nodeNameOf(pod);
  if (node.empty()) return isTerminating(pod);
  if (!nodes_.hasSynced()) return false;  // the first pass after the sync looks at everything
  if (!nodes_.get(node)) return true;     // an orphan: start its quarantine now
  return isTerminating(pod) && outOfServiceAndNotReady(node);
}

bool PodGcController::outOfServiceAndNotReady(const std::string& nodeName) const {
  auto node = nodes_.get(nodeName);
  return node && !isNodeReady(*node) && hasTaint(*node, kTaintNodeOutOfService);
}

Status PodGcController::gc() {
  std::lock_guard pass(passMu_);
  if (!pods_.hasSynced() || !nodes_.hasSynced()) return Status::Ok();
  // The cached pods themselves: a pass copies none but the few it acts on.
  const std::vector<client::SharedObject> pods = pods_.listShared();
  Status first;
  for (Status s : {gcTerminated(pods), gcOutOfService(pods), gcOrphaned(pods),
                   gcUnscheduledTerminating(pods)}) {
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status PodGcController::gcTerminated(const std::vector<client::SharedObject>& pods) {
  std::vector<json> terminated;
  for (const auto& pod : pods) {
    if (isTerminated(*pod)) terminated.push_back(*pod);
  }
  const auto victims = terminatedPodsToDelete(terminated, options_.terminatedPodThreshold);
  if (victims.empty()) return Status::Ok();
  LOG_INFO("pod-gc: {} terminated pods above the threshold of {}: deleting the oldest",
           victims.size(), options_.terminatedPodThreshold);
  Status first;
  for (const auto& pod : victims) {
    Status s = markFailedAndDelete(pod, nullptr);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status PodGcController::gcOutOfService(const std::vector<client::SharedObject>& pods) {
  std::vector<json> victims;
  for (const auto& pod : pods) {
    const std::string node = nodeNameOf(*pod);
    if (!node.empty() && isTerminating(*pod) && outOfServiceAndNotReady(node)) {
      victims.push_back(*pod);
    }
  }
  std::sort(victims.begin(), victims.end(), createdBefore);
  Status first;
  for (const auto& pod : victims) {
    LOG_INFO("pod-gc: force-deleting terminating pod {}/{} on out-of-service node {}",
             namespaceOf(pod), nameOf(pod), nodeNameOf(pod));
    Status s = markFailedAndDelete(pod, nullptr);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status PodGcController::gcOrphaned(const std::vector<client::SharedObject>& pods) {
  const auto now = options_.clock->now();
  std::set<std::string> missing;
  for (const auto& pod : pods) {
    const std::string node = nodeNameOf(*pod);
    if (!node.empty() && !missing.count(node) && !nodes_.get(node)) missing.insert(node);
  }
  // Quarantines end for nodes that came back or whose pods went; new ones start.
  for (auto it = quarantine_.begin(); it != quarantine_.end();) {
    it = missing.count(it->first) ? std::next(it) : quarantine_.erase(it);
  }
  for (const auto& node : missing) {
    if (quarantine_.emplace(node, now + options_.quarantine).second) {
      queue_.addAfter(kGcKey, options_.quarantine);  // a pass when it ends
    }
  }
  // Nodes past their quarantine: the cache may lag, so ask the server.
  std::set<std::string> gone;
  Status first;
  for (auto it = quarantine_.begin(); it != quarantine_.end();) {
    if (it->second > now) {
      ++it;
      continue;
    }
    auto live = rest_.get(res::kNodes, "", it->first);
    if (live.ok()) {
      it = quarantine_.erase(it);  // it exists after all: a later pass starts over
    } else if (live.status().code() == 404) {
      gone.insert(it->first);
      ++it;
    } else {
      if (first.ok()) first = live.status();
      ++it;
    }
  }
  if (gone.empty()) return first;
  const json condition = {{"type", "DisruptionTarget"},
                          {"status", "True"},
                          {"reason", "DeletionByPodGC"},
                          {"message", "PodGC: node no longer exists"},
                          {"lastTransitionTime", formatRfc3339(options_.now())}};
  std::set<std::string> failedNodes;
  for (const auto& shared : pods) {
    const json& pod = *shared;
    const std::string node = nodeNameOf(pod);
    if (!gone.count(node)) continue;
    LOG_INFO("pod-gc: force-deleting pod {}/{}: its node {} no longer exists", namespaceOf(pod),
             nameOf(pod), node);
    Status s = markFailedAndDelete(pod, condition);
    if (!s.ok()) {
      failedNodes.insert(node);
      if (first.ok()) first = s;
    }
  }
  // A node whose pods are all gone leaves quarantine; one with failures is retried at once.
  for (const auto& node : gone) {
    if (!failedNodes.count(node)) quarantine_.erase(node);
  }
  return first;
}

Status PodGcController::gcUnscheduledTerminating(const std::vector<client::SharedObject>& pods) {
  Status first;
  for (const auto& shared : pods) {
    const json& pod = *shared;
    if (!nodeNameOf(pod).empty() || !isTerminating(pod)) continue;
    LOG_INFO("pod-gc: force-deleting unscheduled terminating pod {}/{}", namespaceOf(pod),
             nameOf(pod));
    Status s = markFailedAndDelete(pod, nullptr);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status PodGcController::markFailedAndDelete(const json& pod, const json& condition) {
  const std::string ns = namespaceOf(pod), name = nameOf(pod);
  if (!isTerminated(pod)) {
    json status = {{"phase", "Failed"}};
    if (!condition.is_null()) status["conditions"] = json::array({condition});
    auto patched = rest_.patch(res::kPods, ns, name, {{"status", status}}, "strategic", "status");
    if (!patched.ok()) {
      if (patched.status().code() == 404) return Status::Ok();
      // Deleting matters more than the status on the way out.
      LOG_WARN("pod-gc: cannot mark pod {}/{} Failed: {}", ns, name, patched.status().message());
    }
  }
  json options = {{"gracePeriodSeconds", 0}};
  const std::string uid = str(pod, "/metadata/uid"_json_pointer);
  if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
  auto removed = rest_.remove(res::kPods, ns, name, options);
  if (removed.ok() || removed.status().code() == 404) return Status::Ok();
  // Another pod of the same name (a new uid) is not ours to delete.
  if (removed.status().code() == 409 && !uid.empty()) {
    auto live = rest_.get(res::kPods, ns, name);
    if (!live.ok() || str(*live, "/metadata/uid"_json_pointer) != uid) return Status::Ok();
  }
  return removed.status();
}

}  // namespace minik8s::controllers
