#include "api/table.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "api/printers/pod_cells.h"
#include "api/printers/print_format.h"
#include "api/printers/quota_cells.h"
#include "api/printers/storage_cells.h"
#include "common/strings.h"

namespace minik8s::api {
namespace {

using namespace printers;  // NOLINT(google-build-using-namespace): the helpers of this file

const char kNameDoc[] = "Name must be unique within a namespace.";
const char kAgeDoc[] =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

TableColumn nameColumn() { return {"Name", "string", "name", kNameDoc, 0}; }
TableColumn ageColumn() { return {"Age", "string", "", kAgeDoc, 0}; }
TableColumn col(std::string name, std::string description, std::string type = "string",
                int priority = 0) {
  return {std::move(name), std::move(type), "", std::move(description), priority};
}
TableColumn wide(std::string name, std::string description) {
  return col(std::move(name), std::move(description), "string", 1);
}

std::string orNone(std::string s) { return s.empty() ? "<none>" : s; }

// "a,b,c + 2 more..." as upstream lists at most `max` entries.
std::string listWithMore(const std::vector<std::string>& items, size_t total, size_t max) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < max; ++i) out += (i ? "," : "") + items[i];
  if (total > max) out += " + " + std::to_string(total - max) + " more...";
  return out;
}

std::string hostPort(const std::string& ip, int64_t port) {
  bool v6 = ip.find(':') != std::string::npos;
  return (v6 ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

struct Printer {
  std::vector<TableColumn> columns;
  std::function<json(const json& obj, const json& meta, TimePoint now)> cells;
};

std::string age(const json& meta, TimePoint now) {
  return since(meta.value("creationTimestamp", json()), now);
}

// ---- workloads

json deploymentCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& podSpec = object(object(spec, "template"), "spec");
  return json::array({str(meta, "name"),
                      std::to_string(integer(status, "readyReplicas")) + "/" +
                          std::to_string(integer(spec, "replicas", 1)),
                      integer(status, "updatedReplicas"), integer(status, "availableReplicas"),
                      age(meta, now), containerNames(podSpec), containerImages(podSpec),
                      labelSelectorString(object(spec, "selector"))});
}

json daemonSetCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& podSpec = object(object(spec, "template"), "spec");
  std::string nodeSelector;
  for (const auto& [k, v] : object(podSpec, "nodeSelector").items()) {
    if (!nodeSelector.empty()) nodeSelector += ",";
    nodeSelector += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return json::array({str(meta, "name"), integer(status, "desiredNumberScheduled"),
                      integer(status, "currentNumberScheduled"), integer(status, "numberReady"),
                      integer(status, "updatedNumberScheduled"), integer(status, "numberAvailable"),
                      orNone(nodeSelector), age(meta, now), containerNames(podSpec),
                      containerImages(podSpec),
                      orNone(labelSelectorString(object(spec, "selector")))});
}

json statefulSetCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& podSpec = object(object(spec, "template"), "spec");
  return json::array({str(meta, "name"),
                      std::to_string(integer(status, "readyReplicas")) + "/" +
                          std::to_string(integer(spec, "replicas", 1)),
                      age(meta, now), containerNames(podSpec), containerImages(podSpec)});
}

json controllerRevisionCells(const json& obj, const json& meta, TimePoint now) {
  std::string controller = "<none>";
  for (const auto& ref : array(meta, "ownerReferences")) {
    if (ref.value("controller", false)) {
      std::string group = str(ref, "apiVersion");
      group = group.find('/') == std::string::npos ? "" : "." + group.substr(0, group.find('/'));
      const std::string kind = asciiLower(str(ref, "kind"));
      controller = kind + group + "/" + str(ref, "name");
    }
  }
  return json::array({str(meta, "name"), controller, integer(obj, "revision"), age(meta, now)});
}

json replicaSetCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& podSpec = object(object(spec, "template"), "spec");
  return json::array({str(meta, "name"), integer(spec, "replicas", 1), integer(status, "replicas"),
                      integer(status, "readyReplicas"), age(meta, now), containerNames(podSpec),
                      containerImages(podSpec),
                      orNone(labelSelectorString(object(spec, "selector")))});
}

bool jobCondition(const json& status, std::string_view type) {
  for (const auto& c : array(status, "conditions")) {
    if (str(c, "type") == type) return str(c, "status") == "True";
  }
  return false;
}

json jobCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  int64_t succeeded = integer(status, "succeeded");
  std::string completions;
  if (spec.contains("completions") && spec["completions"].is_number_integer()) {
    completions = std::to_string(succeeded) + "/" + std::to_string(integer(spec, "completions"));
  } else if (integer(spec, "parallelism") > 1) {
    completions =
        std::to_string(succeeded) + "/1 of " + std::to_string(integer(spec, "parallelism"));
  } else {
    completions = std::to_string(succeeded) + "/1";
  }
  std::string duration;
  auto start = parseTime(status.value("startTime", json()));
  if (start) {
    auto end = parseTime(status.value("completionTime", json())).value_or(now);
    duration = humanDuration(std::chrono::duration_cast<std::chrono::seconds>(end - *start));
  }
  std::string state = "Running";
  if (jobCondition(status, "Complete")) {
    state = "Complete";
  } else if (jobCondition(status, "Failed")) {
    state = "Failed";
  } else if (meta.contains("deletionTimestamp")) {
    state = "Terminating";
  } else if (jobCondition(status, "Suspended")) {
    state = "Suspended";
  } else if (jobCondition(status, "FailureTarget")) {
    state = "FailureTarget";
  }
  const json& podSpec = object(object(spec, "template"), "spec");
  return json::array({str(meta, "name"), state, completions, duration, age(meta, now),
                      containerNames(podSpec), containerImages(podSpec),
                      orNone(labelSelectorString(object(spec, "selector")))});
}

json cronJobCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& jobSpec = object(object(spec, "jobTemplate"), "spec");
  const json& podSpec = object(object(jobSpec, "template"), "spec");
  std::string last = status.contains("lastScheduleTime") ? since(status["lastScheduleTime"], now)
                                                         : std::string("<none>");
  std::string suspend = spec.contains("suspend") && spec["suspend"].is_boolean()
                            ? (spec["suspend"].get<bool>() ? "True" : "False")
                            : "<unset>";
  return json::array({str(meta, "name"), str(spec, "schedule"), str(spec, "timeZone", "<none>"),
                      suspend, static_cast<int64_t>(array(status, "active").size()), last,
                      age(meta, now), containerNames(podSpec), containerImages(podSpec),
                      orNone(labelSelectorString(object(jobSpec, "selector")))});
}

// ---- services and networking

std::string servicePorts(const json& spec) {
  std::string out;
  for (const auto& p : array(spec, "ports")) {
    std::string piece = std::to_string(integer(p, "port"));
    if (integer(p, "nodePort") > 0) piece += ":" + std::to_string(integer(p, "nodePort"));
    piece += "/" + str(p, "protocol", "TCP");
    out += (out.empty() ? "" : ",") + piece;
  }
  return out;
}

std::string serviceExternalIP(const json& spec, const json& status) {
  std::vector<std::string> external;
  for (const auto& ip : array(spec, "externalIPs")) {
    if (ip.is_string()) external.push_back(ip.get<std::string>());
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
    return out;
  };
  std::string type = str(spec, "type", "ClusterIP");
  if (type == "ClusterIP" || type == "NodePort")
    return external.empty() ? "<none>" : join(external);
  if (type == "LoadBalancer") {
    std::set<std::string> lb;  // sorted and unique, as upstream's string set
    for (const auto& in : array(object(status, "loadBalancer"), "ingress")) {
      std::string ip = str(in, "ip");
      if (!ip.empty()) {
        lb.insert(ip);
      } else if (!str(in, "hostname").empty()) {
        lb.insert(str(in, "hostname"));
      }
    }
    std::vector<std::string> all(lb.begin(), lb.end());
    all.insert(all.end(), external.begin(), external.end());
    return all.empty() ? "<pending>" : join(all);
  }
  if (type == "ExternalName") return str(spec, "externalName");
  return "<unknown>";
}

json serviceCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  std::string clusterIP;
  const json& clusterIPs = array(spec, "clusterIPs");
  if (!clusterIPs.empty() && clusterIPs[0].is_string()) clusterIP = clusterIPs[0];
  if (clusterIP.empty()) clusterIP = str(spec, "clusterIP");
  return json::array({str(meta, "name"), str(spec, "type", "ClusterIP"), orNone(clusterIP),
                      serviceExternalIP(spec, object(obj, "status")), orNone(servicePorts(spec)),
                      age(meta, now), labelsString(object(spec, "selector"))});
}

json endpointsCells(const json& obj, const json& meta, TimePoint now) {
  const json& subsets = array(obj, "subsets");
  std::string endpoints;
  if (subsets.empty()) {
    endpoints = "<none>";
  } else {
    std::vector<std::string> list;
    size_t count = 0;
    for (const auto& ss : subsets) {
      const json& addresses = array(ss, "addresses");
      const json& ports = array(ss, "ports");
      if (ports.empty()) {  // headless services without ports list bare IPs
        for (const auto& a : addresses) list.push_back(str(a, "ip"));
        count += addresses.size();
        continue;
      }
      for (const auto& p : ports) {
        for (const auto& a : addresses) list.push_back(hostPort(str(a, "ip"), integer(p, "port")));
        count += addresses.size();
      }
    }
    endpoints = listWithMore(list, count, 3);
  }
  return json::array({str(meta, "name"), endpoints, age(meta, now)});
}

json endpointSliceCells(const json& obj, const json& meta, TimePoint now) {
  std::vector<std::string> ports, addresses;
  for (const auto& p : array(obj, "ports")) {
    if (p.contains("port") && p["port"].is_number_integer()) {
      ports.push_back(std::to_string(integer(p, "port")));
    } else {
      ports.push_back(str(p, "name", "*"));
    }
  }
  for (const auto& e : array(obj, "endpoints")) {
    for (const auto& a : array(e, "addresses")) {
      if (a.is_string()) addresses.push_back(a);
    }
  }
  auto format = [](const std::vector<std::string>& v) {
    std::string s = listWithMore(v, v.size(), 3);
    return s.empty() ? std::string("<unset>") : s;
  };
  return json::array({str(meta, "name"), str(obj, "addressType"), format(ports), format(addresses),
                      age(meta, now)});
}

json ingressCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  // Up to three hosts; once three are listed, any further rule counts as "more".
  std::string hostsCell;
  size_t listed = 0;
  bool more = false;
  const json& rules = array(spec, "rules");
  for (const auto& r : rules) {
    if (listed == 3) more = true;
    if (!more && !str(r, "host").empty()) {
      hostsCell += (listed++ ? "," : "") + str(r, "host");
    }
  }
  if (hostsCell.empty()) hostsCell = "*";
  if (more) hostsCell += " + " + std::to_string(rules.size() - 3) + " more...";
  std::set<std::string> address;
  for (const auto& in : array(object(object(obj, "status"), "loadBalancer"), "ingress")) {
    if (!str(in, "ip").empty()) {
      address.insert(str(in, "ip"));
    } else if (!str(in, "hostname").empty()) {
      address.insert(str(in, "hostname"));
    }
  }
  std::string addressCell;
  for (const auto& a : address) addressCell += (addressCell.empty() ? "" : ",") + a;
  return json::array({str(meta, "name"), str(spec, "ingressClassName", "<none>"), hostsCell,
                      addressCell, array(spec, "tls").empty() ? "80" : "80, 443", age(meta, now)});
}

json networkPolicyCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  return json::array({str(meta, "name"), orNone(labelSelectorString(object(spec, "podSelector"))),
                      age(meta, now)});
}

json dnsCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  std::string paths;
  for (const auto& p : array(spec, "paths")) {
    paths += (paths.empty() ? "" : ",") + str(p, "path") + "->" + str(p, "serviceName") + ":" +
             std::to_string(integer(p, "servicePort"));
  }
  return json::array({str(meta, "name"), str(spec, "host"), orNone(paths), age(meta, now)});
}

// ---- cluster

json nodeCells(const json& obj, const json& meta, TimePoint now) {
  const json& status = object(obj, "status");
  std::string state;
  for (const auto& c : array(status, "conditions")) {
    if (str(c, "type") == "Ready") {
      state = str(c, "status") == "True" ? "Ready" : "NotReady";
      break;
    }
  }
  if (state.empty()) state = "Unknown";
  if (boolean(object(obj, "spec"), "unschedulable")) state += ",SchedulingDisabled";

  std::set<std::string> roles;
  for (const auto& [k, v] : object(meta, "labels").items()) {
    static constexpr std::string_view kRolePrefix = "node-role.kubernetes.io/";
    if (k.starts_with(kRolePrefix) && k.size() > kRolePrefix.size()) {
      roles.insert(k.substr(kRolePrefix.size()));
    } else if (k == "kubernetes.io/role" && v.is_string() && !v.get<std::string>().empty()) {
      roles.insert(v.get<std::string>());
    }
  }
  std::string rolesCell;
  for (const auto& r : roles) rolesCell += (rolesCell.empty() ? "" : ",") + r;

  auto address = [&](std::string_view type) {
    for (const auto& a : array(status, "addresses")) {
      if (str(a, "type") == type) return str(a, "address");
    }
    return std::string("<none>");
  };
  const json& info = object(status, "nodeInfo");
  auto unknown = [](std::string s) { return s.empty() ? std::string("<unknown>") : s; };
  return json::array({str(meta, "name"), state, orNone(rolesCell), age(meta, now),
                      str(info, "kubeletVersion"), address("InternalIP"), address("ExternalIP"),
                      unknown(str(info, "osImage")), unknown(str(info, "kernelVersion")),
                      unknown(str(info, "containerRuntimeVersion"))});
}

json eventCells(const json& obj, const json& meta, TimePoint now) {
  std::string first = obj.contains("firstTimestamp") && parseTime(obj["firstTimestamp"])
                          ? since(obj["firstTimestamp"], now)
                          : since(obj.value("eventTime", json()), now);
  std::string last = obj.contains("lastTimestamp") && parseTime(obj["lastTimestamp"])
                         ? since(obj["lastTimestamp"], now)
                         : first;
  int64_t count = integer(obj, "count");
  const json& series = object(obj, "series");
  if (obj.contains("series") && obj["series"].is_object()) {
    last = since(series.value("lastObservedTime", json()), now);
    count = integer(series, "count");
  } else if (count == 0) {
    count = 1;  // singleton events of the events.k8s.io API carry no count
  }
  const json& involved = object(obj, "involvedObject");
  const std::string kind = asciiLower(str(involved, "kind"));
  std::string target = str(involved, "name").empty() ? kind : kind + "/" + str(involved, "name");
  const json& source = object(obj, "source");
  std::string component = str(source, "component");
  if (component.empty()) component = str(obj, "reportingComponent");
  std::string host = str(source, "host");
  if (host.empty()) host = str(obj, "reportingInstance");
  std::string message = str(obj, "message");
  auto notSpace = [](unsigned char c) { return !std::isspace(c); };
  message.erase(message.begin(), std::find_if(message.begin(), message.end(), notSpace));
  message.erase(std::find_if(message.rbegin(), message.rend(), notSpace).base(), message.end());
  return json::array({last, str(obj, "type"), str(obj, "reason"), target,
                      str(involved, "fieldPath"),
                      host.empty() ? component : component + ", " + host, message, first, count,
                      str(meta, "name")});
}

// ---- autoscaling

std::string hpaTargets(const json& spec, const json& status) {
  // autoscaling/v1 objects: one CPU utilization target.
  if (!spec.contains("metrics") && spec.contains("targetCPUUtilizationPercentage")) {
    std::string current = "<unknown>";
    if (status.contains("currentCPUUtilizationPercentage")) {
      current = std::to_string(integer(status, "currentCPUUtilizationPercentage")) + "%";
    }
    return "cpu: " + current + "/" +
           std::to_string(integer(spec, "targetCPUUtilizationPercentage")) + "%";
  }
  const json& metrics = array(spec, "metrics");
  if (metrics.empty()) return "<none>";
  const json& statuses = array(status, "currentMetrics");
  std::vector<std::string> list;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const json& m = metrics[i];
    std::string type = str(m, "type");
    const json* current = i < statuses.size() ? &statuses[i] : nullptr;
    auto currentOf = [&](std::string_view source, std::string_view field) {
      if (current == nullptr) return std::string("<unknown>");
      const json& c = object(object(*current, source), "current");
      if (!c.contains(field)) return std::string("<unknown>");
      if (c[field].is_number_integer()) return std::to_string(c[field].get<int64_t>()) + "%";
      return str(c, field, "<unknown>");
    };
    if (type == "Resource" || type == "ContainerResource") {
      std::string source = type == "Resource" ? "resource" : "containerResource";
      const json& src = object(m, source);
      const json& target = object(src, "target");
      if (target.contains("averageValue")) {
        list.push_back(str(src, "name") + ": " + currentOf(source, "averageValue") + "/" +
                       str(target, "averageValue"));
      } else {
        std::string goal = target.contains("averageUtilization")
                               ? std::to_string(integer(target, "averageUtilization")) + "%"
                               : "<auto>";
        list.push_back(str(src, "name") + ": " + currentOf(source, "averageUtilization") + "/" +
                       goal);
      }
    } else if (type == "Pods") {
      list.push_back(currentOf("pods", "averageValue") + "/" +
                     str(object(object(m, "pods"), "target"), "averageValue"));
    } else if (type == "Object" || type == "External") {
      std::string source = type == "Object" ? "object" : "external";
      const json& target = object(object(m, source), "target");
      if (target.contains("averageValue")) {
        list.push_back(currentOf(source, "averageValue") + "/" + str(target, "averageValue") +
                       " (avg)");
      } else {
        list.push_back(currentOf(source, "value") + "/" + str(target, "value"));
      }
    } else {
      list.push_back("<unknown type>");
    }
  }
  std::string out;
  for (size_t i = 0; i < list.size() && i < 2; ++i) out += (i ? ", " : "") + list[i];
  if (list.size() > 2) out += " + " + std::to_string(list.size() - 2) + " more...";
  return out;
}

json hpaCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& ref = object(spec, "scaleTargetRef");
  std::string minPods = spec.contains("minReplicas") && spec["minReplicas"].is_number_integer()
                            ? std::to_string(integer(spec, "minReplicas"))
                            : "<unset>";
  return json::array({str(meta, "name"), str(ref, "kind") + "/" + str(ref, "name"),
                      hpaTargets(spec, status), minPods, integer(spec, "maxReplicas"),
                      integer(status, "currentReplicas"), age(meta, now)});
}

// ---- the printer registry

const std::map<std::string, Printer>& printersByKind() {
  static const std::map<std::string, Printer> printers = [] {
    std::map<std::string, Printer> p;
    const TableColumn containers = wide("Containers", "Names of each container in the template.");
    const TableColumn images =
        wide("Images", "Images referenced by each container in the template.");
    p["Pod"] = {{nameColumn(),
                 col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
                 col("Status", "The aggregate status of the containers in this pod."),
                 col("Restarts",
                     "The number of times the containers in this pod have been restarted and when "
                     "the last container in this pod has restarted."),
                 ageColumn(), wide("IP", "IP address allocated to the pod."),
                 wide("Node", "The node the pod is bound to."),
                 wide("Nominated Node", "The node the scheduler nominated for preemption."),
                 wide("Readiness Gates", "Pod conditions evaluated for readiness.")},
                [](const json& obj, const json&, TimePoint now) { return podCells(obj, now); }};
    p["Deployment"] = {
        {nameColumn(), col("Ready", "Number of the pod with ready state"),
         col("Up-to-date",
             "Total number of non-terminated pods targeted by this "
             "deployment that have the desired template spec."),
         col("Available",
             "Total number of available pods targeted by this "
             "deployment."),
         ageColumn(), containers, images, wide("Selector", "Label selector for pods.")},
        deploymentCells};
    p["ReplicaSet"] = {
        {nameColumn(), col("Desired", "Number of desired pods.", "integer"),
         col("Current", "Most recently observed number of replicas.", "integer"),
         col("Ready", "Number of pods with a Ready condition.", "integer"), ageColumn(), containers,
         images, wide("Selector", "Label selector for pods.")},
        replicaSetCells};
    p["DaemonSet"] = {
        {nameColumn(),
         col("Desired", "The number of nodes that should be running the daemon pod.", "integer"),
         col("Current", "The number of nodes running at least one daemon pod.", "integer"),
         col("Ready", "The number of nodes with a ready daemon pod.", "integer"),
         col("Up-to-date", "The number of nodes running the updated daemon pod.", "integer"),
         col("Available", "The number of nodes with an available daemon pod.", "integer"),
         col("Node Selector", "The node selector of the daemon pods."), ageColumn(), containers,
         images, wide("Selector", "Label selector for pods.")},
        daemonSetCells};
    p["StatefulSet"] = {{nameColumn(), col("Ready", "Number of the pod with ready state"),
                         ageColumn(), containers, images},
                        statefulSetCells};
    p["ControllerRevision"] = {
        {nameColumn(), col("Controller", "The owner of this ControllerRevision."),
         col("Revision", "The revision number.", "integer"), ageColumn()},
        controllerRevisionCells};
    for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
      p[kind] = {{nameColumn(), col("Webhooks", "The number of webhooks.", "integer"), ageColumn()},
                 [](const json& obj, const json& meta, TimePoint now) {
                   const json webhooks = obj.value("webhooks", json::array());
                   return json::array({str(meta, "name"), webhooks.is_array() ? webhooks.size() : 0,
                                       age(meta, now)});
                 }};
    }
    p["CustomResourceDefinition"] = {
        {nameColumn(), col("Created At", "The time the definition was created.", "date")},
        [](const json&, const json& meta, TimePoint) {
          return json::array({str(meta, "name"), str(meta, "creationTimestamp")});
        }};
    p["Job"] = {{nameColumn(), col("Status", "Status of the job."),
                 col("Completions", "The number of pods which reached phase Succeeded."),
                 col("Duration", "Time required to complete the job."), ageColumn(), containers,
                 images, wide("Selector", "A label query over pods.")},
                jobCells};
    p["CronJob"] = {{nameColumn(), col("Schedule", "The schedule in Cron format."),
                     col("Timezone", "The time zone of the schedule."),
                     col("Suspend", "Whether subsequent executions are suspended.", "boolean"),
                     col("Active", "Number of currently running jobs.", "integer"),
                     col("Last Schedule", "When the job was last scheduled."), ageColumn(),
                     containers, images, wide("Selector", "A label query over pods.")},
                    cronJobCells};
    p["Service"] = {{nameColumn(), col("Type", "How the service is exposed."),
                     col("Cluster-IP", "The virtual IP of the service."),
                     col("External-IP", "External addresses of the service."),
                     col("Port(s)", "The ports exposed by the service."), ageColumn(),
                     wide("Selector", "Route traffic to pods with labels matching this selector.")},
                    serviceCells};
    p["Endpoints"] = {
        {nameColumn(), col("Endpoints", "The addresses and ports of the service."), ageColumn()},
        endpointsCells};
    p["EndpointSlice"] = {{nameColumn(), col("AddressType", "The type of the addresses."),
                           col("Ports", "The ports of the endpoints."),
                           col("Endpoints", "The addresses of the endpoints."), ageColumn()},
                          endpointSliceCells};
    p["Ingress"] = {{nameColumn(), col("Class", "The IngressClass of the ingress."),
                     col("Hosts", "Hosts that incoming requests are matched against."),
                     col("Address", "Ingress points of the load balancer."),
                     col("Ports", "Ports of the ingress."), ageColumn()},
                    ingressCells};
    p["NetworkPolicy"] = {
        {nameColumn(), col("Pod-Selector", "Displays the selector of the networkpolicy."),
         ageColumn()},
        networkPolicyCells};
    p["Dns"] = {
        {nameColumn(), col("Host", "Host name served."),
         col("Paths", "Paths of the host and the service port each forwards to."), ageColumn()},
        dnsCells};
    p["Node"] = {{nameColumn(), col("Status", "The status of the node"),
                  col("Roles", "The roles of the node"), ageColumn(),
                  col("Version", "Kubelet version reported by the node."),
                  wide("Internal-IP", "Internal address of the node."),
                  wide("External-IP", "External address of the node."),
                  wide("OS-Image", "OS image reported by the node."),
                  wide("Kernel-Version", "Kernel version reported by the node."),
                  wide("Container-Runtime", "Container runtime version reported by the node.")},
                 nodeCells};
    p["Namespace"] = {{nameColumn(), col("Status", "The status of the namespace"), ageColumn()},
                      [](const json& obj, const json& meta, TimePoint now) {
                        return json::array({str(meta, "name"), str(object(obj, "status"), "phase"),
                                            age(meta, now)});
                      }};
    p["Event"] = {{col("Last Seen", "Time at which the most recent occurrence was recorded."),
                   col("Type", "Type of this event (Normal, Warning)."),
                   col("Reason", "Short, machine understandable reason for the event."),
                   col("Object", "The object this event is about."),
                   wide("Subobject", "The field of the object this event is about."),
                   wide("Source", "The component reporting this event."),
                   col("Message", "A human-readable description of the event."),
                   wide("First Seen", "Time at which the event was first recorded."),
                   wide("Count", "The number of times this event has occurred."),
                   {"Name", "string", "name", kNameDoc, 1}},
                  eventCells};
    p["ConfigMap"] = {{nameColumn(), col("Data", "Number of data entries."), ageColumn()},
                      [](const json& obj, const json& meta, TimePoint now) {
                        int64_t n = static_cast<int64_t>(object(obj, "data").size() +
                                                         object(obj, "binaryData").size());
                        return json::array({str(meta, "name"), n, age(meta, now)});
                      }};
    p["Secret"] = {
        {nameColumn(), col("Type", "Used to facilitate programmatic handling of secret data."),
         col("Data", "Number of data entries."), ageColumn()},
        [](const json& obj, const json& meta, TimePoint now) {
          std::set<std::string> keys;  // stringData merges into data on write
          for (const auto& [k, v] : object(obj, "data").items()) keys.insert(k);
          for (const auto& [k, v] : object(obj, "stringData").items()) keys.insert(k);
          return json::array({str(meta, "name"), str(obj, "type", "Opaque"),
                              static_cast<int64_t>(keys.size()), age(meta, now)});
        }};
    p["ServiceAccount"] = {
        {nameColumn(), col("Secrets", "Secrets of the service account."), ageColumn()},
        [](const json& obj, const json& meta, TimePoint now) {
          return json::array({str(meta, "name"), static_cast<int64_t>(array(obj, "secrets").size()),
                              age(meta, now)});
        }};
    p["HorizontalPodAutoscaler"] = {
        {nameColumn(), col("Reference", "The scale target of the autoscaler."),
         col("Targets", "The metrics and their current/target values."),
         col("MinPods", "Lower limit for the number of pods."),
         col("MaxPods", "Upper limit for the number of pods."),
         col("Replicas", "Current number of replicas."), ageColumn()},
        hpaCells};
    p["Lease"] = {
        {nameColumn(), col("Holder", "The holder of the lease."), ageColumn()},
        [](const json& obj, const json& meta, TimePoint now) {
          return json::array(
              {str(meta, "name"), str(object(obj, "spec"), "holderIdentity"), age(meta, now)});
        }};
    p["CertificateSigningRequest"] = {
        {nameColumn(), ageColumn(), col("SignerName", "The signer asked to sign."),
         col("Requestor", "Who created the request."),
         col("RequestedDuration", "The validity asked for."),
         col("Condition", "Approved, Denied, Failed, Issued or Pending.")},
        [](const json& obj, const json& meta, TimePoint now) {
          const json& spec = object(obj, "spec");
          const json& status = object(obj, "status");
          std::string condition;
          for (const auto& c : array(status, "conditions")) {
            if (str(c, "status", "True") != "True") continue;
            condition += (condition.empty() ? "" : ",") + str(c, "type");
          }
          if (!str(status, "certificate").empty())
            condition += condition.empty() ? "Issued" : ",Issued";
          if (condition.empty()) condition = "Pending";
          std::string duration = "<none>";
          if (spec.contains("expirationSeconds") && spec["expirationSeconds"].is_number())
            duration =
                humanDuration(std::chrono::seconds(spec["expirationSeconds"].get<int64_t>()));
          return json::array({str(meta, "name"), age(meta, now), str(spec, "signerName"),
                              str(spec, "username"), duration, condition});
        }};
    p["PersistentVolume"] = {
        {nameColumn(), col("Capacity", "Capacity of the volume (storage)."),
         col("Access Modes", "Ways the volume can be mounted."),
         col("Reclaim Policy", "What happens to the volume when released from its claim."),
         col("Status", "Phase of the volume."),
         col("Claim", "The claim bound to the volume (namespace/name)."),
         col("StorageClass", "StorageClass of the pv"),
         col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
         col("Reason", "Brief reason of the volume's phase."), ageColumn(),
         wide("VolumeMode", "Filesystem or Block.")},
        [](const json& obj, const json&, TimePoint now) {
          return persistentVolumeCells(obj, now);
        }};
    p["PersistentVolumeClaim"] = {{nameColumn(), col("Status", "Phase of the claim."),
                                   col("Volume", "The volume bound to the claim."),
                                   col("Capacity", "Capacity of the bound volume."),
                                   col("Access Modes", "Access modes of the bound volume."),
                                   col("StorageClass", "StorageClass of the pvc"),
                                   col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
                                   ageColumn(), wide("VolumeMode", "Filesystem or Block.")},
                                  [](const json& obj, const json&, TimePoint now) {
                                    return persistentVolumeClaimCells(obj, now);
                                  }};
    p["ResourceQuota"] = {
        {nameColumn(), ageColumn(), col("Request", "Requested resources and their use."),
         col("Limit", "Resource limits and their use.")},
        [](const json& obj, const json&, TimePoint now) { return resourceQuotaCells(obj, now); }};
    p["LimitRange"] = {
        {nameColumn(), col("Created At", "Time the object was created.", "date")},
        [](const json& obj, const json&, TimePoint) { return limitRangeCells(obj); }};
    p["StorageClass"] = {
        {nameColumn(), col("Provisioner", "The plugin or CSI driver that provisions volumes."),
         col("ReclaimPolicy", "Reclaim policy of the volumes provisioned."),
         col("VolumeBindingMode", "When volumes are bound and provisioned."),
         col("AllowVolumeExpansion", "Whether claims of this class may grow."), ageColumn()},
        [](const json& obj, const json&, TimePoint now) { return storageClassCells(obj, now); }};
    p["CSIDriver"] = {
        {nameColumn(), col("AttachRequired", "The driver needs an attach step.", "boolean"),
         col("PodInfoOnMount", "Pod information is passed on mount.", "boolean"),
         col("StorageCapacity", "The driver reports storage capacity.", "boolean"),
         col("TokenRequests", "Audiences of the tokens passed to the driver."),
         col("RequiresRepublish", "Volumes are republished periodically.", "boolean"),
         col("Modes", "Volume lifecycle modes."), ageColumn()},
        [](const json& obj, const json&, TimePoint now) { return csiDriverCells(obj, now); }};
    p["CSINode"] = {
        {nameColumn(), col("Drivers", "Number of CSI drivers on the node.", "integer"),
         ageColumn()},
        [](const json& obj, const json&, TimePoint now) { return csiNodeCells(obj, now); }};
    for (const char* kind : {"RoleBinding", "ClusterRoleBinding"}) {
      p[kind] = {{nameColumn(), col("Role", "The role bound."), ageColumn(),
                  wide("Users", "Users in the binding"), wide("Groups", "Groups in the binding"),
                  wide("ServiceAccounts", "ServiceAccounts in the binding")},
                 [](const json& obj, const json& meta, TimePoint now) {
                   const json& ref = object(obj, "roleRef");
                   std::string users, groups, sas;
                   auto add = [](std::string& list, const std::string& item) {
                     list += (list.empty() ? "" : ", ") + item;
                   };
                   for (const auto& s : array(obj, "subjects")) {
                     std::string kind = str(s, "kind");
                     if (kind == "User") add(users, str(s, "name"));
                     if (kind == "Group") add(groups, str(s, "name"));
                     if (kind == "ServiceAccount") {
                       add(sas, str(s, "namespace") + ":" + str(s, "name"));
                     }
                   }
                   return json::array({str(meta, "name"), str(ref, "kind") + "/" + str(ref, "name"),
                                       age(meta, now), users, groups, sas});
                 }};
    }
    return p;
  }();
  return printers;
}

}  // namespace

std::string humanDuration(std::chrono::seconds d) {
  int64_t seconds = d.count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return std::to_string(seconds) + "s";
  int64_t minutes = seconds / 60;
  if (minutes < 10) {
    int64_t s = seconds % 60;
    return std::to_string(minutes) + "m" + (s == 0 ? "" : std::to_string(s) + "s");
  }
  if (minutes < 180) return std::to_string(minutes) + "m";
  int64_t hours = minutes / 60;
  if (hours < 8) {
    int64_t m = minutes % 60;
    return std::to_string(hours) + "h" + (m == 0 ? "" : std::to_string(m) + "m");
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    int64_t h = hours % 24;
    return std::to_string(hours / 24) + "d" + (h == 0 ? "" : std::to_string(h) + "h");
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    int64_t days = (hours / 24) % 365;
    return std::to_string(hours / 24 / 365) + "y" + (days == 0 ? "" : std::to_string(days) + "d");
  }
  return std::to_string(hours / 24 / 365) + "y";
}

std::vector<TableColumn> tableColumns(const std::string& kind) {
  auto it = printersByKind().find(kind);
  if (it != printersByKind().end()) return it->second.columns;
  return {nameColumn(), ageColumn()};
}

json tableColumnDefinitions(const std::string& kind) {
  json out = json::array();
  for (const auto& c : tableColumns(kind)) {
    out.push_back({{"name", c.name},
                   {"type", c.type},
                   {"format", c.format},
                   {"description", c.description},
                   {"priority", c.priority}});
  }
  return out;
}

json tableCells(const std::string& kind, const json& input,
                std::chrono::system_clock::time_point now) {
  static const json kEmpty = json::object();
  const json& obj = input.is_object() ? input : kEmpty;  // printers may assume an object
  const json& meta = object(obj, "metadata");
  auto it = printersByKind().find(kind);
  if (it == printersByKind().end()) return json::array({str(meta, "name"), age(meta, now)});
  return it->second.cells(obj, meta, now);
}

}  // namespace minik8s::api
