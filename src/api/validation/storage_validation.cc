// Storage kinds: core/v1 PersistentVolume and PersistentVolumeClaim (pkg/apis/core/validation),
// storage.k8s.io/v1 StorageClass and CSIDriver (pkg/apis/storage/validation), as Kubernetes 1.32
// validates them with its default feature gates (RecoverVolumeExpansionFailure and
// SELinuxMountReadWriteOncePod on; volumeAttributesClassName is checked as if
// VolumeAttributesClass were on, rather than silently dropped).
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/quantity.h"
#include "api/validation/kinds.h"
#include "common/strings.h"

namespace minik8s::api::validation {
namespace {

// Sorted as Kubernetes' sets.List prints them in "supported values".
const std::vector<std::string> kAccessModes = {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce",
                                               "ReadWriteOncePod"};
const std::vector<std::string> kVolumeModes = {"Block", "Filesystem"};
const std::vector<std::string> kVolumeReclaimPolicies = {"Delete", "Recycle", "Retain"};
const std::vector<std::string> kClassReclaimPolicies = {"Delete", "Retain"};
const std::vector<std::string> kBindingModes = {"Immediate", "WaitForFirstConsumer"};
const std::vector<std::string> kHostPathTypes = {
    "",     "BlockDevice",  "CharDevice", "Directory", "DirectoryOrCreate",
    "File", "FileOrCreate", "Socket"};
const std::vector<std::string> kFSGroupPolicies = {"File", "None", "ReadWriteOnceWithFSType"};
const std::vector<std::string> kLifecycleModes = {"Persistent", "Ephemeral"};

constexpr char kBetaStorageClassAnnotation[] = "volume.beta.kubernetes.io/storage-class";
constexpr char kMountOptionsAnnotation[] = "volume.beta.kubernetes.io/mount-options";
constexpr int64_t kMaxParameters = 512;
constexpr int64_t kMaxParametersSize = 256 * 1024;

bool oneOf(const std::vector<std::string>& values, const std::string& v) {
  for (const auto& s : values) {
    if (s == v) return true;
  }
  return false;
}

// obj[name] if it is an object, else an empty one.
const json& objectAt(const json& obj, std::string_view name) {
  const json* v = member(obj, name);
  return v && v->is_object() ? *v : kNoObject;
}

// obj[name] as a string, "" when absent or of another type (reported elsewhere).
std::string stringOf(const json& obj, std::string_view name) {
  const json* v = member(obj, name);
  return v && v->is_string() ? v->get<std::string>() : "";
}

bool emptyValue(const json* v) {
  return !v || v->is_null() || (v->is_string() && v->get_ref<const std::string&>().empty()) ||
         ((v->is_array() || v->is_object()) && v->empty());
}

// The string items of the array obj[name]; items of another type are reported.
std::vector<std::string> stringItems(FieldErrors& errs, const json& obj, std::string_view name,
                                     const std::string& path) {
  std::vector<std::string> out;
  const json* items = errs.array(obj, name, path);
  if (!items) return out;
  for (size_t i = 0; i < items->size(); ++i) {
    const json& v = (*items)[i];
    if (!v.is_string()) {
      errs.typeInvalid(index(path, i), v, "string");
      continue;
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

// A string field that, when set, must be one of `supported` (pointer enums: "" is reported too).
void validateOptionalEnum(FieldErrors& errs, const json& obj, std::string_view name,
                          const std::string& path, const std::vector<std::string>& supported) {
  auto v = errs.string(obj, name, path);
  if (v && !oneOf(supported, *v)) errs.notSupported(path, *v, supported);
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

// ---- node selectors (a PersistentVolume's nodeAffinity.required)

void validateNodeSelectorRequirement(FieldErrors& errs, const json& req, const std::string& path,
                                     bool field) {
  if (!req.is_object()) {
    errs.typeInvalid(path, req, "object");
    return;
  }
  auto op = errs.string(req, "operator", child(path, "operator"));
  std::vector<std::string> values = stringItems(errs, req, "values", child(path, "values"));
  auto key = errs.string(req, "key", child(path, "key"));
  std::string k = key.value_or("");
  if (field) {
    if (op == "In" || op == "NotIn") {
      if (values.size() != 1) {
        errs.required(child(path, "values"),
                      "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                      "selector");
      }
    } else {
      errs.invalid(child(path, "operator"), op.value_or(""), "not a valid selector operator");
    }
    if (k != "metadata.name") {
      errs.invalid(child(path, "key"), k, "not a valid field selector key");
    } else {
      for (size_t i = 0; i < values.size(); ++i) {
        errs.invalidEach(index(child(path, "values"), i), values[i], isDNS1123Subdomain(values[i]));
      }
    }
    return;
  }
  if (op == "In" || op == "NotIn") {
    if (values.empty()) {
      errs.required(child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'");
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!values.empty()) {
      errs.forbidden(child(path, "values"),
                     "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    }
  } else if (op == "Gt" || op == "Lt") {
    if (values.size() != 1) {
      errs.required(child(path, "values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'");
    }
  } else {
    errs.invalid(child(path, "operator"), op.value_or(""), "not a valid selector operator");
  }
  errs.invalidEach(child(path, "key"), k, isQualifiedName(k));
  for (size_t i = 0; i < values.size(); ++i) {
    errs.invalidEach(index(child(path, "values"), i), values[i], isLabelValue(values[i]));
  }
}

void validateNodeSelector(FieldErrors& errs, const json& selector, const std::string& path) {
  const std::string termsPath = child(path, "nodeSelectorTerms");
  const json* terms = errs.array(selector, "nodeSelectorTerms", termsPath);
  if (!terms || terms->empty()) {
    if (terms || absent(selector, "nodeSelectorTerms")) {
      errs.required(termsPath, "must have at least one node selector term");
    }
    return;
  }
  for (size_t i = 0; i < terms->size(); ++i) {
    const std::string p = index(termsPath, i);
    const json& term = (*terms)[i];
    if (!term.is_object()) {
      errs.typeInvalid(p, term, "object");
      continue;
    }
    for (const char* list : {"matchExpressions", "matchFields"}) {
      const json* reqs = errs.array(term, list, child(p, list));
      for (size_t j = 0; reqs && j < reqs->size(); ++j) {
        validateNodeSelectorRequirement(errs, (*reqs)[j], index(child(p, list), j),
                                        std::string_view(list) == "matchFields");
      }
    }
  }
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
  if (hasSourceRef && !stringOf(*sourceRef, "namespace").empty()) {
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
  if (policy && !policy->empty() && !oneOf(kVolumeReclaimPolicies, *policy)) {
    errs.notSupported("spec.persistentVolumeReclaimPolicy", *policy, kVolumeReclaimPolicies);
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
  if (hostPath && hostPath->is_object() && cleansToRoot(stringOf(*hostPath, "path")) &&
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
  if (stringOf(before, "volumeName").empty()) {
    before.erase("volumeName");
    if (now.contains("volumeName")) before["volumeName"] = now["volumeName"];
  }
  allowStorageClassUpgrade(errs, obj, *old, now, before);
  // Bound claims may change their storage request (expansion) and attributes class.
  bool bound = stringOf(objectAt(obj, "status"), "phase") == "Bound";
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
    } else if (stringOf(spec, "volumeAttributesClassName").empty()) {
      errs.forbidden("spec.volumeAttributesClassName",
                     "update from non-nil value to an empty string is forbidden");
    }
  }
}

void validateStorageClass(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, false, nameIsDNSSubdomain);
  auto provisioner = errs.string(obj, "provisioner", "provisioner");
  if (!provisioner || provisioner->empty()) {
    if (provisioner || absent(obj, "provisioner")) errs.required("provisioner");
  } else {
    std::string lower = asciiLower(*provisioner);
    errs.invalidEach("provisioner", lower, isQualifiedName(lower));
  }
  if (const json* parameters = errs.stringMap(obj, "parameters", "parameters")) {
    if (static_cast<int64_t>(parameters->size()) > kMaxParameters) {
      errs.tooLong("parameters", kMaxParameters);
    } else {
      int64_t size = 0;
      for (auto it = parameters->begin(); it != parameters->end(); ++it) {
        if (it.key().empty()) errs.invalid("parameters", "", "field can not be empty.");
        size += static_cast<int64_t>(it.key().size());
        if (it->is_string()) size += static_cast<int64_t>(it->get_ref<const std::string&>().size());
      }
      if (size > kMaxParametersSize) errs.tooLong("parameters", kMaxParametersSize);
    }
  }
  auto reclaim = errs.string(obj, "reclaimPolicy", "reclaimPolicy");
  if (reclaim && !reclaim->empty() && !oneOf(kClassReclaimPolicies, *reclaim)) {
    errs.notSupported("reclaimPolicy", *reclaim, kClassReclaimPolicies);
  }
  auto binding = errs.string(obj, "volumeBindingMode", "volumeBindingMode");
  if (!binding) {
    if (absent(obj, "volumeBindingMode")) errs.required("volumeBindingMode");
  } else if (!oneOf(kBindingModes, *binding)) {
    errs.notSupported("volumeBindingMode", *binding, kBindingModes);
  }
  errs.boolean(obj, "allowVolumeExpansion", "allowVolumeExpansion");
  stringItems(errs, obj, "mountOptions", "mountOptions");
  if (const json* topologies = errs.array(obj, "allowedTopologies", "allowedTopologies")) {
    std::vector<json> seen;
    for (size_t i = 0; i < topologies->size(); ++i) {
      const std::string p = index("allowedTopologies", i);
      const json& term = (*topologies)[i];
      if (!term.is_object()) {
        errs.typeInvalid(p, term, "object");
        continue;
      }
      const std::string exprPath = child(p, "matchLabelExpressions");
      json keyValues = json::object();  // key -> sorted set of values, to find duplicate terms
      const json* exprs = errs.array(term, "matchLabelExpressions", exprPath);
      for (size_t j = 0; exprs && j < exprs->size(); ++j) {
        const std::string ep = index(exprPath, j);
        const json& req = (*exprs)[j];
        if (!req.is_object()) {
          errs.typeInvalid(ep, req, "object");
          continue;
        }
        std::vector<std::string> values = stringItems(errs, req, "values", child(ep, "values"));
        if (values.empty()) errs.required(child(ep, "values"));
        std::set<std::string> valueSet;
        for (size_t v = 0; v < values.size(); ++v) {
          if (!valueSet.insert(values[v]).second) {
            errs.duplicate(index(child(ep, "values"), v), values[v]);
          }
        }
        std::string k = errs.string(req, "key", child(ep, "key")).value_or("");
        errs.invalidEach(child(ep, "key"), k, isQualifiedName(k));
        if (keyValues.contains(k)) errs.duplicate(child(ep, "key"), k);
        keyValues[k] = valueSet;
      }
      for (const auto& other : seen) {
        if (other == keyValues) errs.duplicate(exprPath, "");
      }
      seen.push_back(std::move(keyValues));
    }
  }
  if (!old) return;
  validateObjectMetaUpdate(errs, obj, *old);
  const json* parameters = member(obj, "parameters");
  const json* oldParameters = member(*old, "parameters");
  if (!(emptyValue(parameters) && emptyValue(oldParameters)) &&
      (!parameters || !oldParameters || *parameters != *oldParameters)) {
    errs.forbidden("parameters", "updates to parameters are forbidden.");
  }
  if (stringOf(obj, "provisioner") != stringOf(*old, "provisioner")) {
    errs.forbidden("provisioner", "updates to provisioner are forbidden.");
  }
  if (stringOf(obj, "reclaimPolicy") != stringOf(*old, "reclaimPolicy")) {
    errs.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden.");
  }
  validateImmutable(errs, member(obj, "volumeBindingMode"), member(*old, "volumeBindingMode"),
                    "volumeBindingMode");
}

void validateCSIDriver(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, false, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  // Kubernetes reports attachRequired as "attachedRequired".
  for (auto [field, path] : {std::pair{"attachRequired", "spec.attachedRequired"},
                             std::pair{"podInfoOnMount", "spec.podInfoOnMount"},
                             std::pair{"storageCapacity", "spec.storageCapacity"},
                             std::pair{"seLinuxMount", "spec.seLinuxMount"}}) {
    if (!errs.boolean(spec, field, path) && absent(spec, field)) errs.required(path);
  }
  errs.boolean(spec, "requiresRepublish", "spec.requiresRepublish");
  validateOptionalEnum(errs, spec, "fsGroupPolicy", "spec.fsGroupPolicy", kFSGroupPolicies);
  if (const json* requests = errs.array(spec, "tokenRequests", "spec.tokenRequests")) {
    std::set<std::string> audiences;
    for (size_t i = 0; i < requests->size(); ++i) {
      const std::string p = index("spec.tokenRequests", i);
      const json& request = (*requests)[i];
      if (!request.is_object()) {
        errs.typeInvalid(p, request, "object");
        continue;
      }
      std::string audience = errs.string(request, "audience", child(p, "audience")).value_or("");
      if (!audiences.insert(audience).second) {
        errs.duplicate(child(p, "audience"), audience);
        continue;
      }
      auto seconds = errs.integer(request, "expirationSeconds", child(p, "expirationSeconds"));
      if (seconds && *seconds < 600) {
        errs.invalid(child(p, "expirationSeconds"), *seconds,
                     "may not specify a duration less than 10 minutes");
      }
      if (seconds && *seconds > (int64_t{1} << 32)) {
        errs.invalid(child(p, "expirationSeconds"), *seconds,
                     "may not specify a duration larger than 2^32 seconds");
      }
    }
  }
  for (const auto& mode :
       stringItems(errs, spec, "volumeLifecycleModes", "spec.volumeLifecycleModes")) {
    if (!oneOf(kLifecycleModes, mode)) {
      errs.notSupported("spec.volumeLifecycleModes", mode, kLifecycleModes);
    }
  }
  if (!old) return;
  validateObjectMetaUpdate(errs, obj, *old);
  const json& oldSpec = objectAt(*old, "spec");
  validateImmutable(errs, member(spec, "attachRequired"), member(oldSpec, "attachRequired"),
                    "spec.attachedRequired");
  validateImmutable(errs, member(spec, "volumeLifecycleModes"),
                    member(oldSpec, "volumeLifecycleModes"), "spec.volumeLifecycleModes");
}

}  // namespace minik8s::api::validation
