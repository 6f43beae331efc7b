#include "cli/cluster_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "apiserver/admission/sidecar_injection.h"
#include "cli/addons.h"
#include "cli/api_balancer.h"
#include "cli/gluster_volume.h"
#include "client/rest_client.h"
#include "common/http_client.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "dns/dns_endpoint.h"
#include "dns/node_resolver.h"
#include "kubelet/cri/grpc_runtime.h"
#include "mesh/mesh_resources.h"
#include "mesh/peer_authentication.h"
#include "network/node_namespace.h"

namespace minik8s::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct ClusterFlags {
  std::string dataDir = "/var/lib/minik8s";
  int nodes = 3;
  std::string datastore;
  std::string prefix = "mk8s";
  std::string underlay = "172.29.0.0/24";
  std::string networkBackend = "vxlan";
  std::string proxyMode = "iptables";  // the agents' service proxy: iptables or nftables
  int apiPort = 6443;
  int registryPort = 5000;
  int timeoutSeconds = 180;
  std::string nodeName;  // add-node / remove-node
  // add-node: node.yaml settings (k=v labels, k[=v]:Effect taints, resource=quantity capacity)
  std::vector<std::string> labels, taints, capacity;
  bool purge = false;
  std::vector<std::string> serverArgs;  // appended to the server's command line (tests)
  bool ha = false;  // 3 etcd members, `servers` API servers, a balancer for kubectl
  int servers = 2;  // API servers with --ha
  // Where the CSI driver's volumes live: "dir" (a host directory) or "gluster" (a replicated
  // GlusterFS volume served by the first nodes, FUSE-mounted on the host and in every node);
  // "auto" (the default) is gluster when GlusterFS is installed, resolved by runCluster.
  std::string storage = "auto";
  // Prometheus and the node exporter (addons/monitoring) applied once the nodes are Ready.
  bool monitoring = true;
  bool mesh = false;  // up --mesh: the server's --mesh
};

// HA layout on the gateway address: etcd member i listens on 2379+2i (clients) and 2380+2i
// (peers); the balancer takes --api-port and server i the port apiPort+1+i.
constexpr int kEtcdMembers = 3;

// ---- processes ------------------------------------------------------------------------------

std::string selfBinary() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).string();
}

// Starts argv in its own session with output appended to logFile; returns its PID.
Result<pid_t> spawnDetached(const std::vector<std::string>& argv, const std::string& logFile) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return Status::Internal("fork failed");
  if (pid == 0) {
    ::setsid();
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(logFile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in >= 0) ::dup2(in, 0);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

// The command line of a running process ("" when it is gone or a zombie).
std::string cmdlineOf(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] == 'Z') return "";
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : cmd)
    if (c == '\0') c = ' ';
  return cmd;
}

// True when `cmdline` names the path `dir` or a path under it: /tmp/c matches "/tmp/c" and
// "/tmp/c/x" but not "/tmp/c2/x", another cluster's data directory (found by the chaos soak:
// `cluster down` of /tmp/minik8s-e2e-soak stopped the agents of /tmp/minik8s-e2e-soakf).
bool mentionsPath(const std::string& cmdline, const std::string& dir) {
  if (dir.empty()) return false;
  for (size_t at = cmdline.find(dir); at != std::string::npos; at = cmdline.find(dir, at + 1)) {
    const size_t end = at + dir.size();
    if (dir.back() == '/' || end == cmdline.size()) return true;
    const char next = cmdline[end];
    if (!std::isalnum(static_cast<unsigned char>(next)) && next != '-' && next != '_' &&
        next != '.')
      return true;
  }
  return false;
}

// True when `pid` runs and its command line mentions the path `marker` (guards against PID
// reuse).
bool ours(pid_t pid, const std::string& marker) {
  if (pid <= 0) return false;
  return mentionsPath(cmdlineOf(pid), marker);
}

// For processes this invocation started: false once it has exited (reaps it).
bool childAlive(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == 0;
}

void stopProcess(pid_t pid, const std::string& marker, std::chrono::milliseconds grace,
                 int firstSignal = SIGTERM) {
  if (!ours(pid, marker)) return;
  ::kill(pid, firstSignal);
  const auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    if (!ours(pid, marker)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (ours(pid, marker)) ::kill(pid, SIGKILL);
  for (int i = 0; i < 40 && ours(pid, marker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

pid_t readPidFile(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// ---- state ----------------------------------------------------------------------------------

struct Layout {
  ClusterFlags flags;
  std::string dataDir;
  std::unique_ptr<network::NodeNamespaces> ns;

  std::string statePath() const { return dataDir + "/cluster.json"; }
  std::string logDir() const { return dataDir + "/logs"; }
  // The built-in CSI driver's volumes, shared by the server and every node (one machine).
  std::string volumesDir() const { return dataDir + "/volumes"; }
  bool gluster() const { return flags.storage == "gluster"; }
  // A node's view of the volumes: the host's directory, or with gluster its own mount of the
  // volume, made from inside its network namespace (its traffic leaves from the node).
  std::string nodeVolumesDir(const std::string& node) const {
    return gluster() ? nodeDir(node) + "/volumes" : volumesDir();
  }
  std::string serverDir(int i = 0) const {
    return i == 0 ? dataDir + "/server" : fmt::format("{}/server-{}", dataDir, i);
  }
  int serverCount() const { return flags.ha ? flags.servers : 1; }
  int serverPort(int i) const { return flags.ha ? flags.apiPort + 1 + i : flags.apiPort; }
  // TLS unless a server argument asks for plain HTTP (debugging).
  std::string apiScheme() const {
    for (const auto& a : flags.serverArgs)
      if (a == "--insecure-http" || a == "--insecure-http=true") return "http";
    return "https";
  }
  std::string serverUrl(int i) const {
    return fmt::format("{}://{}:{}", apiScheme(), ns->gatewayIp(), serverPort(i));
  }
  // Every API server, comma-separated: agents and this command fail over between them.
  std::string serverUrls() const {
    std::string urls;
    for (int i = 0; i < serverCount(); ++i) urls += (i ? "," : "") + serverUrl(i);
    return urls;
  }
  std::string etcdClientUrl(int i) const {
    return fmt::format("http://{}:{}", ns->gatewayIp(), 2379 + 2 * i);
  }
  std::string etcdPeerUrl(int i) const {
    return fmt::format("http://{}:{}", ns->gatewayIp(), 2380 + 2 * i);
  }
  std::string etcdDatastore() const {
    std::string urls;
    for (int i = 0; i < kEtcdMembers; ++i)
      urls += (i ? "," : "") + etcdClientUrl(i).substr(7);  // host:port
    return "etcd://" + urls;
  }
  std::string nodeDir(const std::string& n) const { return dataDir + "/nodes/" + n; }
  // What kubectl uses: the only server, or the balancer in front of them (--ha).
  std::string apiUrl() const {
    return fmt::format("{}://{}:{}", apiScheme(), ns->gatewayIp(), flags.apiPort);
  }
  std::string registry() const { return fmt::format("{}:{}", ns->gatewayIp(), flags.registryPort); }
  std::string kubeconfig() const { return dataDir + "/kubeconfig"; }
  std::string pkiDir(int i = 0) const { return serverDir(i) + "/pki"; }
};

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// This command's own API client: the admin credential of the first server's PKI (its client
// certificate, or its token when the servers run plain HTTP), to `servers`.
client::ClientConfig adminClientConfig(const Layout& l, const std::string& servers) {
  client::ClientConfig config;
  config.servers = servers;
  if (l.apiScheme() == "http") {
    std::string token = readFile(l.pkiDir() + "/admin.token");
    while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
    config.bearerToken = token;
    return config;
  }
  config.tls.caPem = readFile(l.pkiDir() + "/ca.crt");
  config.tls.certPem = readFile(l.pkiDir() + "/admin.crt");
  config.tls.keyPem = readFile(l.pkiDir() + "/admin.key");
  return config;
}
client::ClientConfig adminClientConfig(const Layout& l) {
  return adminClientConfig(l, l.serverUrls());
}

// HA: every server shares the first one's CA, service-account key and admin credentials (each
// issues its own serving certificate for its address from that CA).
Status sharePki(const Layout& l, int index) {
  std::error_code ec;
  fs::create_directories(l.pkiDir(index), ec);
  for (const char* f :
       {"ca.crt", "ca.key", "sa.key", "sa.pub", "admin.crt", "admin.key", "admin.token",
        "apiserver-kubelet-client.crt", "apiserver-kubelet-client.key"}) {
    const std::string from = l.pkiDir() + "/" + f, to = l.pkiDir(index) + "/" + f;
    if (!fs::exists(from)) continue;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) return Status::Internal("cannot copy " + from + ": " + ec.message());
  }
  return Status::Ok();
}

Result<Layout> makeLayout(const ClusterFlags& f) {
  Layout l;
  l.flags = f;
  std::error_code ec;
  fs::create_directories(f.dataDir, ec);
  l.dataDir = fs::weakly_canonical(f.dataDir, ec).string();
  auto subnet = parseCidr(f.underlay);
  if (!subnet || subnet->prefix > 28)
    return Status::BadRequest("--underlay must be an IPv4 network such as 172.29.0.0/24");
  if (f.prefix.empty() || f.prefix.size() > 6)
    return Status::BadRequest("--prefix must have 1 to 6 characters (it names links)");
  network::UnderlayOptions uo;
  uo.prefix = f.prefix;
  uo.subnet = *subnet;
  l.ns = std::make_unique<network::NodeNamespaces>(uo, network::realRunner());
  return l;
}

json readState(const Layout& l) {
  std::ifstream in(l.statePath());
  if (!in) return json::object();
  json j = json::parse(in, nullptr, false);
  return j.is_object() ? j : json::object();
}

void writeState(const Layout& l, const json& state) {
  const std::string tmp = l.statePath() + ".tmp";
  std::ofstream(tmp, std::ios::trunc) << state.dump(2) << "\n";
  fs::rename(tmp, l.statePath());
}

// ---- pieces -------------------------------------------------------------------------------

bool waitFor(std::chrono::seconds timeout, const std::function<bool()>& done) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

bool fileContains(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find(needle) != std::string::npos;
}

Result<pid_t> startRegistry(const Layout& l, json& state) {
  const std::string log = l.logDir() + "/registry.log";
  std::ofstream(log, std::ios::trunc).close();
  auto pid = spawnDetached({selfBinary(), "image", "registry", "--data-dir", l.dataDir, "--listen",
                            l.registry(), "--push-defaults"},
                           log);
  if (!pid.ok()) return pid;
  state["registryPid"] = *pid;
  writeState(l, state);
  std::cout << "  registry on " << l.registry() << " (building the local images)..." << std::flush;
  bool ready = waitFor(std::chrono::seconds(300),
                       [&] { return fileContains(log, "registry ready") || !childAlive(*pid); });
  if (!ready || !childAlive(*pid))
    return Status::Unavailable("the registry did not start; see " + log);
  std::cout << " ready\n";
  return pid;
}

std::string joinToken(const Layout& l);

// Starts API server `index` (0 unless --ha) and waits until it answers.
Result<pid_t> startServer(const Layout& l, json& state, int index = 0) {
  const std::string log =
      l.logDir() + (index == 0 ? std::string("/server.log") : fmt::format("/server-{}.log", index));
  std::vector<std::string> argv = {selfBinary(),
                                   "server",
                                   "--data-dir",
                                   l.serverDir(index),
                                   "--listen",
                                   fmt::format("{}:{}", l.ns->gatewayIp(), l.serverPort(index)),
                                   "--advertise-address",
                                   l.ns->gatewayIp(),
                                   "--csi-volumes-dir",
                                   l.volumesDir()};
  const std::string datastore = l.flags.ha ? l.etcdDatastore() : l.flags.datastore;
  if (!datastore.empty()) {
    argv.push_back("--datastore");
    argv.push_back(datastore);
  }
  // Every server accepts the same join token and trusts the same CA: the first one's.
  if (index > 0) {
    argv.push_back("--token");
    argv.push_back(joinToken(l));
    if (Status shared = sharePki(l, index); !shared.ok()) return shared;
  }
  argv.insert(argv.end(), l.flags.serverArgs.begin(), l.flags.serverArgs.end());
  const auto startedAt = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  auto pid = spawnDetached(argv, log);
  if (!pid.ok()) return pid;
  if (index == 0) state["serverPid"] = *pid;
  if (!state["servers"].is_array()) state["servers"] = json::array();
  while (static_cast<int>(state["servers"].size()) <= index) state["servers"].push_back(0);
  state["servers"][index] = *pid;
  writeState(l, state);
  // The server writes its kubeconfig (and so the admin credential) once it serves.
  const std::string serverKubeconfig = l.serverDir(index) + "/kubeconfig";
  bool ready = waitFor(std::chrono::seconds(60), [&] {
    if (!childAlive(*pid)) return true;
    if (!fs::exists(serverKubeconfig) || fs::last_write_time(serverKubeconfig) < startedAt)
      return false;
    client::RestClient rest(adminClientConfig(l, l.serverUrl(index)));
    return rest.request("GET", "/version").ok();
  });
  if (!ready || !childAlive(*pid))
    return Status::Unavailable("the server did not start; see " + log);
  if (index == 0) {
    // The kubeconfig names this server; with --ha it names the balancer in front of them all.
    std::ifstream in(l.serverDir() + "/kubeconfig");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string own = l.serverUrl(0);
    for (size_t at; l.flags.ha && (at = text.find(own)) != std::string::npos;)
      text.replace(at, own.size(), l.apiUrl());
    std::ofstream(l.kubeconfig() + ".tmp", std::ios::trunc) << text;
    std::error_code ec;
    fs::rename(l.kubeconfig() + ".tmp", l.kubeconfig(), ec);
  }
  std::cout << "  server on " << l.serverUrl(index) << " ready\n";
  return pid;
}

// ---- HA: etcd members and the balancer ------------------------------------------------------

Result<pid_t> startEtcdMember(const Layout& l, int i) {
  std::string cluster;
  for (int m = 0; m < kEtcdMembers; ++m)
    cluster += fmt::format("{}m{}={}", m ? "," : "", m, l.etcdPeerUrl(m));
  const std::string dir = fmt::format("{}/etcd/m{}", l.dataDir, i);
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  // Slower heartbeats than etcd's defaults: on a loaded 2-core machine the defaults make
  // members call needless elections.
  return spawnDetached({"etcd",
                        "--name",
                        fmt::format("m{}", i),
                        "--data-dir",
                        dir,
                        "--listen-client-urls",
                        l.etcdClientUrl(i),
                        "--advertise-client-urls",
                        l.etcdClientUrl(i),
                        "--listen-peer-urls",
                        l.etcdPeerUrl(i),
                        "--initial-advertise-peer-urls",
                        l.etcdPeerUrl(i),
                        "--initial-cluster",
                        cluster,
                        "--initial-cluster-state",
                        "new",
                        "--initial-cluster-token",
                        "minik8s-" + l.flags.prefix,
                        "--heartbeat-interval",
                        "250",
                        "--election-timeout",
                        "2500"},
                       fmt::format("{}/etcd-m{}.log", l.logDir(), i));
}

// True once every member says the cluster has a leader.
bool waitEtcdHealthy(const Layout& l) {
  return waitFor(std::chrono::seconds(60), [&] {
    for (int i = 0; i < kEtcdMembers; ++i) {
      http::Client c(l.etcdClientUrl(i));
      auto r = c.get("/health");
      if (!r.ok() || r->body.find("\"true\"") == std::string::npos) return false;
    }
    return true;
  });
}

Result<pid_t> startBalancer(const Layout& l) {
  const std::string log = l.logDir() + "/balancer.log";
  std::vector<std::string> argv = {selfBinary(),
                                   "cluster",
                                   "balance",
                                   "--data-dir",
                                   l.dataDir,
                                   "--listen",
                                   fmt::format("{}:{}", l.ns->gatewayIp(), l.flags.apiPort)};
  for (int i = 0; i < l.serverCount(); ++i) {
    argv.push_back("--backend");
    argv.push_back(l.serverUrl(i));
  }
  const auto before = fs::exists(log) ? fs::file_size(log) : 0;
  auto pid = spawnDetached(argv, log);
  if (!pid.ok()) return pid;
  bool ready = waitFor(std::chrono::seconds(10), [&] {
    std::ifstream in(log);
    in.seekg(static_cast<std::streamoff>(before));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.find("ready") != std::string::npos || !childAlive(*pid);
  });
  if (!ready || !childAlive(*pid))
    return Status::Unavailable("the API balancer did not start; see " + log);
  std::cout << "  API balancer on " << l.apiUrl() << " for " << l.serverCount() << " servers\n";
  return pid;
}

// The etcd members, servers and (with --ha) the balancer that are not running, started.
Status startControlPlane(const Layout& l, json& state) {
  if (l.flags.ha) {
    if (!state["etcd"].is_array()) state["etcd"] = json::array();
    bool started = false;
    for (int i = 0; i < kEtcdMembers; ++i) {
      while (static_cast<int>(state["etcd"].size()) <= i) state["etcd"].push_back(0);
      if (ours(state["etcd"][i].get<pid_t>(), l.dataDir)) continue;
      auto pid = startEtcdMember(l, i);
      if (!pid.ok()) return pid.status();
      state["etcd"][i] = *pid;
      writeState(l, state);
      started = true;
    }
    if (started) {
      if (!waitEtcdHealthy(l)) return Status::Unavailable("etcd is not healthy; see the etcd logs");
      std::cout << "  etcd: " << kEtcdMembers << " members healthy\n";
    }
  }
  for (int i = 0; i < l.serverCount(); ++i) {
    pid_t pid = 0;
    if (state["servers"].is_array() && static_cast<int>(state["servers"].size()) > i)
      pid = state["servers"][i].get<pid_t>();
    else if (i == 0)
      pid = state.value("serverPid", 0);
    if (ours(pid, l.dataDir)) continue;
    auto started = startServer(l, state, i);
    if (!started.ok()) return started.status();
  }
  if (l.flags.ha && !ours(state.value("balancerPid", 0), l.dataDir)) {
    auto pid = startBalancer(l);
    if (!pid.ok()) return pid.status();
    state["balancerPid"] = *pid;
    writeState(l, state);
  }
  return Status::Ok();
}

std::string joinToken(const Layout& l) {
  std::ifstream in(l.serverDir() + "/token");
  std::string t;
  std::getline(in, t);
  return t;
}

// node.yaml entries from --label/--taint/--capacity (BadRequest when malformed).
Result<json> nodeConfigExtras(const ClusterFlags& f) {
  json extras = {
      {"labels", json::object()}, {"taints", json::array()}, {"capacity", json::object()}};
  auto split = [](const std::string& s, char sep) -> std::pair<std::string, std::string> {
    const size_t at = s.find(sep);
    if (at == std::string::npos) return {s, ""};
    return {s.substr(0, at), s.substr(at + 1)};
  };
  for (const auto& l : f.labels) {
    auto [k, v] = split(l, '=');
    if (k.empty()) return Status::BadRequest("--label wants key=value, got " + l);
    extras["labels"][k] = v;
  }
  for (const auto& c : f.capacity) {
    auto [k, v] = split(c, '=');
    if (k.empty() || v.empty()) return Status::BadRequest("--capacity wants resource=quantity");
    extras["capacity"][k] = v;
  }
  for (const auto& t : f.taints) {
    auto [kv, effect] = split(t, ':');
    auto [k, v] = split(kv, '=');
    if (k.empty() ||
        (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute"))
      return Status::BadRequest("--taint wants key[=value]:NoSchedule|PreferNoSchedule|NoExecute");
    json taint = {{"key", k}, {"effect", effect}};
    if (!v.empty()) taint["value"] = v;
    extras["taints"].push_back(taint);
  }
  return extras;
}

// ---- --storage gluster ----------------------------------------------------------------------

std::vector<GlusterServer> glusterServers(const json& state) {
  std::vector<GlusterServer> servers;
  for (const auto& j : state.value("gluster", json::object()).value("servers", json::array()))
    servers.push_back(GlusterServer::fromJson(j));
  return servers;
}

void recordGluster(const Layout& l, json& state, const std::vector<GlusterServer>& servers) {
  json list = json::array();
  for (const auto& s : servers) list.push_back(s.toJson());
  state["gluster"] = {{"volume", kGlusterVolumeName}, {"servers", list}};
  writeState(l, state);
}

// The glusterd of the first min(3, nodes) nodes (those not running), the volume, and its mount
// at volumesDir() for the server's CSI driver; before the control plane, which writes there.
// The node namespaces are made here: glusterd runs inside them.
Status startGlusterStorage(const Layout& l, json& state) {
  if (Status s = checkGlusterInstalled(); !s.ok()) return s;
  std::vector<GlusterServer> servers = glusterServers(state);
  if (servers.empty())
    for (int i = 1; i <= std::min(3, l.flags.nodes); ++i) {
      GlusterServer s;
      s.name = "node-" + std::to_string(i);
      s.ip = l.ns->nodeIp(i);
      s.netnsPath = l.ns->netnsPath(s.name);
      s.dir = l.nodeDir(s.name) + "/gluster";
      servers.push_back(s);
    }
  const auto t0 = Clock::now();
  auto since = [t0] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  std::vector<GlusterServer*> stopped;
  for (auto& s : servers) {
    if (glusterdRunning(s)) continue;
    if (Status a = l.ns->addNode(s.name, s.ip); !a.ok()) return a;
    stopped.push_back(&s);
  }
  // A cluster brought down and up again finds its volume (and the data) in the node dirs.
  const bool defined = glusterVolumeDefined(servers);
  if (!stopped.empty()) {
    std::cout << "  glusterfs: " << stopped.size() << " glusterd..." << std::flush;
    Status s = startGlusterds(stopped, spawnDetached, !defined);
    recordGluster(l, state, servers);
    if (!s.ok()) return s;
    std::cout << fmt::format(" answering ({:.1f} s), volume {}...", since(), kGlusterVolumeName)
              << std::flush;
    s = defined ? startGlusterVolume(servers.front()) : createGlusterVolume(servers);
    if (!s.ok()) return s;
    std::cout << fmt::format(" started with {} brick{} ({:.1f} s)\n", servers.size(),
                             servers.size() > 1 ? "s" : "", since());
  }
  std::vector<std::string> ips;
  for (const auto& s : servers) ips.push_back(s.ip);
  Status m = mountGlusterVolume(ips, "", l.volumesDir(), l.logDir() + "/gluster-mount-host.log");
  if (!m.ok()) return m;
  std::cout << fmt::format("  glusterfs volume mounted at {} ({:.1f} s)\n", l.volumesDir(),
                           since());
  return Status::Ok();
}

// The node's own mount of the gluster volume, asking its own glusterd first when it has one.
Status mountNodeVolumes(const Layout& l, const std::string& name, const std::string& ip) {
  std::vector<std::string> ips;
  for (const auto& s : glusterServers(readState(l)))
    if (s.ip == ip)
      ips.insert(ips.begin(), s.ip);
    else
      ips.push_back(s.ip);
  return mountGlusterVolume(ips, l.ns->netnsPath(name), l.nodeVolumesDir(name),
                            l.logDir() + "/gluster-mount-" + name + ".log");
}

Result<pid_t> startNode(const Layout& l, const std::string& name, const std::string& ip,
                        const json& extras = json::object()) {
  Status s = l.ns->addNode(name, ip);
  if (!s.ok()) return s;
  // `ip netns exec` in the node resolves through the node's cluster DNS (Dns hosts too).
  if (Status r = dns::writeNodeResolvConf(l.ns->netnsName(name), ip); !r.ok())
    std::cerr << "node " << name << ": " << r.message() << "\n";
  const std::string dir = l.nodeDir(name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  json config = {{"name", name},
                 {"token", joinToken(l)},
                 {"address", ip},
                 {"networkBackend", l.flags.networkBackend},
                 {"proxy-mode", l.flags.proxyMode},
                 {"clusterDNS", json::array({"10.96.0.10"})},
                 {"cgroupRoot", fmt::format("/minik8s/{}-{}/kubepods", l.flags.prefix, name)},
                 {"labels", json::object()}};
  // A restarted node keeps what it was added with (labels, taints, capacity).
  if (extras.empty()) {
    std::ifstream in(dir + "/node.yaml");
    json old = json::parse(in, nullptr, false);
    if (old.is_object())
      for (const char* k : {"labels", "taints", "capacity", "networkBackend"})
        if (old.contains(k)) config[k] = old[k];
  }
  for (const auto& [k, v] : extras.items()) config[k] = v;
  // node.yaml is YAML; JSON is YAML too.
  std::ofstream(dir + "/node.yaml", std::ios::trunc) << config.dump(2) << "\n";
  ::chmod((dir + "/node.yaml").c_str(), 0600);
  if (l.gluster())
    if (Status m = mountNodeVolumes(l, name, ip); !m.ok()) return m;
  return spawnDetached({"nsenter", "--net=" + l.ns->netnsPath(name), "--", selfBinary(), "agent",
                        "--server", l.serverUrls(), "--ca-file", l.pkiDir() + "/ca.crt", "--config",
                        dir + "/node.yaml", "--data-dir", dir, "--registry", l.registry(),
                        "--listen", ip + ":10250", "--csi-volumes-dir", l.nodeVolumesDir(name)},
                       l.logDir() + "/" + name + ".log");
}

// Node name -> "Ready" / "NotReady" / "" (absent), and whether it has a podCIDR.
// Only a Ready condition written at or after `since` counts (a stored Node of an earlier run
// says Ready until its agent writes again).
std::map<std::string, std::pair<std::string, bool>> nodeStates(
    client::RestClient& rest, std::chrono::system_clock::time_point since = {}) {
  std::map<std::string, std::pair<std::string, bool>> out;
  auto list = rest.list(client::resources::kNodes, "");
  if (!list.ok()) return out;
  for (const auto& n : (*list)["items"]) {
    std::string ready = "NotReady";
    for (const auto& c : n.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") != "Ready" || c.value("status", "") != "True") continue;
      auto beat = parseRfc3339(c.value("lastHeartbeatTime", ""));
      if (beat && *beat + std::chrono::seconds(1) >= since) ready = "Ready";
    }
    out[n.value("metadata", json::object()).value("name", "")] = {
        ready, !n.value("spec", json::object()).value("podCIDR", "").empty()};
  }
  return out;
}

bool waitNodesReady(const Layout& l, const std::vector<std::string>& names, Clock::time_point t0) {
  client::RestClient rest(adminClientConfig(l));
  std::set<std::string> reported;
  const auto since =
      std::chrono::system_clock::now() -
      std::chrono::duration_cast<std::chrono::system_clock::duration>(Clock::now() - t0);
  bool all = waitFor(std::chrono::seconds(l.flags.timeoutSeconds), [&] {
    auto states = nodeStates(rest, since);
    bool done = true;
    for (const auto& n : names) {
      auto it = states.find(n);
      const bool ok = it != states.end() && it->second.first == "Ready" && it->second.second;
      if (ok && reported.insert(n).second) {
        std::cout << fmt::format("  node {} Ready ({:.1f} s)\n", n,
                                 std::chrono::duration<double>(Clock::now() - t0).count())
                  << std::flush;
      }
      done = done && ok;
    }
    return done;
  });
  return all;
}

// ---- monitoring (addons/monitoring) -----------------------------------------------------------

constexpr const char* kMonitoringNamespace = "monitoring";
constexpr int kPrometheusNodePort = 30090;
constexpr int kDashboardNodePort = 30091;

// A NodePort of the monitoring addon on the first node (any node answers).
std::string monitoringUrl(const Layout& l, const json& state, int nodePort) {
  const json nodes = state.value("nodes", json::array());
  const std::string ip = nodes.empty() ? l.ns->nodeIp(1) : nodes[0].value("ip", "");
  return fmt::format("http://{}:{}", ip, nodePort);
}

// Applies the monitoring addon when the cluster has it; does not wait for Prometheus to be ready
// (its image pull and start go on while the user starts working).
bool startMonitoring(const Layout& l, const json& state) {
  if (!state.value("monitoring", false)) return true;
  auto files = addonManifests("monitoring");
  Status s = files.ok() ? Status::Ok() : files.status();
  if (s.ok()) {
    client::RestClient rest(adminClientConfig(l));
    s = applyManifests(rest, *files);
  }
  if (!s.ok()) {
    std::cerr << "monitoring: " << s.message() << "\n(--no-monitoring starts without it)\n";
    return false;
  }
  std::cout << fmt::format(
      "  monitoring (namespace {}, starting): Prometheus on {}, dashboard on {}\n",
      kMonitoringNamespace, monitoringUrl(l, state, kPrometheusNodePort),
      monitoringUrl(l, state, kDashboardNodePort));
  return true;
}

// ---- the mesh control plane (up --mesh) -----------------------------------------------------

// A cluster meshed with --mesh gets its mesh control plane too (istiod in istio-system, what `mesh
// install-discovery` installs), so sidecars have their configuration streamed from it instead of
// each watching the API server. Waits until it is ready: a sidecar started before istiod answers
// would have no routes until it does.
bool startMeshDiscovery(const Layout& l) {
  if (!l.flags.mesh) return true;
  client::RestClient rest(adminClientConfig(l));
  const std::string caCert = readFile(l.pkiDir() + "/ca.crt");
  const std::string caKey = readFile(l.pkiDir() + "/ca.key");
  Status s =
      caCert.empty() || caKey.empty()
          ? Status::Internal("no ca.crt and ca.key in " + l.pkiDir())
          : mesh::installMeshDiscovery(rest, apiserver::admission::kMeshProxyImage, caCert, caKey);
  if (s.ok()) s = mesh::waitForMeshDiscovery(rest, std::chrono::seconds(l.flags.timeoutSeconds));
  if (!s.ok()) {
    std::cerr << "mesh control plane: " << s.message() << "\n";
    return false;
  }
  std::cout << fmt::format("  mesh control plane: istiod in {}, ready\n", mesh::kMeshRootNamespace);
  return true;
}

// Stops every pod sandbox of a node through its containerd, so no container outlives the node.
void removeContainers(const std::string& nodeDir) {
  const std::string sock = nodeDir + "/containerd/containerd.sock";
  if (!fs::exists(sock)) return;
  kubelet::cri::GrpcRuntime runtime("unix://" + sock);
  if (!runtime.waitReady(std::chrono::seconds(3)).ok()) return;
  auto sandboxes = runtime.listPodSandbox();
  if (!sandboxes.ok()) return;
  for (const auto& sb : *sandboxes) {
    (void)runtime.stopPodSandbox(sb.id());
    (void)runtime.removePodSandbox(sb.id());
  }
}

// Processes whose command line mentions `marker` (shims of a node's containerd), by PID.
std::vector<pid_t> processesMentioning(const std::string& marker) {
  std::vector<pid_t> pids;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string n = e.path().filename().string();
    if (n.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(n);
    if (pid == ::getpid()) continue;
    if (mentionsPath(cmdlineOf(pid), marker)) pids.push_back(pid);
  }
  return pids;
}

void unmountUnder(const std::string& dir) {
  std::ifstream in("/proc/mounts");
  std::vector<std::string> targets;
  std::string dev, target, rest;
  while (in >> dev >> target && std::getline(in, rest))
    if (target.rfind(dir + "/", 0) == 0) targets.push_back(target);
  std::sort(targets.rbegin(), targets.rend());
  for (const auto& t : targets) (void)runProgram({"umount", "-l", t});
}

void removeCgroups(const std::string& relative) {
  for (const auto& ctl : fs::directory_iterator("/sys/fs/cgroup")) {
    const fs::path root = ctl.path() / relative;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    std::vector<fs::path> dirs;
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::end(it); it.increment(ec))
      if (it->is_directory(ec)) dirs.push_back(it->path());
    std::sort(dirs.rbegin(), dirs.rend());
    for (const auto& d : dirs) ::rmdir(d.c_str());
    ::rmdir(root.c_str());
  }
}

// Everything a node had: its agent, its pods' containers, its containerd and shims, mounts,
// cgroups and its network namespace.
void tearDownNode(const Layout& l, const std::string& name, pid_t agentPid) {
  const std::string dir = l.nodeDir(name);
  // SIGKILL: a stopping agent would stop containerd, which is needed to remove the pods.
  stopProcess(agentPid, dir, std::chrono::milliseconds(0), SIGKILL);
  removeContainers(dir);
  const pid_t containerd = readPidFile(dir + "/containerd/containerd.pid");
  stopProcess(containerd, dir, std::chrono::seconds(5));
  for (pid_t p : processesMentioning(dir + "/containerd/"))
    stopProcess(p, dir, std::chrono::seconds(1));
  unmountUnder(dir);
  removeCgroups(fmt::format("minik8s/{}-{}", l.flags.prefix, name));
  // Node-level processes of the agent (dnsmasq, the gateway's nginx) outlive its SIGKILL.
  for (pid_t p : processesMentioning(dir + "/")) stopProcess(p, dir, std::chrono::seconds(2));
  dns::removeNodeResolvConf(l.ns->netnsName(name));
  (void)l.ns->removeNode(name);
}

int down(const Layout& l) {
  json state = readState(l);
  std::cout << "stopping the minik8s cluster in " << l.dataDir << "\n";
  std::set<std::string> done;
  for (const auto& n : state.value("nodes", json::array())) {
    const std::string name = n.value("name", "");
    tearDownNode(l, name, n.value("pid", 0));
    done.insert(name);
    std::cout << "  node " << name << " removed\n";
  }
  // Leftovers of a run whose state was lost: namespaces and node directories.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(l.dataDir + "/nodes", ec)) {
    const std::string name = e.path().filename().string();
    if (done.count(name)) continue;
    tearDownNode(l, name, 0);
    done.insert(name);
  }
  for (const auto& nsName : l.ns->existingNodeNamespaces())
    (void)l.ns->removeNode(nsName.substr(l.flags.prefix.size() + 1));
  // After the pods: the glusterfs mounts, then glusterd, bricks and self-heal daemons by their
  // recorded mount namespaces (also those of a run whose state was lost).
  tearDownGluster(l.dataDir, glusterServers(state));
  stopProcess(state.value("balancerPid", 0), l.dataDir, std::chrono::seconds(2));
  for (const auto& pid : state.value("servers", json::array()))
    stopProcess(pid.get<pid_t>(), l.dataDir, std::chrono::seconds(10));
  stopProcess(state.value("serverPid", 0), l.dataDir, std::chrono::seconds(10));
  for (const auto& pid : state.value("etcd", json::array()))
    stopProcess(pid.get<pid_t>(), l.dataDir, std::chrono::seconds(10));
  stopProcess(state.value("registryPid", 0), l.dataDir, std::chrono::seconds(10));
  // Anything else started for this data directory (a PID lost in a crash of `up` itself).
  for (pid_t p : processesMentioning(l.dataDir))
    if (cmdlineOf(p).find(" cluster ") == std::string::npos)
      stopProcess(p, l.dataDir, std::chrono::seconds(5));
  (void)l.ns->tearDownUnderlay();
  fs::remove(l.statePath(), ec);
  if (l.flags.purge) {
    unmountUnder(l.dataDir);
    fs::remove_all(l.dataDir, ec);
  }
  std::cout << "minik8s cluster stopped" << (l.flags.purge ? " and its data removed" : "") << "\n";
  return 0;
}

bool clusterRunning(const Layout& l, const json& state) {
  if (state.empty() || !ours(state.value("serverPid", 0), l.dataDir) ||
      !ours(state.value("registryPid", 0), l.dataDir))
    return false;
  for (const auto& n : state.value("nodes", json::array()))
    if (!ours(n.value("pid", 0), l.dataDir)) return false;
  for (const char* group : {"servers", "etcd"})
    for (const auto& pid : state.value(group, json::array()))
      if (!ours(pid.get<pid_t>(), l.dataDir)) return false;
  if (l.flags.ha && !ours(state.value("balancerPid", 0), l.dataDir)) return false;
  for (const auto& s : glusterServers(state))
    if (!glusterdRunning(s)) return false;
  if (state.contains("gluster") && !glusterMountAlive(l.volumesDir())) return false;
  return true;
}

// An earlier `up` whose nodes still exist: `up` then restarts only what is not running, so
// running containers are kept (after a crash of the server, an agent or the whole host side).
bool resumable(const Layout& l, const json& state) {
  if (state.empty() || state.value("nodes", json::array()).empty()) return false;
  const auto existing = l.ns->existingNodeNamespaces();
  for (const auto& n : state["nodes"])
    if (std::find(existing.begin(), existing.end(), l.ns->netnsName(n.value("name", ""))) ==
        existing.end())
      return false;
  return true;
}

// The cluster's settings are those of its first `up` until `down`.
void applySavedSettings(ClusterFlags& f, const json& state) {
  f.apiPort = state.value("apiPort", f.apiPort);
  f.registryPort = state.value("registryPort", f.registryPort);
  f.networkBackend = state.value("networkBackend", f.networkBackend);
  f.proxyMode = state.value("proxyMode", f.proxyMode);
  f.datastore = state.value("datastore", f.datastore);
  f.ha = state.value("ha", f.ha);
  f.storage = state.value("storage", std::string("dir"));
  f.servers = state.value("servers", json::array()).size() > 0
                  ? static_cast<int>(state["servers"].size())
                  : f.servers;
  if (f.serverArgs.empty() && state.contains("serverArgs"))
    f.serverArgs = state["serverArgs"].get<std::vector<std::string>>();
}

int status(const Layout& l) {
  json state = readState(l);
  if (state.empty()) {
    std::cout << "no minik8s cluster in " << l.dataDir << "\n";
    return 1;
  }
  auto line = [&](const std::string& what, pid_t pid, const std::string& extra) {
    std::cout << fmt::format("{:<16} {:<8} pid {:<8} {}\n", what,
                             ours(pid, l.dataDir) ? "running" : "stopped", pid, extra);
  };
  if (!l.flags.ha) line("server", state.value("serverPid", 0), l.apiUrl());
  for (int i = 0; l.flags.ha && i < static_cast<int>(state.value("servers", json::array()).size());
       ++i)
    line(fmt::format("server {}", i), state["servers"][i].get<pid_t>(), l.serverUrl(i));
  for (int i = 0; i < static_cast<int>(state.value("etcd", json::array()).size()); ++i)
    line(fmt::format("etcd m{}", i), state["etcd"][i].get<pid_t>(), l.etcdClientUrl(i));
  if (l.flags.ha) line("api balancer", state.value("balancerPid", 0), l.apiUrl());
  line("registry", state.value("registryPid", 0), l.registry());
  std::cout << fmt::format(
      "{:<16} {}\n", "storage",
      l.gluster() ? fmt::format("gluster volume {} at {} ({})", kGlusterVolumeName, l.volumesDir(),
                                glusterMountAlive(l.volumesDir()) ? "mounted" : "not mounted")
                  : "dir " + l.volumesDir());
  for (const auto& s : glusterServers(state))
    std::cout << fmt::format("{:<16} {:<8} pid {:<8} {} {}\n", "glusterd " + s.name,
                             glusterdRunning(s) ? "running" : "stopped", s.pid, s.ip,
                             s.mntns.empty() ? "" : s.mntns.back());
  client::RestClient rest(adminClientConfig(l));
  auto nodes = nodeStates(rest);
  for (const auto& n : state.value("nodes", json::array())) {
    const std::string name = n.value("name", "");
    auto it = nodes.find(name);
    line("agent " + name, n.value("pid", 0),
         fmt::format("{} netns {} node {}", n.value("ip", ""), l.ns->netnsName(name),
                     it == nodes.end() ? "unknown" : it->second.first));
  }
  if (state.value("monitoring", false)) {
    for (const auto& [name, port] :
         {std::pair{"prometheus", kPrometheusNodePort}, {"dashboard", kDashboardNodePort}}) {
      auto deploy = rest.get(client::resources::kDeployments, kMonitoringNamespace, name);
      const int ready = deploy.ok() ? valueAt(*deploy, "/status/readyReplicas", 0) : 0;
      std::cout << fmt::format("{:<16} {:<8} {}\n", name, ready > 0 ? "ready" : "starting",
                               monitoringUrl(l, state, port));
    }
  }
  std::cout << "KUBECONFIG=" << l.kubeconfig() << "\n";
  return clusterRunning(l, state) ? 0 : 1;
}

// Restarts what of a resumable cluster is not running; running agents and containers are kept.
int resume(const Layout& l, json& state, Clock::time_point t0) {
  std::cout << "resuming the minik8s cluster in " << l.dataDir
            << ": starting what is not running\n";
  Status s = l.ns->setUpUnderlay();
  if (!s.ok()) {
    std::cerr << "cannot set up the underlay: " << s.message() << "\n";
    return 1;
  }
  if (l.gluster()) {
    // Restarts a stopped glusterd (it restarts its brick) and remounts dead mounts, so agents
    // that kept running find their volumes again.
    s = startGlusterStorage(l, state);
    for (const auto& n : state["nodes"])
      if (s.ok()) s = mountNodeVolumes(l, n.value("name", ""), n.value("ip", ""));
    if (!s.ok()) {
      std::cerr << "cannot resume the glusterfs storage: " << s.message()
                << "\n(minik8s cluster down, then up, starts it afresh)\n";
      return 1;
    }
  }
  if (!ours(state.value("registryPid", 0), l.dataDir)) {
    auto registry = startRegistry(l, state);
    if (!registry.ok()) {
      std::cerr << "\n" << registry.status().message() << "\n";
      return 1;
    }
  }
  s = startControlPlane(l, state);
  if (!s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  std::vector<std::string> restarted;
  for (auto& n : state["nodes"]) {
    if (ours(n.value("pid", 0), l.dataDir)) continue;
    const std::string name = n.value("name", "");
    auto pid = startNode(l, name, n.value("ip", ""));
    if (!pid.ok()) {
      std::cerr << "cannot restart node " << name << ": " << pid.status().message() << "\n";
      return 1;
    }
    n["pid"] = *pid;
    writeState(l, state);
    restarted.push_back(name);
    std::cout << "  agent of " << name << " restarted\n";
  }
  if (!restarted.empty() && !waitNodesReady(l, restarted, t0)) {
    std::cerr << "restarted nodes did not become Ready; see the logs in " << l.logDir() << "\n";
    return 1;
  }
  std::cout << fmt::format("minik8s resumed in {:.1f} s\n",
                           std::chrono::duration<double>(Clock::now() - t0).count());
  return 0;
}

int up(const Layout& l) {
  const auto t0 = Clock::now();
  json state = readState(l);
  if (clusterRunning(l, state)) {
    std::cout << "a minik8s cluster is already running in " << l.dataDir << "\n";
    return status(l);
  }
  if (resumable(l, state)) return resume(l, state, t0);
  if (!state.empty() || !l.ns->existingNodeNamespaces().empty()) {
    std::cout << "cleaning up what an earlier run left behind\n";
    down(l);
  }
  if (l.gluster()) {
    if (Status g = checkGlusterInstalled(); !g.ok()) {
      std::cerr << g.message() << "\n";
      return 1;
    }
  }
  std::error_code ec;
  fs::create_directories(l.logDir(), ec);
  fs::create_directories(l.serverDir(), ec);
  std::cout << fmt::format(
      "starting a {}-node minik8s cluster in {} (underlay {}, {}, storage {}{})\n", l.flags.nodes,
      l.dataDir, l.flags.underlay, l.flags.networkBackend, l.flags.storage,
      l.flags.ha ? fmt::format(", HA: {} servers on 3 etcd members", l.serverCount()) : "");
  Status s = l.ns->setUpUnderlay();
  if (!s.ok()) {
    std::cerr << "cannot set up the underlay: " << s.message() << "\n";
    return 1;
  }
  state = {{"prefix", l.flags.prefix},
           {"underlay", l.flags.underlay},
           {"networkBackend", l.flags.networkBackend},
           {"proxyMode", l.flags.proxyMode},
           {"apiPort", l.flags.apiPort},
           {"registryPort", l.flags.registryPort},
           {"nodes", json::array()},
           {"datastore", l.flags.datastore},
           {"serverArgs", l.flags.serverArgs},
           {"ha", l.flags.ha},
           {"storage", l.flags.storage},
           {"monitoring", l.flags.monitoring}};
  writeState(l, state);
  if (l.gluster()) {
    if (Status g = startGlusterStorage(l, state); !g.ok()) {
      std::cerr << "\n--storage gluster: " << g.message() << "\n";
      return 1;
    }
  }
  auto registry = startRegistry(l, state);
  if (!registry.ok()) {
    std::cerr << "\n" << registry.status().message() << "\n";
    return 1;
  }
  state["registryPid"] = *registry;
  writeState(l, state);
  s = startControlPlane(l, state);
  if (!s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  std::vector<std::string> names;
  for (int i = 1; i <= l.flags.nodes; ++i) {
    const std::string name = "node-" + std::to_string(i);
    const std::string ip = l.ns->nodeIp(i);
    auto pid = startNode(l, name, ip);
    if (!pid.ok()) {
      std::cerr << "cannot start node " << name << ": " << pid.status().message() << "\n";
      return 1;
    }
    state["nodes"].push_back({{"name", name}, {"ip", ip}, {"index", i}, {"pid", *pid}});
    writeState(l, state);
    names.push_back(name);
  }
  std::cout << "  waiting for " << names.size() << " nodes to be Ready\n" << std::flush;
  if (!waitNodesReady(l, names, t0)) {
    std::cerr << "nodes did not become Ready within " << l.flags.timeoutSeconds
              << " s; see the logs in " << l.logDir() << "\n";
    return 1;
  }
  if (!startMeshDiscovery(l)) return 1;
  if (!startMonitoring(l, state)) return 1;
  std::cout << fmt::format(
      "minik8s is up: {} nodes Ready in {:.1f} s.\n  export KUBECONFIG={}\n  kubectl get nodes -o "
      "wide\n  minik8s cluster status|down --data-dir {}\n",
      names.size(), std::chrono::duration<double>(Clock::now() - t0).count(), l.kubeconfig(),
      l.dataDir);
  return 0;
}

int addNode(const Layout& l) {
  json state = readState(l);
  if (!clusterRunning(l, state)) {
    std::cerr << "no running cluster in " << l.dataDir << " (minik8s cluster up)\n";
    return 1;
  }
  int index = 0;
  std::set<std::string> names;
  for (const auto& n : state["nodes"]) {
    index = std::max(index, n.value("index", 0));
    names.insert(n.value("name", ""));
  }
  ++index;
  const std::string name =
      l.flags.nodeName.empty() ? "node-" + std::to_string(index) : l.flags.nodeName;
  if (names.count(name)) {
    std::cerr << "node " << name << " already exists\n";
    return 1;
  }
  auto extras = nodeConfigExtras(l.flags);
  if (!extras.ok()) {
    std::cerr << extras.status().message() << "\n";
    return 1;
  }
  if (state.contains("networkBackend")) (*extras)["networkBackend"] = state["networkBackend"];
  const auto t0 = Clock::now();
  const std::string ip = l.ns->nodeIp(index);
  auto pid = startNode(l, name, ip, *extras);
  if (!pid.ok()) {
    std::cerr << "cannot start node " << name << ": " << pid.status().message() << "\n";
    return 1;
  }
  state["nodes"].push_back({{"name", name}, {"ip", ip}, {"index", index}, {"pid", *pid}});
  writeState(l, state);
  if (!waitNodesReady(l, {name}, t0)) {
    std::cerr << "node " << name << " did not become Ready; see " << l.logDir() << "\n";
    return 1;
  }
  return 0;
}

int removeNode(const Layout& l) {
  json state = readState(l);
  for (const auto& s : glusterServers(state))
    if (s.name == l.flags.nodeName) {
      std::cerr << "node " << s.name << " holds a brick of the glusterfs volume; removing it is "
                << "not supported (the other nodes can be removed)\n";
      return 1;
    }
  json kept = json::array();
  bool found = false;
  for (const auto& n : state.value("nodes", json::array())) {
    if (n.value("name", "") != l.flags.nodeName) {
      kept.push_back(n);
      continue;
    }
    found = true;
    client::RestClient rest(adminClientConfig(l));
    tearDownNode(l, l.flags.nodeName, n.value("pid", 0));
    // Its containers are gone: remove its pods at once (their controllers recreate them on the
    // other nodes), then the Node, which frees its podCIDR.
    client::ListParams onNode;
    onNode.fieldSelector = "spec.nodeName=" + l.flags.nodeName;
    if (auto pods = rest.list(client::resources::kPods, "", onNode); pods.ok())
      for (const auto& p : (*pods)["items"])
        (void)rest.remove(
            client::resources::kPods, p.value("metadata", json::object()).value("namespace", ""),
            p.value("metadata", json::object()).value("name", ""), json{{"gracePeriodSeconds", 0}});
    (void)dns::removeNodeDnsEndpoint(rest, l.flags.nodeName);
    (void)rest.remove(client::resources::kNodes, "", l.flags.nodeName);
    std::error_code ec;
    fs::remove_all(l.nodeDir(l.flags.nodeName), ec);
  }
  if (!found) {
    std::cerr << "no node " << l.flags.nodeName << " in this cluster\n";
    return 1;
  }
  state["nodes"] = kept;
  writeState(l, state);
  std::cout << "node " << l.flags.nodeName << " removed\n";
  return 0;
}

int runCluster(const std::string& verb, const ClusterFlags& f) {
  initLogging("warn", "cluster");
  if (::geteuid() != 0) {
    std::cerr << "minik8s cluster needs root (network namespaces, containerd)\n";
    return 1;
  }
  auto l = makeLayout(f);
  if (!l.ok()) {
    std::cerr << l.status().message() << "\n";
    return 1;
  }
  ::signal(SIGPIPE, SIG_IGN);
  const json state = readState(*l);
  if (!state.empty() && (verb != "up" || resumable(*l, state))) applySavedSettings(l->flags, state);
  if (l->flags.storage == "auto") {
    // A new cluster: GlusterFS under the default StorageClass when it is installed (a replicated
    // network filesystem, as on real machines), else a host directory, said out loud.
    if (checkGlusterInstalled().ok()) {
      l->flags.storage = "gluster";
    } else {
      l->flags.storage = "dir";
      if (verb == "up") {
        std::cout << "storage: a host directory (--storage dir): GlusterFS is not installed "
                     "(apt-get install glusterfs-server glusterfs-client, or scripts/setup.sh, "
                     "for volumes on a replicated network filesystem)\n";
      }
    }
  }
  if (verb == "up") return up(*l);
  if (verb == "down") return down(*l);
  if (verb == "status") return status(*l);
  if (verb == "add-node") return addNode(*l);
  return removeNode(*l);
}

}  // namespace

void addClusterCommand(CLI::App& app) {
  auto f = std::make_shared<ClusterFlags>();
  CLI::App* cluster = app.add_subcommand(
      "cluster", "A whole cluster on this machine: one network namespace per node");
  cluster->require_subcommand(1);
  auto common = [f](CLI::App* c) {
    c->add_option("--data-dir", f->dataDir, "Where the cluster keeps its state")
        ->capture_default_str();
    c->add_option("--prefix", f->prefix, "Names of the bridge, namespaces and links (1-6 chars)")
        ->capture_default_str();
    c->add_option("--underlay", f->underlay, "The nodes' network; .1 is this host")
        ->capture_default_str();
  };
  auto* upCmd = cluster->add_subcommand("up", "Start (or resume) the cluster and wait until Ready");
  common(upCmd);
  upCmd->add_option("--nodes", f->nodes, "Number of nodes")->capture_default_str();
  upCmd->add_option("--datastore", f->datastore, "sqlite (default) or etcd://host:port[,...]");
  upCmd->add_option("--network-backend", f->networkBackend, "vxlan or host-gw")
      ->capture_default_str();
  upCmd->add_option("--proxy-mode", f->proxyMode,
                    "The nodes' service proxy: iptables or nftables (kube-proxy's modes)")
      ->check(CLI::IsMember({"iptables", "nftables"}))
      ->capture_default_str();
  upCmd->add_option("--api-port", f->apiPort, "API server port")->capture_default_str();
  upCmd->add_option("--registry-port", f->registryPort, "Cluster registry port")
      ->capture_default_str();
  upCmd->add_option("--timeout", f->timeoutSeconds, "Seconds to wait for the nodes")
      ->capture_default_str();
  upCmd->add_option("--server-arg", f->serverArgs,
                    "Extra server flag, repeatable (--server-arg=--log-level=debug)");
  upCmd->add_flag("--mesh", f->mesh,
                  "Mesh every application pod (the server's --mesh, kept as a server flag; "
                  "docs/mesh.md)");
  upCmd->add_flag("--monitoring,!--no-monitoring", f->monitoring,
                  "Run Prometheus and a node exporter on every node (namespace monitoring; on by "
                  "default, kept from the first up)");
  upCmd->add_flag("--ha", f->ha,
                  "HA control plane: 3 etcd members, --servers API servers, a balancer on "
                  "--api-port for kubectl");
  upCmd->add_option("--servers", f->servers, "API servers with --ha")->capture_default_str();
  upCmd
      ->add_option("--storage", f->storage,
                   "Where CSI volumes live: gluster (a replica-3 GlusterFS volume on the first "
                   "nodes, mounted on every node), dir (a host directory), or auto: gluster "
                   "when GlusterFS is installed, else dir (kept from the first up)")
      ->check(CLI::IsMember({"auto", "dir", "gluster"}))
      ->capture_default_str();
  upCmd->callback([f] {
    if (f->mesh) f->serverArgs.push_back("--mesh");
    std::exit(runCluster("up", *f));
  });
  auto* downCmd = cluster->add_subcommand("down", "Stop the cluster and remove what it created");
  common(downCmd);
  downCmd->add_flag("--purge", f->purge, "Also delete the data directory");
  downCmd->callback([f] { std::exit(runCluster("down", *f)); });
  auto* statusCmd = cluster->add_subcommand("status", "Show the components and nodes");
  common(statusCmd);
  statusCmd->callback([f] { std::exit(runCluster("status", *f)); });
  auto* add = cluster->add_subcommand("add-node", "Add a node to the running cluster");
  common(add);
  add->add_option("--name", f->nodeName, "Node name (default node-<n>)");
  add->add_option("--label", f->labels, "Node label key=value (repeatable)");
  add->add_option("--taint", f->taints, "Node taint key[=value]:Effect (repeatable)");
  add->add_option("--capacity", f->capacity,
                  "Advertised capacity resource=quantity, e.g. cpu=1 (repeatable)");
  add->add_option("--timeout", f->timeoutSeconds, "Seconds to wait")->capture_default_str();
  add->callback([f] { std::exit(runCluster("add-node", *f)); });
  // Run by `up --ha` itself: the TCP balancer in front of the API servers.
  auto balancer = std::make_shared<ApiBalancerOptions>();
  auto* balance = cluster->add_subcommand("balance", "TCP balancer in front of the API servers");
  balance->group("");  // internal
  balance->add_option("--data-dir", f->dataDir, "The cluster's data dir (names the process)");
  balance->add_option("--listen", balancer->listen, "host:port")->required();
  balance->add_option("--backend", balancer->backends, "API server URL, repeatable")->required();
  balance->callback([balancer] { std::exit(runApiBalancer(*balancer)); });
  auto* remove = cluster->add_subcommand("remove-node", "Remove a node from the cluster");
  common(remove);
  remove->add_option("name", f->nodeName, "Node name")->required();
  remove->callback([f] { std::exit(runCluster("remove-node", *f)); });
}

}  // namespace minik8s::cli
