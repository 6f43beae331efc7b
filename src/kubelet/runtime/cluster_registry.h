// ClusterRegistry: the registry every node's containerd uses as the mirror of docker.io and
// registry.k8s.io, so image names resolve as in Kubernetes without any external registry.
//
// start() writes a config for Debian's docker-registry (distribution 2.8) with its storage under
// <dataDir>/registry, runs `docker-registry serve CONFIG` as a child process listening on
// `listen` (127.0.0.1:5000 by default) and waits until GET /v2/ answers. push() adds the images of
// an OCI image-layout archive (a tar or a directory) through the HTTP API. stop() (and the
// destructor) end the process by PID. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "common/child_process.h"
#include "common/status.h"
#include "kubelet/runtime/containerd_config.h"

namespace minik8s::kubelet::runtime {

struct ClusterRegistryOptions {
  std::string dataDir;                    // storage and config go to <dataDir>/registry
  std::string listen = kDefaultRegistry;  // "host:port" (IPv4)
  std::string binary = "/usr/bin/docker-registry";
  std::chrono::milliseconds startTimeout{std::chrono::seconds(15)};
};

class ClusterRegistry {
 public:
  explicit ClusterRegistry(ClusterRegistryOptions options);
  ~ClusterRegistry();
  ClusterRegistry(const ClusterRegistry&) = delete;
  ClusterRegistry& operator=(const ClusterRegistry&) = delete;

  Status start();
  void stop();
  const std::string& address() const { return options_.listen; }  // "host:port"
  pid_t pid() const;

  // Pushes every named image of an OCI archive file or layout directory; returns the
  // repository:tag names pushed. Works against any registry at address(), started here or not.
  Result<std::vector<std::string>> push(const std::string& archivePath) const;

  // The docker-registry configuration (YAML) for a storage directory and listen address.
  static std::string renderConfig(const std::string& storageDir, const std::string& listen);

 private:
  const ClusterRegistryOptions options_;
  mutable std::mutex mu_;
  mutable ChildProcess process_;
};

// Pushes an OCI archive (tar file or layout directory) to the registry at "host:port".
Result<std::vector<std::string>> pushImageArchive(const std::string& archivePath,
                                                  const std::string& registry);

// True when GET http://<registry>/v2/ answers 200.
bool registryAnswers(const std::string& registry);

}  // namespace minik8s::kubelet::runtime
