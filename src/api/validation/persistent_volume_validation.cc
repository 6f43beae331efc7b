// core/v1 PersistentVolume and PersistentVolumeClaim, as Kubernetes 1.32 validates them
// (pkg/apis/core/validation) with its default feature gates: RecoverVolumeExpansionFailure on, so a
// bound claim's request may shrink back down to just above its capacity; volumeAttributesClassName
// is checked as if VolumeAttributesClass were on, rather than silently dropped.
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/object_meta.h"
#include "api/quantity.h"
#include "api/validation/kinds.h"
#include "common/strings.h"

namespace minik8s::api::validation {
namespace {

// Sorted as Kubernetes' sets.List prints them in "supported values".
const std::vector<std::string> kAccessModes = {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce",
                                               "ReadWriteOncePod"};
const std::vector<std::string> kVolumeModes = {"Block", "Filesystem"};
const std::vector<std::string> kReclaimPolicies = {"Delete", "Recycle", "Retain"};
const std::vector<std::string> kHostPathTypes = {
    "",     "BlockDevice",  "CharDevice", "Directory", "DirectoryOrCreate",
    "File", "FileOrCreate", "Socket"};

constexpr char kBetaStorageClassAnnotation[] = "volume.beta.kubernetes.io/storage-class";
constexpr char kMountOptionsAnnotation[] = "volume.beta.kubernetes.io/mount-options";

// Absent, null, "" or an empty list or map.
bool emptyValue(const json* v) {
  return !v || v->is_null() || (v->is_string() && v->get_ref<const std::string&>().empty()) ||
         ((v->is_array() || v->is_object()) && v->empty());
}

// StorageClass and VolumeAttributesClass names referred to from specs.
void validateClassName(FieldErrors& errs, const json& obj, std::string_view name,
                       const std::string& path) {
  auto v = errs.string(obj, name, path);
  if (v && !v->empty()) errs.invalidEach(path, *v, isDNS1123Subdomain(*v));
}

void validateAccessModes(FieldErrors& errs, const json& spec, const std::string& path,
                         const std::string& requiredDetail) {
  std::vector<std::string> modes = stringItems(errs, spec, "accessModes", path);
  const json* raw = member(spec, "accessModes");
  if (!raw || raw->is_null() || (raw->is_array() && raw->empty())) {
    errs.required(path, requiredDetail);
  }
  bool readWriteOncePod = false, others = false;
  for (const auto& mode : modes) {
    if (!oneOf(kAccessModes, mode)) {
      errs.notSupported(path, mode, kAccessModes);
    } else if (mode == "ReadWriteOncePod") {
      readWriteOncePod = true;
    } else {
      others = true;
    }
  }
  if (readWriteOncePod && others) {
    errs.forbidden(path, "may not use ReadWriteOncePod with other access modes");
  }
}

std::optional<Quantity> quantityAt(FieldErrors& errs, const json& value, const std::string& path) {
  auto q = Quantity::fromJson(value);
  if (!q.ok()) {
    errs.invalid(path, value, q.status().message());
    return std::nullopt;
  }
  return *q;
}

// ValidatePositiveQuantityValue.
void validatePositive(FieldErrors& errs, const Quantity& q, const std::string& path) {
  if (q.sign() <= 0) errs.invalid(path, q.toString(), "must be greater than zero");
}

// The quantity at `pointer` in obj; zero when absent or malformed (as Go reads a missing key).
Quantity quantityOr0(const json& obj, const json::json_pointer& pointer) {
  if (!obj.contains(pointer)) return Quantity();
  auto q = Quantity::fromJson(obj.at(pointer));
  return q.ok() ? *q : Quantity();
}

// A path element "..", which could escape the volume on the node.
void validatePathNoBacksteps(FieldErrors& errs, const std::string& p, const std::string& path) {
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string::npos) slash = p.size();
    if (p.compare(start, slash - start, "..") == 0 && slash - start == 2) {
      errs.invalid(path, p, "must not contain '..'");
      return;
    }
    start = slash + 1;
  }
}

// Whether Go's path.Clean(p) is "/".
bool cleansToRoot(const std::string& p) {
  if (p.empty() || p[0] != '/') return false;
  int depth = 0;
  size_t start = 1;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string::npos) slash = p.size();
    std::string segment = p.substr(start, slash - start);
    if (segment == "..") {
      if (depth > 0) --depth;
    } else if (!segment.empty() && segment != ".") {
      ++depth;
    }
    start = slash + 1;
  }
  return depth == 0;
}

// ---- PersistentVolume sources

// The sources of a PersistentVolumeSpec in the order Kubernetes checks them, with the path it
// names when a second source is found (Kubernetes spells two of them differently), the path it
// validates under, and the fields each needs.
struct VolumeSourceRule {
  const char* field;
  const char* forbiddenAs;
  const char* validatedAs;
  std::vector<const char*> required;
};

const std::vector<VolumeSourceRule>& volumeSourceRules() {
  static const std::vector<VolumeSourceRule> kRules = {
      {"hostPath", "hostPath", "hostPath", {}},
      {"gcePersistentDisk", "gcePersistentDisk", "persistentDisk", {"pdName"}},
      {"awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", {"volumeID"}},
      {"glusterfs", "glusterfs", "glusterfs", {"endpoints", "path"}},
      {"flocker", "flocker", "flocker", {}},
      {"nfs", "nfs", "nfs", {}},
      {"rbd", "rbd", "rbd", {"monitors", "image"}},
      {"quobyte", "quobyte", "quobyte", {"registry", "volume"}},
      {"cephfs", "cephFS", "cephfs", {"monitors"}},
      {"iscsi", "iscsi", "iscsi", {"targetPortal", "iqn"}},
      {"cinder", "cinder", "cinder", {"volumeID"}},
      {"fc", "fc", "fc", {}},
      {"flexVolume", "flexVolume", "flexVolume", {"driver"}},
      {"azureFile", "azureFile", "azureFile", {"secretName", "shareName"}},
      {"vsphereVolume", "vsphereVolume", "vsphereVolume", {"volumePath"}},
      {"photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", {"pdID"}},
      {"portworxVolume", "portworxVolume", "portworxVolume", {"volumeID"}},
      {"azureDisk", "azureDisk", "azureDisk", {"diskName", "diskURI"}},
      {"scaleIO", "scaleIO", "scaleIO", {"gateway", "system", "volumeName"}},
      {"local", "local", "local", {}},
      {"storageos", "storageos", "storageos", {"volumeName"}},
      {"csi", "csi", "csi", {}},
  };
  return kRules;
}

void validateCSIDriverName(FieldErrors& errs, const std::string& name, const std::string& path) {
  if (name.empty()) errs.required(path);
  if (name.size() > 63) errs.tooLong(path, 63);
  errs.invalidEach(path, name, isDNS1123Subdomain(asciiLower(name)));
}

void validateSecretReference(FieldErrors& errs, const json& source, std::string_view name,
                             const std::string& path) {
  const json* ref = errs.object(source, name, path);
  if (!ref) return;
  auto secret = errs.string(*ref, "name", child(path, "name"));
  if (!secret || secret->empty()) {
    errs.required(child(path, "name"));
  } else {
    errs.invalidEach(child(path, "name"), *secret, isDNS1123Subdomain(*secret));
  }
  auto ns = errs.string(*ref, "namespace", child(path, "namespace"));
  if (!ns || ns->empty()) {
    errs.required(child(path, "namespace"));
  } else {
    errs.invalidEach(child(path, "namespace"), *ns, isDNS1123Label(*ns));
  }
}

void validateVolumeSource(FieldErrors& errs, const VolumeSourceRule& rule, const json& source,
                          const std::string& path) {
  const std::string field = rule.field;
  for (const char* f : rule.required) {
    if (!emptyValue(member(source, f))) continue;
    if (field == "quobyte" && std::string_view(f) == "registry") {
      errs.required(child(path, f),
                    "must be a host:port pair or multiple pairs separated by commas");
    } else {
      errs.required(child(path, f));
    }
  }
  if (field == "hostPath" || field == "local") {
    auto p = errs.string(source, "path", child(path, "path"));
    if (!p || p->empty()) {
      errs.required(child(path, "path"));
      return;
    }
    validatePathNoBacksteps(errs, *p, child(path, "path"));
    if (field == "hostPath") {
      validateOptionalEnum(errs, source, "type", child(path, "type"), kHostPathTypes);
    }
  } else if (field == "nfs") {
    auto server = errs.string(source, "server", child(path, "server"));
    if (!server || server->empty()) errs.required(child(path, "server"));
    auto p = errs.string(source, "path", child(path, "path"));
    if (!p || p->empty()) errs.required(child(path, "path"));
    if (!p || p->empty() || (*p)[0] != '/') {
      errs.invalid(child(path, "path"), p.value_or(""), "must be an absolute path");
    }
  } else if (field == "csi") {
    auto driver = errs.string(source, "driver", child(path, "driver"));
    validateCSIDriverName(errs, driver.value_or(""), child(path, "driver"));
    auto handle = errs.string(source, "volumeHandle", child(path, "volumeHandle"));
    if (!handle || handle->empty()) errs.required(child(path, "volumeHandle"));
    for (const char* ref : {"controllerPublishSecretRef", "controllerExpandSecretRef",
                            "nodePublishSecretRef", "nodeExpandSecretRef"}) {
      validateSecretReference(errs, source, ref, child(path, ref));
    }
    errs.stringMap(source, "volumeAttributes", child(path, "volumeAttributes"));
  } else if (field == "flocker") {
    bool name = !emptyValue(member(source, "datasetName"));
    bool uuid = !emptyValue(member(source, "datasetUUID"));
    if (!name && !uuid) errs.required(path, "one of datasetName and datasetUUID is required");
    if (name && uuid) {
      errs.invalid(path, "resource",
                   "datasetName and datasetUUID can not be specified simultaneously");
    }
  } else if (field == "fc") {
    bool wwns = !emptyValue(member(source, "targetWWNs"));
    bool wwids = !emptyValue(member(source, "wwids"));
    if (!wwns && !wwids) {
      errs.required(child(path, "targetWWNs"),
                    "must specify either targetWWNs or wwids, but not both");
    }
  }
}

// Exactly one source; the first one found is validated, later ones are reported.
void validateVolumeSources(FieldErrors& errs, const json& spec, bool nodeAffinitySet) {
  int sources = 0;
  for (const auto& rule : volumeSourceRules()) {
    const json* source = member(spec, rule.field);
    if (!source || source->is_null()) continue;
    const std::string field = rule.field;
    // Kubernetes counts a flexVolume without checking for an earlier source.
    if (sources > 0 && field != "flexVolume") {
      errs.forbidden(child("spec", rule.forbiddenAs), "may not specify more than 1 volume type");
      continue;
    }
    ++sources;
    if (!source->is_object()) {
      errs.typeInvalid(child("spec", field), *source, "object");
      continue;
    }
    validateVolumeSource(errs, rule, *source, child("spec", rule.validatedAs));
    if (field == "local" && !nodeAffinitySet) {
      errs.required("spec.nodeAffinity", "Local volume requires node affinity");
    }
  }
  if (sources == 0) errs.required("spec", "must specify a volume type");
}

void validateCapacity(FieldErrors& errs, const json& spec) {
  const std::string path = "spec.capacity";
  const json* capacity = errs.object(spec, "capacity", path);
  if (!capacity && !absent(spec, "capacity")) return;  // wrong type, reported
  static const json kNoCapacity = json::object();
  const json& list = capacity ? *capacity : kNoCapacity;
  if (list.empty()) errs.required(path);
  if (!list.contains("storage") || list.size() > 1) errs.notSupported(path, list, {"storage"});
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string p = key(path, it.key());
    auto q = quantityAt(errs, *it, p);
    if (!q) continue;
    if (q->value() < 0) errs.invalid(p, q->value(), "must be a valid resource quantity");
    validatePositive(errs, *q, p);
  }
}

// spec fields that make up Kubernetes' PersistentVolumeSource, for the immutability check.
json volumeSourceOf(const json& spec) {
  json out = json::object();
  for (const auto& rule : volumeSourceRules()) {
    const json* source = member(spec, rule.field);
    if (source && !source->is_null()) out[rule.field] = *source;
  }
  return out;
}

// "\n- field: old\n+ field: new" for each top-level field that differs, after Kubernetes'
// messages that end with a diff of the two values.
std::string fieldDiff(const json& before, const json& after) {
  std::string out;
  std::set<std::string> keys;
  for (const json* o : {&before, &after}) {
    if (!o->is_object()) continue;
    for (auto it = o->begin(); it != o->end(); ++it) keys.insert(it.key());
  }
  for (const auto& k : keys) {
    const json* a = member(before, k);
    const json* b = member(after, k);
    if ((a ? *a : json()) == (b ? *b : json())) continue;
    if (a && !a->is_null()) out += "\n- " + k + ": " + a->dump();
    if (b && !b->is_null()) out += "\n+ " + k + ": " + b->dump();
  }
  return out;
}

// ---- PersistentVolumeClaim

void validateDataSource(FieldErrors& errs, const json& spec, std::string_view name,
                        const std::string& path) {
  const json* ref = errs.object(spec, name, path);
  if (!ref) return;
  auto refName = errs.string(*ref, "name", child(path, "name"));
  if (!refName || refName->empty()) errs.required(child(path, "name"));
  auto kind = errs.string(*ref, "kind", child(path, "kind"));
  if (!kind || kind->empty()) errs.required(child(path, "kind"));
  auto group = errs.string(*ref, "apiGroup", child(path, "apiGroup"));
  if (group.value_or("").empty() && kind.value_or("") != "PersistentVolumeClaim") {
    errs.invalid(path, kind.value_or(""),
                 "must be 'PersistentVolumeClaim' when referencing the default apiGroup");
  }
  if (group && !group->empty()) {
    errs.invalidEach(child(path, "apiGroup"), *group, isDNS1123Subdomain(*group));
  }
  if (name == "dataSourceRef") {
    auto ns = errs.string(*ref, "namespace", child(path, "namespace"));
    if (ns && !ns->empty()) errs.invalidEach(child(path, "namespace"), *ns, isDNS1123Label(*ns));
  }
}

void validateClaimSpec(FieldErrors& errs, const json& spec, const std::string& path) {
  validateAccessModes(errs, spec, child(path, "accessModes"), "at least 1 access mode is required");
  if (const json* selector = member(spec, "selector"); selector && !selector->is_null()) {
    validateLabelSelector(errs, *selector, child(path, "selector"));
  }
  const std::string resourcesPath = child(path, "resources");
  const json* resources = errs.object(spec, "resources", resourcesPath);
  const json* storage = nullptr;
  for (const char* list : {"requests", "limits"}) {
    const std::string listPath = child(resourcesPath, list);
    const json* quantities = resources ? errs.object(*resources, list, listPath) : nullptr;
    if (!quantities) continue;
    for (auto it = quantities->begin(); it != quantities->end(); ++it) {
      if (std::string_view(list) == "requests" && it.key() == "storage") {
        storage = &*it;
      } else {
        quantityAt(errs, *it, key(listPath, it.key()));
      }
    }
  }
  const std::string storagePath = key(resourcesPath, "storage");
  if (!storage || storage->is_null()) {
    errs.required(storagePath);
  } else if (auto q =
                 quantityAt(errs, *storage, key(child(resourcesPath, "requests"), "storage"))) {
    validatePositive(errs, *q, storagePath);
  }
  errs.string(spec, "volumeName", child(path, "volumeName"));
  validateClassName(errs, spec, "storageClassName", child(path, "storageClassName"));
  validateOptionalEnum(errs, spec, "volumeMode", child(path, "volumeMode"), kVolumeModes);
  validateDataSource(errs, spec, "dataSource", child(path, "dataSource"));
  validateDataSource(errs, spec, "dataSourceRef", child(path, "dataSourceRef"));
  const json* source = member(spec, "dataSource");
  const json* sourceRef = member(spec, "dataSourceRef");
  bool hasSource = source && source->is_object();
  bool hasSourceRef = sourceRef && sourceRef->is_object();
  if (hasSourceRef && !stringAt(*sourceRef, "/namespace").empty()) {
    if (hasSource) {
      errs.invalidShown(path, child(path, "dataSource"),
                        "may not be specified when dataSourceRef.namespace is specified");
    }
  } else if (hasSource && hasSourceRef) {
    for (const char* f : {"apiGroup", "kind", "name"}) {
      const json* a = member(*source, f);
      const json* b = member(*sourceRef, f);
      if ((a ? *a : json()) != (b ? *b : json())) {
        errs.invalidShown(path, child(path, "dataSource"), "must match dataSourceRef");
        break;
      }
    }
  }
  validateClassName(errs, spec, "volumeAttributesClassName",
                    child(path, "volumeAttributesClassName"));
}

// The beta storage class annotation of obj, nullptr when it has none.
const json* storageClassAnnotation(const json& obj) {
  return member(objectAt(objectAt(obj, "metadata"), "annotations"), kBetaStorageClassAnnotation);
}

// Kubernetes lets a claim set spec.storageClassName once when it had none: to the class its beta
// annotation named (validateStorageClassUpgradeFromAnnotation), or, without such an annotation,
// to any class (validateStorageClassUpgradeFromNil; the annotation itself stays immutable).
// Drops the new class from `now` when the change is allowed.
void allowStorageClassUpgrade(FieldErrors& errs, const json& obj, const json& old, json& now,
                              const json& before) {
  const json* newAnnotation = storageClassAnnotation(obj);
  const json* oldAnnotation = storageClassAnnotation(old);
  const json* newClass = member(now, "storageClassName");
  bool oldClassUnset = !before.contains("storageClassName");
  if (oldAnnotation && oldClassUnset && newClass && *newClass == *oldAnnotation &&
      (!newAnnotation || *newAnnotation == *oldAnnotation)) {
    now.erase("storageClassName");
    return;
  }
  auto text = [](const json* v) { return v && v->is_string() ? v->get<std::string>() : ""; };
  if (text(newAnnotation) != text(oldAnnotation)) {
    errs.invalid(std::string("metadata.annotations.") + kBetaStorageClassAnnotation,
                 text(newAnnotation), "field is immutable");
  }
  if (newClass && oldClassUnset && (!oldAnnotation || *newClass == *oldAnnotation)) {
    now.erase("storageClassName");
  }
}

}  // namespace

void validatePersistentVolume(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, false, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  validateAccessModes(errs, spec, "spec.accessModes", "");
  validateCapacity(errs, spec);
  auto policy =
      errs.string(spec, "persistentVolumeReclaimPolicy", "spec.persistentVolumeReclaimPolicy");
  if (policy && !policy->empty() && !oneOf(kReclaimPolicies, *policy)) {
    errs.notSupported("spec.persistentVolumeReclaimPolicy", *policy, kReclaimPolicies);
  }
  bool nodeAffinitySet = false;
  if (const json* affinity = errs.object(spec, "nodeAffinity", "spec.nodeAffinity")) {
    nodeAffinitySet = true;
    const json* required = errs.object(*affinity, "required", "spec.nodeAffinity.required");
    if (required) {
      validateNodeSelector(errs, *required, "spec.nodeAffinity.required");
    } else if (absent(*affinity, "required")) {
      errs.required("spec.nodeAffinity.required", "must specify required node constraints");
    }
  }
  validateVolumeSources(errs, spec, nodeAffinitySet);
  const json* hostPath = member(spec, "hostPath");
  if (hostPath && hostPath->is_object() && cleansToRoot(stringAt(*hostPath, "/path")) &&
      policy == "Recycle") {
    errs.forbidden("spec.persistentVolumeReclaimPolicy",
                   "may not be 'recycle' for a hostPath mount of '/'");
  }
  validateClassName(errs, spec, "storageClassName", "spec.storageClassName");
  validateOptionalEnum(errs, spec, "volumeMode", "spec.volumeMode", kVolumeModes);
  if (auto vac = errs.string(spec, "volumeAttributesClassName", "spec.volumeAttributesClassName")) {
    if (vac->empty()) {
      errs.required("spec.volumeAttributesClassName", "an empty string is disallowed");
    } else {
      errs.invalidEach("spec.volumeAttributesClassName", *vac, isDNS1123Subdomain(*vac));
    }
    if (absent(spec, "csi")) {
      errs.required("spec.csi", "has to be specified when using volumeAttributesClassName");
    }
  }
  errs.object(spec, "claimRef", "spec.claimRef");
  stringItems(errs, spec, "mountOptions", "spec.mountOptions");
  // pkg/volume/validation: the mount options annotation only for plugins that mount with options.
  const json& annotations = objectAt(objectAt(obj, "metadata"), "annotations");
  if (annotations.contains(kMountOptionsAnnotation)) {
    bool supported = false;
    for (const char* f : {"gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "nfs", "rbd",
                          "quobyte", "iscsi", "cinder", "cephfs", "azureFile", "vsphereVolume",
                          "azureDisk", "photonPersistentDisk"}) {
      supported |= !absent(spec, f);
    }
    if (!supported) {
      errs.forbidden(std::string("metadata.annotations.") + kMountOptionsAnnotation,
                     "may not specify mount options for this volume type");
    }
  }
  if (!old) return;
  validateObjectMetaUpdate(errs, obj, *old);
  const json& oldSpec = objectAt(*old, "spec");
  json source = volumeSourceOf(spec);
  const json oldSource = volumeSourceOf(oldSpec);
  // A controllerExpandSecretRef may be added to a CSI volume that had none.
  if (source.contains("csi") && source["csi"].is_object() && oldSource.contains("csi") &&
      oldSource["csi"].is_object() && !oldSource["csi"].contains("controllerExpandSecretRef")) {
    source["csi"].erase("controllerExpandSecretRef");
  }
  if (source != oldSource) {
    errs.forbidden(
        "spec.persistentvolumesource",
        "spec.persistentvolumesource is immutable after creation" + fieldDiff(oldSource, source));
  }
  validateImmutable(errs, member(spec, "volumeMode"), member(oldSpec, "volumeMode"), "volumeMode");
  if (!absent(oldSpec, "nodeAffinity")) {
    validateImmutable(errs, member(spec, "nodeAffinity"), member(oldSpec, "nodeAffinity"),
                      "nodeAffinity");
  }
  if (!absent(oldSpec, "volumeAttributesClassName") && absent(spec, "volumeAttributesClassName")) {
    errs.forbidden("spec.volumeAttributesClassName",
                   "update from non-nil value to nil is forbidden");
  }
}

void validatePersistentVolumeClaim(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  validateClaimSpec(errs, spec, "spec");
  if (!old) return;
  validateObjectMetaUpdate(errs, obj, *old);
  const json& oldSpec = objectAt(*old, "spec");
  json now = spec, before = oldSpec;
  for (json* s : {&now, &before}) {
    if (!s->is_object()) *s = json::object();
    for (auto it = s->begin(); it != s->end();) it = it->is_null() ? s->erase(it) : std::next(it);
  }
  // The binder sets volumeName once.
  if (stringAt(before, "/volumeName").empty()) {
    before.erase("volumeName");
    if (now.contains("volumeName")) before["volumeName"] = now["volumeName"];
  }
  allowStorageClassUpgrade(errs, obj, *old, now, before);
  // Bound claims may change their storage request (expansion) and attributes class.
  bool bound = stringAt(obj, "/status/phase") == "Bound";
  const json::json_pointer storage("/resources/requests/storage");
  if (bound && now.contains("resources") && now["resources"].is_object() &&
      now["resources"].contains("requests") && now["resources"]["requests"].is_object()) {
    if (before.contains(storage)) {
      now[storage] = before[storage];
    } else {
      now["resources"]["requests"].erase("storage");
    }
  }
  if (bound && now.contains("volumeAttributesClassName")) {
    if (before.contains("volumeAttributesClassName")) {
      now["volumeAttributesClassName"] = before["volumeAttributesClassName"];
    } else {
      now.erase("volumeAttributesClassName");
    }
  }
  if (now != before) {
    errs.forbidden("spec",
                   "spec is immutable after creation except resources.requests and "
                   "volumeAttributesClassName for bound claims" +
                       fieldDiff(before, now));
  }
  // Shrinking is allowed down to just above the capacity, to recover from a failed expansion.
  Quantity newSize = quantityOr0(spec, storage);
  if (newSize.compare(quantityOr0(oldSpec, storage)) < 0 &&
      newSize.compare(quantityOr0(objectAt(*old, "status"), "/capacity/storage"_json_pointer)) <=
          0) {
    errs.forbidden("spec.resources.requests.storage", "field can not be less than status.capacity");
  }
  validateImmutable(errs, member(spec, "volumeMode"), member(oldSpec, "volumeMode"), "volumeMode");
  if (!absent(oldSpec, "volumeAttributesClassName")) {
    if (absent(spec, "volumeAttributesClassName")) {
      errs.forbidden("spec.volumeAttributesClassName",
                     "update from non-nil value to nil is forbidden");
    } else if (stringAt(spec, "/volumeAttributesClassName").empty()) {
      errs.forbidden("spec.volumeAttributesClassName",
                     "update from non-nil value to an empty string is forbidden");
    }
  }
}

}  // namespace minik8s::api::validation
