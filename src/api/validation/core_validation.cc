// Core group kinds except Service: Pod, ConfigMap, Secret, Namespace, Node, Event, Endpoints.
#include <algorithm>
#include <set>
#include <string>

#include "api/quantity.h"
#include "api/validation/kinds.h"
#include "common/base64.h"

namespace minik8s::api::validation {
namespace {

constexpr int64_t kMaxSecretSize = 1024 * 1024;  // ConfigMaps share the limit.

const char* const kPodUpdatableFields =
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

// Copies the fields a pod update may change from `now` into `munged` (the stored spec), so any
// remaining difference is a forbidden change.
void copyUpdatablePodFields(const json& now, json& munged) {
  for (const char* list : {"containers", "initContainers"}) {
    const json* nowList = member(now, list);
    json* oldList = munged.is_object() && munged.contains(list) ? &munged[list] : nullptr;
    if (!nowList || !oldList || !nowList->is_array() || !oldList->is_array() ||
        nowList->size() != oldList->size()) {
      continue;
    }
    for (size_t i = 0; i < nowList->size(); ++i) {
      if ((*oldList)[i].is_object() && (*nowList)[i].is_object() &&
          (*nowList)[i].contains("image")) {
        (*oldList)[i]["image"] = (*nowList)[i]["image"];
      }
    }
  }
  if (!munged.is_object()) return;
  auto take = [&](const char* field) {
    if (const json* v = member(now, field))
      munged[field] = *v;
    else
      munged.erase(field);
  };
  take("activeDeadlineSeconds");
  // The scheduler binds a pending pod by setting nodeName once.
  if (!member(munged, "nodeName") || munged["nodeName"] == "") take("nodeName");
  // Tolerations may only be added.
  const json* oldTol = member(munged, "tolerations");
  const json* newTol = member(now, "tolerations");
  if (newTol && newTol->is_array()) {
    bool kept = true;
    if (oldTol && oldTol->is_array()) {
      for (const auto& t : *oldTol) {
        if (std::find(newTol->begin(), newTol->end(), t) == newTol->end()) kept = false;
      }
    }
    if (kept) take("tolerations");
  }
  // Scheduling gates may only be removed.
  const json* oldGates = member(munged, "schedulingGates");
  const json* newGates = member(now, "schedulingGates");
  if (oldGates && oldGates->is_array() && (!newGates || newGates->is_array())) {
    bool subset = true;
    if (newGates) {
      for (const auto& g : *newGates) {
        if (std::find(oldGates->begin(), oldGates->end(), g) == oldGates->end()) subset = false;
      }
    }
    if (subset) take("schedulingGates");
  }
  const json* oldGrace = member(munged, "terminationGracePeriodSeconds");
  const json* newGrace = member(now, "terminationGracePeriodSeconds");
  if (oldGrace && oldGrace->is_number_integer() && oldGrace->get<int64_t>() < 0 && newGrace &&
      *newGrace == 1) {
    take("terminationGracePeriodSeconds");
  }
}

std::string shortDump(const json* v) {
  if (!v) return "<unset>";
  std::string s = v->dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

void validatePodUpdate(FieldErrors& errs, const json& obj, const json& old) {
  const json* now = member(obj, "spec");
  const json* before = member(old, "spec");
  if (!now || !before || !now->is_object() || !before->is_object()) {
    validateImmutable(errs, now, before, "spec");
    return;
  }
  json munged = *before;
  copyUpdatablePodFields(*now, munged);
  if (munged == *now) return;
  std::string diff;
  std::set<std::string> keys;
  for (auto it = munged.begin(); it != munged.end(); ++it) keys.insert(it.key());
  for (auto it = now->begin(); it != now->end(); ++it) keys.insert(it.key());
  for (const auto& k : keys) {
    const json* a = member(munged, k);
    const json* b = member(*now, k);
    if ((a == nullptr) != (b == nullptr) || (a && *a != *b)) {
      diff += "\n  spec." + k + ": " + shortDump(a) + " -> " + shortDump(b);
    }
  }
  errs.forbidden("spec", std::string("pod updates may not change fields other than ") +
                             kPodUpdatableFields + diff);
}

// Keys of data-like maps (ConfigMap data/binaryData, Secret data/stringData).
void validateDataKeys(FieldErrors& errs, const json& data, const std::string& path) {
  for (auto it = data.begin(); it != data.end(); ++it) {
    errs.invalidEach(key(path, it.key()), it.key(), isConfigMapKey(it.key()));
  }
}

// `immutable: true` freezes data (and itself) once stored.
void validateImmutableData(FieldErrors& errs, const json& obj, const json& old,
                           std::initializer_list<const char*> fields) {
  const json* wasImmutable = member(old, "immutable");
  if (!wasImmutable || *wasImmutable != true) return;
  const json* isImmutable = member(obj, "immutable");
  if (!isImmutable || *isImmutable != true) {
    errs.forbidden("immutable", "field is immutable when `immutable` is set");
  }
  for (const char* f : fields) {
    const json* a = member(obj, f);
    const json* b = member(old, f);
    bool aEmpty = !a || a->is_null() || (a->is_object() && a->empty());
    bool bEmpty = !b || b->is_null() || (b->is_object() && b->empty());
    if (aEmpty && bEmpty) continue;
    if (aEmpty != bEmpty || *a != *b) {
      errs.forbidden(f, "field is immutable when `immutable` is set");
    }
  }
}

void validateResourceQuantities(FieldErrors& errs, const json& obj, const char* name,
                                const std::string& path) {
  const json* list = errs.object(obj, name, path);
  if (!list) return;
  for (auto it = list->begin(); it != list->end(); ++it) {
    auto q = Quantity::fromJson(*it);
    if (!q.ok()) {
      errs.invalid(key(path, it.key()), *it, q.status().message());
    } else if (q->sign() < 0) {
      errs.invalid(key(path, it.key()), q->toString(), "must be greater than or equal to 0");
    }
  }
}

// Endpoints may not point at unspecified, loopback or link-local addresses.
void validateNonSpecialIP(FieldErrors& errs, const std::string& ip, const std::string& path) {
  if (ip == "0.0.0.0" || ip == "::") {
    errs.invalid(path, ip, "may not be unspecified (" + ip + ")");
  } else if (ip.rfind("127.", 0) == 0 || ip == "::1") {
    errs.invalid(path, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)");
  } else if (ip.rfind("169.254.", 0) == 0 || ip.rfind("fe80:", 0) == 0) {
    errs.invalid(path, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)");
  } else if (ip.rfind("224.0.0.", 0) == 0 || ip.rfind("ff02:", 0) == 0) {
    errs.invalid(path, ip,
                 "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
  }
}

void validateEndpointAddresses(FieldErrors& errs, const json& addresses, const std::string& path) {
  for (size_t i = 0; i < addresses.size(); ++i) {
    std::string p = index(path, i);
    const json& a = addresses[i];
    if (!a.is_object()) {
      errs.typeInvalid(p, a, "object");
      continue;
    }
    auto ip = errs.string(a, "ip", child(p, "ip"));
    if (!ip || !isIP(*ip)) {
      if (ip || absent(a, "ip")) errs.invalid(child(p, "ip"), ip.value_or(""), kInvalidIPMessage);
    } else {
      validateNonSpecialIP(errs, *ip, child(p, "ip"));
    }
    auto hostname = errs.string(a, "hostname", child(p, "hostname"));
    if (hostname && !hostname->empty()) {
      errs.invalidEach(child(p, "hostname"), *hostname, isDNS1123Label(*hostname));
    }
    auto nodeName = errs.string(a, "nodeName", child(p, "nodeName"));
    if (nodeName && !nodeName->empty()) {
      errs.invalidEach(child(p, "nodeName"), *nodeName, isDNS1123Subdomain(*nodeName));
    }
  }
}

}  // namespace

bool isValidCIDR(const std::string& cidr) {
  size_t slash = cidr.find('/');
  if (slash == std::string::npos || slash + 1 >= cidr.size() || cidr.size() - slash > 4) {
    return false;
  }
  std::string ip = cidr.substr(0, slash);
  int bits = 0;
  for (size_t i = slash + 1; i < cidr.size(); ++i) {
    if (cidr[i] < '0' || cidr[i] > '9') return false;
    bits = bits * 10 + (cidr[i] - '0');
  }
  if (isIPv4(ip)) return bits <= 32;
  return isIPv6(ip) && bits <= 128;
}

void validatePod(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* spec = errs.object(obj, "spec", "spec");
  validatePodSpec(errs, spec ? *spec : kNoObject, "spec");
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    validatePodUpdate(errs, obj, *old);
  }
}

void validateConfigMap(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  int64_t total = 0;
  const json* data = errs.stringMap(obj, "data", "data");
  const json* binary = errs.stringMap(obj, "binaryData", "binaryData");
  if (data) {
    validateDataKeys(errs, *data, "data");
    for (auto it = data->begin(); it != data->end(); ++it) {
      if (binary && binary->contains(it.key())) {
        errs.invalid(key("data", it.key()), it.key(), "duplicate of key present in binaryData");
      }
      total += static_cast<int64_t>(it->get_ref<const std::string&>().size());
    }
  }
  if (binary) {
    validateDataKeys(errs, *binary, "binaryData");
    for (auto it = binary->begin(); it != binary->end(); ++it) {
      auto bytes = base64::decode(it->get_ref<const std::string&>());
      if (!bytes.ok()) {
        errs.invalid(key("binaryData", it.key()), *it, bytes.status().message());
      } else {
        total += static_cast<int64_t>(bytes->size());
      }
    }
  }
  if (total > kMaxSecretSize) errs.tooLong("", kMaxSecretSize);
  errs.boolean(obj, "immutable", "immutable");
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    validateImmutableData(errs, obj, *old, {"data", "binaryData"});
  }
}

void validateSecret(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  int64_t total = 0;
  const json* data = errs.stringMap(obj, "data", "data");
  if (data) {
    validateDataKeys(errs, *data, "data");
    for (auto it = data->begin(); it != data->end(); ++it) {
      auto bytes = base64::decode(it->get_ref<const std::string&>());
      if (!bytes.ok()) {
        errs.invalid(key("data", it.key()), "<secret contents redacted>", bytes.status().message());
      } else {
        total += static_cast<int64_t>(bytes->size());
      }
    }
  }
  const json* stringData = errs.stringMap(obj, "stringData", "stringData");
  if (stringData) {
    validateDataKeys(errs, *stringData, "stringData");
    for (auto it = stringData->begin(); it != stringData->end(); ++it) {
      total += static_cast<int64_t>(it->get_ref<const std::string&>().size());
    }
  }
  if (total > kMaxSecretSize) errs.tooLong("data", kMaxSecretSize);
  auto type = errs.string(obj, "type", "type");
  auto hasKey = [&](const char* k) {
    return (data && data->contains(k)) || (stringData && stringData->contains(k));
  };
  auto requireKey = [&](const char* k) {
    if (!hasKey(k)) errs.required(key("data", k));
  };
  if (type == "kubernetes.io/tls") {
    requireKey("tls.crt");
    requireKey("tls.key");
  } else if (type == "kubernetes.io/dockerconfigjson") {
    requireKey(".dockerconfigjson");
  } else if (type == "kubernetes.io/dockercfg") {
    requireKey(".dockercfg");
  }
  errs.boolean(obj, "immutable", "immutable");
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    validateImmutable(errs, member(obj, "type"), member(*old, "type"), "type");
    validateImmutableData(errs, obj, *old, {"data"});
  }
}

void validateNamespace(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, false, nameIsDNSLabel);
  if (const json* spec = errs.object(obj, "spec", "spec")) {
    if (const json* fin = errs.array(*spec, "finalizers", "spec.finalizers")) {
      for (size_t i = 0; i < fin->size(); ++i) {
        const json& f = (*fin)[i];
        if (!f.is_string()) {
          errs.typeInvalid(index("spec.finalizers", i), f, "string");
          continue;
        }
        errs.invalidEach("spec.finalizers", f, isQualifiedName(f.get_ref<const std::string&>()));
      }
    }
  }
  if (const json* status = errs.object(obj, "status", "status")) {
    auto phase = errs.string(*status, "phase", "status.phase");
    if (phase && !phase->empty() && *phase != "Active" && *phase != "Terminating") {
      errs.notSupported("status.phase", *phase, {"Active", "Terminating"});
    }
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

void validateNode(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, false, nameIsDNSSubdomain);
  if (const json* spec = errs.object(obj, "spec", "spec")) {
    auto cidr = errs.string(*spec, "podCIDR", "spec.podCIDR");
    const char* cidrMessage = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
    if (cidr && !cidr->empty() && !isValidCIDR(*cidr)) {
      errs.invalid("spec.podCIDR", *cidr, cidrMessage);
    }
    if (const json* cidrs = errs.array(*spec, "podCIDRs", "spec.podCIDRs")) {
      for (size_t i = 0; i < cidrs->size(); ++i) {
        const json& c = (*cidrs)[i];
        if (!c.is_string() || !isValidCIDR(c.get<std::string>())) {
          errs.invalid(index("spec.podCIDRs", i), c, cidrMessage);
        }
      }
    }
    if (const json* taints = errs.array(*spec, "taints", "spec.taints")) {
      std::set<std::string> seen;
      for (size_t i = 0; i < taints->size(); ++i) {
        std::string p = index("spec.taints", i);
        const json& t = (*taints)[i];
        if (!t.is_object()) {
          errs.typeInvalid(p, t, "object");
          continue;
        }
        auto k = errs.string(t, "key", child(p, "key"));
        errs.invalidEach(child(p, "key"), k.value_or(""), isQualifiedName(k.value_or("")));
        auto value = errs.string(t, "value", child(p, "value"));
        if (value) errs.invalidEach(child(p, "value"), *value, isLabelValue(*value));
        auto effect = errs.string(t, "effect", child(p, "effect"));
        if (!effect || effect->empty()) {
          if (effect || absent(t, "effect")) errs.required(child(p, "effect"));
        } else if (*effect != "NoExecute" && *effect != "NoSchedule" &&
                   *effect != "PreferNoSchedule") {
          errs.notSupported(child(p, "effect"), *effect,
                            {"NoExecute", "NoSchedule", "PreferNoSchedule"});
        }
        std::string id = k.value_or("") + ":" + effect.value_or("");
        if (seen.count(id)) {
          errs.duplicate(p, id);
        }
        seen.insert(id);
      }
    }
    errs.boolean(*spec, "unschedulable", "spec.unschedulable");
  }
  if (const json* status = errs.object(obj, "status", "status")) {
    validateResourceQuantities(errs, *status, "capacity", "status.capacity");
    validateResourceQuantities(errs, *status, "allocatable", "status.allocatable");
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

void validateEvent(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* meta = member(obj, "metadata");
  std::string ns;
  if (meta && meta->is_object()) {
    const json* n = member(*meta, "namespace");
    if (n && n->is_string()) ns = n->get<std::string>();
  }
  const json* involved = errs.object(obj, "involvedObject", "involvedObject");
  std::string involvedNs;
  if (involved) {
    for (const char* f : {"kind", "name", "apiVersion", "uid", "fieldPath", "resourceVersion"}) {
      errs.string(*involved, f, child("involvedObject", f));
    }
    involvedNs = errs.string(*involved, "namespace", "involvedObject.namespace").value_or("");
  }
  auto eventTime = errs.string(obj, "eventTime", "eventTime");
  if (!eventTime || eventTime->empty()) {
    // Events about cluster-scoped objects live in "default" (or nowhere).
    bool ok = involvedNs.empty() ? (ns.empty() || ns == "default") : ns == involvedNs;
    if (!ok) errs.invalid("involvedObject.namespace", involvedNs, "does not match event.namespace");
  } else {
    if (involvedNs.empty() && ns != "default" && ns != "kube-system") {
      errs.invalid("involvedObject.namespace", involvedNs, "does not match event.namespace");
    }
    auto controller = errs.string(obj, "reportingComponent", "reportingComponent");
    if (!controller || controller->empty()) {
      errs.required("reportingComponent");
    } else {
      errs.invalidEach("reportingComponent", *controller, isQualifiedName(*controller));
    }
    auto instance = errs.string(obj, "reportingInstance", "reportingInstance");
    if (!instance || instance->empty())
      errs.required("reportingInstance");
    else if (instance->size() > 128) {
      errs.invalid("reportingInstance", "", "can have at most 128 characters");
    }
    auto action = errs.string(obj, "action", "action");
    if (!action || action->empty()) errs.required("action");
    auto reason = errs.string(obj, "reason", "reason");
    if (!reason || reason->empty()) errs.required("reason");
  }
  auto type = errs.string(obj, "type", "type");
  errs.integer(obj, "count", "count");
  if (type && !type->empty() && *type != "Normal" && *type != "Warning" && eventTime &&
      !eventTime->empty()) {
    errs.notSupported("type", *type, {"Normal", "Warning"});
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

void validateEndpoints(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  if (const json* subsets = errs.array(obj, "subsets", "subsets")) {
    for (size_t i = 0; i < subsets->size(); ++i) {
      std::string p = index("subsets", i);
      const json& s = (*subsets)[i];
      if (!s.is_object()) {
        errs.typeInvalid(p, s, "object");
        continue;
      }
      const json* ready = errs.array(s, "addresses", child(p, "addresses"));
      const json* notReady = errs.array(s, "notReadyAddresses", child(p, "notReadyAddresses"));
      if ((!ready || ready->empty()) && (!notReady || notReady->empty())) {
        errs.required(p, "must specify `addresses` or `notReadyAddresses`");
      }
      if (ready) validateEndpointAddresses(errs, *ready, child(p, "addresses"));
      if (notReady) validateEndpointAddresses(errs, *notReady, child(p, "notReadyAddresses"));
      const json* ports = errs.array(s, "ports", child(p, "ports"));
      if (!ports) continue;
      for (size_t j = 0; j < ports->size(); ++j) {
        std::string pp = index(child(p, "ports"), j);
        const json& port = (*ports)[j];
        if (!port.is_object()) {
          errs.typeInvalid(pp, port, "object");
          continue;
        }
        auto name = errs.string(port, "name", child(pp, "name"));
        if ((!name || name->empty()) && ports->size() > 1) {
          errs.required(child(pp, "name"));
        } else if (name && !name->empty()) {
          errs.invalidEach(child(pp, "name"), *name, isDNS1123Label(*name));
        }
        auto number = errs.integer(port, "port", child(pp, "port"));
        errs.invalidEach(child(pp, "port"), number.value_or(0), isValidPortNum(number.value_or(0)));
        validateProtocol(errs, port, child(pp, "protocol"));
      }
    }
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

}  // namespace minik8s::api::validation
