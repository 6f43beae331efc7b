#include <gtest/gtest.h>

#include "dns/dns_endpoint.h"
#include "dns/dnsmasq.h"
#include "dns/hosts_file.h"
#include "proxy_test_objects.h"

namespace minik8s::dns {
namespace {

using testing::serviceObject;
using testing::sliceObject;

constexpr const char* kHeader = "# cluster DNS records written by the minik8s agent; do not edit\n";

TEST(HostsFileTest, ClusterIPServicesGetTheirNamesUnderTheDomain) {
  auto web = serviceObject("default", "web", "10.96.0.20", {{"", 80}});
  auto api = serviceObject("prod", "api", "10.96.3.4", {{"", 80}});
  EXPECT_EQ(buildHostsFile({web, api}, {}, "cluster.local"),
            std::string(kHeader) +
                "10.96.0.20 web.default.svc.cluster.local web.default.svc web.default\n"
                "10.96.3.4 api.prod.svc.cluster.local api.prod.svc api.prod\n");
}

TEST(HostsFileTest, HeadlessServicesResolveToReadyPodIPsAndHostnames) {
  auto db = serviceObject("default", "db", "None", {{"", 5432}});
  auto slice = sliceObject("default", "db-1", "db",
                           {{"10.244.1.5", true, "db-0"}, {"10.244.2.6"}, {"10.244.3.7", false}},
                           {{"", 5432}});
  EXPECT_EQ(buildHostsFile({db}, {slice}, "cluster.local"),
            std::string(kHeader) +
                "10.244.1.5 db-0.db.default.svc.cluster.local\n"
                "10.244.1.5 db.default.svc.cluster.local db.default.svc db.default\n"
                "10.244.2.6 db.default.svc.cluster.local db.default.svc db.default\n");
  db["spec"]["publishNotReadyAddresses"] = true;
  EXPECT_NE(buildHostsFile({db}, {slice}, "cluster.local").find("10.244.3.7 db.default"),
            std::string::npos);
}

TEST(HostsFileTest, SkipsWhatDnsmasqCannotServeAndAddsExtraHosts) {
  auto pending = serviceObject("default", "pending", "", {{"", 80}});
  auto external = serviceObject("default", "ext", "", {{"", 80}}, "ExternalName");
  auto evil = serviceObject("default", "a b", "10.96.0.1", {{"", 80}});
  std::string text =
      buildHostsFile({pending, external, evil, json::array()}, {}, "corp.internal",
                     {{"example.com", "10.96.0.80"}, {"bad name", "10.0.0.1"}, {"x", ""}});
  EXPECT_EQ(text, std::string(kHeader) + "10.96.0.80 example.com\n");
}

TEST(HostsFileTest, SameInputSameBytes) {
  auto a = serviceObject("n", "a", "10.96.0.1", {{"", 80}});
  auto b = serviceObject("n", "b", "10.96.0.2", {{"", 80}});
  EXPECT_EQ(buildHostsFile({a, b}, {}, "cluster.local"),
            buildHostsFile({b, a}, {}, "cluster.local"));
}

TEST(DnsmasqArgsTest, ServesOnlyTheClusterDomainFromTheHostsFile) {
  DnsmasqConfig c;
  c.binary = "/usr/sbin/dnsmasq";
  c.listenAddress = "192.168.50.2";
  c.hostsFile = "/d/hosts";
  c.pidFile = "/d/dnsmasq.pid";
  auto args = dnsmasqArgs(c);
  auto has = [&](const std::string& a) {
    return std::find(args.begin(), args.end(), a) != args.end();
  };
  EXPECT_EQ(args[0], "/usr/sbin/dnsmasq");
  for (const char* a :
       {"--keep-in-foreground", "--no-resolv", "--no-hosts", "--addn-hosts=/d/hosts",
        "--local=/cluster.local/", "--listen-address=192.168.50.2", "--bind-interfaces",
        "--port=53", "--pid-file=/d/dnsmasq.pid", "--conf-file=/dev/null"}) {
    EXPECT_TRUE(has(a)) << a;
  }
}

TEST(WildcardDomainsTest, AnnotatedServicesClaimTheirDomains) {
  auto gateway = serviceObject("serverless", "gateway", "10.96.5.5", {{"", 80}});
  gateway["metadata"]["annotations"][kWildcardAnnotation] = "fn.cluster.local, apps.example";
  auto rival = serviceObject("z-team", "gw", "10.96.9.9", {{"", 80}});
  rival["metadata"]["annotations"][kWildcardAnnotation] = "fn.cluster.local";
  auto bad = serviceObject("n", "bad", "10.96.7.7", {{"", 80}});
  bad["metadata"]["annotations"][kWildcardAnnotation] = "Bad Domain,.x";
  auto headless = serviceObject("n", "h", "None", {{"", 80}});
  headless["metadata"]["annotations"][kWildcardAnnotation] = "h.example";
  auto plain = serviceObject("n", "plain", "10.96.0.3", {{"", 80}});
  EXPECT_EQ(
      wildcardDomains({rival, bad, headless, plain, gateway}),
      (std::vector<HostEntry>{{"apps.example", "10.96.5.5"}, {"fn.cluster.local", "10.96.5.5"}}));
  DnsmasqConfig c;
  c.wildcards = wildcardDomains({gateway});
  auto args = dnsmasqArgs(c);
  EXPECT_NE(std::find(args.begin(), args.end(), "--address=/fn.cluster.local/10.96.5.5"),
            args.end());
}

TEST(DnsEndpointTest, ObjectsPointTheKubeDnsServiceAtTheNode) {
  json svc = dnsServiceObject();
  EXPECT_EQ(svc["spec"]["clusterIP"], "10.96.0.10");
  EXPECT_EQ(svc["metadata"]["namespace"], "kube-system");
  EXPECT_FALSE(svc["spec"].contains("selector"));
  EXPECT_EQ(svc["spec"]["ports"].size(), 2u);
  json slice = dnsEndpointSliceObject("node-b", "192.168.50.3");
  EXPECT_EQ(slice["metadata"]["name"], "kube-dns-node-b");
  EXPECT_EQ(slice["metadata"]["labels"]["kubernetes.io/service-name"], "kube-dns");
  EXPECT_EQ(slice["endpoints"][0]["addresses"][0], "192.168.50.3");
  EXPECT_EQ(slice["ports"][0], json({{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}}));
  EXPECT_EQ(slice["ports"][1], json({{"name", "dns-tcp"}, {"port", 53}, {"protocol", "TCP"}}));
}

}  // namespace
}  // namespace minik8s::dns
