// Proxy sync time for 1,000 services x 3 endpoints: building the iptables-restore document, and
// generation + iptables-restore into a scratch network namespace (the process unshares its own
// before main, so nothing reaches the host's rules; the restore part is skipped when not root).
#include <benchmark/benchmark.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "common/command.h"
#include "fmt/format.h"
#include "proxy/iptables.h"
#include "proxy/proxy_rules.h"
#include "proxy/service_proxy.h"

namespace {

using minik8s::json;
namespace proxy = minik8s::proxy;

bool enterPrivateNetns() {
  ::signal(SIGPIPE, SIG_IGN);
  return ::geteuid() == 0 && ::unshare(CLONE_NEWNET) == 0;
}
const bool kInPrivateNetns = enterPrivateNetns();

struct Cluster {
  std::vector<json> services, slices;
};

// `n` services with one port each and 3 ready endpoints; `generation` shifts one endpoint of
// every tenth service so successive syncs really change rules.
Cluster makeCluster(int n, int generation) {
  Cluster c;
  for (int i = 0; i < n; ++i) {
    std::string name = fmt::format("svc-{}", i);
    c.services.push_back({{"metadata", {{"namespace", "default"}, {"name", name}}},
                          {"spec",
                           {{"type", "ClusterIP"},
                            {"clusterIP", fmt::format("10.96.{}.{}", i / 250, i % 250 + 1)},
                            {"ports", {{{"name", "http"}, {"port", 80}, {"protocol", "TCP"}}}}}}});
    json eps = json::array();
    for (int e = 0; e < 3; ++e) {
      int host = (i * 3 + e + (i % 10 == 0 ? generation : 0)) % 60000;
      eps.push_back({{"addresses", {fmt::format("10.244.{}.{}", host / 250, host % 250 + 1)}},
                     {"conditions", {{"ready", true}}}});
    }
    c.slices.push_back({{"metadata",
                         {{"namespace", "default"},
                          {"name", name + "-abc"},
                          {"labels", {{"kubernetes.io/service-name", name}}}}},
                        {"addressType", "IPv4"},
                        {"endpoints", eps},
                        {"ports", {{{"name", "http"}, {"port", 8080}, {"protocol", "TCP"}}}}});
  }
  return c;
}

void BM_GenerateRules(benchmark::State& state) {
  Cluster c = makeCluster(static_cast<int>(state.range(0)), 0);
  size_t bytes = 0;
  for (auto _ : state) {
    auto rules = proxy::buildProxyRules(c.services, c.slices, {"10.244.0.0/16"}, {});
    bytes = rules.restoreText.size();
    benchmark::DoNotOptimize(rules);
  }
  state.counters["doc_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_GenerateRules)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

// One full sync as the proxy does it: generate, then one iptables-restore --noflush that
// rewrites every chain and deletes the stale ones of the previous generation.
void BM_SyncIntoNetns(benchmark::State& state) {
  if (!kInPrivateNetns) {
    state.SkipWithError("needs root (a private network namespace)");
    return;
  }
  proxy::ExecIptables iptables;
  const int n = static_cast<int>(state.range(0));
  std::set<std::string> existing;
  int generation = 0;
  int rulesWritten = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Cluster c = makeCluster(n, ++generation);
    state.ResumeTiming();
    auto rules = proxy::buildProxyRules(c.services, c.slices, {"10.244.0.0/16"}, existing);
    auto s = iptables.restore(rules.restoreText);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    existing = rules.natChains;
    rulesWritten = rules.servicePorts + rules.endpoints;
  }
  state.counters["service_ports+endpoints"] = rulesWritten;
  if (kInPrivateNetns) (void)proxy::cleanupProxyRules(iptables);
}
BENCHMARK(BM_SyncIntoNetns)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
