// OCI images as files: build an OCI image-layout tar from a root file system, and read one back.
//
// buildOciArchive() turns a single-layer root file system plus an image config into the bytes of
// an OCI image-layout archive (oci-layout, index.json, blobs/sha256/...) that `ctr images import`
// and ClusterRegistry push accept. Output is deterministic: entries sorted, timestamps zero, JSON
// with sorted keys, uncompressed layer (its digest is also its diff ID). Each name becomes one
// index.json entry annotated with io.containerd.image.name (fully qualified) and
// org.opencontainers.image.ref.name (the tag). Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "kubelet/images/tar_archive.h"

namespace minik8s::kubelet::images {

inline constexpr char kManifestMediaType[] = "application/vnd.oci.image.manifest.v1+json";
inline constexpr char kIndexMediaType[] = "application/vnd.oci.image.index.v1+json";
inline constexpr char kConfigMediaType[] = "application/vnd.oci.image.config.v1+json";
inline constexpr char kLayerMediaType[] = "application/vnd.oci.image.layer.v1.tar";

// "sha256:<64 hex>" of the bytes.
std::string sha256Digest(const std::string& bytes);

// An image reference split the way containerd normalises it: "busybox" -> docker.io,
// library/busybox, latest. Digest references ("name@sha256:...") keep the digest in `tag`.
struct ImageReference {
  std::string domain;      // "docker.io", "registry.k8s.io", "127.0.0.1:5000"
  std::string repository;  // "library/busybox"
  std::string tag;         // "1.35"
  std::string full() const { return domain + "/" + repository + ":" + tag; }
};
Result<ImageReference> parseImageReference(const std::string& ref);

struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::string> env;  // "PATH=/usr/bin:/bin"
  std::string workingDir;
  std::map<std::string, std::string> labels;
};

struct ImageSpec {
  std::vector<std::string> names;  // as written: "minik8s/busybox:1.35"; normalised when built
  std::vector<TarEntry> rootfs;    // any order; parents are added when missing
  ImageConfig config;
};

struct OciArchive {
  std::string bytes;           // the image-layout tar
  std::string manifestDigest;  // what a registry and containerd call the image
  std::string configDigest;
  std::string layerDigest;
};
Result<OciArchive> buildOciArchive(const ImageSpec& spec);

// The content of an OCI image-layout (read from a tar or a directory).
struct OciLayout {
  std::map<std::string, std::string> blobs;  // digest -> bytes
  // index.json manifests: digest, media type and the name each is tagged with (may be empty).
  struct Entry {
    std::string digest;
    std::string mediaType;
    std::string name;
  };
  std::vector<Entry> manifests;
};
Result<OciLayout> readOciLayoutTar(const std::string& tarBytes);
Result<OciLayout> readOciLayoutDir(const std::string& dir);

}  // namespace minik8s::kubelet::images
