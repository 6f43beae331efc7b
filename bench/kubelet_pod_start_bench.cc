// Pod start latency through the node agent, against CRI alone, on the same containerd.
//
// Starts a real `minik8s server`, the cluster registry with the local images and `minik8s agent`
// (with its own containerd) from the same build directory, in a private temp dir. Then:
//   baseline  the same sandbox and container configs the agent would build (PodSyncer's builders),
//             RunPodSandbox + CreateContainer + StartContainer straight through GrpcRuntime on the
//             agent's containerd: 30 one after another, then 30 at once (30 threads);
//   agent     30 single-container pods created through the API one after another (each waits for
//             the previous to run), then 30 created at once; latency = create -> phase Running as
//             seen by a watch.
// Reports p50/p99/max and ratios, plus the agent's VmRSS with 30 pods running. It needs root
// (containerd), cleans up everything it started (pods, sandboxes, processes, mounts, cgroups),
// also when it fails or is interrupted (SIGINT, SIGTERM, SIGHUP), and never fails on a time.
//
//   (from the source root) build/bin/kubelet_pod_start_bench [--pods N] [--recipes images]
//   [--pod-workers N] [--smaps FILE (the agent's /proc/PID/smaps with N pods)]
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "bench_util.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "common/logging.h"
#include "kubelet/cri/grpc_runtime.h"
#include "kubelet/object_source.h"
#include "kubelet/pod_sync.h"
#include "kubelet/pod_util.h"

using namespace std::chrono;
using minik8s::json;
using minik8s::bench::freePort;
using minik8s::bench::pssKiB;
using minik8s::bench::statusKiB;
namespace client = minik8s::client;
namespace kubelet = minik8s::kubelet;
namespace v1 = ::runtime::v1;

namespace {

constexpr const char* kImage = "minik8s/busybox:1.35";
constexpr const char* kNode = "bench-node";

// The server, registry and agent get SIGTERM when the bench dies, so the agent cleans up.
pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  return minik8s::bench::spawn(args, log, {.deathSignal = SIGTERM});
}

void stopProcess(pid_t pid, seconds grace) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  auto end = steady_clock::now() + grace;
  while (steady_clock::now() < end) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(100ms);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

bool waitFor(seconds timeout, const std::function<bool()>& cond) {
  auto end = steady_clock::now() + timeout;
  while (steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

long vmRssKiB(pid_t pid) { return statusKiB(pid, "VmRSS"); }

json podObject(const std::string& name, const std::string& uid = "") {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"bench", "start"}}}}},
      {"spec",
       {{"nodeName", kNode},
        {"terminationGracePeriodSeconds", 1},
        {"containers",
         {{{"name", "c"},
           {"image", kImage},
           {"imagePullPolicy", "IfNotPresent"},
           {"command", {"sleep", "3600"}}}}}}}};
  if (!uid.empty()) pod["metadata"]["uid"] = uid;
  return pod;
}

struct Summary {
  double p50 = 0, p99 = 0, max = 0;
};

// The q-quantile (0..1) of non-empty sorted values: the one at q's rounded position among them.
double quantileOfSorted(const std::vector<double>& sorted, double q) {
  size_t i = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

Summary summarize(std::vector<double> ms) {
  Summary s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.p50 = quantileOfSorted(ms, 0.5);
  s.p99 = quantileOfSorted(ms, 0.99);
  s.max = ms.back();
  return s;
}

// The CRI baseline: the agent's own config builders, minus the pod UID label so the agent's
// housekeeping does not take these sandboxes for leftovers of deleted pods.
class CriBaseline {
 public:
  CriBaseline(kubelet::cri::GrpcRuntime& runtime, client::RestClient& api, const std::string& dir)
      : runtime_(runtime),
        objects_(api),
        volumes_(dir + "/baseline", objects_, clock_),
        probes_(runtime, clock_),
        syncer_(runtime, runtime, volumes_, objects_, probes_, clock_, options(dir)) {}

  // One pod: sandbox, container, start; returns the milliseconds it took (or -1).
  double startOne(int i) {
    json pod = podObject("baseline-" + std::to_string(i), "baseline-uid-" + std::to_string(i));
    auto start = steady_clock::now();
    v1::PodSandboxConfig sc = syncer_.sandboxConfig(pod, 0);
    sc.mutable_labels()->erase(kubelet::kPodUidLabel);
    auto sandbox = runtime_.runPodSandbox(sc);
    if (!sandbox.ok()) {
      std::fprintf(stderr, "baseline sandbox: %s\n", sandbox.status().message().c_str());
      return -1;
    }
    {
      std::lock_guard lock(mu_);
      sandboxes_.push_back(*sandbox);
    }
    std::filesystem::create_directories(sc.log_directory() + "/c");
    auto config = syncer_.containerConfig(pod, pod["spec"]["containers"][0], 0, {}, {}, false);
    if (!config.ok()) {
      std::fprintf(stderr, "baseline container config: %s\n", config.status().message().c_str());
      return -1;
    }
    v1::ContainerConfig cc = std::move(*config);
    cc.mutable_labels()->erase(kubelet::kPodUidLabel);
    auto id = runtime_.createContainer(*sandbox, cc, sc);
    if (!id.ok() || !runtime_.startContainer(*id).ok()) {
      std::fprintf(stderr, "baseline container failed\n");
      return -1;
    }
    return duration<double, std::milli>(steady_clock::now() - start).count();
  }

  void removeAll() {
    for (const auto& s : sandboxes_) {
      v1::ContainerFilter f;
      f.set_pod_sandbox_id(s);
      if (auto cs = runtime_.listContainers(f); cs.ok())
        for (const auto& c : *cs) {
          runtime_.stopContainer(c.id(), 0);
          runtime_.removeContainer(c.id());
        }
      runtime_.stopPodSandbox(s);
      runtime_.removePodSandbox(s);
    }
    sandboxes_.clear();
  }

 private:
  static kubelet::PodSyncerOptions options(const std::string& dir) {
    kubelet::PodSyncerOptions o;
    o.nodeName = kNode;
    o.hostIP = "127.0.0.1";
    o.podLogRoot = dir + "/baseline-logs";
    o.cgroupRoot = std::string("/minik8s/") + kNode + "/baseline";
    return o;
  }

  kubelet::cri::GrpcRuntime& runtime_;
  client::RealClock clock_;
  kubelet::RestClientObjectSource objects_;
  kubelet::VolumeManager volumes_;
  kubelet::ProbeManager probes_;
  kubelet::PodSyncer syncer_;
  std::mutex mu_;
  std::vector<std::string> sandboxes_;
};

// Records when each pod is first seen Running through a watch.
class RunningWatcher {
 public:
  explicit RunningWatcher(const client::ClientConfig& config) : client_(config) {
    thread_ = std::thread([this] {
      client::ListParams p;
      p.labelSelector = "bench=start";
      while (!canceller_.cancelled()) {
        client_.watch(
            client::resources::kPods, "default", p, 300,
            [this](const client::WatchEvent& ev) {
              if (ev.object.value("/status/phase"_json_pointer, std::string()) == "Running") {
                std::lock_guard lock(mu_);
                running_.try_emplace(ev.object.value("/metadata/name"_json_pointer, std::string()),
                                     steady_clock::now());
              }
              return true;
            },
            &canceller_);
      }
    });
  }
  ~RunningWatcher() {
    canceller_.cancel();
    thread_.join();
  }
  std::optional<steady_clock::time_point> runningAt(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = running_.find(name);
    if (it == running_.end()) return std::nullopt;
    return it->second;
  }

 private:
  client::RestClient client_;
  client::WatchCanceller canceller_;
  std::mutex mu_;
  std::map<std::string, steady_clock::time_point> running_;
  std::thread thread_;
};

void report(const char* what, const std::vector<double>& ms, const Summary* baseline) {
  Summary s = summarize(ms);
  std::printf("%-34s n=%-3zu p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms", what, ms.size(), s.p50,
              s.p99, s.max);
  if (baseline && baseline->p50 > 0)
    std::printf("   (x%.2f / x%.2f of CRI)", s.p50 / baseline->p50, s.p99 / baseline->p99);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int pods = 30;
  std::string recipes = "images";  // the image recipes of the source tree (run from its root)
  std::string podWorkers;          // the agent's --pod-workers; its default when empty
  std::string smapsOut;            // where to copy the agent's /proc/PID/smaps with N pods
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--pods") pods = std::atoi(argv[++i]);
    if (std::string(argv[i]) == "--pod-workers") podWorkers = argv[++i];
    if (std::string(argv[i]) == "--recipes") recipes = argv[++i];
    if (std::string(argv[i]) == "--smaps") smapsOut = argv[++i];
  }
  recipes = std::filesystem::absolute(recipes).string();
  if (geteuid() != 0) {
    std::fprintf(stderr, "needs root (containerd)\n");
    return 1;
  }
  minik8s::initLogging("warn", "bench");
  // Interruptions are taken by a thread that cleans up (below), not by the default handlers.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stopSignals, sig);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  const std::string bin =
      (std::filesystem::canonical("/proc/self/exe").parent_path() / "minik8s").string();
  char tmpl[] = "/tmp/minik8s-podstart-bench.XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string agentDir = dir + "/agent";
  const int serverPort = freePort(), registryPort = freePort(), agentPort = freePort();
  const std::string url = "https://127.0.0.1:" + std::to_string(serverPort);
  const bool madeCni0 = std::system("ip link show cni0 >/dev/null 2>&1") != 0;
  // The agent's network (backend none, this namespace) masquerades its pods with one chain.
  const bool madeMasqChain =
      std::system("iptables -w -t nat -S MINIK8S-POD-MASQ >/dev/null 2>&1") != 0;

  pid_t server = spawn({bin, "server", "--data-dir", dir + "/server", "--listen",
                        "127.0.0.1:" + std::to_string(serverPort)},
                       dir + "/server.log");
  pid_t registry =
      spawn({bin, "image", "registry", "--data-dir", dir + "/registry", "--listen",
             "127.0.0.1:" + std::to_string(registryPort), "--push-defaults", "--recipes", recipes},
            dir + "/registry.log");
  pid_t agent = -1;
  // The server writes its admin kubeconfig (TLS, client certificate) once it serves.
  for (int i = 0; i < 300 && !std::filesystem::exists(dir + "/server/kubeconfig"); ++i)
    std::this_thread::sleep_for(50ms);
  client::ClientConfig apiConfig;
  if (auto loaded = client::loadKubeconfig(dir + "/server/kubeconfig"); loaded.ok())
    apiConfig = *loaded;
  else
    apiConfig.servers = url;
  client::RestClient api(apiConfig);
  std::string joinToken;
  std::getline(std::ifstream(dir + "/server/token"), joinToken);
  std::once_flag cleanedUp;
  auto cleanupOnce = [&] {
    client::ListParams p;
    p.labelSelector = "bench=start";
    if (auto list = api.list(client::resources::kPods, "default", p); list.ok()) {
      for (const auto& pod : (*list)["items"])
        api.remove(client::resources::kPods, "default", pod["metadata"]["name"]);
      if (!waitFor(120s, [&] {
            auto l = api.list(client::resources::kPods, "default", p);
            return l.ok() && (*l)["items"].empty();
          }))
        std::fprintf(stderr, "cleanup: the agent did not remove every pod; removing through CRI\n");
    }
    // Whatever sandbox is left on the agent's private containerd (the CRI baseline's, or pods the
    // agent had no time to remove) goes through CRI, so that CNI removes its netns, veth and
    // rules. Before the agent stops: it stops its containerd with it.
    const std::string socket = agentDir + "/containerd/containerd.sock";
    if (std::filesystem::exists(socket)) {
      kubelet::cri::GrpcRuntime leftovers(socket);
      if (leftovers.waitReady(5s).ok()) {
        if (auto sandboxes = leftovers.listPodSandbox(); sandboxes.ok()) {
          for (const auto& s : *sandboxes) {
            if (auto st = leftovers.stopPodSandbox(s.id()); !st.ok())
              std::fprintf(stderr, "cleanup: stop sandbox: %s\n", st.message().c_str());
            (void)leftovers.removePodSandbox(s.id());
          }
        }
      }
    }
    stopProcess(agent, 10s);
    std::string pid = readFile(agentDir + "/containerd/containerd.pid");
    if (!pid.empty()) stopProcess(std::atoi(pid.c_str()), 3s);
    // Last resort for anything CRI could not remove: the shims, the containers' processes (the
    // node's cgroup tree), then the mounts under the private dir.
    std::system(("for p in $(pgrep -f 'containerd-shim.*" + agentDir +
                 "'); do kill -9 $p; done 2>/dev/null; cat $(find /sys/fs/cgroup/pids/minik8s/" +
                 kNode + " -name cgroup.procs) 2>/dev/null | xargs -r kill -9 2>/dev/null; " +
                 "grep ' " + agentDir +
                 "' /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l "
                 "2>/dev/null")
                    .c_str());
    if (madeCni0) std::system("ip link del cni0 2>/dev/null");
    if (madeMasqChain) {
      std::system(
          "iptables -w -t nat -S POSTROUTING | grep -- '-j MINIK8S-POD-MASQ' | sed 's/^-A //' | "
          "while read -r rule; do eval iptables -w -t nat -D \"$rule\"; done; "
          "iptables -w -t nat -F MINIK8S-POD-MASQ; iptables -w -t nat -X MINIK8S-POD-MASQ");
    }
    stopProcess(registry, 3s);
    stopProcess(server, 5s);
    // Whatever still runs from the private dir (a docker-registry whose parent died), and the
    // node's cgroup tree (containerd leaves pod-level directories; rmdir removes only empty ones).
    std::system(
        ("for p in $(pgrep -f '" + dir + "'); do [ $p != $$ ] && kill -9 $p; done 2>/dev/null; " +
         "find /sys/fs/cgroup/*/minik8s/" + kNode + " -depth -type d -exec rmdir {} + 2>/dev/null")
            .c_str());
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) std::fprintf(stderr, "cleanup: %s: %s\n", dir.c_str(), ec.message().c_str());
  };
  auto cleanup = [&] { std::call_once(cleanedUp, cleanupOnce); };
  std::thread([&] {
    int sig = 0;
    sigwait(&stopSignals, &sig);
    std::fprintf(stderr, "signal %d: cleaning up\n", sig);
    cleanup();
    _exit(128 + sig);
  }).detach();

  bool ok = waitFor(120s, [&] {
    return readFile(dir + "/registry.log").find("registry ready") != std::string::npos;
  });
  ok = ok &&
       waitFor(30s, [&] { return api.get(client::resources::kNamespaces, "", "default").ok(); });
  if (ok) {
    std::ofstream(dir + "/node.yaml") << "address: 127.0.0.1\n";
    std::vector<std::string> agentArgs = {bin,
                                          "agent",
                                          "--server",
                                          url,
                                          "--token",
                                          joinToken,
                                          "--ca-file",
                                          dir + "/server/pki/ca.crt",
                                          "--node-name",
                                          kNode,
                                          "--data-dir",
                                          agentDir,
                                          "--config",
                                          dir + "/node.yaml",
                                          "--registry",
                                          "127.0.0.1:" + std::to_string(registryPort),
                                          "--listen",
                                          "127.0.0.1:" + std::to_string(agentPort),
                                          "--log-level",
                                          "warn",
                                          "--network-backend",
                                          "none",
                                          "--disable-proxy",
                                          "--disable-dns"};
    if (!podWorkers.empty()) agentArgs.insert(agentArgs.end(), {"--pod-workers", podWorkers});
    agent = spawn(agentArgs, dir + "/agent.log");
    ok = waitFor(60s, [&] { return api.get(client::resources::kNodes, "", kNode).ok(); });
  }
  if (!ok) {
    std::fprintf(stderr, "the server, registry or agent did not start; logs:\n");
    for (const char* log : {"/server.log", "/registry.log", "/agent.log"})
      std::fprintf(stderr, "--- %s\n%s\n", log, readFile(dir + log).c_str());
    cleanup();
    return 1;
  }

  kubelet::cri::GrpcRuntime runtime(agentDir + "/containerd/containerd.sock");
  runtime.waitReady(30s);
  v1::ImageSpec image;
  image.set_image(kImage);
  if (auto pulled = runtime.pullImage(image); !pulled.ok())
    std::fprintf(stderr, "pull %s: %s\n", kImage, pulled.status().message().c_str());
  long rssIdle = vmRssKiB(agent);

  std::printf("pod start latency, %d pods each, one node (containerd %s)\n", pods,
              runtime.version().ok() ? runtime.version()->runtime_version().c_str() : "?");
  // One after another, CRI and agent interleaved so that drift in the machine's load (it is
  // shared) weighs on both alike.
  CriBaseline baseline(runtime, api, dir);
  RunningWatcher watcher(apiConfig);
  std::this_thread::sleep_for(500ms);  // the watch is open
  auto measure = [&](const std::string& name, steady_clock::time_point created) -> double {
    if (!waitFor(120s, [&] { return watcher.runningAt(name).has_value(); })) return -1;
    return duration<double, std::milli>(*watcher.runningAt(name) - created).count();
  };
  std::vector<double> criSeq, criPar(static_cast<size_t>(pods), -1), agentSeq, agentPar;
  // Each pod's agent time minus the CRI time of the pod started just before it: the agent's own
  // share, with the machine's drift between runs (CRI's p50 moves 10%) mostly cancelled.
  std::vector<double> seqGap;
  for (int i = 0; i < pods; ++i) {
    criSeq.push_back(baseline.startOne(i));
    std::string name = "seq-" + std::to_string(i);
    auto created = steady_clock::now();
    if (!api.create(client::resources::kPods, "default", podObject(name)).ok()) continue;
    agentSeq.push_back(measure(name, created));
    if (criSeq.back() >= 0 && agentSeq.back() >= 0)
      seqGap.push_back(agentSeq.back() - criSeq.back());
  }
  baseline.removeAll();
  // All at once: CRI from 30 threads, latency from the common start.
  {
    std::vector<std::thread> threads;
    auto start = steady_clock::now();
    std::vector<steady_clock::time_point> done(static_cast<size_t>(pods));
    for (int i = 0; i < pods; ++i)
      threads.emplace_back([&, i] {
        baseline.startOne(pods + i);
        done[static_cast<size_t>(i)] = steady_clock::now();
      });
    for (auto& t : threads) t.join();
    for (int i = 0; i < pods; ++i)
      criPar[static_cast<size_t>(i)] =
          duration<double, std::milli>(done[static_cast<size_t>(i)] - start).count();
  }
  baseline.removeAll();
  std::erase(criSeq, -1.0);
  long rssSeq = vmRssKiB(agent);
  long anonSeq = statusKiB(agent, "RssAnon"), fileSeq = statusKiB(agent, "RssFile");
  long pssSeq = pssKiB(agent);
  if (!smapsOut.empty())  // each mapping's share of the RSS above, for reading later
    std::ofstream(smapsOut) << readFile("/proc/" + std::to_string(agent) + "/smaps");
  {
    std::vector<std::string> names;
    auto created = steady_clock::now();
    std::vector<std::thread> creators;
    for (int t = 0; t < 4; ++t)
      creators.emplace_back([&, t] {
        client::RestClient c(apiConfig);
        for (int i = t; i < pods; i += 4)
          c.create(client::resources::kPods, "default", podObject("par-" + std::to_string(i)));
      });
    for (auto& t : creators) t.join();
    for (int i = 0; i < pods; ++i) agentPar.push_back(measure("par-" + std::to_string(i), created));
  }
  std::this_thread::sleep_for(3s);  // a few relists and status writes with 2x pods running
  long rssPar = vmRssKiB(agent);
  std::erase(agentSeq, -1.0);
  std::erase(agentPar, -1.0);

  Summary seqBase = summarize(criSeq), parBase = summarize(criPar);
  report("CRI direct, one after another", criSeq, nullptr);
  report("agent, one after another", agentSeq, &seqBase);
  if (!seqGap.empty()) {
    std::sort(seqGap.begin(), seqGap.end());
    std::printf("agent minus CRI, pod by pod          p25 %7.1f ms  p50 %7.1f ms  p75 %7.1f ms\n",
                quantileOfSorted(seqGap, 0.25), quantileOfSorted(seqGap, 0.5),
                quantileOfSorted(seqGap, 0.75));
  }
  report("CRI direct, all at once", criPar, nullptr);
  report("agent, all at once", agentPar, &parBase);
  std::printf("agent VmRSS: %ld KiB idle, %ld KiB with %d pods, %ld KiB with %d pods\n", rssIdle,
              rssSeq, pods, rssPar, 2 * pods);
  // What the RSS is: the binary's pages in memory (file) and the agent's own data (anonymous).
  std::printf(
      "agent with %d pods: RssAnon %ld KiB, RssFile %ld KiB, Pss %ld KiB; with %d pods: %ld / "
      "%ld / %ld KiB, %ld threads\n",
      pods, anonSeq, fileSeq, pssSeq, 2 * pods, statusKiB(agent, "RssAnon"),
      statusKiB(agent, "RssFile"), pssKiB(agent), statusKiB(agent, "Threads"));
  std::fflush(stdout);
  cleanup();
  return 0;
}
