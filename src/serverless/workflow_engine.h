// WorkflowEngine: runs one execution of a state machine in the shape of the Amazon States
// Language (see workflow.h and docs/serverless.md), durably.
//
// Durability is a journal of steps (ExecutionJournal): every state the engine enters gets a
// record named by its place in the run ("Check", "Fanout/1/Double", "Loop#2" for a second
// visit). A finished record holds the state's output and the Next it took, and it is persisted
// (ExecutionJournal's persist callback: the controller writes the WorkflowExecution's status)
// before the engine moves on. Running the same execution again with the journal of an earlier
// run replays: a finished step is not run again, its recorded output and Next are taken; a
// step recorded as Running (in flight when the engine stopped) runs again (at least once for the
// step in flight, exactly once for finished ones). A Wait recorded as Running waits only what is
// left of its time.
//
// What the engine needs from outside comes through interfaces: TaskInvoker (call a Function),
// WorkflowClock (wall time and sleeping, cancellable). Parallel branches and Map items run on
// threads of their own; the journal and the invoker must be thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::serverless {

// What a Task's call of a Function gave: its JSON answer, or an error name and cause
// ("ValueError" and the message for a handler that raised; States.Timeout; States.TaskFailed).
struct TaskOutcome {
  bool ok = false;
  json output;
  std::string error, cause;
};

class TaskInvoker {
 public:
  virtual ~TaskInvoker() = default;
  // Calls Function `function` of namespace `ns` with `input`; `timeout` 0 = the Function's own.
  virtual TaskOutcome invoke(const std::string& ns, const std::string& function, const json& input,
                             std::chrono::milliseconds timeout) = 0;
};

class WorkflowClock {
 public:
  virtual ~WorkflowClock() = default;
  virtual std::chrono::system_clock::time_point now() const = 0;
  // Sleeps `d`; false when `cancel` became true first (it is checked at least every 100 ms).
  virtual bool sleepFor(std::chrono::milliseconds d, const std::atomic<bool>& cancel) = 0;
};

class RealWorkflowClock : public WorkflowClock {
 public:
  std::chrono::system_clock::time_point now() const override;
  bool sleepFor(std::chrono::milliseconds d, const std::atomic<bool>& cancel) override;
  static RealWorkflowClock& instance();
};

// One step of an execution as recorded in status.steps.
struct StepRecord {
  std::string name;                // the step's place in the run (unique per execution)
  std::string state;               // the state's name in its machine
  std::string type;                // Task, Choice, ...
  std::string phase;               // Running, Succeeded, Failed, Caught
  std::string startTime, endTime;  // RFC 3339 with microseconds
  int64_t durationMs = 0;
  int attempts = 0;
  std::string input;  // JSON text, truncated
  json output;        // the state's output (after its paths); what a replay takes
  std::string next;   // the state the run went to ("" at an end)
  std::string error, cause;

  json toJson() const;
  static StepRecord fromJson(const json& j);
};

// The steps of one execution, shared by the threads of its branches. `persist` gets the whole
// list each time a step starts or ends and must store it durably before returning (a failure is
// retried by the journal every second until it works or the run is cancelled).
class ExecutionJournal {
 public:
  using Persist = std::function<Status(const std::vector<StepRecord>&)>;
  ExecutionJournal(std::vector<StepRecord> recorded, Persist persist);

  std::optional<StepRecord> find(const std::string& name) const;
  // Adds or replaces (by name) and persists; false when cancelled before it was stored.
  bool record(const StepRecord& step, const std::atomic<bool>& cancel, WorkflowClock& clock);
  std::vector<StepRecord> steps() const;

 private:
  mutable std::mutex mu_;
  std::vector<StepRecord> steps_;
  Persist persist_;
};

struct ExecutionResult {
  enum class Phase { kSucceeded, kFailed, kCancelled } phase = Phase::kFailed;
  json output;
  std::string error, cause;
};

class WorkflowEngine {
 public:
  // Task states call Functions of namespace `ns`.
  WorkflowEngine(TaskInvoker& invoker, WorkflowClock& clock, std::string ns);

  // Runs `machine` ({StartAt, States, TimeoutSeconds?}) on `input` to its end, replaying what
  // `journal` holds. Stops early (kCancelled, nothing more recorded) when `cancel` turns true.
  ExecutionResult run(const json& machine, const json& input, ExecutionJournal& journal,
                      const std::atomic<bool>& cancel);

 private:
  struct Outcome;
  struct Run;
  Outcome runMachine(const json& machine, const json& input, const std::string& scope, Run& run);
  Outcome runState(const std::string& name, const json& state, const json& input,
                   const std::string& id, Run& run);
  Outcome execute(const json& state, const json& effectiveInput, const std::string& id, int attempt,
                  Run& run);

  TaskInvoker& invoker_;
  WorkflowClock& clock_;
  std::string ns_;
};

// The pure parts, exposed for tests.
namespace workflow {

// A reference path ($, $.a.b, $.a[0], $['x y']) applied to `root`; NotFound naming the path when
// it reaches nothing.
Result<json> selectPath(const json& root, const std::string& path);
// `result` put into `input` at ResultPath `path` ($ = replace; null = keep input).
Result<json> applyResultPath(const json& input, const json& path, const json& result);
// Parameters/ResultSelector: keys ending in ".$" take the value of their path in `input` (or in
// `context` for paths starting with "$$."), nested objects and arrays are resolved too.
Result<json> applyParameters(const json& templ, const json& input, const json& context);
// A Choice rule on `input`: comparisons, StringMatches with * wildcards, And/Or/Not.
bool evaluateRule(const json& rule, const json& input);
// Whether an error name is matched by a Retry/Catch ErrorEquals list.
bool errorMatches(const json& errorEquals, const std::string& error);
// The wait before retry `attempt` (1-based) of a retrier: IntervalSeconds x BackoffRate^(n-1),
// capped by MaxDelaySeconds.
std::chrono::milliseconds retryDelay(const json& retrier, int attempt);

}  // namespace workflow

}  // namespace minik8s::serverless
