// The event recorder: the correlator's decisions (dedup, aggregation, rate limit) with explicit
// times, ApiEventRecorder writing real Events to an in-process API server (count bumps coalesced
// into one PATCH, the fields `kubectl describe` reads, a bounded queue that never blocks, a fake
// clock for timestamps), objectReference, and the in-memory FakeEventRecorder.
#include <gtest/gtest.h>

#include <thread>

#include "client/event_recorder.h"
#include "client/rest_client.h"
#include "in_process_api_server.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;
using Kind = EventCorrelator::Decision::Kind;

json podRef(const std::string& name = "web", const std::string& fieldPath = "") {
  json r = {{"kind", "Pod"},        {"namespace", "default"}, {"name", name},
            {"uid", "uid-" + name}, {"apiVersion", "v1"},     {"resourceVersion", "7"}};
  if (!fieldPath.empty()) r["fieldPath"] = fieldPath;
  return r;
}

EventCorrelator::Input input(const std::string& reason, const std::string& message,
                             const std::string& pod = "web") {
  return {podRef(pod, "spec.containers{app}"), "Normal", reason, message};
}

TEST(EventCorrelatorTest, IdenticalEventsBumpTheCountOfTheFirst) {
  EventCorrelator c;
  EventClock::time_point t0{std::chrono::seconds(1'700'000'000)};
  auto first = c.observe(input("BackOff", "back-off"), t0);
  EXPECT_EQ(first.kind, Kind::kCreate);
  EXPECT_EQ(first.count, 1);
  auto second = c.observe(input("BackOff", "back-off"), t0 + 10s);
  EXPECT_EQ(second.kind, Kind::kUpdate);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.count, 2);
  EXPECT_EQ(second.firstTimestamp, t0);
  EXPECT_EQ(second.lastTimestamp, t0 + 10s);
  // Another message, container or pod is another Event.
  EXPECT_EQ(c.observe(input("BackOff", "other"), t0).kind, Kind::kCreate);
  auto otherPod = c.observe(input("BackOff", "back-off", "db"), t0);
  EXPECT_EQ(otherPod.kind, Kind::kCreate);
  EXPECT_NE(otherPod.key, first.key);
}

TEST(EventCorrelatorTest, ManyMessagesOfOneReasonAreCombined) {
  EventCorrelatorOptions o;
  o.maxSimilarMessages = 3;
  EventCorrelator c(o);
  EventClock::time_point t0{std::chrono::seconds(1'700'000'000)};
  EXPECT_EQ(c.observe(input("Unhealthy", "m1"), t0).message, "m1");
  EXPECT_EQ(c.observe(input("Unhealthy", "m2"), t0).message, "m2");
  auto third = c.observe(input("Unhealthy", "m3"), t0);
  EXPECT_EQ(third.kind, Kind::kCreate);
  EXPECT_EQ(third.message, "(combined from similar events): m3");
  auto fourth = c.observe(input("Unhealthy", "m4"), t0 + 1s);
  EXPECT_EQ(fourth.kind, Kind::kUpdate);
  EXPECT_EQ(fourth.key, third.key);
  EXPECT_EQ(fourth.count, 2);
  EXPECT_EQ(fourth.message, "(combined from similar events): m4");
  // Outside the window the old messages no longer count.
  auto later = c.observe(input("Unhealthy", "m5"), t0 + 20min);
  EXPECT_EQ(later.message, "m5");
}

TEST(EventCorrelatorTest, NewEventsPerObjectAreRateLimited) {
  EventCorrelatorOptions o;
  o.burst = 3;
  o.refillEvery = 60s;
  EventCorrelator c(o);
  EventClock::time_point t0{std::chrono::seconds(1'700'000'000)};
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(c.observe(input("Created", "c" + std::to_string(i)), t0).kind, Kind::kCreate);
  EXPECT_EQ(c.observe(input("Created", "c3"), t0 + 1s).kind, Kind::kDrop);
  // Repeats of an Event already written are never dropped (they only bump its count).
  EXPECT_EQ(c.observe(input("Created", "c0"), t0 + 2s).kind, Kind::kUpdate);
  // Another pod has its own bucket; a token comes back after refillEvery.
  EXPECT_EQ(c.observe(input("Created", "x", "db"), t0 + 2s).kind, Kind::kCreate);
  EXPECT_EQ(c.observe(input("Created", "c4"), t0 + 62s).kind, Kind::kCreate);
  EXPECT_EQ(c.observe(input("Created", "c5"), t0 + 63s).kind, Kind::kDrop);
}

class ApiEventRecorderTest : public ::testing::Test {
 protected:
  static ApiEventRecorderOptions kubeletOptions() {
    ApiEventRecorderOptions o;
    o.component = "kubelet";
    o.host = "node-1";
    return o;
  }
  void SetUp() override {
    ASSERT_TRUE(server.start().ok());
    client = std::make_unique<RestClient>(server.url());
  }
  json events(const std::string& fieldSelector = "") {
    ListParams p;
    p.fieldSelector = fieldSelector;
    auto list = client->list(resources::kEvents, "default", p);
    EXPECT_TRUE(list.ok()) << list.status().message();
    return list.ok() ? (*list)["items"] : json::array();
  }
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "web"}, {"namespace", "default"}, {"uid", "u-1"}, {"resourceVersion", "12"}}}};
  testing::InProcessApiServer server;
  std::unique_ptr<RestClient> client;
};

TEST_F(ApiEventRecorderTest, WritesTheEventKubectlDescribeShows) {
  ApiEventRecorderOptions o = kubeletOptions();
  ApiEventRecorder rec(*client, o);
  rec.record(pod, "spec.containers{app}", "Normal", "Started", "Started container app");
  rec.flush();
  json items = events(
      "involvedObject.name=web,involvedObject.namespace=default,"
      "involvedObject.kind=Pod,involvedObject.uid=u-1");
  ASSERT_EQ(items.size(), 1u);
  const json& e = items[0];
  EXPECT_EQ(e["reason"], "Started");
  EXPECT_EQ(e["message"], "Started container app");
  EXPECT_EQ(e["type"], "Normal");
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(e["source"], json({{"component", "kubelet"}, {"host", "node-1"}}));
  EXPECT_EQ(e["reportingComponent"], "kubelet");
  EXPECT_EQ(e["reportingInstance"], "node-1");
  EXPECT_EQ(e["involvedObject"]["fieldPath"], "spec.containers{app}");
  EXPECT_EQ(e["involvedObject"]["uid"], "u-1");
  EXPECT_EQ(e["firstTimestamp"], e["lastTimestamp"]);
  EXPECT_EQ(e["metadata"]["name"].get<std::string>().rfind("web.", 0), 0u);
}

TEST_F(ApiEventRecorderTest, RepeatsAreCoalescedIntoOneCountUpdate) {
  ApiEventRecorderOptions o = kubeletOptions();
  o.updateInterval = 1h;  // nothing is patched until flush()
  ApiEventRecorder rec(*client, o);
  rec.record(pod, "spec.containers{app}", "Warning", "BackOff", "Back-off restarting");
  rec.flush();
  for (int i = 0; i < 4; ++i)
    rec.record(pod, "spec.containers{app}", "Warning", "BackOff", "Back-off restarting");
  // The writer thread creates nothing new for the repeats and holds the count bump back.
  std::this_thread::sleep_for(300ms);
  json items = events("reason=BackOff");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["count"], 1);
  rec.flush();
  items = events("reason=BackOff");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["count"], 5);
  EXPECT_EQ(items[0]["type"], "Warning");
}

TEST_F(ApiEventRecorderTest, ADeletedEventIsWrittenAgain) {
  ApiEventRecorderOptions o = kubeletOptions();
  ApiEventRecorder rec(*client, o);
  rec.record(pod, "", "Normal", "Pulled", "already present");
  rec.flush();
  json items = events();
  ASSERT_EQ(items.size(), 1u);
  ASSERT_TRUE(
      client->remove(resources::kEvents, "default", items[0]["metadata"]["name"].get<std::string>())
          .ok());
  rec.record(pod, "", "Normal", "Pulled", "already present");
  rec.flush();
  items = events();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["count"], 2);
  EXPECT_FALSE(items[0]["involvedObject"].contains("fieldPath"));
}

TEST_F(ApiEventRecorderTest, TheWriterThreadWritesWithoutFlush) {
  ApiEventRecorderOptions o = kubeletOptions();
  o.updateInterval = 100ms;
  ApiEventRecorder rec(*client, o);
  rec.record(pod, "", "Normal", "Scheduled", "x");
  rec.record(pod, "", "Normal", "Scheduled", "x");
  json items;
  for (int i = 0; i < 100; ++i) {
    items = events();
    if (items.size() == 1 && items[0]["count"] == 2) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["count"], 2);
}

TEST_F(ApiEventRecorderTest, ANodeEventLivesInDefaultWithAnEmptyInvolvedNamespace) {
  ApiEventRecorder rec(*client, kubeletOptions());
  json node = {{"kind", "Node"},
               {"apiVersion", "v1"},
               {"metadata", {{"name", "node-1"}, {"uid", "node-1"}}}};
  rec.record(node, "Normal", "NodeReady", "Node node-1 status is now: NodeReady");
  rec.flush();
  // What `kubectl describe node node-1` asks for.
  json items = events(
      "involvedObject.kind=Node,involvedObject.name=node-1,involvedObject.namespace=,"
      "involvedObject.uid=node-1");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["metadata"]["namespace"], "default");
  EXPECT_EQ(items[0]["involvedObject"]["namespace"], "");
  EXPECT_EQ(items[0]["reason"], "NodeReady");
}

TEST_F(ApiEventRecorderTest, AControllerEventHasItsComponentNoHostAndTheGivenTime) {
  const EventClock::time_point fakeNow{std::chrono::seconds(1'700'000'000)};
  ApiEventRecorderOptions o;
  o.component = "default-scheduler";
  o.now = [&] { return fakeNow; };
  ApiEventRecorder rec(*client, o);
  json hpa = {{"kind", "HorizontalPodAutoscaler"},
              {"apiVersion", "autoscaling/v2"},
              {"metadata", {{"name", "web"}, {"namespace", "default"}, {"uid", "h-1"}}}};
  rec.record(hpa, "Normal", "SuccessfulRescale", "New size: 3");
  rec.record(pod, "Warning", "FailedScheduling", "0/1 nodes are available");
  rec.flush();
  json items = events("reason=SuccessfulRescale");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["source"], json({{"component", "default-scheduler"}}));
  EXPECT_EQ(items[0]["reportingComponent"], "default-scheduler");
  EXPECT_EQ(items[0]["involvedObject"]["kind"], "HorizontalPodAutoscaler");
  EXPECT_EQ(items[0]["involvedObject"]["apiVersion"], "autoscaling/v2");
  EXPECT_EQ(items[0]["firstTimestamp"], formatRfc3339(fakeNow));
  EXPECT_EQ(items[0]["lastTimestamp"], formatRfc3339(fakeNow));
  // Two Events at the same fake instant still get distinct names.
  ASSERT_EQ(events().size(), 2u);
  EXPECT_EQ(events("reason=FailedScheduling")[0]["involvedObject"]["kind"], "Pod");
}

TEST(ObjectReferenceTest, DefaultsAndMalformedObjects) {
  json node = {{"kind", "Node"}, {"apiVersion", "v1"}, {"metadata", {{"name", "n1"}}}};
  json ref = objectReference(node);
  EXPECT_EQ(ref["namespace"], "");  // cluster-scoped: kubectl describe node matches it empty
  EXPECT_EQ(ref["kind"], "Node");
  EXPECT_FALSE(ref.contains("fieldPath"));
  // A list item has no kind: a pod.
  ref = objectReference({{"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u"}}}},
                        containerFieldPath("init", true));
  EXPECT_EQ(ref["kind"], "Pod");
  EXPECT_EQ(ref["apiVersion"], "v1");
  EXPECT_EQ(ref["namespace"], "ns");
  EXPECT_EQ(ref["fieldPath"], "spec.initContainers{init}");
  EXPECT_EQ(objectReference(json("x"))["name"], "");
  EXPECT_EQ(objectReference({{"metadata", 3}, {"kind", 4}})["kind"], "Pod");
}

TEST(ApiEventRecorderQueueTest, RecordNeverWaitsForTheApiServer) {
  RestClient unreachable("http://127.0.0.1:1");
  ApiEventRecorderOptions o;
  o.component = "test";
  o.maxQueued = 50;
  ApiEventRecorder rec(unreachable, o);
  json p = {{"metadata", {{"name", "p"}, {"namespace", "default"}}}};
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i) rec.record(p, "Normal", "R", "message " + std::to_string(i));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST(FakeEventRecorderTest, KeepsRecordsInOrder) {
  FakeEventRecorder rec;
  EventRecorder& seam = rec;
  json p = {{"metadata", {{"name", "web"}, {"namespace", "default"}}}};
  seam.record(p, containerFieldPath("app", false), "Normal", "Pulling", "Pulling image");
  seam.record(p, "Warning", "BackOff", "Back-off");
  EXPECT_EQ(rec.reasons(), (std::vector<std::string>{"Pulling", "BackOff"}));
  ASSERT_TRUE(rec.find("Pulling"));
  EXPECT_EQ(rec.find("Pulling")->involvedObject["fieldPath"], "spec.containers{app}");
  EXPECT_EQ(rec.find("BackOff")->type, "Warning");
  EXPECT_FALSE(rec.find("Started"));
  rec.clear();
  EXPECT_TRUE(rec.events().empty());
}

}  // namespace
}  // namespace minik8s::client
