// `minik8s image build -t NAME[:TAG] [-f Dockerfile] DIR`: a user's image from a Dockerfile,
// built with Debian's buildah (no daemon; chroot isolation, so RUN steps work as root without
// user namespaces) and pushed to the cluster registry, where every node's containerd finds it
// under the same name (`image: NAME` in any pod). FROM images come from the cluster registry
// too: buildah sees it as the mirror of docker.io and registry.k8s.io, as containerd does, so
// `FROM busybox:1.35` or `FROM minik8s/python` work with no external registry. buildah's state
// lives in a temporary directory removed afterwards.
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::cli {

struct DockerfileBuild {
  std::string tag;         // NAME[:TAG] as a pod would name it ("team/web:v1", "greeter")
  std::string dockerfile;  // default <context>/Dockerfile
  std::string context;     // the build context directory
  std::string registry;    // cluster registry host:port
};

// Builds and pushes; returns what was pushed ("127.0.0.1:5000/team/web:v1") and buildah's
// output, or an error carrying that output.
struct DockerfileBuildResult {
  std::string pushed;
  std::string output;
};
Result<DockerfileBuildResult> buildDockerfile(const DockerfileBuild& build);

// The registries.conf that makes `registry` the mirror of docker.io and registry.k8s.io and
// lets buildah reach it over plain HTTP.
std::string buildahRegistriesConf(const std::string& registry);

}  // namespace minik8s::cli
