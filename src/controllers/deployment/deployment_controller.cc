#include "controllers/deployment/deployment_controller.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/object_meta.h"
#include "api/selector.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "controllers/deployment/rolling_update.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::uidOf;

namespace {

using client::resources::kDeployments;
using client::resources::kReplicaSets;

int64_t specReplicas(const json& o) { return valueAt(o, "/spec/replicas", int64_t{1}); }
int64_t statusInt(const json& o, const char* field) {
  const json s = o.value("status", json::object());
  return s.is_object() ? s.value(field, int64_t{0}) : 0;
}
int64_t revisionOf(const json& rs) {
  const json a = valueAt(rs, "/metadata/annotations", json::object());
  try {
    return std::stoll(a.value(kRevisionAnnotation, std::string("0")));
  } catch (const std::exception&) {
    return 0;
  }
}

// Null members mean "unset" (kubectl rollout undo sends "creationTimestamp": null).
void dropNulls(json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it->is_null()) {
        it = j.erase(it);
      } else {
        dropNulls(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& e : j) dropNulls(e);
  }
}

// The template without null members and the pod-template-hash label, for comparing an RS's
// template with the Deployment's and for hashing.
json withoutHash(json templ) {
  dropNulls(templ);
  if (templ.contains("metadata") && templ["metadata"].contains("labels") &&
      templ["metadata"]["labels"].is_object()) {
    templ["metadata"]["labels"].erase(kPodTemplateHashLabel);
    if (templ["metadata"]["labels"].empty()) templ["metadata"].erase("labels");
  }
  return templ;
}

bool isNewReplicaSet(const json& rs, const json& d, const std::string& hash) {
  if (labelsOf(rs).value(kPodTemplateHashLabel, "") == hash) return true;
  return withoutHash(valueAt(rs, "/spec/template", json::object())) ==
         withoutHash(valueAt(d, "/spec/template", json::object()));
}

json findCondition(const json& status, const std::string& type) {
  for (const auto& c : status.value("conditions", json::array())) {
    if (c.value("type", "") == type) return c;
  }
  return nullptr;
}

// Replaces the condition of the same type; keeps lastTransitionTime while status is unchanged.
void setCondition(json& status, json cond) {
  json conds = json::array();
  for (const auto& c : status.value("conditions", json::array())) {
    if (c.value("type", "") != cond["type"]) {
      conds.push_back(c);
    } else if (c.value("status", "") == cond["status"]) {
      cond["lastTransitionTime"] = c.value("lastTransitionTime", cond["lastTransitionTime"]);
    }
  }
  conds.push_back(std::move(cond));
  // Kubernetes lists Available before Progressing.
  std::sort(conds.begin(), conds.end(),
            [](const json& a, const json& b) { return a.value("type", "") < b.value("type", ""); });
  status["conditions"] = std::move(conds);
}

json condition(const std::string& type, const std::string& st, const std::string& reason,
               const std::string& message, const std::string& now) {
  return {{"type", type},          {"status", st},
          {"lastUpdateTime", now}, {"lastTransitionTime", now},
          {"reason", reason},      {"message", message}};
}

}  // namespace

DeploymentController::DeploymentController(client::RestClient& rest, client::Informer& deployments,
                                           client::Informer& replicaSets, client::Informer& pods,
                                           DeploymentControllerOptions options)
    : rest_(rest),
      deployments_(deployments),
      replicaSets_(replicaSets),
      pods_(pods),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "deployment") {
  auto enqueue = [this](const json& d) { queue_.add(client::objectKey(d)); };
  deployments_.addHandlers(
      {enqueue, [enqueue](const json&, const json& d) { enqueue(d); }, enqueue});
  replicaSets_.addHandlers({[this](const json& rs) { enqueueForReplicaSet(rs); },
                            [this](const json& old, const json& rs) {
                              enqueueForReplicaSet(old);
                              enqueueForReplicaSet(rs);
                            },
                            [this](const json& rs) { enqueueForReplicaSet(rs); }});
  // Recreate waits for the old pods to be gone: their deletion is worth a look.
  pods_.addHandlers({nullptr, nullptr, [this](const json& pod) {
                       auto ref = controllerRef(pod);
                       if (!ref || ref->value("kind", "") != "ReplicaSet") return;
                       if (auto rs =
                               replicaSets_.get(namespaceOf(pod) + "/" + ref->value("name", ""))) {
                         enqueueForReplicaSet(*rs);
                       }
                     }});
}

DeploymentController::~DeploymentController() { stop(); }
void DeploymentController::start() { workers_.start(options_.workers); }
void DeploymentController::stop() { workers_.stop(); }

void DeploymentController::enqueueForReplicaSet(const json& rs) {
  auto ref = controllerRef(rs);
  if (ref) {
    if (ref->value("kind", "") == "Deployment")
      queue_.add(namespaceOf(rs) + "/" + ref->value("name", ""));
    return;
  }
  for (const json& d : deployments_.list()) {
    if (namespaceOf(d) != namespaceOf(rs)) continue;
    auto sel = api::LabelSelector::fromJson(valueAt(d, "/spec/selector", json()));
    if (sel.ok() && !sel->empty() && sel->matches(labelsOf(rs))) queue_.add(client::objectKey(d));
  }
}

Result<std::vector<json>> DeploymentController::claimReplicaSets(const json& d) {
  const std::string ns = namespaceOf(d), uid = uidOf(d);
  auto selector = api::LabelSelector::fromJson(valueAt(d, "/spec/selector", json()));
  if (!selector.ok()) return selector.status();
  std::vector<json> owned;
  for (json& rs : replicaSets_.list()) {
    if (namespaceOf(rs) != ns) continue;
    auto ref = controllerRef(rs);
    const bool matches = !selector->empty() && selector->matches(labelsOf(rs));
    if (ref && ref->value("uid", "") == uid) {
      if (matches || isTerminating(d)) {
        owned.push_back(std::move(rs));
        continue;
      }
      json patch = {{"metadata", {{"ownerReferences", ownerRefsWithout(rs, uid)}}}};
      auto r = rest_.patch(kReplicaSets, ns, nameOf(rs), patch);
      if (!r.ok() && r.status().code() != 404) return r.status();
      continue;
    }
    if (ref || !matches || isTerminating(d) || isTerminating(rs)) continue;
    json refs = valueAt(rs, "/metadata/ownerReferences", json::array());
    refs.push_back(makeControllerRef(d));
    auto r = rest_.patch(kReplicaSets, ns, nameOf(rs), {{"metadata", {{"ownerReferences", refs}}}});
    if (!r.ok()) {
      if (r.status().code() == 404) continue;
      return r.status();
    }
    owned.push_back(*r);
  }
  return owned;
}

Result<json> DeploymentController::createNewReplicaSet(const json& d, const std::string& hash,
                                                       int64_t replicas, int64_t revision) {
  json templ = valueAt(d, "/spec/template", json::object());
  templ["metadata"]["labels"][kPodTemplateHashLabel] = hash;
  json selector = valueAt(d, "/spec/selector", json::object());
  selector["matchLabels"][kPodTemplateHashLabel] = hash;
  json annotations = {{kRevisionAnnotation, std::to_string(revision)}};
  const json dAnn = valueAt(d, "/metadata/annotations", json::object());
  if (dAnn.contains("kubernetes.io/change-cause")) {
    annotations["kubernetes.io/change-cause"] = dAnn["kubernetes.io/change-cause"];
  }
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata",
              {{"name", nameOf(d) + "-" + hash},
               {"namespace", namespaceOf(d)},
               {"labels", templ["metadata"]["labels"]},
               {"annotations", annotations},
               {"ownerReferences", json::array({makeControllerRef(d)})}}},
             {"spec",
              {{"replicas", replicas},
               {"minReadySeconds", valueAt(d, "/spec/minReadySeconds", int64_t{0})},
               {"selector", selector},
               {"template", templ}}}};
  auto created = rest_.create(kReplicaSets, namespaceOf(d), rs);
  if (created.ok() || created.status().reason() != "AlreadyExists") return created;
  // Same name: ours with an equal template is fine; anything else is a hash collision, which a
  // bumped status.collisionCount resolves on the next sync.
  auto existing = rest_.get(kReplicaSets, namespaceOf(d), nameOf(rs));
  if (!existing.ok()) return existing.status();
  auto ref = controllerRef(*existing);
  if (ref && ref->value("uid", "") == uidOf(d) && isNewReplicaSet(*existing, d, "")) {
    return existing;
  }
  json updated = d;
  updated["status"]["collisionCount"] = valueAt(d, "/status/collisionCount", int64_t{0}) + 1;
  auto r = rest_.update(kDeployments, updated, "status");
  if (!r.ok()) return r.status();
  return Status::ConflictMessage("pod-template-hash collision for " + nameOf(rs));
}

Status DeploymentController::scaleReplicaSet(json& rs, int64_t replicas, const json& d,
                                             int64_t maxSurge) {
  const std::string desired = std::to_string(specReplicas(d));
  const std::string maxReplicas = std::to_string(specReplicas(d) + maxSurge);
  const json ann = valueAt(rs, "/metadata/annotations", json::object());
  const int64_t minReady = valueAt(d, "/spec/minReadySeconds", int64_t{0});
  if (specReplicas(rs) == replicas &&
      ann.value("deployment.kubernetes.io/desired-replicas", "") == desired &&
      ann.value("deployment.kubernetes.io/max-replicas", "") == maxReplicas &&
      valueAt(rs, "/spec/minReadySeconds", int64_t{0}) == minReady) {
    return Status::Ok();
  }
  json patch = {{"metadata",
                 {{"annotations",
                   {{"deployment.kubernetes.io/desired-replicas", desired},
                    {"deployment.kubernetes.io/max-replicas", maxReplicas}}}}},
                {"spec", {{"replicas", replicas}, {"minReadySeconds", minReady}}}};
  auto r = rest_.patch(kReplicaSets, namespaceOf(rs), nameOf(rs), patch);
  if (!r.ok()) return r.status();
  const int64_t before = specReplicas(rs);
  rs = *r;
  if (options_.events && before != replicas) {
    json involved = d;  // informer items carry no kind
    involved["kind"] = "Deployment";
    involved["apiVersion"] = "apps/v1";
    options_.events->record(
        involved, "Normal", "ScalingReplicaSet",
        fmt::format("Scaled {} replica set {} from {} to {}", replicas > before ? "up" : "down",
                    nameOf(rs), before, replicas));
  }
  return Status::Ok();
}

bool DeploymentController::oldPodsRunning(const json& d, const std::vector<json>& oldSets) {
  std::set<std::string> uids;
  for (const auto& rs : oldSets) {
    if (statusInt(rs, "replicas") > 0) return true;
    uids.insert(uidOf(rs));
  }
  for (const auto& cached : pods_.byIndexShared("namespace", namespaceOf(d))) {
    const json& pod = *cached;
    auto ref = controllerRef(pod);
    const std::string phase = valueAt(pod, "/status/phase", std::string());
    if (ref && uids.count(ref->value("uid", "")) && phase != "Succeeded" && phase != "Failed") {
      return true;
    }
  }
  return false;
}

void DeploymentController::cleanupOldReplicaSets(const json& d, const std::vector<json>& oldSets) {
  const int64_t limit = valueAt(d, "/spec/revisionHistoryLimit", int64_t{10});
  std::vector<json> idle;
  for (const auto& rs : oldSets) {
    if (specReplicas(rs) == 0 && statusInt(rs, "replicas") == 0 && !isTerminating(rs)) {
      idle.push_back(rs);
    }
  }
  if (static_cast<int64_t>(idle.size()) <= limit) return;
  std::sort(idle.begin(), idle.end(),
            [](const json& a, const json& b) { return revisionOf(a) < revisionOf(b); });
  const size_t extra = idle.size() - static_cast<size_t>(limit);
  for (size_t i = 0; i < extra; ++i) {
    auto r = rest_.remove(kReplicaSets, namespaceOf(idle[i]), nameOf(idle[i]));
    if (!r.ok() && r.status().code() != 404) {
      LOG_WARN("deployment {}: deleting old ReplicaSet {}: {}", client::objectKey(d),
               nameOf(idle[i]), r.status().toString());
    }
  }
}

Status DeploymentController::sync(const std::string& key) {
  auto cached = deployments_.get(key);
  if (!cached) return Status::Ok();
  json d = *cached;
  auto claimed = claimReplicaSets(d);
  if (!claimed.ok()) return claimed.status().code() == 400 ? Status::Ok() : claimed.status();
  const int64_t replicas = specReplicas(d);
  const std::string strategy = valueAt(d, "/spec/strategy/type", std::string("RollingUpdate"));
  Fenceposts fp{0, 0};
  if (strategy == "RollingUpdate") {
    auto f = resolveFenceposts(
        valueAt(d, "/spec/strategy/rollingUpdate/maxSurge", json("25%")),
        valueAt(d, "/spec/strategy/rollingUpdate/maxUnavailable", json("25%")), replicas);
    if (!f.ok()) return Status::Ok();  // validation should have refused it
    fp = *f;
  }
  const std::string hash =
      podTemplateHash(withoutHash(valueAt(d, "/spec/template", json::object())),
                      valueAt(d, "/status/collisionCount", int64_t{0}));
  std::optional<json> newRs;
  std::vector<json> oldSets;
  for (json& rs : *claimed) {
    if (!newRs && isNewReplicaSet(rs, d, hash)) {
      newRs = std::move(rs);
    } else {
      oldSets.push_back(std::move(rs));
    }
  }
  // Oldest first: rollouts shrink the oldest ReplicaSets first.
  std::sort(oldSets.begin(), oldSets.end(), [](const json& a, const json& b) {
    return valueAt(a, "/metadata/creationTimestamp", std::string()) <
           valueAt(b, "/metadata/creationTimestamp", std::string());
  });

  auto collect = [&] {
    std::vector<json> all = oldSets;
    if (newRs) all.push_back(*newRs);
    return all;
  };
  if (isTerminating(d))
    return updateStatus(d, newRs ? &*newRs : nullptr, collect(), fp.maxUnavailable);

  // Revisions: the new ReplicaSet is always one past the newest old one.
  int64_t maxOld = 0;
  for (const auto& rs : oldSets) maxOld = std::max(maxOld, revisionOf(rs));
  const int64_t revision = maxOld + 1;
  const bool paused = valueAt(d, "/spec/paused", false);

  if (paused) {
    // Paused: no rollout, but scaling still applies to whichever ReplicaSet is active.
    json* active = newRs ? &*newRs : nullptr;
    if (!active) {
      for (auto& rs : oldSets) {
        if (specReplicas(rs) > 0) active = &rs;
      }
    }
    int activeCount = 0;
    for (const auto& rs : collect()) activeCount += specReplicas(rs) > 0;
    if (active && activeCount <= 1) {
      Status s = scaleReplicaSet(*active, replicas, d, fp.maxSurge);
      if (!s.ok()) return s;
    }
    return updateStatus(d, newRs ? &*newRs : nullptr, collect(), fp.maxUnavailable);
  }

  if (newRs && revisionOf(*newRs) < revision) {
    auto r = rest_.patch(
        kReplicaSets, namespaceOf(*newRs), nameOf(*newRs),
        {{"metadata", {{"annotations", {{kRevisionAnnotation, std::to_string(revision)}}}}}});
    if (!r.ok()) return r.status();
    newRs = *r;
  }

  if (strategy == "Recreate") {
    bool scaledDown = false;
    for (auto& rs : oldSets) {
      if (specReplicas(rs) == 0) continue;
      Status s = scaleReplicaSet(rs, 0, d, 0);
      if (!s.ok()) return s;
      scaledDown = true;
    }
    if (scaledDown || oldPodsRunning(d, oldSets)) {
      return updateStatus(d, newRs ? &*newRs : nullptr, collect(), fp.maxUnavailable);
    }
    if (!newRs) {
      auto created = createNewReplicaSet(d, hash, replicas, revision);
      if (!created.ok()) return created.status();
      newRs = *created;
    } else {
      Status s = scaleReplicaSet(*newRs, replicas, d, 0);
      if (!s.ok()) return s;
    }
  } else {
    // An old ReplicaSet scaled down may still have its pods for a moment (status.replicas lags
    // spec until its controller deleted them): count what it has, so the new one never grows
    // past maxSurge in pods, not only in spec.
    int64_t currentPods = 0;
    for (const auto& rs : oldSets)
      currentPods += std::max(specReplicas(rs), statusInt(rs, "replicas"));
    if (!newRs) {
      const int64_t start =
          oldSets.empty() ? replicas : newReplicaSetReplicas(replicas, fp.maxSurge, currentPods, 0);
      auto created = createNewReplicaSet(d, hash, start, revision);
      if (!created.ok()) return created.status();
      newRs = *created;
    } else {
      int64_t target = specReplicas(*newRs);
      if (target > replicas) {
        target = replicas;
      } else if (target < replicas) {
        target = newReplicaSetReplicas(replicas, fp.maxSurge, currentPods + target, target);
      }
      Status s = scaleReplicaSet(*newRs, target, d, fp.maxSurge);
      if (!s.ok()) return s;
    }
    std::vector<ReplicaSetCounts> oldCounts;
    for (const auto& rs : oldSets) {
      oldCounts.push_back({specReplicas(rs), statusInt(rs, "availableReplicas")});
    }
    auto targets = scaleDownOldReplicaSets(
        oldCounts, {specReplicas(*newRs), statusInt(*newRs, "availableReplicas")}, replicas,
        fp.maxUnavailable);
    for (size_t i = 0; i < oldSets.size(); ++i) {
      if (targets[i] == specReplicas(oldSets[i])) continue;
      Status s = scaleReplicaSet(oldSets[i], targets[i], d, fp.maxSurge);
      if (!s.ok()) return s;
    }
  }

  // The Deployment carries the revision of its new ReplicaSet.
  const json dAnn = valueAt(d, "/metadata/annotations", json::object());
  const std::string newRevision = std::to_string(std::max(revision, revisionOf(*newRs)));
  if (dAnn.value(kRevisionAnnotation, "") != newRevision) {
    auto r = rest_.patch(kDeployments, namespaceOf(d), nameOf(d),
                         {{"metadata", {{"annotations", {{kRevisionAnnotation, newRevision}}}}}});
    if (!r.ok()) return r.status();
    d = *r;
  }
  bool complete =
      specReplicas(*newRs) == replicas && statusInt(*newRs, "availableReplicas") >= replicas;
  for (const auto& rs : oldSets) complete = complete && statusInt(rs, "replicas") == 0;
  if (complete) cleanupOldReplicaSets(d, oldSets);
  return updateStatus(d, &*newRs, collect(), fp.maxUnavailable);
}

Status DeploymentController::updateStatus(const json& d, const json* newRs,
                                          const std::vector<json>& all, int64_t maxUnavailable) {
  const json old = d.value("status", json::object());
  json st = old;
  int64_t total = 0, specTotal = 0, ready = 0, available = 0;
  for (const auto& rs : all) {
    total += statusInt(rs, "replicas");
    specTotal += specReplicas(rs);
    ready += statusInt(rs, "readyReplicas");
    available += statusInt(rs, "availableReplicas");
  }
  const int64_t replicas = specReplicas(d);
  const int64_t updated = newRs ? statusInt(*newRs, "replicas") : 0;
  st["observedGeneration"] = valueAt(d, "/metadata/generation", int64_t{1});
  st["replicas"] = total;
  st["updatedReplicas"] = updated;
  st["readyReplicas"] = ready;
  st["availableReplicas"] = available;
  st["unavailableReplicas"] = std::max<int64_t>(specTotal - available, 0);
  for (const char* zeroless : {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                               "unavailableReplicas"}) {
    if (st[zeroless] == 0) st.erase(zeroless);  // Kubernetes omits zero counts
  }

  const auto nowTp = options_.now();
  const std::string now = formatRfc3339(nowTp);
  if (available >= replicas - maxUnavailable) {
    setCondition(st, condition("Available", "True", "MinimumReplicasAvailable",
                               "Deployment has minimum availability.", now));
  } else {
    setCondition(st, condition("Available", "False", "MinimumReplicasUnavailable",
                               "Deployment does not have minimum availability.", now));
  }
  const std::string rsName = newRs ? nameOf(*newRs) : "";
  json progressing = findCondition(old, "Progressing");
  const bool paused = valueAt(d, "/spec/paused", false);
  const bool complete = newRs && updated == replicas && total == updated && available >= replicas;
  const auto deadline = valueAt(d, "/spec/progressDeadlineSeconds", int64_t{600});
  std::optional<std::chrono::seconds> recheck;
  if (paused) {
    setCondition(
        st, condition("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now));
  } else if (complete) {
    if (progressing.is_null() || progressing.value("reason", "") != "NewReplicaSetAvailable") {
      setCondition(st,
                   condition("Progressing", "True", "NewReplicaSetAvailable",
                             "ReplicaSet \"" + rsName + "\" has successfully progressed.", now));
    }
  } else {
    const bool moved = progressing.is_null() ||
                       progressing.value("reason", "") == "NewReplicaSetAvailable" ||
                       progressing.value("reason", "") == "DeploymentPaused" ||
                       updated > old.value("updatedReplicas", int64_t{0}) ||
                       total < old.value("replicas", int64_t{0}) ||
                       ready > old.value("readyReplicas", int64_t{0}) ||
                       available > old.value("availableReplicas", int64_t{0});
    auto last = parseRfc3339(progressing.is_null() ? "" : progressing.value("lastUpdateTime", ""));
    if (moved || !last) {
      setCondition(st, condition("Progressing", "True", "ReplicaSetUpdated",
                                 "ReplicaSet \"" + rsName + "\" is progressing.", now));
      recheck = std::chrono::seconds(deadline);
    } else if (progressing.value("reason", "") != "ProgressDeadlineExceeded") {
      auto due = *last + std::chrono::seconds(deadline);
      if (due <= nowTp) {
        setCondition(st,
                     condition("Progressing", "False", "ProgressDeadlineExceeded",
                               "ReplicaSet \"" + rsName + "\" has timed out progressing.", now));
      } else {
        recheck =
            std::chrono::duration_cast<std::chrono::seconds>(due - nowTp) + std::chrono::seconds(1);
      }
    }
  }
  if (recheck) queue_.addAfter(client::objectKey(d), *recheck);
  // A ReplicaSet's ReplicaFailure (the new one's first) shows on the Deployment, as in
  // Kubernetes: `kubectl get deploy -o yaml` then says why its pods are missing.
  json failure = newRs ? findCondition(newRs->value("status", json::object()), "ReplicaFailure")
                       : json(nullptr);
  for (const auto& rs : all) {
    if (!failure.is_null()) break;
    failure = findCondition(rs.value("status", json::object()), "ReplicaFailure");
  }
  if (!failure.is_null()) {
    setCondition(st, condition("ReplicaFailure", failure.value("status", "True"),
                               failure.value("reason", ""), failure.value("message", ""),
                               failure.value("lastTransitionTime", now)));
  } else if (!findCondition(st, "ReplicaFailure").is_null()) {
    json kept = json::array();
    for (const auto& c : st["conditions"]) {
      if (c.value("type", "") != "ReplicaFailure") kept.push_back(c);
    }
    st["conditions"] = std::move(kept);
  }

  // Only write when something other than timestamps changed.
  auto strip = [](json s) {
    for (auto& c : s["conditions"]) {
      c.erase("lastUpdateTime");
      c.erase("lastTransitionTime");
    }
    return s;
  };
  if (strip(st) == strip(old)) return Status::Ok();
  json updatedD = d;
  updatedD["status"] = st;
  auto r = rest_.update(kDeployments, updatedD, "status");
  if (!r.ok() && r.status().code() == 404) return Status::Ok();
  return r.status();
}

}  // namespace minik8s::controllers
