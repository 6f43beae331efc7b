// What a node's containerd is told: its config.toml, the registry mirror files (hosts.toml) and
// the CNI network list. Pure text generation plus small file writers; thread-safe.
//
// Everything of one node lives under its own directory (root, state, sockets, runc state, CNI
// config, IPAM data), so several nodes' containerds share one machine without seeing each other
// (see docs/RUNTIME-NOTES.md for why each setting is there).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::kubelet::runtime {

// The sandbox image every node uses; the local pause image is tagged with it.
inline constexpr char kPauseImage[] = "registry.k8s.io/pause:3.9";
inline constexpr char kDefaultRegistry[] = "127.0.0.1:5000";

struct ContainerdLayout {
  std::string dir;  // <node data dir>/containerd
  std::string root() const { return dir + "/root"; }
  std::string state() const { return dir + "/state"; }
  std::string socket() const { return dir + "/containerd.sock"; }
  std::string ttrpcSocket() const { return dir + "/containerd.sock.ttrpc"; }
  std::string configFile() const { return dir + "/config.toml"; }
  std::string optDir() const { return dir + "/opt"; }
  std::string runcRoot() const { return dir + "/runc"; }
  std::string hostsDir() const { return dir + "/certs.d"; }  // registry mirrors, hosts.toml
  std::string cniConfDir() const { return dir + "/cni/net.d"; }
  std::string cniIpamDir() const { return dir + "/cni/ipam"; }
  std::string logFile() const { return dir + "/containerd.log"; }
  std::string pidFile() const { return dir + "/containerd.pid"; }
};

struct ContainerdConfigOptions {
  std::string sandboxImage = kPauseImage;
  std::string cniBinDir = "/usr/lib/cni";
};

// config.toml (version 2) for containerd 1.6 with the CRI plugin.
std::string renderContainerdConfig(const ContainerdLayout& layout,
                                   const ContainerdConfigOptions& options);

// hosts.toml that sends every pull for one upstream to the plain-HTTP mirror "host:port" and
// nowhere else (the upstream is unreachable and must not be tried).
std::string renderMirrorHostsToml(const std::string& mirror);

// Upstreams mirrored by the cluster registry.
inline const std::vector<std::string>& mirroredRegistries() {
  static const std::vector<std::string> kMirrored = {"docker.io", "registry.k8s.io"};
  return kMirrored;
}

// Writes <hostsDir>/<upstream>/hosts.toml for each mirrored upstream and for the mirror itself
// (so "host:port/name" pulls use plain HTTP).
Status writeMirrorHosts(const std::string& hostsDir, const std::string& mirror);

// The CNI network list: bridge (gateway, hairpin, optional masquerade, host-local IPAM on
// podCidr with a default route) + portmap + loopback.
std::string renderCniConfig(const std::string& podCidr, const std::string& bridgeName, int mtu,
                            bool ipMasq, const std::string& ipamDataDir);

// Writes <dir>/10-minik8s.conflist (removing other lists, since containerd loads only one).
// IPAM state goes to `ipamDataDir`, by default <dir>/../ipam, never the machine-wide
// /var/lib/cni which every node would share.
Status writeCniConfig(const std::string& dir, const std::string& podCidr,
                      const std::string& bridgeName = "cni0", int mtu = 1500, bool ipMasq = true,
                      const std::string& ipamDataDir = "");

// Writes `content` to `path` atomically (temp file + rename), creating parent directories.
Status writeFileAtomically(const std::string& path, const std::string& content);

}  // namespace minik8s::kubelet::runtime
