#include "kubelet/pod_status.h"

#include "kubelet/pod_util.h"

namespace minik8s::kubelet {

namespace {

namespace v1 = ::runtime::v1;

json terminatedState(const v1::ContainerStatus& s, const std::string& runtimeName) {
  std::string reason = s.reason();
  if (reason.empty()) reason = s.exit_code() == 0 ? "Completed" : "Error";
  json t = {{"exitCode", s.exit_code()},
            {"reason", reason},
            {"startedAt", s.started_at() ? json(criTimeToRfc3339(s.started_at())) : json()},
            {"finishedAt", s.finished_at() ? json(criTimeToRfc3339(s.finished_at())) : json()},
            {"containerID", runtimeName + "://" + s.id()}};
  if (!s.message().empty()) t["message"] = s.message();
  return {{"terminated", t}};
}

json containerStatus(const json& spec, const ContainerView* view, bool initializing,
                     const std::string& runtimeName) {
  json cs = {{"name", spec.value("name", "")},
             {"image", spec.value("image", "")},
             {"imageID", ""},
             {"ready", false},
             {"restartCount", 0},
             {"started", false},
             {"state", json::object()},
             {"lastState", json::object()}};
  const v1::ContainerStatus* latest =
      view && !view->instances.empty() ? &view->instances[0] : nullptr;
  const v1::ContainerStatus* previous =
      view && view->instances.size() > 1 ? &view->instances[1] : nullptr;
  if (latest) {
    cs["restartCount"] = restartCountOf(*latest);
    cs["imageID"] = latest->image_ref();
    cs["containerID"] = runtimeName + "://" + latest->id();
  }
  bool hasWaitingReason = view && !view->waitingReason.empty();
  if (latest && latest->state() == v1::CONTAINER_RUNNING && !hasWaitingReason) {
    cs["state"] = {{"running", {{"startedAt", criTimeToRfc3339(latest->started_at())}}}};
    if (previous && previous->state() == v1::CONTAINER_EXITED)
      cs["lastState"] = terminatedState(*previous, runtimeName);
    cs["ready"] = view->ready;
    cs["started"] = view->started;
  } else if (latest && latest->state() == v1::CONTAINER_EXITED && !hasWaitingReason) {
    cs["state"] = terminatedState(*latest, runtimeName);
    if (previous && previous->state() == v1::CONTAINER_EXITED)
      cs["lastState"] = terminatedState(*previous, runtimeName);
  } else {
    std::string reason = hasWaitingReason ? view->waitingReason
                         : initializing   ? "PodInitializing"
                                          : "ContainerCreating";
    json waiting = {{"reason", reason}};
    if (hasWaitingReason && !view->waitingMessage.empty())
      waiting["message"] = view->waitingMessage;
    cs["state"] = {{"waiting", waiting}};
    if (latest && latest->state() == v1::CONTAINER_EXITED)
      cs["lastState"] = terminatedState(*latest, runtimeName);
  }
  return cs;
}

// A condition, keeping lastTransitionTime when its status did not change.
json condition(const json& oldStatus, const std::string& type, bool ok, const std::string& reason,
               const std::string& message, const std::string& now) {
  std::string status = ok ? "True" : "False";
  std::string transition = now;
  for (const auto& c : oldStatus.value("conditions", json::array())) {
    if (c.value("type", "") == type && c.value("status", "") == status &&
        c.contains("lastTransitionTime") && c["lastTransitionTime"].is_string())
      transition = c["lastTransitionTime"].get<std::string>();
  }
  json c = {{"type", type},
            {"status", status},
            {"lastProbeTime", nullptr},
            {"lastTransitionTime", transition}};
  if (!ok && !reason.empty()) c["reason"] = reason;
  if (!ok && !message.empty()) c["message"] = message;
  return c;
}

std::string nameList(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? " " : "") + names[i];
  return out + "]";
}

}  // namespace

int restartCountOf(const v1::ContainerStatus& status) {
  auto it = status.annotations().find(kRestartCountAnnotation);
  if (it == status.annotations().end()) return static_cast<int>(status.metadata().attempt());
  try {
    return std::stoi(it->second);
  } catch (...) {
    return 0;
  }
}

std::string podPhase(const json& pod, const json& initStatuses, const json& statuses) {
  const std::string policy = restartPolicy(pod);
  // Init containers: Pending until all succeeded; Failed when one failed for good.
  for (const auto& s : initStatuses) {
    const json& st = s["state"];
    if (st.contains("terminated") && st["terminated"].value("exitCode", -1) == 0) continue;
    bool failed = (st.contains("terminated") ||
                   (st.contains("waiting") && s["lastState"].contains("terminated")));
    if (failed && policy == "Never") return "Failed";
    return "Pending";
  }
  int unknown = 0, running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const auto& s : statuses) {
    const json& st = s["state"];
    if (st.contains("running")) {
      ++running;
    } else if (st.contains("terminated")) {
      ++stopped;
      if (st["terminated"].value("exitCode", -1) == 0) ++succeeded;
    } else if (st.contains("waiting")) {
      if (s["lastState"].contains("terminated"))
        ++stopped;
      else
        ++waiting;
    } else {
      ++unknown;
    }
  }
  if (waiting > 0) return "Pending";
  if (running > 0 && unknown == 0) return "Running";
  if (running == 0 && stopped > 0 && unknown == 0) {
    if (policy == "Always") return "Running";
    if (stopped == succeeded) return "Succeeded";
    return policy == "OnFailure" ? "Running" : "Failed";
  }
  return "Pending";
}

json computePodStatus(const json& pod, const PodRuntimeView& view, const StatusContext& ctx) {
  const json oldStatus = pod.value("status", json::object());
  const std::string now = formatRfc3339(ctx.now);
  json status = json::object();

  json initStatuses = json::array();
  std::vector<std::string> notInitialized;
  for (const auto& c : initContainers(pod)) {
    auto it = view.containers.find(c.value("name", ""));
    json cs = containerStatus(c, it == view.containers.end() ? nullptr : &it->second, false,
                              ctx.runtimeName);
    // An init container is "ready" once it completed, as Kubernetes reports it.
    if (cs["state"].contains("terminated") && cs["state"]["terminated"]["exitCode"] == 0)
      cs["ready"] = true;
    else
      notInitialized.push_back(c.value("name", ""));
    initStatuses.push_back(std::move(cs));
  }
  const bool initialized = notInitialized.empty();
  json statuses = json::array();
  std::vector<std::string> notReady;
  for (const auto& c : containers(pod)) {
    auto it = view.containers.find(c.value("name", ""));
    json cs = containerStatus(c, it == view.containers.end() ? nullptr : &it->second, !initialized,
                              ctx.runtimeName);
    if (!cs["ready"].get<bool>()) notReady.push_back(c.value("name", ""));
    statuses.push_back(std::move(cs));
  }

  std::string phase = podPhase(pod, initStatuses, statuses);
  status["phase"] = phase;
  const bool completed = phase == "Succeeded" || phase == "Failed";
  json conditions = json::array();
  conditions.push_back(
      condition(oldStatus, "Initialized", initialized || completed, "ContainersNotInitialized",
                "containers with incomplete status: " + nameList(notInitialized), now));
  std::string readyReason = completed ? "PodCompleted" : "ContainersNotReady";
  std::string readyMessage =
      completed ? "" : "containers with unready status: " + nameList(notReady);
  bool ready = notReady.empty() && !completed && initialized;
  conditions.push_back(condition(oldStatus, "Ready", ready, readyReason, readyMessage, now));
  conditions.push_back(
      condition(oldStatus, "ContainersReady", ready, readyReason, readyMessage, now));
  conditions.push_back(condition(oldStatus, "PodScheduled", true, "", "", now));
  status["conditions"] = conditions;

  if (!ctx.hostIP.empty()) {
    status["hostIP"] = ctx.hostIP;
    status["hostIPs"] = json::array({{{"ip", ctx.hostIP}}});
  }
  std::vector<std::string> ips = view.podIPs;
  if (hostNetwork(pod) && !ctx.hostIP.empty()) ips = {ctx.hostIP};
  if (ips.empty() && oldStatus.contains("podIPs") && oldStatus["podIPs"].is_array()) {
    // A stopped sandbox of a finished pod no longer knows its IP: keep the one reported.
    for (const auto& ip : oldStatus["podIPs"]) ips.push_back(ip.value("ip", ""));
  }
  if (!ips.empty()) {
    status["podIP"] = ips[0];
    json list = json::array();
    for (const auto& ip : ips) list.push_back({{"ip", ip}});
    status["podIPs"] = list;
  }
  status["startTime"] = oldStatus.contains("startTime") && oldStatus["startTime"].is_string()
                            ? oldStatus["startTime"]
                            : json(now);
  if (!initStatuses.empty()) status["initContainerStatuses"] = initStatuses;
  status["containerStatuses"] = statuses;
  status["qosClass"] = qosClass(pod);
  return status;
}

}  // namespace minik8s::kubelet
