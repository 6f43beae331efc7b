// The workflow controller against a real in-process API server with a scripted TaskInvoker: an
// execution runs to Succeeded with its steps in the status; a controller stopped while a Task is
// in flight and a new one started on the same API resume the execution, running the finished
// Task no more and the Task in flight once more; an invalid Workflow is marked Valid=False and
// its execution Failed with States.Runtime and the field path.
#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "client/informer.h"
#include "common/yaml_json.h"
#include "controllers/workflow/workflow_controller.h"
#include "eventually.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

namespace sl = serverless;
using std::chrono::milliseconds;

// "slow" blocks until released (or answers a failure once `interrupted` is set, as a call cut
// off by a stop does); every other function echoes its input with its name added.
class ScriptedInvoker : public sl::TaskInvoker {
 public:
  sl::TaskOutcome invoke(const std::string&, const std::string& function, const json& input,
                         milliseconds) override {
    std::unique_lock lock(mu_);
    ++calls_[function];
    cv_.notify_all();
    if (function == "slow") {
      cv_.wait(lock, [&] { return released_ || interrupted_; });
      if (!released_) return {false, nullptr, "States.TaskFailed", "connection closed"};
    }
    json out = input;
    out[function] = true;
    return {true, out, "", ""};
  }
  int calls(const std::string& f) {
    std::lock_guard lock(mu_);
    return calls_[f];
  }
  void interrupt() {
    std::lock_guard lock(mu_);
    interrupted_ = true;
    cv_.notify_all();
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, int> calls_;
  bool released_ = false, interrupted_ = false;
};

// One controller manager's worth: informers and the controller.
struct Engine {
  Engine(client::RestClient& rest, sl::TaskInvoker& invoker)
      : workflows(rest, sl::kWorkflows), executions(rest, sl::kWorkflowExecutions) {
    WorkflowControllerOptions o;
    o.invoker = &invoker;
    controller = std::make_unique<WorkflowController>(rest, workflows, executions, o);
    workflows.start();
    executions.start();
    workflows.waitForSync(std::chrono::seconds(5));
    executions.waitForSync(std::chrono::seconds(5));
    controller->start();
  }
  ~Engine() {
    controller->stop();
    workflows.stop();
    executions.stop();
  }
  client::Informer workflows, executions;
  std::unique_ptr<WorkflowController> controller;
};

class WorkflowControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.start().ok());
    rest_ = std::make_unique<client::RestClient>(api_.url());
    ASSERT_TRUE(sl::ensureWorkflowCrds(*rest_).ok());
  }
  void TearDown() override { api_.stop(); }

  void applyWorkflow(const std::string& name, const std::string& specYaml) {
    auto spec = parseYaml(specYaml);
    ASSERT_TRUE(spec.ok()) << spec.status().toString();
    json wf = {{"apiVersion", sl::kApiVersion},
               {"kind", "Workflow"},
               {"metadata", {{"name", name}, {"namespace", "default"}}},
               {"spec", *spec}};
    auto r = rest_->create(sl::kWorkflows, "default", wf);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  json execution(const std::string& name) {
    auto r = rest_->get(sl::kWorkflowExecutions, "default", name);
    return r.ok() ? *r : json::object();
  }
  std::string phase(const std::string& name) {
    return execution(name).value("/status/phase"_json_pointer, std::string());
  }

  testing::InProcessApiServer api_;
  std::unique_ptr<client::RestClient> rest_;
};

TEST_F(WorkflowControllerTest, RunsAnExecutionAndRecordsEveryStep) {
  ScriptedInvoker invoker;
  Engine engine(*rest_, invoker);
  applyWorkflow("two", R"(
StartAt: A
States:
  A: {Type: Task, Resource: a, Next: Check}
  Check: {Type: Choice, Choices: [{Variable: $.a, BooleanEquals: true, Next: B}]}
  B: {Type: Task, Resource: b, End: true}
)");
  ASSERT_TRUE(sl::startWorkflowExecution(*rest_, "default", "two", {{"in", 1}}, "run-1").ok());
  ASSERT_TRUE(testing::eventually([&] { return phase("run-1") == "Succeeded"; }))
      << execution("run-1").dump(2);
  const json x = execution("run-1");
  EXPECT_EQ(x["status"]["output"], json({{"in", 1}, {"a", true}, {"b", true}}));
  EXPECT_EQ(x["status"]["stepCount"], 3);
  EXPECT_EQ(x["status"]["steps"][1]["name"], "Check");
  EXPECT_EQ(x["status"]["steps"][1]["next"], "B");
  EXPECT_EQ(x["status"]["steps"][2]["phase"], "Succeeded");
  EXPECT_FALSE(x["status"].value("duration", "").empty());
  EXPECT_TRUE(testing::eventually([&] {
    auto wf = rest_->get(sl::kWorkflows, "default", "two");
    return wf.ok() && wf->value("/status/conditions/0/status"_json_pointer, "") == "True" &&
           wf->value("/status/states"_json_pointer, 0) == 3;
  }));
}

TEST_F(WorkflowControllerTest, ANewControllerResumesWithoutRunningFinishedSteps) {
  applyWorkflow("durable", R"(
StartAt: First
States:
  First: {Type: Task, Resource: first, Next: Slow}
  Slow: {Type: Task, Resource: slow, Next: Last}
  Last: {Type: Task, Resource: last, End: true}
)");
  ScriptedInvoker before;
  std::thread cutOff;
  {
    Engine engine(*rest_, before);
    ASSERT_TRUE(sl::startWorkflowExecution(*rest_, "default", "durable", json::object(), "d").ok());
    ASSERT_TRUE(testing::eventually([&] { return before.calls("slow") == 1; }));
    // Slow is in flight and recorded as Running; the control plane goes away.
    const json steps = execution("d").value("/status/steps"_json_pointer, json::array());
    ASSERT_EQ(steps.size(), 2u) << steps.dump();
    EXPECT_EQ(steps[0]["phase"], "Succeeded");
    EXPECT_EQ(steps[1]["phase"], "Running");
    // The stop (Engine's end) cancels the run, then the call in flight breaks off, as the
    // GatewayInvoker's connections are closed by a stop.
    cutOff = std::thread([&] {
      std::this_thread::sleep_for(milliseconds(200));
      before.interrupt();
    });
  }
  cutOff.join();
  EXPECT_EQ(phase("d"), "Running");
  ScriptedInvoker after;
  after.release();
  Engine engine(*rest_, after);
  ASSERT_TRUE(testing::eventually([&] { return phase("d") == "Succeeded"; }))
      << execution("d").dump(2);
  EXPECT_EQ(after.calls("first"), 0);  // finished before the stop: not run again
  EXPECT_EQ(after.calls("slow"), 1);   // in flight at the stop: run again
  EXPECT_EQ(after.calls("last"), 1);
  EXPECT_EQ(execution("d")["status"]["output"],
            json({{"first", true}, {"slow", true}, {"last", true}}));
  EXPECT_EQ(execution("d")["status"]["stepCount"], 3);
}

TEST_F(WorkflowControllerTest, AnInvalidWorkflowFailsItsExecutionsWithTheFieldPath) {
  ScriptedInvoker invoker;
  Engine engine(*rest_, invoker);
  applyWorkflow("broken", R"(
StartAt: A
States:
  A: {Type: Pass, Next: Nowhere}
)");
  ASSERT_TRUE(testing::eventually([&] {
    auto wf = rest_->get(sl::kWorkflows, "default", "broken");
    return wf.ok() && wf->value("/status/conditions/0/status"_json_pointer, "") == "False";
  }));
  auto wf = rest_->get(sl::kWorkflows, "default", "broken");
  EXPECT_NE(wf->value("/status/conditions/0/message"_json_pointer, "").find("spec.States[A].Next"),
            std::string::npos);
  ASSERT_TRUE(sl::startWorkflowExecution(*rest_, "default", "broken", json::object(), "b").ok());
  ASSERT_TRUE(testing::eventually([&] { return phase("b") == "Failed"; }));
  EXPECT_EQ(execution("b")["status"]["error"], "States.Runtime");
  EXPECT_NE(execution("b")["status"].value("cause", "").find("spec.States[A].Next"),
            std::string::npos);
}

}  // namespace
}  // namespace minik8s::controllers
