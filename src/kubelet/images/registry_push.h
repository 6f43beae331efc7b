// Pushes the images of an OCI image layout into a registry through the Docker Registry HTTP API
// v2 (blobs, then manifests), the way the cluster registry is filled with local images.
//
// Each index.json entry is pushed under the repository and tag of its name with the domain
// dropped: docker.io/library/busybox:1.35 -> library/busybox:1.35, registry.k8s.io/pause:3.9 ->
// pause:3.9. That is the path containerd asks a mirror of docker.io or registry.k8s.io for.
// Uploads are monolithic; a blob already pushed to another repository is mounted, not re-sent.
// Plain HTTP, loopback or cluster-internal registries only. Stateless; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "kubelet/images/oci_image.h"

namespace minik8s::kubelet::images {

// "library/busybox:1.35" for "busybox:1.35": where a name lives in a mirror registry.
Result<std::string> mirrorPathFor(const std::string& imageName);

// `registry` is "host:port". Returns the names pushed ("library/busybox:1.35", ...).
Result<std::vector<std::string>> pushOciLayout(const OciLayout& layout,
                                               const std::string& registry);

}  // namespace minik8s::kubelet::images
