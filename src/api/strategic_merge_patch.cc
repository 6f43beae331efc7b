// Strategic merge patch: the merge engine (applyStrategicMergePatch) and the table of list
// patch strategies it consults.
#include "api/strategic_merge_patch.h"

#include <algorithm>
#include <optional>

#include "api/patch.h"

namespace minik8s::api {
namespace {

using Path = std::vector<std::string>;

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

// Where a PodSpec sits in each workload kind.
const std::vector<std::pair<std::string_view, Path>>& podSpecLocations() {
  static const std::vector<std::pair<std::string_view, Path>> kLocations = {
      {"Pod", {"spec"}},
      {"PodTemplate", {"template", "spec"}},
      {"Deployment", {"spec", "template", "spec"}},
      {"ReplicaSet", {"spec", "template", "spec"}},
      {"ReplicationController", {"spec", "template", "spec"}},
      {"Job", {"spec", "template", "spec"}},
      {"DaemonSet", {"spec", "template", "spec"}},
      {"StatefulSet", {"spec", "template", "spec"}},
      {"CronJob", {"spec", "jobTemplate", "spec", "template", "spec"}},
  };
  return kLocations;
}

// Kinds whose schema we know; lists of other kinds (custom resources) are replaced whole.
bool isBuiltinKind(std::string_view kind) {
  static constexpr std::string_view kKinds[] = {"Pod",
                                                "PodTemplate",
                                                "Deployment",
                                                "ReplicaSet",
                                                "ReplicationController",
                                                "Job",
                                                "DaemonSet",
                                                "StatefulSet",
                                                "CronJob",
                                                "Service",
                                                "Endpoints",
                                                "EndpointSlice",
                                                "Node",
                                                "Namespace",
                                                "ConfigMap",
                                                "Secret",
                                                "ServiceAccount",
                                                "Event",
                                                "PersistentVolume",
                                                "PersistentVolumeClaim",
                                                "StorageClass",
                                                "Lease",
                                                "HorizontalPodAutoscaler",
                                                "PodDisruptionBudget",
                                                "MutatingWebhookConfiguration",
                                                "ValidatingWebhookConfiguration",
                                                "Ingress",
                                                "IngressClass",
                                                "NetworkPolicy",
                                                "ResourceQuota",
                                                "LimitRange",
                                                "PriorityClass",
                                                "Role",
                                                "RoleBinding",
                                                "ClusterRole",
                                                "ClusterRoleBinding",
                                                "CustomResourceDefinition",
                                                "APIService",
                                                "CertificateSigningRequest",
                                                "ValidatingWebhookConfiguration",
                                                "MutatingWebhookConfiguration",
                                                "RuntimeClass",
                                                "VolumeAttachment",
                                                "CSIDriver",
                                                "CSINode",
                                                "PriorityLevelConfiguration",
                                                "FlowSchema"};
  return std::find(std::begin(kKinds), std::end(kKinds), kind) != std::end(kKinds);
}

ListPatchStrategy mergeBy(std::string key, std::string keyDefault = "") {
  return {true, {std::move(key)}, {std::move(keyDefault)}};
}

ListPatchStrategy podSpecList(const Path& rel) {
  auto isContainerList = [](const std::string& f) {
    return f == "containers" || f == "initContainers" || f == "ephemeralContainers";
  };
  if (rel.size() == 1) {
    const std::string& f = rel[0];
    if (isContainerList(f) || f == "volumes" || f == "imagePullSecrets" || f == "schedulingGates" ||
        f == "resourceClaims") {
      return mergeBy("name");
    }
    if (f == "hostAliases") return mergeBy("ip");
    if (f == "topologySpreadConstraints") return mergeBy("topologyKey");
  }
  if (rel.size() == 2 && isContainerList(rel[0])) {
    const std::string& f = rel[1];
    if (f == "env") return mergeBy("name");
    if (f == "ports") return {true, {"containerPort", "protocol"}, {"", "TCP"}};
    if (f == "volumeMounts") return mergeBy("mountPath");
    if (f == "volumeDevices") return mergeBy("devicePath");
  }
  return {};
}

bool startsWith(const Path& path, const Path& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

}  // namespace

ListPatchStrategy listPatchStrategy(const std::string& kind, const Path& path) {
  if (path == Path{"metadata", "finalizers"}) return {true, {}, {}};
  if (path == Path{"metadata", "ownerReferences"}) return mergeBy("uid");
  if (!isBuiltinKind(kind) || path.empty()) return {};
  if (path.back() == "conditions") return mergeBy("type");
  for (const auto& [k, prefix] : podSpecLocations()) {
    if (k == kind && startsWith(path, prefix) && path.size() > prefix.size()) {
      return podSpecList(
          Path(path.begin() + static_cast<std::ptrdiff_t>(prefix.size()), path.end()));
    }
  }
  if (kind == "Pod" && (path == Path{"status", "podIPs"} || path == Path{"status", "hostIPs"})) {
    return mergeBy("ip");
  }
  if (kind == "Node" && path == Path{"status", "addresses"}) return mergeBy("type");
  if (kind == "Node" && path == Path{"spec", "podCIDRs"}) return {true, {}, {}};
  if (kind == "Service" && path == Path{"spec", "ports"}) return mergeBy("port");
  if ((kind == "MutatingWebhookConfiguration" || kind == "ValidatingWebhookConfiguration") &&
      path == Path{"webhooks"}) {
    return mergeBy("name");
  }
  return {};
}

namespace {

class Merger {
 public:
  explicit Merger(const std::string& kind) : kind_(kind) {}

  // Merges patch into original. nullopt means the patch deleted the map ($patch: delete).
  Result<std::optional<json>> mergeMap(json original, const json& patch, Path& path) {
    if (auto it = patch.find(kPatchDirective); it != patch.end()) {
      if (*it == "delete") return std::optional<json>();
      if (*it == "replace") {
        json literal = patch;
        literal.erase(std::string(kPatchDirective));
        return mergeMap(json::object(), literal, path);
      }
      if (*it != "merge") {
        return Status::BadRequest("unknown patch type: " + it->dump() + " in map: " + patch.dump());
      }
    }
    if (!original.is_object()) original = json::object();

    if (auto it = patch.find(kRetainKeys); it != patch.end()) {
      if (!it->is_array()) return Status::BadRequest("$retainKeys must be a list of field names");
      for (auto field = original.begin(); field != original.end();) {
        if (std::find(it->begin(), it->end(), json(field.key())) == it->end()) {
          field = original.erase(field);
        } else {
          ++field;
        }
      }
    }

    std::vector<std::string> ordered;  // lists already merged by $setElementOrder
    for (const auto& [key, order] : patch.items()) {
      if (!key.starts_with(kSetElementOrder)) continue;
      std::string name = key.substr(kSetElementOrder.size());
      if (Status s = mergeOrderedList(original, patch, name, order, path); !s.ok()) return s;
      ordered.push_back(name);
    }

    for (const auto& [key, value] : patch.items()) {
      if (key == kPatchDirective || key == kRetainKeys || key.starts_with(kSetElementOrder) ||
          std::find(ordered.begin(), ordered.end(), key) != ordered.end()) {
        continue;
      }
      if (key.starts_with(kDeleteFromPrimitiveList)) {
        deleteFromPrimitiveList(original, key.substr(kDeleteFromPrimitiveList.size()), value);
        continue;
      }
      if (value.is_null()) {
        original.erase(key);
        continue;
      }
      path.push_back(key);
      Status status;
      if (value.is_object()) {
        auto existing = original.find(key);
        auto merged =
            mergeMap(existing == original.end() ? json::object() : *existing, value, path);
        if (!merged.ok()) {
          status = merged.status();
        } else if (merged->has_value()) {
          original[key] = std::move(**merged);
        } else {
          original.erase(key);
        }
      } else if (value.is_array()) {
        auto existing = original.find(key);
        json current =
            existing != original.end() && existing->is_array() ? *existing : json::array();
        auto merged = mergeList(current, value, listPatchStrategy(kind_, path), path);
        if (merged.ok()) {
          original[key] = std::move(*merged);
        } else {
          status = merged.status();
        }
      } else {
        original[key] = value;
      }
      path.pop_back();
      if (!status.ok()) return status;
    }
    return std::optional<json>(std::move(original));
  }

 private:
  const std::string& kind_;

  // Whether two list elements are the same element under the strategy's merge keys.
  static bool sameElement(const json& a, const json& b, const ListPatchStrategy& strategy) {
    if (strategy.keys.empty() || !a.is_object() || !b.is_object()) return a == b;
    for (size_t i = 0; i < strategy.keys.size(); ++i) {
      const std::string& k = strategy.keys[i];
      const std::string& fallback = strategy.keyDefaults[i];
      auto value = [&](const json& m) {
        auto it = m.find(k);
        if (it != m.end() && !it->is_null()) return *it;
        return fallback.empty() ? json() : json(fallback);
      };
      if (value(a) != value(b)) return false;
    }
    return true;
  }

  static std::ptrdiff_t indexOf(const json& list, const json& item,
                                const ListPatchStrategy& strategy) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (sameElement(list[i], item, strategy)) return static_cast<std::ptrdiff_t>(i);
    }
    return -1;
  }

  // A map element with its directives applied against nothing: drops nulls and markers.
  Result<json> cleanElement(const json& element, Path& path) {
    if (!element.is_object()) return element;
    auto cleaned = mergeMap(json::object(), element, path);
    if (!cleaned.ok()) return cleaned.status();
    return cleaned->value_or(json::object());
  }

  Result<json> mergeList(const json& original, const json& patch, const ListPatchStrategy& strategy,
                         Path& path) {
    if (!strategy.merge) {  // replaced whole, as a merge patch would
      json out = json::array();
      for (const auto& element : patch) {
        if (element.is_object() && element.contains(kPatchDirective)) continue;
        auto cleaned = cleanElement(element, path);
        if (!cleaned.ok()) return cleaned.status();
        out.push_back(std::move(*cleaned));
      }
      return out;
    }
    if (strategy.keys.empty()) {  // a set of scalars: union, first occurrence wins
      json out = json::array();
      for (const json* list : {&original, &patch}) {
        for (const auto& v : *list) {
          if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        }
      }
      return out;
    }

    // A list of maps merged by key. {$patch: replace} makes the patch list literal.
    auto directiveOf = [](const json& e) -> std::string {
      if (!e.is_object()) return "";
      auto it = e.find(kPatchDirective);
      return it != e.end() && it->is_string() ? it->get<std::string>() : "";
    };
    for (const auto& element : patch) {
      if (directiveOf(element) == "replace") {
        json out = json::array();
        for (const auto& e : patch) {
          if (directiveOf(e) == "replace") continue;
          auto cleaned = cleanElement(e, path);
          if (!cleaned.ok()) return cleaned.status();
          out.push_back(std::move(*cleaned));
        }
        return out;
      }
    }
    json out = original;
    for (const auto& element : patch) {
      if (!element.is_object()) {
        return Status::BadRequest("list " + joinPath(path) + " must hold objects, got " +
                                  element.dump());
      }
      if (!element.contains(strategy.keys.front())) {
        return Status::BadRequest("map: " + element.dump() +
                                  " does not contain declared merge key: " + strategy.keys.front());
      }
      if (directiveOf(element) == "delete") {
        for (auto it = out.begin(); it != out.end();) {
          it = sameElement(*it, element, strategy) ? out.erase(it) : it + 1;
        }
        continue;
      }
      std::ptrdiff_t at = indexOf(out, element, strategy);
      auto merged =
          mergeMap(at >= 0 ? out[static_cast<size_t>(at)] : json::object(), element, path);
      if (!merged.ok()) return merged.status();
      if (!merged->has_value()) continue;
      if (at >= 0) {
        out[static_cast<size_t>(at)] = std::move(**merged);
      } else {
        out.push_back(std::move(**merged));
      }
    }
    return out;
  }

  // $setElementOrder/<name>: merge the list, then order it: the items named in the directive
  // in its order, server-only items kept where they were relative to their old neighbours.
  Status mergeOrderedList(json& original, const json& patch, const std::string& name,
                          const json& order, Path& path) {
    if (!order.is_array()) {
      return Status::BadRequest("$setElementOrder/" + name + " must be a list");
    }
    path.push_back(name);
    ListPatchStrategy strategy = listPatchStrategy(kind_, path);
    auto patchIt = patch.find(name);
    if (!strategy.merge || (patchIt != patch.end() && !patchIt->is_array())) {
      path.pop_back();
      // Nothing to order: the plain merge loop handles the list (or its deletion).
      if (patchIt != patch.end() && !patchIt->is_array()) return Status::Ok();
      if (!strategy.merge && patchIt != patch.end()) {
        auto replaced = mergeList(json::array(), *patchIt, strategy, path);
        if (!replaced.ok()) return replaced.status();
        original[name] = std::move(*replaced);
      }
      return Status::Ok();
    }
    auto existing = original.find(name);
    json server = existing != original.end() && existing->is_array() ? *existing : json::array();
    auto merged =
        mergeList(server, patchIt == patch.end() ? json::array() : *patchIt, strategy, path);
    path.pop_back();
    if (!merged.ok()) return merged.status();

    json result = std::move(*merged);
    if (!order.empty()) {
      std::vector<json> inOrder, serverOnly;
      for (auto& item : result) {
        (indexOf(order, item, strategy) >= 0 ? inOrder : serverOnly).push_back(std::move(item));
      }
      auto sortBy = [&](std::vector<json>& items, const json& reference) {
        std::stable_sort(items.begin(), items.end(), [&](const json& a, const json& b) {
          std::ptrdiff_t ia = indexOf(reference, a, strategy);
          std::ptrdiff_t ib = indexOf(reference, b, strategy);
          if (ia < 0) return false;
          return ib < 0 || ia < ib;
        });
      };
      sortBy(inOrder, order);
      sortBy(serverOnly, server);
      // Interleave: a server-only item goes before the first ordered item it preceded on the
      // server.
      result = json::array();
      size_t i = 0, j = 0;
      while (i < serverOnly.size() || j < inOrder.size()) {
        bool takeServer = j >= inOrder.size();
        if (!takeServer && i < serverOnly.size()) {
          std::ptrdiff_t si = indexOf(server, serverOnly[i], strategy);
          std::ptrdiff_t pj = indexOf(server, inOrder[j], strategy);
          takeServer = si >= 0 && pj >= 0 && si < pj;
        }
        result.push_back(std::move(takeServer ? serverOnly[i++] : inOrder[j++]));
      }
    }
    if (!result.empty() || existing != original.end()) original[name] = std::move(result);
    return Status::Ok();
  }

  static void deleteFromPrimitiveList(json& original, const std::string& name, const json& values) {
    auto it = original.find(name);
    if (it == original.end() || !it->is_array() || !values.is_array()) return;
    json kept = json::array();
    for (auto& v : *it) {
      if (std::find(values.begin(), values.end(), v) == values.end()) kept.push_back(v);
    }
    *it = std::move(kept);
  }

  static std::string joinPath(const Path& path) {
    std::string out;
    for (const auto& p : path) out += (out.empty() ? "" : ".") + p;
    return out;
  }
};

}  // namespace

Result<json> applyStrategicMergePatch(const json& target, const json& patch,
                                      const std::string& kind) {
  if (!patch.is_object()) {
    return Status::BadRequest("a strategic merge patch must be a JSON object, got " +
                              std::string(patch.type_name()));
  }
  Merger merger(kind);
  Path path;
  auto merged = merger.mergeMap(target, patch, path);
  if (!merged.ok()) return merged.status();
  return merged->value_or(json::object());
}

}  // namespace minik8s::api
