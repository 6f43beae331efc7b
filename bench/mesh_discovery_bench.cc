// Mesh discovery: how long an endpoint change takes to reach every one of N proxies, and what
// the proxies cost the API server, for the two designs, measured in the same run against a real
// `minik8s server` (controllers and scheduler off) started from the same build directory:
//
//   discovery  one ConfigWatcher feeding a DiscoveryServer (mesh/discovery_server.h, in process)
//              and N DiscoveryClients on its stream (what sidecars do with --discovery-address)
//   baseline   N ConfigWatchers, each with its own connections: 6 watches per proxy on the API
//              server (what every sidecar did before, --discovery-address=none)
//
// Each round PUTs the Endpoints of one service (a new address) and times until each proxy's
// config holds it: per proxy, and for the last of the N ("every proxy"), p50/p99 over the rounds.
// Also the API server's RSS and CPU seconds over the rounds, and the load average. Reports
// figures, never fails on a time.
//
//   build/bin/mesh_discovery_bench [--proxies 10,50,100] [--services 50] [--rounds 20]
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "common/logging.h"
#include "mesh/config_watcher.h"
#include "mesh/discovery_client.h"
#include "mesh/discovery_server.h"
#include "mesh/mesh_resources.h"
#include "spdlog/spdlog.h"

using namespace std::chrono;
using minik8s::json;
using minik8s::bench::cpuSeconds;
using minik8s::bench::loadAverage;
using minik8s::bench::percentile;
using minik8s::bench::spawn;
namespace client = minik8s::client;
namespace mesh = minik8s::mesh;
namespace res = client::resources;

namespace {

json endpointsOf(int svc, const std::string& extraIp) {
  json addresses = json::array();
  for (int k = 0; k < 2; ++k) {
    std::string pod = "svc" + std::to_string(svc) + "-" + std::to_string(k);
    addresses.push_back(
        {{"ip", "10.1." + std::to_string(svc) + "." + std::to_string(k + 1)},
         {"targetRef", {{"kind", "Pod"}, {"name", pod}, {"namespace", "default"}}}});
  }
  if (!extraIp.empty()) addresses.push_back({{"ip", extraIp}});
  return {
      {"apiVersion", "v1"},
      {"kind", "Endpoints"},
      {"metadata", {{"name", "svc" + std::to_string(svc)}, {"namespace", "default"}}},
      {"subsets", {{{"addresses", addresses}, {"ports", {{{"name", "http"}, {"port", 8080}}}}}}}};
}

// What each proxy has: the addresses of svc0 in its latest config, with the time it arrived.
struct ProxyState {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> svc0;
  void set(const mesh::MeshConfig& c) {
    std::vector<std::string> ips;
    if (const auto* s = c.service("default/svc0"))
      if (const auto* p = s->port(80))
        for (const auto& e : p->endpoints) ips.push_back(e.ip);
    {
      std::lock_guard lock(mu);
      svc0 = std::move(ips);
    }
    cv.notify_all();
  }
  // Waits until svc0 lists `ip`; the time it saw it (or a deadline miss: nullopt).
  bool waitFor(const std::string& ip, steady_clock::time_point deadline) {
    std::unique_lock lock(mu);
    return cv.wait_until(lock, deadline,
                         [&] { return std::find(svc0.begin(), svc0.end(), ip) != svc0.end(); });
  }
};

class AnyServiceAccount : public mesh::DiscoveryAuthenticator {
 public:
  minik8s::Result<mesh::DiscoveryPeer> authenticate(const std::string& token) override {
    if (token != "bench") return minik8s::Status::Unauthorized("not the bench's token");
    return mesh::DiscoveryPeer{"system:serviceaccount:default:bench", {}};
  }
};

struct Result {
  std::vector<double> each, every;  // ms
  int missed = 0;
  double cpu = 0, rssBefore = 0, rssAfter = 0, setupSecs = 0;
};

// `rounds` endpoint changes of svc0, each timed until all of `proxies` have it.
void measure(client::RestClient& rest, std::vector<std::unique_ptr<ProxyState>>& proxies,
             int rounds, int tag, Result& r, pid_t server) {
  double cpu0 = cpuSeconds(server);
  for (int round = 0; round < rounds; ++round) {
    std::string ip = "10.200." + std::to_string(tag) + "." + std::to_string(round + 1);
    json ep = endpointsOf(0, ip);
    auto got = rest.get(res::kEndpoints, "default", "svc0");
    if (got.ok()) ep["metadata"]["resourceVersion"] = (*got)["metadata"]["resourceVersion"];
    auto start = steady_clock::now();
    if (!rest.update(res::kEndpoints, ep).ok()) continue;
    double last = 0;
    for (auto& p : proxies) {
      if (!p->waitFor(ip, start + 10s)) {
        ++r.missed;
        continue;
      }
      double ms = duration<double, std::milli>(steady_clock::now() - start).count();
      r.each.push_back(ms);
      last = std::max(last, ms);
    }
    r.every.push_back(last);
    std::this_thread::sleep_for(100ms);  // the changes do not coalesce
  }
  r.cpu = cpuSeconds(server) - cpu0;
  r.rssAfter = minik8s::bench::rssKiB(server) / 1024.0;
}

void print(const char* design, int n, const Result& r) {
  std::printf(
      "%-10s N=%-4d setup %5.1f s  each proxy p50 %6.1f p99 %6.1f ms  every proxy p50 %6.1f p99 "
      "%6.1f ms  missed %d  apiserver CPU %.2f s  RSS %.0f -> %.0f MiB  load %s\n",
      design, n, r.setupSecs, percentile(r.each, 50), percentile(r.each, 99),
      percentile(r.every, 50), percentile(r.every, 99), r.missed, r.cpu, r.rssBefore, r.rssAfter,
      loadAverage().c_str());
  std::fflush(stdout);
}

Result runDiscovery(const client::ClientConfig& config, int n, int rounds, pid_t server) {
  Result r;
  r.rssBefore = minik8s::bench::rssKiB(server) / 1024.0;
  client::RestClient rest(config);
  auto setupStart = steady_clock::now();
  AnyServiceAccount auth;
  mesh::DiscoveryServer discovery(auth);
  mesh::ConfigWatcher watcher(rest, [&](auto c) { discovery.setConfig(std::move(c)); });
  watcher.start();
  watcher.waitForSync(30s);
  if (!discovery.start("127.0.0.1:0").ok()) return r;
  std::vector<std::unique_ptr<ProxyState>> states;
  std::vector<std::unique_ptr<mesh::DiscoveryClient>> clients;
  for (int i = 0; i < n; ++i) {
    states.push_back(std::make_unique<ProxyState>());
    ProxyState* s = states.back().get();
    mesh::DiscoveryClientOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(discovery.port());
    o.token = [] { return std::string("bench"); };
    o.pod = "default/proxy-" + std::to_string(i);
    clients.push_back(std::make_unique<mesh::DiscoveryClient>(
        o, [s](std::shared_ptr<const mesh::MeshConfig> c) { s->set(*c); }));
    clients.back()->start();
  }
  for (auto& c : clients) c->waitForConfig(30s);
  r.setupSecs = duration<double>(steady_clock::now() - setupStart).count();
  measure(rest, states, rounds, 1, r, server);
  for (auto& c : clients) c->stop();
  discovery.stop();
  watcher.stop();
  return r;
}

Result runBaseline(const client::ClientConfig& config, int n, int rounds, pid_t server) {
  Result r;
  r.rssBefore = minik8s::bench::rssKiB(server) / 1024.0;
  client::RestClient rest(config);
  auto setupStart = steady_clock::now();
  std::vector<std::unique_ptr<ProxyState>> states;
  std::vector<std::unique_ptr<client::RestClient>> rests;
  std::vector<std::unique_ptr<mesh::ConfigWatcher>> watchers;
  for (int i = 0; i < n; ++i) {
    states.push_back(std::make_unique<ProxyState>());
    ProxyState* s = states.back().get();
    rests.push_back(std::make_unique<client::RestClient>(config));
    watchers.push_back(std::make_unique<mesh::ConfigWatcher>(
        *rests.back(), [s](std::shared_ptr<const mesh::MeshConfig> c) { s->set(*c); }));
    watchers.back()->start();
  }
  for (auto& w : watchers) w->waitForSync(60s);
  r.setupSecs = duration<double>(steady_clock::now() - setupStart).count();
  measure(rest, states, rounds, 2, r, server);
  for (auto& w : watchers) w->stop();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> counts = {10, 50, 100};
  int services = 50, rounds = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--proxies" && i + 1 < argc) {
      counts.clear();
      std::stringstream list(argv[++i]);
      for (std::string x; std::getline(list, x, ',');) counts.push_back(std::stoi(x));
    }
    if (a == "--services" && i + 1 < argc) services = std::stoi(argv[++i]);
    if (a == "--rounds" && i + 1 < argc) rounds = std::stoi(argv[++i]);
  }
  signal(SIGPIPE, SIG_IGN);
  spdlog::set_level(spdlog::level::err);
  const std::string binDir = std::filesystem::canonical("/proc/self/exe").parent_path().string();
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("minik8s-mesh-discovery-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const int port = 25000 + (getpid() % 5000);
  pid_t server = spawn({binDir + "/minik8s", "server", "--data-dir", dir + "/server", "--listen",
                        "127.0.0.1:" + std::to_string(port), "--log-level", "warn",
                        "--disable-scheduler", "--disable-controllers"},
                       dir + "/server.log");
  auto cleanup = [&] {
    kill(server, SIGKILL);
    waitpid(server, nullptr, 0);
    std::filesystem::remove_all(dir);
  };
  for (int i = 0; i < 300 && !std::filesystem::exists(dir + "/server/kubeconfig"); ++i)
    std::this_thread::sleep_for(50ms);
  auto config = client::loadKubeconfig(dir + "/server/kubeconfig");
  if (!config.ok()) {
    std::printf("no kubeconfig from the server (see %s/server.log)\n", dir.c_str());
    cleanup();
    return 1;
  }
  client::RestClient rest(*config);
  bool ready = false;
  for (int i = 0; i < 600 && !ready; ++i) {
    ready = rest.request("GET", "/version").ok();
    if (!ready) std::this_thread::sleep_for(50ms);
  }
  if (!ready || !mesh::ensureMeshResources(rest).ok()) {
    std::printf("the server did not start (see %s/server.log)\n", dir.c_str());
    cleanup();
    return 1;
  }
  for (int s = 0; s < services; ++s) {
    for (int k = 0; k < 2; ++k) {
      std::string pod = "svc" + std::to_string(s) + "-" + std::to_string(k);
      rest.create(res::kPods, "default",
                  {{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", {{"name", pod}, {"labels", {{"app", "svc" + std::to_string(s)}}}}},
                   {"spec",
                    {{"automountServiceAccountToken", false},
                     {"containers", {{{"name", "app"}, {"image", "minik8s/python"}}}}}}});
    }
    rest.create(res::kServices, "default",
                {{"apiVersion", "v1"},
                 {"kind", "Service"},
                 {"metadata", {{"name", "svc" + std::to_string(s)}}},
                 {"spec",
                  {{"selector", {{"app", "svc" + std::to_string(s)}}},
                   {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", 8080}}}}}}});
    rest.create(res::kEndpoints, "default", endpointsOf(s, ""));
  }
  std::printf("mesh discovery bench: %d services (2 endpoints each), %d rounds per design\n",
              services, rounds);
  for (int n : counts) {
    print("discovery", n, runDiscovery(*config, n, rounds, server));
    print("baseline", n, runBaseline(*config, n, rounds, server));
  }
  cleanup();
  return 0;
}
