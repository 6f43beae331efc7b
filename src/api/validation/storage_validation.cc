// storage.k8s.io/v1 StorageClass and CSIDriver, as Kubernetes 1.32 validates them
// (pkg/apis/storage/validation; SELinuxMountReadWriteOncePod on, so seLinuxMount is required).
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/object_meta.h"
#include "api/validation/kinds.h"
#include "common/strings.h"

namespace minik8s::api::validation {
namespace {

const std::vector<std::string> kReclaimPolicies = {"Delete", "Retain"};
const std::vector<std::string> kBindingModes = {"Immediate", "WaitForFirstConsumer"};
const std::vector<std::string> kFSGroupPolicies = {"File", "None", "ReadWriteOnceWithFSType"};
const std::vector<std::string> kLifecycleModes = {"Persistent", "Ephemeral"};

constexpr int64_t kMaxParameters = 512;
constexpr int64_t kMaxParametersSize = 256 * 1024;

}  // namespace

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
  if (reclaim && !reclaim->empty() && !oneOf(kReclaimPolicies, *reclaim)) {
    errs.notSupported("reclaimPolicy", *reclaim, kReclaimPolicies);
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
  auto emptyMap = [](const json* v) {
    return !v || v->is_null() || (v->is_object() && v->empty());
  };
  if (!(emptyMap(parameters) && emptyMap(oldParameters)) &&
      (!parameters || !oldParameters || *parameters != *oldParameters)) {
    errs.forbidden("parameters", "updates to parameters are forbidden.");
  }
  if (stringAt(obj, "/provisioner") != stringAt(*old, "/provisioner")) {
    errs.forbidden("provisioner", "updates to provisioner are forbidden.");
  }
  if (stringAt(obj, "/reclaimPolicy") != stringAt(*old, "/reclaimPolicy")) {
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
