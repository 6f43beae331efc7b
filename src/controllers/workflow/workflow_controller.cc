#include "controllers/workflow/workflow_controller.h"

#include <fmt/format.h>

#include <cstring>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "serverless/function.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::uidOf;
namespace sl = serverless;

namespace {

constexpr const char* kWorkflowPrefix = "workflow:";
constexpr const char* kExecutionPrefix = "execution:";

std::string formatSeconds(std::chrono::system_clock::duration d) {
  const double s = std::chrono::duration<double>(d).count();
  return fmt::format("{:.3f}s", s < 0 ? 0.0 : s);
}

// The status of a Workflow: the Valid condition (every problem, with its path) and the count of
// its top-level states.
json workflowStatus(const json& wf, const std::vector<Cause>& problems, const std::string& now) {
  std::string message;
  for (const auto& c : problems) {
    message += (message.empty() ? "" : "; ") + c.field + ": " + c.message;
  }
  const bool valid = problems.empty();
  json cond = {{"type", "Valid"},
               {"status", valid ? "True" : "False"},
               {"reason", valid ? "Valid" : "InvalidDefinition"},
               {"message", valid ? "the state machine can run" : message},
               {"lastTransitionTime", now}};
  for (const auto& c : valueAt(wf, "/status/conditions", json::array())) {
    if (c.value("type", "") == "Valid" && c.value("status", "") == cond["status"] &&
        c.value("message", "") == cond["message"]) {
      cond["lastTransitionTime"] = c.value("lastTransitionTime", now);
    }
  }
  const json states = valueAt(wf, "/spec/States", json::object());
  return {{"states", states.is_object() ? states.size() : 0},
          {"observedGeneration", valueAt(wf, "/metadata/generation", 0)},
          {"conditions", json::array({cond})}};
}

}  // namespace

WorkflowController::WorkflowController(client::RestClient& rest, client::Informer& workflows,
                                       client::Informer& executions,
                                       WorkflowControllerOptions options)
    : rest_(rest),
      workflows_(workflows),
      executions_(executions),
      options_(std::move(options)),
      invoker_(options_.invoker),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "workflow") {
  if (!invoker_) {
    gatewayInvoker_ = std::make_unique<sl::GatewayInvoker>(rest_, options_.gatewayUrl);
    invoker_ = gatewayInvoker_.get();
  }
  auto enqueueWorkflow = [this](const json& wf) {
    queue_.add(kWorkflowPrefix + client::objectKey(wf));
    // Executions waiting for this Workflow (created before it).
    for (const auto& x : executions_.list()) {
      if (namespaceOf(x) == namespaceOf(wf) &&
          valueAt(x, "/spec/workflowRef/name", std::string()) == nameOf(wf) &&
          !sl::executionFinished(x)) {
        queue_.add(kExecutionPrefix + client::objectKey(x));
      }
    }
  };
  workflows_.addHandlers({enqueueWorkflow,
                          [enqueueWorkflow](const json&, const json& wf) { enqueueWorkflow(wf); },
                          [](const json&) {}});
  auto enqueueExecution = [this](const json& x) {
    queue_.add(kExecutionPrefix + client::objectKey(x));
  };
  executions_.addHandlers({enqueueExecution,
                           [enqueueExecution](const json&, const json& x) { enqueueExecution(x); },
                           enqueueExecution});
}

WorkflowController::~WorkflowController() { stop(); }

void WorkflowController::start() {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  workers_.start(options_.workers);
}

void WorkflowController::stop() {
  workers_.stop();
  std::map<std::string, std::unique_ptr<Runner>> runners;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    runners.swap(runners_);
  }
  for (auto& [key, r] : runners) r->cancel = true;
  if (gatewayInvoker_) gatewayInvoker_->cancelAll();
  for (auto& [key, r] : runners) {
    if (r->thread.joinable()) r->thread.join();
  }
}

void WorkflowController::recordEvent(const json& execution, const std::string& type,
                                     const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  json involved = execution;
  involved["kind"] = "WorkflowExecution";
  involved["apiVersion"] = sl::kApiVersion;
  options_.events->record(involved, type, reason, message);
}

Status WorkflowController::sync(const std::string& key) {
  if (key.rfind(kWorkflowPrefix, 0) == 0) {
    const auto [ns, name] = client::splitObjectKey(key.substr(std::strlen(kWorkflowPrefix)));
    return syncWorkflow(ns, name);
  }
  if (key.rfind(kExecutionPrefix, 0) == 0) {
    return syncExecution(key.substr(std::strlen(kExecutionPrefix)));
  }
  return {};
}

Status WorkflowController::syncWorkflow(const std::string& ns, const std::string& name) {
  auto wf = workflows_.get(ns + "/" + name);
  if (!wf) return {};
  const auto problems = sl::validateStateMachine(wf->value("spec", json()), "spec");
  json status = workflowStatus(*wf, problems, formatRfc3339(Clock::now()));
  if (wf->value("status", json::object()) == status) return {};
  auto r = rest_.patch(sl::kWorkflows, ns, name, {{"status", status}}, "merge", "status");
  return r.ok() || r.status().code() == 404 ? Status() : r.status();
}

Status WorkflowController::patchStatus(const std::string& ns, const std::string& name,
                                       const json& status) {
  auto r = rest_.patch(sl::kWorkflowExecutions, ns, name, {{"status", status}}, "merge", "status");
  return r.ok() ? Status() : r.status();
}

void WorkflowController::reapFinishedRunners() {
  for (auto it = runners_.begin(); it != runners_.end();) {
    if (it->second->done.load()) {
      if (it->second->thread.joinable()) it->second->thread.join();
      it = runners_.erase(it);
    } else {
      ++it;
    }
  }
}

Status WorkflowController::syncExecution(const std::string& key) {
  const auto [ns, name] = client::splitObjectKey(key);
  auto cached = executions_.get(key);
  {
    std::lock_guard lock(mu_);
    reapFinishedRunners();
    auto it = runners_.find(key);
    if (it != runners_.end()) {
      if (!cached || uidOf(*cached) != it->second->uid) {
        it->second->cancel = true;  // deleted (or replaced): its run stops at its next step
      }
      return {};
    }
    if (!cached || stopping_ || finished_.count(uidOf(*cached))) return {};
  }
  if (sl::executionFinished(*cached)) return {};
  // The freshest status (the cache may lag behind the steps recorded so far).
  auto fresh = rest_.get(sl::kWorkflowExecutions, ns, name);
  if (!fresh.ok()) return fresh.status().code() == 404 ? Status() : fresh.status();
  if (sl::executionFinished(*fresh)) return {};
  const json& x = *fresh;
  const std::string now = formatRfc3339Micro(options_.workflowClock->now());

  auto failNow = [&](const std::string& cause) {
    recordEvent(x, "Warning", "Failed", cause);
    return patchStatus(ns, name,
                       {{"phase", "Failed"},
                        {"error", "States.Runtime"},
                        {"cause", cause},
                        {"startTime", valueAt(x, "/status/startTime", now)},
                        {"completionTime", now}});
  };
  const std::string wfName = valueAt(x, "/spec/workflowRef/name", std::string());
  auto wf = workflows_.get(ns + "/" + wfName);
  if (!wf) {
    auto got = rest_.get(sl::kWorkflows, ns, wfName);
    if (got.ok()) {
      wf = *got;
    } else if (got.status().code() != 404) {
      return got.status();
    }
  }
  if (!wf) {
    // A trigger may create the execution just before its Workflow: wait a little.
    auto created = parseRfc3339(valueAt(x, "/metadata/creationTimestamp", ""));
    if (created && Clock::now() - *created < std::chrono::seconds(10)) {
      queue_.addAfter(kExecutionPrefix + key, std::chrono::seconds(2));
      if (valueAt(x, "/status/phase", "") != "Pending") {
        return patchStatus(ns, name, {{"phase", "Pending"}});
      }
      return {};
    }
    return failNow("workflow \"" + wfName + "\" not found in namespace " + ns);
  }
  const json spec = wf->value("spec", json::object());
  const auto problems = sl::validateStateMachine(spec, "spec");
  if (!problems.empty()) {
    std::string message;
    for (const auto& c : problems)
      message += (message.empty() ? "" : "; ") + c.field + ": " + c.message;
    return failNow("workflow \"" + wfName + "\" is invalid: " + message);
  }

  std::lock_guard lock(mu_);
  if (stopping_ || runners_.count(key)) return {};
  auto runner = std::make_unique<Runner>();
  runner->uid = uidOf(x);
  Runner* r = runner.get();
  runners_[key] = std::move(runner);
  r->thread = std::thread([this, x, spec, r] { runExecution(x, spec, *r); });
  return {};
}

void WorkflowController::runExecution(json x, json spec, Runner& runner) {
  const std::string ns = namespaceOf(x), name = nameOf(x);
  const std::string key = ns + "/" + name;
  sl::WorkflowClock& clock = *options_.workflowClock;
  const bool resumed = valueAt(x, "/status/phase", "") == "Running";
  std::string startTime = valueAt(x, "/status/startTime", "");
  if (!resumed || startTime.empty()) {
    startTime = formatRfc3339Micro(clock.now());
    // Running before the first step (retried until stored: nothing runs unrecorded).
    while (!runner.cancel.load()) {
      Status s = patchStatus(ns, name, {{"phase", "Running"}, {"startTime", startTime}});
      if (s.ok()) break;
      if (s.code() == 404) runner.cancel = true;
      LOG_WARN("workflow: cannot mark {} Running: {}", key, s.toString());
      clock.sleepFor(std::chrono::seconds(1), runner.cancel);
    }
    recordEvent(x, "Normal", "Started",
                "running workflow " + valueAt(x, "/spec/workflowRef/name", std::string()));
  } else {
    LOG_INFO("workflow: resuming execution {} after {} recorded step(s)", key,
             valueAt(x, "/status/steps", json::array()).size());
    recordEvent(x, "Normal", "Resumed",
                fmt::format("resumed after {} recorded step(s)",
                            valueAt(x, "/status/steps", json::array()).size()));
  }
  std::vector<sl::StepRecord> recorded;
  for (const auto& s : valueAt(x, "/status/steps", json::array())) {
    recorded.push_back(sl::StepRecord::fromJson(s));
  }
  sl::ExecutionJournal journal(std::move(recorded), [&](const std::vector<sl::StepRecord>& steps) {
    json list = json::array();
    for (const auto& s : steps) list.push_back(s.toJson());
    return patchStatus(ns, name,
                       {{"steps", list},
                        {"stepCount", steps.size()},
                        {"currentStep", steps.empty() ? "" : steps.back().name}});
  });
  json input = valueAt(x, "/spec/input", json());
  if (input.is_null()) input = json::object();
  sl::WorkflowEngine engine(*invoker_, clock, ns);
  sl::ExecutionResult result;
  if (!runner.cancel.load()) result = engine.run(spec, input, journal, runner.cancel);
  if (runner.cancel.load() || result.phase == sl::ExecutionResult::Phase::kCancelled) {
    LOG_INFO("workflow: execution {} stopped (it resumes from its recorded steps)", key);
    runner.done = true;
    return;
  }
  const auto end = clock.now();
  json status = {{"completionTime", formatRfc3339Micro(end)}};
  if (auto start = parseRfc3339(startTime)) status["duration"] = formatSeconds(end - *start);
  if (result.phase == sl::ExecutionResult::Phase::kSucceeded) {
    status["phase"] = "Succeeded";
    status["output"] = result.output;
  } else {
    status["phase"] = "Failed";
    status["error"] = result.error;
    status["cause"] = result.cause;
  }
  while (!runner.cancel.load()) {
    Status s = patchStatus(ns, name, status);
    if (s.ok() || s.code() == 404) break;
    LOG_WARN("workflow: cannot record the end of {}: {}", key, s.toString());
    clock.sleepFor(std::chrono::seconds(1), runner.cancel);
  }
  if (result.phase == sl::ExecutionResult::Phase::kSucceeded) {
    recordEvent(x, "Normal", "Succeeded",
                "finished in " + status.value("duration", std::string("?")));
  } else {
    recordEvent(x, "Warning", "Failed", result.error + ": " + result.cause);
  }
  {
    std::lock_guard lock(mu_);
    finished_.insert(runner.uid);
  }
  runner.done = true;
  queue_.add(kExecutionPrefix + key);  // reaps this runner
}

}  // namespace minik8s::controllers
