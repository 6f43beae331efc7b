#include "controllers/replicaset/replicaset_controller.h"

#include <algorithm>

#include "api/object_meta.h"
#include "api/selector.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::uidOf;

namespace {

using client::resources::kPods;
using client::resources::kReplicaSets;

int phaseRank(const json& pod) {
  const std::string phase = valueAt(pod, "/status/phase", std::string());
  if (phase == "Pending" || phase.empty()) return 0;
  if (phase == "Unknown") return 1;
  if (phase == "Running") return 2;
  return 3;
}

int restarts(const json& pod) {
  int n = 0;
  const json cs = valueAt(pod, "/status/containerStatuses", json::array());
  if (cs.is_array()) {
    for (const auto& c : cs) n = std::max(n, c.value("restartCount", 0));
  }
  return n;
}

std::string readySince(const json& pod) {
  const json conds = valueAt(pod, "/status/conditions", json::array());
  if (conds.is_array()) {
    for (const auto& c : conds) {
      if (c.value("type", "") == "Ready") return c.value("lastTransitionTime", "");
    }
  }
  return "";
}

bool templateLabelsMatch(const json& pod, const json& rs) {
  const json want = valueAt(rs, "/spec/template/metadata/labels", json::object());
  const json have = labelsOf(pod);
  for (auto it = want.begin(); it != want.end(); ++it) {
    if (!have.contains(it.key()) || have[it.key()] != it.value()) return false;
  }
  return true;
}

}  // namespace

bool podDeletionLess(const json& a, const json& b) {
  const bool aUnscheduled = valueAt(a, "/spec/nodeName", std::string()).empty();
  const bool bUnscheduled = valueAt(b, "/spec/nodeName", std::string()).empty();
  if (aUnscheduled != bUnscheduled) return aUnscheduled;
  if (phaseRank(a) != phaseRank(b)) return phaseRank(a) < phaseRank(b);
  if (isPodReady(a) != isPodReady(b)) return !isPodReady(a);
  if (isPodReady(a)) {
    // RFC 3339 in UTC compares as text: the later transition has been ready for less time.
    const std::string ra = readySince(a), rb = readySince(b);
    if (ra != rb) return ra > rb;
  }
  if (restarts(a) != restarts(b)) return restarts(a) > restarts(b);
  const std::string ca = valueAt(a, "/metadata/creationTimestamp", std::string());
  const std::string cb = valueAt(b, "/metadata/creationTimestamp", std::string());
  if (ca != cb) return ca > cb;
  return nameOf(a) > nameOf(b);
}

void addNamespaceIndex(client::Informer& informer) {
  informer.addIndex(client::kNamespaceIndex, client::namespaceIndex());
}

ReplicaSetController::ReplicaSetController(client::RestClient& rest, client::Informer& replicaSets,
                                           client::Informer& pods,
                                           ReplicaSetControllerOptions options)
    : rest_(rest),
      replicaSets_(replicaSets),
      pods_(pods),
      options_(std::move(options)),
      queue_(*options_.clock),
      expectations_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "replicaset") {
  replicaSets_.addHandlers(
      {[this](const json& rs) { queue_.add(client::objectKey(rs)); },
       [this](const json&, const json& rs) { queue_.add(client::objectKey(rs)); },
       [this](const json& rs) {
         expectations_.erase(client::objectKey(rs));
         queue_.add(client::objectKey(rs));
       }});
  pods_.addHandlers({[this](const json& pod) {
                       auto ref = controllerRef(pod);
                       if (ref && ref->value("kind", "") == "ReplicaSet") {
                         expectations_.creationObserved(namespaceOf(pod) + "/" +
                                                        ref->value("name", ""));
                       }
                       if (isTerminating(pod) && ref) {
                         expectations_.deletionObserved(
                             namespaceOf(pod) + "/" + ref->value("name", ""), uidOf(pod));
                       }
                       enqueueOwner(pod);
                     },
                     [this](const json& oldPod, const json& pod) {
                       auto ref = controllerRef(pod);
                       if (isTerminating(pod) && !isTerminating(oldPod) && ref) {
                         expectations_.deletionObserved(
                             namespaceOf(pod) + "/" + ref->value("name", ""), uidOf(pod));
                       }
                       auto oldRef = controllerRef(oldPod);
                       if (oldRef && (!ref || ref->value("uid", "") != oldRef->value("uid", ""))) {
                         enqueueOwner(oldPod);
                       }
                       enqueueOwner(pod);
                     },
                     [this](const json& pod) {
                       auto ref = controllerRef(pod);
                       if (ref && ref->value("kind", "") == "ReplicaSet") {
                         expectations_.deletionObserved(
                             namespaceOf(pod) + "/" + ref->value("name", ""), uidOf(pod));
                       }
                       enqueueOwner(pod);
                     }});
}

ReplicaSetController::~ReplicaSetController() { stop(); }

void ReplicaSetController::start() { workers_.start(options_.workers); }
void ReplicaSetController::stop() { workers_.stop(); }

void ReplicaSetController::enqueueOwner(const json& pod) {
  auto ref = controllerRef(pod);
  if (ref) {
    if (ref->value("kind", "") == "ReplicaSet")
      queue_.add(namespaceOf(pod) + "/" + ref->value("name", ""));
    return;
  }
  enqueueMatching(pod);
}

// An orphan may be adopted by any ReplicaSet of its namespace whose selector matches.
void ReplicaSetController::enqueueMatching(const json& pod) {
  if (!isPodActive(pod)) return;
  for (const json& rs : replicaSets_.list()) {
    if (namespaceOf(rs) != namespaceOf(pod)) continue;
    auto sel = api::LabelSelector::fromJson(valueAt(rs, "/spec/selector", json()));
    if (sel.ok() && !sel->empty() && sel->matches(labelsOf(pod))) {
      queue_.add(client::objectKey(rs));
    }
  }
}

Status ReplicaSetController::sync(const std::string& key) {
  auto cached = replicaSets_.get(key);
  if (!cached) {
    expectations_.erase(key);
    return Status::Ok();
  }
  const json& rs = *cached;
  const std::string ns = namespaceOf(rs), uid = uidOf(rs);
  // Before the pods are read: a creation or deletion observed after the snapshot must not let
  // this sync act on a snapshot that does not show it.
  const bool expectationsMet = expectations_.satisfied(key);
  auto selector = api::LabelSelector::fromJson(valueAt(rs, "/spec/selector", json()));
  if (!selector.ok()) return Status::Ok();  // invalid selector: nothing we can do until fixed
  const bool deleting = isTerminating(rs);

  // Claim: owned pods the selector matches, adopt matching orphans, release the others.
  std::vector<json> owned;
  bool adoptionChecked = false;
  for (const auto& cached : pods_.byIndexShared("namespace", ns)) {
    const json& pod = *cached;
    auto ref = controllerRef(pod);
    const bool matches = !selector->empty() && selector->matches(labelsOf(pod));
    if (ref && ref->value("uid", "") == uid) {
      if (matches || deleting) {
        owned.push_back(pod);
        continue;
      }
      json patch = {
          {"metadata", {{"ownerReferences", ownerRefsWithout(pod, uid)}, {"uid", uidOf(pod)}}}};
      auto r = rest_.patch(kPods, ns, nameOf(pod), patch);
      if (!r.ok() && r.status().code() != 404) return r.status();
      continue;
    }
    if (ref || !matches || deleting || !isPodActive(pod)) continue;
    if (!adoptionChecked) {
      // Never adopt on behalf of a ReplicaSet that was deleted and recreated meanwhile.
      auto fresh = rest_.get(kReplicaSets, ns, nameOf(rs));
      if (!fresh.ok() || uidOf(*fresh) != uid || isTerminating(*fresh)) return Status::Ok();
      adoptionChecked = true;
    }
    json refs = valueAt(pod, "/metadata/ownerReferences", json::array());
    refs.push_back(makeControllerRef(rs));
    json patch = {{"metadata", {{"ownerReferences", refs}, {"uid", uidOf(pod)}}}};
    auto r = rest_.patch(kPods, ns, nameOf(pod), patch);
    if (!r.ok()) {
      if (r.status().code() == 404) continue;
      return r.status();
    }
    owned.push_back(*r);
  }

  std::vector<json> active;
  for (const json& p : owned) {
    if (isPodActive(p)) active.push_back(p);
  }
  Status manage = Status::Ok();
  if (!deleting && expectationsMet) manage = managePods(rs, key, active);
  Status st = updateStatus(rs, owned, manage);
  return manage.ok() ? st : manage;
}

void ReplicaSetController::recordEvent(const json& rs, const std::string& type,
                                       const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  json involved = rs;  // informer items carry no kind
  involved["kind"] = "ReplicaSet";
  involved["apiVersion"] = "apps/v1";
  options_.events->record(involved, type, reason, message);
}

Status ReplicaSetController::managePods(const json& rs, const std::string& key,
                                        std::vector<json>& active) {
  const std::string ns = namespaceOf(rs);
  const int64_t want = valueAt(rs, "/spec/replicas", int64_t{1});
  const int64_t diff = static_cast<int64_t>(active.size()) - want;
  if (diff < 0) {
    const int n = static_cast<int>(std::min<int64_t>(-diff, options_.burstReplicas));
    expectations_.expectCreations(key, n);
    json templ = valueAt(rs, "/spec/template", json::object());
    json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", json::object()}};
    json meta = templ.value("metadata", json::object());
    pod["metadata"]["generateName"] = nameOf(rs) + "-";
    pod["metadata"]["namespace"] = ns;
    if (meta.contains("labels")) pod["metadata"]["labels"] = meta["labels"];
    if (meta.contains("annotations")) pod["metadata"]["annotations"] = meta["annotations"];
    pod["metadata"]["ownerReferences"] = json::array({makeControllerRef(rs)});
    pod["spec"] = templ.value("spec", json::object());
    Status firstError = Status::Ok();
    for (int i = 0; i < n; ++i) {
      auto r = rest_.create(kPods, ns, pod);
      recordEvent(
          rs, r.ok() ? "Normal" : "Warning", r.ok() ? "SuccessfulCreate" : "FailedCreate",
          r.ok() ? "Created pod: " + nameOf(*r) : "Error creating: " + r.status().message());
      if (!r.ok()) {
        // The informer will never see this pod: lower the expectation ourselves.
        expectations_.creationObserved(key);
        if (firstError.ok()) firstError = r.status();
        if (r.status().code() == 403 || r.status().code() == 422) {
          for (int j = i + 1; j < n; ++j) expectations_.creationObserved(key);
          break;
        }
      }
    }
    if (!firstError.ok()) LOG_WARN("replicaset {}: creating pods: {}", key, firstError.toString());
    return firstError;
  }
  if (diff > 0) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(diff, options_.burstReplicas));
    std::sort(active.begin(), active.end(), podDeletionLess);
    std::set<std::string> uids;
    for (size_t i = 0; i < n; ++i) uids.insert(uidOf(active[i]));
    expectations_.expectDeletions(key, uids);
    Status firstError = Status::Ok();
    for (size_t i = 0; i < n; ++i) {
      auto r = rest_.remove(kPods, ns, nameOf(active[i]));
      if (r.ok())
        recordEvent(rs, "Normal", "SuccessfulDelete", "Deleted pod: " + nameOf(active[i]));
      if (!r.ok()) {
        expectations_.deletionObserved(key, uidOf(active[i]));
        if (r.status().code() != 404 && firstError.ok()) firstError = r.status();
      }
    }
    return firstError;
  }
  return Status::Ok();
}

Status ReplicaSetController::updateStatus(const json& rs, const std::vector<json>& owned,
                                          const Status& manageError) {
  const int64_t minReady = valueAt(rs, "/spec/minReadySeconds", int64_t{0});
  const auto now = options_.now();
  int64_t replicas = 0, fullyLabeled = 0, ready = 0, available = 0;
  std::optional<WallClock::time_point> nextAvailable;
  for (const json& p : owned) {
    if (!isPodActive(p)) continue;
    ++replicas;
    if (templateLabelsMatch(p, rs)) ++fullyLabeled;
    if (!isPodReady(p)) continue;
    ++ready;
    if (isPodAvailable(p, minReady, now)) {
      ++available;
    } else if (auto at = podAvailableAt(p, minReady)) {
      if (!nextAvailable || *at < *nextAvailable) nextAvailable = at;
    }
  }
  if (nextAvailable) {
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(*nextAvailable - now);
    queue_.addAfter(client::objectKey(rs),
                    std::max(wait, std::chrono::milliseconds(0)) + std::chrono::milliseconds(100));
  }
  json status = rs.value("status", json::object());
  json wanted = status;
  wanted["replicas"] = replicas;
  wanted["fullyLabeledReplicas"] = fullyLabeled;
  wanted["readyReplicas"] = ready;
  wanted["availableReplicas"] = available;
  wanted["observedGeneration"] = valueAt(rs, "/metadata/generation", int64_t{1});
  // ReplicaFailure says why pods could not be created or deleted (a Pod Security refusal, a
  // quota): set on the first failure, kept while failures go on, removed after a good sync.
  json conditions = json::array();
  bool failing = false;
  for (const auto& c : status.value("conditions", json::array())) {
    if (c.value("type", "") == "ReplicaFailure") {
      failing = true;
      if (manageError.ok()) continue;
    }
    conditions.push_back(c);
  }
  if (!manageError.ok() && !failing) {
    const int64_t want = valueAt(rs, "/spec/replicas", int64_t{1});
    conditions.push_back({{"type", "ReplicaFailure"},
                          {"status", "True"},
                          {"lastTransitionTime", formatRfc3339(now)},
                          {"reason", replicas < want ? "FailedCreate" : "FailedDelete"},
                          {"message", manageError.message()}});
  }
  if (conditions.empty()) {
    wanted.erase("conditions");
  } else {
    wanted["conditions"] = std::move(conditions);
  }
  if (wanted == status) return Status::Ok();
  json updated = rs;
  updated["status"] = wanted;
  auto r = rest_.update(kReplicaSets, updated, "status");
  if (!r.ok() && r.status().code() == 404) return Status::Ok();
  return r.status();
}

}  // namespace minik8s::controllers
