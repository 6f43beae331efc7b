// VolumeManager: the pod volumes on the node's disk, under <root>/pods/<uid>/volumes/.
//
// setUpPod() makes every volume of a pod ready and idempotently refreshes ConfigMap, Secret,
// downward API and token contents (at most once per refresh interval): emptyDir is a
// world-writable directory shared by the pod's containers; hostPath is the host's path (created
// for DirectoryOrCreate / FileOrCreate); configMap and secret are directories of files written
// from the API objects (items with path and mode, defaultMode, optional); downwardAPI writes pod
// fields (fieldRef metadata.name/namespace/uid/labels/annotations, resourceFieldRef); projected
// combines configMap, secret, downwardAPI and serviceAccountToken sources (a pod-bound token from
// the TokenManager, renewed at 80% of its lifetime) in one directory; with the pod's fsGroup these
// and emptyDir (when created) belong to that group, as Kubernetes' SetVolumeOwnership leaves
// them; persistentVolumeClaim resolves the claim (it must be Bound) to its PersistentVolume and
// uses the volume's hostPath or local path, or publishes its CSI volume through the driver's
// Node service at pods/<uid>/volumes/kubernetes.io~csi/<name>/mount (readOnly when the claim
// volume says so);
// other volume sources of a PV are refused with an error (the pod waits) rather than given an
// empty directory. tearDownPod() unpublishes CSI volumes first and never deletes through a mount.
// Files are replaced atomically (temp file + rename) and only when their content changed.
// mountsFor() turns a container's volumeMounts (readOnly, subPath) into CRI mounts. tearDownPod()
// removes the pod directory. Thread-safe; different pods may be set up concurrently.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/work_queue.h"
#include "cri/runtime_service.h"
#include "csi/csi_client.h"
#include "kubelet/object_source.h"
#include "kubelet/token_manager.h"

namespace minik8s::kubelet {

class VolumeManager {
 public:
  // `tokens` serves serviceAccountToken projections; without one such volumes fail to set up.
  // `csiDrivers`: CSI driver name -> endpoint of its Node service on this node.
  VolumeManager(std::string root, ObjectSource& objects, const client::Clock& clock,
                std::chrono::seconds refresh = std::chrono::seconds(60),
                TokenManager* tokens = nullptr, std::map<std::string, std::string> csiDrivers = {});

  // Where a volume is on the host; readOnly when the volume itself says so (a claim mounted
  // readOnly), whatever the container's volumeMounts ask.
  struct VolumePath {
    VolumePath(std::string p = "", bool ro = false) : path(std::move(p)), readOnly(ro) {}
    std::string path;
    bool readOnly;
  };
  // Each volume by name.
  using VolumePaths = std::map<std::string, VolumePath>;
  Result<VolumePaths> setUpPod(const json& pod);
  Result<std::vector<::runtime::v1::Mount>> mountsFor(const json& container,
                                                      const VolumePaths& volumes) const;
  Status tearDownPod(const std::string& podUid);
  // A finished pod's volumes: CSI volumes unpublished (the pod directory, with its logs' and
  // files' volumes, stays until the pod is deleted).
  Status releasePod(const std::string& podUid);

  std::string podDir(const std::string& podUid) const { return root_ + "/pods/" + podUid; }
  // UIDs with a pod directory on disk (for orphan clean-up).
  std::vector<std::string> podUidsOnDisk() const;

 private:
  // Relative path -> content and mode.
  using FileMap = std::map<std::string, std::pair<std::string, int>>;
  Status addProjectedSource(const json& pod, const json& source, int defaultMode, FileMap& files);
  // Where the volume behind a persistentVolumeClaim volume `name` of `pod` is on the host:
  // a hostPath or local path, or the target path a CSI driver published it at.
  Result<std::string> claimPath(const json& pod, const std::string& name, const json& source);
  Result<std::string> publishCsi(const json& pod, const std::string& name, const json& volume,
                                 bool readOnly);
  // NodeUnpublishVolume for every CSI volume of the pod (from the vol_data.json written at
  // publication, so it works after an agent restart); an error while any is still mounted.
  Status unpublishCsi(const std::string& podUid);
  csi::CsiClient* csiClient(const std::string& driver);

  std::string root_;
  ObjectSource& objects_;
  const client::Clock& clock_;
  std::chrono::seconds refresh_;
  TokenManager* tokens_;
  std::mutex mu_;
  std::map<std::string, std::chrono::steady_clock::time_point> lastSetUp_;  // by pod uid
  std::map<std::string, VolumePaths> paths_;                                // by pod uid
  std::map<std::string, std::string> csiDrivers_;
  std::map<std::string, std::unique_ptr<csi::CsiClient>> csiClients_;  // guarded by mu_
};

}  // namespace minik8s::kubelet
