// CsiClient: a CSI v1 driver as minik8s' provisioner (Controller service) and kubelet (Node
// service) call it, over gRPC on the driver's unix socket, as Kubernetes' external-provisioner
// and kubelet do. Any CSI driver answers it, ours (directory_driver.h) or a third party's.
// Calls have deadlines and gRPC codes become Status (common/grpc_status.h: NOT_FOUND 404, ...);
// the channel reconnects by itself when the driver restarts. Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "csi/csi.grpc.pb.h"

namespace minik8s::csi {

namespace v1 = ::csi::v1;

class CsiClient {
 public:
  // `endpoint`: "unix:///path/csi.sock" or a bare socket path. Connecting is lazy.
  explicit CsiClient(const std::string& endpoint,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30));

  Result<v1::GetPluginInfoResponse> pluginInfo();
  Result<v1::CreateVolumeResponse> createVolume(const v1::CreateVolumeRequest& request);
  // A volume that is already gone is success, as CSI requires of drivers.
  Status deleteVolume(const std::string& volumeId);
  Result<v1::ControllerExpandVolumeResponse> expandVolume(
      const v1::ControllerExpandVolumeRequest& request);
  Status nodePublishVolume(const v1::NodePublishVolumeRequest& request);
  Status nodeUnpublishVolume(const std::string& volumeId, const std::string& targetPath);
  Result<v1::NodeGetInfoResponse> nodeInfo();

  const std::string& endpoint() const { return endpoint_; }

 private:
  std::string endpoint_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Identity::Stub> identity_;
  std::unique_ptr<v1::Controller::Stub> controller_;
  std::unique_ptr<v1::Node::Stub> node_;
};

// "ReadWriteOnce" and friends as the CSI access mode kubelet and external-provisioner map them
// to (RWO SINGLE_NODE_WRITER, ROX MULTI_NODE_READER_ONLY, RWX MULTI_NODE_MULTI_WRITER, RWOP
// SINGLE_NODE_SINGLE_WRITER).
v1::VolumeCapability::AccessMode::Mode accessModeOf(const std::string& kubernetesMode);

}  // namespace minik8s::csi
