#include "api/printers/pod_cells.h"

#include <map>
#include <string>

#include "api/table.h"

namespace minik8s::api::printers {
namespace {

bool isRestartableInitContainer(const json* container) {
  return container != nullptr && str(*container, "restartPolicy") == "Always";
}

bool conditionTrue(const json& status, std::string_view type) {
  for (const auto& c : array(status, "conditions")) {
    if (str(c, "type") == type) return str(c, "status") == "True";
  }
  return false;
}

// Keeps the latest lastState.terminated.finishedAt seen.
void noteLastRestart(const json& containerStatus, std::optional<TimePoint>& latest) {
  const json& terminated = object(object(containerStatus, "lastState"), "terminated");
  if (terminated.empty()) return;
  auto finished = parseTime(terminated.value("finishedAt", json()));
  if (finished && (!latest || *latest < *finished)) latest = finished;
}

std::string terminatedReason(const json& terminated, const std::string& prefix) {
  std::string reason = str(terminated, "reason");
  if (!reason.empty()) return prefix + reason;
  int64_t signal = integer(terminated, "signal");
  if (signal != 0) return prefix + "Signal:" + std::to_string(signal);
  return prefix + "ExitCode:" + std::to_string(integer(terminated, "exitCode"));
}

}  // namespace

json podCells(const json& pod, TimePoint now) {
  const json& meta = object(pod, "metadata");
  const json& spec = object(pod, "spec");
  const json& status = object(pod, "status");

  int64_t restarts = 0;
  int64_t restartableInitRestarts = 0;
  int64_t totalContainers = static_cast<int64_t>(array(spec, "containers").size());
  int64_t readyContainers = 0;
  std::optional<TimePoint> lastRestart, lastRestartableInitRestart;

  std::string phase = str(status, "phase");
  std::string reason = str(status, "reason", phase);
  for (const auto& c : array(status, "conditions")) {
    if (str(c, "type") == "PodScheduled" && str(c, "reason") == "SchedulingGated") {
      reason = "SchedulingGated";
    }
  }

  std::map<std::string, const json*> initContainers;
  for (const auto& c : array(spec, "initContainers")) {
    initContainers[str(c, "name")] = &c;
    if (isRestartableInitContainer(&c)) ++totalContainers;
  }

  bool initializing = false;
  const json& initStatuses = array(status, "initContainerStatuses");
  for (size_t i = 0; i < initStatuses.size(); ++i) {
    const json& cs = initStatuses[i];
    auto it = initContainers.find(str(cs, "name"));
    const json* container = it == initContainers.end() ? nullptr : it->second;
    restarts += integer(cs, "restartCount");
    noteLastRestart(cs, lastRestart);
    if (isRestartableInitContainer(container)) {
      restartableInitRestarts += integer(cs, "restartCount");
      noteLastRestart(cs, lastRestartableInitRestart);
    }
    const json& state = object(cs, "state");
    const json& terminated = object(state, "terminated");
    const json& waiting = object(state, "waiting");
    if (!terminated.empty() && integer(terminated, "exitCode") == 0) continue;
    if (isRestartableInitContainer(container) && boolean(cs, "started")) {
      if (boolean(cs, "ready")) ++readyContainers;
      continue;
    }
    if (!terminated.empty()) {
      reason = terminatedReason(terminated, "Init:");
    } else if (!str(waiting, "reason").empty() && str(waiting, "reason") != "PodInitializing") {
      reason = "Init:" + str(waiting, "reason");
    } else {
      reason =
          "Init:" + std::to_string(i) + "/" + std::to_string(array(spec, "initContainers").size());
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(status, "Initialized")) {
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInitRestart;
    bool hasRunning = false;
    const json& statuses = array(status, "containerStatuses");
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      const json& cs = *it;
      restarts += integer(cs, "restartCount");
      noteLastRestart(cs, lastRestart);
      const json& state = object(cs, "state");
      const json& waiting = object(state, "waiting");
      const json& terminated = object(state, "terminated");
      if (!str(waiting, "reason").empty()) {
        reason = str(waiting, "reason");
      } else if (!terminated.empty()) {
        reason = terminatedReason(terminated, "");
      } else if (boolean(cs, "ready") && state.contains("running")) {
        hasRunning = true;
        ++readyContainers;
      }
    }
    // A pod whose last container completed but another still runs is not "Completed".
    if (reason == "Completed" && hasRunning) {
      reason = conditionTrue(status, "Ready") ? "Running" : "NotReady";
    }
  }

  if (meta.contains("deletionTimestamp") && str(status, "reason") == "NodeLost") {
    reason = "Unknown";
  } else if (meta.contains("deletionTimestamp") && phase != "Succeeded" && phase != "Failed") {
    reason = "Terminating";
  }

  std::string restartsCell = std::to_string(restarts);
  if (restarts != 0 && lastRestart) {
    restartsCell +=
        " (" + humanDuration(std::chrono::duration_cast<std::chrono::seconds>(now - *lastRestart)) +
        " ago)";
  }

  std::string podIP;
  const json& podIPs = array(status, "podIPs");
  if (!podIPs.empty()) podIP = str(podIPs[0], "ip");
  if (podIP.empty()) podIP = str(status, "podIP");  // objects written before podIPs was filled
  std::string readinessGates = "<none>";
  const json& gates = array(spec, "readinessGates");
  if (!gates.empty()) {
    int trueConditions = 0;
    for (const auto& g : gates) {
      if (conditionTrue(status, str(g, "conditionType"))) ++trueConditions;
    }
    readinessGates = std::to_string(trueConditions) + "/" + std::to_string(gates.size());
  }
  auto orNone = [](std::string s) { return s.empty() ? std::string("<none>") : s; };
  return json::array(
      {str(meta, "name"), std::to_string(readyContainers) + "/" + std::to_string(totalContainers),
       reason, restartsCell, since(meta.value("creationTimestamp", json()), now), orNone(podIP),
       orNone(str(spec, "nodeName")), orNone(str(status, "nominatedNodeName")), readinessGates});
}

}  // namespace minik8s::api::printers
