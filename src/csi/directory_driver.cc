#include "csi/directory_driver.h"

#include <grpcpp/grpcpp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/grpc_status.h"
#include "common/logging.h"

namespace minik8s::csi {

namespace fs = std::filesystem;

namespace {

std::string errnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// The mount points of /proc/self/mountinfo (field 5), unescaped (\040 is a space).
std::vector<std::string> mountPoints() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (!(fields >> id >> parent >> dev >> root >> point)) continue;
    std::string plain;
    for (size_t i = 0; i < point.size(); ++i) {
      if (point[i] == '\\' && i + 3 < point.size()) {
        plain.push_back(static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8)));
        i += 3;
      } else {
        plain.push_back(point[i]);
      }
    }
    out.push_back(plain);
  }
  return out;
}

}  // namespace

bool isMountPoint(const std::string& path) {
  std::error_code ec;
  const std::string canonical = fs::weakly_canonical(path, ec).string();
  for (const auto& p : mountPoints()) {
    if (p == canonical) return true;
  }
  return false;
}

// The gRPC face of the driver: each call forwards to DirectoryDriver.
class DirectoryDriver::Services : public v1::Identity::Service,
                                  public v1::Controller::Service,
                                  public v1::Node::Service {
 public:
  explicit Services(DirectoryDriver& d) : d_(d) {}
  std::unique_ptr<grpc::Server> server;

  grpc::Status GetPluginInfo(grpc::ServerContext*, const v1::GetPluginInfoRequest*,
                             v1::GetPluginInfoResponse* out) override {
    out->set_name(d_.options_.name);
    out->set_vendor_version("0.1.0");
    return grpc::Status::OK;
  }
  grpc::Status GetPluginCapabilities(grpc::ServerContext*, const v1::GetPluginCapabilitiesRequest*,
                                     v1::GetPluginCapabilitiesResponse* out) override {
    if (d_.options_.controllerService) {
      out->add_capabilities()->mutable_service()->set_type(
          v1::PluginCapability::Service::CONTROLLER_SERVICE);
    }
    if (!d_.options_.topologyKey.empty()) {
      out->add_capabilities()->mutable_service()->set_type(
          v1::PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS);
    }
    out->add_capabilities()->mutable_volume_expansion()->set_type(
        v1::PluginCapability::VolumeExpansion::ONLINE);
    return grpc::Status::OK;
  }
  grpc::Status Probe(grpc::ServerContext*, const v1::ProbeRequest*,
                     v1::ProbeResponse* out) override {
    out->mutable_ready()->set_value(fs::is_directory(d_.options_.baseDir));
    return grpc::Status::OK;
  }

  grpc::Status CreateVolume(grpc::ServerContext*, const v1::CreateVolumeRequest* in,
                            v1::CreateVolumeResponse* out) override {
    auto v = d_.createVolume(*in);
    if (!v.ok()) return grpcFromStatus(v.status());
    *out->mutable_volume() = *v;
    return grpc::Status::OK;
  }
  grpc::Status DeleteVolume(grpc::ServerContext*, const v1::DeleteVolumeRequest* in,
                            v1::DeleteVolumeResponse*) override {
    return grpcFromStatus(d_.deleteVolume(in->volume_id()));
  }
  grpc::Status ControllerGetCapabilities(grpc::ServerContext*,
                                         const v1::ControllerGetCapabilitiesRequest*,
                                         v1::ControllerGetCapabilitiesResponse* out) override {
    for (auto t : {v1::ControllerServiceCapability::RPC::CREATE_DELETE_VOLUME,
                   v1::ControllerServiceCapability::RPC::EXPAND_VOLUME}) {
      out->add_capabilities()->mutable_rpc()->set_type(t);
    }
    return grpc::Status::OK;
  }
  grpc::Status ControllerExpandVolume(grpc::ServerContext*,
                                      const v1::ControllerExpandVolumeRequest* in,
                                      v1::ControllerExpandVolumeResponse* out) override {
    auto bytes = d_.expandVolume(in->volume_id(), in->capacity_range().required_bytes());
    if (!bytes.ok()) return grpcFromStatus(bytes.status());
    out->set_capacity_bytes(*bytes);
    out->set_node_expansion_required(false);
    return grpc::Status::OK;
  }

  grpc::Status NodePublishVolume(grpc::ServerContext*, const v1::NodePublishVolumeRequest* in,
                                 v1::NodePublishVolumeResponse*) override {
    return grpcFromStatus(d_.publish(*in));
  }
  grpc::Status NodeUnpublishVolume(grpc::ServerContext*, const v1::NodeUnpublishVolumeRequest* in,
                                   v1::NodeUnpublishVolumeResponse*) override {
    return grpcFromStatus(d_.unpublish(in->volume_id(), in->target_path()));
  }
  grpc::Status NodeGetCapabilities(grpc::ServerContext*, const v1::NodeGetCapabilitiesRequest*,
                                   v1::NodeGetCapabilitiesResponse*) override {
    return grpc::Status::OK;  // no staging, no stats
  }
  grpc::Status NodeGetInfo(grpc::ServerContext*, const v1::NodeGetInfoRequest*,
                           v1::NodeGetInfoResponse* out) override {
    out->set_node_id(d_.options_.nodeId);
    if (auto t = d_.topology()) *out->mutable_accessible_topology() = *t;
    return grpc::Status::OK;
  }

 private:
  DirectoryDriver& d_;
};

DirectoryDriver::DirectoryDriver(DirectoryDriverOptions options) : options_(std::move(options)) {}
DirectoryDriver::~DirectoryDriver() { stop(); }

Status DirectoryDriver::start(const std::string& socketPath) {
  std::error_code ec;
  fs::create_directories(options_.baseDir, ec);
  if (ec)
    return Status::Internal("CSI driver base directory " + options_.baseDir + ": " + ec.message());
  fs::create_directories(fs::path(socketPath).parent_path(), ec);
  fs::remove(socketPath, ec);
  services_ = std::make_unique<Services>(*this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socketPath, grpc::InsecureServerCredentials());
  builder.RegisterService(static_cast<v1::Identity::Service*>(services_.get()));
  if (options_.controllerService) {
    builder.RegisterService(static_cast<v1::Controller::Service*>(services_.get()));
  }
  if (options_.nodeService)
    builder.RegisterService(static_cast<v1::Node::Service*>(services_.get()));
  services_->server = builder.BuildAndStart();
  if (!services_->server) {
    services_.reset();
    return Status::Unavailable("CSI driver " + options_.name + " cannot listen on " + socketPath);
  }
  LOG_INFO("CSI driver {} serving on {} (volumes in {})", options_.name, socketPath,
           options_.baseDir);
  return Status::Ok();
}

void DirectoryDriver::stop() {
  if (services_ && services_->server) services_->server->Shutdown();
  services_.reset();
}

Status DirectoryDriver::checkId(const std::string& volumeId) const {
  if (volumeId.empty() || volumeId.size() > 128 || volumeId == "." || volumeId == ".." ||
      volumeId.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                 "._-") != std::string::npos ||
      volumeId[0] == '.') {
    return Status::BadRequest("invalid volume id \"" + volumeId +
                              "\": letters, digits, '.', '_' and '-', at most 128");
  }
  return Status::Ok();
}

std::string DirectoryDriver::volumePath(const std::string& volumeId) const {
  return options_.baseDir + "/" + volumeId;
}

namespace {
std::string capacityFile(const std::string& base, const std::string& id) {
  return base + "/.capacity/" + id;
}
}  // namespace

std::optional<v1::Topology> DirectoryDriver::topology() const {
  if (options_.topologyKey.empty()) return std::nullopt;
  v1::Topology t;
  (*t.mutable_segments())[options_.topologyKey] = options_.nodeId;
  return t;
}

Result<v1::Volume> DirectoryDriver::createVolume(const v1::CreateVolumeRequest& request) {
  if (Status s = checkId(request.name()); !s.ok()) return s;
  for (const auto& cap : request.volume_capabilities()) {
    if (cap.has_block())
      return Status::BadRequest("block volumes are not supported: use Filesystem");
  }
  const auto here = topology();
  if (here && request.has_accessibility_requirements() &&
      request.accessibility_requirements().requisite_size() > 0) {
    bool reachable = false;
    for (const auto& t : request.accessibility_requirements().requisite()) {
      auto it = t.segments().find(options_.topologyKey);
      if (it != t.segments().end() && it->second == options_.nodeId) reachable = true;
    }
    if (!reachable) {
      return Status(429, "ResourceExhausted",
                    "volume " + request.name() + " must be accessible from another node; " +
                        options_.name + " here serves only " + options_.topologyKey + "=" +
                        options_.nodeId);
    }
  }
  std::lock_guard lock(mu_);
  std::error_code ec;
  fs::create_directories(volumePath(request.name()), ec);
  if (ec) return Status::Internal("create volume " + request.name() + ": " + ec.message());
  fs::permissions(volumePath(request.name()), fs::perms::all, ec);  // any container user writes
  int64_t bytes = request.capacity_range().required_bytes();
  fs::create_directories(options_.baseDir + "/.capacity", ec);
  std::ofstream(capacityFile(options_.baseDir, request.name()), std::ios::trunc) << bytes;
  v1::Volume v;
  v.set_volume_id(request.name());
  v.set_capacity_bytes(bytes);
  if (here) *v.add_accessible_topology() = *here;
  return v;
}

Status DirectoryDriver::deleteVolume(const std::string& volumeId) {
  if (Status s = checkId(volumeId); !s.ok()) return s;
  std::lock_guard lock(mu_);
  std::error_code ec;
  fs::remove_all(volumePath(volumeId), ec);
  if (ec) return Status::Internal("delete volume " + volumeId + ": " + ec.message());
  fs::remove(capacityFile(options_.baseDir, volumeId), ec);
  return Status::Ok();
}

Result<int64_t> DirectoryDriver::expandVolume(const std::string& volumeId, int64_t requiredBytes) {
  if (Status s = checkId(volumeId); !s.ok()) return s;
  std::lock_guard lock(mu_);
  if (!fs::is_directory(volumePath(volumeId))) {
    return Status::NotFoundMessage("volume " + volumeId + " does not exist");
  }
  std::ofstream(capacityFile(options_.baseDir, volumeId), std::ios::trunc) << requiredBytes;
  return requiredBytes;
}

Status DirectoryDriver::publish(const v1::NodePublishVolumeRequest& request) {
  if (Status s = checkId(request.volume_id()); !s.ok()) return s;
  const std::string& target = request.target_path();
  if (target.empty() || target[0] != '/') {
    return Status::BadRequest("target path must be absolute, got \"" + target + "\"");
  }
  const std::string source = volumePath(request.volume_id());
  if (!fs::is_directory(source)) {
    return Status::NotFoundMessage("volume " + request.volume_id() + " does not exist in " +
                                   options_.baseDir);
  }
  std::error_code ec;
  fs::create_directories(target, ec);
  if (ec) return Status::Internal("create target " + target + ": " + ec.message());
  if (isMountPoint(target)) return Status::Ok();  // published already
  if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return Status::Internal(errnoText("bind mount " + source + " at", target));
  }
  if (request.readonly() &&
      ::mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
    Status s = Status::Internal(errnoText("remount read-only", target));
    ::umount2(target.c_str(), MNT_DETACH);
    return s;
  }
  return Status::Ok();
}

Status DirectoryDriver::unpublish(const std::string& volumeId, const std::string& targetPath) {
  if (targetPath.empty() || targetPath[0] != '/') {
    return Status::BadRequest("target path must be absolute, got \"" + targetPath + "\"");
  }
  std::error_code ec;
  if (!fs::exists(targetPath, ec)) return Status::Ok();
  while (isMountPoint(targetPath)) {
    if (::umount2(targetPath.c_str(), 0) != 0 && ::umount2(targetPath.c_str(), MNT_DETACH) != 0) {
      return Status::Internal(errnoText("unmount", targetPath));
    }
  }
  // Only an empty directory goes: never the data of a volume still mounted there.
  if (::rmdir(targetPath.c_str()) != 0 && errno != ENOENT) {
    return Status::Internal(errnoText("remove", targetPath));
  }
  (void)volumeId;
  return Status::Ok();
}

}  // namespace minik8s::csi
