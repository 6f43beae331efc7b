#include "controllers/job/job_util.h"

#include <algorithm>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/time_util.h"

namespace minik8s::controllers::job {

using api::stringAt;

namespace {

std::optional<int64_t> parseIndex(const std::string& s) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(s);
}

}  // namespace

std::set<int64_t> parseIndexes(const std::string& text, int64_t limit) {
  std::set<int64_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (part.empty()) continue;
    const size_t dash = part.find('-');
    auto first = parseIndex(part.substr(0, dash));
    auto last = dash == std::string::npos ? first : parseIndex(part.substr(dash + 1));
    if (!first || !last || *last < *first) continue;
    for (int64_t i = *first; i <= *last; ++i) {
      if (limit >= 0 && i >= limit) break;
      out.insert(i);
    }
  }
  return out;
}

std::string formatIndexes(const std::set<int64_t>& indexes) {
  std::string out;
  auto it = indexes.begin();
  while (it != indexes.end()) {
    const int64_t first = *it;
    int64_t last = first;
    for (++it; it != indexes.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ',';
    out += std::to_string(first);
    if (last != first) out += "-" + std::to_string(last);
  }
  return out;
}

std::optional<int64_t> completionIndexOf(const json& pod) {
  std::string v = stringAt(
      pod, json::json_pointer("/metadata/annotations/batch.kubernetes.io~1job-completion-index"));
  if (v.empty()) {
    v = stringAt(pod,
                 json::json_pointer("/metadata/labels/batch.kubernetes.io~1job-completion-index"));
  }
  return parseIndex(v);
}

std::chrono::milliseconds failureBackoff(int64_t failures, std::chrono::milliseconds base,
                                         std::chrono::milliseconds max) {
  if (failures <= 0) return std::chrono::milliseconds(0);
  std::chrono::milliseconds d = base;
  for (int64_t i = 1; i < failures && d < max; ++i) d *= 2;
  return std::min(d, max);
}

FailurePolicyMatch matchPodFailurePolicy(const json& policy, const json& pod) {
  const json rules = policy.value("rules", json::array());
  if (!rules.is_array()) return {};
  const json statuses = valueAt(pod, "/status/containerStatuses", json::array());
  const json inits = valueAt(pod, "/status/initContainerStatuses", json::array());
  const json conditions = valueAt(pod, "/status/conditions", json::array());
  const std::string podName =
      stringAt(pod, "/metadata/namespace") + "/" + stringAt(pod, "/metadata/name");
  for (size_t i = 0; i < rules.size(); ++i) {
    const json& rule = rules[i];
    const std::string actionName = rule.value("action", "");
    FailureAction action = actionName == "FailJob"  ? FailureAction::kFailJob
                           : actionName == "Ignore" ? FailureAction::kIgnore
                                                    : FailureAction::kCount;
    if (rule.contains("onExitCodes") && rule["onExitCodes"].is_object()) {
      const json& req = rule["onExitCodes"];
      const std::string container = req.value("containerName", "");
      const bool in = req.value("operator", "In") == "In";
      const json values = req.value("values", json::array());
      for (const json* list : {&inits, &statuses}) {
        if (!list->is_array()) continue;
        for (const auto& cs : *list) {
          if (!container.empty() && cs.value("name", "") != container) continue;
          const json code = valueAt(cs, "/state/terminated/exitCode", json());
          if (!code.is_number_integer() || code.get<int64_t>() == 0) continue;
          const bool listed =
              values.is_array() && std::find(values.begin(), values.end(), code) != values.end();
          if (listed != in) continue;
          FailurePolicyMatch m{action, ""};
          if (action == FailureAction::kFailJob) {
            m.message = "Container " + cs.value("name", "") + " for pod " + podName +
                        " failed with exit code " + std::to_string(code.get<int64_t>()) +
                        " matching FailJob rule at index " + std::to_string(i);
          }
          return m;
        }
      }
      continue;
    }
    if (rule.contains("onPodConditions") && rule["onPodConditions"].is_array()) {
      for (const auto& want : rule["onPodConditions"]) {
        const std::string type = want.value("type", "");
        const std::string status = want.value("status", "True");
        if (!conditions.is_array()) break;
        for (const auto& c : conditions) {
          if (c.value("type", "") != type || c.value("status", "") != status) continue;
          FailurePolicyMatch m{action, ""};
          if (action == FailureAction::kFailJob) {
            m.message = "Pod " + podName + " has condition " + type +
                        " matching FailJob rule at index " + std::to_string(i);
          }
          return m;
        }
      }
    }
  }
  return {};
}

const json* trueCondition(const json& job, const std::string& type) {
  const json* status = job.contains("status") ? &job["status"] : nullptr;
  if (!status || !status->is_object() || !status->contains("conditions")) return nullptr;
  const json& conds = (*status)["conditions"];
  if (!conds.is_array()) return nullptr;
  for (const auto& c : conds) {
    if (c.value("type", "") == type && c.value("status", "") == "True") return &c;
  }
  return nullptr;
}

bool isJobFinished(const json& job) {
  return trueCondition(job, "Complete") != nullptr || trueCondition(job, "Failed") != nullptr;
}

std::optional<std::chrono::system_clock::time_point> jobFinishTime(const json& job) {
  if (auto t = parseRfc3339(stringAt(job, "/status/completionTime"))) return t;
  for (const char* type : {"Complete", "Failed"}) {
    if (const json* c = trueCondition(job, type)) {
      if (auto t = parseRfc3339(c->value("lastTransitionTime", ""))) return t;
    }
  }
  return std::nullopt;
}

std::optional<std::chrono::system_clock::time_point> podFinishTime(const json& pod) {
  std::optional<std::chrono::system_clock::time_point> latest;
  for (const char* list : {"/status/containerStatuses", "/status/initContainerStatuses"}) {
    const json statuses = pod.value(json::json_pointer(list), json::array());
    if (!statuses.is_array()) continue;
    for (const auto& cs : statuses) {
      auto t = parseRfc3339(stringAt(cs, "/state/terminated/finishedAt"));
      if (t && (!latest || *t > *latest)) latest = t;
    }
  }
  if (latest) return latest;
  if (auto t = parseRfc3339(stringAt(pod, "/metadata/deletionTimestamp"))) return t;
  // No container says when: the latest condition change (Ready turning False), else creation.
  const json conditions = valueAt(pod, "/status/conditions", json::array());
  if (conditions.is_array()) {
    for (const auto& c : conditions) {
      auto t = parseRfc3339(c.value("lastTransitionTime", ""));
      if (t && (!latest || *t > *latest)) latest = t;
    }
  }
  if (latest) return latest;
  return parseRfc3339(stringAt(pod, "/metadata/creationTimestamp"));
}

}  // namespace minik8s::controllers::job
