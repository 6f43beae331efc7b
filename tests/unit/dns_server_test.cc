// ClusterDns with the real dnsmasq on 127.0.0.1 and a free port, queried through the C library's
// resolver, fed by a real in-process API server. Skipped when dnsmasq is not installed.
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "client/rest_client.h"
#include "dns/cluster_dns.h"
#include "dns/dns_endpoint.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "proxy_test_objects.h"

namespace minik8s::dns {
namespace {

using namespace std::chrono_literals;
using testing::serviceObject;
using testing::sliceObject;

int freeUdpAndTcpPort() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    int port = ntohs(a.sin_port);
    int tcp = socket(AF_INET, SOCK_STREAM, 0);
    bool ok = bind(tcp, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    ::close(tcp);
    ::close(fd);
    if (ok) return port;
  }
  return 0;
}

// The A records for `name` from the server at 127.0.0.1:port; nullopt for NXDOMAIN.
struct Answer {
  bool nxdomain = false;
  std::set<std::string> ips;
};
Answer queryA(int port, const std::string& name) {
  struct __res_state st {};
  res_ninit(&st);
  st.nscount = 1;
  st.nsaddr_list[0].sin_family = AF_INET;
  st.nsaddr_list[0].sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &st.nsaddr_list[0].sin_addr);
  st.options &= ~(RES_DNSRCH | RES_DEFNAMES);
  st.retrans = 1;
  st.retry = 2;
  unsigned char buf[4096];
  int n = res_nquery(&st, name.c_str(), ns_c_in, ns_t_a, buf, sizeof(buf));
  Answer out;
  if (n < 0) {
    out.nxdomain = st.res_h_errno == HOST_NOT_FOUND;
    res_nclose(&st);
    return out;
  }
  res_nclose(&st);
  // Header, one question, then answers: name, type, class, ttl, rdlength, rdata.
  const unsigned char* p = buf + 12;
  const unsigned char* end = buf + n;
  int answers = (buf[6] << 8) | buf[7];
  int skip = dn_skipname(p, end);
  if (skip < 0) return out;
  p += skip + 4;
  for (int i = 0; i < answers && p < end; ++i) {
    skip = dn_skipname(p, end);
    if (skip < 0 || p + skip + 10 > end) break;
    p += skip;
    int type = (p[0] << 8) | p[1];
    int rdlen = (p[8] << 8) | p[9];
    p += 10;
    if (type == ns_t_a && rdlen == 4) {
      char ip[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, p, ip, sizeof(ip));
      out.ips.insert(ip);
    }
    p += rdlen;
  }
  return out;
}

using testing::eventually;

class DnsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/sbin/dnsmasq", X_OK) != 0) GTEST_SKIP() << "dnsmasq is not installed";
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
    dir = std::filesystem::temp_directory_path() / ("minik8s-dns-test-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
  }
  void TearDown() override {
    api.stop();
    std::filesystem::remove_all(dir);
  }
  DnsOptions options() {
    DnsOptions o;
    o.listenAddress = "127.0.0.1";
    o.port = freeUdpAndTcpPort();
    o.dataDir = dir;
    o.dnsmasqPath = "/usr/sbin/dnsmasq";
    return o;
  }

  minik8s::testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
  std::string dir;
};

TEST_F(DnsServerTest, ServiceNamesResolveAndFollowChanges) {
  const auto& svcs = client::resources::kServices;
  const auto& slices = client::resources::kEndpointSlices;
  ASSERT_TRUE(
      rest->create(svcs, "default", serviceObject("default", "web", "10.96.0.20", {{"", 80}}))
          .ok());
  ASSERT_TRUE(
      rest->create(svcs, "default", serviceObject("default", "db", "None", {{"", 5432}})).ok());
  ASSERT_TRUE(rest->create(slices, "default",
                           sliceObject("default", "db-1", "db", {{"10.244.1.5"}, {"10.244.2.6"}},
                                       {{"", 5432}}))
                  .ok());
  DnsOptions o = options();
  ClusterDns dns(*rest, o);
  auto started = dns.start();
  ASSERT_TRUE(started.ok()) << started.toString();

  EXPECT_EQ(queryA(o.port, "web.default.svc.cluster.local").ips,
            std::set<std::string>{"10.96.0.20"});
  EXPECT_EQ(queryA(o.port, "web.default").ips, std::set<std::string>{"10.96.0.20"});
  EXPECT_EQ(queryA(o.port, "db.default.svc.cluster.local").ips,
            (std::set<std::string>{"10.244.1.5", "10.244.2.6"}));
  Answer unknown = queryA(o.port, "nope.default.svc.cluster.local");
  EXPECT_TRUE(unknown.nxdomain);
  EXPECT_TRUE(unknown.ips.empty());

  // A new service and an extra host appear after one SIGHUP each (or one for both).
  ASSERT_TRUE(rest->create(svcs, "kube-public",
                           serviceObject("kube-public", "api", "10.96.3.4", {{"", 80}}))
                  .ok());
  dns.setExtraHosts({{"example.com", "10.96.0.80"}});
  EXPECT_TRUE(eventually(
      [&] {
        return queryA(o.port, "api.kube-public.svc.cluster.local").ips.count("10.96.3.4") == 1;
      },
      1s));
  EXPECT_EQ(queryA(o.port, "example.com").ips, std::set<std::string>{"10.96.0.80"});
  EXPECT_GE(dns.reloads(), 1);

  // A pod of the headless service becomes not ready: its address goes.
  auto slice = rest->get(slices, "default", "db-1");
  ASSERT_TRUE(slice.ok());
  (*slice)["endpoints"][1]["conditions"]["ready"] = false;
  ASSERT_TRUE(rest->update(slices, *slice).ok());
  EXPECT_TRUE(eventually(
      [&] { return queryA(o.port, "db.default.svc.cluster.local").ips.size() == 1; }, 1s));

  // dnsmasq killed behind our back comes back.
  std::string pidText;
  {
    std::ifstream in(dir + "/dnsmasq.pid");
    in >> pidText;
  }
  ASSERT_FALSE(pidText.empty());
  ::kill(std::stoi(pidText), SIGKILL);
  dns.setExtraHosts({});  // wakes the loop, which notices the dead process
  EXPECT_TRUE(eventually(
      [&] { return queryA(o.port, "web.default.svc.cluster.local").ips.size() == 1; }, 3s));
  EXPECT_TRUE(queryA(o.port, "example.com").ips.empty());
  dns.stop();
}

TEST_F(DnsServerTest, AWildcardServiceAnswersEveryNameUnderItsDomain) {
  const auto& svcs = client::resources::kServices;
  ASSERT_TRUE(
      rest->create(svcs, "default", serviceObject("default", "web", "10.96.0.20", {{"", 80}}))
          .ok());
  DnsOptions o = options();
  ClusterDns dns(*rest, o);
  ASSERT_TRUE(dns.start().ok());
  EXPECT_TRUE(queryA(o.port, "hello.default.fn.cluster.local").nxdomain);

  // The serverless gateway's Service claims fn.cluster.local: dnsmasq restarts with it.
  json gateway = serviceObject("default", "gateway", "10.96.5.5", {{"", 80}});
  gateway["metadata"]["annotations"][kWildcardAnnotation] = "fn.cluster.local";
  ASSERT_TRUE(rest->create(svcs, "default", gateway).ok());
  EXPECT_TRUE(eventually(
      [&] {
        return queryA(o.port, "hello.default.fn.cluster.local").ips ==
               std::set<std::string>{"10.96.5.5"};
      },
      3s));
  EXPECT_EQ(queryA(o.port, "other.team.fn.cluster.local").ips, std::set<std::string>{"10.96.5.5"});
  // The rest of the cluster domain is served as before.
  EXPECT_EQ(queryA(o.port, "web.default.svc.cluster.local").ips,
            std::set<std::string>{"10.96.0.20"});

  // Deleting the Service gives the domain up.
  ASSERT_TRUE(rest->remove(svcs, "default", "gateway").ok());
  EXPECT_TRUE(
      eventually([&] { return queryA(o.port, "hello.default.fn.cluster.local").nxdomain; }, 3s));
  dns.stop();
}

TEST_F(DnsServerTest, StartFailsWhenDnsmasqCannotListen) {
  DnsOptions o = options();
  o.listenAddress = "192.0.2.123";  // not an address of this machine
  ClusterDns dns(*rest, o);
  Status s = dns.start();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dnsmasq"), std::string::npos);
}

TEST_F(DnsServerTest, NodeEndpointIsPublishedUpdatedAndRemoved) {
  ASSERT_TRUE(ensureNodeDnsEndpoint(*rest, "node-a", "192.168.50.2").ok());
  ASSERT_TRUE(ensureNodeDnsEndpoint(*rest, "node-b", "192.168.50.3").ok());
  auto svc = rest->get(client::resources::kServices, "kube-system", "kube-dns");
  ASSERT_TRUE(svc.ok());
  EXPECT_EQ((*svc)["spec"]["clusterIP"], "10.96.0.10");
  // The node's address changed.
  ASSERT_TRUE(ensureNodeDnsEndpoint(*rest, "node-a", "192.168.60.2").ok());
  auto a = rest->get(client::resources::kEndpointSlices, "kube-system", "kube-dns-node-a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)["endpoints"][0]["addresses"][0], "192.168.60.2");
  ASSERT_TRUE(removeNodeDnsEndpoint(*rest, "node-a").ok());
  EXPECT_TRUE(removeNodeDnsEndpoint(*rest, "node-a").ok());
  auto list = rest->list(client::resources::kEndpointSlices, "kube-system");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["items"].size(), 1u);
  EXPECT_EQ((*list)["items"][0]["metadata"]["name"], "kube-dns-node-b");
}

}  // namespace
}  // namespace minik8s::dns
