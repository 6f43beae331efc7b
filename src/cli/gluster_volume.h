// GlusterFS under the built-in CSI driver (`minik8s cluster up --storage gluster`): one glusterd
// per node, each in the node's network namespace and a private mount namespace of its own (its
// /var/lib/glusterd, /var/log/glusterfs and /run are bind mounts of <node
// dir>/gluster/{lib,log,run}), one replicated volume whose bricks live in <node
// dir>/gluster/bricks, FUSE mounts of it on the host and from inside node network namespaces. The
// recipe and its reasons: docs/glusterfs-notes.md.
//
// Cleanup never goes by process name: a glusterd and everything it starts (bricks, self-heal
// daemon) live in the mount namespace recorded at start (in the cluster state and in
// <node dir>/gluster/mntns), and a process is only ended when it is in such a namespace whose
// /var/lib/glusterd is this cluster's directory. Not thread-safe (one `cluster` command drives it).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::cli {

inline constexpr const char* kGlusterVolumeName = "minik8s";

// One node that serves a brick.
struct GlusterServer {
  std::string name;       // the node
  std::string ip;         // its underlay address: glusterd listens there, bricks are named by it
  std::string netnsPath;  // the node's network namespace
  std::string dir;        // <node dir>/gluster
  pid_t pid = 0;          // its glusterd
  std::vector<std::string> mntns;  // glusterd's mount namespaces ("mnt:[inode]"), newest last

  json toJson() const;
  static GlusterServer fromJson(const json& j);
};

// Starts argv detached (own session, output to logFile) and returns its PID.
using Spawner =
    std::function<Result<pid_t>(const std::vector<std::string>& argv, const std::string& logFile)>;

// Unavailable, saying what to install, when glusterd or the FUSE client is missing.
Status checkGlusterInstalled();

// Starts the glusterd of every server (all at once) and waits until each answers its CLI; fills
// pid and mntns. `fresh` wipes an earlier glusterd state and bricks first.
Status startGlusterds(std::vector<GlusterServer*> servers, const Spawner& spawn, bool fresh);

// True when the servers' glusterd state already holds the volume (a cluster brought down and up
// again keeps its volume and its data).
bool glusterVolumeDefined(const std::vector<GlusterServer>& servers);

// Peers probed from the first server; the volume created (replica N for N servers, `force`: the
// bricks are on the root filesystem) and started.
Status createGlusterVolume(const std::vector<GlusterServer>& servers);

// Starts the volume again (after its glusterds restarted); a started volume is not an error.
Status startGlusterVolume(const GlusterServer& server);

// FUSE-mounts the volume at mountPoint, from inside netnsPath ("" = this namespace), asking
// `volfileIps` in order for the volume's layout. Retries while the bricks come up.
Status mountGlusterVolume(const std::vector<std::string>& volfileIps, const std::string& netnsPath,
                          const std::string& mountPoint, const std::string& logFile);

// True when mountPoint is a glusterfs mount that answers.
bool glusterMountAlive(const std::string& mountPoint);

// True while `server`'s glusterd runs in its recorded mount namespace.
bool glusterdRunning(const GlusterServer& server);

// Every glusterfs mount under dataDir unmounted, then every process in a recorded glusterd mount
// namespace of this data dir (those in `servers` and in <data dir>/nodes/*/gluster/mntns) ended:
// SIGTERM, then SIGKILL after 5 s.
void tearDownGluster(const std::string& dataDir, const std::vector<GlusterServer>& servers);

}  // namespace minik8s::cli
