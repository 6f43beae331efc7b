#include "api/custom_resource.h"

#include <algorithm>
#include <cctype>

#include "api/json_schema.h"
#include "api/validation/kinds.h"
#include "common/json_pointer.h"
#include "common/strings.h"
#include "common/time_util.h"

namespace minik8s::api {
namespace {

// ".spec.replicas" -> "/spec/replicas"; "" when not a plain field path.
std::string pointerOf(const std::string& path) {
  auto p = JsonPath::parse(path);
  return p.ok() ? p->pointer() : "";
}

std::string cellText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

// Kubernetes' version priority: v2 > v1 > v11beta2 > v10beta3 > v3beta1 > v12alpha1 > v11alpha2 >
// foo1 > foo10 (GA by major descending, then beta, then alpha, each by major then minor
// descending, then anything else alphabetically).
struct VersionRank {
  int level = 0;  // 3 GA, 2 beta, 1 alpha, 0 other
  long major = 0, minor = 0;
  std::string text;
};

VersionRank rankOf(const std::string& v) {
  VersionRank r;
  r.text = v;
  size_t i = 1;
  if (v.size() < 2 || v[0] != 'v' || !std::isdigit(static_cast<unsigned char>(v[1]))) return r;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  r.major = std::stol(v.substr(1, i - 1));
  if (i == v.size()) {
    r.level = 3;
    return r;
  }
  for (auto [word, level] : {std::pair{"beta", 2}, std::pair{"alpha", 1}}) {
    const std::string w = word;
    if (v.compare(i, w.size(), w) != 0) continue;
    size_t j = i + w.size();
    if (j == v.size() || !std::all_of(v.begin() + static_cast<long>(j), v.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      break;
    }
    r.level = level;
    r.minor = std::stol(v.substr(j));
    return r;
  }
  r.major = 0;
  return r;
}

bool higherPriority(const std::string& a, const std::string& b) {
  VersionRank x = rankOf(a), y = rankOf(b);
  if (x.level != y.level) return x.level > y.level;
  if (x.level == 0) return x.text < y.text;
  if (x.major != y.major) return x.major > y.major;
  return x.minor > y.minor;
}

}  // namespace

Result<std::shared_ptr<const CustomResource>> CustomResource::fromVersion(const json& crd,
                                                                          const json& version) {
  auto cr = std::make_shared<CustomResource>();
  cr->schema_ = valueAt(version, "/schema/openAPIV3Schema",
                        json{{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}});
  const json columns = version.value("additionalPrinterColumns", json::array());
  if (columns.is_array() && !columns.empty()) {
    for (const auto& c : columns) {
      auto path = JsonPath::parse(c.value("jsonPath", ""));
      if (!path.ok()) return path.status();
      TableColumn col;
      col.name = c.value("name", "");
      col.type = c.value("type", "string");
      col.format = c.value("format", "");
      col.description = c.value("description", "");
      col.priority = c.value("priority", 0);
      cr->columns_.push_back({col, std::move(path.value())});
    }
  } else {
    TableColumn age;
    age.name = "Age";
    age.type = "date";
    age.description =
        "CreationTimestamp is a timestamp representing the server time when this object was "
        "created.";
    cr->columns_.push_back({age, *JsonPath::parse(".metadata.creationTimestamp")});
  }
  if (version.contains("subresources") && version["subresources"].is_object() &&
      version["subresources"].contains("scale")) {
    const json& s = version["subresources"]["scale"];
    cr->hasScale_ = true;
    cr->specReplicas_ = pointerOf(s.value("specReplicasPath", ".spec.replicas"));
    cr->statusReplicas_ = pointerOf(s.value("statusReplicasPath", ".status.replicas"));
    cr->labelSelectorPath_ = s.value("labelSelectorPath", "");
  }
  (void)crd;
  return std::shared_ptr<const CustomResource>(std::move(cr));
}

void CustomResource::pruneAndDefault(json& obj) const {
  jsonschema::prune(obj, schema_, /*isRoot=*/true, nullptr);
  jsonschema::applyDefaults(obj, schema_);
}

std::vector<std::string> CustomResource::unknownFields(const json& obj) const {
  json copy = obj;
  std::vector<std::string> pruned;
  jsonschema::prune(copy, schema_, /*isRoot=*/true, &pruned);
  return pruned;
}

std::vector<Cause> CustomResource::validate(const json& obj, const json* old,
                                            bool namespaced) const {
  validation::FieldErrors errs;
  validation::validateObjectMeta(errs, obj, namespaced, validation::nameIsDNSSubdomain);
  if (old) validation::validateObjectMetaUpdate(errs, obj, *old);
  std::vector<Cause> causes = errs.take();
  for (auto& c : jsonschema::validate(obj, schema_, "")) causes.push_back(std::move(c));
  return causes;
}

std::vector<TableColumn> CustomResource::columns() const {
  TableColumn name;
  name.name = "Name";
  name.type = "string";
  name.format = "name";
  name.description =
      "Name must be unique within a namespace. Is required when creating resources, although some "
      "resources may allow a client to request the generation of an appropriate name "
      "automatically. Name is primarily intended for creation idempotence and configuration "
      "definition. Cannot be updated. More info: "
      "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
  std::vector<TableColumn> out = {name};
  for (const auto& c : columns_) out.push_back(c.column);
  return out;
}

json CustomResource::cells(const json& obj, std::chrono::system_clock::time_point now) const {
  json cells = json::array({valueAt(obj, "/metadata/name", std::string())});
  for (const auto& c : columns_) {
    json v = c.path.first(obj);
    const std::string& type = c.column.type;
    if (v.is_null()) {
      cells.push_back(nullptr);
    } else if (type == "date") {
      auto t = v.is_string() ? parseRfc3339(v.get<std::string>()) : std::nullopt;
      cells.push_back(t ? humanDuration(std::chrono::duration_cast<std::chrono::seconds>(now - *t))
                        : cellText(v));
    } else if (type == "integer" && (v.is_number_integer() || v.is_number_unsigned())) {
      cells.push_back(v);
    } else if (type == "number" && v.is_number()) {
      cells.push_back(v);
    } else if (type == "boolean" && v.is_boolean()) {
      cells.push_back(v);
    } else {
      cells.push_back(cellText(v));
    }
  }
  return cells;
}

std::string CustomResource::labelSelector(const json& obj) const {
  if (labelSelectorPath_.empty()) return "";
  auto path = JsonPath::parse(labelSelectorPath_);
  if (!path.ok()) return "";
  json v = path->first(obj);
  return v.is_string() ? v.get<std::string>() : "";
}

void defaultCustomResourceDefinition(json& crd) {
  if (!crd.is_object()) return;
  json& spec = crd["spec"];
  if (!spec.is_object()) return;
  if (spec.contains("names") && spec["names"].is_object()) {
    json& names = spec["names"];
    const std::string kind = names.value("kind", "");
    if (!kind.empty()) {
      if (!names.contains("singular") || names["singular"] == "")
        names["singular"] = asciiLower(kind);
      if (!names.contains("listKind") || names["listKind"] == "") names["listKind"] = kind + "List";
    }
  }
  if (!spec.contains("conversion") || !spec["conversion"].is_object()) {
    spec["conversion"] = {{"strategy", "None"}};
  } else if (!spec["conversion"].contains("strategy")) {
    spec["conversion"]["strategy"] = "None";
  }
  if (json* versions =
          spec.contains("versions") && spec["versions"].is_array() ? &spec["versions"] : nullptr) {
    for (auto& v : *versions) {
      if (!v.is_object()) continue;
      if (v.contains("additionalPrinterColumns") && v["additionalPrinterColumns"].is_array()) {
        for (auto& c : v["additionalPrinterColumns"]) {
          if (c.is_object() && !c.contains("priority")) c["priority"] = 0;
        }
      }
    }
  }
}

Result<std::vector<ResourceInfo>> resourcesOfCrd(const json& crd) {
  const json& spec = crd.at("spec");
  const json& names = spec.at("names");
  const std::string group = spec.value("group", "");
  std::string storageVersion;
  for (const auto& v : spec.at("versions")) {
    if (v.value("storage", false)) storageVersion = v.value("name", "");
  }
  std::vector<json> versions(spec.at("versions").begin(), spec.at("versions").end());
  // The preferred version (the first a group lists) is the highest by Kubernetes' priority.
  std::stable_sort(versions.begin(), versions.end(), [](const json& a, const json& b) {
    return higherPriority(a.value("name", ""), b.value("name", ""));
  });
  std::vector<ResourceInfo> out;
  for (const auto& v : versions) {
    if (!v.value("served", false)) continue;
    ResourceInfo r;
    r.group = group;
    r.version = v.value("name", "");
    r.kind = names.value("kind", "");
    r.listKind = names.value("listKind", r.kind + "List");
    r.plural = names.value("plural", "");
    r.singular = names.value("singular", asciiLower(r.kind));
    r.namespaced = spec.value("scope", "Namespaced") != "Cluster";
    r.verbs = {"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"};
    for (const auto& s : names.value("shortNames", json::array())) {
      if (s.is_string()) r.shortNames.push_back(s.get<std::string>());
    }
    for (const auto& c : names.value("categories", json::array())) {
      if (c.is_string()) r.categories.push_back(c.get<std::string>());
    }
    const json subresources = v.value("subresources", json::object());
    if (subresources.is_object() && subresources.contains("status")) {
      r.subresources.push_back(
          SubresourceInfo{"status", r.group, r.version, r.kind, {"get", "patch", "update"}});
    }
    if (subresources.is_object() && subresources.contains("scale")) {
      r.subresources.push_back(
          SubresourceInfo{"scale", "autoscaling", "v1", "Scale", {"get", "patch", "update"}});
    }
    r.storageVersion = storageVersion;
    auto custom = CustomResource::fromVersion(crd, v);
    if (!custom.ok()) return custom.status();
    r.custom = std::move(custom.value());
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace minik8s::api
