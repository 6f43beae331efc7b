// The rows of `kubectl get pv,pvc,storageclass,csidriver,csinode`, as upstream's
// printPersistentVolume, printPersistentVolumeClaim, printStorageClass, printCSIDriver and
// printCSINode compute them: capacities in
// canonical quantity form, access modes as RWO/ROX/RWX/RWOP, "<unset>" for absent pointers.
// Internal to src/api; thread-safe.
#pragma once

#include <string>

#include "api/printers/print_format.h"

namespace minik8s::api::printers {

// helper.GetAccessModesAsString: "RWO,ROX,RWX,RWOP" in that order, each once.
std::string accessModesString(const json& modes);

// Name, Capacity, Access Modes, Reclaim Policy, Status, Claim, StorageClass,
// VolumeAttributesClass, Reason, Age, VolumeMode.
json persistentVolumeCells(const json& pv, TimePoint now);
// Name, Status, Volume, Capacity, Access Modes, StorageClass, VolumeAttributesClass, Age,
// VolumeMode.
json persistentVolumeClaimCells(const json& pvc, TimePoint now);
// Name (" (default)" for the default class), Provisioner, ReclaimPolicy, VolumeBindingMode,
// AllowVolumeExpansion, Age.
json storageClassCells(const json& sc, TimePoint now);
// Name, AttachRequired, PodInfoOnMount, StorageCapacity, TokenRequests, RequiresRepublish, Modes,
// Age.
json csiDriverCells(const json& driver, TimePoint now);
// Name, Drivers (how many), Age.
json csiNodeCells(const json& node, TimePoint now);

}  // namespace minik8s::api::printers
