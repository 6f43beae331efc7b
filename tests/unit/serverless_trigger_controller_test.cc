// The trigger controller against a real in-process API server, with the wall clock and the
// gateway faked: a cron schedule fires once per activation at the minute boundary, a missed
// stretch fires once, Forbid refusals count as skipped, an unreachable gateway keeps the
// activation due; a file Trigger gets its watcher Deployment (and loses it with the Trigger); a
// bad spec shows as InvalidSpec with the field.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "controllers/trigger/trigger_controller.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "serverless/trigger.h"
#include "serverless/trigger_broker.h"

namespace minik8s::controllers {
namespace {

namespace sl = serverless;
using namespace std::chrono_literals;

class FakeSender : public TriggerEventSender {
 public:
  Status send(const std::string& ns, const std::string& trigger,
              const sl::CloudEvent& event) override {
    std::lock_guard lock(mu);
    sent.push_back(event);
    return answer;
  }
  std::vector<sl::CloudEvent> sentNow() {
    std::lock_guard lock(mu);
    return sent;
  }
  std::mutex mu;
  Status answer;
  std::vector<sl::CloudEvent> sent;
};

class TriggerControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.start().ok());
    rest_ = std::make_unique<client::RestClient>(api_.url());
    ASSERT_TRUE(sl::ensureTriggerCrd(*rest_).ok());
    // The CRD is served once its storage is set up.
    ASSERT_TRUE(testing::eventually([&] { return rest_->list(sl::kTriggers, "default").ok(); }));
    triggers_ = std::make_unique<client::Informer>(*rest_, sl::kTriggers);
    deployments_ = std::make_unique<client::Informer>(*rest_, client::resources::kDeployments);
    TriggerControllerOptions o;
    o.sender = &sender_;
    o.now = [this] {
      std::lock_guard lock(clockMu_);
      return now_;
    };
    controller_ = std::make_unique<TriggerController>(*rest_, *triggers_, *deployments_, o);
    triggers_->start();
    deployments_->start();
    ASSERT_TRUE(triggers_->waitForSync(5s));
    ASSERT_TRUE(deployments_->waitForSync(5s));
  }
  void TearDown() override {
    controller_.reset();
    if (triggers_) triggers_->stop();
    if (deployments_) deployments_->stop();
  }

  void setNow(Clock::time_point t) {
    std::lock_guard lock(clockMu_);
    now_ = t;
  }

  json create(const std::string& name, json spec) {
    json t = {{"apiVersion", sl::kApiVersion},
              {"kind", "Trigger"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", std::move(spec)}};
    auto r = rest_->create(sl::kTriggers, "default", t);
    EXPECT_TRUE(r.ok()) << r.status().toString();
    EXPECT_TRUE(testing::eventually([&] { return triggers_->get("default/" + name).has_value(); }));
    return r.ok() ? *r : json();
  }

  // Syncs, then waits until the informer holds what the sync wrote.
  json syncAndRead(const std::string& name) {
    Status s = controller_->sync("default/" + name);
    EXPECT_TRUE(s.ok()) << s.toString();
    auto stored = rest_->get(sl::kTriggers, "default", name);
    EXPECT_TRUE(stored.ok());
    const std::string rv = stored->value("/metadata/resourceVersion"_json_pointer, std::string());
    EXPECT_TRUE(testing::eventually([&] {
      auto c = triggers_->get("default/" + name);
      return c && c->value("/metadata/resourceVersion"_json_pointer, std::string()) == rv;
    }));
    return *stored;
  }

  testing::InProcessApiServer api_;
  std::unique_ptr<client::RestClient> rest_;
  std::unique_ptr<client::Informer> triggers_, deployments_;
  FakeSender sender_;
  std::mutex clockMu_;
  Clock::time_point now_ = Clock::now();
  std::unique_ptr<TriggerController> controller_;
};

TEST_F(TriggerControllerTest, CronFiresOncePerActivation) {
  json t =
      create("tick", {{"target", {{"function", "sink"}}}, {"schedule", {{"cron", "* * * * *"}}}});
  const auto created =
      *parseRfc3339(t.value("/metadata/creationTimestamp"_json_pointer, std::string()));
  const auto minute = std::chrono::floor<std::chrono::minutes>(created) + 1min;

  setNow(minute - 1s);  // before the first activation: nothing
  json s = syncAndRead("tick");
  EXPECT_TRUE(sender_.sentNow().empty());
  EXPECT_EQ(s.value("/status/type"_json_pointer, std::string()), "schedule");
  EXPECT_EQ(s.value("/status/target"_json_pointer, std::string()), "function/sink");
  EXPECT_EQ(s.value("/status/conditions/0/reason"_json_pointer, std::string()), "Scheduled");

  setNow(minute);  // the boundary: fires
  s = syncAndRead("tick");
  auto sent = sender_.sentNow();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, "minik8s.schedule");
  EXPECT_EQ(sent[0].time, formatRfc3339(minute));
  EXPECT_EQ(sent[0].source, "/apis/serverless.minik8s.io/v1/namespaces/default/triggers/tick");
  EXPECT_EQ(s.value("/status/lastScheduleTime"_json_pointer, std::string()), formatRfc3339(minute));

  setNow(minute + 30s);  // the same activation is not fired twice
  syncAndRead("tick");
  EXPECT_EQ(sender_.sentNow().size(), 1u);

  setNow(minute + 5min + 10s);  // four activations missed: the latest fires, once
  s = syncAndRead("tick");
  sent = sender_.sentNow();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].time, formatRfc3339(minute + 5min));

  sender_.answer = Status::Unavailable("connection refused");  // the gateway is down
  setNow(minute + 6min);
  s = syncAndRead("tick");
  EXPECT_EQ(s.value("/status/conditions/0/reason"_json_pointer, std::string()),
            "GatewayUnavailable");
  EXPECT_EQ(s.value("/status/lastScheduleTime"_json_pointer, std::string()),
            formatRfc3339(minute + 5min));  // still due

  // The gateway's copy of the Trigger is invalid: refused, not a skip; still due.
  sender_.answer = Status::BadRequest("spec.target: give function or workflow");
  s = syncAndRead("tick");
  EXPECT_EQ(sender_.sentNow().size(), 4u);
  EXPECT_EQ(s.value("/status/conditions/0/reason"_json_pointer, std::string()), "GatewayRefused");
  EXPECT_EQ(s.value("/status/skipped"_json_pointer, 0), 0);
  EXPECT_EQ(s.value("/status/lastScheduleTime"_json_pointer, std::string()),
            formatRfc3339(minute + 5min));

  sender_.answer = Status::ConflictMessage("previous still delivering");  // Forbid refused it
  s = syncAndRead("tick");
  EXPECT_EQ(sender_.sentNow().size(), 5u);  // the retry of the activation reached the gateway
  EXPECT_EQ(s.value("/status/skipped"_json_pointer, 0), 1);
  EXPECT_EQ(s.value("/status/lastScheduleTime"_json_pointer, std::string()),
            formatRfc3339(minute + 6min));
  EXPECT_EQ(s.value("/status/conditions/0/reason"_json_pointer, std::string()), "Scheduled");
}

TEST_F(TriggerControllerTest, FileTriggerRunsAWatcherUntilItIsDeleted) {
  ASSERT_TRUE(
      rest_
          ->create(
              client::resources::kNamespaces, "",
              {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "serverless"}}}})
          .ok());
  auto svc = rest_->create(client::resources::kServices, "serverless",
                           {{"apiVersion", "v1"},
                            {"kind", "Service"},
                            {"metadata", {{"name", "gateway"}, {"namespace", "serverless"}}},
                            {"spec",
                             {{"clusterIP", "10.96.0.80"},
                              {"ports", {{{"port", 80}, {"targetPort", 8080}}}},
                              {"selector", {{"app", "serverless-gateway"}}}}}});
  ASSERT_TRUE(svc.ok()) << svc.status().toString();
  create("uploads", {{"target", {{"function", "sink"}}},
                     {"file", {{"persistentVolumeClaim", "photos"}, {"pattern", "*.jpg"}}}});
  json s = syncAndRead("uploads");
  EXPECT_EQ(s.value("/status/conditions/0/reason"_json_pointer, std::string()), "WatcherStarting");
  auto dep = rest_->get(client::resources::kDeployments, "default", "uploads-trigger-watch");
  ASSERT_TRUE(dep.ok()) << dep.status().toString();
  const json args = dep->value("/spec/template/spec/containers/0/args"_json_pointer, json());
  EXPECT_EQ(args[10], "http://10.96.0.80:80/trigger/default/uploads");
  EXPECT_EQ(dep->value("/spec/template/spec/volumes/0/persistentVolumeClaim/claimName"_json_pointer,
                       std::string()),
            "photos");

  ASSERT_TRUE(rest_->remove(sl::kTriggers, "default", "uploads").ok());
  ASSERT_TRUE(testing::eventually([&] { return !triggers_->get("default/uploads"); }));
  ASSERT_TRUE(testing::eventually(
      [&] { return deployments_->get("default/uploads-trigger-watch").has_value(); }));
  ASSERT_TRUE(controller_->sync("default/uploads").ok());
  EXPECT_EQ(rest_->get(client::resources::kDeployments, "default", "uploads-trigger-watch")
                .status()
                .code(),
            404);
}

TEST_F(TriggerControllerTest, ABadSpecIsInvalidSpecWithTheField) {
  create("both", {{"target", {{"function", "sink"}}},
                  {"schedule", {{"cron", "* * * * *"}}},
                  {"event", json::object()}});
  json s = syncAndRead("both");
  EXPECT_EQ(s.value("/status/conditions/0/reason"_json_pointer, std::string()), "InvalidSpec");
  EXPECT_EQ(s.value("/status/conditions/0/status"_json_pointer, std::string()), "False");
  EXPECT_NE(s.value("/status/conditions/0/message"_json_pointer, std::string())
                .find("exactly one of schedule, file, event"),
            std::string::npos);
}

TEST_F(TriggerControllerTest, DeliveryOutcomesAreWrittenInBatches) {
  create("busy", {{"target", {{"function", "sink"}}}, {"event", json::object()}});
  sl::StatusDeliveryRecorder recorder(*rest_, nullptr, 50ms);
  recorder.start();
  std::vector<std::thread> senders;
  for (int t = 0; t < 4; ++t) {
    senders.emplace_back([&recorder, t] {
      for (int i = 0; i < 100; ++i) {
        sl::DeliveryOutcome o;
        o.delivered = i % 20 != 0;  // 5 failures per thread
        o.attempts = o.delivered ? 1 : 4;
        o.error = o.delivered ? "" : "boom";
        o.event.id = std::to_string(t) + "-" + std::to_string(i);
        o.firedAt = "2026-11-26T10:00:0" + std::to_string(t) + "Z";
        recorder.record("default", "busy", o, true);
      }
    });
  }
  for (auto& s : senders) s.join();
  recorder.stop();  // writes what is pending
  auto s = rest_->get(sl::kTriggers, "default", "busy");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->value("/status/delivered"_json_pointer, 0), 380);
  EXPECT_EQ(s->value("/status/failed"_json_pointer, 0), 20);
  EXPECT_EQ(s->value("/status/deadLetters"_json_pointer, json::array()).size(),
            sl::kMaxDeadLetters);
  EXPECT_EQ(s->value("/status/lastFired"_json_pointer, std::string()), "2026-11-26T10:00:03Z");
  // Far fewer writes than outcomes: the resourceVersion moved a few times, not 400.
  const int64_t created =
      std::stoll(triggers_->get("default/busy")
                     ->value("/metadata/resourceVersion"_json_pointer, std::string("0")));
  const int64_t now =
      std::stoll(s->value("/metadata/resourceVersion"_json_pointer, std::string("0")));
  EXPECT_LT(now - created, 100) << "status writes: " << now - created;
}

}  // namespace
}  // namespace minik8s::controllers
