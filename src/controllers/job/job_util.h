// The pure rules of the Job controller, kept apart so they can be tested exactly: completed
// index sets in Kubernetes' text form ("0-2,5"), the exponential back-off of failed pods, the
// podFailurePolicy match on exit codes and pod conditions, and the terminal-state helpers.
// Thread-safe (no state).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "common/status.h"

namespace minik8s::controllers::job {

inline constexpr char kTrackingFinalizer[] = "batch.kubernetes.io/job-tracking";
inline constexpr char kCompletionIndexAnnotation[] = "batch.kubernetes.io/job-completion-index";
inline constexpr char kJobCompletionIndexEnv[] = "JOB_COMPLETION_INDEX";

// "1,3-5,7" <-> {1,3,4,5,7}. Parsing ignores malformed parts and indexes >= `limit` (when
// limit >= 0), as Kubernetes does when it reads status.completedIndexes back.
std::set<int64_t> parseIndexes(const std::string& text, int64_t limit = -1);
std::string formatIndexes(const std::set<int64_t>& indexes);

// The completion index of a pod (annotation, else label), or nullopt when absent or malformed.
std::optional<int64_t> completionIndexOf(const json& pod);

// How long to wait before the next pod after `failures` failures in a row: base * 2^(n-1),
// capped at `max` (Kubernetes: 10 s doubling up to 6 min). Zero when failures <= 0.
std::chrono::milliseconds failureBackoff(int64_t failures, std::chrono::milliseconds base,
                                         std::chrono::milliseconds max);

enum class FailureAction { kCount, kFailJob, kIgnore };

struct FailurePolicyMatch {
  FailureAction action = FailureAction::kCount;
  std::string message;  // for FailJob: the Job's condition message, as Kubernetes words it
};

// spec.podFailurePolicy against a failed pod: the first rule whose onExitCodes (a terminated
// container, optionally named, exit code In/NotIn values; exit code 0 never matches) or
// onPodConditions (type with status, default True) matches decides. No rule: kCount.
FailurePolicyMatch matchPodFailurePolicy(const json& policy, const json& pod);

// The Job condition of `type` whose status is "True", if any.
const json* trueCondition(const json& job, const std::string& type);
// Complete or Failed is True: nothing more will happen to the Job.
bool isJobFinished(const json& job);
// When the Job finished (completionTime, else the Complete/Failed lastTransitionTime).
std::optional<std::chrono::system_clock::time_point> jobFinishTime(const json& job);

// When a pod stopped: its containers' latest finishedAt, else its deletionTimestamp, else its
// latest condition transition, else its creation.
std::optional<std::chrono::system_clock::time_point> podFinishTime(const json& pod);

}  // namespace minik8s::controllers::job
