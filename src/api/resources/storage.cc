// storage.k8s.io/v1: StorageClasses, CSIDrivers and CSINodes.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/defaulting.h"
#include "api/printers/storage_cells.h"
#include "api/resources/builders.h"
#include "api/validation/kinds.h"

namespace minik8s::api::resources {
namespace {

using printers::csiDriverCells;
using printers::csiNodeCells;
using printers::storageClassCells;

ResourceType storageClass() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass");
  r.namespaced = false;
  r.shortNames = {"sc"};
  t.defaults = defaulting::storageClass;
  t.validate = validation::validateStorageClass;
  t.columns = {nameColumn(),
               col("Provisioner", "The plugin or CSI driver that provisions volumes."),
               col("ReclaimPolicy", "Reclaim policy of the volumes provisioned."),
               col("VolumeBindingMode", "When volumes are bound and provisioned."),
               col("AllowVolumeExpansion", "Whether claims of this class may grow."),
               ageColumn()};
  t.cells = [](const json& obj, const json&, TimePoint now) { return storageClassCells(obj, now); };
  return t;
}

ResourceType csiDriver() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("storage.k8s.io", "v1", "CSIDriver", "csidrivers", "csidriver");
  r.namespaced = false;
  t.defaults = defaulting::csiDriver;
  t.validate = validation::validateCSIDriver;
  t.columns = {nameColumn(),
               col("AttachRequired", "The driver needs an attach step.", "boolean"),
               col("PodInfoOnMount", "Pod information is passed on mount.", "boolean"),
               col("StorageCapacity", "The driver reports storage capacity.", "boolean"),
               col("TokenRequests", "Audiences of the tokens passed to the driver."),
               col("RequiresRepublish", "Volumes are republished periodically.", "boolean"),
               col("Modes", "Volume lifecycle modes."),
               ageColumn()};
  t.cells = [](const json& obj, const json&, TimePoint now) { return csiDriverCells(obj, now); };
  return t;
}

ResourceType csiNode() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("storage.k8s.io", "v1", "CSINode", "csinodes", "csinode");
  r.namespaced = false;
  t.columns = {nameColumn(), col("Drivers", "Number of CSI drivers on the node.", "integer"),
               ageColumn()};
  t.cells = [](const json& obj, const json&, TimePoint now) { return csiNodeCells(obj, now); };
  return t;
}

}  // namespace

void addStorageResources(std::vector<ResourceType>& out) {
  out.push_back(storageClass());
  out.push_back(csiDriver());
  out.push_back(csiNode());
}

}  // namespace minik8s::api::resources
