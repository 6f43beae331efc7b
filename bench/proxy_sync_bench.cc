// Proxy sync time for 1,000 services x 3 endpoints, in a scratch network namespace (the process
// unshares its own before main, so nothing reaches the host's rules; the iptables parts are
// skipped when not root):
//   BM_GenerateRules      building the documents (no iptables)
//   BM_FullSync           a full sync as the proxy does it: copies of the informer caches,
//                         generation of every service (IptablesBackend::prepareFull), one
//                         iptables-restore of every chain (apply_ms)
//   BM_RestoreFullDocument           baseline: iptables-restore of that same document alone
//   BM_RestorePreviousOrderDocument  baseline: iptables-restore of the same rules in the order
//                                    the proxy wrote them before (as kube-proxy does)
//   BM_PartialSyncOneEndpointChange  one endpoint of one service changes, back and forth; the
//                                    iterations alternate between the partial sync the proxy did
//                                    before (copies of both caches, generation of every service,
//                                    diff against the applied rules: before_*) and the one it does
//                                    now (read and regenerate the changed service only, reuse the
//                                    others' rules from ServiceRulesCache: after_*), each followed
//                                    by iptables-restore of its (identical) document;
//                                    again_run_ms / again_spawn_ms: baseline, the same document
//                                    restored again, started as the proxy does (runProgram) or
//                                    by a bare posix_spawn
//   BM_NftFullSync        the same full sync in nftables mode (NftablesBackend: one `nft -f` that
//                         rewrites the table and deletes what the previous generation left)
//   BM_NftApplyFullDocumentAlone     baseline: `nft -f` of that same document alone, into a
//                                    namespace without the table
//   BM_NftPartialSyncOneEndpointChange  one endpoint of one service changes, back and forth, in
//                                    nftables mode: read + regenerate that service, `nft -f` of
//                                    the changes
// Every benchmark reports the 1-minute load average (load1) at its end; the nftables ones are
// skipped without nft.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string_view>

#include "bench_util.h"
#include "common/command.h"
#include "fmt/format.h"
#include "proxy/iptables.h"
#include "proxy/iptables_backend.h"
#include "proxy/nft_rules.h"
#include "proxy/nftables.h"
#include "proxy/nftables_backend.h"
#include "proxy/proxy_rules.h"
#include "proxy/service_proxy.h"
#include "proxy/service_rules_cache.h"

namespace {

using minik8s::json;
using minik8s::bench::enterPrivateNetns;
namespace proxy = minik8s::proxy;
using Clock = std::chrono::steady_clock;
using Millis = std::chrono::duration<double, std::milli>;

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

bool requireNft(benchmark::State& state) {
  if (!requireNetns(state)) return false;
  auto v = minik8s::runProgram({"nft", "--version"});
  bool ok = v.ok() && v->exitCode == 0;
  if (!ok) state.SkipWithError("needs nft (Debian package nftables)");
  return ok;
}

std::unique_ptr<proxy::ProxyBackend> backendFor(proxy::ProxyMode mode) {
  proxy::RuleOptions options{"10.244.0.0/16"};
  if (mode == proxy::ProxyMode::kNftables) {
    return std::make_unique<proxy::NftablesBackend>(std::make_unique<proxy::ExecNftables>(),
                                                    options);
  }
  return std::make_unique<proxy::IptablesBackend>(std::make_unique<proxy::ExecIptables>(), options);
}

// A full sync as the proxy does it: copies of the informer caches (Informer::list), generation of
// every service, one transaction (iptables-restore --noflush, or nft -f) that rewrites every chain
// and deletes the stale ones of the previous generation.
void fullSync(benchmark::State& state, proxy::ProxyMode mode) {
  if (!(mode == proxy::ProxyMode::kNftables ? requireNft(state) : requireNetns(state))) return;
  const int n = static_cast<int>(state.range(0));
  auto backend = backendFor(mode);
  if (auto s = backend->start(); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  int generation = 0;
  size_t bytes = 0;
  Millis copyTime{0}, generateTime{0}, applyTime{0};
  for (auto _ : state) {
    state.PauseTiming();
    Cluster c = makeCluster(n, ++generation);
    state.ResumeTiming();
    auto t0 = Clock::now();
    std::vector<json> services = c.services, slices = c.slices;
    auto t1 = Clock::now();
    std::string doc = backend->prepareFull(services, slices);
    auto t2 = Clock::now();
    auto s = backend->apply(doc);
    auto t3 = Clock::now();
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    backend->commit();
    bytes = doc.size();
    copyTime += t1 - t0;
    generateTime += t2 - t1;
    applyTime += t3 - t2;
  }
  state.counters["service_ports+endpoints"] = backend->servicePorts() + backend->endpoints();
  double iterations = static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  state.counters["doc_bytes"] = static_cast<double>(bytes);
  state.counters["copy_ms"] = copyTime.count() / iterations;
  state.counters["generate_ms"] = generateTime.count() / iterations;
  state.counters["apply_ms"] = applyTime.count() / iterations;
  (void)backend->cleanup();
  reportLoad(state);
}
void BM_FullSync(benchmark::State& state) { fullSync(state, proxy::ProxyMode::kIptables); }
void BM_NftFullSync(benchmark::State& state) { fullSync(state, proxy::ProxyMode::kNftables); }
BENCHMARK(BM_FullSync)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_NftFullSync)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);

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

// Baseline for the restore: iptables-restore of `text` alone, started by a bare posix_spawn; -1
// when it fails.
double spawnRestoreMs(const std::string& text) {
  auto t0 = Clock::now();
  int in[2];
  if (::pipe(in) != 0) return -1;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  ::posix_spawn_file_actions_addclose(&actions, in[1]);
  const char* argv[] = {"iptables-restore", "-w", "5", "--noflush", nullptr};
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, const_cast<char**>(argv), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  for (size_t done = 0; rc == 0 && done < text.size();) {
    ssize_t w = ::write(in[1], text.data() + done, text.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  ::close(in[1]);
  int status = 0;
  if (rc != 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return -1;
  }
  return Millis(Clock::now() - t0).count();
}

// What the proxy's informers hold, by object key, and the slices of each service (its handlers'
// index): a partial sync reads one service and its slices from these.
struct Caches {
  std::map<std::string, json> services, slices;
  std::map<std::string, std::vector<std::string>> slicesByService;
};

Caches cachesOf(const Cluster& c) {
  Caches out;
  for (const json& s : c.services) out.services[proxy::serviceKey(s)] = s;
  for (const json& s : c.slices) {
    std::string key = s["metadata"]["namespace"].get<std::string>() + "/" +
                      s["metadata"]["name"].get<std::string>();
    out.slices[key] = s;
    out.slicesByService[proxy::sliceServiceKey(s)].push_back(key);
  }
  return out;
}

// Partial syncs of one endpoint change (back and forth) with n services in the kernel, before and
// after per-service caching, alternately, so both see the same load. Each also brings the other
// method's applied state along (untimed) and checks both write the same document.
void BM_PartialSyncOneEndpointChange(benchmark::State& state) {
  if (!requireNetns(state)) return;
  proxy::ExecIptables iptables;
  const int n = static_cast<int>(state.range(0));
  const proxy::RuleOptions options{"10.244.0.0/16"};
  Cluster c = makeCluster(n, 0);
  Caches caches = cachesOf(c);
  proxy::ProxyRules applied = proxy::buildProxyRules(c.services, c.slices, options, {});
  proxy::ServiceRulesCache cache(options);
  (void)cache.prepareFull(c.services, c.slices, {});
  cache.commit();
  if (auto s = iptables.restore(applied.restoreText); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  const int changedIndex = n / 2;
  const std::string changedKey = proxy::serviceKey(c.services[changedIndex]);
  const std::string sliceKey = caches.slicesByService.at(changedKey).front();
  const std::string original = c.slices[changedIndex]["endpoints"][0]["addresses"][0];
  auto toggle = [&, i = int64_t{0}]() mutable {
    std::string address = ++i % 2 ? "10.245.0.1" : original;
    c.slices[changedIndex]["endpoints"][0]["addresses"][0] = address;
    caches.slices[sliceKey]["endpoints"][0]["addresses"][0] = address;
  };
  // What a partial sync reads now: the changed service and its slices (Informer::get).
  auto readChanged = [&] {
    std::map<std::string, proxy::ServiceInput> inputs;
    proxy::ServiceInput& input = inputs[changedKey];
    input.service = caches.services.at(changedKey);
    for (const std::string& k : caches.slicesByService.at(changedKey)) {
      input.slices.push_back(caches.slices.at(k));
    }
    return inputs;
  };
  // Before: copies of every object (Informer::list), every service generated, then the diff.
  auto copyAll = [&] {
    std::vector<json> services, slices;
    for (const auto& [k, v] : caches.services) services.push_back(v);
    for (const auto& [k, v] : caches.slices) slices.push_back(v);
    return std::pair{std::move(services), std::move(slices)};
  };
  size_t bytes = 0;
  Millis copy[2]{}, generate[2]{}, restore[2]{};
  int64_t runs[2]{};
  Millis again[2]{};  // the same restore again: ExecIptables (runProgram), posix_spawn
  bool same = true;
  int64_t iteration = 0;
  for (auto _ : state) {
    state.PauseTiming();
    toggle();
    state.ResumeTiming();
    const int method = static_cast<int>(iteration++ % 2);  // 0: before, 1: after
    std::string text;
    proxy::ProxyRules rules;
    auto t0 = Clock::now();
    if (method == 0) {
      auto [services, slices] = copyAll();
      auto t1 = Clock::now();
      rules = proxy::buildProxyRules(services, slices, options, applied.natChains);
      text = proxy::changedRulesText(rules, applied);
      copy[0] += t1 - t0;
      generate[0] += Clock::now() - t1;
    } else {
      auto inputs = readChanged();
      auto t1 = Clock::now();
      text = cache.preparePartial(inputs);
      copy[1] += t1 - t0;
      generate[1] += Clock::now() - t1;
    }
    auto t2 = Clock::now();
    auto s = iptables.restore(text);
    restore[method] += Clock::now() - t2;
    ++runs[method];
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    bytes = text.size();
    state.PauseTiming();
    // The same document twice more (a partial document can be: gone chains are declared, then
    // deleted), through runProgram and by a bare posix_spawn, in turns first: what the restore
    // itself costs.
    for (int k = 0; k < 2; ++k) {
      if ((k + iteration) % 2 == 0) {
        auto t = Clock::now();
        bool ok = iptables.restore(text).ok();
        again[0] += Clock::now() - t;
        if (!ok) state.SkipWithError("iptables-restore again failed");
      } else {
        double ms = spawnRestoreMs(text);
        again[1] += Millis(ms);
        if (ms < 0) state.SkipWithError("iptables-restore by posix_spawn failed");
      }
    }
    // The other method's view of the kernel follows, and both must have written the same.
    if (method == 0) {
      same &= cache.preparePartial(readChanged()) == text;
      cache.commit();
      applied = std::move(rules);
    } else {
      cache.commit();
      proxy::ProxyRules now = proxy::buildProxyRules(c.services, c.slices, options, {});
      same &= proxy::changedRulesText(now, applied) == text;
      applied = std::move(now);
    }
    state.ResumeTiming();
  }
  if (!same) state.SkipWithError("the partial documents before and after differ");
  state.counters["doc_bytes"] = static_cast<double>(bytes);
  // Where the time goes, in ms per sync: reading the caches, generation + diff, the restore.
  for (int m = 0; m < 2; ++m) {
    std::string prefix = m == 0 ? "before_" : "after_";
    double k = static_cast<double>(std::max<int64_t>(runs[m], 1));
    state.counters[prefix + "copy_ms"] = copy[m].count() / k;
    state.counters[prefix + "generate_ms"] = generate[m].count() / k;
    state.counters[prefix + "restore_ms"] = restore[m].count() / k;
    state.counters[prefix + "ms"] = (copy[m] + generate[m] + restore[m]).count() / k;
  }
  double iterations = static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  state.counters["again_run_ms"] = again[0].count() / iterations;
  state.counters["again_spawn_ms"] = again[1].count() / iterations;
  double after = state.counters["after_ms"];
  if (after > 0) state.counters["before/after"] = state.counters["before_ms"] / after;
  (void)proxy::cleanupProxyRules(iptables);
  reportLoad(state);
}
BENCHMARK(BM_PartialSyncOneEndpointChange)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(40);

// Baseline: `nft -f` alone of a whole document (generated before timing) into a namespace
// without the table.
void BM_NftApplyFullDocumentAlone(benchmark::State& state) {
  if (!requireNft(state)) return;
  const int n = static_cast<int>(state.range(0));
  proxy::ExecNftables nft;
  int generation = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Cluster c = makeCluster(n, ++generation);
    proxy::NftablesBackend builder(std::make_unique<proxy::ExecNftables>(),
                                   proxy::RuleOptions{"10.244.0.0/16"});
    std::string doc = builder.prepareFull(c.services, c.slices);
    (void)nft.apply(proxy::nftDeleteTableDocument());
    state.ResumeTiming();
    if (auto s = nft.apply(doc); !s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
  }
  (void)nft.apply(proxy::nftDeleteTableDocument());
  reportLoad(state);
}
BENCHMARK(BM_NftApplyFullDocumentAlone)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(5);

// One endpoint of one service changes, back and forth, with n services in the table: what a
// partial sync in nftables mode costs (read and regenerate that service, `nft -f` of the changes).
void BM_NftPartialSyncOneEndpointChange(benchmark::State& state) {
  if (!requireNft(state)) return;
  const int n = static_cast<int>(state.range(0));
  proxy::NftablesBackend backend(std::make_unique<proxy::ExecNftables>(),
                                 proxy::RuleOptions{"10.244.0.0/16"});
  Cluster c = makeCluster(n, 0);
  if (auto s = backend.start();
      !s.ok() || !backend.apply(backend.prepareFull(c.services, c.slices)).ok()) {
    state.SkipWithError("nft: the first full sync failed");
    return;
  }
  backend.commit();
  Caches caches = cachesOf(c);
  const int changedIndex = n / 2;
  const std::string changedKey = proxy::serviceKey(c.services[changedIndex]);
  const std::string sliceKey = caches.slicesByService.at(changedKey).front();
  const std::string original = c.slices[changedIndex]["endpoints"][0]["addresses"][0];
  Millis generate{0}, apply{0};
  size_t bytes = 0;
  int64_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    caches.slices[sliceKey]["endpoints"][0]["addresses"][0] = ++i % 2 ? "10.245.0.1" : original;
    state.ResumeTiming();
    auto t0 = Clock::now();
    std::map<std::string, proxy::ServiceInput> inputs;
    proxy::ServiceInput& input = inputs[changedKey];
    input.service = caches.services.at(changedKey);
    for (const std::string& k : caches.slicesByService.at(changedKey)) {
      input.slices.push_back(caches.slices.at(k));
    }
    std::string doc = backend.preparePartial(inputs);
    auto t1 = Clock::now();
    auto s = backend.apply(doc);
    apply += Clock::now() - t1;
    generate += t1 - t0;
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    backend.commit();
    bytes = doc.size();
  }
  double iterations = static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  state.counters["doc_bytes"] = static_cast<double>(bytes);
  state.counters["generate_ms"] = generate.count() / iterations;
  state.counters["nft_ms"] = apply.count() / iterations;
  (void)backend.cleanup();
  reportLoad(state);
}
BENCHMARK(BM_NftPartialSyncOneEndpointChange)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(40);

}  // namespace

BENCHMARK_MAIN();
