// Facts about PersistentVolumes, PersistentVolumeClaims and StorageClasses that several rooms
// read (the PV controller, admission, the scheduler, the kubelet): Kubernetes' annotation and
// finalizer names, which class a claim or volume belongs to, the default class, the claims a pod
// uses, and how claims and volumes match, as Kubernetes' PV controller decides it: a volume
// satisfies a claim when its class is the claim's, its access modes include every mode the claim
// asks for, its capacity is at least the request, its volumeMode is the claim's, and the claim's
// selector (if any) matches its labels; the smallest such volume wins, a volume pre-bound to the
// claim (spec.claimRef naming it) over any other. Pure functions over JSON; thread-safe.
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

// The claim's storage request in bytes; nullopt when missing or malformed.
std::optional<int64_t> requestedBytes(const json& claim);
// The volume's spec.capacity.storage in bytes; nullopt when missing or malformed.
std::optional<int64_t> capacityBytes(const json& volume);

// True when spec.claimRef names this claim (namespace, name and, when set, uid).
bool volumeBoundToClaim(const json& volume, const json& claim);

// Why `volume` cannot serve `claim` ("" when it can): class, access modes, capacity,
// volumeMode; the selector is checked by findMatchingVolume only (pre-bound volumes skip it).
std::string volumeMismatch(const json& volume, const json& claim);

// The volume to bind `claim` to: one pre-bound to it, else the smallest unclaimed volume
// (Available, or Pending/no phase: just created) that satisfies it and its selector; with
// `node`, only volumes whose nodeAffinity allows that Node (WaitForFirstConsumer binding by the
// scheduler); nullopt when none.
std::optional<json> findMatchingVolume(const json& claim, const std::vector<json>& volumes,
                                       const json* node = nullptr);
// Whether the volume's required nodeAffinity (if any) allows `node`.
bool volumeAllowsNode(const json& volume, const json& node);
// Whether the volume is pinned to node `nodeName` alone: it has a required nodeAffinity and every
// term asks kubernetes.io/hostname In [nodeName] (a node-local volume of that node, as the
// local.csi.minik8s.io provisioner writes it; the node may delete such volumes).
bool volumePinnedToNode(const json& volume, const std::string& nodeName);

}  // namespace minik8s::api
