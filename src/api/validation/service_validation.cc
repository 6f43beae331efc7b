// Service validation: ports, type, cluster IPs, traffic policies, selector.
#include <algorithm>
#include <set>
#include <string>

#include "api/validation/kinds.h"

namespace minik8s::api::validation {
namespace {

constexpr int64_t kNodePortMin = 30000;
constexpr int64_t kNodePortMax = 32767;

// clusterIPs as Kubernetes sees them after copying clusterIP into clusterIPs[0].
std::vector<std::string> clusterIPs(const json& spec) {
  std::vector<std::string> ips;
  const json* list = member(spec, "clusterIPs");
  if (list && list->is_array()) {
    for (const auto& ip : *list) ips.push_back(ip.is_string() ? ip.get<std::string>() : "");
  }
  const json* ip = member(spec, "clusterIP");
  if (ips.empty() && ip && ip->is_string() && !ip->get<std::string>().empty()) {
    ips.push_back(ip->get<std::string>());
  }
  return ips;
}

// Whether an update turned a NodePort/LoadBalancer Service into another type and `field` of
// `now` (a port or the spec) is the value the old type left behind. Kubernetes clears such
// fields (dropTypeDependentFields) instead of refusing the update.
bool leftOverFromOldType(const json* oldSpec, const std::string& type, const char* field,
                         const json& now, const json* oldHolder) {
  if (!oldSpec || !oldHolder || type == "NodePort" || type == "LoadBalancer") return false;
  const json* oldType = member(*oldSpec, "type");
  if (!oldType || (*oldType != "NodePort" && *oldType != "LoadBalancer")) return false;
  const json* a = member(now, field);
  const json* b = member(*oldHolder, field);
  return a && b && *a == *b;
}

void validateServicePorts(FieldErrors& errs, const json& ports, const std::string& type,
                          const json* oldSpec) {
  const json* oldPorts = oldSpec ? member(*oldSpec, "ports") : nullptr;
  std::set<std::string> names, keys, nodePorts;
  for (size_t i = 0; i < ports.size(); ++i) {
    std::string p = index("spec.ports", i);
    const json& port = ports[i];
    if (!port.is_object()) {
      errs.typeInvalid(p, port, "object");
      continue;
    }
    auto name = errs.string(port, "name", child(p, "name"));
    if (!name || name->empty()) {
      if (ports.size() > 1) errs.required(child(p, "name"));
    } else {
      errs.invalidEach(child(p, "name"), *name, isDNS1123Label(*name));
      if (names.count(*name)) errs.duplicate(child(p, "name"), *name);
      names.insert(*name);
    }
    auto number = errs.integer(port, "port", child(p, "port"));
    if (number || absent(port, "port")) {
      errs.invalidEach(child(p, "port"), number.value_or(0), isValidPortNum(number.value_or(0)));
    }
    validateProtocol(errs, port, child(p, "protocol"));
    if (const json* target = errs.intOrString(port, "targetPort", child(p, "targetPort"))) {
      validatePortNumOrName(errs, *target, child(p, "targetPort"));
    }
    auto nodePort = errs.integer(port, "nodePort", child(p, "nodePort"));
    auto protocol = errs.string(port, "protocol", child(p, "protocol")).value_or("");
    if (nodePort && *nodePort != 0) {
      const json* oldPort =
          oldPorts && oldPorts->is_array() && i < oldPorts->size() ? &(*oldPorts)[i] : nullptr;
      if (type == "ClusterIP" && leftOverFromOldType(oldSpec, type, "nodePort", port, oldPort)) {
        // Left over from the NodePort type this Service had: ignored.
      } else if (type == "ClusterIP") {
        errs.forbidden(child(p, "nodePort"), "may not be used when `type` is 'ClusterIP'");
      } else if (*nodePort < kNodePortMin || *nodePort > kNodePortMax) {
        errs.invalid(child(p, "nodePort"), *nodePort,
                     "provided port is not in the valid range. The range of valid ports is " +
                         std::to_string(kNodePortMin) + "-" + std::to_string(kNodePortMax));
      }
      std::string id = protocol + "/" + std::to_string(*nodePort);
      if (nodePorts.count(id)) errs.duplicate(child(p, "nodePort"), *nodePort);
      nodePorts.insert(id);
    }
    if (number) {
      std::string id = protocol + "/" + std::to_string(*number);
      if (keys.count(id)) {
        // Kubernetes prints the (protocol, port) key as its internal ServicePort struct.
        errs.duplicateShown(p, "{\"Name\":\"\",\"Protocol\":" + goQuote(protocol) +
                                   ",\"AppProtocol\":null,\"Port\":" + std::to_string(*number) +
                                   ",\"TargetPort\":0,\"NodePort\":0}");
      }
      keys.insert(id);
    }
  }
}

void validateClusterIPs(FieldErrors& errs, const json& spec, const std::string& type) {
  auto ips = clusterIPs(spec);
  const json* list = member(spec, "clusterIPs");
  auto clusterIP = errs.string(spec, "clusterIP", "spec.clusterIP");
  if (clusterIP && !clusterIP->empty() && list && list->is_array() && !list->empty() &&
      (*list)[0] != *clusterIP) {
    errs.invalid("spec.clusterIPs", *list, "first value must match `clusterIP`");
  }
  if (type == "ExternalName") {
    if (!ips.empty()) errs.forbidden("spec.clusterIPs", "may not be set for ExternalName services");
    return;
  }
  std::string family;
  if (const json* families = member(spec, "ipFamilies");
      families && families->is_array() && !families->empty() && (*families)[0].is_string()) {
    family = (*families)[0].get<std::string>();
  }
  for (size_t i = 0; i < ips.size(); ++i) {
    std::string p = index("spec.clusterIPs", i);
    if (i == 0 && ips[i] == "None") continue;
    if (!isIP(ips[i])) {
      errs.invalid(p, ips[i], kInvalidIPMessage);
    } else if (i == 0 && family == "IPv4" && !isIPv4(ips[i])) {
      errs.invalid(p, ips[i], "expected an IPv4 value as indicated by `ipFamilies[0]`");
    } else if (i == 0 && family == "IPv6" && !isIPv6(ips[i])) {
      errs.invalid(p, ips[i], "expected an IPv6 value as indicated by `ipFamilies[0]`");
    }
  }
}

void validateEnumField(FieldErrors& errs, const json& spec, const char* name,
                       const std::vector<std::string>& supported, bool required) {
  std::string p = child("spec", name);
  auto v = errs.string(spec, name, p);
  if (!v || v->empty()) {
    if (required && (v || absent(spec, name))) errs.required(p);
    return;
  }
  if (std::find(supported.begin(), supported.end(), *v) == supported.end()) {
    errs.notSupported(p, *v, supported);
  }
}

}  // namespace

void validateService(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNS1035Label);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  auto type = errs.string(spec, "type", "spec.type").value_or("");
  validateEnumField(errs, spec, "type", {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"},
                    true);
  auto ips = clusterIPs(spec);
  bool headless = !ips.empty() && ips[0] == "None";
  const json* ports = errs.array(spec, "ports", "spec.ports");
  if ((!ports || ports->empty()) && !headless && type != "ExternalName") {
    if (ports || absent(spec, "ports")) errs.required("spec.ports");
  }
  const json* oldSpec = old ? member(*old, "spec") : nullptr;
  if (ports) validateServicePorts(errs, *ports, type, oldSpec);
  if (type == "ExternalName") {
    auto name = errs.string(spec, "externalName", "spec.externalName");
    if (!name || name->empty()) {
      errs.required("spec.externalName");
    } else {
      std::string trimmed = *name;
      if (!trimmed.empty() && trimmed.back() == '.') trimmed.pop_back();
      errs.invalidEach("spec.externalName", *name, isDNS1123Subdomain(trimmed));
    }
  }
  validateClusterIPs(errs, spec, type);
  if (const json* selector = errs.stringMap(spec, "selector", "spec.selector")) {
    validateLabels(errs, *selector, "spec.selector");
  }
  validateEnumField(errs, spec, "sessionAffinity", {"ClientIP", "None"}, true);
  const json* externalIPs = errs.array(spec, "externalIPs", "spec.externalIPs");
  if (externalIPs) {
    for (size_t i = 0; i < externalIPs->size(); ++i) {
      const json& ip = (*externalIPs)[i];
      if (!ip.is_string() || !isIP(ip.get<std::string>())) {
        errs.invalid(index("spec.externalIPs", i), ip, kInvalidIPMessage);
      }
    }
  }
  bool external = type == "NodePort" || type == "LoadBalancer" ||
                  (type == "ClusterIP" && externalIPs && !externalIPs->empty());
  auto etp = errs.string(spec, "externalTrafficPolicy", "spec.externalTrafficPolicy");
  if (!external) {
    if (etp && !etp->empty() &&
        !leftOverFromOldType(oldSpec, type, "externalTrafficPolicy", spec, oldSpec)) {
      errs.invalid("spec.externalTrafficPolicy", *etp,
                   "may only be set for externally-accessible services");
    }
  } else {
    validateEnumField(errs, spec, "externalTrafficPolicy", {"Cluster", "Local"}, true);
  }
  validateEnumField(errs, spec, "internalTrafficPolicy", {"Cluster", "Local"}, false);
  validateEnumField(errs, spec, "ipFamilyPolicy",
                    {"PreferDualStack", "RequireDualStack", "SingleStack"}, false);
  if (const json* families = errs.array(spec, "ipFamilies", "spec.ipFamilies")) {
    for (size_t i = 0; i < families->size(); ++i) {
      const json& f = (*families)[i];
      if (f != "IPv4" && f != "IPv6") {
        errs.notSupported(index("spec.ipFamilies", i), f, {"IPv4", "IPv6"});
      }
    }
  }
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    auto before = clusterIPs(oldSpec ? *oldSpec : kNoObject);
    // An update that leaves clusterIP out keeps the allocated one; a different one is refused.
    if (!before.empty() && !ips.empty() && ips[0] != before[0] && type != "ExternalName") {
      errs.invalid("spec.clusterIPs[0]", json(ips), "may not change once set");
    }
  }
}

}  // namespace minik8s::api::validation
