#include "cli/gluster_volume.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "common/command.h"

namespace minik8s::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool waitUntil(std::chrono::milliseconds timeout, const std::function<bool()>& done) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  return done();
}

std::string readLink(const std::string& path) {
  std::error_code ec;
  return fs::read_symlink(path, ec).string();
}

// False for a process that is gone or a zombie.
bool processAlive(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

std::string mountNamespaceOf(pid_t pid) {
  return readLink("/proc/" + std::to_string(pid) + "/ns/mnt");
}

std::string libDir(const std::string& glusterDir) { return glusterDir + "/lib"; }
std::string logDir(const std::string& glusterDir) { return glusterDir + "/log"; }
std::string runDir(const std::string& glusterDir) { return glusterDir + "/run"; }
std::string brickDir(const std::string& glusterDir) {
  return glusterDir + "/bricks/" + kGlusterVolumeName;
}

// True when the process's /var/lib/glusterd is a bind mount of `lib` (of this data dir): the
// guard against a recycled namespace inode.
bool glusterStateIs(pid_t pid, const std::string& lib) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, target;
    fields >> id >> parent >> dev >> root >> target;
    if (target != "/var/lib/glusterd") continue;
    // `root` is the path inside its filesystem: a suffix of the full path.
    if (root.size() > 1 && lib.size() >= root.size() &&
        lib.compare(lib.size() - root.size(), root.size(), root) == 0 &&
        root.find("/gluster/lib") != std::string::npos)
      return true;
  }
  return false;
}

// The gluster CLI inside the server's namespaces (as the notes advise: heal and hooks find
// glusterd through the default socket there).
Result<std::string> glusterCli(const GlusterServer& s, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"nsenter", "-t",      std::to_string(s.pid), "--net",
                                   "--mount", "gluster", "--mode=script"};
  argv.insert(argv.end(), args.begin(), args.end());
  return runChecked(argv);
}

std::vector<std::pair<std::string, std::string>> glusterMountsUnder(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> out;  // target, type
  std::ifstream in("/proc/mounts");
  std::string dev, target, type, rest;
  while (in >> dev >> target >> type && std::getline(in, rest))
    if (type == "fuse.glusterfs" && (target == dir || target.rfind(dir + "/", 0) == 0))
      out.emplace_back(target, type);
  return out;
}

}  // namespace

json GlusterServer::toJson() const {
  return {{"name", name}, {"ip", ip},   {"netns", netnsPath},
          {"dir", dir},   {"pid", pid}, {"mntns", mntns}};
}

GlusterServer GlusterServer::fromJson(const json& j) {
  GlusterServer s;
  s.name = j.value("name", "");
  s.ip = j.value("ip", "");
  s.netnsPath = j.value("netns", "");
  s.dir = j.value("dir", "");
  s.pid = j.value("pid", 0);
  if (j.contains("mntns") && j["mntns"].is_array())
    s.mntns = j["mntns"].get<std::vector<std::string>>();
  return s;
}

Status checkGlusterInstalled() {
  for (const char* f : {"/usr/sbin/glusterd", "/usr/sbin/gluster", "/sbin/mount.glusterfs",
                        "/var/lib/glusterd/hooks"}) {
    std::error_code ec;
    if (!fs::exists(f, ec) && !fs::exists(std::string("/usr") + f, ec))
      return Status::Unavailable(
          fmt::format("--storage gluster needs GlusterFS, but {} is missing: install "
                      "glusterfs-server and glusterfs-client (scripts/setup.sh)",
                      f));
  }
  return Status::Ok();
}

bool glusterVolumeDefined(const std::vector<GlusterServer>& servers) {
  for (const auto& s : servers) {
    std::error_code ec;
    if (!fs::exists(libDir(s.dir) + "/vols/" + kGlusterVolumeName + "/info", ec)) return false;
  }
  return !servers.empty();
}

Status startGlusterds(std::vector<GlusterServer*> servers, const Spawner& spawn, bool fresh) {
  for (GlusterServer* s : servers) {
    std::error_code ec;
    if (fresh) {
      fs::remove_all(libDir(s->dir), ec);
      fs::remove_all(s->dir + "/bricks", ec);
    }
    for (const auto& d : {libDir(s->dir), logDir(s->dir), runDir(s->dir), s->dir + "/bricks"})
      fs::create_directories(d, ec);
    if (!fs::exists(libDir(s->dir) + "/hooks")) {
      auto copied = runChecked(
          {"cp", "-a", "/var/lib/glusterd/groups", "/var/lib/glusterd/hooks", libDir(s->dir)});
      if (!copied.ok()) return copied.status();
    }
    // Inside a private mount namespace: drop the copies of the host's mounts (they would pin
    // FUSE mounts and overlays; the mounts above the data dir stay, or the state would vanish),
    // then bind this node's directories over glusterd's compiled-in paths.
    const std::string script = fmt::format(
        "for m in $(awk '{{print $5}}' /proc/self/mountinfo | sort -r); do\n"
        "  case $m in /|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac\n"
        "  case '{0}/' in \"$m\"/*) continue ;; esac\n"
        "  umount -l \"$m\" 2>/dev/null\n"
        "done\n"
        "mount --bind '{1}' /var/lib/glusterd && mount --bind '{2}' /var/log/glusterfs &&\n"
        "mount --bind '{3}' /run && mkdir -p /run/gluster &&\n"
        "exec /usr/sbin/glusterd -N -p /run/glusterd.pid -l '{2}/glusterd.log'\n",
        s->dir, libDir(s->dir), logDir(s->dir), runDir(s->dir));
    auto pid = spawn({"nsenter", "--net=" + s->netnsPath, "--", "unshare", "-m", "--propagation",
                      "private", "--", "/bin/sh", "-c", script},
                     s->dir + "/start.log");
    if (!pid.ok()) return pid.status();
    s->pid = *pid;
  }
  const std::string own = mountNamespaceOf(::getpid());
  for (GlusterServer* s : servers) {
    // nsenter, unshare and sh exec each other: the PID becomes glusterd's once it runs.
    std::string ns;
    const bool started = waitUntil(std::chrono::seconds(5), [&] {
      if (!processAlive(s->pid)) return true;
      std::ifstream in("/proc/" + std::to_string(s->pid) + "/cmdline");
      std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      ns = mountNamespaceOf(s->pid);
      return cmd.rfind("/usr/sbin/glusterd", 0) == 0 && !ns.empty() && ns != own;
    });
    if (!started || !processAlive(s->pid))
      return Status::Unavailable(
          fmt::format("glusterd of {} did not start; see {}/start.log", s->name, s->dir));
    s->mntns.push_back(ns);
    std::ofstream(s->dir + "/mntns", std::ios::app) << ns << "\n";
  }
  for (GlusterServer* s : servers) {
    const bool answers = waitUntil(std::chrono::seconds(30), [&] {
      return !processAlive(s->pid) || glusterCli(*s, {"peer", "status"}).ok();
    });
    if (!answers || !processAlive(s->pid))
      return Status::Unavailable(fmt::format("glusterd of {} does not answer; see {}", s->name,
                                             logDir(s->dir) + "/glusterd.log"));
  }
  return Status::Ok();
}

Status createGlusterVolume(const std::vector<GlusterServer>& servers) {
  const GlusterServer& first = servers.front();
  for (size_t i = 1; i < servers.size(); ++i) {
    auto probed = glusterCli(first, {"peer", "probe", servers[i].ip});
    if (!probed.ok()) return probed.status();
  }
  const std::string connected = "Peer in Cluster (Connected)";
  const bool peered = waitUntil(std::chrono::seconds(30), [&] {
    for (const auto& s : servers) {
      auto out = glusterCli(s, {"peer", "status"});
      if (!out.ok()) return false;
      size_t count = 0;
      for (size_t at = out->find(connected); at != std::string::npos;
           at = out->find(connected, at + 1))
        ++count;
      if (count + 1 < servers.size()) return false;
    }
    return true;
  });
  if (!peered) return Status::Unavailable("the glusterd peers did not all connect");
  std::vector<std::string> create = {"volume", "create", kGlusterVolumeName};
  if (servers.size() > 1) {
    create.push_back("replica");
    create.push_back(std::to_string(servers.size()));
  }
  for (const auto& s : servers) create.push_back(s.ip + ":" + brickDir(s.dir));
  create.push_back("force");
  for (const auto& args : std::vector<std::vector<std::string>>{
           create,
           // Clients notice a dead server after this (default 42 s).
           {"volume", "set", kGlusterVolumeName, "network.ping-timeout", "10"},
           {"volume", "start", kGlusterVolumeName}}) {
    auto out = glusterCli(first, args);
    if (!out.ok()) return out.status();
  }
  return Status::Ok();
}

Status startGlusterVolume(const GlusterServer& server) {
  auto out = glusterCli(server, {"volume", "start", kGlusterVolumeName});
  if (!out.ok() && out.status().message().find("already started") == std::string::npos)
    return out.status();
  return Status::Ok();
}

bool glusterMountAlive(const std::string& mountPoint) {
  if (glusterMountsUnder(mountPoint).empty()) return false;
  bool found = false;
  for (const auto& [target, type] : glusterMountsUnder(mountPoint)) found |= target == mountPoint;
  struct stat st {};
  return found && ::stat(mountPoint.c_str(), &st) == 0;
}

Status mountGlusterVolume(const std::vector<std::string>& volfileIps, const std::string& netnsPath,
                          const std::string& mountPoint, const std::string& logFile) {
  if (volfileIps.empty()) return Status::BadRequest("no glusterfs server to mount from");
  if (glusterMountAlive(mountPoint)) return Status::Ok();
  // A mount whose client died ("Transport endpoint is not connected") goes first.
  for (const auto& [target, type] : glusterMountsUnder(mountPoint))
    if (target == mountPoint) (void)runProgram({"umount", "-l", mountPoint});
  std::error_code ec;
  fs::create_directories(mountPoint, ec);
  std::string options = "log-file=" + logFile;
  for (size_t i = 1; i < volfileIps.size(); ++i)
    options += (i == 1 ? ",backup-volfile-servers=" : ":") + volfileIps[i];
  std::vector<std::string> argv;
  // nsenter --net only: `ip netns exec` would mount in a throwaway mount namespace.
  if (!netnsPath.empty()) argv = {"nsenter", "--net=" + netnsPath, "--"};
  for (const auto& a :
       {std::string("mount"), std::string("-t"), std::string("glusterfs"), std::string("-o"),
        options, volfileIps.front() + ":/" + kGlusterVolumeName, mountPoint})
    argv.push_back(a);
  std::string last;
  const bool mounted = waitUntil(std::chrono::seconds(20), [&] {
    auto out = runProgram(argv);
    if (out.ok() && out->exitCode != 0) last = out->output;
    if (glusterMountAlive(mountPoint)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    return false;
  });
  if (!mounted)
    return Status::Unavailable(fmt::format("cannot mount the glusterfs volume at {}: {} (see {})",
                                           mountPoint, last, logFile));
  return Status::Ok();
}

bool glusterdRunning(const GlusterServer& server) {
  return !server.mntns.empty() && processAlive(server.pid) &&
         mountNamespaceOf(server.pid) == server.mntns.back() &&
         glusterStateIs(server.pid, libDir(server.dir));
}

void tearDownGluster(const std::string& dataDir, const std::vector<GlusterServer>& servers) {
  // Unmount first: a FUSE client exits once its mount is gone.
  auto mounts = glusterMountsUnder(dataDir);
  std::sort(mounts.rbegin(), mounts.rend());
  for (const auto& [target, type] : mounts) {
    auto out = runProgram({"umount", target});
    if (!out.ok() || out->exitCode != 0) (void)runProgram({"umount", "-l", target});
  }
  // Namespace -> the glusterd state directory it must have bound.
  std::map<std::string, std::string> namespaces;
  for (const auto& s : servers)
    for (const auto& ns : s.mntns) namespaces[ns] = libDir(s.dir);
  std::error_code ec;
  for (const auto& node : fs::directory_iterator(dataDir + "/nodes", ec)) {
    std::ifstream in(node.path().string() + "/gluster/mntns");
    for (std::string ns; std::getline(in, ns);)
      if (!ns.empty()) namespaces[ns] = libDir(node.path().string() + "/gluster");
  }
  if (namespaces.empty()) return;
  auto ours = [&] {
    std::map<pid_t, std::string> pids;  // -> its namespace (checked again before SIGKILL)
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      const std::string n = e.path().filename().string();
      if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(n);
      const std::string ns = mountNamespaceOf(pid);
      auto it = namespaces.find(ns);
      if (it != namespaces.end() && processAlive(pid) && glusterStateIs(pid, it->second))
        pids[pid] = ns;
    }
    return pids;
  };
  // Rounds: glusterd may start a helper (a brick, the self-heal daemon) while it is being
  // stopped; a later scan finds what the first one could not see.
  for (int round = 0; round < 4; ++round) {
    const auto pids = ours();
    if (pids.empty()) return;
    for (const auto& [p, ns] : pids) ::kill(p, SIGTERM);
    auto stillThere = [&](pid_t p, const std::string& ns) {
      return processAlive(p) && mountNamespaceOf(p) == ns;
    };
    auto allGone = [&] {
      for (const auto& [p, ns] : pids)
        if (stillThere(p, ns)) return false;
      return true;
    };
    if (!waitUntil(std::chrono::seconds(round == 0 ? 5 : 2), allGone)) {
      for (const auto& [p, ns] : pids)
        if (stillThere(p, ns)) ::kill(p, SIGKILL);
      waitUntil(std::chrono::seconds(2), allGone);
    }
  }
}

}  // namespace minik8s::cli
