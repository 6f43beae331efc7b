// Scheduler throughput: pods bound per second with 100 Node objects (Ready, 4 cpu / 8Gi each, no
// agent serves them) and 3,000 pending pods, against a real `minik8s server` started from the
// same build directory with its own scheduler and controllers off (as apiserver_api_bench does:
// the bench links only the scheduler room).
// Also reported, measured in the same run: the scheduling algorithm alone (framework + cache, no
// API calls), and as the baseline the rate of raw POST pods/binding calls with the same
// concurrency and no scheduling decision. Reports figures, never fails on a time.
//
//   build/bin/scheduler_throughput_bench [--nodes N] [--pods N] [--no-token-volume]
//                                        [--bind-workers N]
// --bind-workers: the scheduler's parallel bindings (its default otherwise); the raw-binding
// baseline always posts with the same number of threads.
// --no-token-volume: pods say automountServiceAccountToken: false, so the ServiceAccount admission
// adds no projected token volume (smaller pods, as before service accounts existed).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "bench_util.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "common/logging.h"
#include "scheduler/scheduler.h"
#include "spdlog/spdlog.h"

using namespace std::chrono;
using minik8s::json;
using minik8s::bench::cpuSeconds;
using minik8s::bench::removeStaleRunDirs;
using minik8s::bench::spawn;
namespace client = minik8s::client;
namespace sched = minik8s::scheduler;

namespace {

// Pods are created for this scheduler name so a scheduler inside the server leaves them alone.
constexpr const char* kBenchScheduler = "bench-scheduler";

json nodeObject(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", "node-" + std::to_string(i)},
            {"labels", {{"kubernetes.io/hostname", "node-" + std::to_string(i)}}}}}};
}

json nodeStatus() {
  json res = {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}};
  return {{"status",
           {{"capacity", res},
            {"allocatable", res},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

// Pods of 30 "ReplicaSets" so that SelectorSpread has work to do.
json podObject(const std::string& name, int i, const std::string& schedulerName,
               bool mountToken = true) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"labels", {{"app", "rs-" + std::to_string(i % 30)}}},
                {"ownerReferences",
                 {{{"apiVersion", "apps/v1"},
                   {"kind", "ReplicaSet"},
                   {"name", "rs-" + std::to_string(i % 30)},
                   {"uid", "00000000-0000-0000-0000-0000000000" + std::to_string(10 + i % 30)},
                   {"controller", true}}}}}},
              {"spec",
               {{"schedulerName", schedulerName},
                {"containers",
                 {{{"name", "c"},
                   {"image", "busybox"},
                   {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}}}}}}};
  if (!mountToken) pod["spec"]["automountServiceAccountToken"] = false;
  return pod;
}

// Runs fn(i) for i in [0, n) on `threads` threads; returns the failures.
int parallel(int n, int threads, const std::function<bool(int)>& fn) {
  std::atomic<int> next{0}, failures{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        if (!fn(i)) ++failures;
      }
    });
  }
  for (auto& t : ts) t.join();
  return failures;
}

void benchAlgorithm(int nodes, int pods) {
  sched::SchedulerCache cache;
  for (int i = 0; i < nodes; ++i) {
    json n = nodeObject(i);
    n.update(nodeStatus());
    cache.addOrUpdateNode(n);
  }
  std::vector<sched::PodInfo> infos;
  for (int i = 0; i < pods; ++i) {
    infos.push_back(sched::makePodInfo(podObject("p-" + std::to_string(i), i, kBenchScheduler)));
  }
  auto fw = sched::Framework::withDefaultPlugins(sched::Policy::kDefault, 1);
  auto start = steady_clock::now();
  int placed = 0;
  for (auto& info : infos) {
    auto r = cache.withView([&](const sched::ClusterView& v) { return fw->schedule(info, v); });
    if (r.nodeName.empty()) continue;
    ++placed;
    cache.assumePod(std::move(info), r.nodeName);
  }
  double secs = duration<double>(steady_clock::now() - start).count();
  std::printf(
      "algorithm only (filters + scores + assume): %d pods on %d nodes in %.3f s = %.0f pods/s\n",
      placed, nodes, secs, placed / secs);
}

void benchApi(const std::string& binDir, const std::string& dir, int nodes, int pods,
              bool mountToken, int bindWorkers) {
  const int port = 20000 + (getpid() % 5000) * 4 + 1;
  pid_t server = spawn({binDir + "/minik8s", "server", "--data-dir", dir + "/server", "--listen",
                        "127.0.0.1:" + std::to_string(port), "--log-level", "warn",
                        "--disable-scheduler", "--disable-controllers"},
                       dir + "/server.log");
  // The server writes its admin kubeconfig (TLS, client certificate) once it serves.
  for (int i = 0; i < 300 && !std::filesystem::exists(dir + "/server/kubeconfig"); ++i)
    std::this_thread::sleep_for(50ms);
  auto config = client::loadKubeconfig(dir + "/server/kubeconfig");
  if (!config.ok()) {
    std::printf("no kubeconfig from the server (see %s/server.log)\n", dir.c_str());
    kill(server, SIGKILL);
    waitpid(server, nullptr, 0);
    return;
  }
  client::RestClient rest(*config);
  bool ready = false;
  for (int i = 0; i < 600 && !ready; ++i) {
    ready = rest.request("GET", "/version").ok();  // JSON (/readyz answers plain "ok")
    if (!ready) std::this_thread::sleep_for(50ms);
  }
  if (!ready) {
    std::printf("the server did not start (see %s/server.log)\n", dir.c_str());
    kill(server, SIGKILL);
    waitpid(server, nullptr, 0);
    return;
  }
  // No controllers run, so nothing creates the default ServiceAccount pods need.
  rest.create(
      client::resources::kServiceAccounts, "default",
      {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "default"}}}});
  int failed = parallel(nodes, 8, [&](int i) {
    return rest.create(client::resources::kNodes, "", nodeObject(i)).ok() &&
           rest.patch(client::resources::kNodes, "", "node-" + std::to_string(i), nodeStatus(),
                      "merge", "status")
               .ok();
  });
  auto createStart = steady_clock::now();
  failed += parallel(pods, 8, [&](int i) {
    return rest
        .create(client::resources::kPods, "default",
                podObject("p-" + std::to_string(i), i, kBenchScheduler, mountToken))
        .ok();
  });
  double createSecs = duration<double>(steady_clock::now() - createStart).count();
  std::printf("setup: %d nodes, %d pending pods created in %.1f s (%d failures)\n", nodes, pods,
              createSecs, failed);

  sched::SchedulerOptions opts;
  opts.schedulerName = kBenchScheduler;
  if (bindWorkers > 0) opts.bindWorkers = bindWorkers;
  std::optional<sched::Scheduler> scheduler;
  scheduler.emplace(rest, opts);
  const double serverCpu0 = cpuSeconds(server), benchCpu0 = cpuSeconds(getpid());
  auto start = steady_clock::now();
  scheduler->start();
  while (scheduler->stats().bound < static_cast<uint64_t>(pods) &&
         steady_clock::now() - start < 300s) {
    std::this_thread::sleep_for(5ms);
  }
  double secs = duration<double>(steady_clock::now() - start).count();
  // CPU per bound pod up to here; the Scheduled Events still queued are written below, after.
  const double serverCpuMs = 1000 * (cpuSeconds(server) - serverCpu0);
  const double benchCpuMs = 1000 * (cpuSeconds(getpid()) - benchCpu0);
  auto st = scheduler->stats();
  scheduler->stop();
  // Its Scheduled Events still queued are written now, while the server is up and before the
  // baseline runs (they were written at exit, to a killed server).
  scheduler.reset();
  std::map<std::string, int> perNode;
  auto list = rest.list(client::resources::kPods, "default");
  if (list.ok()) {
    for (const auto& p : (*list)["items"]) {
      ++perNode[p.value("/spec/nodeName"_json_pointer, std::string())];
    }
  }
  int minPods = pods, maxPods = 0;
  for (int i = 0; i < nodes; ++i) {
    int c = perNode["node-" + std::to_string(i)];
    minPods = std::min(minPods, c);
    maxPods = std::max(maxPods, c);
  }
  const double rate = st.bound / secs;
  std::printf(
      "scheduler (list + watch + schedule + bind + Scheduled event): %lu pods bound in "
      "%.2f s = %.0f pods/s (attempts %lu, bind errors %lu; %d..%d pods per node)\n",
      static_cast<unsigned long>(st.bound), secs, rate, static_cast<unsigned long>(st.attempts),
      static_cast<unsigned long>(st.bindErrors), minPods, maxPods);
  std::printf(
      "  CPU per bound pod: server %.3f ms, scheduler process (informer, decisions, binding and "
      "Event clients) %.3f ms\n",
      serverCpuMs / std::max<uint64_t>(st.bound, 1), benchCpuMs / std::max<uint64_t>(st.bound, 1));

  // Baseline: the same number of bindings posted directly, round-robin, same concurrency.
  failed = parallel(pods, 8, [&](int i) {
    return rest
        .create(client::resources::kPods, "default",
                podObject("raw-" + std::to_string(i), i, "nobody", mountToken))
        .ok();
  });
  const double rawServerCpu0 = cpuSeconds(server), rawBenchCpu0 = cpuSeconds(getpid());
  auto rawStart = steady_clock::now();
  failed += parallel(pods, opts.bindWorkers, [&](int i) {
    json binding = {{"apiVersion", "v1"},
                    {"kind", "Binding"},
                    {"metadata", {{"name", "raw-" + std::to_string(i)}}},
                    {"target", {{"kind", "Node"}, {"name", "node-" + std::to_string(i % nodes)}}}};
    return rest
        .createSubresource(client::resources::kPods, "default", "raw-" + std::to_string(i),
                           "binding", binding)
        .ok();
  });
  double rawSecs = duration<double>(steady_clock::now() - rawStart).count();
  const double rawServerCpuMs = 1000 * (cpuSeconds(server) - rawServerCpu0) / pods;
  const double rawBenchCpuMs = 1000 * (cpuSeconds(getpid()) - rawBenchCpu0) / pods;
  const double rawRate = pods / rawSecs;
  std::printf(
      "baseline raw POST pods/binding, %d threads, no decisions: %.0f bindings/s "
      "(%d failures)  [baseline]\n",
      opts.bindWorkers, rawRate, failed);
  std::printf("  CPU per binding: server %.3f ms, posting process %.3f ms\n", rawServerCpuMs,
              rawBenchCpuMs);
  std::printf("scheduler / raw binding ratio: %.2f (load %s)\n", rate / rawRate,
              minik8s::bench::loadAverage().c_str());
  kill(server, SIGKILL);
  waitpid(server, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 100, pods = 3000;
  bool mountToken = true;
  int bindWorkers = 0;  // the scheduler's default
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--nodes" && i + 1 < argc) nodes = std::stoi(argv[++i]);
    if (a == "--pods" && i + 1 < argc) pods = std::stoi(argv[++i]);
    if (a == "--no-token-volume") mountToken = false;
    if (a == "--bind-workers" && i + 1 < argc) bindWorkers = std::stoi(argv[++i]);
  }
  signal(SIGPIPE, SIG_IGN);
  spdlog::set_level(spdlog::level::warn);
  const std::string binDir = std::filesystem::canonical("/proc/self/exe").parent_path().string();
  const std::string dir =
      std::filesystem::temp_directory_path() / ("minik8s-sched-bench-" + std::to_string(getpid()));
  removeStaleRunDirs("minik8s-sched-bench-");
  std::filesystem::create_directories(dir);
  benchAlgorithm(nodes, pods);
  benchApi(binDir, dir, nodes, pods, mountToken, bindWorkers);
  std::filesystem::remove_all(dir);
  return 0;
}
