// Sidecar memory: RSS of the sidecar idle and under load, for `minik8s mesh-proxy` (the whole
// minik8s binary, what the sidecar image ran until issue 18) and for `minik8s-mesh-proxy
// mesh-proxy` (the mesh-proxy image's own binary, linked from the mesh, client and common rooms
// only: what meshed pods run now), the same command line, measured in the same run under the
// same load.
//
// The whole bench runs in a network namespace of its own (unshare, loopback only): a
// DiscoveryServer streaming a registry of --services services (2 endpoints each) plus `web`
// (virtual IP 10.96.0.10:80, its endpoint a loopback HTTP server), the two sidecars one after
// the other, and an iptables nat rule redirecting 10.96.0.10:80 to the sidecar's outbound port,
// as a meshed pod's rules do; `wrk -c 50` sends HTTP/1.1 to the virtual IP through it.
// Reports RSS (and its anonymous part) idle after the config arrived, the most seen under load,
// the requests per second, the ratio of the two, and the load average. Never fails on a figure.
// Needs root.
//
//   build/bin/mesh_sidecar_rss_bench [--services 50] [--connections 50] [--seconds 5] [--rounds 2]
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "common/http.h"
#include "common/http_client.h"
#include "mesh/discovery_server.h"
#include "spdlog/spdlog.h"

using namespace std::chrono;
using minik8s::json;
using minik8s::bench::freePort;
using minik8s::bench::loadAverage;
using minik8s::bench::spawn;
namespace mesh = minik8s::mesh;
namespace http = minik8s::http;

namespace {

constexpr char kVip[] = "10.96.0.10";

// VmRSS and RssAnon in MiB.
std::pair<double, double> rssOf(pid_t pid) {
  return {minik8s::bench::rssKiB(pid) / 1024.0, minik8s::bench::statusKiB(pid, "RssAnon") / 1024.0};
}

int run(const std::string& cmd) { return std::system(cmd.c_str()); }

class BenchToken : public mesh::DiscoveryAuthenticator {
 public:
  minik8s::Result<mesh::DiscoveryPeer> authenticate(const std::string& token) override {
    if (token != "bench") return minik8s::Status::Unauthorized("not the bench's token");
    return mesh::DiscoveryPeer{"system:serviceaccount:default:bench", {}};
  }
};

std::shared_ptr<const mesh::MeshConfig> registry(int services, int backendPort) {
  std::vector<json> svcs, eps, pods;
  auto add = [&](const std::string& name, const std::string& vip,
                 const std::vector<std::pair<std::string, int>>& addresses) {
    svcs.push_back({{"metadata", {{"name", name}, {"namespace", "default"}}},
                    {"spec",
                     {{"clusterIP", vip},
                      {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", 8080}}}}}}});
    json subsets = json::array();
    for (size_t k = 0; k < addresses.size(); ++k) {
      std::string pod = name + "-" + std::to_string(k);
      pods.push_back(
          {{"metadata", {{"name", pod}, {"namespace", "default"}, {"labels", {{"app", name}}}}},
           {"spec", {{"containers", {{{"name", "app"}}}}}},
           {"status", {{"phase", "Running"}, {"podIP", addresses[k].first}}}});
      subsets.push_back(
          {{"addresses",
            {{{"ip", addresses[k].first},
              {"targetRef", {{"kind", "Pod"}, {"name", pod}, {"namespace", "default"}}}}}},
           {"ports", {{{"name", "http"}, {"port", addresses[k].second}}}}});
    }
    eps.push_back({{"metadata", {{"name", name}, {"namespace", "default"}}}, {"subsets", subsets}});
  };
  add("web", kVip, {{"10.244.0.5", backendPort}});
  for (int s = 0; s < services; ++s) {
    std::string mid = std::to_string(s / 250) + "." + std::to_string(s % 250 + 1);
    add("svc" + std::to_string(s), "10.97." + mid, {{"10.1." + mid, 8080}, {"10.2." + mid, 8080}});
  }
  return mesh::buildMeshConfig({.services = svcs, .endpoints = eps, .pods = pods}, 1);
}

struct Figures {
  double idleRss = 0, idleAnon = 0, loadRss = 0, loadAnon = 0, afterRss = 0, rps = 0;
  bool ok = false;
};

Figures measure(const std::vector<std::string>& args, int out, int metrics, int connections,
                int seconds, const std::string& log) {
  Figures f;
  run("iptables -t nat -F OUTPUT");
  run("iptables -t nat -A OUTPUT -p tcp -d " + std::string(kVip) +
      " --dport 80 -m owner ! --uid-owner 1337 -j REDIRECT --to-ports " + std::to_string(out));
  // The proxy's UID, which the nat rule leaves alone (as mesh-init's rules do): its own
  // connections to a virtual IP (TCP pass-through) are not sent back to itself.
  pid_t pid = spawn(args, log, {.uid = 1337});
  http::Client c("http://127.0.0.1:" + std::to_string(metrics));
  for (int i = 0; i < 200 && !f.ok; ++i) {
    std::this_thread::sleep_for(50ms);
    auto r = c.get("/registry");
    f.ok = r.ok() && r->status == 200 && r->body.find("\"web\"") != std::string::npos;
  }
  if (!f.ok) {
    std::printf("the sidecar got no config (see %s)\n", log.c_str());
  } else {
    std::this_thread::sleep_for(2s);
    std::tie(f.idleRss, f.idleAnon) = rssOf(pid);
    std::atomic<bool> done{false};
    std::thread sampler([&] {
      while (!done) {
        auto [rss, anon] = rssOf(pid);
        f.loadRss = std::max(f.loadRss, rss);
        f.loadAnon = std::max(f.loadAnon, anon);
        std::this_thread::sleep_for(100ms);
      }
    });
    std::string wrk = "wrk -t 2 -c " + std::to_string(connections) + " -d " +
                      std::to_string(seconds) + "s http://" + kVip + "/ 2>&1";
    FILE* p = popen(wrk.c_str(), "r");
    char buf[512];
    std::string text;
    while (p && fgets(buf, sizeof buf, p)) text += buf;
    if (p) pclose(p);
    done = true;
    sampler.join();
    std::this_thread::sleep_for(2s);
    f.afterRss = rssOf(pid).first;
    auto at = text.find("Requests/sec:");
    if (at == std::string::npos || getenv("BENCH_DEBUG")) std::printf("  wrk: %s", text.c_str());
    if (at != std::string::npos) f.rps = std::stod(text.substr(at + 13));
    if (text.find("Non-2xx") != std::string::npos ||
        text.find("Socket errors") != std::string::npos)
      std::printf("  wrk: %s", text.substr(text.find("requests in")).c_str());
  }
  if (getenv("BENCH_DEBUG"))
    run("tail -5 " + log + "; curl -s -m 2 http://" + std::string(kVip) + "/ -v 2>&1 | tail -5");
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return f;
}

void print(const char* name, const Figures& f) {
  std::printf(
      "%-34s idle RSS %5.1f MiB (anon %4.1f)  under load max RSS %5.1f MiB (anon %4.1f)  2 s "
      "after %5.1f MiB  %6.0f req/s  load %s\n",
      name, f.idleRss, f.idleAnon, f.loadRss, f.loadAnon, f.afterRss, f.rps, loadAverage().c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int services = 50, connections = 50, seconds = 5, rounds = 2;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--services") services = std::stoi(argv[++i]);
    if (a == "--connections") connections = std::stoi(argv[++i]);
    if (a == "--seconds") seconds = std::stoi(argv[++i]);
    if (a == "--rounds") rounds = std::stoi(argv[++i]);
  }
  signal(SIGPIPE, SIG_IGN);
  spdlog::set_level(spdlog::level::warn);
  if (unshare(CLONE_NEWNET) != 0) {
    std::perror("unshare(CLONE_NEWNET) (needs root)");
    return 1;
  }
  run("ip link set lo up");
  // A route to the virtual IP, as a pod has (its default route): nat OUTPUT runs after routing.
  run("ip route add 10.96.0.0/16 dev lo");
  run("ip addr add 10.244.0.5/32 dev lo");  // the backend pod's address
  const std::string binDir = std::filesystem::canonical("/proc/self/exe").parent_path().string();
  const std::string dir =
      std::filesystem::temp_directory_path() / ("minik8s-sidecar-rss-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir + "/sa");
  std::ofstream(dir + "/sa/token") << "bench\n";

  http::Server backend([](const http::Request&, http::ResponseWriter& w) {
    w.send(http::Response::text(200, "ok\n"));
  });
  if (!backend.start("10.244.0.5:0").ok()) return 1;
  BenchToken auth;
  mesh::DiscoveryServer discovery(auth);
  discovery.setConfig(registry(services, backend.port()));
  if (!discovery.start("127.0.0.1:0").ok()) return 1;
  const std::string url = "http://127.0.0.1:" + std::to_string(discovery.port());
  std::printf("sidecar RSS bench: %d services, wrk -c %d for %d s through each sidecar\n", services,
              connections, seconds);

  // The same sidecar command line for both binaries: plain text (no workload certificate), the
  // configuration from the discovery stream.
  auto sidecar = [&](const std::string& binary, const std::string& name) {
    int out = freePort(), in = freePort(), metrics = freePort();
    return measure({binDir + "/" + binary, "mesh-proxy", "--discovery-address", url, "--no-mtls",
                    "--server", "http://127.0.0.1:1", "--service-account-dir", dir + "/sa",
                    "--outbound-port", std::to_string(out), "--inbound-port", std::to_string(in),
                    "--metrics-port", std::to_string(metrics), "--drain-duration", "0s"},
                   out, metrics, connections, seconds, dir + "/" + name + ".log");
  };
  // Rounds alternate which binary goes first (whole, small, then small, whole, ...), so neither
  // always runs second on a machine whose load has changed; the ratio is of the sums.
  Figures whole, small;
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      bool isWhole = (k == 0) == (round % 2 == 0);
      Figures f = isWhole ? sidecar("minik8s", "whole") : sidecar("minik8s-mesh-proxy", "small");
      print(isWhole ? "minik8s mesh-proxy (whole binary)" : "minik8s-mesh-proxy mesh-proxy", f);
      Figures& sum = isWhole ? whole : small;
      sum.ok = (round == 0 || sum.ok) && f.ok;
      sum.idleRss += f.idleRss;
      sum.loadRss += f.loadRss;
      sum.rps += f.rps;
    }
  }
  if (whole.ok && small.ok) {
    std::printf("minik8s-mesh-proxy / minik8s: idle RSS %.2f, RSS under load %.2f, req/s %.2f\n",
                small.idleRss / whole.idleRss, small.loadRss / whole.loadRss,
                small.rps / whole.rps);
  }
  discovery.stop();
  backend.stop();
  std::filesystem::remove_all(dir);
  return 0;
}
