#include "kubelet/pod_util.h"

#include <chrono>

#include "api/object_meta.h"
#include "api/quantity.h"
#include "common/time_util.h"

namespace minik8s::kubelet {

using api::stringAt;

namespace {

const json& emptyArray() {
  static const json kEmpty = json::array();
  return kEmpty;
}

// The milli value of resources.<kind>.<name>, or -1 when absent or unparsable.
int64_t milliOf(const json& container, const char* kind, const char* name) {
  if (!container.contains("resources") || !container["resources"].is_object()) return -1;
  const json& r = container["resources"];
  if (!r.contains(kind) || !r[kind].is_object() || !r[kind].contains(name)) return -1;
  auto q = api::Quantity::fromJson(r[kind][name]);
  return q.ok() ? q->milliValue() : -1;
}

}  // namespace

std::string podUid(const json& pod) { return stringAt(pod, "/metadata/uid"); }
std::string podName(const json& pod) { return stringAt(pod, "/metadata/name"); }
std::string podNamespace(const json& pod) {
  std::string ns = stringAt(pod, "/metadata/namespace");
  return ns.empty() ? "default" : ns;
}
std::string podKey(const json& pod) { return podNamespace(pod) + "/" + podName(pod); }

std::string restartPolicy(const json& pod) {
  std::string p = stringAt(pod, "/spec/restartPolicy");
  return p.empty() ? "Always" : p;
}

bool hostNetwork(const json& pod) {
  return pod.contains("/spec/hostNetwork"_json_pointer) &&
         pod.at("/spec/hostNetwork"_json_pointer).is_boolean() &&
         pod.at("/spec/hostNetwork"_json_pointer).get<bool>();
}

bool isTerminating(const json& pod) {
  return pod.contains("/metadata/deletionTimestamp"_json_pointer) &&
         pod.at("/metadata/deletionTimestamp"_json_pointer).is_string();
}

int64_t terminationGracePeriod(const json& pod) {
  const auto deletion = "/metadata/deletionGracePeriodSeconds"_json_pointer;
  const auto spec = "/spec/terminationGracePeriodSeconds"_json_pointer;
  if (isTerminating(pod) && pod.contains(deletion) && pod.at(deletion).is_number_integer())
    return pod.at(deletion).get<int64_t>();
  if (pod.contains(spec) && pod.at(spec).is_number_integer()) return pod.at(spec).get<int64_t>();
  return 30;
}

const json& containers(const json& pod) {
  if (pod.contains("/spec/containers"_json_pointer) &&
      pod.at("/spec/containers"_json_pointer).is_array())
    return pod.at("/spec/containers"_json_pointer);
  return emptyArray();
}

const json& initContainers(const json& pod) {
  if (pod.contains("/spec/initContainers"_json_pointer) &&
      pod.at("/spec/initContainers"_json_pointer).is_array())
    return pod.at("/spec/initContainers"_json_pointer);
  return emptyArray();
}

std::string imagePullPolicy(const json& container) {
  std::string p = container.value("imagePullPolicy", "");
  if (!p.empty()) return p;
  std::string image = container.value("image", "");
  if (image.find('@') != std::string::npos) return "IfNotPresent";
  auto slash = image.rfind('/');
  auto colon = image.rfind(':');
  bool tagged = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  if (!tagged || image.substr(colon + 1) == "latest") return "Always";
  return "IfNotPresent";
}

std::string qosClass(const json& pod) {
  bool anySet = false;
  bool guaranteed = true;
  auto visit = [&](const json& list) {
    for (const auto& c : list) {
      for (const char* res : {"cpu", "memory"}) {
        int64_t req = milliOf(c, "requests", res);
        int64_t lim = milliOf(c, "limits", res);
        if (req > 0 || lim > 0) anySet = true;
        if (lim <= 0)
          guaranteed = false;
        else if (req >= 0 && req != lim)
          guaranteed = false;
      }
    }
  };
  visit(initContainers(pod));
  visit(containers(pod));
  if (!anySet) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

v1::LinuxContainerResources linuxResources(const json& container) {
  v1::LinuxContainerResources r;
  int64_t cpuRequest = milliOf(container, "requests", "cpu");
  int64_t cpuLimit = milliOf(container, "limits", "cpu");
  if (cpuRequest < 0) cpuRequest = cpuLimit;
  // Kubernetes' MilliCPUToShares: 1 core = 1024 shares, at least 2.
  int64_t shares = cpuRequest <= 0 ? 2 : std::max<int64_t>(2, cpuRequest * 1024 / 1000);
  r.set_cpu_shares(shares);
  if (cpuLimit > 0) {
    constexpr int64_t kPeriod = 100000;  // 100 ms, the CFS default
    r.set_cpu_period(kPeriod);
    r.set_cpu_quota(std::max<int64_t>(1000, cpuLimit * kPeriod / 1000));
  }
  int64_t memLimit = milliOf(container, "limits", "memory");
  if (memLimit > 0) r.set_memory_limit_in_bytes(memLimit / 1000);
  return r;
}

std::string criTimeToRfc3339(int64_t nanos) {
  if (nanos <= 0) return "";
  return formatRfc3339(Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(nanos))));
}

}  // namespace minik8s::kubelet
