// Triggers: the spec as read from an object (field paths of what is wrong), CloudEvents in
// binary and structured mode, Knative-style filters, the retry back-off and dead letters of the
// dispatcher with a fake clock and a fake target, schedule decisions with fixed instants, the
// file watcher's scan and the watcher Deployment.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "controllers/trigger/trigger_controller.h"
#include "fake_clock.h"
#include "serverless/cloud_event.h"
#include "serverless/trigger.h"
#include "serverless/trigger_dispatcher.h"
#include "serverless/trigger_file_watcher.h"

namespace minik8s::serverless {
namespace {

using namespace std::chrono_literals;

json trigger(json spec) {
  return {{"apiVersion", kApiVersion},
          {"kind", "Trigger"},
          {"metadata", {{"name", "t"}, {"namespace", "default"}, {"uid", "u-1"}}},
          {"spec", std::move(spec)}};
}

std::string parseError(json spec) {
  auto r = parseTriggerSpec(trigger(std::move(spec)));
  return r.ok() ? "" : r.status().message();
}

TEST(TriggerSpecTest, ReadsEachSourceWithDefaults) {
  auto s = parseTriggerSpec(
      trigger({{"target", {{"function", "hello"}}}, {"schedule", {{"cron", "*/5 * * * *"}}}}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->type(), "schedule");
  EXPECT_EQ(s->target.describe(), "function/hello");
  EXPECT_FALSE(s->schedule->every);
  EXPECT_FALSE(s->schedule->forbidConcurrent);
  EXPECT_EQ(s->delivery.retry, 3);
  EXPECT_TRUE(s->delivery.exponential);
  EXPECT_EQ(s->delivery.backoffDelay, 500ms);
  EXPECT_TRUE(s->delivery.deadLetter);

  s = parseTriggerSpec(
      trigger({{"target", {{"workflow", "pipeline"}}},
               {"schedule", {{"cron", "@every 5s"}, {"concurrencyPolicy", "Forbid"}}},
               {"delivery",
                {{"retry", 0},
                 {"backoffPolicy", "linear"},
                 {"backoffDelay", "PT1.5S"},
                 {"deadLetter", "none"}}}}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->target.describe(), "workflow/pipeline");
  EXPECT_EQ(s->schedule->every, std::chrono::seconds(5));
  EXPECT_TRUE(s->schedule->forbidConcurrent);
  EXPECT_EQ(s->delivery.retry, 0);
  EXPECT_FALSE(s->delivery.exponential);
  EXPECT_EQ(s->delivery.backoffDelay, 1500ms);
  EXPECT_FALSE(s->delivery.deadLetter);

  s = parseTriggerSpec(trigger({{"target", {{"function", "thumb"}}},
                                {"file",
                                 {{"persistentVolumeClaim", "photos"},
                                  {"path", "in"},
                                  {"pattern", "*.jpg"},
                                  {"events", {"created"}}}}}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->type(), "file");
  EXPECT_EQ(s->file->claim, "photos");
  EXPECT_TRUE(s->file->created);
  EXPECT_FALSE(s->file->modified);
  EXPECT_EQ(s->file->pollInterval, 1000ms);

  s = parseTriggerSpec(trigger(
      {{"target", {{"function", "orders"}}},
       {"event", {{"filter", {{"attributes", {{"type", "order.created"}, {"region", "eu"}}}}}}}}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->type(), "event");
  EXPECT_EQ(s->event->broker, "default");
  EXPECT_EQ(s->event->filter.at("type"), "order.created");
  EXPECT_EQ(s->event->filter.at("region"), "eu");
}

TEST(TriggerSpecTest, NamesTheFieldOfWhatIsWrong) {
  const json cron = {{"cron", "* * * * *"}};
  EXPECT_EQ(parseError({{"schedule", cron}}),
            "spec.target: Required value: one of function, workflow");
  EXPECT_EQ(parseError({{"target", {{"function", "a"}, {"workflow", "b"}}}, {"schedule", cron}}),
            "spec.target: Invalid value: one of function, workflow, not both");
  EXPECT_EQ(parseError({{"target", {{"function", "a"}}}}),
            "spec: Invalid value: exactly one of schedule, file, event is required (0 given)");
  EXPECT_EQ(
      parseError({{"target", {{"function", "a"}}}, {"schedule", cron}, {"event", json::object()}}),
      "spec: Invalid value: exactly one of schedule, file, event is required (2 given)");
  EXPECT_NE(parseError({{"target", {{"function", "a"}}}, {"schedule", {{"cron", "61 * * * *"}}}})
                .find("spec.schedule.cron: Invalid value: \"61 * * * *\""),
            std::string::npos);
  EXPECT_NE(parseError({{"target", {{"function", "a"}}}, {"schedule", {{"cron", "@every 0s"}}}})
                .find("spec.schedule.cron"),
            std::string::npos);
  EXPECT_NE(parseError({{"target", {{"function", "a"}}},
                        {"schedule", {{"cron", "* * * * *"}, {"timeZone", "Mars/Olympus"}}}})
                .find("spec.schedule.timeZone"),
            std::string::npos);
  EXPECT_EQ(parseError({{"target", {{"function", "a"}}},
                        {"schedule", {{"cron", "* * * * *"}, {"concurrencyPolicy", "Replace"}}}}),
            "spec.schedule.concurrencyPolicy: Unsupported value: \"Replace\": supported values: "
            "\"Allow\", \"Forbid\"");
  EXPECT_EQ(parseError({{"target", {{"function", "a"}}}, {"file", {{"path", "/"}}}}),
            "spec.file: Invalid value: exactly one of persistentVolumeClaim and hostPath");
  EXPECT_EQ(parseError({{"target", {{"function", "a"}}},
                        {"file", {{"hostPath", "/d"}, {"events", {"created", "deleted"}}}}}),
            "spec.file.events[1]: Unsupported value: \"deleted\": supported values: "
            "\"created\", \"modified\"");
  EXPECT_NE(parseError({{"target", {{"function", "a"}}}, {"file", {{"hostPath", "relative"}}}})
                .find("spec.file.hostPath"),
            std::string::npos);
  EXPECT_NE(parseError({{"target", {{"function", "a"}}},
                        {"event", {{"filter", {{"attributes", {{"Type", "x"}}}}}}}})
                .find("spec.event.filter.attributes[Type]"),
            std::string::npos);
  EXPECT_EQ(
      parseError(
          {{"target", {{"function", "a"}}}, {"schedule", cron}, {"delivery", {{"retry", 50}}}}),
      "spec.delivery.retry: Invalid value: 50: must be between 0 and 20");
  EXPECT_NE(parseError({{"target", {{"function", "a"}}},
                        {"schedule", cron},
                        {"delivery", {{"backoffDelay", "soon"}}}})
                .find("spec.delivery.backoffDelay"),
            std::string::npos);
  EXPECT_NE(parseError({{"target", {{"function", "Bad_Name"}}}, {"schedule", cron}})
                .find("spec.target.function"),
            std::string::npos);
}

TEST(TriggerSpecTest, CrdHasTheColumnsAndShortName) {
  const json crd = triggerCrd();
  EXPECT_EQ(crd["metadata"]["name"], "triggers.serverless.minik8s.io");
  EXPECT_EQ(crd["spec"]["names"]["shortNames"][0], "trg");
  std::vector<std::string> columns;
  for (const auto& c : crd["spec"]["versions"][0]["additionalPrinterColumns"]) {
    if (c.value("priority", 0) == 0) columns.push_back(c["name"]);
  }
  EXPECT_EQ(columns, (std::vector<std::string>{"Type", "Target", "Last-Fired", "Age"}));
}

TEST(TriggerDeliveryTest, DelaysAndBackoff) {
  EXPECT_EQ(parseDelay("PT0.5S"), 500ms);
  EXPECT_EQ(parseDelay("PT1M30S"), 90000ms);
  EXPECT_EQ(parseDelay("PT2H"), std::chrono::milliseconds(2h));
  EXPECT_EQ(parseDelay("250ms"), 250ms);
  EXPECT_FALSE(parseDelay("PT"));
  EXPECT_FALSE(parseDelay("P1D"));
  DeliveryPolicy p;
  p.backoffDelay = 200ms;
  EXPECT_EQ(retryBackoff(p, 1), 200ms);
  EXPECT_EQ(retryBackoff(p, 2), 400ms);
  EXPECT_EQ(retryBackoff(p, 4), 1600ms);
  EXPECT_EQ(retryBackoff(p, 40), std::chrono::milliseconds(1h));
  p.exponential = false;
  EXPECT_EQ(retryBackoff(p, 3), 600ms);
}

CloudEvent eventOf(const std::string& id, const std::string& type = "t") {
  CloudEvent e;
  e.id = id;
  e.source = "/test";
  e.type = type;
  return e;
}

TEST(CloudEventTest, BinaryMode) {
  http::Request req;
  req.headers = {
      {"Ce-Specversion", "1.0"},           {"ce-id", "A-1"},      {"ce-source", "/orders"},
      {"ce-type", "order.created"},        {"ce-subject", "o/7"}, {"ce-region", "eu"},
      {"Content-Type", "application/json"}};
  req.body = R"({"total": 12})";
  auto e = parseCloudEvent(req);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->id, "A-1");
  EXPECT_EQ(e->type, "order.created");
  EXPECT_EQ(e->subject, "o/7");
  EXPECT_EQ(attribute(*e, "region"), "eu");
  EXPECT_EQ(e->data["total"], 12);
  const json s = toStructured(*e);
  EXPECT_EQ(s["region"], "eu");
  EXPECT_EQ(s["data"]["total"], 12);
  EXPECT_EQ(s["specversion"], "1.0");

  req.headers = {{"ce-specversion", "1.0"},
                 {"ce-id", "2"},
                 {"ce-source", "/s"},
                 {"ce-type", "x"},
                 {"Content-Type", "text/plain"}};
  req.body = "hello";
  e = parseCloudEvent(req);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->data, "hello");

  req.headers.erase("ce-type");
  EXPECT_EQ(parseCloudEvent(req).status().message(), "ce-type: Required value");
  req.headers = {{"ce-id", "2"}, {"ce-source", "/s"}, {"ce-type", "x"}};
  EXPECT_EQ(parseCloudEvent(req).status().message(), "ce-specversion: Required value");
  req.headers["ce-specversion"] = "0.3";
  EXPECT_EQ(parseCloudEvent(req).status().message(),
            "ce-specversion: Unsupported value: \"0.3\": supported values: \"1.0\"");
  req.headers["ce-specversion"] = "1.0";
  req.headers["ce-Bad_Name"] = "x";
  EXPECT_NE(parseCloudEvent(req).status().message().find("attribute names"), std::string::npos);
}

TEST(CloudEventTest, StructuredMode) {
  http::Request req;
  req.headers = {{"Content-Type", "application/cloudevents+json; charset=utf-8"}};
  req.body = R"({"specversion": "1.0", "id": "9", "source": "/s", "type": "t",
                 "region": "us", "data": {"a": [1, 2]}})";
  auto e = parseCloudEvent(req);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->extensions.at("region"), "us");
  EXPECT_EQ(e->data["a"][1], 2);

  req.body =
      R"({"specversion": "1.0", "id": "9", "source": "/s", "type": "t", "data_base64": "aGk="})";
  e = parseCloudEvent(req);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->data, "hi");

  req.body = R"({"specversion": "1.0", "id": "9", "type": "t"})";
  EXPECT_EQ(parseCloudEvent(req).status().message(), "source: Required value");
  req.body = "[1]";
  EXPECT_EQ(parseCloudEvent(req).status().message(),
            "body: a structured CloudEvent must be one JSON object");
  req.headers = {{"Content-Type", "application/cloudevents-batch+json"}};
  EXPECT_NE(parseCloudEvent(req).status().message().find("Unsupported value"), std::string::npos);
}

TEST(CloudEventTest, FiltersMatchAttributesExactly) {
  CloudEvent e = eventOf("1", "order.created");
  e.extensions["region"] = "eu";
  EXPECT_TRUE(matchesFilter({}, e));
  EXPECT_TRUE(matchesFilter({{"type", "order.created"}}, e));
  EXPECT_TRUE(matchesFilter({{"type", "order.created"}, {"region", "eu"}, {"source", "/test"}}, e));
  EXPECT_FALSE(matchesFilter({{"type", "order.created"}, {"region", "us"}}, e));
  EXPECT_FALSE(matchesFilter({{"type", "order"}}, e));  // exact, not a prefix
  EXPECT_FALSE(matchesFilter({{"tenant", "a"}}, e));    // an absent extension
  EXPECT_TRUE(matchesFilter({{"type", ""}}, e));        // "" matches any value
}

// A target that fails the first `failures[id]` attempts of an event, and records each attempt.
class FakeTarget : public DeliveryTarget {
 public:
  Status deliver(const std::string&, const TriggerTarget&, const CloudEvent& e) override {
    std::lock_guard lock(mu);
    attempts.push_back({e.id, clock ? clock->now() : std::chrono::steady_clock::time_point{}});
    int& left = failures[e.id];
    if (left > 0 || left < 0) {
      if (left > 0) --left;
      return Status::Unavailable("function answered 500: boom");
    }
    return {};
  }
  std::mutex mu;
  const client::Clock* clock = nullptr;
  std::map<std::string, int> failures;  // -1: always
  std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> attempts;
};

class FakeRecorder : public DeliveryRecorder {
 public:
  void record(const std::string& ns, const std::string& trigger, const DeliveryOutcome& o,
              bool deadLetter) override {
    std::lock_guard lock(mu);
    outcomes.push_back(o);
    status = statusAfterDelivery(status, o, deadLetter, "2026-11-26T10:00:00Z");
  }
  std::mutex mu;
  std::vector<DeliveryOutcome> outcomes;
  json status = json::object();
};

Delivery deliveryOf(const std::string& id, int retry = 3) {
  Delivery d;
  d.ns = "default";
  d.trigger = "t";
  d.target.function = "f";
  d.policy.retry = retry;
  d.policy.backoffDelay = 100ms;
  d.event = eventOf(id);
  d.firedAt = "2026-11-26T09:59:59Z";
  return d;
}

TEST(TriggerDispatcherTest, RetriesWithExponentialBackoffThenSucceeds) {
  testing::FakeClock clock;
  FakeTarget target;
  target.clock = &clock;
  FakeRecorder recorder;
  TriggerDispatcher dispatcher(target, recorder, clock);
  target.failures["e1"] = 2;
  const auto t0 = clock.now();
  ASSERT_TRUE(dispatcher.submit(deliveryOf("e1")).ok());
  EXPECT_EQ(dispatcher.runDue(), 1u);  // attempt 1 fails
  EXPECT_EQ(dispatcher.runDue(), 0u);  // the retry waits 100 ms
  EXPECT_EQ(dispatcher.nextDue(), t0 + 100ms);
  clock.advance(99ms);
  EXPECT_EQ(dispatcher.runDue(), 0u);
  clock.advance(1ms);
  EXPECT_EQ(dispatcher.runDue(), 1u);           // attempt 2 fails
  EXPECT_EQ(dispatcher.nextDue(), t0 + 300ms);  // then 200 ms
  clock.advance(200ms);
  EXPECT_EQ(dispatcher.runDue(), 1u);  // attempt 3 succeeds
  EXPECT_EQ(dispatcher.queued(), 0u);
  ASSERT_EQ(target.attempts.size(), 3u);
  EXPECT_EQ(target.attempts[2].second, t0 + 300ms);
  ASSERT_EQ(recorder.outcomes.size(), 1u);
  EXPECT_TRUE(recorder.outcomes[0].delivered);
  EXPECT_EQ(recorder.outcomes[0].attempts, 3);
  EXPECT_EQ(recorder.status["delivered"], 1);
  EXPECT_EQ(recorder.status["lastFired"], "2026-11-26T09:59:59Z");
  EXPECT_FALSE(recorder.status.contains("deadLetters"));
}

TEST(TriggerDispatcherTest, DeadLetterAfterTheLastRetry) {
  testing::FakeClock clock;
  FakeTarget target;
  FakeRecorder recorder;
  TriggerDispatcher dispatcher(target, recorder, clock);
  target.failures["bad"] = -1;
  ASSERT_TRUE(dispatcher.submit(deliveryOf("bad", 2)).ok());
  for (int i = 0; i < 10; ++i) {
    dispatcher.runDue();
    clock.advance(1s);
  }
  EXPECT_EQ(target.attempts.size(), 3u);  // the first and 2 retries
  ASSERT_EQ(recorder.outcomes.size(), 1u);
  EXPECT_FALSE(recorder.outcomes[0].delivered);
  EXPECT_EQ(recorder.status["failed"], 1);
  ASSERT_EQ(recorder.status["deadLetters"].size(), 1u);
  const json letter = recorder.status["deadLetters"][0];
  EXPECT_EQ(letter["id"], "bad");
  EXPECT_EQ(letter["attempts"], 3);
  EXPECT_EQ(letter["error"], "function answered 500: boom");
}

TEST(TriggerDispatcherTest, ForbidRefusesWhileOneIsInProgress) {
  testing::FakeClock clock;
  FakeTarget target;
  FakeRecorder recorder;
  TriggerDispatcher dispatcher(target, recorder, clock);
  target.failures["a"] = 1;
  ASSERT_TRUE(dispatcher.submit(deliveryOf("a"), true).ok());
  dispatcher.runDue();  // fails, waits for its retry
  EXPECT_EQ(dispatcher.submit(deliveryOf("b"), true).code(), 409);
  EXPECT_TRUE(dispatcher.submit(deliveryOf("c"), false).ok());  // Allow still queues
  clock.advance(1s);
  dispatcher.runDue();
  EXPECT_TRUE(dispatcher.submit(deliveryOf("d"), true).ok());  // done: free again
}

TEST(TriggerDispatcherTest, WorkersDeliverManyEventsAtOnce) {
  FakeTarget target;
  FakeRecorder recorder;
  TriggerDispatcher dispatcher(target, recorder);
  dispatcher.start(4);
  for (int i = 0; i < 200; ++i) {
    Delivery d = deliveryOf("w" + std::to_string(i));
    d.policy.backoffDelay = 1ms;
    if (i % 10 == 0) target.failures[d.event.id] = 1;
    ASSERT_TRUE(dispatcher.submit(std::move(d)).ok());
  }
  for (int i = 0; i < 500 && dispatcher.queued() > 0; ++i) std::this_thread::sleep_for(10ms);
  dispatcher.stop();
  EXPECT_EQ(recorder.status["delivered"], 200);
  EXPECT_EQ(target.attempts.size(), 220u);
}

TEST(TriggerDeliveryTest, DeadLettersAreBounded) {
  json status = json::object();
  for (int i = 0; i < 15; ++i) {
    DeliveryOutcome o;
    o.event = eventOf("x" + std::to_string(i));
    o.attempts = 4;
    o.error = "e";
    status = statusAfterDelivery(status, o, true, "now");
  }
  EXPECT_EQ(status["failed"], 15);
  ASSERT_EQ(status["deadLetters"].size(), kMaxDeadLetters);
  EXPECT_EQ(status["deadLetters"][0]["id"], "x5");
  EXPECT_EQ(status["deadLetters"][9]["id"], "x14");
  DeliveryOutcome none;
  none.event = eventOf("y");
  status = statusAfterDelivery(json::object(), none, false, "now");
  EXPECT_EQ(status["failed"], 1);
  EXPECT_FALSE(status.contains("deadLetters"));
}

SysSeconds at(const std::string& rfc3339) {
  return std::chrono::floor<std::chrono::seconds>(*parseRfc3339(rfc3339));
}

TEST(TriggerScheduleTest, CronFiresAtTheMinuteBoundaryOnce) {
  ScheduleSource s;
  s.cron = "* * * * *";
  // Created at 10:00:30: nothing due until 10:01:00.
  auto d = scheduleDecision(s, at("2026-11-26T10:00:30Z"), at("2026-11-26T10:00:59Z"));
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->fire);
  EXPECT_EQ(d->next, at("2026-11-26T10:01:00Z"));
  d = scheduleDecision(s, at("2026-11-26T10:00:30Z"), at("2026-11-26T10:01:00Z"));
  EXPECT_EQ(d->fire, at("2026-11-26T10:01:00Z"));
  EXPECT_EQ(d->next, at("2026-11-26T10:02:00Z"));
  // Once fired (last = 10:01), the same instant does not fire again.
  d = scheduleDecision(s, at("2026-11-26T10:01:00Z"), at("2026-11-26T10:01:20Z"));
  EXPECT_FALSE(d->fire);
  // Down for five minutes: the latest missed activation fires, once.
  d = scheduleDecision(s, at("2026-11-26T10:01:00Z"), at("2026-11-26T10:06:10Z"));
  EXPECT_EQ(d->fire, at("2026-11-26T10:06:00Z"));
  EXPECT_EQ(d->next, at("2026-11-26T10:07:00Z"));
}

TEST(TriggerScheduleTest, CronInATimeZone) {
  ScheduleSource s;
  s.cron = "30 9 * * *";
  s.timeZone = "Europe/Berlin";  // UTC+1 in November
  auto d = scheduleDecision(s, at("2026-11-26T00:00:00Z"), at("2026-11-26T08:29:00Z"));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_FALSE(d->fire);
  EXPECT_EQ(d->next, at("2026-11-26T08:30:00Z"));
}

TEST(TriggerScheduleTest, EveryExtension) {
  ScheduleSource s;
  s.cron = "@every 5s";
  s.every = std::chrono::seconds(5);
  auto d = scheduleDecision(s, at("2026-11-26T10:00:00Z"), at("2026-11-26T10:00:04Z"));
  EXPECT_FALSE(d->fire);
  EXPECT_EQ(d->next, at("2026-11-26T10:00:05Z"));
  d = scheduleDecision(s, at("2026-11-26T10:00:00Z"), at("2026-11-26T10:00:12Z"));
  EXPECT_EQ(d->fire, at("2026-11-26T10:00:10Z"));
  EXPECT_EQ(d->next, at("2026-11-26T10:00:15Z"));
}

TEST(TriggerFileWatcherTest, ScanSeesCreatedAndModifiedFiles) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("trigger-watch-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "old.jpg") << "x";
  std::ofstream(dir / "skip.txt") << "x";
  const auto before = snapshotDirectory(dir.string(), "*.jpg");
  EXPECT_EQ(before.size(), 1u);
  std::ofstream(dir / "sub" / "new.jpg") << "abc";
  std::ofstream(dir / "old.jpg", std::ios::app) << "more";
  std::ofstream(dir / "other.txt") << "x";
  const auto after = snapshotDirectory(dir.string(), "*.jpg");
  auto changes = diffSnapshots(before, after);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].path, "old.jpg");
  EXPECT_FALSE(changes[0].created);
  EXPECT_EQ(changes[1].path, "sub/new.jpg");
  EXPECT_TRUE(changes[1].created);
  EXPECT_EQ(changes[1].size, 3u);
  EXPECT_TRUE(diffSnapshots(after, after).empty());
  EXPECT_TRUE(snapshotDirectory((dir / "missing").string(), "*").empty());
  fs::remove_all(dir);
}

TEST(TriggerFileWatcherTest, WatcherDeploymentMountsTheClaim) {
  auto spec = parseTriggerSpec(trigger(
      {{"target", {{"function", "thumb"}}},
       {"file", {{"persistentVolumeClaim", "photos"}, {"path", "in"}, {"pattern", "*.jpg"}}}}));
  ASSERT_TRUE(spec.ok());
  const json d = controllers::fileWatcherDeployment(
      trigger({}), *spec->file, "minik8s/serverless-gateway:latest", "http://10.96.0.20:80");
  EXPECT_EQ(d["metadata"]["name"], "t-trigger-watch");
  EXPECT_EQ(d["metadata"]["ownerReferences"][0]["uid"], "u-1");
  const json& pod = d["spec"]["template"]["spec"];
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"], "photos");
  const json args = pod["containers"][0]["args"];
  EXPECT_EQ(args[0], "serverless-file-watcher");
  EXPECT_EQ(args[2], "/watch/in");
  EXPECT_EQ(args[4], "*.jpg");
  EXPECT_EQ(args[6], "created,modified");
  EXPECT_EQ(args[10], "http://10.96.0.20:80/trigger/default/t");
}

}  // namespace
}  // namespace minik8s::serverless
