// ClusterIP and nodePort allocation through the Registry (create, update, delete), across a
// restart on SQLite and under concurrent creates; the repair of leaked records; the kubernetes
// service the API server keeps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "apiserver/api_server.h"
#include "apiserver/kubernetes_service.h"
#include "apiserver/registry.h"
#include "apiserver/service_allocator.h"
#include "fake_store.h"

namespace minik8s::apiserver {
namespace {

const api::ResourceInfo& res(const std::string& g, const std::string& v, const std::string& p) {
  return *api::Scheme::builtin().byResource(g, v, p);
}
const api::ResourceInfo& services() { return res("", "v1", "services"); }

json service(const std::string& name, const std::string& type = "ClusterIP") {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"type", type},
            {"selector", {{"app", name}}},
            {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", 8080}}}}}}};
}

std::string clusterIP(const json& svc) {
  return svc.value("/spec/clusterIP"_json_pointer, std::string());
}

void createNamespace(Registry& registry) {
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}};
  auto r = registry.create(res("", "v1", "namespaces"), "", ns);
  ASSERT_TRUE(r.ok() || r.status().reason() == "AlreadyExists");
}

class ServiceAllocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto a = ServiceAllocator::create(store, {});
    ASSERT_TRUE(a.ok());
    allocator = std::move(a.value());
    registry.setServiceAllocator(allocator.get());
    createNamespace(registry);
  }
  bool recorded(const std::string& prefix, const std::string& value) {
    return store.get(prefix + value).ok();
  }

  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
  std::unique_ptr<ServiceAllocator> allocator;
};

TEST_F(ServiceAllocTest, AllocatesAClusterIPFromTheRange) {
  auto created = registry.create(services(), "default", service("web"));
  ASSERT_TRUE(created.ok()) << created.status().toString();
  const std::string ip = clusterIP(*created);
  auto parsed = parseIpv4(ip);
  ASSERT_TRUE(parsed.has_value()) << ip;
  EXPECT_TRUE(allocator->range().contains(*parsed));
  EXPECT_NE(ip, "10.96.0.0");
  EXPECT_NE(ip, "10.96.0.1");
  EXPECT_NE(ip, "10.96.0.10");
  EXPECT_NE(ip, "10.96.255.255");
  EXPECT_EQ((*created)["spec"]["clusterIPs"], json::array({ip}));
  EXPECT_TRUE(recorded(ServiceAllocator::kClusterIPPrefix, ip));
  // What the store holds is what the client got back.
  auto stored = registry.get(services(), "default", "web");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(clusterIP(*stored), ip);
  // Defaults of a dual-stack-aware API server.
  EXPECT_EQ((*stored)["spec"]["ipFamilies"], json::array({"IPv4"}));
  EXPECT_EQ((*stored)["spec"]["ipFamilyPolicy"], "SingleStack");
  EXPECT_EQ((*stored)["spec"]["internalTrafficPolicy"], "Cluster");
}

TEST_F(ServiceAllocTest, HonoursARequestedIPAndRejectsATakenOrForeignOne) {
  json a = service("a");
  a["spec"]["clusterIP"] = "10.96.0.10";  // cluster DNS asks for its address by name
  auto created = registry.create(services(), "default", a);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  EXPECT_EQ(clusterIP(*created), "10.96.0.10");

  json b = service("b");
  b["spec"]["clusterIP"] = "10.96.0.10";
  auto taken = registry.create(services(), "default", b);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), 422);
  EXPECT_EQ(taken.status().reason(), "Invalid");
  ASSERT_EQ(taken.status().causes().size(), 1u);
  EXPECT_EQ(taken.status().causes()[0].field, "spec.clusterIPs");
  EXPECT_EQ(taken.status().message(),
            "Service \"b\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.96.0.10\"}: "
            "failed to allocate IP 10.96.0.10: provided IP is already allocated");
  EXPECT_EQ(registry.get(services(), "default", "b").status().code(), 404);

  b["spec"]["clusterIP"] = "10.97.0.5";
  auto foreign = registry.create(services(), "default", b);
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.status().code(), 422);
  EXPECT_NE(foreign.status().message().find("is not in the valid range. The range of valid IPs "
                                            "is 10.96.0.0/16"),
            std::string::npos)
      << foreign.status().message();
  b["spec"]["clusterIP"] = "10.96.255.255";  // broadcast address
  EXPECT_EQ(registry.create(services(), "default", b).status().code(), 422);
}

TEST_F(ServiceAllocTest, AFailedCreateKeepsNothing) {
  json a = service("a");
  a["spec"]["clusterIP"] = "10.96.0.50";
  ASSERT_TRUE(registry.create(services(), "default", a).ok());
  json b = service("b", "NodePort");
  b["spec"]["ports"][0]["nodePort"] = 30100;
  b["spec"]["clusterIP"] = "10.96.0.50";  // taken: the nodePort must not stay taken
  ASSERT_EQ(registry.create(services(), "default", b).status().code(), 422);
  EXPECT_FALSE(recorded(ServiceAllocator::kNodePortPrefix, "30100"));
  b["spec"].erase("clusterIP");
  auto ok = registry.create(services(), "default", b);
  ASSERT_TRUE(ok.ok()) << ok.status().toString();
  EXPECT_EQ((*ok)["spec"]["ports"][0]["nodePort"], 30100);
}

TEST_F(ServiceAllocTest, HeadlessServicesHoldNoIP) {
  json h = service("h");
  h["spec"]["clusterIP"] = "None";
  auto created = registry.create(services(), "default", h);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  EXPECT_EQ(clusterIP(*created), "None");
  EXPECT_EQ((*created)["spec"]["clusterIPs"], json::array({"None"}));
  auto records = store.list(ServiceAllocator::kClusterIPPrefix, 0, 0, "");
  ASSERT_TRUE(records.ok());
  EXPECT_TRUE(records->items.empty());
}

TEST_F(ServiceAllocTest, DeleteReleasesTheIPAndNodePorts) {
  json a = service("a", "NodePort");
  a["spec"]["clusterIP"] = "10.96.0.77";
  a["spec"]["ports"][0]["nodePort"] = 30077;
  ASSERT_TRUE(registry.create(services(), "default", a).ok());
  ASSERT_TRUE(registry.remove(services(), "default", "a", {}).ok());
  EXPECT_FALSE(recorded(ServiceAllocator::kClusterIPPrefix, "10.96.0.77"));
  EXPECT_FALSE(recorded(ServiceAllocator::kNodePortPrefix, "30077"));
  json b = service("b", "NodePort");
  b["spec"]["clusterIP"] = "10.96.0.77";
  b["spec"]["ports"][0]["nodePort"] = 30077;
  EXPECT_TRUE(registry.create(services(), "default", b).ok());
}

TEST_F(ServiceAllocTest, ClusterIPIsImmutableAndKeptWhenLeftOut) {
  auto created = registry.create(services(), "default", service("a"));
  ASSERT_TRUE(created.ok());
  const std::string ip = clusterIP(*created);
  json changed = *created;
  changed["spec"]["clusterIP"] = "10.96.0.99";
  changed["spec"]["clusterIPs"] = json::array({"10.96.0.99"});
  auto refused = registry.update(services(), "default", "a", changed);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), 422);
  EXPECT_FALSE(recorded(ServiceAllocator::kClusterIPPrefix, "10.96.0.99"));

  json replaced = service("a");  // kubectl replace with the original manifest
  replaced["spec"]["ports"][0]["port"] = 81;
  auto kept = registry.update(services(), "default", "a", replaced);
  ASSERT_TRUE(kept.ok()) << kept.status().toString();
  EXPECT_EQ(clusterIP(*kept), ip);
  EXPECT_TRUE(recorded(ServiceAllocator::kClusterIPPrefix, ip));
}

TEST_F(ServiceAllocTest, NodePortsAllocatedHonouredAndUnique) {
  json a = service("a", "NodePort");
  a["spec"]["ports"].push_back({{"name", "https"}, {"port", 443}});
  auto created = registry.create(services(), "default", a);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  std::set<int> ports;
  for (const auto& p : (*created)["spec"]["ports"]) {
    int n = p.value("nodePort", 0);
    EXPECT_GE(n, 30000);
    EXPECT_LE(n, 32767);
    ports.insert(n);
  }
  EXPECT_EQ(ports.size(), 2u);

  json b = service("b", "NodePort");
  b["spec"]["ports"][0]["nodePort"] = *ports.begin();
  auto taken = registry.create(services(), "default", b);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().message(),
            "Service \"b\" is invalid: spec.ports[0].nodePort: Invalid value: " +
                std::to_string(*ports.begin()) + ": provided port is already allocated");
  EXPECT_EQ(taken.status().causes()[0].field, "spec.ports[0].nodePort");

  json lb = service("lb", "LoadBalancer");
  auto lbCreated = registry.create(services(), "default", lb);
  ASSERT_TRUE(lbCreated.ok());
  EXPECT_GE((*lbCreated)["spec"]["ports"][0].value("nodePort", 0), 30000);
}

TEST_F(ServiceAllocTest, TypeChangesTakeAndGiveBackNodePorts) {
  auto created = registry.create(services(), "default", service("a"));
  ASSERT_TRUE(created.ok());
  EXPECT_FALSE((*created)["spec"]["ports"][0].contains("nodePort"));
  json np = *created;
  np["spec"]["type"] = "NodePort";
  auto toNodePort = registry.update(services(), "default", "a", np);
  ASSERT_TRUE(toNodePort.ok()) << toNodePort.status().toString();
  const int port = (*toNodePort)["spec"]["ports"][0].value("nodePort", 0);
  ASSERT_GE(port, 30000);
  EXPECT_TRUE(recorded(ServiceAllocator::kNodePortPrefix, std::to_string(port)));

  json cip = *toNodePort;  // as kubectl apply patches it: the nodePort left over
  cip["spec"]["type"] = "ClusterIP";
  cip["spec"].erase("externalTrafficPolicy");
  auto back = registry.update(services(), "default", "a", cip);
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_FALSE((*back)["spec"]["ports"][0].contains("nodePort"));
  EXPECT_FALSE(recorded(ServiceAllocator::kNodePortPrefix, std::to_string(port)));
  EXPECT_EQ(clusterIP(*back), clusterIP(*created));
}

TEST_F(ServiceAllocTest, RepairDropsOldLeaksKeepsYoungOnesAndRecordsUnrecordedServices) {
  auto created = registry.create(services(), "default", service("a"));
  ASSERT_TRUE(created.ok());
  const std::string ip = clusterIP(*created);
  ASSERT_TRUE(store.remove(ServiceAllocator::kClusterIPPrefix + ip, 0).ok());  // lost record
  json oldLeak = {{"namespace", "default"}, {"name", "gone"}, {"uid", "u1"}, {"allocatedAt", 1000}};
  ASSERT_TRUE(
      store.create(std::string(ServiceAllocator::kClusterIPPrefix) + "10.96.3.3", oldLeak.dump())
          .ok());
  json youngLeak = oldLeak;
  youngLeak["allocatedAt"] = 1990;
  ASSERT_TRUE(
      store.create(std::string(ServiceAllocator::kNodePortPrefix) + "31000", youngLeak.dump())
          .ok());
  auto all = registry.list(services(), "", {});
  ASSERT_TRUE(all.ok());
  ASSERT_TRUE(allocator->repair(all->items, 2000).ok());
  EXPECT_TRUE(recorded(ServiceAllocator::kClusterIPPrefix, ip));
  EXPECT_FALSE(recorded(ServiceAllocator::kClusterIPPrefix, "10.96.3.3"));
  EXPECT_TRUE(recorded(ServiceAllocator::kNodePortPrefix, "31000"));
  // The re-recorded IP is the service's: another one asking for it is refused.
  json b = service("b");
  b["spec"]["clusterIP"] = ip;
  EXPECT_EQ(registry.create(services(), "default", b).status().code(), 422);
}

class SqliteDir {
 public:
  SqliteDir() {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("minik8s-svcalloc-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
  }
  ~SqliteDir() { std::filesystem::remove_all(dir); }
  std::string url() const { return "sqlite://" + dir + "/state.db"; }
  std::string dir;
};

TEST(ServiceAllocSqliteTest, AllocationSurvivesARestart) {
  SqliteDir tmp;
  std::set<std::string> ips;
  for (int run = 0; run < 2; ++run) {
    auto store = storage::openStore(tmp.url());
    ASSERT_TRUE(store.ok());
    Registry registry(**store, api::Scheme::builtin());
    auto allocator = ServiceAllocator::create(**store, {});
    ASSERT_TRUE(allocator.ok());
    registry.setServiceAllocator(allocator->get());
    createNamespace(registry);
    if (run == 0) {
      for (int i = 0; i < 5; ++i) {
        auto c = registry.create(services(), "default", service("s" + std::to_string(i)));
        ASSERT_TRUE(c.ok());
        ips.insert(clusterIP(*c));
      }
      continue;
    }
    for (const auto& ip : ips) {
      json again = service("again");
      again["spec"]["clusterIP"] = ip;
      auto r = registry.create(services(), "default", again);
      EXPECT_EQ(r.status().code(), 422) << ip;
    }
  }
}

TEST(ServiceAllocSqliteTest, ConcurrentCreatesNeverShareAnIPAndFillTheRange) {
  SqliteDir tmp;
  auto store = storage::openStore(tmp.url());
  ASSERT_TRUE(store.ok());
  Registry registry(**store, api::Scheme::builtin());
  ServiceAllocatorOptions opts;
  opts.clusterIPRange = "10.96.0.0/26";  // 64 addresses: 60 allocatable (not .0, .1, .10, .63)
  auto allocator = ServiceAllocator::create(**store, opts);
  ASSERT_TRUE(allocator.ok());
  registry.setServiceAllocator(allocator->get());
  createNamespace(registry);
  std::mutex mu;
  std::vector<std::string> ips;
  int failures = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 16; ++i) {
        auto c = registry.create(services(), "default",
                                 service("s" + std::to_string(t) + "-" + std::to_string(i)));
        std::lock_guard lock(mu);
        if (c.ok()) {
          ips.push_back(clusterIP(*c));
        } else {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ips.size(), 60u);
  EXPECT_EQ(failures, 4);
  std::set<std::string> unique(ips.begin(), ips.end());
  EXPECT_EQ(unique.size(), ips.size());
  EXPECT_FALSE(unique.count("10.96.0.1"));
  EXPECT_FALSE(unique.count("10.96.0.10"));
}

TEST(KubernetesServiceTest, CreatedAtStartAndRepairedOnRestart) {
  testing::FakeStore store;
  for (const std::string addr : {"10.1.2.3:6443", "10.1.2.4:7000"}) {
    ApiServerOptions opts;
    opts.advertiseAddress = addr;
    ApiServer api(store, api::Scheme::builtin(), opts);
    ASSERT_TRUE(api.start().ok());
    auto svc = api.registry().get(services(), "default", "kubernetes");
    ASSERT_TRUE(svc.ok());
    const std::string port = addr.substr(addr.find(':') + 1);
    const std::string host = addr.substr(0, addr.find(':'));
    EXPECT_EQ(clusterIP(*svc), "10.96.0.1");
    EXPECT_EQ(
        (*svc)["spec"]["ports"],
        json::parse(R"([{"name":"https","port":443,"protocol":"TCP","targetPort":)" + port + "}]"));
    EXPECT_EQ((*svc)["metadata"]["labels"]["component"], "apiserver");
    auto ep = api.registry().get(res("", "v1", "endpoints"), "default", "kubernetes");
    ASSERT_TRUE(ep.ok());
    EXPECT_EQ((*ep)["subsets"], json::parse(R"([{"addresses":[{"ip":")" + host +
                                            R"("}],"ports":[{"name":"https","port":)" + port +
                                            R"(,"protocol":"TCP"}]}])"));
    auto slice = api.registry().get(res("discovery.k8s.io", "v1", "endpointslices"), "default",
                                    "kubernetes");
    ASSERT_TRUE(slice.ok());
    EXPECT_EQ((*slice)["metadata"]["labels"]["kubernetes.io/service-name"], "kubernetes");
    EXPECT_EQ((*slice)["endpoints"][0]["addresses"], json::array({host}));
    EXPECT_EQ((*slice)["ports"][0]["port"], std::stoi(port));
    api.stop();
  }
  // 10.96.0.1 belongs to the kubernetes service.
  ApiServer api(store, api::Scheme::builtin());
  ASSERT_TRUE(api.start().ok());
  json other = service("other");
  other["spec"]["clusterIP"] = "10.96.0.1";
  EXPECT_EQ(api.registry().create(services(), "default", other).status().code(), 422);
  api.stop();
}

TEST(KubernetesServiceTest, ALoopbackAdvertiseAddressGetsNoEndpoints) {
  testing::FakeStore store;
  ApiServerOptions opts;
  opts.advertiseAddress = "127.0.0.1:6443";
  ApiServer api(store, api::Scheme::builtin(), opts);
  ASSERT_TRUE(api.start().ok());
  EXPECT_TRUE(api.registry().get(services(), "default", "kubernetes").ok());
  EXPECT_EQ(api.registry().get(res("", "v1", "endpoints"), "default", "kubernetes").status().code(),
            404);
  api.stop();
}

TEST(ServiceAllocatorTest, RejectsBadRanges) {
  testing::FakeStore store;
  ServiceAllocatorOptions opts;
  opts.clusterIPRange = "fd00::/108";
  EXPECT_FALSE(ServiceAllocator::create(store, opts).ok());
  opts.clusterIPRange = "10.0.0.0/30";
  EXPECT_FALSE(ServiceAllocator::create(store, opts).ok());
  opts.clusterIPRange = "10.0.0.7/24";
  auto ok = ServiceAllocator::create(store, opts);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->range().toString(), "10.0.0.0/24");
  EXPECT_EQ((*ok)->range().at(1), "10.0.0.1");
}

}  // namespace
}  // namespace minik8s::apiserver
