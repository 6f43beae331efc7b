// NetworkPolicy sync time for 100 policies x 100 local pods (and as many on another node):
// building the iptables-restore document, and generation + iptables-restore into a scratch
// network namespace (the process unshares its own before main, so nothing reaches the host's
// rules; the restore part is skipped when not root).
#include <benchmark/benchmark.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "bench_util.h"
#include "fmt/format.h"
#include "netpol/network_policy_agent.h"
#include "netpol/policy_rules.h"
#include "proxy/iptables.h"

namespace {

using minik8s::json;
using minik8s::bench::enterPrivateNetns;
namespace netpol = minik8s::netpol;

const bool kInPrivateNetns = enterPrivateNetns();

// 10 namespaces (label team=t<k>), `pods` pods on n1 and as many on n2 spread over them (labels
// app=a<i%10>, role=r<i%5>), `policies` policies spread over the namespaces: each selects a role,
// isolates both directions and allows from that role in its namespace and from every pod of the
// next namespace on 8080, from an ipBlock with an except on 9090, and DNS to kube-system.
// `generation` moves one pod between roles, so successive syncs really change rules.
netpol::PolicyInput makeCluster(int pods, int policies, int generation) {
  netpol::PolicyInput in;
  in.nodeName = "n1";
  for (int k = 0; k < 10; ++k) {
    in.namespaces.push_back(
        {{"metadata",
          {{"name", fmt::format("ns{}", k)}, {"labels", {{"team", fmt::format("t{}", k)}}}}}});
  }
  for (int node = 1; node <= 2; ++node) {
    for (int i = 0; i < pods; ++i) {
      int role = (i + (i == 0 ? generation : 0)) % 5;
      in.pods.push_back(
          {{"metadata",
            {{"namespace", fmt::format("ns{}", i % 10)},
             {"name", fmt::format("pod-{}-{}", node, i)},
             {"labels",
              {{"app", fmt::format("a{}", i % 10)}, {"role", fmt::format("r{}", role)}}}}},
           {"spec",
            {{"nodeName", fmt::format("n{}", node)},
             {"containers",
              {{{"name", "c"}, {"ports", {{{"name", "http"}, {"containerPort", 8080}}}}}}}}},
           {"status",
            {{"phase", "Running"}, {"podIP", fmt::format("10.244.{}.{}", node, i + 2)}}}});
    }
  }
  for (int j = 0; j < policies; ++j) {
    int k = j % 10;
    std::string spec = fmt::format(R"({{
      "podSelector": {{"matchLabels": {{"role": "r{0}"}}}},
      "policyTypes": ["Ingress", "Egress"],
      "ingress": [{{"from": [{{"podSelector": {{"matchLabels": {{"role": "r{0}"}}}}}},
                            {{"namespaceSelector": {{"matchLabels": {{"team": "t{1}"}}}}}}],
                   "ports": [{{"port": "http"}}]}},
                  {{"from": [{{"ipBlock": {{"cidr": "172.16.0.0/12", "except": ["172.17.0.0/16"]}}}}],
                   "ports": [{{"port": 9090}}]}}],
      "egress": [{{"to": [{{"namespaceSelector": {{"matchLabels":
                              {{"kubernetes.io/metadata.name": "kube-system"}}}}}}],
                  "ports": [{{"port": 53, "protocol": "UDP"}}]}}]}})",
                                   j % 5, (k + 1) % 10);
    in.policies.push_back(
        {{"metadata", {{"namespace", fmt::format("ns{}", k)}, {"name", fmt::format("p{}", j)}}},
         {"spec", json::parse(spec)}});
  }
  return in;
}

void BM_GenerateRules(benchmark::State& state) {
  auto in = makeCluster(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 0);
  netpol::PolicyRules rules;
  for (auto _ : state) {
    rules = netpol::buildPolicyRules(in, {});
    benchmark::DoNotOptimize(rules);
  }
  state.counters["rules"] = rules.rules;
  state.counters["doc_bytes"] = static_cast<double>(rules.restoreText.size());
}
BENCHMARK(BM_GenerateRules)->Args({100, 100})->Args({100, 10})->Unit(benchmark::kMillisecond);

// One full sync as the agent does it: generate, then one iptables-restore --noflush that
// rewrites every chain and deletes the stale ones of the previous generation.
void BM_SyncIntoNetns(benchmark::State& state) {
  if (!kInPrivateNetns) {
    state.SkipWithError("needs root (a private network namespace)");
    return;
  }
  minik8s::proxy::ExecIptables iptables;
  std::set<std::string> existing;
  int generation = 0;
  int rules = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto in = makeCluster(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                          ++generation);
    state.ResumeTiming();
    auto built = netpol::buildPolicyRules(in, existing);
    auto s = iptables.restore(built.restoreText);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    existing = built.chains;
    rules = built.rules;
  }
  state.counters["rules"] = rules;
  (void)netpol::cleanupPolicyRules(iptables);
}
BENCHMARK(BM_SyncIntoNetns)
    ->Args({100, 100})
    ->Args({100, 10})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
