#include "controllers/job/job_controller.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "api/object_meta.h"
#include "api/selector.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "controllers/job/job_util.h"
#include "controllers/replicaset/replicaset_controller.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::stringAt;
using api::uidOf;

namespace {

using namespace job;
using client::resources::kJobs;
using client::resources::kPods;

std::optional<int64_t> integerAt(const json& o, const json::json_pointer& p) {
  const json v = o.value(p, json());
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

bool hasTrackingFinalizer(const json& o) {
  const json f = valueAt(o, "/metadata/finalizers", json::array());
  return f.is_array() && std::find(f.begin(), f.end(), kTrackingFinalizer) != f.end();
}

int64_t restartsOf(const json& pod) {
  int64_t n = 0;
  for (const char* list : {"/status/containerStatuses", "/status/initContainerStatuses"}) {
    const json statuses = pod.value(json::json_pointer(list), json::array());
    if (!statuses.is_array()) continue;
    for (const auto& cs : statuses) n += cs.value("restartCount", int64_t{0});
  }
  return n;
}

// Sets condition `type` in status.conditions; lastTransitionTime moves only when the status
// does. Returns true when the condition is new or its status changed.
bool setCondition(json& status, const std::string& type, const std::string& value,
                  const std::string& reason, const std::string& message,
                  WallClock::time_point now) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) {
    status["conditions"] = json::array();
  }
  const std::string ts = formatRfc3339(now);
  for (auto& c : status["conditions"]) {
    if (c.value("type", "") != type) continue;
    if (c.value("status", "") == value) {
      if (c.value("reason", "") != reason || c.value("message", "") != message) {
        c["reason"] = reason;
        c["message"] = message;
        c["lastProbeTime"] = ts;
      }
      return false;
    }
    c = {{"type", type},       {"status", value},     {"reason", reason},
         {"message", message}, {"lastProbeTime", ts}, {"lastTransitionTime", ts}};
    return true;
  }
  status["conditions"].push_back({{"type", type},
                                  {"status", value},
                                  {"reason", reason},
                                  {"message", message},
                                  {"lastProbeTime", ts},
                                  {"lastTransitionTime", ts}});
  return true;
}

std::set<std::string> stringSet(const json& status, const char* field) {
  std::set<std::string> out;
  const json list = status.value(
      json::json_pointer(std::string("/uncountedTerminatedPods/") + field), json::array());
  if (list.is_array()) {
    for (const auto& u : list) {
      if (u.is_string()) out.insert(u.get<std::string>());
    }
  }
  return out;
}

// Status fields that Kubernetes omits when zero.
void setCount(json& status, const char* field, int64_t value) {
  if (value == 0) {
    status.erase(field);
  } else {
    status[field] = value;
  }
}

}  // namespace

// Kubernetes' finalizer expectations: a pod whose finalizer this controller removed must not be
// counted again before the informer shows the change.
struct JobController::RemovedFinalizers {
  std::mutex mu;
  std::map<std::string, std::set<std::string>> byJob;  // job key -> pod uids

  void add(const std::string& key, const std::string& uid) {
    std::lock_guard lock(mu);
    byJob[key].insert(uid);
  }
  bool has(const std::string& key, const std::string& uid) {
    std::lock_guard lock(mu);
    auto it = byJob.find(key);
    return it != byJob.end() && it->second.count(uid);
  }
  void observed(const std::string& key, const std::string& uid) {
    std::lock_guard lock(mu);
    auto it = byJob.find(key);
    if (it == byJob.end()) return;
    it->second.erase(uid);
    if (it->second.empty()) byJob.erase(it);
  }
  void erase(const std::string& key) {
    std::lock_guard lock(mu);
    byJob.erase(key);
  }
};

struct JobController::WrittenVersions {
  std::mutex mu;
  std::map<std::string, int64_t> byJob;
};

namespace {
int64_t versionOf(const json& o) {
  const std::string rv = stringAt(o, "/metadata/resourceVersion");
  if (rv.empty() || rv.size() > 18 || rv.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(rv);
}
}  // namespace

void JobController::noteWritten(const std::string& key, const json& job) {
  const int64_t v = versionOf(job);
  if (v < 0) return;
  std::lock_guard lock(written_->mu);
  int64_t& last = written_->byJob[key];
  last = std::max(last, v);
}

JobController::JobController(client::RestClient& rest, client::Informer& jobs,
                             client::Informer& pods, JobControllerOptions options)
    : rest_(rest),
      jobs_(jobs),
      pods_(pods),
      options_(std::move(options)),
      queue_(*options_.clock),
      expectations_(*options_.clock),
      removed_(std::make_unique<RemovedFinalizers>()),
      written_(std::make_unique<WrittenVersions>()),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "job") {
  jobs_.addHandlers({[this](const json& j) { queue_.add(client::objectKey(j)); },
                     [this](const json&, const json& j) { queue_.add(client::objectKey(j)); },
                     [this](const json& j) {
                       expectations_.erase(client::objectKey(j));
                       queue_.add(client::objectKey(j));
                     }});
  auto jobKeyOf = [](const json& pod) -> std::string {
    auto ref = controllerRef(pod);
    if (!ref || ref->value("kind", "") != "Job") return "";
    return namespaceOf(pod) + "/" + ref->value("name", "");
  };
  pods_.addHandlers({[this, jobKeyOf](const json& pod) {
                       const std::string key = jobKeyOf(pod);
                       if (key.empty()) return;
                       expectations_.creationObserved(key);
                       if (isTerminating(pod)) expectations_.deletionObserved(key, uidOf(pod));
                       queue_.add(key);
                     },
                     [this, jobKeyOf](const json& oldPod, const json& pod) {
                       const std::string key = jobKeyOf(pod);
                       const std::string oldKey = jobKeyOf(oldPod);
                       if (!oldKey.empty() && oldKey != key) queue_.add(oldKey);
                       if (key.empty()) return;
                       if (isTerminating(pod) && !isTerminating(oldPod)) {
                         expectations_.deletionObserved(key, uidOf(pod));
                       }
                       if (!hasTrackingFinalizer(pod)) removed_->observed(key, uidOf(pod));
                       queue_.add(key);
                     },
                     [this, jobKeyOf](const json& pod) {
                       const std::string key = jobKeyOf(pod);
                       if (key.empty()) return;
                       expectations_.deletionObserved(key, uidOf(pod));
                       removed_->observed(key, uidOf(pod));
                       queue_.add(key);
                     }});
}

JobController::~JobController() { stop(); }

void JobController::start() { workers_.start(options_.workers); }
void JobController::stop() { workers_.stop(); }

void JobController::recordEvent(const json& job, const std::string& type, const std::string& reason,
                                const std::string& message) {
  if (!options_.events) return;
  json involved = job;
  involved["kind"] = "Job";
  involved["apiVersion"] = "batch/v1";
  options_.events->record(involved, type, reason, message);
}

Status JobController::removeTrackingFinalizer(const json& pod) {
  const json finalizers = valueAt(pod, "/metadata/finalizers", json::array());
  for (size_t i = 0; i < finalizers.size(); ++i) {
    if (finalizers[i] != kTrackingFinalizer) continue;
    // test + remove: atomic, whatever else changes the finalizers meanwhile. The last
    // finalizer takes the list with it (Kubernetes omits an empty one).
    const bool last = finalizers.size() == 1;
    const std::string path =
        last ? "/metadata/finalizers" : "/metadata/finalizers/" + std::to_string(i);
    json patch = json::array(
        {{{"op", "test"}, {"path", path}, {"value", last ? finalizers : json(kTrackingFinalizer)}},
         {{"op", "remove"}, {"path", path}}});
    auto r = rest_.patch(kPods, namespaceOf(pod), nameOf(pod), patch, "json");
    if (r.ok() || r.status().code() == 404) return Status::Ok();
    return r.status();
  }
  return Status::Ok();
}

// The Job is gone (or replaced by one of the same name): its pods must not keep our finalizer.
Status JobController::releaseOrphans(const std::string& ns, const std::string& name) {
  std::optional<std::string> liveUid;
  bool looked = false;
  Status first = Status::Ok();
  for (const auto& cached : pods_.byIndexShared("namespace", ns)) {
    const json& pod = *cached;
    if (!hasTrackingFinalizer(pod)) continue;
    auto ref = controllerRef(pod);
    if (!ref || ref->value("kind", "") != "Job" || ref->value("name", "") != name) continue;
    if (!looked) {
      looked = true;
      auto live = rest_.get(kJobs, ns, name);
      if (live.ok()) {
        liveUid = uidOf(*live);
      } else if (live.status().code() != 404) {
        return live.status();
      }
    }
    if (liveUid && *liveUid == ref->value("uid", "")) continue;  // the cache lags behind
    Status s = removeTrackingFinalizer(pod);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status JobController::sync(const std::string& key) {
  auto cached = jobs_.get(key);
  if (cached) {
    // Acting on a Job older than our own last write would count (and create) from stale
    // numbers; the watch event of that write brings the key back.
    std::lock_guard lock(written_->mu);
    auto it = written_->byJob.find(key);
    const int64_t v = versionOf(*cached);
    if (it != written_->byJob.end() && v >= 0 && v < it->second) {
      queue_.addAfter(key, std::chrono::seconds(1));
      return Status::Ok();
    }
  }
  if (!cached) {
    expectations_.erase(key);
    removed_->erase(key);
    {
      std::lock_guard lock(written_->mu);
      written_->byJob.erase(key);
    }
    const auto [ns, name] = client::splitObjectKey(key);
    return releaseOrphans(ns, name);
  }
  return syncJob(*cached, key);
}

Status JobController::createPods(const json& job, const std::string& key,
                                 const std::vector<int64_t>& indexes, int64_t count) {
  if (count <= 0) return Status::Ok();
  const std::string ns = namespaceOf(job), name = nameOf(job);
  const json templ = valueAt(job, "/spec/template", json::object());
  json base = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", json::object()}};
  const json meta = templ.value("metadata", json::object());
  base["metadata"]["namespace"] = ns;
  base["metadata"]["labels"] = meta.value("labels", json::object());
  if (meta.contains("annotations")) base["metadata"]["annotations"] = meta["annotations"];
  base["metadata"]["ownerReferences"] = json::array({makeControllerRef(job)});
  base["metadata"]["finalizers"] = json::array({kTrackingFinalizer});
  base["spec"] = templ.value("spec", json::object());

  expectations_.expectCreations(key, static_cast<int>(count));
  Status first = Status::Ok();
  for (int64_t i = 0; i < count; ++i) {
    json pod = base;
    if (!indexes.empty()) {
      const std::string idx = std::to_string(indexes[static_cast<size_t>(i)]);
      pod["metadata"]["generateName"] = name + "-" + idx + "-";
      pod["metadata"]["annotations"][kCompletionIndexAnnotation] = idx;
      pod["metadata"]["labels"][kCompletionIndexAnnotation] = idx;
      if (!pod["spec"].contains("hostname")) pod["spec"]["hostname"] = name + "-" + idx;
      const json env = {{"name", kJobCompletionIndexEnv},
                        {"valueFrom",
                         {{"fieldRef",
                           {{"fieldPath", std::string("metadata.annotations['") +
                                              kCompletionIndexAnnotation + "']"}}}}}};
      for (const char* list : {"initContainers", "containers"}) {
        if (!pod["spec"].contains(list) || !pod["spec"][list].is_array()) continue;
        for (auto& c : pod["spec"][list]) {
          if (!c.contains("env") || !c["env"].is_array()) c["env"] = json::array();
          bool present = false;
          for (const auto& e : c["env"]) present |= e.value("name", "") == kJobCompletionIndexEnv;
          if (!present) c["env"].push_back(env);
        }
      }
    } else {
      pod["metadata"]["generateName"] = name + "-";
    }
    auto r = rest_.create(kPods, ns, pod);
    if (r.ok()) {
      recordEvent(job, "Normal", "SuccessfulCreate", "Created pod: " + nameOf(*r));
      continue;
    }
    expectations_.creationObserved(key);  // the informer will never see it
    recordEvent(job, "Warning", "FailedCreate", "Error creating: " + r.status().message());
    if (first.ok()) first = r.status();
    if (r.status().code() == 403 || r.status().code() == 422 || r.status().code() == 404) {
      for (int64_t j = i + 1; j < count; ++j) expectations_.creationObserved(key);
      break;
    }
  }
  if (!first.ok()) LOG_WARN("job {}: creating pods: {}", key, first.toString());
  return first;
}

Status JobController::deletePods(const json& job, const std::string& key, std::vector<json> pods,
                                 size_t n) {
  n = std::min(n, pods.size());
  if (n == 0) return Status::Ok();
  std::sort(pods.begin(), pods.end(), podDeletionLess);
  std::set<std::string> uids;
  for (size_t i = 0; i < n; ++i) uids.insert(uidOf(pods[i]));
  expectations_.expectDeletions(key, uids);
  Status first = Status::Ok();
  for (size_t i = 0; i < n; ++i) {
    auto r = rest_.remove(kPods, namespaceOf(pods[i]), nameOf(pods[i]));
    if (r.ok()) {
      recordEvent(job, "Normal", "SuccessfulDelete", "Deleted pod: " + nameOf(pods[i]));
      continue;
    }
    expectations_.deletionObserved(key, uidOf(pods[i]));
    if (r.status().code() != 404 && first.ok()) first = r.status();
  }
  return first;
}

Status JobController::syncJob(json job, const std::string& key) {
  const std::string ns = namespaceOf(job), uid = uidOf(job);
  RemovedFinalizers& removed = *removed_;
  // Before the pods are read: a creation observed after the snapshot must not let this sync
  // act on a snapshot that lacks the pod (Kubernetes checks expectations first, too).
  const bool expectationsMet = expectations_.satisfied(key);

  std::vector<json> owned;
  for (const auto& pod : pods_.byIndexShared("namespace", ns)) {
    auto ref = controllerRef(*pod);
    if (ref && ref->value("uid", "") == uid) owned.push_back(*pod);
  }
  // A Job that is being deleted or is finished keeps no pod behind its finalizer.
  if (isTerminating(job) || isJobFinished(job)) {
    Status first = Status::Ok();
    for (const json& pod : owned) {
      if (!hasTrackingFinalizer(pod) || removed.has(key, uidOf(pod))) continue;
      Status s = removeTrackingFinalizer(pod);
      if (s.ok()) removed.add(key, uidOf(pod));
      if (!s.ok() && first.ok()) first = s;
    }
    return first;
  }

  const json spec = job.value("spec", json::object());
  json status = job.value("status", json::object());
  if (!status.is_object()) status = json::object();
  const auto now = options_.now();
  const bool indexed = spec.value("completionMode", "NonIndexed") == "Indexed";
  const std::optional<int64_t> completions = integerAt(spec, "/completions"_json_pointer);
  const int64_t parallelism = integerAt(spec, "/parallelism"_json_pointer).value_or(1);
  const int64_t backoffLimit = integerAt(spec, "/backoffLimit"_json_pointer).value_or(6);
  const std::optional<int64_t> deadline = integerAt(spec, "/activeDeadlineSeconds"_json_pointer);
  const bool suspended = spec.value("suspend", json(false)) == true;
  const bool onlyReplaceFailed = spec.value("podReplacementPolicy", "") == "Failed";
  const bool onFailure = stringAt(spec, "/template/spec/restartPolicy") == "OnFailure";
  const json failurePolicy = spec.value("podFailurePolicy", json());

  std::set<std::string> uncSucceeded = stringSet(status, "succeeded");
  std::set<std::string> uncFailed = stringSet(status, "failed");
  int64_t succeeded = status.value("succeeded", int64_t{0});
  int64_t failed = status.value("failed", int64_t{0});
  std::set<int64_t> completedIndexes =
      indexed ? parseIndexes(status.value("completedIndexes", ""), completions.value_or(0))
              : std::set<int64_t>{};

  // Sort the pods: active ones, and finished ones still behind our finalizer.
  std::vector<json> active, unfinalize;
  int64_t ready = 0, terminating = 0, restarts = 0;
  bool newUncounted = false;
  std::string failJobMessage;
  std::optional<WallClock::time_point> lastSuccess, lastFailure;
  std::vector<WallClock::time_point> failureTimes;
  for (const json& pod : owned) {
    const std::string phase = stringAt(pod, "/status/phase");
    const bool terminal = phase == "Succeeded" || phase == "Failed";
    if (!terminal && !isTerminating(pod)) {
      active.push_back(pod);
      if (isPodReady(pod)) ++ready;
      if (onFailure) restarts += restartsOf(pod);
      continue;
    }
    if (!terminal) ++terminating;
    // A failure the podFailurePolicy ignores is neither counted nor backed off from.
    std::optional<FailurePolicyMatch> policyMatch;
    if (failurePolicy.is_object() && phase == "Failed") {
      policyMatch = matchPodFailurePolicy(failurePolicy, pod);
    }
    const bool ignored = policyMatch && policyMatch->action == FailureAction::kIgnore;
    const auto finished = podFinishTime(pod).value_or(now);
    if (phase == "Succeeded") {
      if (!lastSuccess || finished > *lastSuccess) lastSuccess = finished;
    } else if (phase == "Failed" && !ignored) {
      failureTimes.push_back(finished);
    }
    const std::string podUid = uidOf(pod);
    if (!hasTrackingFinalizer(pod) || removed.has(key, podUid)) continue;
    unfinalize.push_back(pod);
    if (uncSucceeded.count(podUid) || uncFailed.count(podUid)) continue;
    if (phase == "Succeeded") {
      if (indexed) {
        auto idx = completionIndexOf(pod);
        // A second success of an index, or a stray index, is not counted.
        if (!idx || *idx >= completions.value_or(0) || completedIndexes.count(*idx)) continue;
        completedIndexes.insert(*idx);
      }
      uncSucceeded.insert(podUid);
      newUncounted = true;
      LOG_DEBUG("job {}: pod {} ({}) succeeded", key, nameOf(pod), podUid);
      continue;
    }
    // Failed, or deleted before it finished. Pods deleted because the Job is suspended are not
    // failures.
    if (phase != "Failed" && suspended) continue;
    if (ignored) continue;
    if (policyMatch && policyMatch->action == FailureAction::kFailJob && failJobMessage.empty()) {
      failJobMessage = policyMatch->message;
    }
    uncFailed.insert(podUid);
    newUncounted = true;
    LOG_DEBUG("job {}: pod {} ({}) failed (phase {}, rv {})", key, nameOf(pod), podUid, phase,
              stringAt(pod, "/metadata/resourceVersion"));
  }

  // 1. Record newly finished pods as uncounted before touching their finalizers.
  if (newUncounted) {
    json wanted = status;
    wanted["uncountedTerminatedPods"] = {
        {"succeeded", std::vector<std::string>(uncSucceeded.begin(), uncSucceeded.end())},
        {"failed", std::vector<std::string>(uncFailed.begin(), uncFailed.end())}};
    if (indexed) wanted["completedIndexes"] = formatIndexes(completedIndexes);
    json updated = job;
    updated["status"] = wanted;
    auto r = rest_.update(kJobs, updated, "status");
    if (!r.ok()) return r.status().code() == 404 ? Status::Ok() : r.status();
    job = *r;
    noteWritten(key, job);
    status = wanted;
  }
  // 2. Remove the finalizers of every finished pod (the uncounted ones and the ignored ones).
  Status firstError = Status::Ok();
  for (const json& pod : unfinalize) {
    Status s = removeTrackingFinalizer(pod);
    if (s.ok()) {
      removed.add(key, uidOf(pod));
    } else if (firstError.ok()) {
      firstError = s;
    }
  }
  // 3. Uncounted pods whose finalizer is gone move into the counters.
  std::map<std::string, const json*> byUid;
  for (const json& pod : owned) byUid[uidOf(pod)] = &pod;
  auto released = [&](const std::string& podUid) {
    auto it = byUid.find(podUid);
    return it == byUid.end() || !hasTrackingFinalizer(*it->second) || removed.has(key, podUid);
  };
  for (auto* set : {&uncSucceeded, &uncFailed}) {
    for (auto it = set->begin(); it != set->end();) {
      if (!released(*it)) {
        ++it;
        continue;
      }
      ++(set == &uncSucceeded ? succeeded : failed);
      it = set->erase(it);
    }
  }
  const int64_t succeededTotal = succeeded + static_cast<int64_t>(uncSucceeded.size());
  const int64_t failedTotal = failed + static_cast<int64_t>(uncFailed.size());

  // Decide what the Job is now.
  json wanted = status;
  std::string failReason, failMessage;
  if (const json* c = trueCondition(job, "FailureTarget")) {
    failReason = c->value("reason", "");
    failMessage = c->value("message", "");
  } else if (!trueCondition(job, "SuccessCriteriaMet")) {
    if (!failJobMessage.empty()) {
      failReason = "PodFailurePolicy";
      failMessage = failJobMessage;
    } else if (failedTotal > backoffLimit || (onFailure && failedTotal + restarts > backoffLimit)) {
      failReason = "BackoffLimitExceeded";
      failMessage = "Job has reached the specified backoff limit";
    } else if (!suspended && deadline) {
      auto start = parseRfc3339(status.value("startTime", ""));
      if (start && now >= *start + std::chrono::seconds(*deadline)) {
        failReason = "DeadlineExceeded";
        failMessage = "Job was active longer than specified deadline";
      }
    }
  }
  bool complete = false;
  if (failReason.empty()) {
    if (trueCondition(job, "SuccessCriteriaMet")) {
      complete = true;
    } else if (indexed) {
      complete = completions && static_cast<int64_t>(completedIndexes.size()) >= *completions;
    } else if (completions) {
      complete = succeededTotal >= *completions;
    } else {
      complete = succeededTotal > 0 && active.empty();
    }
  }

  int64_t activeAfter = static_cast<int64_t>(active.size());
  const bool drained = active.empty() && uncSucceeded.empty() && uncFailed.empty();
  if (!failReason.empty() || complete) {
    // Finishing: stop what still runs; the final condition comes once nothing does.
    if (!failReason.empty()) {
      setCondition(wanted, "FailureTarget", "True", failReason, failMessage, now);
    } else {
      setCondition(wanted, "SuccessCriteriaMet", "True", "CompletionsReached",
                   "Reached expected number of succeeded pods", now);
    }
    if (!active.empty()) {
      Status s = deletePods(job, key, active, active.size());
      if (!s.ok() && firstError.ok()) firstError = s;
      activeAfter = 0;
    }
    if (drained) {
      if (!failReason.empty()) {
        if (setCondition(wanted, "Failed", "True", failReason, failMessage, now)) {
          recordEvent(job, "Warning", failReason, failMessage);
        }
      } else {
        if (setCondition(wanted, "Complete", "True", "CompletionsReached",
                         "Reached expected number of succeeded pods", now)) {
          wanted["completionTime"] = formatRfc3339(now);
          recordEvent(job, "Normal", "Completed", "Job completed");
        }
      }
    }
  } else if (suspended) {
    if (!active.empty()) {
      Status s = deletePods(job, key, active, active.size());
      if (!s.ok() && firstError.ok()) firstError = s;
      activeAfter = 0;
    }
    if (setCondition(wanted, "Suspended", "True", "JobSuspended", "Job suspended", now)) {
      recordEvent(job, "Normal", "Suspended", "Job suspended");
    }
  } else {
    if (trueCondition(job, "Suspended")) {
      setCondition(wanted, "Suspended", "False", "JobResumed", "Job resumed", now);
      wanted["startTime"] = formatRfc3339(now);  // the deadline counts from the resumption
      recordEvent(job, "Normal", "Resumed", "Job resumed");
    }
    if (!wanted.contains("startTime") || !wanted["startTime"].is_string()) {
      wanted["startTime"] = formatRfc3339(now);
    }
    if (deadline) {
      auto start = parseRfc3339(wanted["startTime"].get<std::string>());
      if (start) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            *start + std::chrono::seconds(*deadline) - now);
        queue_.addAfter(
            key, std::max(left, std::chrono::milliseconds(0)) + std::chrono::milliseconds(100));
      }
    }
    if (expectationsMet) {
      // Which pods to remove and how many (which indexes) to create.
      std::vector<json> excess;
      std::vector<int64_t> newIndexes;
      int64_t toCreate = 0;
      const int64_t replacing = onlyReplaceFailed ? terminating : 0;
      if (indexed) {
        std::map<int64_t, std::vector<json>> byIndex;
        for (const json& pod : active) {
          auto idx = completionIndexOf(pod);
          if (!idx || *idx >= completions.value_or(0) || completedIndexes.count(*idx)) {
            excess.push_back(pod);
          } else {
            byIndex[*idx].push_back(pod);
          }
        }
        for (auto& [idx, pods] : byIndex) {
          for (size_t i = 1; i < pods.size(); ++i) excess.push_back(pods[i]);
        }
        // More indexes running than parallelism allows: the highest ones go.
        int64_t running = static_cast<int64_t>(byIndex.size());
        for (auto it = byIndex.rbegin(); it != byIndex.rend() && running > parallelism; ++it) {
          excess.push_back(it->second.front());
          --running;
        }
        const int64_t room = std::max<int64_t>(0, parallelism - running - replacing);
        for (int64_t i = 0;
             i < completions.value_or(0) && static_cast<int64_t>(newIndexes.size()) < room; ++i) {
          if (!completedIndexes.count(i) && !byIndex.count(i)) newIndexes.push_back(i);
        }
        toCreate = static_cast<int64_t>(newIndexes.size());
      } else {
        int64_t want = parallelism;
        if (completions) {
          want = std::min(parallelism, *completions - succeededTotal);
        } else if (succeededTotal > 0) {
          want = static_cast<int64_t>(active.size());  // let the running ones finish
        }
        want = std::max<int64_t>(want, 0);
        const int64_t diff = static_cast<int64_t>(active.size()) - want;
        if (diff > 0) {
          excess = active;
          std::sort(excess.begin(), excess.end(), podDeletionLess);
          excess.resize(static_cast<size_t>(diff));
        } else {
          toCreate = std::max<int64_t>(0, -diff - replacing);
        }
      }
      if (!excess.empty()) {
        Status s = deletePods(job, key, excess, excess.size());
        if (!s.ok() && firstError.ok()) firstError = s;
        activeAfter -= static_cast<int64_t>(excess.size());
      }
      if (toCreate > 0) {
        // Exponential back-off after failures in a row (since the last success).
        int64_t recentFailures = 0;
        for (const auto& t : failureTimes) {
          if (!lastSuccess || t >= *lastSuccess) {  // a failure beside a success counts
            ++recentFailures;
            if (!lastFailure || t > *lastFailure) lastFailure = t;
          }
        }
        const auto delay =
            failureBackoff(recentFailures, options_.backoffBase, options_.backoffMax);
        if (lastFailure && now < *lastFailure + delay) {
          auto left =
              std::chrono::duration_cast<std::chrono::milliseconds>(*lastFailure + delay - now);
          queue_.addAfter(key, left + std::chrono::milliseconds(50));
        } else {
          toCreate = std::min<int64_t>(toCreate, options_.burst);
          if (indexed) newIndexes.resize(static_cast<size_t>(toCreate));
          Status s = createPods(job, key, newIndexes, toCreate);
          if (!s.ok() && firstError.ok()) firstError = s;
          activeAfter += toCreate;
        }
      }
    }
  }

  setCount(wanted, "active", std::max<int64_t>(activeAfter, 0));
  setCount(wanted, "succeeded", succeeded);
  setCount(wanted, "failed", failed);
  wanted["ready"] = ready;
  wanted["terminating"] = terminating;
  wanted["uncountedTerminatedPods"] = json::object();
  if (!uncSucceeded.empty()) {
    wanted["uncountedTerminatedPods"]["succeeded"] =
        std::vector<std::string>(uncSucceeded.begin(), uncSucceeded.end());
  }
  if (!uncFailed.empty()) {
    wanted["uncountedTerminatedPods"]["failed"] =
        std::vector<std::string>(uncFailed.begin(), uncFailed.end());
  }
  if (indexed) {
    const std::string text = formatIndexes(completedIndexes);
    if (text.empty()) {
      wanted.erase("completedIndexes");
    } else {
      wanted["completedIndexes"] = text;
    }
  }
  if (wanted != status) {
    json updated = job;
    updated["status"] = wanted;
    auto r = rest_.update(kJobs, updated, "status");
    if (!r.ok() && r.status().code() != 404) return r.status();
    if (r.ok()) noteWritten(key, *r);
  }
  return firstError;
}

// TTL after finished.

TtlAfterFinishedController::TtlAfterFinishedController(client::RestClient& rest,
                                                       client::Informer& jobs,
                                                       TtlAfterFinishedOptions options)
    : rest_(rest),
      jobs_(jobs),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "ttl-after-finished") {
  auto enqueue = [this](const json& j) {
    if (isJobFinished(j) && valueAt(j, "/spec/ttlSecondsAfterFinished", json()).is_number())
      queue_.add(client::objectKey(j));
  };
  jobs_.addHandlers({enqueue, [enqueue](const json&, const json& j) { enqueue(j); }, nullptr});
}

TtlAfterFinishedController::~TtlAfterFinishedController() { stop(); }
void TtlAfterFinishedController::start() { workers_.start(options_.workers); }
void TtlAfterFinishedController::stop() { workers_.stop(); }

std::optional<std::chrono::milliseconds> TtlAfterFinishedController::timeLeft(
    const json& job) const {
  if (isTerminating(job) || !isJobFinished(job)) return std::nullopt;
  auto ttl = integerAt(job, "/spec/ttlSecondsAfterFinished"_json_pointer);
  auto finished = jobFinishTime(job);
  if (!ttl || !finished) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      *finished + std::chrono::seconds(*ttl) - options_.now());
}

Status TtlAfterFinishedController::sync(const std::string& key) {
  auto cached = jobs_.get(key);
  if (!cached) return Status::Ok();
  auto left = timeLeft(*cached);
  if (!left) return Status::Ok();
  if (left->count() > 0) {
    queue_.addAfter(key, *left + std::chrono::milliseconds(100));
    return Status::Ok();
  }
  // The cache may be stale: the TTL may have been changed or removed meanwhile.
  auto live = rest_.get(kJobs, namespaceOf(*cached), nameOf(*cached));
  if (!live.ok()) return live.status().code() == 404 ? Status::Ok() : live.status();
  left = timeLeft(*live);
  if (!left) return Status::Ok();
  if (left->count() > 0) {
    queue_.addAfter(key, *left + std::chrono::milliseconds(100));
    return Status::Ok();
  }
  json opts = {{"kind", "DeleteOptions"},
               {"apiVersion", "v1"},
               {"propagationPolicy", "Foreground"},
               {"preconditions", {{"uid", uidOf(*live)}}}};
  auto r = rest_.remove(kJobs, namespaceOf(*live), nameOf(*live), opts);
  if (r.ok()) LOG_INFO("ttl-after-finished: deleted job {}", key);
  if (!r.ok() && r.status().code() != 404 && r.status().code() != 409) return r.status();
  return Status::Ok();
}

}  // namespace minik8s::controllers
