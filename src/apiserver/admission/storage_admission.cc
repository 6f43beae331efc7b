#include "apiserver/admission/storage_admission.h"

#include <algorithm>

#include "api/object_meta.h"
#include "api/persistent_volumes.h"

namespace minik8s::apiserver::admission {

namespace {

bool isCoreCreate(const auth::AdmissionRequest& r, const char* resource) {
  return r.operation == "CREATE" && r.newObject != nullptr && r.request.group.empty() &&
         r.request.resource == resource && r.request.subresource.empty();
}

}  // namespace

Status DefaultStorageClass::admit(auth::AdmissionRequest& request) {
  if (!isCoreCreate(request, "persistentvolumeclaims")) return Status::Ok();
  json& claim = *request.newObject;
  if (!api::claimClassUnset(claim)) return Status::Ok();
  const auto* classes = registry_.scheme().byResource("storage.k8s.io", "v1", "storageclasses");
  if (!classes) return Status::Ok();
  auto page = registry_.list(*classes, "", ListOptions{});
  if (!page.ok()) {
    return Status::Internal("cannot list StorageClasses for the default: " +
                            page.status().message());
  }
  auto dflt = api::defaultStorageClass(page->items);
  if (!dflt) return Status::Ok();
  if (!claim.contains("spec") || !claim["spec"].is_object()) claim["spec"] = json::object();
  claim["spec"]["storageClassName"] = api::nameOf(*dflt);
  return Status::Ok();
}

Status StorageObjectInUseProtection::admit(auth::AdmissionRequest& request) {
  const char* finalizer = nullptr;
  if (isCoreCreate(request, "persistentvolumeclaims")) finalizer = api::kPvcProtectionFinalizer;
  if (isCoreCreate(request, "persistentvolumes")) finalizer = api::kPvProtectionFinalizer;
  if (!finalizer) return Status::Ok();
  json& obj = *request.newObject;
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  json& list = obj["metadata"]["finalizers"];
  if (!list.is_array()) list = json::array();
  if (std::find(list.begin(), list.end(), json(finalizer)) == list.end()) list.push_back(finalizer);
  return Status::Ok();
}

}  // namespace minik8s::apiserver::admission
