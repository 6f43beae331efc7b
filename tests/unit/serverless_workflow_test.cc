// The workflow engine with fakes (a scripted TaskInvoker, a clock that records sleeps instead of
// sleeping, an in-memory journal): paths, Choice operators and nesting, Parallel and Map result
// arrays, Retry back-off, Catch routing, Fail, resume from recorded steps (no finished step runs
// again, the Wait keeps its start), and the definition checks with their field paths.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>

#include "common/time_util.h"
#include "common/yaml_json.h"
#include "serverless/workflow.h"
#include "serverless/workflow_engine.h"
#include "serverless/workflow_invoker.h"

namespace minik8s::serverless {
namespace {

using std::chrono::milliseconds;

json yaml(const std::string& text) {
  auto parsed = parseYaml(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().toString();
  return parsed.ok() ? *parsed : json();
}

// Functions as C++ lambdas; counts calls per function.
class FakeInvoker : public TaskInvoker {
 public:
  using Handler = std::function<TaskOutcome(const json&)>;
  void on(const std::string& fn, Handler h) { handlers_[fn] = std::move(h); }
  TaskOutcome invoke(const std::string& ns, const std::string& function, const json& input,
                     milliseconds) override {
    std::lock_guard lock(mu_);
    ++calls_[function];
    inputs_[function].push_back(input);
    EXPECT_EQ(ns, "default");
    auto it = handlers_.find(function);
    if (it == handlers_.end()) return {false, nullptr, "States.TaskFailed", "HTTP 404"};
    return it->second(input);
  }
  int calls(const std::string& fn) {
    std::lock_guard lock(mu_);
    return calls_[fn];
  }
  std::vector<json> inputs(const std::string& fn) {
    std::lock_guard lock(mu_);
    return inputs_[fn];
  }

 private:
  std::mutex mu_;
  std::map<std::string, Handler> handlers_;
  std::map<std::string, int> calls_;
  std::map<std::string, std::vector<json>> inputs_;
};

class FakeWorkflowClock : public WorkflowClock {
 public:
  std::chrono::system_clock::time_point now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  bool sleepFor(milliseconds d, const std::atomic<bool>& cancel) override {
    std::lock_guard lock(mu_);
    sleeps_.push_back(d);
    now_ += d;
    return !cancel.load();
  }
  std::vector<milliseconds> sleeps() {
    std::lock_guard lock(mu_);
    return sleeps_;
  }
  void advance(milliseconds d) {
    std::lock_guard lock(mu_);
    now_ += d;
  }

 private:
  mutable std::mutex mu_;
  std::chrono::system_clock::time_point now_ =
      std::chrono::system_clock::from_time_t(1'800'000'000);
  std::vector<milliseconds> sleeps_;
};

TaskOutcome ok(json v) { return {true, std::move(v), "", ""}; }
TaskOutcome raised(const std::string& type, const std::string& message) {
  return {false, nullptr, type, message};
}

class WorkflowEngineTest : public ::testing::Test {
 protected:
  ExecutionResult run(const std::string& machineYaml, const json& input,
                      std::vector<StepRecord> recorded = {}) {
    journal = std::make_unique<ExecutionJournal>(std::move(recorded),
                                                 [this](const std::vector<StepRecord>& steps) {
                                                   persisted.push_back(steps);
                                                   return Status();
                                                 });
    WorkflowEngine engine(invoker, clock, "default");
    return engine.run(yaml(machineYaml), input, *journal, cancel);
  }
  std::optional<StepRecord> step(const std::string& name) { return journal->find(name); }

  FakeInvoker invoker;
  FakeWorkflowClock clock;
  std::atomic<bool> cancel{false};
  std::unique_ptr<ExecutionJournal> journal;
  std::vector<std::vector<StepRecord>> persisted;
};

constexpr const char* kSequence = R"(
StartAt: Add
States:
  Add: {Type: Task, Resource: add, InputPath: $.numbers, ResultPath: $.sum, Next: Square}
  Square: {Type: Task, Resource: square, InputPath: $.sum, ResultPath: $.squared, OutputPath: $.squared, End: true}
)";

TEST_F(WorkflowEngineTest, SequencePassesEachOutputToTheNextWithPaths) {
  invoker.on("add", [](const json& in) { return ok(in[0].get<int>() + in[1].get<int>()); });
  invoker.on("square", [](const json& in) { return ok(in.get<int>() * in.get<int>()); });
  auto r = run(kSequence, {{"numbers", {2, 3}}});
  ASSERT_EQ(r.phase, ExecutionResult::Phase::kSucceeded) << r.error << r.cause;
  EXPECT_EQ(r.output, 25);
  EXPECT_EQ(invoker.inputs("add")[0], json({2, 3}));                        // InputPath
  EXPECT_EQ(step("Add")->output, json({{"numbers", {2, 3}}, {"sum", 5}}));  // ResultPath
  EXPECT_EQ(step("Add")->next, "Square");
  EXPECT_EQ(step("Square")->phase, "Succeeded");
  // Each step is recorded Running before it runs, then finished: 4 writes for 2 Tasks.
  ASSERT_EQ(persisted.size(), 4u);
  EXPECT_EQ(persisted[0].back().phase, "Running");
  EXPECT_EQ(persisted[1].back().phase, "Succeeded");
}

TEST_F(WorkflowEngineTest, ParametersResultSelectorAndNullPaths) {
  invoker.on("f", [](const json& in) { return ok({{"got", in}, {"extra", 1}}); });
  auto r = run(R"(
StartAt: T
States:
  T:
    Type: Task
    Resource: f
    Parameters: {fixed: 7, "name.$": $.who, nested: {"first.$": "$.list[0]"}}
    ResultSelector: {"echo.$": $.got}
    ResultPath: $.out
    Next: Drop
  Drop: {Type: Pass, ResultPath: null, Result: ignored, Next: Keep}
  Keep: {Type: Pass, Parameters: {"w.$": $.who}, End: true}
)",
               {{"who", "ann"}, {"list", {"a", "b"}}});
  ASSERT_EQ(r.phase, ExecutionResult::Phase::kSucceeded) << r.cause;
  EXPECT_EQ(invoker.inputs("f")[0],
            json({{"fixed", 7}, {"name", "ann"}, {"nested", {{"first", "a"}}}}));
  EXPECT_EQ(step("T")->output["out"],
            json({{"echo", {{"fixed", 7}, {"name", "ann"}, {"nested", {{"first", "a"}}}}}}));
  EXPECT_EQ(step("Drop")->output, step("T")->output);  // ResultPath null keeps the input
  EXPECT_EQ(r.output, json({{"w", "ann"}}));
}

TEST_F(WorkflowEngineTest, AMissingPathIsAStatesRuntimeFailureThatNoCatchTakes) {
  auto r = run(R"(
StartAt: P
States:
  P: {Type: Pass, InputPath: $.absent, End: true}
)",
               json::object());
  EXPECT_EQ(r.phase, ExecutionResult::Phase::kFailed);
  EXPECT_EQ(r.error, "States.Runtime");
  EXPECT_NE(r.cause.find("$.absent"), std::string::npos);
  EXPECT_FALSE(workflow::errorMatches(json({"States.ALL"}), "States.Runtime"));
}

struct RuleCase {
  const char* rule;
  json input;
  bool matches;
};

TEST(WorkflowChoiceTest, Operators) {
  const std::vector<RuleCase> cases = {
      {"{Variable: $.s, StringEquals: abc}", {{"s", "abc"}}, true},
      {"{Variable: $.s, StringEquals: abc}", {{"s", "abd"}}, false},
      {"{Variable: $.s, StringEquals: '1'}", {{"s", 1}}, false},  // types must agree
      {"{Variable: $.s, StringLessThan: b}", {{"s", "a"}}, true},
      {"{Variable: $.s, StringGreaterThanEquals: b}", {{"s", "b"}}, true},
      {"{Variable: $.s, StringMatches: 'log-*.txt'}", {{"s", "log-2024.txt"}}, true},
      {"{Variable: $.s, StringMatches: 'log-*.txt'}", {{"s", "log-2024.csv"}}, false},
      {"{Variable: $.s, StringMatches: '*'}", {{"s", ""}}, true},
      {"{Variable: $.s, StringMatches: 'a\\*b'}", {{"s", "a*b"}}, true},
      {"{Variable: $.s, StringMatches: 'a\\*b'}", {{"s", "axb"}}, false},
      {"{Variable: $.n, NumericEquals: 3}", {{"n", 3.0}}, true},
      {"{Variable: $.n, NumericLessThan: 3}", {{"n", 2.5}}, true},
      {"{Variable: $.n, NumericLessThan: 3}", {{"n", 3}}, false},
      {"{Variable: $.n, NumericLessThanEquals: 3}", {{"n", 3}}, true},
      {"{Variable: $.n, NumericGreaterThan: 3}", {{"n", 4}}, true},
      {"{Variable: $.n, NumericGreaterThanEquals: 3}", {{"n", 2}}, false},
      {"{Variable: $.n, NumericGreaterThan: 3}", {{"n", "4"}}, false},
      {"{Variable: $.n, NumericLessThanPath: $.limit}", {{"n", 1}, {"limit", 2}}, true},
      {"{Variable: $.b, BooleanEquals: true}", {{"b", true}}, true},
      {"{Variable: $.b, BooleanEquals: true}", {{"b", "true"}}, false},
      {"{Variable: $.t, TimestampLessThan: '2026-01-01T00:00:00Z'}",
       {{"t", "2025-12-31T23:59:59Z"}},
       true},
      {"{Variable: $.x, IsPresent: false}", json::object(), true},
      {"{Variable: $.x, IsPresent: true}", json::object(), false},
      {"{Variable: $.x, StringEquals: a}", json::object(), false},  // absent: no match
      {"{Variable: $.x, IsNull: true}", {{"x", nullptr}}, true},
      {"{Variable: $.x, IsNumeric: true}", {{"x", 1}}, true},
      {"{Variable: $.x, IsString: false}", {{"x", 1}}, true},
      {"{Variable: '$.a[1]', NumericEquals: 20}", {{"a", {10, 20}}}, true},
      {"{And: [{Variable: $.n, NumericGreaterThan: 1}, {Variable: $.n, NumericLessThan: 5}]}",
       {{"n", 3}},
       true},
      {"{And: [{Variable: $.n, NumericGreaterThan: 1}, {Variable: $.n, NumericLessThan: 5}]}",
       {{"n", 7}},
       false},
      {"{Or: [{Variable: $.s, StringEquals: a}, {Variable: $.s, StringEquals: b}]}",
       {{"s", "b"}},
       true},
      {"{Not: {Variable: $.s, StringEquals: a}}", {{"s", "b"}}, true},
      {"{Not: {Or: [{Variable: $.s, StringEquals: a}, {And: [{Variable: $.n, IsPresent: true}, "
       "{Variable: $.n, NumericEquals: 1}]}]}}",
       {{"s", "c"}, {"n", 1}},
       false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(workflow::evaluateRule(yaml(c.rule), c.input), c.matches)
        << c.rule << " on " << c.input.dump();
  }
}

constexpr const char* kChoice = R"(
StartAt: Route
States:
  Route:
    Type: Choice
    Choices:
    - {Variable: $.size, NumericGreaterThan: 100, Next: Big}
    - {Not: {Variable: $.name, StringMatches: 'tmp-*'}, Next: Keep}
    Default: Drop
  Big: {Type: Pass, Result: big, End: true}
  Keep: {Type: Pass, Result: keep, End: true}
  Drop: {Type: Fail, Error: Dropped, Cause: temporary file}
)";

TEST_F(WorkflowEngineTest, ChoiceBranchesOnTheInputAndDefaultsToAFailState) {
  EXPECT_EQ(run(kChoice, {{"size", 500}, {"name", "tmp-1"}}).output, "big");
  EXPECT_EQ(step("Route")->next, "Big");
  EXPECT_EQ(run(kChoice, {{"size", 5}, {"name", "data"}}).output, "keep");
  auto r = run(kChoice, {{"size", 5}, {"name", "tmp-2"}});
  EXPECT_EQ(r.phase, ExecutionResult::Phase::kFailed);
  EXPECT_EQ(r.error, "Dropped");
  EXPECT_EQ(r.cause, "temporary file");
  EXPECT_EQ(step("Drop")->phase, "Failed");
}

TEST_F(WorkflowEngineTest, ChoiceWithoutAMatchOrDefaultFails) {
  auto r = run(R"(
StartAt: C
States:
  C: {Type: Choice, Choices: [{Variable: $.a, StringEquals: x, Next: E}]}
  E: {Type: Succeed}
)",
               {{"a", "y"}});
  EXPECT_EQ(r.error, "States.NoChoiceMatched");
}

TEST_F(WorkflowEngineTest, ParallelAndMapGiveArraysInOrder) {
  invoker.on("inc", [](const json& in) { return ok(in.get<int>() + 1); });
  invoker.on("neg", [](const json& in) { return ok(-in.get<int>()); });
  auto r2 = run(R"(
StartAt: Both
States:
  Both:
    Type: Parallel
    Branches:
    - {StartAt: I, States: {I: {Type: Task, Resource: inc, End: true}}}
    - {StartAt: N, States: {N: {Type: Task, Resource: neg, End: true}}}
    End: true
)",
                7);
  ASSERT_EQ(r2.phase, ExecutionResult::Phase::kSucceeded) << r2.cause;
  EXPECT_EQ(r2.output, json({8, -7}));
  EXPECT_EQ(step("Both/0/I")->output, 8);
  EXPECT_EQ(step("Both/1/N")->output, -7);

  auto r3 = run(R"(
StartAt: Each
States:
  Each:
    Type: Map
    ItemsPath: $.list
    MaxConcurrency: 2
    ItemSelector: {"v.$": $$.Map.Item.Value, "i.$": $$.Map.Item.Index}
    ItemProcessor:
      StartAt: Pick
      States:
        Pick: {Type: Pass, InputPath: $.v, Next: Inc}
        Inc: {Type: Task, Resource: inc, End: true}
    ResultPath: $.mapped
    End: true
)",
                {{"list", {10, 20, 30, 40, 50}}});
  ASSERT_EQ(r3.phase, ExecutionResult::Phase::kSucceeded) << r3.cause;
  EXPECT_EQ(r3.output["mapped"], json({11, 21, 31, 41, 51}));
  EXPECT_EQ(step("Each/3/Pick")->output, 40);
  EXPECT_EQ(invoker.calls("inc"), 1 + 5);
}

TEST_F(WorkflowEngineTest, ABranchFailureFailsTheParallelWhoseCatchTakesIt) {
  invoker.on("bad", [](const json&) { return raised("KeyError", "'x'"); });
  invoker.on("good", [](const json&) { return ok(1); });
  auto r = run(R"(
StartAt: Both
States:
  Both:
    Type: Parallel
    Branches:
    - {StartAt: G, States: {G: {Type: Task, Resource: good, End: true}}}
    - {StartAt: B, States: {B: {Type: Task, Resource: bad, End: true}}}
    Catch: [{ErrorEquals: [KeyError], Next: Handled, ResultPath: $.err}]
    End: true
  Handled: {Type: Pass, End: true}
)",
               {{"in", 1}});
  ASSERT_EQ(r.phase, ExecutionResult::Phase::kSucceeded) << r.cause;
  EXPECT_EQ(r.output, json({{"in", 1}, {"err", {{"Error", "KeyError"}, {"Cause", "'x'"}}}}));
  EXPECT_EQ(step("Both")->phase, "Caught");
  EXPECT_EQ(step("Both/1/B")->phase, "Failed");
}

constexpr const char* kRetry = R"(
StartAt: Flaky
States:
  Flaky:
    Type: Task
    Resource: flaky
    Retry:
    - {ErrorEquals: [States.Timeout], MaxAttempts: 0}
    - {ErrorEquals: [ConnectionError, States.TaskFailed], IntervalSeconds: 2, BackoffRate: 3, MaxAttempts: 3, MaxDelaySeconds: 10}
    Catch:
    - {ErrorEquals: [ValueError], Next: Invalid}
    - {ErrorEquals: [States.ALL], Next: Other, ResultPath: $.error}
    End: true
  Invalid: {Type: Pass, Result: invalid, End: true}
  Other: {Type: Pass, End: true}
)";

TEST_F(WorkflowEngineTest, RetryBacksOffThenSucceeds) {
  int calls = 0;
  invoker.on("flaky", [&](const json&) {
    return ++calls < 4 ? raised("ConnectionError", "reset") : ok("done");
  });
  auto r = run(kRetry, json::object());
  ASSERT_EQ(r.phase, ExecutionResult::Phase::kSucceeded);
  EXPECT_EQ(r.output, "done");
  // 2 s, 6 s, then 18 s capped at MaxDelaySeconds 10.
  EXPECT_EQ(clock.sleeps(), (std::vector<milliseconds>{milliseconds(2000), milliseconds(6000),
                                                       milliseconds(10000)}));
  EXPECT_EQ(step("Flaky")->attempts, 4);
  EXPECT_EQ(step("Flaky")->durationMs, 18000);
}

TEST_F(WorkflowEngineTest, RetriesRunOutThenCatchRoutesByErrorName) {
  invoker.on("flaky", [](const json&) { return raised("ConnectionError", "reset"); });
  auto r = run(kRetry, {{"a", 1}});
  ASSERT_EQ(r.phase, ExecutionResult::Phase::kSucceeded);
  EXPECT_EQ(invoker.calls("flaky"), 4);  // 1 + MaxAttempts 3
  EXPECT_EQ(r.output,
            json({{"a", 1}, {"error", {{"Error", "ConnectionError"}, {"Cause", "reset"}}}}));
  EXPECT_EQ(step("Flaky")->phase, "Caught");
  EXPECT_EQ(step("Flaky")->next, "Other");

  invoker.on("flaky", [](const json&) { return raised("ValueError", "no"); });
  r = run(kRetry, json::object());
  EXPECT_EQ(r.output, "invalid");  // not retried: no retrier names ValueError or TaskFailed...
  // ...except States.TaskFailed, which matches any error but States.Timeout: it was retried.
  EXPECT_EQ(step("Flaky")->attempts, 4);

  invoker.on("flaky", [](const json&) { return raised("States.Timeout", "slow"); });
  r = run(kRetry, json::object());
  EXPECT_EQ(step("Flaky")->attempts, 1);  // MaxAttempts 0 for timeouts
  EXPECT_EQ(step("Flaky")->next, "Other");
}

TEST_F(WorkflowEngineTest, AnUncaughtTaskErrorFailsTheExecution) {
  invoker.on("boom", [](const json&) { return raised("ZeroDivisionError", "division by zero"); });
  auto r = run(R"(
StartAt: T
States:
  T: {Type: Task, Resource: boom, Catch: [{ErrorEquals: [KeyError], Next: T}], End: true}
)",
               json::object());
  EXPECT_EQ(r.phase, ExecutionResult::Phase::kFailed);
  EXPECT_EQ(r.error, "ZeroDivisionError");
  EXPECT_EQ(r.cause, "division by zero");
}

TEST_F(WorkflowEngineTest, TheWorkflowTimeoutCutsAWaitShort) {
  auto r = run(R"(
TimeoutSeconds: 5
StartAt: Pause
States:
  Pause: {Type: Wait, Seconds: 60, Next: Never}
  Never: {Type: Pass, End: true}
)",
               json::object());
  EXPECT_EQ(r.phase, ExecutionResult::Phase::kFailed);
  EXPECT_EQ(r.error, "States.Timeout");
  ASSERT_EQ(clock.sleeps().size(), 1u);
  EXPECT_NEAR(clock.sleeps()[0].count(), 5000, 2);
  EXPECT_EQ(step("Pause")->phase, "Failed");
  EXPECT_FALSE(step("Never").has_value());
}

TEST(WorkflowRetryTest, DelayDefaults) {
  EXPECT_EQ(workflow::retryDelay(json::object(), 1), milliseconds(1000));
  EXPECT_EQ(workflow::retryDelay(json::object(), 3), milliseconds(4000));  // x2 each time
  EXPECT_EQ(workflow::retryDelay(json({{"IntervalSeconds", 0.5}, {"BackoffRate", 1.0}}), 5),
            milliseconds(500));
}

constexpr const char* kDurable = R"(
StartAt: One
States:
  One: {Type: Task, Resource: count, ResultPath: $.one, Next: Pause}
  Pause: {Type: Wait, Seconds: 10, Next: Two}
  Two: {Type: Task, Resource: count, ResultPath: $.two, Next: Loop}
  Loop:
    Type: Choice
    Choices: [{Variable: $.two, NumericLessThan: 3, Next: Two}]
    Default: Done
  Done: {Type: Succeed}
)";

TEST_F(WorkflowEngineTest, ResumeFromRecordedStepsRunsNoFinishedStepAgain) {
  int counter = 0;
  invoker.on("count", [&](const json&) { return ok(++counter); });
  auto first = run(kDurable, json::object());
  ASSERT_EQ(first.phase, ExecutionResult::Phase::kSucceeded) << first.cause;
  EXPECT_EQ(first.output, json({{"one", 1}, {"two", 3}}));
  EXPECT_TRUE(step("Two#2").has_value());  // a second visit has its own record
  EXPECT_EQ(invoker.calls("count"), 3);

  // A crash while Pause was waiting: the records persisted when Pause started.
  std::vector<StepRecord> atCrash;
  for (const auto& list : persisted) {
    if (!list.empty() && list.back().name == "Pause" && list.back().phase == "Running") {
      atCrash = list;
      break;
    }
  }
  ASSERT_EQ(atCrash.size(), 2u);
  EXPECT_EQ(atCrash[0].phase, "Succeeded");
  // The engine comes back 4 s into the 10 s wait.
  clock.advance(milliseconds(4000) - std::chrono::duration_cast<milliseconds>(
                                         clock.now() - *parseRfc3339(atCrash[1].startTime)));
  int counter2 = 0;
  invoker.on("count", [&](const json&) { return ok(++counter2); });
  auto before = clock.sleeps().size();
  auto resumed = run(kDurable, json::object(), atCrash);
  ASSERT_EQ(resumed.phase, ExecutionResult::Phase::kSucceeded);
  EXPECT_EQ(counter2, 3);               // Two, Two#2, Two#3 only
  EXPECT_EQ(resumed.output["one"], 1);  // One's recorded output, not run again
  ASSERT_EQ(clock.sleeps().size(), before + 1);
  EXPECT_NEAR(clock.sleeps().back().count(), 6000, 2);  // what was left of the Wait

  // A run whose every step is recorded calls nothing.
  const auto all = journal->steps();
  counter2 = 0;
  auto replay = run(kDurable, json::object(), all);
  EXPECT_EQ(counter2, 0);
  EXPECT_EQ(replay.output, resumed.output);
}

TEST_F(WorkflowEngineTest, ATaskInFlightAtTheCrashRunsAgain) {
  invoker.on("count", [](const json&) { return ok(1); });
  StepRecord inFlight;
  inFlight.name = inFlight.state = "One";
  inFlight.type = "Task";
  inFlight.phase = "Running";
  inFlight.startTime = "2027-01-15T08:00:00.000000Z";
  auto r = run(R"(
StartAt: One
States:
  One: {Type: Task, Resource: count, End: true}
)",
               json::object(), {inFlight});
  EXPECT_EQ(r.phase, ExecutionResult::Phase::kSucceeded);
  EXPECT_EQ(invoker.calls("count"), 1);
  EXPECT_EQ(step("One")->startTime, inFlight.startTime);  // the same step, not a new one
}

TEST_F(WorkflowEngineTest, CancelStopsWithoutRecordingAnEnd) {
  invoker.on("count", [this](const json&) {
    cancel = true;
    return ok(1);
  });
  auto r = run(R"(
StartAt: One
States:
  One: {Type: Task, Resource: count, Next: Two}
  Two: {Type: Task, Resource: count, End: true}
)",
               json::object());
  EXPECT_EQ(r.phase, ExecutionResult::Phase::kCancelled);
  EXPECT_EQ(invoker.calls("count"), 1);
}

TEST(WorkflowValidationTest, ProblemsWithTheirFieldPaths) {
  auto causes = validateStateMachine(yaml(R"(
StartAt: Missing
States:
  A: {Type: Task, Next: Nowhere}
  B: {Type: Pass}
  C: {Type: Choice, Choices: [{Variable: $.x, NumericEquals: "1", Next: A}, {Variable: x, StringEquals: a}], Default: Gone}
  D: {Type: Wait, Seconds: 1, Timestamp: "2026-01-01T00:00:00Z", End: true}
  E: {Type: Map, End: true}
  F: {Type: Parallel, Branches: [{StartAt: X, States: {X: {Type: Pass, Next: Y}}}], End: true}
  G: {Type: Pass, Retry: [], End: true}
  H: {Type: Task, Resource: f, Catch: [{ErrorEquals: [], Next: Z}], End: true}
  I: {Type: Dance, End: true}
  J: {Type: Succeed, Next: A}
)"),
                                     "spec");
  std::set<std::string> fields;
  for (const auto& c : causes) fields.insert(c.field + " | " + c.message);
  auto has = [&](const std::string& field, const std::string& text) {
    for (const auto& f : fields) {
      if (f.rfind(field + " | ", 0) == 0 && f.find(text) != std::string::npos) return true;
    }
    ADD_FAILURE() << "no cause " << field << " with '" << text << "' in:\n"
                  << [&] {
                       std::string all;
                       for (const auto& f : fields) all += f + "\n";
                       return all;
                     }();
    return false;
  };
  has("spec.StartAt", "Not found: \"Missing\"");
  has("spec.States[A].Resource", "Required value");
  has("spec.States[A].Next", "Not found: \"Nowhere\"");
  has("spec.States[B].Next", "Next, or End: true");
  has("spec.States[C].Choices[0].NumericEquals", "must be a number");
  has("spec.States[C].Choices[1].Variable", "Required value");
  has("spec.States[C].Choices[1].Next", "Required value");
  has("spec.States[C].Default", "Not found: \"Gone\"");
  has("spec.States[D]", "exactly one of Seconds");
  has("spec.States[E].ItemProcessor", "Required value");
  has("spec.States[F].Branches[0].States[X].Next", "Not found: \"Y\"");
  has("spec.States[G].Retry", "for Task, Parallel and Map");
  has("spec.States[H].Catch[0].ErrorEquals", "Required value");
  has("spec.States[H].Catch[0].Next", "Not found: \"Z\"");
  has("spec.States[I].Type", "Unsupported value: \"Dance\"");
  has("spec.States[J]", "has no Next or End");

  EXPECT_TRUE(validateStateMachine(yaml(kDurable), "spec").empty());
  EXPECT_TRUE(validateStateMachine(yaml(kRetry), "spec").empty());
  EXPECT_TRUE(validateStateMachine(yaml(kChoice), "spec").empty());
}

TEST(WorkflowSeamTest, AnExecutionNamesItsWorkflowAndInput) {
  json x = workflowExecution("apps", "pipeline", {{"n", 1}});
  EXPECT_EQ(x["kind"], "WorkflowExecution");
  EXPECT_EQ(x["metadata"]["generateName"], "pipeline-");
  EXPECT_EQ(x["metadata"]["labels"][kWorkflowLabel], "pipeline");
  EXPECT_EQ(x["spec"]["workflowRef"]["name"], "pipeline");
  EXPECT_EQ(x["spec"]["input"]["n"], 1);
  EXPECT_EQ(workflowExecution("apps", "p", 1, "fixed")["metadata"]["name"], "fixed");
  EXPECT_EQ(workflowExecutionCrd()["spec"]["names"]["shortNames"][0], "wfx");
  EXPECT_EQ(workflowCrd()["metadata"]["name"], "workflows.serverless.minik8s.io");
}

TEST(WorkflowInvokerTest, GatewayAnswersBecomeTaskOutcomes) {
  http::Response r;
  r.status = 200;
  r.body = R"({"a": 1})";
  auto o = taskOutcomeFromResponse(r);
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(o.output, json({{"a", 1}}));
  r.status = 500;
  r.body = R"({"error": "bad input", "type": "ValueError"})";
  o = taskOutcomeFromResponse(r);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.error, "ValueError");
  EXPECT_EQ(o.cause, "bad input");
  r.status = 504;
  r.body = "timed out";
  EXPECT_EQ(taskOutcomeFromResponse(r).error, "States.Timeout");
  r.status = 404;
  r.body = "function default/x not found";
  o = taskOutcomeFromResponse(r);
  EXPECT_EQ(o.error, "States.TaskFailed");
  EXPECT_EQ(o.cause, "HTTP 404: function default/x not found");
  EXPECT_EQ(taskOutcomeFromResponse(Status::Unavailable("cannot connect")).error,
            "States.TaskFailed");
}

}  // namespace
}  // namespace minik8s::serverless
