// The StatefulSet controller against a real in-process API server (no kubelet: tests mark pods
// Running and Ready), one sync at a time: ordered start and stop, Parallel, stable names and DNS
// identity, a deleted pod coming back with its name, claims from volumeClaimTemplates, rolling
// updates from the highest ordinal down to the partition, status revisions, and the 422s.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "controllers/replicaset/replicaset_controller.h"
#include "controllers/statefulset/statefulset_controller.h"
#include "fake_clock.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

TEST(StatefulPodOrdinalTest, NameDashNumber) {
  EXPECT_EQ(statefulPodOrdinal("web", "web-0"), 0);
  EXPECT_EQ(statefulPodOrdinal("web", "web-12"), 12);
  EXPECT_EQ(statefulPodOrdinal("web", "web-01"), -1);
  EXPECT_EQ(statefulPodOrdinal("web", "webx-1"), -1);
  EXPECT_EQ(statefulPodOrdinal("web", "web-"), -1);
  EXPECT_EQ(statefulPodOrdinal("web", "web-a"), -1);
  EXPECT_EQ(statefulPodOrdinal("web-1", "web-1-2"), 2);
}

class StatefulSetControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    sets = std::make_unique<client::Informer>(*rest, kStatefulSets);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    revisions = std::make_unique<client::Informer>(*rest, kControllerRevisions);
    addNamespaceIndex(*pods);
    addNamespaceIndex(*revisions);
    StatefulSetControllerOptions opts;
    opts.clock = &clock;
    opts.events = &events;
    controller = std::make_unique<StatefulSetController>(*rest, *sets, *pods, *revisions, opts);
    for (auto* i : {sets.get(), pods.get(), revisions.get()}) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
  }
  void TearDown() override {
    for (auto* i : {sets.get(), pods.get(), revisions.get()}) i->stop();
    controller.reset();
    apiServer.stop();
  }

  void createSet(const std::string& name, int replicas, json extra = json::object()) {
    json set = {{"apiVersion", "apps/v1"},
                {"kind", "StatefulSet"},
                {"metadata", {{"name", name}}},
                {"spec",
                 {{"replicas", replicas},
                  {"serviceName", name + "-svc"},
                  {"selector", {{"matchLabels", {{"app", name}}}}},
                  {"template",
                   {{"metadata", {{"labels", {{"app", name}}}}},
                    {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox:1"}}}}}}}}}}};
    set["spec"].update(extra);
    auto r = rest->create(kStatefulSets, "default", set);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  json getSet(const std::string& name) { return *rest->get(kStatefulSets, "default", name); }
  void updateSet(const std::string& name, const std::function<void(json&)>& change) {
    json set = getSet(name);
    change(set);
    auto r = rest->update(kStatefulSets, set);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  // "name=image" of the live pods, by name.
  std::vector<std::string> podsOf(const std::string& app) {
    std::vector<std::string> out;
    auto l = rest->list(res::kPods, "default");
    for (const auto& p : (*l)["items"]) {
      if (p["metadata"]["labels"].value("app", "") != app || isTerminating(p)) continue;
      out.push_back(p["metadata"]["name"].get<std::string>() + "=" +
                    p["spec"]["containers"][0]["image"].get<std::string>());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  void markReady(const std::string& app) {
    auto l = rest->list(res::kPods, "default");
    for (const auto& p : (*l)["items"]) {
      if (p["metadata"]["labels"].value("app", "") != app || isPodReady(p)) continue;
      json st = {{"status",
                  {{"phase", "Running"},
                   {"conditions",
                    {{{"type", "Ready"},
                      {"status", "True"},
                      {"lastTransitionTime", "2020-01-01T00:00:00Z"}}}}}}};
      ASSERT_TRUE(
          rest->patch(res::kPods, "default", p["metadata"]["name"], st, "merge", "status").ok());
    }
  }
  template <typename F>
  bool eventually(F f, int tries = 250) {
    for (int i = 0; i < tries; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  void pass(const std::string& name) {
    auto same = [&](client::Informer& inf, const client::Resource& r) {
      auto l = rest->list(r, "");
      if (!l.ok()) return false;
      std::map<std::string, std::string> want, have;
      for (const auto& o : (*l)["items"])
        want[client::objectKey(o)] = o["metadata"]["resourceVersion"];
      for (const auto& o : inf.list())
        have[client::objectKey(o)] = o["metadata"]["resourceVersion"];
      return want == have;
    };
    ASSERT_TRUE(eventually([&] {
      return same(*sets, kStatefulSets) && same(*pods, res::kPods) &&
             same(*revisions, kControllerRevisions);
    }));
    Status s = controller->sync("default/" + name);
    ASSERT_TRUE(s.ok()) << s.toString();
  }
  // Syncs and marks pods ready until nothing changes.
  void converge(const std::string& name, int rounds = 12) {
    for (int i = 0; i < rounds; ++i) {
      pass(name);
      markReady(name);
    }
    pass(name);
  }

  testing::InProcessApiServer apiServer;
  testing::FakeClock clock;
  client::FakeEventRecorder events;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> sets, pods, revisions;
  std::unique_ptr<StatefulSetController> controller;
};

TEST_F(StatefulSetControllerTest, OrderedStartOneAtATimeWithStableIdentity) {
  createSet("web", 3);
  pass("web");
  EXPECT_EQ(podsOf("web"), (std::vector<std::string>{"web-0=busybox:1"}));
  pass("web");  // web-0 is not Ready: nothing more
  EXPECT_EQ(podsOf("web").size(), 1u);
  markReady("web");
  pass("web");
  EXPECT_EQ(podsOf("web"), (std::vector<std::string>{"web-0=busybox:1", "web-1=busybox:1"}));
  markReady("web");
  pass("web");
  markReady("web");
  pass("web");
  EXPECT_EQ(podsOf("web").size(), 3u);
  auto pod = *rest->get(res::kPods, "default", "web-1");
  EXPECT_EQ(pod["spec"]["hostname"], "web-1");
  EXPECT_EQ(pod["spec"]["subdomain"], "web-svc");
  EXPECT_EQ(pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"], "web-1");
  EXPECT_EQ(pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"], "1");
  json st = getSet("web")["status"];
  EXPECT_EQ(st["replicas"], 3);
  EXPECT_EQ(st["readyReplicas"], 3);
  EXPECT_EQ(st["currentRevision"], st["updateRevision"]);
  EXPECT_EQ(pod["metadata"]["labels"]["controller-revision-hash"], st["updateRevision"]);
}

TEST_F(StatefulSetControllerTest, ParallelStartsAllAtOnce) {
  createSet("par", 3, {{"podManagementPolicy", "Parallel"}});
  pass("par");
  EXPECT_EQ(podsOf("par").size(), 3u);
}

TEST_F(StatefulSetControllerTest, ADeletedPodComesBackWithItsNameAndScaleDownIsFromTheTop) {
  createSet("db", 3);
  converge("db");
  ASSERT_EQ(podsOf("db").size(), 3u);
  const std::string oldUid = (*rest->get(res::kPods, "default", "db-1"))["metadata"]["uid"];
  ASSERT_TRUE(rest->remove(res::kPods, "default", "db-1").ok());
  pass("db");
  auto back = rest->get(res::kPods, "default", "db-1");
  ASSERT_TRUE(back.ok());
  EXPECT_NE((*back)["metadata"]["uid"], oldUid);
  markReady("db");
  pass("db");
  updateSet("db", [](json& s) { s["spec"]["replicas"] = 1; });
  pass("db");
  EXPECT_EQ(podsOf("db"), (std::vector<std::string>{"db-0=busybox:1", "db-1=busybox:1"}));
  pass("db");
  EXPECT_EQ(podsOf("db"), (std::vector<std::string>{"db-0=busybox:1"}));
}

TEST_F(StatefulSetControllerTest, RollingUpdateFromTheTopDownToThePartition) {
  createSet(
      "ru", 3,
      {{"updateStrategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", 1}}}}}});
  converge("ru");
  const std::string first = getSet("ru")["status"]["updateRevision"];
  updateSet("ru",
            [](json& s) { s["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"; });
  pass("ru");  // ru-2 goes first
  EXPECT_EQ(podsOf("ru"), (std::vector<std::string>{"ru-0=busybox:1", "ru-1=busybox:1"}));
  converge("ru");
  // The partition keeps ru-0 at the old revision.
  EXPECT_EQ(podsOf("ru"),
            (std::vector<std::string>{"ru-0=busybox:1", "ru-1=busybox:2", "ru-2=busybox:2"}));
  json st = getSet("ru")["status"];
  EXPECT_EQ(st["currentRevision"], first);
  EXPECT_NE(st["updateRevision"], first);
  EXPECT_EQ(st["updatedReplicas"], 2);
  EXPECT_EQ(st["currentReplicas"], 1);
  // Partition 0 finishes it; the update revision becomes current.
  updateSet("ru", [](json& s) { s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 0; });
  converge("ru");
  EXPECT_EQ(podsOf("ru"),
            (std::vector<std::string>{"ru-0=busybox:2", "ru-1=busybox:2", "ru-2=busybox:2"}));
  st = getSet("ru")["status"];
  EXPECT_EQ(st["currentRevision"], st["updateRevision"]);
  EXPECT_EQ(st["currentReplicas"], 3);
}

TEST_F(StatefulSetControllerTest, ClaimTemplatesBecomeThePodsClaims) {
  createSet("vol", 1,
            {{"volumeClaimTemplates",
              {{{"metadata", {{"name", "data"}}},
                {"spec",
                 {{"accessModes", {"ReadWriteOnce"}},
                  {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}}}}});
  pass("vol");
  auto pod = *rest->get(res::kPods, "default", "vol-0");
  bool found = false;
  for (const auto& v : pod["spec"]["volumes"]) {
    if (v["name"] == "data") {
      found = true;
      EXPECT_EQ(v["persistentVolumeClaim"]["claimName"], "data-vol-0");
    }
  }
  EXPECT_TRUE(found) << pod["spec"].dump();
  // The claim exists, labelled like the set's pods, and stays when the pod and the set go.
  auto claim = rest->get(client::Resource{"", "v1", "persistentvolumeclaims", true}, "default",
                         "data-vol-0");
  ASSERT_TRUE(claim.ok()) << claim.status().toString();
  EXPECT_EQ((*claim)["metadata"]["labels"]["app"], "vol");
  EXPECT_EQ((*claim)["spec"]["resources"]["requests"]["storage"], "1Gi");
  EXPECT_FALSE((*claim)["metadata"].contains("ownerReferences"));
}

TEST_F(StatefulSetControllerTest, BadSpecsAndForbiddenUpdatesAreRefused) {
  json bad = json::parse(R"({"apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": "bad"},
    "spec": {"selector": {"matchLabels": {"app": "x"}}, "podManagementPolicy": "Random",
             "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": {}}],
             "template": {"metadata": {"labels": {"app": "x"}},
                          "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})");
  auto r = rest->create(kStatefulSets, "default", bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 422);
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find("spec.podManagementPolicy: Unsupported value: \"Random\""), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("spec.volumeClaimTemplates[0].spec.accessModes: Required value"),
            std::string::npos)
      << msg;
  createSet("fixed", 1);
  json set = getSet("fixed");
  set["spec"]["serviceName"] = "other";
  auto u = rest->update(kStatefulSets, set);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("updates to statefulset spec for fields other than"),
            std::string::npos)
      << u.status().message();
}

}  // namespace
}  // namespace minik8s::controllers
