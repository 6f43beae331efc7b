#include "kubelet/volume_manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "csi/directory_driver.h"
#include "kubelet/env_resolver.h"
#include "kubelet/pod_util.h"

namespace minik8s::kubelet {

namespace fs = std::filesystem;

namespace {

Status makeDirs(const std::string& path, fs::perms perms) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Status::Internal("cannot create " + path + ": " + ec.message());
  fs::permissions(path, perms, ec);
  return Status::Ok();
}

// Writes `content` to `path` only when it differs, so containers see no needless change.
Status writeFileIfChanged(const std::string& path, const std::string& content, int mode) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (old == content) {
        ::chmod(path.c_str(), mode);
        return Status::Ok();
      }
    }
  }
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::Internal("cannot write " + path);
    out << content;
  }
  ::chmod(tmp.c_str(), mode);
  fs::rename(tmp, path, ec);
  if (ec) return Status::Internal("cannot write " + path + ": " + ec.message());
  return Status::Ok();
}

// A relative path that stays inside its directory.
bool safeRelative(const std::string& p) {
  if (p.empty() || p[0] == '/') return false;
  for (const auto& part : fs::path(p))
    if (part == "..") return false;
  return true;
}

// Keys of a ConfigMap or Secret as files: the listed items (key -> path, mode) or every key.
Status addKeyFiles(const KeyBytes& data, const json& source, int defaultMode, bool isSecret,
                   std::map<std::string, std::pair<std::string, int>>& files) {
  if (source.contains("items") && source["items"].is_array() && !source["items"].empty()) {
    for (const auto& item : source["items"]) {
      if (!item.is_object()) return Status::BadRequest("invalid volume item");
      std::string key = item.value("key", ""), path = item.value("path", "");
      auto it = data.find(key);
      if (it == data.end()) {
        if (source.value("optional", false)) continue;
        return Status::NotFoundMessage(
            isSecret ? "secret references non-existent secret key: " + key
                     : "configmap references non-existent config key: " + key);
      }
      if (!safeRelative(path)) return Status::BadRequest("invalid item path " + path);
      files[path] = {it->second, item.value("mode", defaultMode)};
    }
  } else {
    for (const auto& [k, v] : data) files[k] = {v, defaultMode};
  }
  return Status::Ok();
}

// Labels or annotations as the downward API writes them: sorted `key="value"` lines.
std::string formatMap(const json& map) {
  std::string out;
  if (!map.is_object()) return out;
  for (const auto& [k, v] : map.items()) {  // nlohmann objects iterate in key order
    if (!out.empty()) out += '\n';
    out += k + "=\"";
    const std::string value = v.is_string() ? v.get<std::string>() : v.dump();
    for (char c : value) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out += c;
      }
    }
    out += '"';
  }
  return out;
}

// The downward API items of `source` as files.
Status addDownwardApiFiles(const json& pod, const json& source, int defaultMode,
                           std::map<std::string, std::pair<std::string, int>>& files) {
  const json items = source.value("items", json::array());
  if (!items.is_array()) return Status::BadRequest("downwardAPI items must be a list");
  const json meta = pod.value("metadata", json::object());
  for (const auto& item : items) {
    if (!item.is_object()) return Status::BadRequest("invalid downwardAPI item");
    const std::string path = item.value("path", "");
    if (!safeRelative(path)) return Status::BadRequest("invalid item path " + path);
    std::string content;
    if (item.contains("fieldRef")) {
      const std::string field = item["fieldRef"].value("fieldPath", "");
      if (field == "metadata.labels" || field == "metadata.annotations") {
        content = formatMap(meta.value(field.substr(9), json::object()));
      } else {
        auto v = podFieldRefValue(pod, field, PodRuntimeFields{});
        if (!v.ok()) return v.status();
        content = *v;
      }
    } else if (item.contains("resourceFieldRef")) {
      const json& ref = item["resourceFieldRef"];
      const std::string containerName = ref.value("containerName", "");
      json container;
      for (const auto& c : pod["spec"].value("containers", json::array())) {
        if (c.value("name", "") == containerName) container = c;
      }
      if (container.is_null()) {
        return Status::BadRequest("resourceFieldRef names no container: " + containerName);
      }
      auto v = containerResourceFieldValue(container, ref);
      if (!v.ok()) return v.status();
      content = *v;
    } else {
      return Status::BadRequest("downwardAPI item " + path +
                                " has neither fieldRef nor "
                                "resourceFieldRef");
    }
    files[path] = {content, item.value("mode", defaultMode)};
  }
  return Status::Ok();
}

// Writes `files` under `dir` and removes files no longer listed. It never descends into a mount
// point below `dir`: what is mounted there is someone's data, not ours to prune.
Status writeFiles(const std::string& dir,
                  const std::map<std::string, std::pair<std::string, int>>& files) {
  for (const auto& [rel, content] : files) {
    Status s = writeFileIfChanged(dir + "/" + rel, content.first, content.second);
    if (!s.ok()) return s;
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); ++it) {
    if (it->is_directory() && csi::isMountPoint(it->path().string())) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), dir).string();
    if (!files.count(rel)) fs::remove(it->path(), ec);
  }
  return Status::Ok();
}

// Gives a volume to the pod's fsGroup as Kubernetes' SetVolumeOwnership does: every entry gets
// group fsGroup, files group read (and write unless the volume is read-only: configMap, secret,
// downwardAPI, projected), directories also group search and setgid, so that files the
// containers create inherit the group. Symlinks keep their mode (chmod would follow them).
// Failures are not fatal, as in the kubelet.
void setVolumeOwnership(const std::string& dir, int64_t fsGroup, bool readOnly) {
  const auto gid = static_cast<gid_t>(fsGroup);
  auto change = [&](const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return;
    if (::lchown(path.c_str(), static_cast<uid_t>(-1), gid) != 0) return;
    if (S_ISLNK(st.st_mode)) return;
    mode_t mask = readOnly ? 0440 : 0660;
    if (S_ISDIR(st.st_mode)) mask |= S_ISGID | 0110;
    ::chmod(path.c_str(), (st.st_mode & 07777) | mask);
  };
  change(dir);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); ++it) {
    if (it->is_directory() && csi::isMountPoint(it->path().string())) {
      it.disable_recursion_pending();
      continue;
    }
    change(it->path().string());
  }
}

std::optional<int64_t> fsGroupOf(const json& pod) {
  const json& fsGroup =
      api::member(api::member(api::member(pod, "spec"), "securityContext"), "fsGroup");
  if (fsGroup.is_number_integer()) return fsGroup.get<int64_t>();
  return std::nullopt;
}

}  // namespace

VolumeManager::VolumeManager(std::string root, ObjectSource& objects, const client::Clock& clock,
                             std::chrono::seconds refresh, TokenManager* tokens,
                             std::map<std::string, std::string> csiDrivers)
    : root_(std::move(root)),
      objects_(objects),
      clock_(clock),
      refresh_(refresh),
      tokens_(tokens),
      csiDrivers_(std::move(csiDrivers)) {}

csi::CsiClient* VolumeManager::csiClient(const std::string& driver) {
  std::lock_guard lock(mu_);
  auto it = csiClients_.find(driver);
  if (it != csiClients_.end()) return it->second.get();
  auto endpoint = csiDrivers_.find(driver);
  if (endpoint == csiDrivers_.end()) return nullptr;
  auto client = std::make_unique<csi::CsiClient>(endpoint->second);
  return csiClients_.emplace(driver, std::move(client)).first->second.get();
}

Result<std::string> VolumeManager::publishCsi(const json& pod, const std::string& name,
                                              const json& volume, bool readOnly) {
  const json source = valueAt(volume, "/spec/csi", json::object());
  const std::string driver = source.value("driver", "");
  const std::string handle = source.value("volumeHandle", "");
  csi::CsiClient* client = csiClient(driver);
  if (!client) {
    return Status::Unavailable("CSI driver " + driver + " is not registered on this node");
  }
  const std::string dir = podDir(podUid(pod)) + "/volumes/kubernetes.io~csi/" + name;
  const std::string target = dir + "/mount";
  if (Status s = makeDirs(dir, fs::perms(0750)); !s.ok()) return s;
  // What unpublishing needs, kept beside the mount (as the kubelet's vol_data.json).
  // Not writeFiles(): that removes the other files below `dir`, and the mount is below it.
  json data = {{"driverName", driver}, {"volumeHandle", handle}, {"specVolID", name}};
  if (Status s = writeFileIfChanged(dir + "/vol_data.json", data.dump(), 0644); !s.ok()) return s;
  csi::v1::NodePublishVolumeRequest request;
  request.set_volume_id(handle);
  request.set_target_path(target);
  request.set_readonly(readOnly || source.value("readOnly", false));
  auto* cap = request.mutable_volume_capability();
  auto* mount = cap->mutable_mount();
  mount->set_fs_type(source.value("fsType", ""));
  for (const auto& opt : valueAt(volume, "/spec/mountOptions", json::array())) {
    if (opt.is_string()) mount->add_mount_flags(opt.get<std::string>());
  }
  const json modes = valueAt(volume, "/spec/accessModes", json::array());
  cap->mutable_access_mode()->set_mode(
      csi::accessModeOf(modes.empty() || !modes[0].is_string() ? "" : modes[0].get<std::string>()));
  const json attributes = source.value("volumeAttributes", json::object());
  for (const auto& [k, v] : attributes.items()) {
    if (v.is_string()) (*request.mutable_volume_context())[k] = v.get<std::string>();
  }
  if (Status s = client->nodePublishVolume(request); !s.ok()) return s;
  return target;
}

Status VolumeManager::unpublishCsi(const std::string& uid) {
  const std::string base = podDir(uid) + "/volumes/kubernetes.io~csi";
  std::error_code ec;
  if (!fs::is_directory(base, ec)) return Status::Ok();
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const std::string target = entry.path().string() + "/mount";
    std::ifstream in(entry.path() / "vol_data.json");
    json data = json::parse(in, nullptr, false);
    const std::string driver = data.is_object() ? data.value("driverName", "") : "";
    const std::string handle = data.is_object() ? data.value("volumeHandle", "") : "";
    csi::CsiClient* client = driver.empty() ? nullptr : csiClient(driver);
    Status s = client ? client->nodeUnpublishVolume(handle, target)
                      : Status::Unavailable("CSI driver " + driver + " is not registered");
    if (csi::isMountPoint(target)) {
      return Status::Unavailable("cannot unpublish CSI volume " + handle + " at " + target + ": " +
                                 (s.ok() ? std::string("still mounted") : s.message()));
    }
    fs::remove_all(entry.path(), ec);  // nothing mounted below it any more
  }
  return Status::Ok();
}

Status VolumeManager::releasePod(const std::string& podUid) {
  {
    std::lock_guard lock(mu_);
    lastSetUp_.erase(podUid);
    paths_.erase(podUid);
  }
  return unpublishCsi(podUid);
}

Status VolumeManager::addProjectedSource(const json& pod, const json& source, int defaultMode,
                                         FileMap& files) {
  const std::string ns = podNamespace(pod);
  if (source.contains("configMap") || source.contains("secret")) {
    const bool isSecret = source.contains("secret");
    const json& src = isSecret ? source["secret"] : source["configMap"];
    const std::string name = src.value("name", "");
    auto data = isSecret ? objects_.secretData(ns, name) : objects_.configMapData(ns, name);
    if (!data.ok()) {
      if (src.value("optional", false) && isMissing(data.status())) return Status::Ok();
      return unreadableObject(isSecret ? "secret" : "configmap", name, data.status());
    }
    return addKeyFiles(*data, src, defaultMode, isSecret, files);
  }
  if (source.contains("downwardAPI")) {
    return addDownwardApiFiles(pod, source["downwardAPI"], defaultMode, files);
  }
  if (source.contains("serviceAccountToken")) {
    const json& src = source["serviceAccountToken"];
    const std::string path = src.value("path", "");
    if (!safeRelative(path)) return Status::BadRequest("invalid token path " + path);
    if (tokens_ == nullptr) {
      return Status::Unavailable("this kubelet cannot request service-account tokens");
    }
    TokenRequestSpec spec;
    spec.namespaceName = ns;
    spec.serviceAccountName = pod["spec"].value("serviceAccountName", "");
    if (spec.serviceAccountName.empty()) spec.serviceAccountName = "default";
    spec.podName = podName(pod);
    spec.podUid = podUid(pod);
    spec.audience = src.value("audience", "");
    spec.expirationSeconds = src.value("expirationSeconds", int64_t{3600});
    auto token = tokens_->token(spec);
    if (!token.ok()) {
      return Status(token.status().code(), token.status().reason(),
                    "failed to fetch token: " + token.status().message());
    }
    files[path] = {*token, defaultMode};
    return Status::Ok();
  }
  return Status::BadRequest("unsupported projected volume source");
}

namespace {

// Creates or checks a hostPath as its type says (DirectoryOrCreate, FileOrCreate, Directory,
// File; "" checks nothing).
Status prepareHostPath(const std::string& path, const std::string& type) {
  std::error_code ec;
  if (type == "DirectoryOrCreate") {
    fs::create_directories(path, ec);
  } else if (type == "FileOrCreate" && !fs::exists(path)) {
    fs::create_directories(fs::path(path).parent_path(), ec);
    std::ofstream(path).flush();
  } else if ((type == "Directory" && !fs::is_directory(path)) ||
             (type == "File" && !fs::is_regular_file(path))) {
    return Status::NotFoundMessage("hostPath type check failed: " + path + " is not a " +
                                   (type == "File" ? "file" : "directory"));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> VolumeManager::claimPath(const json& pod, const std::string& name,
                                             const json& source) {
  const std::string ns = podNamespace(pod);
  const std::string claimName = source.value("claimName", "");
  auto claim = objects_.persistentVolumeClaim(ns, claimName);
  if (!claim.ok()) {
    if (claim.status().code() == 404) {
      return Status::NotFoundMessage("persistentvolumeclaim \"" + claimName + "\" not found");
    }
    return claim.status();
  }
  const std::string phase = valueAt(*claim, "/status/phase", std::string());
  const std::string volumeName = valueAt(*claim, "/spec/volumeName", std::string());
  if (phase != "Bound" || volumeName.empty()) {
    return Status::Unavailable("persistentvolumeclaim \"" + claimName + "\" is not bound" +
                               (phase.empty() ? "" : " (" + phase + ")"));
  }
  auto volume = objects_.persistentVolume(volumeName);
  if (!volume.ok()) return volume.status();
  const json spec = volume->value("spec", json::object());
  if (spec.contains("hostPath") && spec["hostPath"].is_object()) {
    std::string path = spec["hostPath"].value("path", "");
    if (Status s = prepareHostPath(path, spec["hostPath"].value("type", "")); !s.ok()) return s;
    return path;
  }
  if (spec.contains("local") && spec["local"].is_object()) {
    std::string path = spec["local"].value("path", "");
    if (!fs::exists(path)) {
      return Status::NotFoundMessage("path \"" + path + "\" of local volume \"" + volumeName +
                                     "\" does not exist on this node");
    }
    return path;
  }
  if (spec.contains("csi") && spec["csi"].is_object()) {
    return publishCsi(pod, name, *volume, source.value("readOnly", false));
  }
  return Status::BadRequest("persistentvolume \"" + volumeName +
                            "\": this node mounts hostPath, local and CSI volumes only");
}

Result<VolumeManager::VolumePaths> VolumeManager::setUpPod(const json& pod) {
  const std::string uid = podUid(pod);
  auto now = clock_.now();
  {
    std::lock_guard lock(mu_);
    auto it = lastSetUp_.find(uid);
    if (it != lastSetUp_.end() && now - it->second < refresh_) return paths_[uid];
  }
  VolumePaths paths;
  const std::string ns = podNamespace(pod);
  const std::string base = podDir(uid) + "/volumes";
  const json volumes =
      pod.contains("spec") ? pod["spec"].value("volumes", json::array()) : json::array();
  const std::optional<int64_t> fsGroup = fsGroupOf(pod);
  for (const auto& vol : volumes) {
    std::string name = vol.value("name", "");
    if (vol.contains("hostPath")) {
      std::string path = vol["hostPath"].value("path", "");
      if (Status s = prepareHostPath(path, vol["hostPath"].value("type", "")); !s.ok()) return s;
      paths[name] = path;
    } else if (vol.contains("persistentVolumeClaim") && vol["persistentVolumeClaim"].is_object()) {
      auto path = claimPath(pod, name, vol["persistentVolumeClaim"]);
      if (!path.ok()) return path.status();
      paths[name] = VolumePath(*path, vol["persistentVolumeClaim"].value("readOnly", false));
    } else if (vol.contains("configMap") || vol.contains("secret")) {
      bool isSecret = vol.contains("secret");
      const json& src = isSecret ? vol["secret"] : vol["configMap"];
      std::string objName = isSecret ? src.value("secretName", "") : src.value("name", "");
      std::string dir =
          base + (isSecret ? "/kubernetes.io~secret/" : "/kubernetes.io~configmap/") + name;
      Status s = makeDirs(dir, fs::perms(0755));
      if (!s.ok()) return s;
      auto data = isSecret ? objects_.secretData(ns, objName) : objects_.configMapData(ns, objName);
      if (!data.ok()) {
        if (!src.value("optional", false) || !isMissing(data.status()))
          return unreadableObject(isSecret ? "secret" : "configmap", objName, data.status());
        data = KeyBytes{};
      }
      FileMap files;
      s = addKeyFiles(*data, src, src.value("defaultMode", 0644), isSecret, files);
      if (!s.ok()) return s;
      s = writeFiles(dir, files);
      if (!s.ok()) return s;
      if (fsGroup) setVolumeOwnership(dir, *fsGroup, /*readOnly=*/true);
      paths[name] = dir;
    } else if (vol.contains("downwardAPI") || vol.contains("projected")) {
      const bool projected = vol.contains("projected");
      const json& src = projected ? vol["projected"] : vol["downwardAPI"];
      std::string dir =
          base + (projected ? "/kubernetes.io~projected/" : "/kubernetes.io~downward-api/") + name;
      Status s = makeDirs(dir, fs::perms(0755));
      if (!s.ok()) return s;
      const int defaultMode = src.value("defaultMode", 0644);
      FileMap files;
      if (projected) {
        for (const auto& source : src.value("sources", json::array())) {
          if (!source.is_object()) return Status::BadRequest("invalid projected volume source");
          s = addProjectedSource(pod, source, defaultMode, files);
          if (!s.ok()) return s;
        }
      } else {
        s = addDownwardApiFiles(pod, src, defaultMode, files);
        if (!s.ok()) return s;
      }
      s = writeFiles(dir, files);
      if (!s.ok()) return s;
      if (fsGroup) setVolumeOwnership(dir, *fsGroup, /*readOnly=*/true);
      paths[name] = dir;
    } else {
      // emptyDir, and any volume type we do not support yet, get a private directory.
      std::string dir = base + "/kubernetes.io~empty-dir/" + name;
      const bool fresh = !fs::exists(dir);
      Status s = makeDirs(dir, fs::perms::all);
      if (!s.ok()) return s;
      // Once, at set-up, as the kubelet's emptyDir plugin: later files are the pod's business.
      if (fresh && fsGroup) setVolumeOwnership(dir, *fsGroup, /*readOnly=*/false);
      paths[name] = dir;
    }
  }
  std::lock_guard lock(mu_);
  lastSetUp_[uid] = now;
  paths_[uid] = paths;
  return paths;
}

Result<std::vector<::runtime::v1::Mount>> VolumeManager::mountsFor(
    const json& container, const VolumePaths& volumes) const {
  std::vector<::runtime::v1::Mount> mounts;
  if (!container.contains("volumeMounts") || !container["volumeMounts"].is_array()) return mounts;
  for (const auto& vm : container["volumeMounts"]) {
    std::string name = vm.value("name", "");
    auto it = volumes.find(name);
    if (it == volumes.end())
      return Status::NotFoundMessage("volumeMount " + name + " names no volume of the pod");
    std::string host = it->second.path;
    std::string subPath = vm.value("subPath", "");
    if (!subPath.empty()) {
      if (!safeRelative(subPath))
        return Status::BadRequest("subPath " + subPath +
                                  " must be a relative path inside the "
                                  "volume");
      host += "/" + subPath;
      std::error_code ec;
      if (!fs::exists(host)) {
        fs::create_directories(host, ec);
        fs::permissions(host, fs::perms::all, ec);
      }
    }
    ::runtime::v1::Mount m;
    m.set_container_path(vm.value("mountPath", ""));
    m.set_host_path(host);
    m.set_readonly(vm.value("readOnly", false) || it->second.readOnly);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

Status VolumeManager::tearDownPod(const std::string& podUid) {
  if (tokens_ != nullptr) tokens_->forgetPod(podUid);
  {
    std::lock_guard lock(mu_);
    lastSetUp_.erase(podUid);
    paths_.erase(podUid);
  }
  // Never remove_all through a mount: that would delete the volume's data.
  if (Status s = unpublishCsi(podUid); !s.ok()) return s;
  std::error_code ec;
  fs::remove_all(podDir(podUid), ec);
  if (ec) return Status::Internal("cannot remove " + podDir(podUid) + ": " + ec.message());
  return Status::Ok();
}

std::vector<std::string> VolumeManager::podUidsOnDisk() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ + "/pods", ec))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  return out;
}

}  // namespace minik8s::kubelet
