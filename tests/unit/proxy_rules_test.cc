#include "proxy/proxy_rules.h"

#include <gtest/gtest.h>

#include <sstream>

#include "proxy_test_objects.h"

namespace minik8s::proxy {
namespace {

using testing::serviceObject;
using testing::sliceObject;

// The lines of `text` that mention `needle`, in order.
std::vector<std::string> linesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

TEST(ProxyRulesTest, ChainNamesAreKubeProxyHashes) {
  // Values from kube-proxy's own tests: base32(sha256(...))[:16].
  EXPECT_EQ(serviceChainName("ns1/svc1:p80", "TCP"), "KUBE-SVC-XPGD46QRK7WJZT7O");
  EXPECT_EQ(externalChainName("ns1/svc1:p80", "tcp"), "KUBE-EXT-XPGD46QRK7WJZT7O");
  EXPECT_EQ(endpointChainName("ns1/svc1:p80", "TCP", "10.180.0.1:80"), "KUBE-SEP-SXIVWICOYRO3J4NJ");
  EXPECT_EQ(servicePortName("ns", "web", ""), "ns/web");
  EXPECT_EQ(servicePortName("ns", "web", "http"), "ns/web:http");
  EXPECT_NE(serviceChainName("ns1/svc1:p80", "UDP"), serviceChainName("ns1/svc1:p80", "TCP"));
}

TEST(ProxyRulesTest, WholeDocumentForOneServiceWithTwoEndpoints) {
  auto svc = serviceObject("ns1", "svc1", "10.96.0.5", {{"p80", 80}});
  auto slice =
      sliceObject("ns1", "svc1-abc", "svc1", {{"10.244.1.2"}, {"10.244.2.3"}}, {{"p80", 8080}});
  ProxyRules r = buildProxyRules({svc}, {slice}, RuleOptions{"10.244.0.0/16"}, {});
  std::string svcChain = "KUBE-SVC-XPGD46QRK7WJZT7O";
  std::string sep1 = endpointChainName("ns1/svc1:p80", "tcp", "10.244.1.2:8080");
  std::string sep2 = endpointChainName("ns1/svc1:p80", "tcp", "10.244.2.3:8080");
  // Endpoint chains come first, then service chains, each in descending name order (sep2 >
  // sep1), KUBE-SERVICES last: the order iptables-nft-restore handles fastest.
  ASSERT_GT(sep2, sep1);
  std::string expected =
      "*filter\n"
      ":KUBE-SERVICES - [0:0]\n"
      ":KUBE-EXTERNAL-SERVICES - [0:0]\n"
      "COMMIT\n"
      "*nat\n"
      ":KUBE-SERVICES - [0:0]\n"
      ":KUBE-NODEPORTS - [0:0]\n"
      ":KUBE-POSTROUTING - [0:0]\n"
      ":KUBE-MARK-MASQ - [0:0]\n"
      "-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n"
      "-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000\n"
      "-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" "
      "-j MASQUERADE --random-fully\n"
      "-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000\n"
      ":" +
      sep2 +
      " - [0:0]\n"
      "-A " +
      sep2 +
      " -m comment --comment ns1/svc1:p80 -s 10.244.2.3/32 -j KUBE-MARK-MASQ\n"
      "-A " +
      sep2 +
      " -m comment --comment ns1/svc1:p80 -p tcp -m tcp -j DNAT "
      "--to-destination 10.244.2.3:8080\n"
      ":" +
      sep1 +
      " - [0:0]\n"
      "-A " +
      sep1 +
      " -m comment --comment ns1/svc1:p80 -s 10.244.1.2/32 -j KUBE-MARK-MASQ\n"
      "-A " +
      sep1 +
      " -m comment --comment ns1/svc1:p80 -p tcp -m tcp -j DNAT "
      "--to-destination 10.244.1.2:8080\n"
      ":" +
      svcChain +
      " - [0:0]\n"
      "-A " +
      svcChain +
      " -m comment --comment \"ns1/svc1:p80 cluster IP\" ! -s 10.244.0.0/16 "
      "-d 10.96.0.5/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ\n"
      "-A " +
      svcChain +
      " -m comment --comment \"ns1/svc1:p80 -> 10.244.1.2:8080\" -m statistic "
      "--mode random --probability 0.5000000000 -j " +
      sep1 +
      "\n"
      "-A " +
      svcChain + " -m comment --comment \"ns1/svc1:p80 -> 10.244.2.3:8080\" -j " + sep2 +
      "\n"
      "-A KUBE-SERVICES -m comment --comment \"ns1/svc1:p80 cluster IP\" -d 10.96.0.5/32 -p tcp "
      "-m tcp --dport 80 -j " +
      svcChain +
      "\n"
      "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be "
      "the last rule in this chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n"
      "COMMIT\n";
  EXPECT_EQ(r.restoreText, expected);
  EXPECT_EQ(r.natChains, (std::set<std::string>{svcChain, sep1, sep2}));
  EXPECT_EQ(r.servicePorts, 1);
  EXPECT_EQ(r.endpoints, 2);
}

TEST(ProxyRulesTest, BalancesUniformlyOverReadyEndpointsOnly) {
  auto svc = serviceObject("default", "web", "10.96.0.9", {{"", 80}});
  auto slice = sliceObject("default", "web-1", "web",
                           {{"10.244.0.1"}, {"10.244.0.2"}, {"10.244.0.3", false}, {"10.244.0.4"}},
                           {{"", 8080}});
  ProxyRules r = buildProxyRules({svc}, {slice}, {}, {});
  auto chain = serviceChainName("default/web", "TCP");
  auto jumps = linesWith(r.restoreText, "-A " + chain + " ");
  ASSERT_EQ(jumps.size(), 3u);  // no masquerade rule without a cluster CIDR
  EXPECT_NE(jumps[0].find("10.244.0.1:8080\" -m statistic --mode random --probability "
                          "0.3333333333 -j"),
            std::string::npos);
  EXPECT_NE(jumps[1].find("10.244.0.2:8080\" -m statistic --mode random --probability "
                          "0.5000000000 -j"),
            std::string::npos);
  EXPECT_EQ(jumps[2].find("statistic"), std::string::npos);
  EXPECT_NE(jumps[2].find("10.244.0.4:8080"), std::string::npos);
  EXPECT_EQ(r.restoreText.find("10.244.0.3"), std::string::npos);
  EXPECT_EQ(r.endpoints, 3);
}

TEST(ProxyRulesTest, EndpointsMatchTheServicePortByNameAndProtocol) {
  auto svc = serviceObject("ns", "dns", "10.96.0.10",
                           {{"dns", 53, "UDP"}, {"dns-tcp", 53, "TCP"}, {"metrics", 9153}});
  auto slice = sliceObject("ns", "dns-x", "dns", {{"10.0.0.7"}},
                           {{"dns", 5353, "UDP"}, {"dns-tcp", 5354, "TCP"}});
  ProxyRules r = buildProxyRules({svc}, {slice}, {}, {});
  EXPECT_EQ(linesWith(r.restoreText, "-p udp -m udp -j DNAT --to-destination 10.0.0.7:5353").size(),
            1u);
  EXPECT_EQ(linesWith(r.restoreText, "-p tcp -m tcp -j DNAT --to-destination 10.0.0.7:5354").size(),
            1u);
  // The metrics port has no endpoint in the slice: rejected in filter, no nat chain.
  auto rejects = linesWith(r.restoreText, "REJECT");
  ASSERT_EQ(rejects.size(), 1u);
  EXPECT_EQ(rejects[0],
            "-A KUBE-SERVICES -m comment --comment \"ns/dns:metrics has no endpoints\" "
            "-d 10.96.0.10/32 -p tcp -m tcp --dport 9153 -j REJECT --reject-with "
            "icmp-port-unreachable");
  EXPECT_EQ(r.servicePorts, 3);
  EXPECT_EQ(r.servicePortsWithoutEndpoints, 1);
  EXPECT_FALSE(r.natChains.count(serviceChainName("ns/dns:metrics", "tcp")));
}

TEST(ProxyRulesTest, SlicesOfOtherServicesNamespacesOrAddressTypesAreIgnored) {
  auto svc = serviceObject("a", "web", "10.96.0.9", {{"", 80}});
  auto otherNs = sliceObject("b", "web-1", "web", {{"10.1.1.1"}}, {{"", 80}});
  auto otherSvc = sliceObject("a", "api-1", "api", {{"10.1.1.2"}}, {{"", 80}});
  auto v6 = sliceObject("a", "web-6", "web", {{"fd00::1"}}, {{"", 80}});
  v6["addressType"] = "IPv6";
  ProxyRules r = buildProxyRules({svc}, {otherNs, otherSvc, v6}, {}, {});
  EXPECT_EQ(r.endpoints, 0);
  EXPECT_EQ(linesWith(r.restoreText, "REJECT").size(), 1u);
}

TEST(ProxyRulesTest, EndpointsFromSeveralSlicesAreMergedWithoutDuplicates) {
  auto svc = serviceObject("a", "web", "10.96.0.9", {{"", 80}});
  auto s1 = sliceObject("a", "web-1", "web", {{"10.1.1.1"}, {"10.1.1.2"}}, {{"", 80}});
  auto s2 = sliceObject("a", "web-2", "web", {{"10.1.1.2"}, {"10.1.1.3"}}, {{"", 80}});
  EXPECT_EQ(buildProxyRules({svc}, {s1, s2}, {}, {}).endpoints, 3);
}

TEST(ProxyRulesTest, NodePortGoesThroughAnExternalChainThatMasquerades) {
  auto svc = serviceObject("ns1", "svc1", "10.96.0.5", {{"p80", 80, "TCP", 30080}}, "NodePort");
  auto slice = sliceObject("ns1", "s", "svc1", {{"10.244.1.2"}}, {{"p80", 80}});
  ProxyRules r = buildProxyRules({svc}, {slice}, {}, {});
  EXPECT_EQ(linesWith(r.restoreText, "-A KUBE-NODEPORTS"),
            std::vector<std::string>{"-A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -p tcp "
                                     "-m tcp --dport 30080 -j KUBE-EXT-XPGD46QRK7WJZT7O"});
  EXPECT_EQ(linesWith(r.restoreText, "-A KUBE-EXT-XPGD46QRK7WJZT7O"),
            (std::vector<std::string>{
                "-A KUBE-EXT-XPGD46QRK7WJZT7O -m comment --comment \"masquerade traffic for "
                "ns1/svc1:p80 external destinations\" -j KUBE-MARK-MASQ",
                "-A KUBE-EXT-XPGD46QRK7WJZT7O -j KUBE-SVC-XPGD46QRK7WJZT7O"}));
  // The jump to KUBE-NODEPORTS stays the last rule of KUBE-SERVICES.
  auto services = linesWith(r.restoreText, "-A KUBE-SERVICES ");
  ASSERT_EQ(services.size(), 2u);
  EXPECT_NE(services.back().find("--dst-type LOCAL -j KUBE-NODEPORTS"), std::string::npos);
  EXPECT_TRUE(r.natChains.count("KUBE-EXT-XPGD46QRK7WJZT7O"));
}

TEST(ProxyRulesTest, NodePortWithoutEndpointsIsRejectedOnLocalAddresses) {
  auto svc = serviceObject("ns1", "svc1", "10.96.0.5", {{"p80", 80, "TCP", 30080}}, "NodePort");
  ProxyRules r = buildProxyRules({svc}, {}, {}, {});
  EXPECT_EQ(linesWith(r.restoreText, "-A KUBE-EXTERNAL-SERVICES"),
            std::vector<std::string>{
                "-A KUBE-EXTERNAL-SERVICES -m comment --comment \"ns1/svc1:p80 has no "
                "endpoints\" -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 30080 -j REJECT "
                "--reject-with icmp-port-unreachable"});
  EXPECT_TRUE(linesWith(r.restoreText, "-A KUBE-NODEPORTS").empty());
}

TEST(ProxyRulesTest, ClientIPAffinityUsesRecentMatches) {
  auto svc = serviceObject("ns", "sticky", "10.96.0.7", {{"", 80}});
  svc["spec"]["sessionAffinity"] = "ClientIP";
  svc["spec"]["sessionAffinityConfig"] = {{"clientIP", {{"timeoutSeconds", 600}}}};
  auto slice = sliceObject("ns", "s", "sticky", {{"10.0.0.1"}, {"10.0.0.2"}}, {{"", 80}});
  ProxyRules r = buildProxyRules({svc}, {slice}, {}, {});
  auto svcChain = serviceChainName("ns/sticky", "tcp");
  auto sep1 = endpointChainName("ns/sticky", "tcp", "10.0.0.1:80");
  auto rcheck = linesWith(r.restoreText, "--rcheck");
  ASSERT_EQ(rcheck.size(), 2u);
  EXPECT_EQ(rcheck[0], "-A " + svcChain +
                           " -m comment --comment \"ns/sticky -> 10.0.0.1:80\" -m "
                           "recent --name " +
                           sep1 + " --rcheck --seconds 600 --reap -j " + sep1);
  // The affinity checks come before the random balancing.
  auto chainLines = linesWith(r.restoreText, "-A " + svcChain + " ");
  EXPECT_NE(chainLines[0].find("--rcheck"), std::string::npos);
  EXPECT_NE(chainLines[2].find("statistic"), std::string::npos);
  EXPECT_EQ(linesWith(r.restoreText, "-A " + sep1 +
                                         " -m comment --comment ns/sticky -p tcp -m "
                                         "recent --name " +
                                         sep1 + " --set -m tcp -j DNAT")
                .size(),
            1u);
}

TEST(ProxyRulesTest, HeadlessAndExternalNameServicesGetNoRules) {
  auto headless = serviceObject("ns", "h", "None", {{"", 80}});
  auto external = serviceObject("ns", "e", "", {{"", 80}}, "ExternalName");
  auto slice = sliceObject("ns", "h-1", "h", {{"10.0.0.1"}}, {{"", 80}});
  ProxyRules r = buildProxyRules({headless, external}, {slice}, {}, {});
  EXPECT_EQ(r.servicePorts, 0);
  EXPECT_TRUE(r.natChains.empty());
  EXPECT_TRUE(linesWith(r.restoreText, "10.0.0.1").empty());
}

TEST(ProxyRulesTest, StaleChainsAreFlushedThenDeleted) {
  auto svc = serviceObject("ns1", "svc1", "10.96.0.5", {{"p80", 80}});
  auto slice = sliceObject("ns1", "s", "svc1", {{"10.244.1.2"}}, {{"p80", 80}});
  std::string keep = "KUBE-SVC-XPGD46QRK7WJZT7O";
  std::set<std::string> existing{keep, "KUBE-SVC-OLDOLDOLDOLDOLDO", "KUBE-SEP-OLDOLDOLDOLDOLDO"};
  ProxyRules r = buildProxyRules({svc}, {slice}, {}, existing);
  const std::string& t = r.restoreText;
  for (std::string old : {"KUBE-SVC-OLDOLDOLDOLDOLDO", "KUBE-SEP-OLDOLDOLDOLDOLDO"}) {
    auto declared = t.find(":" + old + " - [0:0]\n");
    auto deleted = t.find("-X " + old + "\n");
    ASSERT_NE(declared, std::string::npos) << old;
    ASSERT_NE(deleted, std::string::npos) << old;
    EXPECT_LT(declared, t.find("-A KUBE-POSTROUTING"));
    EXPECT_GT(deleted, t.rfind("-A "));
  }
  EXPECT_EQ(t.find("-X " + keep), std::string::npos);
  EXPECT_FALSE(r.natChains.count("KUBE-SVC-OLDOLDOLDOLDOLDO"));
}

TEST(ProxyRulesTest, OutputIsIndependentOfInputOrder) {
  auto a = serviceObject("ns", "a", "10.96.0.1", {{"", 80}});
  auto b = serviceObject("ns", "b", "10.96.0.2", {{"", 80}});
  auto sa = sliceObject("ns", "a-1", "a", {{"10.0.0.2"}, {"10.0.0.1"}}, {{"", 80}});
  auto sb = sliceObject("ns", "b-1", "b", {{"10.0.0.3"}}, {{"", 80}});
  EXPECT_EQ(buildProxyRules({a, b}, {sa, sb}, {}, {}).restoreText,
            buildProxyRules({b, a}, {sb, sa}, {}, {}).restoreText);
}

TEST(ProxyRulesTest, MalformedObjectsAreSkippedNotFatal) {
  json broken = {{"metadata", "x"}, {"spec", {{"ports", 7}}}};
  json brokenSlice = {{"addressType", "IPv4"}, {"endpoints", {{{"addresses", {1, 2}}}}}};
  ProxyRules r = buildProxyRules({broken, json::array()}, {brokenSlice}, {}, {});
  EXPECT_EQ(r.servicePorts, 0);
}

// Partial syncs: two services, svc1 with two endpoints and svc2 with one.
struct TwoServices {
  json svc1 = serviceObject("ns1", "svc1", "10.96.0.5", {{"p80", 80}});
  json svc2 = serviceObject("ns1", "svc2", "10.96.0.6", {{"p80", 80}});
  json slice1 =
      sliceObject("ns1", "svc1-abc", "svc1", {{"10.244.1.2"}, {"10.244.2.3"}}, {{"p80", 8080}});
  json slice2 = sliceObject("ns1", "svc2-abc", "svc2", {{"10.244.5.6"}}, {{"p80", 8080}});
  ProxyRules build() const { return buildProxyRules({svc1, svc2}, {slice1, slice2}, {}, {}); }
};

TEST(ProxyRulesTest, PartialSyncOfUnchangedRulesIsEmpty) {
  TwoServices t;
  EXPECT_EQ(changedRulesText(t.build(), t.build()), "");
}

TEST(ProxyRulesTest, PartialSyncOfAnEndpointChangeWritesOnlyThatServicesChains) {
  TwoServices t;
  ProxyRules before = t.build();
  t.slice1 =
      sliceObject("ns1", "svc1-abc", "svc1", {{"10.244.1.2"}, {"10.244.3.4"}}, {{"p80", 8080}});
  ProxyRules after = t.build();
  std::string svc1 = serviceChainName("ns1/svc1:p80", "tcp");
  std::string kept = endpointChainName("ns1/svc1:p80", "tcp", "10.244.1.2:8080");
  std::string gone = endpointChainName("ns1/svc1:p80", "tcp", "10.244.2.3:8080");
  std::string added = endpointChainName("ns1/svc1:p80", "tcp", "10.244.3.4:8080");
  // svc1's service chain and its new endpoint chain are written, the old endpoint chain is
  // deleted; the unchanged endpoint chain, svc2 and KUBE-SERVICES are left alone.
  EXPECT_EQ(changedRulesText(after, before),
            "*nat\n"
            ":" +
                gone +
                " - [0:0]\n"
                ":" +
                added +
                " - [0:0]\n"
                "-A " +
                added +
                " -m comment --comment ns1/svc1:p80 -s 10.244.3.4/32 "
                "-j KUBE-MARK-MASQ\n"
                "-A " +
                added +
                " -m comment --comment ns1/svc1:p80 -p tcp -m tcp -j DNAT "
                "--to-destination 10.244.3.4:8080\n"
                ":" +
                svc1 +
                " - [0:0]\n"
                "-A " +
                svc1 +
                " -m comment --comment \"ns1/svc1:p80 -> 10.244.1.2:8080\" "
                "-m statistic --mode random --probability 0.5000000000 -j " +
                kept +
                "\n"
                "-A " +
                svc1 + " -m comment --comment \"ns1/svc1:p80 -> 10.244.3.4:8080\" -j " + added +
                "\n"
                "-X " +
                gone +
                "\n"
                "COMMIT\n");
}

TEST(ProxyRulesTest, PartialSyncOfAServiceRemovalDeletesItsChains) {
  TwoServices t;
  ProxyRules before = t.build();
  ProxyRules after = buildProxyRules({t.svc1}, {t.slice1, t.slice2}, {}, {});
  std::string svc1 = serviceChainName("ns1/svc1:p80", "tcp");
  std::string svc2 = serviceChainName("ns1/svc2:p80", "tcp");
  std::string sep2 = endpointChainName("ns1/svc2:p80", "tcp", "10.244.5.6:8080");
  ASSERT_LT(sep2, svc2);
  EXPECT_EQ(changedRulesText(after, before),
            "*nat\n"
            ":KUBE-SERVICES - [0:0]\n"
            ":" +
                sep2 +
                " - [0:0]\n"
                ":" +
                svc2 +
                " - [0:0]\n"
                "-A KUBE-SERVICES -m comment --comment \"ns1/svc1:p80 cluster IP\" -d 10.96.0.5/32 "
                "-p tcp -m tcp --dport 80 -j " +
                svc1 +
                "\n"
                "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this "
                "must be the last rule in this chain\" -m addrtype --dst-type LOCAL "
                "-j KUBE-NODEPORTS\n"
                "-X " +
                sep2 +
                "\n"
                "-X " +
                svc2 +
                "\n"
                "COMMIT\n");
}

TEST(ProxyRulesTest, PartialSyncOfAServiceLosingItsEndpointsRewritesTheRejects) {
  TwoServices t;
  ProxyRules before = t.build();
  t.slice2 = sliceObject("ns1", "svc2-abc", "svc2", {}, {{"p80", 8080}});
  std::string text = changedRulesText(t.build(), before);
  // The filter table gets its REJECT (both filter chains rewritten), nat loses svc2's chains.
  EXPECT_EQ(text.rfind("*filter\n:KUBE-SERVICES - [0:0]\n:KUBE-EXTERNAL-SERVICES - [0:0]\n"
                       "-A KUBE-SERVICES -m comment --comment \"ns1/svc2:p80 has no endpoints\"",
                       0),
            0u);
  EXPECT_NE(text.find("-X " + serviceChainName("ns1/svc2:p80", "tcp") + "\n"), std::string::npos);
  EXPECT_EQ(text.find(":" + serviceChainName("ns1/svc1:p80", "tcp")), std::string::npos);
  EXPECT_EQ(text.find("KUBE-POSTROUTING"), std::string::npos);
}

TEST(ProxyRulesTest, PartialSyncOfANodePortChangeRewritesOnlyKubeNodePorts) {
  json web = serviceObject("ns1", "web", "10.96.0.5", {{"p80", 80, "TCP", 30080}}, "NodePort");
  json slice = sliceObject("ns1", "web-1", "web", {{"10.244.1.2"}}, {{"p80", 8080}});
  ProxyRules before = buildProxyRules({web}, {slice}, {}, {});
  web["spec"]["ports"][0]["nodePort"] = 30081;
  std::string text = changedRulesText(buildProxyRules({web}, {slice}, {}, {}), before);
  EXPECT_EQ(text,
            "*nat\n:KUBE-NODEPORTS - [0:0]\n-A KUBE-NODEPORTS -m comment --comment ns1/web:p80 "
            "-p tcp -m tcp --dport 30081 -j " +
                externalChainName("ns1/web:p80", "tcp") + "\nCOMMIT\n");
}

TEST(ProxyRulesTest, ChainsAreReadBackFromIptablesSave) {
  std::string save =
      "# Generated by iptables-save\n*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n"
      ":KUBE-MARK-MASQ - [0:0]\n:KUBE-SVC-AAAA - [0:0]\n:KUBE-SEP-BBBB - [0:0]\n"
      ":KUBE-EXT-CCCC - [0:0]\n:OTHER - [0:0]\n-A KUBE-SVC-AAAA -j KUBE-SEP-BBBB\nCOMMIT\n";
  EXPECT_EQ(perServiceChains(save),
            (std::set<std::string>{"KUBE-SVC-AAAA", "KUBE-SEP-BBBB", "KUBE-EXT-CCCC"}));
  EXPECT_EQ(ownedChains(save, "nat"),
            (std::set<std::string>{"KUBE-SERVICES", "KUBE-MARK-MASQ", "KUBE-SVC-AAAA",
                                   "KUBE-SEP-BBBB", "KUBE-EXT-CCCC"}));
  EXPECT_EQ(ownedChains("*filter\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-X - [0:0]\n", "filter"),
            std::set<std::string>{"KUBE-SERVICES"});
  EXPECT_EQ(deleteChainsText({"KUBE-SVC-A"}, {}),
            "*nat\n:KUBE-SVC-A - [0:0]\n-X KUBE-SVC-A\nCOMMIT\n");
}

}  // namespace
}  // namespace minik8s::proxy
