// The storage admission plugins of kube-apiserver:
//
//   DefaultStorageClass           a PersistentVolumeClaim created without spec.storageClassName
//                                 gets the default StorageClass (annotation
//                                 storageclass.kubernetes.io/is-default-class "true"; the newest
//                                 when several); without one it stays unset.
//   StorageObjectInUseProtection  PersistentVolumeClaims get the kubernetes.io/pvc-protection and
//                                 PersistentVolumes the kubernetes.io/pv-protection finalizer on
//                                 create, so deleting one in use waits (controllers/volume).
//
// Both mutate creates only and read StorageClasses through the registry. Thread-safe.
#pragma once

#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

class DefaultStorageClass : public auth::AdmissionPlugin {
 public:
  explicit DefaultStorageClass(Registry& registry) : registry_(registry) {}
  Status admit(auth::AdmissionRequest& request) override;

 private:
  Registry& registry_;
};

class StorageObjectInUseProtection : public auth::AdmissionPlugin {
 public:
  Status admit(auth::AdmissionRequest& request) override;
};

}  // namespace minik8s::apiserver::admission
