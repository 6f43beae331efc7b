#include "kubelet/server/prometheus_stats.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/metrics.h"

namespace minik8s::kubelet::server {

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Series {
  Labels labels;
  double value = 0;
  std::optional<int64_t> timestampMs;
};

struct Family {
  std::string help, type;
  std::vector<Series> series;
};

// Families collected by name and written as client_golang's registry gathers them: by name,
// each family's series ordered by their label values, labels by name. A family without series
// is not written.
class Exposition {
 public:
  void add(const std::string& name, const char* type, std::string help, Labels labels, double value,
           std::optional<int64_t> timestampMs = std::nullopt) {
    Family& f = families_[name];
    f.type = type;
    f.help = std::move(help);
    std::sort(labels.begin(), labels.end());
    f.series.push_back({std::move(labels), value, timestampMs});
  }

  std::string text() {
    std::string out;
    for (auto& [name, f] : families_) {
      if (f.series.empty()) continue;
      std::stable_sort(f.series.begin(), f.series.end(), [](const Series& a, const Series& b) {
        for (size_t i = 0; i < a.labels.size() && i < b.labels.size(); ++i) {
          if (a.labels[i].second != b.labels[i].second)
            return a.labels[i].second < b.labels[i].second;
        }
        return a.timestampMs < b.timestampMs;
      });
      out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
      for (const auto& s : f.series) {
        out += name;
        if (!s.labels.empty()) {
          out.push_back('{');
          for (size_t i = 0; i < s.labels.size(); ++i) {
            if (i > 0) out.push_back(',');
            out += s.labels[i].first + "=\"";
            metrics::appendEscapedLabelValue(out, s.labels[i].second);
            out.push_back('"');
          }
          out.push_back('}');
        }
        out.push_back(' ');
        out += metrics::formatValue(s.value);
        if (s.timestampMs) out += " " + std::to_string(*s.timestampMs);
        out.push_back('\n');
      }
    }
    return out;
  }

 private:
  std::map<std::string, Family> families_;
};

constexpr const char* kCounter = "counter";
constexpr const char* kGauge = "gauge";
constexpr const char* kScrapeErrorHelp =
    "1 if there was an error while getting container metrics, 0 otherwise";

// Milliseconds since the epoch (truncated, as Go's Time.UnixMilli); none for an unset time.
std::optional<int64_t> millis(Clock::time_point t) {
  if (t == Clock::time_point{}) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

double seconds(uint64_t nanos) { return static_cast<double>(nanos) / 1e9; }

double secondsSinceEpoch(Clock::time_point t) {
  return static_cast<double>(
             std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count()) /
         1e9;
}

// ---- /metrics/cadvisor ----

Labels cadvisorLabels(const std::string& container, const std::string& id, const std::string& image,
                      const std::string& name, const std::string& namespaceName,
                      const std::string& pod) {
  return {{"container", container}, {"id", id},   {"image", image},
          {"name", name},           {"pod", pod}, {"namespace", namespaceName}};
}

Labels with(Labels labels, const char* name, std::string value) {
  labels.emplace_back(name, std::move(value));
  return labels;
}

void addCadvisorUsage(Exposition& e, const Labels& labels, const UsageSample& u) {
  auto ts = millis(u.time);
  if (u.usageCoreNanoSeconds) {
    // A kubelet's cAdvisor keeps no per-cpu figures: one series with cpu="total".
    e.add("container_cpu_usage_seconds_total", kCounter, "Cumulative cpu time consumed in seconds.",
          with(labels, "cpu", "total"), seconds(*u.usageCoreNanoSeconds), ts);
  }
  if (u.workingSetBytes) {
    e.add("container_memory_working_set_bytes", kGauge, "Current working set in bytes.", labels,
          static_cast<double>(*u.workingSetBytes), ts);
  }
  if (u.usageBytes) {
    e.add("container_memory_usage_bytes", kGauge,
          "Current memory usage in bytes, including all memory regardless of when it was "
          "accessed",
          labels, static_cast<double>(*u.usageBytes), ts);
  }
  if (u.rssBytes) {
    e.add("container_memory_rss", kGauge, "Size of RSS in bytes.", labels,
          static_cast<double>(*u.rssBytes), ts);
  }
}

void addCadvisorNetwork(Exposition& e, const Labels& labels, const NetworkUsage& n) {
  struct Counter {
    const char* name;
    const char* help;
    uint64_t InterfaceUsage::*field;
  };
  static const Counter kCounters[] = {
      {"container_network_receive_bytes_total", "Cumulative count of bytes received",
       &InterfaceUsage::rxBytes},
      {"container_network_receive_packets_total", "Cumulative count of packets received",
       &InterfaceUsage::rxPackets},
      {"container_network_receive_packets_dropped_total",
       "Cumulative count of packets dropped while receiving", &InterfaceUsage::rxDropped},
      {"container_network_receive_errors_total",
       "Cumulative count of errors encountered while receiving", &InterfaceUsage::rxErrors},
      {"container_network_transmit_bytes_total", "Cumulative count of bytes transmitted",
       &InterfaceUsage::txBytes},
      {"container_network_transmit_packets_total", "Cumulative count of packets transmitted",
       &InterfaceUsage::txPackets},
      {"container_network_transmit_packets_dropped_total",
       "Cumulative count of packets dropped while transmitting", &InterfaceUsage::txDropped},
      {"container_network_transmit_errors_total",
       "Cumulative count of errors encountered while transmitting", &InterfaceUsage::txErrors},
  };
  auto ts = millis(n.time);
  for (const auto& i : n.interfaces) {
    for (const auto& c : kCounters) {
      e.add(c.name, kCounter, c.help, with(labels, "interface", i.name),
            static_cast<double>(i.*c.field), ts);
    }
  }
}

void addCadvisorStartTime(Exposition& e, const Labels& labels, Clock::time_point t) {
  // cAdvisor: whole seconds (Time.Unix()), no timestamp.
  e.add("container_start_time_seconds", kGauge,
        "Start time of the container since unix epoch in seconds.", labels,
        static_cast<double>(
            std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count()));
}

// ---- /metrics/resource ----

void addScrapeErrors(Exposition& e, bool failed) {
  // scrape_error is deprecated (1.29) in favour of resource_scrape_error; both are served.
  e.add("scrape_error", kGauge, std::string("[ALPHA] ") + kScrapeErrorHelp, {}, failed ? 1 : 0);
  e.add("resource_scrape_error", kGauge, std::string("[STABLE] ") + kScrapeErrorHelp, {},
        failed ? 1 : 0);
}

}  // namespace

std::string defaultPodCgroup(const PodUsage& pod) { return "/kubepods/pod" + pod.uid; }

std::string renderCadvisorMetrics(const Result<StatsSummary>& result) {
  Exposition e;
  e.add("container_scrape_error", kGauge, kScrapeErrorHelp, {}, result.ok() ? 0 : 1);
  if (!result.ok()) return e.text();
  const StatsSummary& s = *result;

  Labels root = cadvisorLabels("", "/", "", "", "", "");
  addCadvisorUsage(e, root, s.node);
  if (s.nodeNetwork) addCadvisorNetwork(e, root, *s.nodeNetwork);

  for (const auto& p : s.pods) {
    const std::string cgroup = p.cgroupPath.empty() ? defaultPodCgroup(p) : p.cgroupPath;
    addCadvisorUsage(e, cadvisorLabels("", cgroup, "", "", p.namespaceName, p.name), podTotal(p));
    for (const auto& c : p.containers) {
      Labels labels =
          cadvisorLabels(c.name, cgroup + "/" + c.id, c.image, c.id, p.namespaceName, p.name);
      addCadvisorUsage(e, labels, c.usage);
      if (c.startTime) addCadvisorStartTime(e, labels, *c.startTime);
    }
    Labels sandbox = cadvisorLabels("", p.sandboxId.empty() ? cgroup : cgroup + "/" + p.sandboxId,
                                    p.sandboxImage, p.sandboxId, p.namespaceName, p.name);
    if (p.sandboxStartTime) addCadvisorStartTime(e, sandbox, *p.sandboxStartTime);
    if (p.network) addCadvisorNetwork(e, sandbox, *p.network);
  }

  if (s.machine) {
    Labels machine = {{"boot_id", s.machine->bootId},
                      {"machine_id", s.machine->machineId},
                      {"system_uuid", s.machine->systemUuid}};
    e.add("machine_cpu_cores", kGauge, "Number of logical CPU cores.", machine,
          static_cast<double>(s.machine->cpuCores));
    e.add("machine_memory_bytes", kGauge, "Amount of memory installed on the machine.", machine,
          static_cast<double>(s.machine->memoryBytes));
  }
  return e.text();
}

std::string renderResourceMetrics(const Result<StatsSummary>& result) {
  Exposition e;
  addScrapeErrors(e, !result.ok());
  if (!result.ok()) return e.text();
  const StatsSummary& s = *result;

  if (s.node.usageCoreNanoSeconds) {
    e.add("node_cpu_usage_seconds_total", kCounter,
          "[STABLE] Cumulative cpu time consumed by the node in core-seconds", {},
          seconds(*s.node.usageCoreNanoSeconds), millis(s.node.time));
  }
  if (s.node.workingSetBytes) {
    e.add("node_memory_working_set_bytes", kGauge,
          "[STABLE] Current working set of the node in bytes", {},
          static_cast<double>(*s.node.workingSetBytes), millis(s.node.time));
  }
  for (const auto& p : s.pods) {
    for (const auto& c : p.containers) {
      Labels labels = {{"container", c.name}, {"namespace", p.namespaceName}, {"pod", p.name}};
      if (c.startTime && c.startTime->time_since_epoch().count() > 0) {
        e.add("container_start_time_seconds", kGauge,
              "[STABLE] Start time of the container since unix epoch in seconds", labels,
              secondsSinceEpoch(*c.startTime));
      }
      if (c.usage.usageCoreNanoSeconds) {
        e.add("container_cpu_usage_seconds_total", kCounter,
              "[STABLE] Cumulative cpu time consumed by the container in core-seconds", labels,
              seconds(*c.usage.usageCoreNanoSeconds), millis(c.usage.time));
      }
      if (c.usage.workingSetBytes) {
        e.add("container_memory_working_set_bytes", kGauge,
              "[STABLE] Current working set of the container in bytes", labels,
              static_cast<double>(*c.usage.workingSetBytes), millis(c.usage.time));
      }
    }
    UsageSample total = podTotal(p);
    Labels labels = {{"namespace", p.namespaceName}, {"pod", p.name}};
    if (total.usageCoreNanoSeconds) {
      e.add("pod_cpu_usage_seconds_total", kCounter,
            "[STABLE] Cumulative cpu time consumed by the pod in core-seconds", labels,
            seconds(*total.usageCoreNanoSeconds), millis(total.time));
    }
    if (total.workingSetBytes) {
      e.add("pod_memory_working_set_bytes", kGauge,
            "[STABLE] Current working set of the pod in bytes", labels,
            static_cast<double>(*total.workingSetBytes), millis(total.time));
    }
  }
  return e.text();
}

}  // namespace minik8s::kubelet::server
