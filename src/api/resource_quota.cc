#include "api/resource_quota.h"

#include <algorithm>
#include <set>

#include "common/time_util.h"

namespace minik8s::api {

namespace {

const json& field(const json& obj, const char* name) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(name);
  return it == obj.end() ? kNull : *it;
}

std::string stringField(const json& obj, const char* name, const std::string& fallback = "") {
  const json& v = field(obj, name);
  return v.is_string() ? v.get<std::string>() : fallback;
}

const json& arrayField(const json& obj, const char* name) {
  static const json kEmpty = json::array();
  const json& v = field(obj, name);
  return v.is_array() ? v : kEmpty;
}

// Kubernetes' Quantity.Add: the sum keeps the first operand's format unless it is zero.
Quantity plus(const Quantity& a, const Quantity& b, bool negate = false) {
  const Quantity::Format format = a.isZero() ? b.format() : a.format();
  const int64_t total = a.milliValue() + (negate ? -b.milliValue() : b.milliValue());
  if (total % 1000 == 0) return Quantity::fromValue(total / 1000, format);
  return Quantity::fromMilli(total);
}

void addInto(ResourceList& into, const ResourceList& more) {
  for (const auto& [k, v] : more) {
    auto it = into.find(k);
    if (it == into.end()) {
      into.emplace(k, v);
    } else {
      it->second = plus(it->second, v);
    }
  }
}

// Per name, the larger of the two.
void maxInto(ResourceList& into, const ResourceList& other) {
  for (const auto& [k, v] : other) {
    auto it = into.find(k);
    if (it == into.end()) {
      into.emplace(k, v);
    } else if (v.compare(it->second) > 0) {
      it->second = v;
    }
  }
}

bool isSidecar(const json& container) {
  return field(container, "restartPolicy") == json("Always");
}

// An extended resource: a qualified name outside kubernetes.io, not requests.*-prefixed.
bool isExtendedResource(const std::string& name) {
  return name.find('/') != std::string::npos && name.find("kubernetes.io/") == std::string::npos &&
         name.rfind("requests.", 0) != 0;
}

// podComputeUsageHelper: the quota names a pod's requests and limits are charged under.
ResourceList computeUsage(const ResourceList& requests, const ResourceList& limits) {
  ResourceList out;
  out["pods"] = Quantity::fromValue(1);
  for (const char* r : {"cpu", "memory", "ephemeral-storage"}) {
    if (auto it = requests.find(r); it != requests.end()) {
      out[r] = it->second;
      out[std::string("requests.") + r] = it->second;
    }
    if (auto it = limits.find(r); it != limits.end()) out[std::string("limits.") + r] = it->second;
  }
  for (const auto& [name, q] : requests) {
    if (name.rfind("hugepages-", 0) == 0) {
      out[name] = q;
      out["requests." + name] = q;
    } else if (isExtendedResource(name)) {
      out["requests." + name] = q;
    }
  }
  return out;
}

bool hasResources(const json& container) {
  const json& res = field(container, "resources");
  for (const char* k : {"requests", "limits"}) {
    const json& l = field(res, k);
    if (l.is_object() && !l.empty()) return true;
  }
  return false;
}

}  // namespace

ResourceList parseResourceList(const json& list) {
  ResourceList out;
  if (!list.is_object()) return out;
  for (const auto& [k, v] : list.items()) {
    auto q = Quantity::fromJson(v);
    if (q.ok()) out.emplace(k, *q);
  }
  return out;
}

json toJson(const ResourceList& list) {
  json out = json::object();
  for (const auto& [k, v] : list) out[k] = v.toString();
  return out;
}

ResourceList addLists(const ResourceList& a, const ResourceList& b) {
  ResourceList out = a;
  addInto(out, b);
  return out;
}

ResourceList subtractNonNegative(const ResourceList& a, const ResourceList& b) {
  ResourceList out;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    Quantity d = it == b.end() ? v : plus(v, it->second, true);
    out.emplace(k, d.sign() < 0 ? Quantity() : d);
  }
  return out;
}

ResourceList maskList(const ResourceList& list, const std::vector<std::string>& names) {
  ResourceList out;
  for (const auto& n : names) {
    if (auto it = list.find(n); it != list.end()) out.emplace(n, it->second);
  }
  return out;
}

std::vector<std::string> listNames(const ResourceList& list) {
  std::vector<std::string> out;
  for (const auto& [k, v] : list) out.push_back(k);
  return out;
}

bool lessThanOrEqual(const ResourceList& a, const ResourceList& b,
                     std::vector<std::string>* exceeded) {
  bool ok = true;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it != b.end() && v.compare(it->second) > 0) {
      ok = false;
      if (exceeded) exceeded->push_back(k);
    }
  }
  return ok;
}

std::string prettyPrint(const ResourceList& list) {
  std::string out;
  for (const auto& [k, v] : list) out += (out.empty() ? "" : ",") + k + "=" + v.toString();
  return out;
}

ResourceList containerRequests(const json& container) {
  const json& res = field(container, "resources");
  ResourceList requests = parseResourceList(field(res, "requests"));
  for (const auto& [k, v] : parseResourceList(field(res, "limits"))) requests.emplace(k, v);
  return requests;
}

ResourceList containerLimits(const json& container) {
  return parseResourceList(field(field(container, "resources"), "limits"));
}

namespace {

ResourceList podAggregate(const json& pod, ResourceList (*of)(const json&)) {
  const json& spec = field(pod, "spec");
  ResourceList sum;
  for (const auto& c : arrayField(spec, "containers")) addInto(sum, of(c));
  ResourceList sidecars, initMax;
  for (const auto& c : arrayField(spec, "initContainers")) {
    if (isSidecar(c)) {
      addInto(sidecars, of(c));
      maxInto(initMax, sidecars);
    } else {
      maxInto(initMax, addLists(sidecars, of(c)));
    }
  }
  addInto(sum, sidecars);
  maxInto(sum, initMax);
  addInto(sum, parseResourceList(field(spec, "overhead")));
  return sum;
}

}  // namespace

ResourceList podRequests(const json& pod) { return podAggregate(pod, containerRequests); }
ResourceList podLimits(const json& pod) { return podAggregate(pod, containerLimits); }

bool podCountsForQuota(const json& pod, std::chrono::system_clock::time_point now) {
  const std::string phase = stringField(field(pod, "status"), "phase");
  if (phase == "Succeeded" || phase == "Failed") return false;
  const json& meta = field(pod, "metadata");
  const json& deletion = field(meta, "deletionTimestamp");
  const json& grace = field(meta, "deletionGracePeriodSeconds");
  if (deletion.is_string() && grace.is_number_integer()) {
    if (auto t = parseRfc3339(deletion.get<std::string>())) {
      if (now > *t + std::chrono::seconds(grace.get<int64_t>())) return false;
    }
  }
  return true;
}

bool podIsBestEffort(const json& pod) {
  const json& spec = field(pod, "spec");
  for (const char* list : {"containers", "initContainers"}) {
    for (const auto& c : arrayField(spec, list)) {
      if (hasResources(c)) return false;
    }
  }
  return true;
}

std::string objectCountName(const std::string& group, const std::string& resource) {
  return group.empty() ? "count/" + resource : "count/" + resource + "." + group;
}

std::pair<std::string, std::string> countedResource(const std::string& name) {
  if (name.rfind("count/", 0) != 0) return {"", ""};
  const std::string rest = name.substr(6);
  const size_t dot = rest.find('.');
  if (dot == std::string::npos) return {"", rest};
  return {rest.substr(dot + 1), rest.substr(0, dot)};
}

namespace {

constexpr char kStorageClassSuffix[] = ".storageclass.storage.k8s.io/";

bool isLegacyCount(const std::string& resource) {
  static const std::set<std::string> kLegacy = {"pods",
                                                "services",
                                                "configmaps",
                                                "secrets",
                                                "persistentvolumeclaims",
                                                "replicationcontrollers",
                                                "resourcequotas"};
  return kLegacy.count(resource) > 0;
}

}  // namespace

ResourceList objectUsage(const std::string& group, const std::string& resource, const json& obj,
                         std::chrono::system_clock::time_point now) {
  ResourceList out;
  const Quantity one = Quantity::fromValue(1);
  out[objectCountName(group, resource)] = one;
  if (!group.empty()) return out;
  if (resource == "pods") {
    // "pods" and compute resources only while the pod runs; count/pods always.
    if (podCountsForQuota(obj, now)) addInto(out, computeUsage(podRequests(obj), podLimits(obj)));
    return out;
  }
  if (isLegacyCount(resource)) out[resource] = one;
  if (resource == "services") {
    const json& spec = field(obj, "spec");
    const std::string type = stringField(spec, "type", "ClusterIP");
    const json& ports = arrayField(spec, "ports");
    if (type == "NodePort" || type == "LoadBalancer") {
      int64_t count = static_cast<int64_t>(ports.size());
      if (type == "LoadBalancer" && field(spec, "allocateLoadBalancerNodePorts") == json(false)) {
        count = 0;
        for (const auto& p : ports) count += field(p, "nodePort").is_number() ? 1 : 0;
      }
      out["services.nodeports"] = Quantity::fromValue(count);
    }
    if (type == "LoadBalancer") out["services.loadbalancers"] = one;
  } else if (resource == "persistentvolumeclaims") {
    const json& spec = field(obj, "spec");
    const ResourceList requests = parseResourceList(field(field(spec, "resources"), "requests"));
    const std::string cls = field(spec, "storageClassName").is_string()
                                ? field(spec, "storageClassName").get<std::string>()
                                : "";
    if (!cls.empty()) out[cls + kStorageClassSuffix + "persistentvolumeclaims"] = one;
    if (auto it = requests.find("storage"); it != requests.end()) {
      out["requests.storage"] = it->second;
      if (!cls.empty()) out[cls + kStorageClassSuffix + "requests.storage"] = it->second;
    }
  }
  return out;
}

bool quotaTracks(const std::string& group, const std::string& resource, const std::string& name) {
  if (name == objectCountName(group, resource)) return true;
  if (!group.empty()) return false;
  if (name == resource && isLegacyCount(resource)) return true;
  if (resource == "pods") {
    if (name == "requests.storage") return false;
    return name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
           name.rfind("hugepages-", 0) == 0 || name.rfind("requests.", 0) == 0 ||
           name.rfind("limits.", 0) == 0;
  }
  if (resource == "services")
    return name == "services.nodeports" || name == "services.loadbalancers";
  if (resource == "persistentvolumeclaims") {
    if (name == "requests.storage") return true;
    const size_t at = name.find(kStorageClassSuffix);
    if (at == std::string::npos) return false;
    const std::string tail = name.substr(at + sizeof(kStorageClassSuffix) - 1);
    return tail == "requests.storage" || tail == "persistentvolumeclaims";
  }
  return false;
}

namespace {

bool scopeMatchesPod(const std::string& scope, const std::string& op,
                     const std::vector<std::string>& values, const json& pod) {
  const json& spec = field(pod, "spec");
  if (scope == "Terminating" || scope == "NotTerminating") {
    const bool terminating = field(spec, "activeDeadlineSeconds").is_number();
    return (scope == "Terminating") == terminating;
  }
  if (scope == "BestEffort") return podIsBestEffort(pod);
  if (scope == "NotBestEffort") return !podIsBestEffort(pod);
  if (scope == "PriorityClass") {
    const json& pc = field(spec, "priorityClassName");
    const bool set = pc.is_string() && !pc.get<std::string>().empty();
    const std::string name = set ? pc.get<std::string>() : "";
    const bool in = std::find(values.begin(), values.end(), name) != values.end();
    if (op == "In") return set && in;
    if (op == "NotIn") return set && !in;
    if (op == "DoesNotExist") return !set;
    return set;  // Exists
  }
  if (scope == "CrossNamespacePodAffinity") {
    const json& affinity = field(spec, "affinity");
    for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
      const json& a = field(affinity, kind);
      for (const char* when : {"requiredDuringSchedulingIgnoredDuringExecution",
                               "preferredDuringSchedulingIgnoredDuringExecution"}) {
        for (const auto& term : arrayField(a, when)) {
          const json& t =
              field(term, "podAffinityTerm").is_object() ? field(term, "podAffinityTerm") : term;
          if (!arrayField(t, "namespaces").empty() || field(t, "namespaceSelector").is_object())
            return true;
        }
      }
    }
    return false;
  }
  return false;
}

}  // namespace

bool quotaScopesMatch(const json& quota, const std::string& group, const std::string& resource,
                      const json& obj) {
  const json& spec = field(quota, "spec");
  std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> scopes;
  for (const auto& s : arrayField(spec, "scopes")) {
    if (s.is_string())
      scopes.emplace_back(s.get<std::string>(), "Exists", std::vector<std::string>{});
  }
  for (const auto& e : arrayField(field(spec, "scopeSelector"), "matchExpressions")) {
    std::vector<std::string> values;
    for (const auto& v : arrayField(e, "values")) {
      if (v.is_string()) values.push_back(v.get<std::string>());
    }
    scopes.emplace_back(stringField(e, "scopeName"), stringField(e, "operator", "Exists"), values);
  }
  if (scopes.empty()) return true;
  if (!group.empty() || resource != "pods") return false;
  for (const auto& [scope, op, values] : scopes) {
    if (!scopeMatchesPod(scope, op, values, obj)) return false;
  }
  return true;
}

std::string podQuotaConstraints(const std::vector<std::string>& limited, const json& pod) {
  static const std::set<std::string> kValidation = {
      "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"};
  std::set<std::string> required;
  for (const auto& n : limited) {
    if (kValidation.count(n)) required.insert(n);
  }
  if (required.empty()) return "";
  std::map<std::string, std::set<std::string>> missing;
  const json& spec = field(pod, "spec");
  for (const char* list : {"containers", "initContainers"}) {
    for (const auto& c : arrayField(spec, list)) {
      const ResourceList usage = computeUsage(containerRequests(c), containerLimits(c));
      for (const auto& r : required) {
        if (!usage.count(r)) missing[r].insert(stringField(c, "name"));
      }
    }
  }
  if (missing.empty()) return "";
  std::string out;
  for (const auto& [r, names] : missing) {
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
    out += (out.empty() ? "" : "; ") + r + " for: " + joined;
  }
  return "must specify " + out;
}

}  // namespace minik8s::api
