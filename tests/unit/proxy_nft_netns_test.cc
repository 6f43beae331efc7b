// The proxy's nftables mode against the real nft and kernel, in a private network namespace
// (private_netns.h). Skipped when not root or when nft is not installed.
#include <gtest/gtest.h>

#include <algorithm>

#include "client/rest_client.h"
#include "common/command.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "private_netns.h"
#include "proxy/iptables_backend.h"
#include "proxy/nft_rules.h"
#include "proxy/nftables.h"
#include "proxy/nftables_backend.h"
#include "proxy/service_proxy.h"
#include "proxy_netns_fixture.h"
#include "proxy_test_objects.h"

namespace minik8s::proxy {
namespace {

using namespace std::chrono_literals;
using testing::serviceObject;
using testing::sliceObject;

bool haveNft() {
  auto r = runProgram({"nft", "--version"});
  return r.ok() && r->exitCode == 0;
}

#define REQUIRE_NFT()                                                                    \
  REQUIRE_NETNS();                                                                       \
  if (!haveNft()) {                                                                      \
    GTEST_SKIP() << "needs nft (Debian package nftables; scripts/setup.sh installs it)"; \
  }

std::string nftListing() {
  ExecNftables nft;
  auto l = nft.listTable();
  EXPECT_TRUE(l.ok()) << l.status().toString();
  return l.ok() ? *l : "";
}

bool listed(const std::string& needle) { return nftListing().find(needle) != std::string::npos; }

// The table as JSON with what differs between equal rule sets removed: handles, the order chains
// and sets were made in, the order of elements.
json nftState() {
  auto r = runChecked({"nft", "-j", "list", "table", "ip", "kube-proxy"});
  EXPECT_TRUE(r.ok()) << r.status().toString();
  if (!r.ok()) return json();
  std::map<std::string, json> chains, sets;
  for (json& item : json::parse(*r)["nftables"]) {
    for (const char* kind : {"chain", "set", "map"}) {
      if (!item.contains(kind)) continue;
      json& o = item[kind];
      o.erase("handle");
      if (o.contains("elem")) {
        std::vector<std::string> elems;
        for (const json& e : o["elem"]) elems.push_back(e.dump());
        std::ranges::sort(elems);
        o["elem"] = elems;
      }
      (std::string(kind) == "chain" ? chains : sets)[o["name"].get<std::string>()]["object"] = o;
    }
    if (item.contains("rule")) {
      json& rule = item["rule"];
      chains[rule["chain"].get<std::string>()]["rules"].push_back(rule["expr"]);
    }
  }
  return {{"chains", chains}, {"sets", sets}};
}

TEST(ProxyNftNetnsTest, APartialSyncLeavesTheKernelAsAFullSyncWould) {
  REQUIRE_NFT();
  auto web = serviceObject("ns", "web", "10.96.0.5", {{"http", 80, "TCP", 30080}}, "NodePort");
  auto dns = serviceObject("ns", "dns", "10.96.0.10", {{"dns", 53, "UDP"}, {"dns-tcp", 53}});
  auto sticky = serviceObject("ns", "sticky", "10.96.0.7", {{"", 80}});
  sticky["spec"]["sessionAffinity"] = "ClientIP";
  auto empty = serviceObject("ns", "empty", "10.96.0.8", {{"", 80, "TCP", 30081}}, "NodePort");
  auto webSlice =
      sliceObject("ns", "web-1", "web", {{"10.244.1.2"}, {"10.244.2.2"}}, {{"http", 8080}});
  auto dnsSlice =
      sliceObject("ns", "dns-1", "dns", {{"10.244.1.3"}}, {{"dns", 53, "UDP"}, {"dns-tcp", 53}});
  auto stickySlice =
      sliceObject("ns", "sticky-1", "sticky", {{"10.244.1.2"}, {"10.244.1.4"}}, {{"", 80}});
  RuleOptions options{"10.244.0.0/16"};

  NftablesBackend backend(std::make_unique<ExecNftables>(), options);
  ASSERT_TRUE(backend.start().ok());
  std::string full =
      backend.prepareFull({web, dns, sticky, empty}, {webSlice, dnsSlice, stickySlice});
  Status s = backend.apply(full);
  ASSERT_TRUE(s.ok()) << s.toString() << "\n" << full;
  backend.commit();
  EXPECT_TRUE(listed("numgen random mod 2 0 meta l4proto tcp dnat to 10.244.1.2:8080"))
      << nftListing();
  EXPECT_TRUE(listed("update @affinity-"));
  EXPECT_TRUE(listed("10.96.0.8 . tcp . 80"));

  // web's endpoints move and its NodePort changes, dns loses its endpoints, sticky goes, empty
  // gets one.
  webSlice = sliceObject("ns", "web-1", "web", {{"10.244.1.2"}, {"10.244.3.2"}, {"10.244.3.3"}},
                         {{"http", 8080}});
  web["spec"]["ports"][0]["nodePort"] = 30082;
  dnsSlice = sliceObject("ns", "dns-1", "dns", {}, {{"dns", 53, "UDP"}, {"dns-tcp", 53}});
  auto emptySlice = sliceObject("ns", "empty-1", "empty", {{"10.244.1.4"}}, {{"", 80}});
  std::string partial = backend.preparePartial({{"ns/web", {web, {webSlice}}},
                                                {"ns/dns", {dns, {dnsSlice}}},
                                                {"ns/sticky", {std::nullopt, {}}},
                                                {"ns/empty", {empty, {emptySlice}}}});
  s = backend.apply(partial);
  ASSERT_TRUE(s.ok()) << s.toString() << "\n" << partial;
  backend.commit();
  json afterPartial = nftState();
  EXPECT_FALSE(listed("sticky"));
  EXPECT_TRUE(listed("dnat to 10.244.3.3:8080"));

  // The same services written whole into a fresh table.
  ASSERT_TRUE(backend.cleanup().ok());
  NftablesBackend fresh(std::make_unique<ExecNftables>(), options);
  ASSERT_TRUE(fresh.start().ok());
  ASSERT_TRUE(
      fresh.apply(fresh.prepareFull({web, dns, empty}, {webSlice, dnsSlice, emptySlice})).ok());
  fresh.commit();
  EXPECT_EQ(afterPartial, nftState());
  ASSERT_TRUE(fresh.cleanup().ok());
  EXPECT_EQ(nftListing(), "");
}

TEST(ProxyNftNetnsTest, WithoutNftThereIsNoTableToRemove) {
  REQUIRE_NETNS();
  ProxyOptions o;
  o.nftPath = "/nonexistent/nft";
  Status s = cleanupAllProxyRules(o);
  EXPECT_TRUE(s.ok()) << s.toString();
  // The nftables mode itself says what it needs.
  NftablesBackend backend(std::make_unique<ExecNftables>(o.nftPath), RuleOptions{});
  s = backend.start();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Debian package nftables"), std::string::npos) << s.toString();
}

class ServiceProxyNftNetnsTest : public ProxyNetnsFixture {
 protected:
  void SetUp() override {
    REQUIRE_NFT();
    ProxyNetnsFixture::SetUp();
  }
  ProxyOptions options() { return ProxyNetnsFixture::options(ProxyMode::kNftables); }
};

TEST_F(ServiceProxyNftNetnsTest, RulesFollowTheApiAndAModeSwitchRemovesTheOtherModesRules) {
  const auto& svcs = client::resources::kServices;
  const auto& slices = client::resources::kEndpointSlices;
  ASSERT_TRUE(
      rest->create(svcs, "default", serviceObject("default", "web", "10.96.0.50", {{"http", 80}}))
          .ok());
  ASSERT_TRUE(rest->create(slices, "default",
                           sliceObject("default", "web-1", "web", {{"10.244.1.5"}, {"10.244.2.5"}},
                                       {{"http", 8080}}))
                  .ok());
  // An iptables-mode proxy ran here before.
  ProxyOptions iptablesMode = options();
  iptablesMode.mode = ProxyMode::kIptables;
  auto proxy = std::make_unique<ServiceProxy>(*rest, iptablesMode);
  ASSERT_TRUE(proxy->start().ok());
  auto natHas = [](const std::string& needle) {
    auto nat = runChecked({"iptables-save", "-t", "nat"});
    return nat.ok() && nat->find(needle) != std::string::npos;
  };
  ASSERT_TRUE(testing::eventually([&] { return natHas("10.244.2.5:8080"); }));
  proxy.reset();

  proxy = std::make_unique<ServiceProxy>(*rest, options());
  ASSERT_TRUE(proxy->start().ok());
  EXPECT_FALSE(natHas("KUBE-"));
  EXPECT_TRUE(testing::eventually([] { return listed("dnat to 10.244.2.5:8080"); }));

  // An endpoint removal is in the kernel within a second.
  auto slice = rest->get(slices, "default", "web-1");
  ASSERT_TRUE(slice.ok());
  (*slice)["endpoints"].erase(1);
  auto changedAt = std::chrono::steady_clock::now();
  ASSERT_TRUE(rest->update(slices, *slice).ok());
  EXPECT_TRUE(testing::eventually([] { return !listed("10.244.2.5"); }, 1s));
  EXPECT_LT(std::chrono::steady_clock::now() - changedAt, 1s);
  EXPECT_TRUE(listed("dnat to 10.244.1.5:8080"));
  EXPECT_TRUE(testing::eventually([&] { return proxy->stats().syncs >= 2; }, 1s));
  EXPECT_EQ(proxy->stats().endpoints, 1);

  // Stopped; the service goes meanwhile; a new proxy deletes its chain.
  proxy.reset();
  ASSERT_TRUE(listed("-default/web/tcp/http"));
  ASSERT_TRUE(rest->remove(svcs, "default", "web").ok());
  ASSERT_TRUE(
      rest->create(svcs, "default", serviceObject("default", "other", "10.96.0.51", {{"", 81}}))
          .ok());
  proxy = std::make_unique<ServiceProxy>(*rest, options());
  ASSERT_TRUE(proxy->start().ok());
  EXPECT_TRUE(testing::eventually([] { return listed("10.96.0.51 . tcp . 81"); }));
  EXPECT_FALSE(listed("default/web")) << nftListing();

  // Back to iptables mode: the table goes.
  proxy.reset();
  proxy = std::make_unique<ServiceProxy>(*rest, iptablesMode);
  ASSERT_TRUE(proxy->start().ok());
  EXPECT_EQ(nftListing(), "");
  ASSERT_TRUE(proxy->cleanup().ok());
}

TEST_F(ServiceProxyNftNetnsTest, ATableRemovedBehindItsBackIsRepaired) {
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
  ASSERT_TRUE(testing::eventually([] { return listed("dnat to 10.244.1.9:80"); }));
  ASSERT_TRUE(runChecked({"nft", "delete", "table", "ip", "kube-proxy"}).ok());
  EXPECT_EQ(nftListing(), "");
  EXPECT_TRUE(testing::eventually([] { return listed("dnat to 10.244.1.9:80"); }, 2s));
  ASSERT_TRUE(proxy.cleanup().ok());
  EXPECT_EQ(nftListing(), "");
}

}  // namespace
}  // namespace minik8s::proxy
