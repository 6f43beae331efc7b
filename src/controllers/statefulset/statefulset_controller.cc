#include "controllers/statefulset/statefulset_controller.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::stringAt;
using api::uidOf;

const client::Resource kStatefulSets{"apps", "v1", "statefulsets", true};

namespace {

using client::resources::kPods;
const client::Resource kPersistentVolumeClaimsOfSets{"", "v1", "persistentvolumeclaims", true};
constexpr char kPodNameLabel[] = "statefulset.kubernetes.io/pod-name";
constexpr char kPodIndexLabel[] = "apps.kubernetes.io/pod-index";

bool isFinished(const json& pod) {
  const std::string phase = stringAt(pod, "/status/phase");
  return phase == "Failed" || phase == "Succeeded";
}
bool isRunningAndReady(const json& pod) {
  return stringAt(pod, "/status/phase") == "Running" && isPodReady(pod) && !isTerminating(pod);
}

}  // namespace

int64_t statefulPodOrdinal(const std::string& setName, const std::string& podName) {
  if (podName.size() <= setName.size() + 1 || podName.compare(0, setName.size(), setName) != 0 ||
      podName[setName.size()] != '-') {
    return -1;
  }
  const std::string digits = podName.substr(setName.size() + 1);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos ||
      (digits.size() > 1 && digits[0] == '0')) {
    return -1;
  }
  return std::stoll(digits);
}

StatefulSetController::StatefulSetController(client::RestClient& rest,
                                             client::Informer& statefulSets, client::Informer& pods,
                                             client::Informer& revisions,
                                             StatefulSetControllerOptions options)
    : rest_(rest),
      statefulSets_(statefulSets),
      pods_(pods),
      revisions_(revisions),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "statefulset") {
  auto enqueue = [this](const json& set) { queue_.add(client::objectKey(set)); };
  statefulSets_.addHandlers(
      {enqueue, [enqueue](const json&, const json& set) { enqueue(set); }, enqueue});
  auto enqueueOwner = [this](const json& o) {
    auto ref = controllerRef(o);
    if (ref && ref->value("kind", "") == "StatefulSet")
      queue_.add(namespaceOf(o) + "/" + ref->value("name", ""));
  };
  pods_.addHandlers({enqueueOwner,
                     [enqueueOwner](const json& oldPod, const json& pod) {
                       enqueueOwner(oldPod);
                       enqueueOwner(pod);
                     },
                     enqueueOwner});
  revisions_.addHandlers({enqueueOwner, nullptr, enqueueOwner});
}

StatefulSetController::~StatefulSetController() { stop(); }
void StatefulSetController::start() { workers_.start(options_.workers); }
void StatefulSetController::stop() { workers_.stop(); }

void StatefulSetController::recordEvent(const json& set, const std::string& type,
                                        const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  json involved = set;
  involved["kind"] = "StatefulSet";
  involved["apiVersion"] = "apps/v1";
  options_.events->record(involved, type, reason, message);
}

Status StatefulSetController::createPod(const json& set, const json& revision, int64_t ordinal) {
  const std::string setName = nameOf(set), podName = setName + "-" + std::to_string(ordinal);
  const json templ = revisionTemplate(revision);
  const json meta = templ.value("metadata", json::object());
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", json::object()}};
  pod["metadata"]["name"] = podName;
  pod["metadata"]["namespace"] = namespaceOf(set);
  pod["metadata"]["labels"] = meta.value("labels", json::object());
  pod["metadata"]["labels"][kControllerRevisionHashLabel] = nameOf(revision);
  pod["metadata"]["labels"][kPodNameLabel] = podName;
  pod["metadata"]["labels"][kPodIndexLabel] = std::to_string(ordinal);
  if (meta.contains("annotations")) pod["metadata"]["annotations"] = meta["annotations"];
  pod["metadata"]["ownerReferences"] = json::array({makeControllerRef(set)});
  pod["spec"] = templ.value("spec", json::object());
  pod["spec"]["hostname"] = podName;
  const std::string service = stringAt(set, "/spec/serviceName");
  if (!service.empty()) pod["spec"]["subdomain"] = service;
  // Each claim template becomes the pod's own claim (created first, kept when the pod or the
  // set goes: the data outlives them), replacing a volume of the same name.
  const json claims = valueAt(set, "/spec/volumeClaimTemplates", json::array());
  for (const auto& claim : claims.is_array() ? claims : json::array()) {
    if (Status s = createClaim(set, claim, podName); !s.ok()) return s;
  }
  if (claims.is_array() && !claims.empty()) {
    json volumes = pod["spec"].value("volumes", json::array());
    for (const auto& claim : claims) {
      const std::string claimName = stringAt(claim, "/metadata/name");
      json volume = {{"name", claimName},
                     {"persistentVolumeClaim", {{"claimName", claimName + "-" + podName}}}};
      auto same = std::find_if(volumes.begin(), volumes.end(),
                               [&](const json& v) { return v.value("name", "") == claimName; });
      if (same != volumes.end()) {
        *same = volume;
      } else {
        volumes.push_back(volume);
      }
    }
    pod["spec"]["volumes"] = volumes;
  }
  auto r = rest_.create(kPods, namespaceOf(set), pod);
  if (r.ok()) {
    recordEvent(set, "Normal", "SuccessfulCreate",
                "create Pod " + podName + " in StatefulSet " + setName + " successful");
    return Status::Ok();
  }
  if (r.status().reason() == "AlreadyExists") return Status::Ok();  // the cache lags
  recordEvent(set, "Warning", "FailedCreate",
              "create Pod " + podName + " in StatefulSet " + setName +
                  " failed error: " + r.status().message());
  return r.status();
}

Status StatefulSetController::createClaim(const json& set, const json& templ,
                                          const std::string& podName) {
  const std::string claimName = stringAt(templ, "/metadata/name") + "-" + podName;
  json claim = {{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", claimName}, {"namespace", namespaceOf(set)}}},
                {"spec", templ.value("spec", json::object())}};
  json labels = valueAt(templ, "/metadata/labels", json::object());
  const json selectorLabels = valueAt(set, "/spec/selector/matchLabels", json::object());
  for (const auto& [k, v] : selectorLabels.items()) labels[k] = v;
  if (!labels.empty()) claim["metadata"]["labels"] = labels;
  if (templ.contains("/metadata/annotations"_json_pointer)) {
    claim["metadata"]["annotations"] = templ["metadata"]["annotations"];
  }
  auto r = rest_.create(kPersistentVolumeClaimsOfSets, namespaceOf(set), claim);
  if (r.ok()) {
    recordEvent(set, "Normal", "SuccessfulCreate",
                "create Claim " + claimName + " Pod " + podName + " in StatefulSet " + nameOf(set) +
                    " success");
    return Status::Ok();
  }
  if (r.status().reason() == "AlreadyExists") return Status::Ok();
  recordEvent(set, "Warning", "FailedCreate",
              "create Claim " + claimName + " for Pod " + podName + " in StatefulSet " +
                  nameOf(set) + " failed error: " + r.status().message());
  return r.status();
}

Status StatefulSetController::deletePod(const json& set, const json& pod) {
  json opts = {
      {"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"preconditions", {{"uid", uidOf(pod)}}}};
  auto r = rest_.remove(kPods, namespaceOf(pod), nameOf(pod), opts);
  if (r.ok()) {
    recordEvent(set, "Normal", "SuccessfulDelete",
                "delete Pod " + nameOf(pod) + " in StatefulSet " + nameOf(set) + " successful");
    return Status::Ok();
  }
  if (r.status().code() == 404 || r.status().code() == 409) return Status::Ok();
  return r.status();
}

Status StatefulSetController::sync(const std::string& key) {
  auto cached = statefulSets_.get(key);
  if (!cached || isTerminating(*cached)) return Status::Ok();
  const json& set = *cached;
  const std::string ns = namespaceOf(set), uid = uidOf(set), setName = nameOf(set);
  const json spec = set.value("spec", json::object());
  const int64_t replicas = spec.value("replicas", int64_t{1});
  const int64_t start = valueAt(set, "/spec/ordinals/start", int64_t{0});
  const int64_t minReady = spec.value("minReadySeconds", int64_t{0});
  const bool ordered = spec.value("podManagementPolicy", "OrderedReady") != "Parallel";
  const json strategy = spec.value("updateStrategy", json::object());
  const bool rolling = strategy.value("type", "RollingUpdate") == "RollingUpdate";
  const int64_t partition = valueAt(strategy, "/rollingUpdate/partition", int64_t{0});
  const auto now = options_.now();

  std::map<int64_t, json> byOrdinal;
  std::vector<json> condemned;  // out of range
  std::set<std::string> inUse;
  for (const auto& cached : pods_.byIndexShared("namespace", ns)) {
    const json& pod = *cached;
    auto ref = controllerRef(pod);
    if (!ref || ref->value("uid", "") != uid) continue;
    inUse.insert(revisionHashOf(pod));
    const int64_t ord = statefulPodOrdinal(setName, nameOf(pod));
    if (ord >= start && ord < start + replicas) {
      byOrdinal[ord] = pod;
    } else {
      condemned.push_back(pod);
    }
  }
  auto revisions = syncControllerRevisions(rest_, revisions_, set, kStatefulSets, inUse);
  if (!revisions.ok()) return revisions.status();
  const json& updateRevision = revisions->current;
  const std::string updateName = nameOf(updateRevision);
  std::string currentName = stringAt(set, "/status/currentRevision");
  json currentRevision = updateRevision;
  bool currentFound = false;
  for (const auto& r : revisions->all) {
    if (nameOf(r) == currentName) {
      currentRevision = r;
      currentFound = true;
    }
  }
  if (!currentFound) currentName = updateName;

  Status firstError = Status::Ok();
  auto note = [&](Status s) {
    if (!s.ok() && firstError.ok()) firstError = s;
  };
  // Create missing pods and replace finished ones, lowest ordinal first.
  bool blocked = false;  // OrderedReady: a predecessor is not Running and Ready yet
  for (int64_t ord = start; ord < start + replicas && !blocked; ++ord) {
    auto it = byOrdinal.find(ord);
    if (it == byOrdinal.end()) {
      const bool fromCurrent = rolling && ord < start + partition;
      note(createPod(set, fromCurrent ? currentRevision : updateRevision, ord));
      if (ordered) blocked = true;
      continue;
    }
    const json& pod = it->second;
    if (isFinished(pod) && !isTerminating(pod)) {
      recordEvent(set, "Warning", "RecreatingFailedPod",
                  "StatefulSet " + ns + "/" + setName + " is recreating failed Pod " + nameOf(pod));
      note(deletePod(set, pod));
      if (ordered) blocked = true;
      continue;
    }
    if (ordered && !isRunningAndReady(pod)) blocked = true;
  }
  // Scale down from the highest ordinal, one at a time when ordered.
  std::sort(condemned.begin(), condemned.end(), [&](const json& a, const json& b) {
    return statefulPodOrdinal(setName, nameOf(a)) > statefulPodOrdinal(setName, nameOf(b));
  });
  for (const json& pod : condemned) {
    if (ordered && blocked) break;
    if (isTerminating(pod)) {
      if (ordered) blocked = true;  // wait for it to go
      continue;
    }
    note(deletePod(set, pod));
    if (ordered) blocked = true;
  }
  // Rolling update: the highest ordinal not at updateRevision goes, once all are ready.
  if (rolling && !blocked && condemned.empty()) {
    bool allReady = static_cast<int64_t>(byOrdinal.size()) == replicas;
    for (const auto& [ord, pod] : byOrdinal) allReady = allReady && isRunningAndReady(pod);
    if (allReady) {
      for (auto it = byOrdinal.rbegin(); it != byOrdinal.rend(); ++it) {
        if (it->first < start + partition) break;
        if (revisionHashOf(it->second) != updateName) {
          note(deletePod(set, it->second));
          break;
        }
      }
    }
  }

  // Status.
  int64_t created = 0, ready = 0, available = 0, current = 0, updated = 0;
  std::optional<WallClock::time_point> nextAvailable;
  for (const auto& [ord, pod] : byOrdinal) {
    if (isTerminating(pod)) continue;
    ++created;
    if (isPodReady(pod)) {
      ++ready;
      if (isPodAvailable(pod, minReady, now)) {
        ++available;
      } else if (auto at = podAvailableAt(pod, minReady);
                 at && (!nextAvailable || *at < *nextAvailable)) {
        nextAvailable = at;
      }
    }
    current += revisionHashOf(pod) == currentName;
    updated += revisionHashOf(pod) == updateName;
  }
  for (const auto& pod : condemned) created += !isTerminating(pod);
  if (nextAvailable) {
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(*nextAvailable - now);
    queue_.addAfter(key,
                    std::max(wait, std::chrono::milliseconds(0)) + std::chrono::milliseconds(100));
  }
  // The update is complete once every pod runs the new revision and is ready.
  if (updated == replicas && ready == replicas && condemned.empty()) {
    currentName = updateName;
    current = updated;
  }
  const json oldStatus = set.value("status", json::object());
  json status = oldStatus.is_object() ? oldStatus : json::object();
  status["observedGeneration"] = valueAt(set, "/metadata/generation", int64_t{1});
  status["replicas"] = created;
  status["readyReplicas"] = ready;
  status["availableReplicas"] = available;
  status["currentReplicas"] = current;
  status["updatedReplicas"] = updated;
  status["currentRevision"] = currentName;
  status["updateRevision"] = updateName;
  if (!status.contains("collisionCount")) status["collisionCount"] = 0;
  if (status != oldStatus) {
    json next = set;
    next["status"] = status;
    auto r = rest_.update(kStatefulSets, next, "status");
    if (!r.ok() && r.status().code() != 404) return r.status();
  }
  return firstError;
}

}  // namespace minik8s::controllers
