#include "kubelet/images/oci_image.h"

#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fmt/format.h"

namespace minik8s::kubelet::images {
namespace {

json descriptor(const std::string& mediaType, const std::string& bytes) {
  return {{"mediaType", mediaType}, {"digest", sha256Digest(bytes)}, {"size", bytes.size()}};
}

// Sorted entries with every parent directory present, so extraction never invents directories
// with surprising modes.
std::vector<TarEntry> completeTree(const std::vector<TarEntry>& in) {
  std::map<std::string, TarEntry> byPath;
  for (const auto& e : in) {
    TarEntry c = e;
    while (c.path.starts_with("/")) c.path = c.path.substr(1);
    while (c.path.ends_with("/")) c.path.pop_back();
    if (c.path.empty()) continue;
    byPath[c.path] = std::move(c);
  }
  std::vector<std::string> parents;
  for (const auto& [path, e] : byPath) {
    for (size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      parents.push_back(path.substr(0, slash));
    }
  }
  for (const auto& p : parents) {
    if (!byPath.contains(p)) byPath[p] = TarEntry{p, TarEntryType::kDirectory, 0755, "", ""};
  }
  std::vector<TarEntry> out;
  for (auto& [path, e] : byPath) out.push_back(std::move(e));
  return out;  // std::map order puts "a" before "a/b"
}

Result<OciLayout> layoutFromFiles(const std::map<std::string, std::string>& files) {
  OciLayout layout;
  auto index = files.find("index.json");
  if (index == files.end()) return Status::BadRequest("not an OCI image layout: no index.json");
  for (const auto& [path, data] : files) {
    if (!path.starts_with("blobs/")) continue;
    std::string rest = path.substr(6);
    size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    std::string digest = rest.substr(0, slash) + ":" + rest.substr(slash + 1);
    if (digest.starts_with("sha256:") && sha256Digest(data) != digest) {
      return Status::BadRequest(fmt::format("blob {} does not match its digest", path));
    }
    layout.blobs[digest] = data;
  }
  try {
    json j = json::parse(index->second);
    for (const auto& m : j.at("manifests")) {
      OciLayout::Entry e;
      e.digest = m.at("digest").get<std::string>();
      e.mediaType = m.value("mediaType", std::string(kManifestMediaType));
      if (m.contains("annotations")) {
        const auto& a = m["annotations"];
        if (a.contains("io.containerd.image.name")) {
          e.name = a["io.containerd.image.name"].get<std::string>();
        } else if (a.contains("org.opencontainers.image.ref.name")) {
          e.name = a["org.opencontainers.image.ref.name"].get<std::string>();
        }
      }
      if (!layout.blobs.contains(e.digest)) {
        return Status::BadRequest(
            fmt::format("index.json names {} but the blob is missing", e.digest));
      }
      layout.manifests.push_back(std::move(e));
    }
  } catch (const json::exception& ex) {
    return Status::BadRequest(fmt::format("index.json: {}", ex.what()));
  }
  return layout;
}

}  // namespace

std::string sha256Digest(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex = "sha256:";
  for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

Result<ImageReference> parseImageReference(const std::string& ref) {
  if (ref.empty()) return Status::BadRequest("empty image reference");
  ImageReference r;
  std::string rest = ref;
  size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    std::string first = rest.substr(0, slash);
    if (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
        first == "localhost") {
      r.domain = first;
      rest = rest.substr(slash + 1);
    }
  }
  if (r.domain.empty()) r.domain = "docker.io";
  size_t at = rest.find('@');
  if (at != std::string::npos) {
    r.tag = rest.substr(at + 1);
    rest = rest.substr(0, at);
  } else {
    size_t colon = rest.rfind(':');
    if (colon != std::string::npos && rest.find('/', colon) == std::string::npos) {
      r.tag = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
    }
  }
  if (r.tag.empty()) r.tag = "latest";
  if (r.domain == "docker.io" && rest.find('/') == std::string::npos) rest = "library/" + rest;
  if (rest.empty() || std::any_of(rest.begin(), rest.end(), [](char c) {
        return std::isupper(static_cast<unsigned char>(c)) || c == ' ';
      })) {
    return Status::BadRequest(fmt::format("invalid image reference \"{}\"", ref));
  }
  r.repository = rest;
  return r;
}

Result<OciArchive> buildOciArchive(const ImageSpec& spec) {
  if (spec.names.empty()) return Status::BadRequest("an image needs at least one name");
  OciArchive out;

  TarWriter layerTar;
  for (const auto& e : completeTree(spec.rootfs)) layerTar.add(e);
  std::string layer = layerTar.finish();
  out.layerDigest = sha256Digest(layer);

  json cfg = json::object();
  if (!spec.config.entrypoint.empty()) cfg["Entrypoint"] = spec.config.entrypoint;
  if (!spec.config.cmd.empty()) cfg["Cmd"] = spec.config.cmd;
  if (!spec.config.env.empty()) cfg["Env"] = spec.config.env;
  if (!spec.config.workingDir.empty()) cfg["WorkingDir"] = spec.config.workingDir;
  if (!spec.config.labels.empty()) cfg["Labels"] = spec.config.labels;
  json config = {
      {"architecture", "amd64"},
      {"os", "linux"},
      {"created", "1970-01-01T00:00:00Z"},
      {"config", cfg},
      {"rootfs", {{"type", "layers"}, {"diff_ids", {out.layerDigest}}}},
      {"history",
       {{{"created", "1970-01-01T00:00:00Z"}, {"created_by", "minik8s image builder"}}}}};
  std::string configBytes = config.dump();
  out.configDigest = sha256Digest(configBytes);

  json manifest = {{"schemaVersion", 2},
                   {"mediaType", kManifestMediaType},
                   {"config", descriptor(kConfigMediaType, configBytes)},
                   {"layers", {descriptor(kLayerMediaType, layer)}}};
  std::string manifestBytes = manifest.dump();
  out.manifestDigest = sha256Digest(manifestBytes);

  json index = {{"schemaVersion", 2}, {"mediaType", kIndexMediaType}, {"manifests", json::array()}};
  std::set<std::string> seen;
  for (const auto& name : spec.names) {
    auto ref = parseImageReference(name);
    if (!ref.ok()) return ref.status();
    if (!seen.insert(ref->full()).second) continue;
    json d = descriptor(kManifestMediaType, manifestBytes);
    d["annotations"] = {{"io.containerd.image.name", ref->full()},
                        {"org.opencontainers.image.ref.name", ref->tag}};
    index["manifests"].push_back(d);
  }

  TarWriter outer;
  auto blob = [](const std::string& digest) {
    return "blobs/sha256/" + digest.substr(std::string("sha256:").size());
  };
  outer.add({"oci-layout", TarEntryType::kFile, 0644, R"({"imageLayoutVersion":"1.0.0"})", ""});
  outer.add({"index.json", TarEntryType::kFile, 0644, index.dump(), ""});
  outer.add({"blobs", TarEntryType::kDirectory, 0755, "", ""});
  outer.add({"blobs/sha256", TarEntryType::kDirectory, 0755, "", ""});
  std::map<std::string, const std::string*> blobs = {{out.layerDigest, &layer},
                                                     {out.configDigest, &configBytes},
                                                     {out.manifestDigest, &manifestBytes}};
  for (const auto& [digest, bytes] : blobs) {
    outer.add({blob(digest), TarEntryType::kFile, 0644, *bytes, ""});
  }
  out.bytes = outer.finish();
  return out;
}

Result<OciLayout> readOciLayoutTar(const std::string& tarBytes) {
  auto entries = readTar(tarBytes);
  if (!entries.ok()) return entries.status();
  std::map<std::string, std::string> files;
  for (auto& e : *entries) {
    if (e.type == TarEntryType::kFile) files[e.path] = std::move(e.data);
  }
  return layoutFromFiles(files);
}

Result<OciLayout> readOciLayoutDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    files[fs::relative(it->path(), dir).generic_string()] = ss.str();
  }
  if (ec) return Status::BadRequest(fmt::format("reading {}: {}", dir, ec.message()));
  return layoutFromFiles(files);
}

}  // namespace minik8s::kubelet::images
