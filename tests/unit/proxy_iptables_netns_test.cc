// The proxy against the real iptables, in a private network namespace (private_netns.h: the whole
// test process, entered before main). Skipped when not root.
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "client/rest_client.h"
#include "common/command.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "private_netns.h"
#include "proxy/iptables.h"
#include "proxy/iptables_backend.h"
#include "proxy/proxy_rules.h"
#include "proxy/service_proxy.h"
#include "proxy/service_rules_cache.h"
#include "proxy_netns_fixture.h"
#include "proxy_test_objects.h"

namespace minik8s::proxy {
namespace {

using namespace std::chrono_literals;
using testing::serviceObject;
using testing::sliceObject;

std::string save(const std::string& table) {
  ExecIptables ipt;
  auto s = ipt.save(table);
  EXPECT_TRUE(s.ok()) << s.status().toString();
  return s.ok() ? *s : "";
}

using testing::eventually;

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

TEST(ProxyIptablesNetnsTest, TheKernelAcceptsEveryKindOfRuleAndStaleChainsGo) {
  REQUIRE_NETNS();
  ExecIptables ipt;
  auto web = serviceObject("ns", "web", "10.96.0.5", {{"http", 80, "TCP", 30080}}, "NodePort");
  auto dns = serviceObject("ns", "dns", "10.96.0.10", {{"dns", 53, "UDP"}, {"dns-tcp", 53}});
  auto sticky = serviceObject("ns", "sticky", "10.96.0.7", {{"", 80}});
  sticky["spec"]["sessionAffinity"] = "ClientIP";
  auto empty = serviceObject("ns", "empty", "10.96.0.8", {{"", 80, "TCP", 30081}}, "NodePort");
  std::vector<json> slices{
      sliceObject("ns", "web-1", "web", {{"10.244.1.2"}, {"10.244.2.2"}}, {{"http", 8080}}),
      sliceObject("ns", "dns-1", "dns", {{"10.0.0.1"}}, {{"dns", 53, "UDP"}, {"dns-tcp", 53}}),
      sliceObject("ns", "sticky-1", "sticky", {{"10.244.1.3"}, {"10.244.2.3"}}, {{"", 80}})};
  ProxyRules first =
      buildProxyRules({web, dns, sticky, empty}, slices, RuleOptions{"10.244.0.0/16"}, {});
  auto firstRestore = ipt.restore(first.restoreText);
  ASSERT_TRUE(firstRestore.ok()) << firstRestore.toString();
  std::string nat = save("nat");
  EXPECT_EQ(perServiceChains(nat), first.natChains);
  EXPECT_TRUE(contains(nat, "--to-destination 10.244.1.2:8080"));
  // iptables-save puts -s/-d/-p before the matches.
  EXPECT_TRUE(contains(nat,
                       "-p udp -m comment --comment \"ns/dns:dns\" -m udp -j DNAT "
                       "--to-destination 10.0.0.1:53"));
  EXPECT_TRUE(contains(nat, "--rcheck --seconds 10800 --reap"));
  EXPECT_TRUE(
      contains(save("filter"), "--dport 30081 -j REJECT --reject-with icmp-port-unreachable"));

  // The sticky service goes: its chains are deleted by the next document, the others stay.
  ProxyRules second =
      buildProxyRules({web, dns, empty}, slices, RuleOptions{"10.244.0.0/16"}, first.natChains);
  auto restored = ipt.restore(second.restoreText);
  ASSERT_TRUE(restored.ok()) << restored.toString();
  nat = save("nat");
  EXPECT_EQ(perServiceChains(nat), second.natChains);
  EXPECT_FALSE(contains(nat, "sticky"));
  EXPECT_TRUE(contains(nat, "10.244.2.2:8080"));

  ASSERT_TRUE(cleanupProxyRules(ipt).ok());
  EXPECT_FALSE(contains(save("nat"), "KUBE-"));
  EXPECT_FALSE(contains(save("filter"), "KUBE-"));
}

// iptables-save of the proxy's chains, without the lines that differ between equal rule sets
// (the "# Generated" comments, counters).
std::string proxyState() {
  std::string out;
  for (const char* table : {"nat", "filter"}) {
    std::istringstream in(save(table));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (line[0] == ':') line = line.substr(0, line.find(' '));
      out += line + "\n";
    }
  }
  return out;
}

TEST(ProxyIptablesNetnsTest, APartialSyncLeavesTheKernelAsAFullSyncWould) {
  REQUIRE_NETNS();
  ExecIptables ipt;
  auto web = serviceObject("ns", "web", "10.96.0.5", {{"http", 80, "TCP", 30080}}, "NodePort");
  auto dns = serviceObject("ns", "dns", "10.96.0.10", {{"dns", 53, "UDP"}});
  auto gone = serviceObject("ns", "gone", "10.96.0.7", {{"", 80}});
  auto webSlice =
      sliceObject("ns", "web-1", "web", {{"10.244.1.2"}, {"10.244.2.2"}}, {{"http", 8080}});
  auto dnsSlice = sliceObject("ns", "dns-1", "dns", {{"10.0.0.1"}}, {{"dns", 53, "UDP"}});
  auto goneSlice = sliceObject("ns", "gone-1", "gone", {{"10.244.1.3"}}, {{"", 80}});
  RuleOptions options{"10.244.0.0/16"};
  ProxyRules before =
      buildProxyRules({web, dns, gone}, {webSlice, dnsSlice, goneSlice}, options, {});
  ASSERT_TRUE(ipt.restore(before.restoreText).ok());
  ServiceRulesCache cache(options);
  EXPECT_EQ(cache.prepareFull({web, dns, gone}, {webSlice, dnsSlice, goneSlice}, {}).restoreText,
            before.restoreText);
  cache.commit();

  // web's endpoints move and its NodePort changes, dns loses its endpoints, gone goes.
  webSlice = sliceObject("ns", "web-1", "web", {{"10.244.1.2"}, {"10.244.3.2"}, {"10.244.3.3"}},
                         {{"http", 8080}});
  web["spec"]["ports"][0]["nodePort"] = 30081;
  dnsSlice = sliceObject("ns", "dns-1", "dns", {}, {{"dns", 53, "UDP"}});
  ProxyRules after = buildProxyRules({web, dns}, {webSlice, dnsSlice, goneSlice}, options, {});
  // The proxy's own partial sync (only the changed services regenerated) writes the same.
  std::string partialText = cache.preparePartial({{"ns/web", {web, {webSlice}}},
                                                  {"ns/dns", {dns, {dnsSlice}}},
                                                  {"ns/gone", {{}, {goneSlice}}}});
  EXPECT_EQ(partialText, changedRulesText(after, before));
  auto partial = ipt.restore(partialText);
  ASSERT_TRUE(partial.ok()) << partial.toString();
  std::string afterPartial = proxyState();
  EXPECT_TRUE(contains(afterPartial, "--to-destination 10.244.3.3:8080"));
  EXPECT_FALSE(contains(afterPartial, "gone"));

  ASSERT_TRUE(cleanupProxyRules(ipt).ok());
  ASSERT_TRUE(ipt.restore(after.restoreText).ok());
  EXPECT_EQ(afterPartial, proxyState());
  ASSERT_TRUE(cleanupProxyRules(ipt).ok());
}

using ServiceProxyNetnsTest = ProxyNetnsFixture;

TEST_F(ServiceProxyNetnsTest, RulesFollowTheApiWithinASecondAndSurviveARestart) {
  const auto& svcs = client::resources::kServices;
  const auto& slices = client::resources::kEndpointSlices;
  ASSERT_TRUE(
      rest->create(svcs, "default", serviceObject("default", "web", "10.96.0.50", {{"http", 80}}))
          .ok());
  ASSERT_TRUE(rest->create(slices, "default",
                           sliceObject("default", "web-1", "web", {{"10.244.1.5"}, {"10.244.2.5"}},
                                       {{"http", 8080}}))
                  .ok());
  auto proxy = std::make_unique<ServiceProxy>(*rest, options());
  ASSERT_TRUE(proxy->start().ok());
  EXPECT_TRUE(eventually([] { return contains(save("nat"), "10.244.2.5:8080"); }));
  std::string nat = save("nat");
  EXPECT_TRUE(contains(nat,
                       "-A PREROUTING -m comment --comment \"kubernetes service portals\" "
                       "-j KUBE-SERVICES"));
  EXPECT_TRUE(contains(nat,
                       "-A OUTPUT -m comment --comment \"kubernetes service portals\" "
                       "-j KUBE-SERVICES"));
  EXPECT_TRUE(contains(nat,
                       "-A POSTROUTING -m comment --comment \"kubernetes postrouting "
                       "rules\" -j KUBE-POSTROUTING"));

  // An endpoint removal is in the kernel within a second.
  auto slice = rest->get(slices, "default", "web-1");
  ASSERT_TRUE(slice.ok());
  (*slice)["endpoints"].erase(1);
  auto changedAt = std::chrono::steady_clock::now();
  ASSERT_TRUE(rest->update(slices, *slice).ok());
  EXPECT_TRUE(eventually([] { return !contains(save("nat"), "10.244.2.5:8080"); }, 1s));
  EXPECT_LT(std::chrono::steady_clock::now() - changedAt, 1s);
  EXPECT_TRUE(contains(save("nat"), "10.244.1.5:8080"));
  // The counter moves once the restore has returned, a moment after the kernel has the rules.
  EXPECT_TRUE(eventually([&] { return proxy->stats().syncs >= 2; }, 1s));

  // The proxy stops; meanwhile the service is deleted; a new proxy removes its chains.
  proxy->stop();
  proxy.reset();
  std::string svcChain = serviceChainName("default/web:http", "tcp");
  EXPECT_TRUE(contains(save("nat"), svcChain));
  ASSERT_TRUE(rest->remove(svcs, "default", "web").ok());
  ASSERT_TRUE(
      rest->create(svcs, "default", serviceObject("default", "other", "10.96.0.51", {{"", 81}}))
          .ok());
  proxy = std::make_unique<ServiceProxy>(*rest, options());
  ASSERT_TRUE(proxy->start().ok());
  EXPECT_TRUE(eventually([] { return contains(save("filter"), "10.96.0.51/32"); }));
  nat = save("nat");
  EXPECT_FALSE(contains(nat, svcChain));
  EXPECT_TRUE(perServiceChains(nat).empty()) << nat;
  // The jumps were not duplicated by the second start.
  size_t jumps = 0;
  for (size_t p = nat.find("-A PREROUTING"); p != std::string::npos;
       p = nat.find("-A PREROUTING", p + 1)) {
    ++jumps;
  }
  EXPECT_EQ(jumps, 1u);

  ASSERT_TRUE(proxy->cleanup().ok());
  EXPECT_FALSE(contains(save("nat"), "KUBE-"));
  EXPECT_FALSE(contains(save("filter"), "KUBE-"));
}

TEST_F(ServiceProxyNetnsTest, RulesRemovedBehindItsBackAreRepaired) {
  ASSERT_TRUE(rest->create(client::resources::kServices, "default",
                           serviceObject("default", "web", "10.96.0.52", {{"", 80}}))
                  .ok());
  ASSERT_TRUE(rest->create(client::resources::kEndpointSlices, "default",
                           sliceObject("default", "web-1", "web", {{"10.244.1.9"}}, {{"", 80}}))
                  .ok());
  ProxyOptions o = options();
  o.maxSyncInterval = 300ms;
  ServiceProxy proxy(*rest, o);
  ASSERT_TRUE(proxy.start().ok());
  ASSERT_TRUE(eventually([] { return contains(save("nat"), "10.244.1.9:80"); }));
  ASSERT_TRUE(runProgram({"iptables", "-t", "nat", "-F", "KUBE-SERVICES"}).ok());
  EXPECT_FALSE(contains(save("nat"), "-A KUBE-SERVICES -d 10.96.0.52/32"));
  EXPECT_TRUE(
      eventually([] { return contains(save("nat"), "-A KUBE-SERVICES -d 10.96.0.52/32"); }, 2s));
}

}  // namespace
}  // namespace minik8s::proxy
