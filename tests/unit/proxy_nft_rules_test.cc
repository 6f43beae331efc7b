// The nftables mode's rules and documents (nft_rules.h) and its backend's bookkeeping
// (nftables_backend.h) against a fake nft: exact rules per service, full and partial documents,
// the hairpin set counted across services. proxy_nft_netns_test.cc runs them in a real kernel.
#include <gtest/gtest.h>

#include "proxy/nft_rules.h"
#include "proxy/nftables_backend.h"
#include "proxy_test_objects.h"

namespace minik8s::proxy {
namespace {

using testing::serviceObject;
using testing::sliceObject;

const RuleOptions kNftOptions{"10.244.0.0/16"};

NftServiceRules nftRulesOf(const json& service, const std::vector<json>& slices) {
  std::vector<const json*> pointers;
  for (const json& s : slices) pointers.push_back(&s);
  return buildNftServiceRules(service, pointers, kNftOptions);
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(NftRulesTest, ARulePerReadyEndpointBalancesUniformly) {
  auto web = serviceObject("ns", "web", "10.96.0.5", {{"http", 80}});
  auto slice =
      sliceObject("ns", "web-1", "web", {{"10.244.1.2"}, {"10.244.2.2"}, {"10.244.3.2", false}},
                  {{"http", 8080}});
  NftServiceRules r = nftRulesOf(web, {slice});
  std::string chain = "service-" + hash16("ns/web:httptcp").substr(0, 8) + "-ns/web/tcp/http";
  ASSERT_EQ(r.chains.size(), 1u);
  EXPECT_EQ(r.chains[0].name, chain);
  EXPECT_EQ(r.chains[0].rules,
            "add rule ip kube-proxy " + chain +
                " ip daddr 10.96.0.5 tcp dport 80 ip saddr != 10.244.0.0/16 jump "
                "mark-for-masquerade\n"
                "add rule ip kube-proxy " +
                chain +
                " numgen random mod 2 == 0 meta l4proto tcp dnat to 10.244.1.2:8080\n"
                "add rule ip kube-proxy " +
                chain + " meta l4proto tcp dnat to 10.244.2.2:8080\n");
  EXPECT_EQ(r.serviceIps, (std::vector<NftElement>{{"10.96.0.5 . tcp . 80", "goto " + chain}}));
  EXPECT_TRUE(r.nodePorts.empty());
  EXPECT_TRUE(r.noEndpointServices.empty());
  EXPECT_EQ(r.endpointIPs, (std::vector<std::string>{"10.244.1.2", "10.244.2.2"}));
  EXPECT_EQ(r.servicePorts, 1);
  EXPECT_EQ(r.endpoints, 2);
}

TEST(NftRulesTest, OneEndpointIsAPlainDnatAndNodePortsGoThroughAnExternalChain) {
  auto web = serviceObject("ns", "web", "10.96.0.5", {{"", 80, "UDP", 30053}}, "NodePort");
  auto slice = sliceObject("ns", "web-1", "web", {{"10.244.1.2"}}, {{"", 53, "UDP"}});
  NftServiceRules r = nftRulesOf(web, {slice});
  ASSERT_EQ(r.chains.size(), 2u);
  const ChainRules& ext = r.chains[0];
  const ChainRules& svc = r.chains[1];
  EXPECT_TRUE(ext.name.starts_with("external-")) << ext.name;
  EXPECT_TRUE(ext.name.ends_with("-ns/web/udp/")) << ext.name;
  EXPECT_EQ(ext.rules, "add rule ip kube-proxy " + ext.name + " jump mark-for-masquerade\n" +
                           "add rule ip kube-proxy " + ext.name + " goto " + svc.name + "\n");
  EXPECT_TRUE(has(svc.rules, svc.name + " meta l4proto udp dnat to 10.244.1.2:53\n"));
  EXPECT_EQ(r.nodePorts, (std::vector<NftElement>{{"udp . 30053", "goto " + ext.name}}));
}

TEST(NftRulesTest, APortWithoutEndpointsIsRejectedNotBalanced) {
  auto web = serviceObject("ns", "web", "10.96.0.5", {{"http", 80, "TCP", 30080}}, "NodePort");
  NftServiceRules r = nftRulesOf(web, {});
  EXPECT_TRUE(r.chains.empty());
  EXPECT_TRUE(r.serviceIps.empty());
  EXPECT_EQ(r.noEndpointServices, (std::vector<NftElement>{{"10.96.0.5 . tcp . 80"}}));
  EXPECT_EQ(r.noEndpointNodePorts, (std::vector<NftElement>{{"tcp . 30080"}}));
  EXPECT_EQ(r.servicePorts, 1);
}

TEST(NftRulesTest, ClientIPAffinityGivesEachEndpointAChainAndATimedSet) {
  auto sticky = serviceObject("ns", "sticky", "10.96.0.7", {{"", 80}});
  sticky["spec"]["sessionAffinity"] = "ClientIP";
  sticky["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] = 600;
  auto slice =
      sliceObject("ns", "sticky-1", "sticky", {{"10.244.1.2"}, {"10.244.2.2"}}, {{"", 80}});
  NftServiceRules r = nftRulesOf(sticky, {slice});
  ASSERT_EQ(r.chains.size(), 3u);  // two endpoint chains, then the service chain
  ASSERT_EQ(r.affinitySets.size(), 2u);
  const ChainRules& svc = r.chains[2];
  for (int i = 0; i < 2; ++i) {
    const ChainRules& ep = r.chains[i];
    EXPECT_TRUE(ep.name.starts_with("endpoint-")) << ep.name;
    const NftAffinitySet& set = *std::ranges::find_if(r.affinitySets, [&](const NftAffinitySet& s) {
      return s.name.substr(s.name.find("-ns/")) == ep.name.substr(ep.name.find("-ns/"));
    });
    EXPECT_EQ(set.timeoutSeconds, 600);
    EXPECT_TRUE(has(svc.rules, "ip saddr @" + set.name + " goto " + ep.name + "\n"));
    EXPECT_TRUE(has(ep.rules, ep.name + " update @" + set.name + " { ip saddr }\n"));
  }
  // Balanced over the endpoints in their order (the chains are sorted by their hashed names).
  auto chainOf = [&](const std::string& ip) {
    return std::ranges::find_if(r.chains,
                                [&](const ChainRules& c) { return c.name.ends_with(ip + "/80"); })
        ->name;
  };
  EXPECT_TRUE(has(svc.rules, " numgen random mod 2 == 0 goto " + chainOf("10.244.1.2") + "\n" +
                                 "add rule ip kube-proxy " + svc.name + " goto " +
                                 chainOf("10.244.2.2") + "\n"))
      << svc.rules;
  // A new timeout is a new set: the kernel cannot change a set's timeout in place.
  sticky["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] = 60;
  EXPECT_NE(nftRulesOf(sticky, {slice}).affinitySets[0].name, r.affinitySets[0].name);
}

TEST(NftRulesTest, FullDocumentDeclaresBeforeUseAndDeletesWhatIsStale) {
  auto web = serviceObject("ns", "web", "10.96.0.5", {{"http", 80}});
  auto slice = sliceObject("ns", "web-1", "web", {{"10.244.1.2"}}, {{"http", 8080}});
  NftServiceRules r = nftRulesOf(web, {slice});
  NftObjects existing{{r.chains[0].name, "service-OLD-ns/old/tcp/"}, {"affinity-OLD-x"}};
  std::string doc = nftFullDocument({&r}, existing);
  size_t declared = doc.find("add chain ip kube-proxy " + r.chains[0].name + "\n");
  size_t element = doc.find("add element ip kube-proxy service-ips { 10.96.0.5 . tcp . 80 : goto " +
                            r.chains[0].name + " }\n");
  ASSERT_NE(declared, std::string::npos);
  ASSERT_NE(element, std::string::npos);
  EXPECT_LT(declared, element);
  EXPECT_TRUE(has(doc, "flush map ip kube-proxy service-ips\n"));
  EXPECT_TRUE(has(doc, "add element ip kube-proxy hairpin { 10.244.1.2 . 10.244.1.2 }\n"));
  EXPECT_TRUE(has(doc,
                  "flush chain ip kube-proxy service-OLD-ns/old/tcp/\n"
                  "delete chain ip kube-proxy service-OLD-ns/old/tcp/\n"
                  "delete set ip kube-proxy affinity-OLD-x\n"));
  EXPECT_FALSE(has(doc, "delete chain ip kube-proxy " + r.chains[0].name));
  // The table of an empty cluster: the fixed chains only, no empty element lists.
  std::string empty = nftFullDocument({}, {});
  EXPECT_TRUE(empty.starts_with("add table ip kube-proxy\n"));
  EXPECT_FALSE(has(empty, "add element"));
}

TEST(NftRulesTest, ChainsAndSetsAreReadBackFromTheListing) {
  NftObjects o = parseNftObjects(
      "table ip kube-proxy {\n\tset affinity-ABC-ns/s/tcp/__10.0.0.1/80 {\n\t\ttype ipv4_addr\n\t}"
      "\n\tset hairpin {\n\t}\n\tchain services {\n\t}\n\tchain service-ABC-ns/s/tcp/ {\n\t}\n"
      "\tchain endpoint-DEF-ns/s/tcp/__10.0.0.1/80 {\n\t}\n\tchain external-ABC-ns/s/tcp/ "
      "{\n\t}\n}\n");
  EXPECT_EQ(o.chains, (std::set<std::string>{"endpoint-DEF-ns/s/tcp/__10.0.0.1/80",
                                             "external-ABC-ns/s/tcp/", "service-ABC-ns/s/tcp/"}));
  EXPECT_EQ(o.sets, (std::set<std::string>{"affinity-ABC-ns/s/tcp/__10.0.0.1/80"}));
}

// Records documents; lists what a test says the kernel has.
class FakeNftables : public Nftables {
 public:
  Status apply(const std::string& document) override {
    documents.push_back(document);
    return fail ? Status::Internal("nft: refused") : Status::Ok();
  }
  Result<std::string> listTable() override { return listing; }
  std::vector<std::string> documents;
  std::string listing;
  bool fail = false;
};

class NftablesBackendTest : public ::testing::Test {
 protected:
  NftablesBackendTest() {
    auto fake = std::make_unique<FakeNftables>();
    nft = fake.get();
    backend = std::make_unique<NftablesBackend>(std::move(fake), kNftOptions);
  }
  // Applies and commits what was prepared; returns the document.
  std::string sync(std::string doc) {
    EXPECT_TRUE(backend->apply(doc).ok());
    backend->commit();
    return doc;
  }

  FakeNftables* nft;
  std::unique_ptr<NftablesBackend> backend;
  json web = serviceObject("ns", "web", "10.96.0.5", {{"http", 80}});
  json api = serviceObject("ns", "api", "10.96.0.6", {{"http", 80}});
  json webSlice =
      sliceObject("ns", "web-1", "web", {{"10.244.1.2"}, {"10.244.2.2"}}, {{"http", 8080}});
  json apiSlice = sliceObject("ns", "api-1", "api", {{"10.244.1.2"}}, {{"http", 8080}});
};

TEST_F(NftablesBackendTest, AnEndpointChangeRewritesOnlyThatServicesChain) {
  ASSERT_TRUE(backend->start().ok());
  sync(backend->prepareFull({web, api}, {webSlice, apiSlice}));
  EXPECT_EQ(backend->servicePorts(), 2);
  EXPECT_EQ(backend->endpoints(), 3);
  EXPECT_EQ(backend->preparePartial({{"ns/web", {web, {webSlice}}}}), "");

  json moved =
      sliceObject("ns", "web-1", "web", {{"10.244.1.2"}, {"10.244.3.2"}}, {{"http", 8080}});
  std::string doc = sync(backend->preparePartial({{"ns/web", {web, {moved}}}}));
  std::string chain = nftRulesOf(web, {moved}).chains[0].name;
  EXPECT_TRUE(has(doc, "flush chain ip kube-proxy " + chain + "\n")) << doc;
  EXPECT_TRUE(has(doc, "dnat to 10.244.3.2:8080")) << doc;
  EXPECT_FALSE(has(doc, "api")) << doc;
  EXPECT_FALSE(has(doc, "element ip kube-proxy service-ips")) << doc;  // same ClusterIP, same chain
  EXPECT_TRUE(has(doc, "delete element ip kube-proxy hairpin { 10.244.2.2 . 10.244.2.2 }\n"));
  EXPECT_TRUE(has(doc, "add element ip kube-proxy hairpin { 10.244.3.2 . 10.244.3.2 }\n"));
  EXPECT_EQ(backend->endpoints(), 3);
}

TEST_F(NftablesBackendTest, AHairpinAddressStaysWhileAnotherServiceUsesIt) {
  ASSERT_TRUE(backend->start().ok());
  sync(backend->prepareFull({web, api}, {webSlice, apiSlice}));
  // web goes: 10.244.1.2 is still api's endpoint, 10.244.2.2 was only web's.
  std::string doc = sync(backend->preparePartial({{"ns/web", {std::nullopt, {}}}}));
  EXPECT_TRUE(has(doc, "delete element ip kube-proxy hairpin { 10.244.2.2 . 10.244.2.2 }\n"));
  EXPECT_FALSE(has(doc, "10.244.1.2 . 10.244.1.2")) << doc;
  EXPECT_TRUE(has(doc, "delete element ip kube-proxy service-ips { 10.96.0.5 . tcp . 80 }\n"));
  std::string chain = nftRulesOf(web, {webSlice}).chains[0].name;
  EXPECT_TRUE(has(doc, "delete chain ip kube-proxy " + chain + "\n"));
  EXPECT_EQ(backend->servicePorts(), 1);
  // api goes too: now the address is released.
  doc = sync(backend->preparePartial({{"ns/api", {std::nullopt, {}}}}));
  EXPECT_TRUE(has(doc, "delete element ip kube-proxy hairpin { 10.244.1.2 . 10.244.1.2 }\n"));
  EXPECT_EQ(backend->servicePorts(), 0);
  EXPECT_EQ(backend->endpoints(), 0);
}

TEST_F(NftablesBackendTest, LosingItsEndpointsMovesAPortFromTheMapToTheRejects) {
  ASSERT_TRUE(backend->start().ok());
  sync(backend->prepareFull({web}, {webSlice}));
  json empty = sliceObject("ns", "web-1", "web", {}, {{"http", 8080}});
  std::string doc = sync(backend->preparePartial({{"ns/web", {web, {empty}}}}));
  size_t del = doc.find("delete element ip kube-proxy service-ips { 10.96.0.5 . tcp . 80 }\n");
  size_t reject =
      doc.find("add element ip kube-proxy no-endpoint-services { 10.96.0.5 . tcp . 80 }\n");
  size_t gone = doc.find("delete chain ip kube-proxy ");
  ASSERT_NE(del, std::string::npos) << doc;
  ASSERT_NE(reject, std::string::npos) << doc;
  ASSERT_NE(gone, std::string::npos) << doc;
  // The map element that jumps to the chain goes before the chain.
  EXPECT_LT(del, gone);
}

TEST_F(NftablesBackendTest, AFailedSyncReadsTheKernelAndTheNextFullSyncDeletesWhatIsStale) {
  ASSERT_TRUE(backend->start().ok());
  sync(backend->prepareFull({web}, {webSlice}));
  std::string doc = backend->preparePartial({{"ns/api", {api, {apiSlice}}}});
  nft->fail = true;
  EXPECT_FALSE(backend->apply(doc).ok());
  nft->listing = "table ip kube-proxy {\n\tchain service-LEFT-ns/x/tcp/ {\n\t}\n}\n";
  backend->recover();
  nft->fail = false;
  doc = sync(backend->prepareFull({web, api}, {webSlice, apiSlice}));
  EXPECT_TRUE(has(doc, "delete chain ip kube-proxy service-LEFT-ns/x/tcp/\n"));
  EXPECT_EQ(backend->servicePorts(), 2);
  // After a full sync that succeeded, the kernel holds what was written: nothing more to delete.
  doc = sync(backend->prepareFull({web, api}, {webSlice, apiSlice}));
  EXPECT_FALSE(has(doc, "delete chain"));
}

}  // namespace
}  // namespace minik8s::proxy
