// WorkflowController: the workflow engine of the control plane. For each Workflow
// (serverless.minik8s.io/v1) it checks the state machine (status: the Valid condition with
// every problem and its field path, the number of states); for each WorkflowExecution that has
// not finished it runs the engine (serverless/workflow_engine.h) on a thread of its own:
//   - status.phase Running and startTime, then one record per step in status.steps, each written
//     (a status PATCH) before the next step starts;
//   - at the end: phase Succeeded with output, or Failed with error and cause; completionTime
//     and duration; an Event.
// A controller manager that starts again (a crash, a new leader) finds the executions still
// Running and resumes them from their recorded steps: finished steps are not run again, the
// step in flight is (at least once). An execution of a missing or invalid Workflow fails with
// States.Runtime and says why. Deleting an execution stops its run.
// Thread-safe: sync runs on the workers; each execution has at most one runner.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"
#include "serverless/workflow.h"
#include "serverless/workflow_engine.h"
#include "serverless/workflow_invoker.h"

namespace minik8s::controllers {

struct WorkflowControllerOptions {
  int workers = 2;
  const client::Clock* clock = &client::RealClock::instance();
  client::EventRecorder* events = nullptr;  // source workflow-controller
  // How Tasks call Functions; null: through the serverless gateway (GatewayInvoker).
  serverless::TaskInvoker* invoker = nullptr;
  std::string gatewayUrl;  // for the GatewayInvoker; "" = its NodePort on a Ready node
  serverless::WorkflowClock* workflowClock = &serverless::RealWorkflowClock::instance();
};

class WorkflowController {
 public:
  // Registers handlers on the informers: construct before they start.
  WorkflowController(client::RestClient& rest, client::Informer& workflows,
                     client::Informer& executions, WorkflowControllerOptions options = {});
  ~WorkflowController();
  void start();
  void stop();

  // "workflow:NS/NAME" or "execution:NS/NAME".
  Status sync(const std::string& key);

 private:
  struct Runner {
    std::thread thread;
    std::atomic<bool> cancel{false};
    std::atomic<bool> done{false};
    std::string uid;
  };
  Status syncWorkflow(const std::string& ns, const std::string& name);
  Status syncExecution(const std::string& key);
  void runExecution(json execution, json workflowSpec, Runner& runner);
  Status patchStatus(const std::string& ns, const std::string& name, const json& status);
  void recordEvent(const json& execution, const std::string& type, const std::string& reason,
                   const std::string& message);
  void reapFinishedRunners();  // with mu_ held

  client::RestClient& rest_;
  client::Informer& workflows_;
  client::Informer& executions_;
  WorkflowControllerOptions options_;
  std::unique_ptr<serverless::GatewayInvoker> gatewayInvoker_;
  serverless::TaskInvoker* invoker_;
  client::WorkQueue queue_;
  WorkerPool workers_;
  std::mutex mu_;
  bool stopping_ = false;
  std::map<std::string, std::unique_ptr<Runner>> runners_;  // execution key -> its run
  std::set<std::string> finished_;  // uids of executions this process finished
};

}  // namespace minik8s::controllers
