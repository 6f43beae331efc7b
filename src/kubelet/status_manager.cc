#include "kubelet/status_manager.h"

#include "common/logging.h"
#include "kubelet/pod_util.h"

namespace minik8s::kubelet {

bool StatusManager::sameStatus(const json& a, const json& b) {
  // Only the fields the kubelet owns: other writers (the scheduler's PodScheduled condition,
  // nominatedNodeName) must not make every sync write.
  for (const char* f :
       {"phase", "conditions", "containerStatuses", "initContainerStatuses", "podIP", "podIPs",
        "hostIP", "startTime", "qosClass", "reason", "message"}) {
    json va = a.contains(f) ? a[f] : json();
    json vb = b.contains(f) ? b[f] : json();
    if (std::string(f) == "conditions" && va.is_array() && vb.is_array()) {
      // Compare as sets keyed by type.
      std::map<std::string, json> ma, mb;
      for (const auto& c : va) ma[c.value("type", "")] = c;
      for (const auto& c : vb) mb[c.value("type", "")] = c;
      if (ma != mb) return false;
      continue;
    }
    if (va != vb) return false;
  }
  return true;
}

void StatusManager::forgetPod(const std::string& podUid) {
  std::lock_guard lock(mu_);
  written_.erase(podUid);
}

Status StatusManager::setPodStatus(const json& pod, const json& status) {
  const std::string uid = podUid(pod);
  {
    std::lock_guard lock(mu_);
    auto it = written_.find(uid);
    const json& last = it != written_.end() ? it->second : pod.value("status", json::object());
    if (sameStatus(last, status)) return Status::Ok();
  }
  // The first write starts from the pod as the caller has it (the informer's copy, usually the
  // newest: one round trip); a Conflict means it was not, and the pod is read again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    json updated;
    if (attempt == 0) {
      updated = pod;
    } else {
      auto fresh = client_.get(client::resources::kPods, podNamespace(pod), podName(pod));
      if (!fresh.ok()) return fresh.status();
      if (podUid(*fresh) != uid) return Status::NotFound("pods", podName(pod));
      updated = std::move(*fresh);
    }
    json merged = updated.value("status", json::object());
    for (const auto& [k, v] : status.items()) merged[k] = v;
    // Keep conditions other components own (e.g. readiness gates), replace ours.
    if (updated.contains("/status/conditions"_json_pointer)) {
      json conds = status.value("conditions", json::array());
      for (const auto& c : updated.at("/status/conditions"_json_pointer)) {
        bool ours = false;
        for (const auto& o : conds) ours |= o.value("type", "") == c.value("type", "");
        if (!ours) conds.push_back(c);
      }
      merged["conditions"] = conds;
    }
    updated["status"] = merged;
    auto r = client_.update(client::resources::kPods, updated, "status");
    if (r.ok()) {
      std::lock_guard lock(mu_);
      written_[uid] = status;
      LOG_DEBUG("pod {}: status {} written", podKey(pod), status.value("phase", ""));
      return Status::Ok();
    }
    if (r.status().reason() != "Conflict") return r.status();
  }
  return Status::Conflict("pods", podName(pod));
}

}  // namespace minik8s::kubelet
