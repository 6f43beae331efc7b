#include "api/printers/storage_cells.h"

#include "api/quantity.h"

namespace minik8s::api::printers {
namespace {

constexpr char kBetaStorageClassAnnotation[] = "volume.beta.kubernetes.io/storage-class";

std::string age(const json& meta, TimePoint now) {
  return since(meta.value("creationTimestamp", json()), now);
}

// Quantity.String() of list[name]: "0" when absent, the text itself when it does not parse.
std::string quantityString(const json& list, const char* name) {
  if (!list.contains(name)) return "0";
  auto q = Quantity::fromJson(list[name]);
  if (q.ok()) return q->toString();
  return list[name].is_string() ? list[name].get<std::string>() : list[name].dump();
}

// The phase, or Terminating once deletion started.
std::string phase(const json& obj, const json& meta) {
  if (meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null()) {
    return "Terminating";
  }
  return str(object(obj, "status"), "phase");
}

// A pointer field: its value, or "<unset>" when absent.
std::string orUnset(const json& obj, const char* name) {
  if (!obj.contains(name) || obj[name].is_null()) return "<unset>";
  return str(obj, name);
}

// The beta annotation wins over spec.storageClassName, as helper.GetPersistentVolumeClass does.
std::string storageClass(const json& meta, const json& spec) {
  const json& annotations = object(meta, "annotations");
  if (annotations.contains(kBetaStorageClassAnnotation)) {
    return str(annotations, kBetaStorageClassAnnotation);
  }
  return str(spec, "storageClassName");
}

bool booleanOr(const json& obj, const char* name, bool fallback) {
  return obj.contains(name) && obj[name].is_boolean() ? obj[name].get<bool>() : fallback;
}

}  // namespace

std::string accessModesString(const json& modes) {
  std::string out;
  for (auto [mode, shortName] :
       {std::pair{"ReadWriteOnce", "RWO"}, std::pair{"ReadOnlyMany", "ROX"},
        std::pair{"ReadWriteMany", "RWX"}, std::pair{"ReadWriteOncePod", "RWOP"}}) {
    bool found = false;
    if (modes.is_array()) {
      for (const auto& m : modes) found |= m == mode;
    }
    if (found) out += (out.empty() ? "" : ",") + std::string(shortName);
  }
  return out;
}

json persistentVolumeCells(const json& pv, TimePoint now) {
  const json& meta = object(pv, "metadata");
  const json& spec = object(pv, "spec");
  std::string claim;
  if (spec.contains("claimRef") && spec["claimRef"].is_object()) {
    claim = str(spec["claimRef"], "namespace") + "/" + str(spec["claimRef"], "name");
  }
  return json::array(
      {str(meta, "name"), quantityString(object(spec, "capacity"), "storage"),
       accessModesString(array(spec, "accessModes")), str(spec, "persistentVolumeReclaimPolicy"),
       phase(pv, meta), claim, storageClass(meta, spec), orUnset(spec, "volumeAttributesClassName"),
       str(object(pv, "status"), "reason"), age(meta, now), orUnset(spec, "volumeMode")});
}

json persistentVolumeClaimCells(const json& pvc, TimePoint now) {
  const json& meta = object(pvc, "metadata");
  const json& spec = object(pvc, "spec");
  const json& status = object(pvc, "status");
  std::string volume = str(spec, "volumeName");
  std::string capacity, modes;
  if (!volume.empty()) {
    modes = accessModesString(array(status, "accessModes"));
    capacity = quantityString(object(status, "capacity"), "storage");
  }
  return json::array({str(meta, "name"), phase(pvc, meta), volume, capacity, modes,
                      storageClass(meta, spec), orUnset(spec, "volumeAttributesClassName"),
                      age(meta, now), orUnset(spec, "volumeMode")});
}

json storageClassCells(const json& sc, TimePoint now) {
  const json& meta = object(sc, "metadata");
  const json& annotations = object(meta, "annotations");
  std::string name = str(meta, "name");
  if (str(annotations, "storageclass.kubernetes.io/is-default-class") == "true" ||
      str(annotations, "storageclass.beta.kubernetes.io/is-default-class") == "true") {
    name += " (default)";
  }
  return json::array({name, str(sc, "provisioner"), str(sc, "reclaimPolicy", "Delete"),
                      str(sc, "volumeBindingMode", "Immediate"),
                      booleanOr(sc, "allowVolumeExpansion", false), age(meta, now)});
}

json csiDriverCells(const json& driver, TimePoint now) {
  const json& meta = object(driver, "metadata");
  const json& spec = object(driver, "spec");
  std::string audiences;
  const json& requests = array(spec, "tokenRequests");
  for (const auto& r : requests) audiences += (audiences.empty() ? "" : ",") + str(r, "audience");
  if (requests.empty()) audiences = "<unset>";
  std::string modes;
  for (const auto& m : array(spec, "volumeLifecycleModes")) {
    if (m.is_string()) modes += (modes.empty() ? "" : ",") + m.get<std::string>();
  }
  if (modes.empty()) modes = "<none>";
  return json::array({str(meta, "name"), booleanOr(spec, "attachRequired", true),
                      booleanOr(spec, "podInfoOnMount", false),
                      booleanOr(spec, "storageCapacity", false), audiences,
                      booleanOr(spec, "requiresRepublish", false), modes, age(meta, now)});
}

json csiNodeCells(const json& node, TimePoint now) {
  const json& meta = object(node, "metadata");
  const auto drivers = static_cast<int64_t>(array(object(node, "spec"), "drivers").size());
  return json::array({str(meta, "name"), drivers, age(meta, now)});
}

}  // namespace minik8s::api::printers
