// DirectoryDriver: minik8s' own CSI driver, whose volumes are directories under one base
// directory. On `minik8s cluster up` the base is on the cluster's shared filesystem, so a volume
// created for a claim is reachable from every node and follows its pod; CreateVolume makes the
// directory (capacity recorded, not enforced: a directory has no size), DeleteVolume removes it
// with its data, ControllerExpandVolume records the new size, NodePublishVolume bind-mounts it
// at the kubelet's target path (read-only when asked) and NodeUnpublishVolume unmounts it. All
// calls are idempotent, as CSI requires: a crashed kubelet or provisioner repeats them safely.
//
// It serves the CSI Identity, Controller and Node services over gRPC on a unix socket (the
// server process runs the controller side for the provisioner, every agent the node side for its
// kubelet), and the same operations as plain calls for tests. Thread-safe.
//
// The same driver, named local.csi.minik8s.io with a topology key, is the node-local class
// (local-path style): each agent serves both services for a directory of its own, and its volumes
// are accessible from that node only: CreateVolume reports accessible_topology {key: node id}
// (the provisioner turns it into the PersistentVolume's nodeAffinity), NodeGetInfo reports the
// node's topology, and a CreateVolume whose requisite topology excludes this node is refused
// (ResourceExhausted, as CSI says), so a volume is never made on the wrong node.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"
#include "csi/csi.grpc.pb.h"

namespace minik8s::csi {

namespace v1 = ::csi::v1;

inline constexpr const char* kDirectoryDriverName = "dir.csi.minik8s.io";
// The node-local driver (DirectoryDriver with a topology key) and its topology key: the node
// label every kubelet sets to its node name, so a volume's nodeAffinity needs no other label.
inline constexpr const char* kLocalDriverName = "local.csi.minik8s.io";
inline constexpr const char* kLocalTopologyKey = "kubernetes.io/hostname";

struct DirectoryDriverOptions {
  std::string name = kDirectoryDriverName;
  std::string baseDir;  // volumes are <baseDir>/<volume id>
  std::string nodeId;   // NodeGetInfo; empty on the controller side
  // Non-empty: volumes are local to node `nodeId`, whose topology is {topologyKey: nodeId}.
  std::string topologyKey;
  bool controllerService = true;
  bool nodeService = true;
};

class DirectoryDriver {
 public:
  explicit DirectoryDriver(DirectoryDriverOptions options);
  ~DirectoryDriver();
  DirectoryDriver(const DirectoryDriver&) = delete;
  DirectoryDriver& operator=(const DirectoryDriver&) = delete;

  // Serves the services chosen in the options on the unix socket `socketPath` (its directory is
  // created, a stale socket replaced).
  Status start(const std::string& socketPath);
  void stop();
  const DirectoryDriverOptions& options() const { return options_; }

  Result<v1::Volume> createVolume(const v1::CreateVolumeRequest& request);
  Status deleteVolume(const std::string& volumeId);
  Result<int64_t> expandVolume(const std::string& volumeId, int64_t requiredBytes);
  Status publish(const v1::NodePublishVolumeRequest& request);
  Status unpublish(const std::string& volumeId, const std::string& targetPath);

  // Where a volume's data lives.
  std::string volumePath(const std::string& volumeId) const;
  // The topology of this node's volumes ({topologyKey: nodeId}); nullopt without a key.
  std::optional<v1::Topology> topology() const;

 private:
  class Services;
  Status checkId(const std::string& volumeId) const;

  DirectoryDriverOptions options_;
  std::mutex mu_;  // one create/delete/expand at a time
  std::unique_ptr<Services> services_;
};

// Whether `path` is a mount point (per /proc/self/mountinfo).
bool isMountPoint(const std::string& path);

}  // namespace minik8s::csi
