// The Endpoints and EndpointSlice controllers: the pure rules (which pods, which ports, ready or
// not) exactly, then both controllers against a real in-process API server following pods.
#include <gtest/gtest.h>

#include <thread>

#include "client/informer.h"
#include "controllers/endpoints/endpoint_builder.h"
#include "controllers/endpoints/endpoints_controller.h"
#include "controllers/endpoints/endpointslice_controller.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

json service(const json& ports, const json& selector = {{"app", "web"}}) {
  json s = {{"apiVersion", "v1"},
            {"kind", "Service"},
            {"metadata", {{"name", "web"}, {"namespace", "default"}, {"uid", "svc-uid"}}},
            {"spec", {{"clusterIP", "10.96.0.20"}, {"ports", ports}}}};
  if (!selector.is_null()) s["spec"]["selector"] = selector;
  return s;
}

json pod(const std::string& name, const std::string& ip, bool ready, json ports = json::array()) {
  json p = {{"metadata",
             {{"name", name},
              {"namespace", "default"},
              {"uid", "uid-" + name},
              {"labels", {{"app", "web"}}}}},
            {"spec",
             {{"nodeName", "n1"},
              {"containers", {{{"name", "c"}, {"image", "busybox"}, {"ports", ports}}}}}},
            {"status",
             {{"phase", "Running"},
              {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
  if (!ip.empty()) p["status"]["podIP"] = ip;
  return p;
}

json address(const std::string& name, const std::string& ip) {
  return {{"ip", ip},
          {"nodeName", "n1"},
          {"targetRef",
           {{"kind", "Pod"}, {"namespace", "default"}, {"name", name}, {"uid", "uid-" + name}}}};
}

const json kHttp = json::array({{{"name", "http"}, {"port", 80}, {"targetPort", 8080}}});

TEST(EndpointBuilderTest, ReadyPodsAreAddressesOthersNotReadyOrLeftOut) {
  json terminating = pod("e", "10.244.0.9", true);
  terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  json finished = pod("f", "10.244.0.10", false);
  finished["status"]["phase"] = "Succeeded";
  json other = pod("d", "10.244.0.8", true);
  other["metadata"]["labels"]["app"] = "db";
  json otherNs = pod("g", "10.244.0.11", true);
  otherNs["metadata"]["namespace"] = "prod";
  std::vector<json> pods = {pod("b", "10.244.0.6", false),
                            pod("a", "10.244.0.5", true),
                            pod("c", "", true),
                            other,
                            terminating,
                            finished,
                            otherNs};
  json subsets = buildEndpointSubsets(service(kHttp), pods);
  json want = json::array({{{"addresses", {address("a", "10.244.0.5")}},
                            {"notReadyAddresses", {address("b", "10.244.0.6")}},
                            {"ports", {{{"name", "http"}, {"port", 8080}, {"protocol", "TCP"}}}}}});
  EXPECT_EQ(subsets, want) << subsets.dump(2);
}

TEST(EndpointBuilderTest, NamedTargetPortsResolvePerPod) {
  json ports = json::array({{{"name", "http"}, {"port", 80}, {"targetPort", "web"}}});
  std::vector<json> pods = {
      pod("a", "10.244.0.5", true, {{{"name", "web"}, {"containerPort", 8080}}}),
      pod("b", "10.244.0.6", true, {{{"name", "web"}, {"containerPort", 9090}}}),
      pod("c", "10.244.0.7", true, {{{"name", "other"}, {"containerPort", 8080}}}),
      pod("u", "10.244.0.8", true,
          {{{"name", "web"}, {"containerPort", 7070}, {"protocol", "UDP"}}})};
  json subsets = buildEndpointSubsets(service(ports), pods);
  ASSERT_EQ(subsets.size(), 2u) << subsets.dump(2);
  EXPECT_EQ(subsets[0]["ports"][0]["port"], 8080);
  EXPECT_EQ(subsets[0]["addresses"], json::array({address("a", "10.244.0.5")}));
  EXPECT_EQ(subsets[1]["ports"][0]["port"], 9090);
  EXPECT_EQ(subsets[1]["addresses"], json::array({address("b", "10.244.0.6")}));
  EXPECT_EQ(resolveTargetPort({{"port", 53}, {"protocol", "UDP"}, {"targetPort", "web"}}, pods[3]),
            7070);
  EXPECT_EQ(resolveTargetPort({{"port", 80}}, pods[2]), 80);  // no targetPort: the port
}

TEST(EndpointBuilderTest, MultiplePortsAndHeadlessWithoutPorts) {
  json ports = json::array({{{"name", "metrics"}, {"port", 9100}, {"targetPort", 9100}},
                            {{"name", "http"}, {"port", 80}, {"targetPort", 8080}}});
  json subsets = buildEndpointSubsets(service(ports), {pod("a", "10.244.0.5", true)});
  ASSERT_EQ(subsets.size(), 1u);
  EXPECT_EQ(subsets[0]["ports"], json::parse(R"([{"name":"http","port":8080,"protocol":"TCP"},
                            {"name":"metrics","port":9100,"protocol":"TCP"}])"));

  json headless = service(json::array());
  headless["spec"]["clusterIP"] = "None";
  json p = pod("a", "10.244.0.5", true);
  p["spec"]["hostname"] = "a";
  p["spec"]["subdomain"] = "web";
  json sub = buildEndpointSubsets(headless, {p});
  json addr = address("a", "10.244.0.5");
  addr["hostname"] = "a";
  EXPECT_EQ(sub, json::array({{{"addresses", {addr}}}})) << sub.dump(2);
  EXPECT_EQ(endpointLabels(headless), json({{"service.kubernetes.io/headless", ""}}));
  // A non-headless Service without ports has no endpoints.
  EXPECT_EQ(buildEndpointSubsets(service(json::array()), {pod("a", "10.244.0.5", true)}),
            json::array());
}

TEST(EndpointBuilderTest, ServicesWithoutSelectorAreNotOurs) {
  EXPECT_FALSE(hasSelector(service(kHttp, nullptr)));
  EXPECT_FALSE(hasSelector(service(kHttp, json::object())));
  EXPECT_TRUE(hasSelector(service(kHttp)));
}

TEST(EndpointBuilderTest, SlicesCarryConditionsLabelsAndOwner) {
  json terminating = pod("t", "10.244.0.9", true);
  terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  json svc = service(kHttp);
  svc["metadata"]["labels"] = {{"tier", "front"}};
  auto slices = buildEndpointSlices(
      svc, {pod("a", "10.244.0.5", true), pod("b", "10.244.0.6", false), terminating});
  ASSERT_EQ(slices.size(), 1u);
  const json& s = slices[0];
  EXPECT_EQ(s["addressType"], "IPv4");
  EXPECT_EQ(s["metadata"]["labels"],
            json({{"tier", "front"},
                  {"kubernetes.io/service-name", "web"},
                  {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io"}}));
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["uid"], "svc-uid");
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(s["ports"], json::parse(R"([{"name":"http","port":8080,"protocol":"TCP"}])"));
  ASSERT_EQ(s["endpoints"].size(), 3u);
  auto conditions = [&](size_t i) { return s["endpoints"][i]["conditions"]; };
  EXPECT_EQ(s["endpoints"][0]["addresses"], json::array({"10.244.0.5"}));
  EXPECT_EQ(conditions(0), json({{"ready", true}, {"serving", true}, {"terminating", false}}));
  EXPECT_EQ(conditions(1), json({{"ready", false}, {"serving", false}, {"terminating", false}}));
  EXPECT_EQ(conditions(2), json({{"ready", false}, {"serving", true}, {"terminating", true}}));
  EXPECT_EQ(s["endpoints"][0]["nodeName"], "n1");
  EXPECT_EQ(s["endpoints"][0]["targetRef"]["name"], "a");

  auto empty = buildEndpointSlices(svc, {});
  ASSERT_EQ(empty.size(), 1u);  // the placeholder
  EXPECT_EQ(empty[0]["endpoints"], json::array());
}

TEST(EndpointBuilderTest, SlicesSplitByPortsAndSize) {
  json ports = json::array({{{"name", "http"}, {"port", 80}, {"targetPort", "web"}}});
  std::vector<json> pods;
  for (int i = 0; i < 150; ++i) {
    pods.push_back(pod("p" + std::to_string(i), "10.244.1." + std::to_string(i), true,
                       {{{"name", "web"}, {"containerPort", i < 120 ? 8080 : 9090}}}));
  }
  auto slices = buildEndpointSlices(service(ports), pods);
  ASSERT_EQ(slices.size(), 3u);
  size_t total = 0;
  for (const auto& s : slices) {
    EXPECT_LE(s["endpoints"].size(), kMaxEndpointsPerSlice);
    total += s["endpoints"].size();
  }
  EXPECT_EQ(total, 150u);
}

// Both controllers against a real API server: endpoints follow pods within a second or two.
class EndpointsControllersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
    services = std::make_unique<client::Informer>(*rest, res::kServices);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    endpoints = std::make_unique<EndpointsController>(*rest, *services, *pods);
    slices = std::make_unique<EndpointSliceController>(*rest, *services, *pods);
    services->start();
    pods->start();
    ASSERT_TRUE(services->waitForSync(5s) && pods->waitForSync(5s));
    endpoints->start();
    slices->start();
  }
  void TearDown() override {
    endpoints->stop();
    slices->stop();
    services->stop();
    pods->stop();
    api.stop();
  }

  void createPod(const std::string& name) {
    json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", {{"app", "web"}}}}},
              {"spec",
               {{"containers",
                 {{{"name", "c"},
                   {"image", "busybox"},
                   {"ports", {{{"name", "web"}, {"containerPort", 8080}}}}}}}}}};
    ASSERT_TRUE(rest->create(res::kPods, "default", p).ok());
  }
  void setStatus(const std::string& name, const std::string& ip, bool ready) {
    json st = {{"status",
                {{"phase", "Running"},
                 {"podIP", ip},
                 {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
    ASSERT_TRUE(rest->patch(res::kPods, "default", name, st, "merge", "status").ok());
  }
  // Polls until `check` holds (up to 3 s).
  bool eventually(const std::function<bool()>& check) {
    for (int i = 0; i < 60; ++i) {
      if (check()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return check();
  }
  json subsets() {
    auto ep = rest->get(res::kEndpoints, "default", "web");
    return ep.ok() ? ep->value("subsets", json::array()) : json();
  }
  std::vector<json> sliceList() {
    client::ListParams p;
    p.labelSelector = "kubernetes.io/service-name=web";
    auto l = rest->list(res::kEndpointSlices, "default", p);
    return l.ok() ? (*l)["items"].get<std::vector<json>>() : std::vector<json>{};
  }
  std::vector<std::string> sliceIPs(bool ready) {
    std::vector<std::string> out;
    for (const auto& s : sliceList()) {
      for (const auto& e : s.value("endpoints", json::array())) {
        if (e["conditions"].value("ready", false) == ready) out.push_back(e["addresses"][0]);
      }
    }
    return out;
  }

  testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> services, pods;
  std::unique_ptr<EndpointsController> endpoints;
  std::unique_ptr<EndpointSliceController> slices;
};

TEST_F(EndpointsControllersTest, EndpointsFollowPods) {
  json svc = {{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", "web"}}},
              {"spec",
               {{"selector", {{"app", "web"}}},
                {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", "web"}}}}}}};
  ASSERT_TRUE(rest->create(res::kServices, "default", svc).ok());
  EXPECT_TRUE(eventually([&] { return subsets() == json::array(); }));
  EXPECT_TRUE(eventually([&] { return sliceList().size() == 1; }));  // the placeholder

  createPod("a");
  createPod("b");
  setStatus("a", "10.244.0.5", true);
  setStatus("b", "10.244.0.6", false);
  EXPECT_TRUE(eventually([&] {
    json s = subsets();
    return s.size() == 1 && s[0].value("addresses", json()).size() == 1 &&
           s[0]["addresses"][0]["ip"] == "10.244.0.5" &&
           s[0].value("notReadyAddresses", json()).size() == 1 &&
           s[0]["ports"] == json::parse(R"([{"name":"http","port":8080,"protocol":"TCP"}])");
  })) << subsets().dump();
  EXPECT_TRUE(eventually([&] {
    return sliceIPs(true) == std::vector<std::string>{"10.244.0.5"} &&
           sliceIPs(false) == std::vector<std::string>{"10.244.0.6"};
  }));
  const std::string sliceName = sliceList()[0]["metadata"]["name"];

  setStatus("b", "10.244.0.6", true);  // b becomes ready
  EXPECT_TRUE(eventually([&] {
    json s = subsets();
    return s.size() == 1 && s[0].value("addresses", json()).size() == 2 &&
           !s[0].contains("notReadyAddresses");
  })) << subsets().dump();
  ASSERT_TRUE(rest->remove(res::kPods, "default", "a").ok());
  EXPECT_TRUE(eventually([&] {
    json s = subsets();
    return s.size() == 1 && s[0].value("addresses", json()).size() == 1 &&
           s[0]["addresses"][0]["ip"] == "10.244.0.6";
  })) << subsets().dump();
  EXPECT_TRUE(eventually([&] { return sliceIPs(true) == std::vector<std::string>{"10.244.0.6"}; }));
  ASSERT_EQ(sliceList().size(), 1u);
  EXPECT_EQ(sliceList()[0]["metadata"]["name"], sliceName);  // updated in place

  ASSERT_TRUE(rest->remove(res::kServices, "default", "web").ok());
  EXPECT_TRUE(eventually([&] {
    return rest->get(res::kEndpoints, "default", "web").status().code() == 404 &&
           sliceList().empty();
  }));
}

TEST_F(EndpointsControllersTest, ServicesWithoutSelectorKeepTheirUsersEndpoints) {
  json svc = {{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", "web"}}},
              {"spec", {{"ports", {{{"port", 80}}}}}}};
  ASSERT_TRUE(rest->create(res::kServices, "default", svc).ok());
  json ep = {
      {"apiVersion", "v1"},
      {"kind", "Endpoints"},
      {"metadata", {{"name", "web"}}},
      {"subsets", {{{"addresses", {{{"ip", "192.168.7.7"}}}}, {"ports", {{{"port", 80}}}}}}}};
  ASSERT_TRUE(rest->create(res::kEndpoints, "default", ep).ok());
  createPod("a");
  setStatus("a", "10.244.0.5", true);
  std::this_thread::sleep_for(500ms);
  json s = subsets();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0]["addresses"][0]["ip"], "192.168.7.7");
  EXPECT_TRUE(sliceList().empty());
}

}  // namespace
}  // namespace minik8s::controllers
