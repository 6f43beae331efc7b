// Proxy sync time for 1,000 services x 3 endpoints, in a scratch network namespace (the process
// unshares its own before main, so nothing reaches the host's rules; the iptables parts are
// skipped when not root):
//   BM_GenerateRules      building the documents (no iptables)
//   BM_FullSync           a full sync as the proxy does it: copies of the informer caches,
//                         generation, one iptables-restore of every chain
//   BM_RestoreFullDocument           baseline: iptables-restore of that same document alone
//   BM_RestorePreviousOrderDocument  baseline: iptables-restore of the same rules in the order
//                                    the proxy wrote them before (as kube-proxy does)
//   BM_PartialSyncOneEndpointChange  one endpoint of one service changes: copies, generation,
//                                    diff against the applied rules, iptables-restore of the diff
// Every benchmark reports the 1-minute load average (load1) at its end.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string_view>

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

void reportLoad(benchmark::State& state) {
  double load[1] = {0};
  if (::getloadavg(load, 1) == 1) state.counters["load1"] = load[0];
}

bool requireNetns(benchmark::State& state) {
  if (!kInPrivateNetns) state.SkipWithError("needs root (a private network namespace)");
  return kInPrivateNetns;
}

// The same rules as `rules.restoreText` in the order the proxy wrote them before it ordered
// chains for iptables-nft-restore (3448bb4, as kube-proxy does): every chain declared first, in
// the order of first use (per service port: KUBE-SVC, then its KUBE-SEPs), then per service port
// its KUBE-SERVICES rule, its KUBE-SVC rules, its KUBE-SEP rules. ClusterIP services only.
std::string previousOrderDocument(const proxy::ProxyRules& rules) {
  std::map<std::string_view, const std::string*> chainRules;
  for (const auto& c : rules.chains) chainRules[c.name] = &c.rules;
  auto jumpTarget = [](std::string_view line) { return line.substr(line.rfind(' ') + 1); };
  auto lines = [](std::string_view text) {
    std::vector<std::string_view> out;
    for (size_t p = 0, e; p < text.size(); p = e + 1) {
      e = text.find('\n', p);
      out.push_back(text.substr(p, e - p));
    }
    return out;
  };
  std::string decls, body;
  for (std::string_view service : lines(rules.servicesRules)) {
    std::string_view svc = jumpTarget(service);
    auto it = chainRules.find(svc);
    if (it == chainRules.end()) continue;  // the last rule, to KUBE-NODEPORTS
    decls += ":" + std::string(svc) + " - [0:0]\n";
    body += std::string(service) + "\n" + *it->second;
    for (std::string_view jump : lines(*it->second)) {
      std::string_view sep = jumpTarget(jump);
      if (sep.rfind("KUBE-SEP-", 0) != 0) continue;
      decls += ":" + std::string(sep) + " - [0:0]\n";
      body += *chainRules.at(sep);
    }
  }
  std::string text = "*filter\n:KUBE-SERVICES - [0:0]\n:KUBE-EXTERNAL-SERVICES - [0:0]\n";
  text += rules.filterRules;
  text += "COMMIT\n*nat\n";
  text += ":KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n";
  text += ":KUBE-MARK-MASQ - [0:0]\n";
  text += decls;
  size_t fixedRules = rules.restoreText.find("-A KUBE-POSTROUTING");
  size_t fixedEnd = rules.restoreText.find('\n', rules.restoreText.find("-A KUBE-MARK-MASQ")) + 1;
  text += rules.restoreText.substr(fixedRules, fixedEnd - fixedRules);
  text += body;
  text += rules.nodePortsRules;
  text += lines(rules.servicesRules).back();
  text += "\nCOMMIT\n";
  return text;
}

// A full sync as the proxy does it: copies of the informer caches (Informer::list), generation,
// one iptables-restore --noflush that rewrites every chain and deletes the stale ones of the
// previous generation.
void BM_FullSync(benchmark::State& state) {
  if (!requireNetns(state)) return;
  proxy::ExecIptables iptables;
  const int n = static_cast<int>(state.range(0));
  std::set<std::string> existing;
  int generation = 0;
  int rulesWritten = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Cluster c = makeCluster(n, ++generation);
    state.ResumeTiming();
    std::vector<json> services = c.services, slices = c.slices;
    auto rules = proxy::buildProxyRules(services, slices, {"10.244.0.0/16"}, existing);
    auto s = iptables.restore(rules.restoreText);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    existing = rules.natChains;
    rulesWritten = rules.servicePorts + rules.endpoints;
  }
  state.counters["service_ports+endpoints"] = rulesWritten;
  (void)proxy::cleanupProxyRules(iptables);
  reportLoad(state);
}
BENCHMARK(BM_FullSync)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);

// Baselines: iptables-restore alone of a full document (generated before timing), in the proxy's
// own order or the previous one, into a namespace without the proxy's chains.
void restoreDocumentAlone(benchmark::State& state, bool previousOrder) {
  if (!requireNetns(state)) return;
  proxy::ExecIptables iptables;
  const int n = static_cast<int>(state.range(0));
  int generation = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Cluster c = makeCluster(n, ++generation);
    auto rules = proxy::buildProxyRules(c.services, c.slices, {"10.244.0.0/16"}, {});
    std::string text = previousOrder ? previousOrderDocument(rules) : rules.restoreText;
    // Both into a namespace without the proxy's chains (the previous order's document is built
    // without deletions).
    (void)proxy::cleanupProxyRules(iptables);
    bytes = text.size();
    state.ResumeTiming();
    auto s = iptables.restore(text);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
  }
  state.counters["doc_bytes"] = static_cast<double>(bytes);
  (void)proxy::cleanupProxyRules(iptables);
  reportLoad(state);
}
void BM_RestoreFullDocument(benchmark::State& state) { restoreDocumentAlone(state, false); }
void BM_RestorePreviousOrderDocument(benchmark::State& state) { restoreDocumentAlone(state, true); }
BENCHMARK(BM_RestoreFullDocument)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_RestorePreviousOrderDocument)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);

// One endpoint of one service changes (back and forth) with n services in the kernel: a partial
// sync as the proxy does it.
void BM_PartialSyncOneEndpointChange(benchmark::State& state) {
  if (!requireNetns(state)) return;
  proxy::ExecIptables iptables;
  const int n = static_cast<int>(state.range(0));
  Cluster c = makeCluster(n, 0);
  proxy::ProxyRules applied = proxy::buildProxyRules(c.services, c.slices, {"10.244.0.0/16"}, {});
  if (auto s = iptables.restore(applied.restoreText); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  const std::string original = c.slices[n / 2]["endpoints"][0]["addresses"][0];
  size_t bytes = 0;
  std::chrono::duration<double, std::milli> copyTime{0}, generateTime{0}, restoreTime{0};
  int64_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    c.slices[n / 2]["endpoints"][0]["addresses"][0] = ++i % 2 ? "10.245.0.1" : original;
    state.ResumeTiming();
    auto t0 = std::chrono::steady_clock::now();
    std::vector<json> services = c.services, slices = c.slices;
    auto t1 = std::chrono::steady_clock::now();
    auto rules = proxy::buildProxyRules(services, slices, {"10.244.0.0/16"}, applied.natChains);
    std::string text = proxy::changedRulesText(rules, applied);
    auto t2 = std::chrono::steady_clock::now();
    auto s = iptables.restore(text);
    auto t3 = std::chrono::steady_clock::now();
    copyTime += t1 - t0;
    generateTime += t2 - t1;
    restoreTime += t3 - t2;
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    bytes = text.size();
    applied = std::move(rules);
  }
  state.counters["doc_bytes"] = static_cast<double>(bytes);
  // Where the time goes, in ms per sync: copying the caches, generation + diff, the restore.
  double iterations = static_cast<double>(state.iterations());
  state.counters["copy_ms"] = copyTime.count() / iterations;
  state.counters["generate_ms"] = generateTime.count() / iterations;
  state.counters["restore_ms"] = restoreTime.count() / iterations;
  (void)proxy::cleanupProxyRules(iptables);
  reportLoad(state);
}
BENCHMARK(BM_PartialSyncOneEndpointChange)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(20);

}  // namespace

BENCHMARK_MAIN();
