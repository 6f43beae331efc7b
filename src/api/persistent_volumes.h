// Facts about PersistentVolumes, PersistentVolumeClaims and StorageClasses that several rooms
// read (the PV controller, admission, the scheduler, the kubelet): Kubernetes' annotation and
// finalizer names, which class a claim or volume belongs to, the default class, the claims a pod
// uses. Pure functions over the objects as JSON; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::api {

inline constexpr char kAnnBindCompleted[] = "pv.kubernetes.io/bind-completed";
inline constexpr char kAnnBoundByController[] = "pv.kubernetes.io/bound-by-controller";
inline constexpr char kAnnProvisionedBy[] = "pv.kubernetes.io/provisioned-by";
inline constexpr char kAnnStorageProvisioner[] = "volume.kubernetes.io/storage-provisioner";
inline constexpr char kAnnBetaStorageProvisioner[] =
    "volume.beta.kubernetes.io/storage-provisioner";
inline constexpr char kAnnSelectedNode[] = "volume.kubernetes.io/selected-node";
inline constexpr char kAnnBetaStorageClass[] = "volume.beta.kubernetes.io/storage-class";
inline constexpr char kAnnDefaultStorageClass[] = "storageclass.kubernetes.io/is-default-class";
inline constexpr char kPvcProtectionFinalizer[] = "kubernetes.io/pvc-protection";
inline constexpr char kPvProtectionFinalizer[] = "kubernetes.io/pv-protection";

// The class a claim asks for: the beta annotation, else spec.storageClassName, else "".
std::string claimClassOf(const json& claim);
// True when the claim names no class at all (spec.storageClassName absent or null and no beta
// annotation): the default class applies.
bool claimClassUnset(const json& claim);
// The class of a volume: the beta annotation, else spec.storageClassName, else "" (as
// Kubernetes reads it).
std::string volumeClassOf(const json& volume);

// The default StorageClass among `classes` (annotation storageclass.kubernetes.io/
// is-default-class "true"; the newest when several, then by name); nullopt when none.
std::optional<json> defaultStorageClass(const std::vector<json>& classes);

// The names of the claims `pod` mounts: its persistentVolumeClaim volumes, and its generic
// ephemeral volumes (claim POD-VOLUME).
std::vector<std::string> podClaimNames(const json& pod);

}  // namespace minik8s::api
