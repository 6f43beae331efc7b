// The Dns gateway: planning and nginx configuration rendering (exact), a real nginx forwarding
// host/path requests to two HTTP servers and reloading without a gap, and DnsGateway against an
// in-process API server (configuration, hosts, status and Events). Real-nginx tests are skipped
// when nginx is not installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "client/rest_client.h"
#include "common/http.h"
#include "common/http_client.h"
#include "dns/dns_endpoint.h"
#include "dns/gateway.h"
#include "dns/gateway_config.h"
#include "dns/gateway_nginx.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "proxy_test_objects.h"

namespace minik8s::dns {
namespace {

using namespace std::chrono_literals;
using testing::serviceObject;

json dnsObject(const std::string& ns, const std::string& name, const std::string& host,
               const std::vector<json>& paths) {
  return {{"apiVersion", "minik8s.io/v1"},
          {"kind", "Dns"},
          {"metadata", {{"namespace", ns}, {"name", name}}},
          {"spec", {{"host", host}, {"paths", json(paths)}}}};
}

json path(const std::string& p, const std::string& service, int port) {
  return {{"path", p}, {"serviceName", service}, {"servicePort", port}};
}

using testing::eventually;

std::string readFile(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(GatewayPath, Normalise) {
  EXPECT_EQ(normaliseGatewayPath("/"), "/");
  EXPECT_EQ(normaliseGatewayPath("/a"), "/a");
  EXPECT_EQ(normaliseGatewayPath("/a/"), "/a");
  EXPECT_EQ(normaliseGatewayPath("/a/b//"), "/a/b");
  EXPECT_EQ(normaliseGatewayPath("//"), "/");
  EXPECT_EQ(normaliseGatewayPath("a"), "");
  EXPECT_EQ(normaliseGatewayPath(""), "");
  EXPECT_EQ(normaliseGatewayPath("/a;b"), "");
  EXPECT_EQ(normaliseGatewayPath("/a b"), "");
  EXPECT_EQ(normaliseGatewayPath("/a{"), "");
  EXPECT_EQ(normaliseGatewayPath("/v1.2/x-y_z~"), "/v1.2/x-y_z~");
}

TEST(GatewayPlan, TwoPathsOfOneHostGoToTwoServices) {
  std::vector<json> services = {serviceObject("default", "svc-a", "10.96.0.21", {{"http", 80}}),
                                serviceObject("default", "svc-b", "10.96.0.22", {{"", 8080}}),
                                serviceObject("other", "svc-a", "10.96.9.9", {{"", 80}})};
  std::vector<json> dnses = {dnsObject("default", "example", "example.com",
                                       {path("/b/", "svc-b", 8080), path("/a", "svc-a", 80)})};
  GatewayPlan plan = planGateway(dnses, services);
  ASSERT_EQ(plan.servers.size(), 1u);
  EXPECT_EQ(plan.servers[0].host, "example.com");
  ASSERT_EQ(plan.servers[0].locations.size(), 2u);
  EXPECT_EQ(plan.servers[0].locations[0].path, "/a");
  EXPECT_EQ(plan.servers[0].locations[0].upstream, "10.96.0.21:80");
  EXPECT_EQ(plan.servers[0].locations[0].source, "default/example");
  EXPECT_EQ(plan.servers[0].locations[1].path, "/b");
  EXPECT_EQ(plan.servers[0].locations[1].upstream, "10.96.0.22:8080");
  EXPECT_EQ(plan.hosts, std::vector<std::string>{"example.com"});
  ASSERT_EQ(plan.statuses.size(), 1u);
  EXPECT_EQ(plan.statuses[0].key, "default/example");
  EXPECT_TRUE(plan.statuses[0].ready);
  EXPECT_EQ(plan.statuses[0].reason, "Forwarding");
  EXPECT_EQ(plan.statuses[0].message, "forwarding /b -> svc-b:8080, /a -> svc-a:80");
}

TEST(GatewayPlan, ProblemsAreReportedPerObjectAndSkipOnlyTheirPath) {
  std::vector<json> services = {serviceObject("default", "svc-a", "10.96.0.21", {{"", 80}}),
                                serviceObject("default", "headless", "None", {{"", 80}})};
  std::vector<json> dnses = {
      dnsObject("default", "bad", "example.com",
                {path("/a", "svc-a", 80), path("/missing", "nope", 80), path("/port", "svc-a", 81),
                 path("/hl", "headless", 80), path("/x;y", "svc-a", 80)}),
      // Same host and path as default/bad's /a: the first by namespace/name keeps it.
      dnsObject("default", "later", "example.com", {path("/a/", "svc-a", 80)}),
      dnsObject("default", "alone", "other.example.org", {path("/", "nope", 80)})};
  GatewayPlan plan = planGateway(dnses, services);
  EXPECT_EQ(plan.hosts, (std::vector<std::string>{"example.com", "other.example.org"}));
  ASSERT_EQ(plan.servers.size(), 2u);
  ASSERT_EQ(plan.servers[0].locations.size(), 1u);
  EXPECT_EQ(plan.servers[0].locations[0].path, "/a");
  EXPECT_EQ(plan.servers[0].locations[0].source, "default/bad");
  EXPECT_TRUE(plan.servers[1].locations.empty());  // its host resolves, and answers 404
  ASSERT_EQ(plan.statuses.size(), 3u);
  EXPECT_EQ(plan.statuses[0].key, "default/alone");
  EXPECT_FALSE(plan.statuses[0].ready);
  EXPECT_EQ(plan.statuses[0].reason, "ServiceNotFound");
  EXPECT_EQ(plan.statuses[0].message, "path /: service default/nope not found");
  EXPECT_EQ(plan.statuses[1].key, "default/bad");
  EXPECT_EQ(plan.statuses[1].reason, "ServiceNotFound");
  EXPECT_EQ(plan.statuses[1].message,
            "path /missing: service default/nope not found; "
            "path /port: service default/svc-a has no TCP port 81; "
            "path /hl: service default/headless has no cluster IP (headless); "
            "path /x;y: not a path the gateway can serve");
  EXPECT_EQ(plan.statuses[2].key, "default/later");
  EXPECT_EQ(plan.statuses[2].reason, "PathConflict");
  EXPECT_EQ(plan.statuses[2].message,
            "path /a/: example.com/a is already forwarded by default/bad");
}

TEST(GatewayConfig, RendersExactly) {
  std::vector<json> services = {serviceObject("default", "svc-a", "10.96.0.21", {{"", 80}}),
                                serviceObject("default", "web", "10.96.0.30", {{"", 8080}})};
  std::vector<json> dnses = {
      dnsObject("default", "example", "example.com", {path("/a", "svc-a", 80)}),
      dnsObject("default", "root", "www.example.com", {path("/", "web", 8080)})};
  std::string conf = renderNginxConfig(planGateway(dnses, services),
                                       NginxSettings{"172.29.103.2", 80, "/run/gw", "root"});
  EXPECT_EQ(conf,
            R"(# Rendered by the minik8s agent from the Dns objects (minik8s.io/v1); do not edit.
daemon off;
master_process on;
worker_processes 1;
user root;
pid /run/gw/nginx.pid;
error_log /run/gw/error.log warn;
events {
  worker_connections 1024;
}
http {
  access_log /run/gw/access.log;
  client_body_temp_path /run/gw/tmp/client_body;
  proxy_temp_path /run/gw/tmp/proxy;
  fastcgi_temp_path /run/gw/tmp/fastcgi;
  uwsgi_temp_path /run/gw/tmp/uwsgi;
  scgi_temp_path /run/gw/tmp/scgi;
  proxy_http_version 1.1;
  proxy_set_header Host $http_host;
  proxy_set_header Connection "";
  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
  proxy_connect_timeout 5s;
  server {
    listen 172.29.103.2:80 default_server;
    server_name _;
    location / {
      return 404;
    }
  }
  server {
    listen 172.29.103.2:80;
    server_name example.com;
    # default/example
    location = /a {
      proxy_pass http://10.96.0.21:80/;
    }
    location /a/ {
      proxy_pass http://10.96.0.21:80/;
    }
    location / {
      return 404;
    }
  }
  server {
    listen 172.29.103.2:80;
    server_name www.example.com;
    # default/root
    location / {
      proxy_pass http://10.96.0.30:8080;
    }
  }
}
)");
  // No Dns objects: only the default server; without a user, no `user` line.
  std::string empty = renderNginxConfig(GatewayPlan{}, NginxSettings{"10.0.0.1", 8080, "/d", ""});
  EXPECT_EQ(empty.find("user "), std::string::npos);
  EXPECT_NE(empty.find("listen 10.0.0.1:8080 default_server;"), std::string::npos);
  EXPECT_EQ(empty.find("server_name example"), std::string::npos);
}

TEST(GatewayConfig, EqualInputsGiveEqualText) {
  std::vector<json> services = {serviceObject("default", "a", "10.96.0.21", {{"", 80}}),
                                serviceObject("default", "b", "10.96.0.22", {{"", 80}})};
  std::vector<json> d1 = {dnsObject("default", "x", "x.com", {path("/a", "a", 80)}),
                          dnsObject("default", "y", "y.com", {path("/b", "b", 80)})};
  std::vector<json> d2 = {d1[1], d1[0]};
  std::vector<json> s2 = {services[1], services[0]};
  NginxSettings s{"1.2.3.4", 80, "/r", ""};
  EXPECT_EQ(renderNginxConfig(planGateway(d1, services), s),
            renderNginxConfig(planGateway(d2, s2), s));
}

// ---- a real nginx --------------------------------------------------------------------------

bool haveNginx() { return access("/usr/sbin/nginx", X_OK) == 0; }

int freeTcpPort() {
  http::Server probe(
      [](const http::Request&, http::ResponseWriter& w) { w.send(http::Response::text(200, "")); });
  if (!probe.start("127.0.0.1:0").ok()) return 0;
  int port = probe.port();
  probe.stop();
  return port;
}

// An upstream that answers "<name> <target>" (the path and query it received).
struct EchoServer {
  explicit EchoServer(std::string name)
      : server([name](const http::Request& r, http::ResponseWriter& w) {
          w.send(http::Response::text(200, name + " " + r.target));
        }) {}
  http::Server server;
};

class GatewayNginxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!haveNginx()) GTEST_SKIP() << "nginx is not installed";
    dir = std::filesystem::temp_directory_path() /
          ("minik8s-gateway-test-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(a.server.start("127.0.0.1:0").ok());
    ASSERT_TRUE(b.server.start("127.0.0.1:0").ok());
    port = freeTcpPort();
    ASSERT_GT(port, 0);
  }
  void TearDown() override {
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
  std::string render(const std::vector<json>& dnses) {
    std::vector<json> services = {
        serviceObject("default", "svc-a", "127.0.0.1", {{"", a.server.port()}}),
        serviceObject("default", "svc-b", "127.0.0.1", {{"", b.server.port()}})};
    return renderNginxConfig(planGateway(dnses, services),
                             NginxSettings{"127.0.0.1", port, dir, geteuid() == 0 ? "root" : ""});
  }
  // GET http://<host>/<target> through the gateway: "<status> <body>".
  std::string get(const std::string& host, const std::string& target) {
    http::Client c("http://127.0.0.1:" + std::to_string(port));
    auto r = c.request("GET", target, "", {{"Host", host}});
    if (!r.ok()) return "error " + r.status().message();
    return std::to_string(r->status) + " " + (r->status == 200 ? r->body : "");
  }

  std::string dir;
  EchoServer a{"A"};
  EchoServer b{"B"};
  int port = 0;
};

TEST_F(GatewayNginxTest, ForwardsByHostAndPathStrippingThePrefix) {
  GatewayNginx nginx(GatewayNginxConfig{"/usr/sbin/nginx", dir});
  std::vector<json> paths = {path("/a", "svc-a", a.server.port()),
                             path("/b/", "svc-b", b.server.port())};
  ASSERT_TRUE(nginx.writeConfig(render({dnsObject("default", "ex", "example.com", paths)})).ok());
  auto started = nginx.start();
  ASSERT_TRUE(started.ok()) << started.toString() << readFile(dir + "/error.log");

  EXPECT_EQ(get("example.com", "/a/x"), "200 A /x");
  EXPECT_EQ(get("example.com", "/a/x/y?q=1"), "200 A /x/y?q=1");
  EXPECT_EQ(get("example.com", "/a"), "200 A /");
  EXPECT_EQ(get("example.com", "/a/"), "200 A /");
  EXPECT_EQ(get("example.com", "/b/z"), "200 B /z");
  EXPECT_EQ(get("example.com:80", "/b/z"), "200 B /z");  // a port in Host still matches
  EXPECT_EQ(get("example.com", "/ab"), "404 ");          // not under /a
  EXPECT_EQ(get("example.com", "/"), "404 ");
  EXPECT_EQ(get("unknown.com", "/a/x"), "404 ");

  // A refused configuration leaves the running one in place.
  EXPECT_FALSE(nginx.writeConfig("this is not nginx;").ok());
  EXPECT_EQ(get("example.com", "/a/x"), "200 A /x");

  // An edit (swap the services) applies with a reload while a client keeps asking: every
  // request is answered by one of the two backends, none fails.
  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, answered{0};
  std::thread client([&] {
    while (!done) {
      std::string r = get("example.com", "/a/p");
      if (r != "200 A /p" && r != "200 B /p") ++failures;
      ++answered;
    }
  });
  std::vector<json> swapped = {path("/a", "svc-b", b.server.port()),
                               path("/b", "svc-a", a.server.port())};
  ASSERT_TRUE(nginx.writeConfig(render({dnsObject("default", "ex", "example.com", swapped)})).ok());
  ASSERT_TRUE(nginx.reload().ok());
  EXPECT_TRUE(eventually([&] { return get("example.com", "/a/p") == "200 B /p"; }));
  std::this_thread::sleep_for(100ms);
  done = true;
  client.join();
  EXPECT_EQ(failures.load(), 0) << "of " << answered.load();
  EXPECT_EQ(get("example.com", "/b/q"), "200 A /q");
  pid_t pid = nginx.pid();
  EXPECT_TRUE(nginx.running());
  nginx.stop();
  EXPECT_FALSE(nginx.running());
  EXPECT_NE(::kill(pid, 0), 0);
}

// ---- DnsGateway against an API server ------------------------------------------------------

class DnsGatewayTest : public GatewayNginxTest {
 protected:
  void SetUp() override {
    GatewayNginxTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
  }
  void TearDown() override {
    api.stop();
    GatewayNginxTest::TearDown();
  }
  GatewayOptions options() {
    GatewayOptions o;
    o.nodeName = "node-1";
    o.listenAddress = "127.0.0.1";
    o.port = port;
    o.dataDir = dir;
    o.nginxPath = "/usr/sbin/nginx";
    o.user = geteuid() == 0 ? "root" : "";
    o.minSyncInterval = 50ms;
    o.publishHosts = [this](std::vector<HostEntry> e) {
      std::lock_guard l(mu);
      hosts = std::move(e);
    };
    return o;
  }
  std::vector<HostEntry> publishedHosts() {
    std::lock_guard l(mu);
    return hosts;
  }
  json readyCondition(const std::string& name) {
    auto d = rest->get(client::resources::kDnses, "default", name);
    if (!d.ok()) return json::object();
    for (const auto& c : (*d).value("status", json::object()).value("conditions", json::array()))
      if (c.value("type", "") == "Ready") return c;
    return json::object();
  }

  minik8s::testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
  std::mutex mu;
  std::vector<HostEntry> hosts;
};

TEST_F(DnsGatewayTest, FollowsDnsObjectsAndReportsUnknownServices) {
  const auto& dnsRes = client::resources::kDnses;
  ASSERT_TRUE(rest->create(client::resources::kServices, "default",
                           serviceObject("default", "svc-a", "10.96.0.21", {{"", 80}}))
                  .ok());
  DnsGateway gateway(*rest, options());
  auto started = gateway.start();
  ASSERT_TRUE(started.ok()) << started.toString();

  // The gateway Service and this node's endpoint in it.
  auto svc = rest->get(client::resources::kServices, kGatewayServiceNamespace, kGatewayServiceName);
  ASSERT_TRUE(svc.ok()) << svc.status().toString();
  EXPECT_EQ((*svc)["spec"]["clusterIP"], kGatewayServiceIP);
  auto slice = rest->get(client::resources::kEndpointSlices, kGatewayServiceNamespace,
                         "minik8s-gateway-node-1");
  ASSERT_TRUE(slice.ok()) << slice.status().toString();
  EXPECT_EQ((*slice)["endpoints"][0]["addresses"][0], "127.0.0.1");
  EXPECT_EQ((*slice)["ports"][0]["port"], port);

  // A Dns naming a service that does not exist: status False, a Warning Event, the host
  // published anyway (it answers 404 until the service comes).
  ASSERT_TRUE(rest->create(dnsRes, "default",
                           dnsObject("default", "ex", "example.com",
                                     {path("/a", "svc-a", 80), path("/b", "svc-b", 80)}))
                  .ok());
  ASSERT_TRUE(eventually([&] { return readyCondition("ex").value("status", "") == "False"; }));
  json cond = readyCondition("ex");
  EXPECT_EQ(cond["reason"], "ServiceNotFound");
  EXPECT_EQ(cond["message"], "path /b: service default/svc-b not found");
  auto dns = rest->get(dnsRes, "default", "ex");
  EXPECT_EQ((*dns)["status"]["observedGeneration"], (*dns)["metadata"].value("generation", 0));
  ASSERT_TRUE(eventually([&] {
    auto events = rest->list(client::resources::kEvents, "default");
    if (!events.ok()) return false;
    for (const auto& e : (*events).value("items", json::array())) {
      const json involved = e.value("involvedObject", json::object());
      if (involved.value("kind", "") == "Dns" && involved.value("name", "") == "ex" &&
          e.value("reason", "") == "ServiceNotFound" && e.value("type", "") == "Warning")
        return true;
    }
    return false;
  }));
  ASSERT_TRUE(eventually([&] { return publishedHosts().size() == 1; }));
  EXPECT_EQ(publishedHosts()[0].name, "example.com");
  EXPECT_EQ(publishedHosts()[0].ip, kGatewayServiceIP);
  std::string conf = readFile(gateway.configPath());
  EXPECT_NE(conf.find("location /a/ {\n      proxy_pass http://10.96.0.21:80/;"), std::string::npos)
      << conf;
  EXPECT_EQ(conf.find("location /b/"), std::string::npos);

  // The service appears: Ready, and the configuration reloads with /b.
  int64_t reloads = gateway.reloads();
  ASSERT_TRUE(rest->create(client::resources::kServices, "default",
                           serviceObject("default", "svc-b", "10.96.0.22", {{"", 80}}))
                  .ok());
  ASSERT_TRUE(eventually([&] { return readyCondition("ex").value("status", "") == "True"; }));
  EXPECT_EQ(readyCondition("ex")["reason"], "Forwarding");
  EXPECT_GT(gateway.reloads(), reloads);
  conf = readFile(gateway.configPath());
  EXPECT_NE(conf.find("location /b/ {\n      proxy_pass http://10.96.0.22:80/;"), std::string::npos)
      << conf;

  // Deleting the Dns object removes its host.
  ASSERT_TRUE(rest->remove(dnsRes, "default", "ex").ok());
  ASSERT_TRUE(eventually([&] { return publishedHosts().empty(); }));
  EXPECT_TRUE(eventually(
      [&] { return readFile(gateway.configPath()).find("example.com") == std::string::npos; }));
  gateway.stop();
}

}  // namespace
}  // namespace minik8s::dns
