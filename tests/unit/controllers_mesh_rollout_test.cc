// The MeshRollout controller against an in-process API server, with fake sidecar counters and a
// fake clock, one sync at a time (the test plays the endpoints controller: the new version's
// pods are ready endpoints as soon as its Deployment asks for them): a full promotion, a
// rollback on 5xx, a controller restarted mid-way that resumes from the status, a deletion
// mid-way that rolls back, and the schema's 422s with field paths.
#include <gtest/gtest.h>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "controllers/mesh/mesh_rollout_controller.h"
#include "in_process_api_server.h"
#include "mesh/config_watcher.h"
#include "mesh/mesh_resources.h"
#include "mesh/rollout_resource.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

class FakeRolloutClock : public mesh::RolloutClock {
 public:
  std::chrono::system_clock::time_point now() const override { return t; }
  void sleepFor(std::chrono::milliseconds d) override { t += d; }
  std::chrono::system_clock::time_point t{std::chrono::hours(24 * 365 * 56)};
};

// One sidecar's counters: `rps` requests a second split by the VirtualService's weights as the
// API server has them now, a fraction `errorRate` of v2's answered 5xx.
struct FakeTraffic {
  client::RestClient* rest = nullptr;
  FakeRolloutClock* clock = nullptr;
  std::chrono::system_clock::time_point last{};
  mesh::RequestCounts v1, v2;
  double rps = 50, errorRate = 0;
  int reads = 0;

  int weightOf(const std::string& version) {
    auto vs = rest->get(mesh::kVirtualServices, "shop", "reviews");
    if (!vs.ok()) return version == "v1" ? 100 : 0;
    for (const auto& r : vs->value("/spec/http/0/route"_json_pointer, json::array())) {
      if (r.value("/destination/subset"_json_pointer, std::string()) == version) {
        return r.value("weight", 0);
      }
    }
    return 0;
  }
  mesh::CounterReading read() {
    ++reads;
    if (last == std::chrono::system_clock::time_point{}) last = clock->now();
    const double s = std::chrono::duration<double>(clock->now() - last).count();
    last = clock->now();
    auto n2 = static_cast<int64_t>(s * rps * weightOf("v2") / 100.0);
    v2.requests += n2;
    v2.errors += static_cast<int64_t>(n2 * errorRate);
    v1.requests += static_cast<int64_t>(s * rps * weightOf("v1") / 100.0);
    mesh::CounterReading r;
    r.counts["frontend-1"] = {{"v1", v1}, {"v2", v2}};
    return r;
  }
};

class SharedMetrics : public mesh::RolloutMetrics {
 public:
  explicit SharedMetrics(FakeTraffic& t) : t_(t) {}
  Result<mesh::CounterReading> read() override { return t_.read(); }

 private:
  FakeTraffic& t_;
};

class MeshRolloutControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    ASSERT_TRUE(mesh::ensureMeshResources(*rest).ok());
    ASSERT_TRUE(mesh::ensureMeshRolloutCrd(*rest).ok());
    traffic.rest = rest.get();
    traffic.clock = &clock;
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "shop"}}}};
    ASSERT_TRUE(rest->create(res::kNamespaces, "", ns).ok());
    json svc = {{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", "reviews"}}},
                {"spec",
                 {{"selector", {{"app", "reviews"}}},
                  {"ports", {{{"port", 8080}, {"targetPort", 8080}}}}}}};
    ASSERT_TRUE(rest->create(res::kServices, "shop", svc).ok());
    json labels = {{"app", "reviews"}, {"version", "v1"}};
    json deploy = {
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata", {{"name", "reviews-v1"}, {"labels", labels}}},
        {"spec",
         {{"replicas", 4},
          {"selector", {{"matchLabels", labels}}},
          {"template",
           {{"metadata", {{"labels", labels}}},
            {"spec", {{"containers", {{{"name", "reviews"}, {"image", "shop/reviews:v1"}}}}}}}}}}};
    auto created = rest->create(res::kDeployments, "shop", deploy);
    ASSERT_TRUE(created.ok()) << created.status().message();
    restartController();
  }
  void TearDown() override {
    controller.reset();
    apiServer.stop();
  }
  // A new controller (as after a restart of the control plane): nothing carried over.
  void restartController() {
    controller.reset();
    informer = std::make_unique<client::Informer>(*rest, mesh::kMeshRollouts);
    MeshRolloutControllerOptions o;
    o.clock = &clock;
    o.events = &events;
    o.metrics = [this](const std::string&, const std::string&) {
      return std::make_unique<SharedMetrics>(traffic);
    };
    controller = std::make_unique<MeshRolloutController>(*rest, *informer, o);
  }
  Result<json> createRollout(json spec) {
    json obj = {{"apiVersion", "mesh.minik8s.io/v1"},
                {"kind", "MeshRollout"},
                {"metadata", {{"name", "reviews-v2"}}},
                {"spec", spec}};
    return rest->create(mesh::kMeshRollouts, "shop", obj);
  }
  // The endpoints controller's part: the new version's pods are ready as soon as asked for.
  void publishEndpoints() {
    json addresses = json::array();
    auto d = rest->get(res::kDeployments, "shop", "reviews-v2");
    const int n = d.ok() ? d->value("/spec/replicas"_json_pointer, 0) : 0;
    for (int i = 0; i < n; ++i) {
      addresses.push_back(
          {{"ip", "10.244.0." + std::to_string(10 + i)},
           {"targetRef", {{"kind", "Pod"}, {"name", "reviews-v2-" + std::to_string(i)}}}});
    }
    json eps = {{"apiVersion", "v1"},
                {"kind", "Endpoints"},
                {"metadata", {{"name", "reviews"}, {"namespace", "shop"}}},
                {"subsets", json::array()}};
    if (!addresses.empty()) {
      eps["subsets"].push_back({{"addresses", addresses}, {"ports", {{{"port", 8080}}}}});
    }
    auto got = rest->get(res::kEndpoints, "shop", "reviews");
    if (got.ok()) {
      eps["metadata"]["resourceVersion"] = (*got)["metadata"]["resourceVersion"];
      auto r = rest->update(res::kEndpoints, eps);
      ASSERT_TRUE(r.ok()) << r.status().message();
    } else {
      auto r = rest->create(res::kEndpoints, "shop", eps);
      ASSERT_TRUE(r.ok()) << r.status().message();
    }
  }
  // Syncs until the rollout ends or `until` says stop; the number of syncs.
  int drive(const std::function<bool()>& until = nullptr) {
    for (int i = 0; i < 5000; ++i) {
      auto next = controller->syncRollout("shop/reviews-v2");
      EXPECT_TRUE(next.ok()) << next.status().message();
      if (!next.ok() || !*next) return i + 1;
      publishEndpoints();
      clock.sleepFor(**next);
      if (until && until()) return i + 1;
    }
    ADD_FAILURE() << "the rollout did not end";
    return 5000;
  }
  json status() {
    auto got = rest->get(mesh::kMeshRollouts, "shop", "reviews-v2");
    return got.ok() ? got->value("status", json::object()) : json();
  }
  std::vector<std::string> reviewsDeployments() {
    std::vector<std::string> out;
    auto list = rest->list(res::kDeployments, "shop");
    for (const auto& d : list->value("items", json::array())) {
      if (!d.contains("/metadata/deletionTimestamp"_json_pointer)) {
        out.push_back(d["metadata"]["name"]);
      }
    }
    return out;
  }
  int replicasOf(const std::string& name) {
    auto d = rest->get(res::kDeployments, "shop", name);
    return d.ok() ? d->value("/spec/replicas"_json_pointer, -1) : -1;
  }
  std::string routes() {
    auto vs = rest->get(mesh::kVirtualServices, "shop", "reviews");
    std::string out;
    for (const auto& r : vs->value("/spec/http/0/route"_json_pointer, json::array())) {
      out += (out.empty() ? "" : " ") + r.value("/destination/subset"_json_pointer, std::string()) +
             "=" + std::to_string(r.value("weight", 0));
    }
    return out;
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> informer;
  std::unique_ptr<MeshRolloutController> controller;
  FakeRolloutClock clock;
  FakeTraffic traffic;
  client::FakeEventRecorder events;
};

const json kSpec = {
    {"service", "reviews"}, {"image", "shop/reviews:v2"}, {"stepPercent", 50}, {"interval", "10s"}};

TEST_F(MeshRolloutControllerTest, AHealthyRolloutIsPromoted) {
  ASSERT_TRUE(createRollout(kSpec).ok());
  drive();
  json st = status();
  EXPECT_EQ(st["phase"], "Promoted") << st.dump();
  EXPECT_EQ(st["weight"], 100);
  EXPECT_EQ(st["oldDeployment"], "reviews-v1");
  EXPECT_EQ(st["newDeployment"], "reviews-v2");
  EXPECT_EQ(st["newVersion"], "v2");
  EXPECT_EQ(st["observedGeneration"], 1);
  EXPECT_EQ(st["conditions"][0]["type"], "Promoted");
  EXPECT_EQ(st["conditions"][0]["status"], "True");
  EXPECT_GT(st["totalCounts"][0].get<int64_t>(), 500);
  EXPECT_EQ(st["totalCounts"][1], 0);
  EXPECT_EQ(reviewsDeployments(), std::vector<std::string>{"reviews-v2"});
  EXPECT_EQ(replicasOf("reviews-v2"), 4);
  EXPECT_EQ(routes(), "v2=100");
  EXPECT_EQ(events.reasons(),
            (std::vector<std::string>{"Started", "Advanced", "Advanced", "Promoted"}));
  // The finalizer went with the end; the object deletes at once.
  auto obj = rest->get(mesh::kMeshRollouts, "shop", "reviews-v2");
  EXPECT_FALSE(obj->contains("/metadata/finalizers/0"_json_pointer)) << obj->dump();
}

TEST_F(MeshRolloutControllerTest, FiveHundredsRollBack) {
  traffic.errorRate = 0.5;
  ASSERT_TRUE(createRollout(kSpec).ok());
  drive();
  json st = status();
  EXPECT_EQ(st["phase"], "RolledBack") << st.dump();
  EXPECT_NE(st["reason"].get<std::string>().find("is above 5.0%"), std::string::npos);
  EXPECT_EQ(st["conditions"][0]["status"], "False");
  EXPECT_EQ(st["weight"], 50);
  EXPECT_EQ(reviewsDeployments(), std::vector<std::string>{"reviews-v1"});
  EXPECT_EQ(replicasOf("reviews-v1"), 4);
  EXPECT_EQ(routes(), "v1=100");
  auto warning = events.find("RolledBack");
  ASSERT_TRUE(warning);
  EXPECT_EQ(warning->type, "Warning");
  EXPECT_EQ(warning->message, st["reason"]);
}

TEST_F(MeshRolloutControllerTest, ARestartedControllerResumesFromTheStatus) {
  ASSERT_TRUE(createRollout(kSpec).ok());
  // Half-way: the first step's weight is set and its analysis under way.
  drive([&] { return status().value("stage", "") == "Analysing" && traffic.reads >= 5; });
  json mid = status();
  ASSERT_EQ(mid["weight"], 50) << mid.dump();
  ASSERT_EQ(mid["phase"], "Progressing");
  const int64_t analysedBefore = mid["totalCounts"][0];
  EXPECT_GT(analysedBefore, 0);
  EXPECT_EQ(replicasOf("reviews-v1"), 2);
  EXPECT_EQ(replicasOf("reviews-v2"), 2);
  restartController();
  clock.sleepFor(3s);  // the control plane was away a moment
  drive();
  json st = status();
  EXPECT_EQ(st["phase"], "Promoted") << st.dump();
  EXPECT_EQ(reviewsDeployments(), std::vector<std::string>{"reviews-v2"});
  // Nothing counted twice across the restart: at most what the sidecar saw for v2.
  EXPECT_GT(st["totalCounts"][0].get<int64_t>(), analysedBefore);
  EXPECT_LE(st["totalCounts"][0].get<int64_t>(), traffic.v2.requests);
}

TEST_F(MeshRolloutControllerTest, DeletingItMidWayRollsBack) {
  ASSERT_TRUE(createRollout(kSpec).ok());
  drive([&] { return status().value("stage", "") == "Analysing"; });
  ASSERT_EQ(routes(), "v1=50 v2=50");
  ASSERT_TRUE(rest->remove(mesh::kMeshRollouts, "shop", "reviews-v2").ok());
  // The finalizer holds it until the rollback is done.
  ASSERT_TRUE(rest->get(mesh::kMeshRollouts, "shop", "reviews-v2").ok());
  auto next = controller->syncRollout("shop/reviews-v2");
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_FALSE(*next);
  EXPECT_EQ(rest->get(mesh::kMeshRollouts, "shop", "reviews-v2").status().code(), 404);
  EXPECT_EQ(routes(), "v1=100");
  EXPECT_EQ(reviewsDeployments(), std::vector<std::string>{"reviews-v1"});
  EXPECT_EQ(replicasOf("reviews-v1"), 4);
}

TEST_F(MeshRolloutControllerTest, ACannotResolveServiceFails) {
  json spec = kSpec;
  spec["service"] = "nothing";
  ASSERT_TRUE(createRollout(spec).ok());
  drive();
  json st = status();
  EXPECT_EQ(st["phase"], "Failed");
  EXPECT_NE(st["reason"].get<std::string>().find("nothing"), std::string::npos) << st.dump();
  EXPECT_EQ(reviewsDeployments(), std::vector<std::string>{"reviews-v1"});
}

TEST_F(MeshRolloutControllerTest, BadSpecsAre422WithTheFieldPath) {
  auto expect422 = [&](json spec, const std::string& field) {
    auto r = createRollout(spec);
    ASSERT_FALSE(r.ok()) << spec.dump();
    EXPECT_EQ(r.status().code(), 422) << r.status().message();
    EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
  };
  json s = kSpec;
  s["stepPercent"] = 0;
  expect422(s, "spec.stepPercent");
  s = kSpec;
  s["stepPercent"] = 101;
  expect422(s, "spec.stepPercent");
  s = kSpec;
  s["interval"] = "ten seconds";
  expect422(s, "spec.interval");
  s = kSpec;
  s["maxErrorRate"] = 1;
  expect422(s, "spec.maxErrorRate");
  s = kSpec;
  s.erase("image");
  expect422(s, "spec.image");
  // parseMeshRolloutSpec says the same for what gets past a schema.
  auto parsed = mesh::parseMeshRolloutSpec(
      {{"spec", {{"service", "a"}, {"image", "b"}, {"interval", "0s"}}}});
  EXPECT_EQ(parsed.status().message(),
            "spec.interval: Invalid value: \"0s\": want a duration such as 10s, 1m or 500ms");
}

}  // namespace
}  // namespace minik8s::controllers
