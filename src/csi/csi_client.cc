#include "csi/csi_client.h"

#include <grpcpp/grpcpp.h>

#include "common/grpc_status.h"

namespace minik8s::csi {

namespace {

template <typename Stub, typename Req, typename Resp>
Status call(Stub* stub, grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Req&, Resp*),
            const char* method, const Req& request, Resp* response,
            std::chrono::milliseconds timeout) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  // A driver that is (re)starting is waited for within the deadline, not failed at once.
  context.set_wait_for_ready(true);
  return statusFromGrpc((stub->*rpc)(&context, request, response), std::string("CSI ") + method);
}

}  // namespace

CsiClient::CsiClient(const std::string& endpoint, std::chrono::milliseconds timeout)
    : endpoint_(endpoint), timeout_(timeout) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  channel_ =
      grpc::CreateCustomChannel(grpcEndpoint(endpoint), grpc::InsecureChannelCredentials(), args);
  identity_ = v1::Identity::NewStub(channel_);
  controller_ = v1::Controller::NewStub(channel_);
  node_ = v1::Node::NewStub(channel_);
}

Result<v1::GetPluginInfoResponse> CsiClient::pluginInfo() {
  v1::GetPluginInfoResponse response;
  Status s = call(identity_.get(), &v1::Identity::Stub::GetPluginInfo, "GetPluginInfo",
                  v1::GetPluginInfoRequest(), &response, timeout_);
  if (!s.ok()) return s;
  return response;
}

Result<v1::CreateVolumeResponse> CsiClient::createVolume(const v1::CreateVolumeRequest& request) {
  v1::CreateVolumeResponse response;
  Status s = call(controller_.get(), &v1::Controller::Stub::CreateVolume, "CreateVolume", request,
                  &response, timeout_);
  if (!s.ok()) return s;
  return response;
}

Status CsiClient::deleteVolume(const std::string& volumeId) {
  v1::DeleteVolumeRequest request;
  request.set_volume_id(volumeId);
  v1::DeleteVolumeResponse response;
  Status s = call(controller_.get(), &v1::Controller::Stub::DeleteVolume, "DeleteVolume", request,
                  &response, timeout_);
  return s.code() == 404 ? Status::Ok() : s;
}

Result<v1::ControllerExpandVolumeResponse> CsiClient::expandVolume(
    const v1::ControllerExpandVolumeRequest& request) {
  v1::ControllerExpandVolumeResponse response;
  Status s = call(controller_.get(), &v1::Controller::Stub::ControllerExpandVolume,
                  "ControllerExpandVolume", request, &response, timeout_);
  if (!s.ok()) return s;
  return response;
}

Status CsiClient::nodePublishVolume(const v1::NodePublishVolumeRequest& request) {
  v1::NodePublishVolumeResponse response;
  return call(node_.get(), &v1::Node::Stub::NodePublishVolume, "NodePublishVolume", request,
              &response, timeout_);
}

Status CsiClient::nodeUnpublishVolume(const std::string& volumeId, const std::string& targetPath) {
  v1::NodeUnpublishVolumeRequest request;
  request.set_volume_id(volumeId);
  request.set_target_path(targetPath);
  v1::NodeUnpublishVolumeResponse response;
  return call(node_.get(), &v1::Node::Stub::NodeUnpublishVolume, "NodeUnpublishVolume", request,
              &response, timeout_);
}

Result<v1::NodeGetInfoResponse> CsiClient::nodeInfo() {
  v1::NodeGetInfoResponse response;
  Status s = call(node_.get(), &v1::Node::Stub::NodeGetInfo, "NodeGetInfo",
                  v1::NodeGetInfoRequest(), &response, timeout_);
  if (!s.ok()) return s;
  return response;
}

v1::VolumeCapability::AccessMode::Mode accessModeOf(const std::string& mode) {
  using M = v1::VolumeCapability::AccessMode;
  if (mode == "ReadWriteOnce") return M::SINGLE_NODE_WRITER;
  if (mode == "ReadOnlyMany") return M::MULTI_NODE_READER_ONLY;
  if (mode == "ReadWriteMany") return M::MULTI_NODE_MULTI_WRITER;
  if (mode == "ReadWriteOncePod") return M::SINGLE_NODE_SINGLE_WRITER;
  return M::UNKNOWN;
}

}  // namespace minik8s::csi
