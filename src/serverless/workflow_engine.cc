#include "serverless/workflow_engine.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <thread>

#include "api/jsonpath.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::serverless {

using std::chrono::milliseconds;

namespace {

constexpr size_t kInputPreviewBytes = 256;
constexpr int kMaxVisitsPerMachine = 10000;  // a loop that never ends is an error

std::string previewJson(const json& v) {
  std::string text = v.dump();
  if (text.size() > kInputPreviewBytes) text = text.substr(0, kInputPreviewBytes) + "...";
  return text;
}

bool finishedPhase(const std::string& phase) {
  return phase == "Succeeded" || phase == "Caught" || phase == "Failed";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Clock, records, journal

std::chrono::system_clock::time_point RealWorkflowClock::now() const {
  return std::chrono::system_clock::now();
}

bool RealWorkflowClock::sleepFor(milliseconds d, const std::atomic<bool>& cancel) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (!cancel.load()) {
    const auto left = end - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, milliseconds(50)));
  }
  return false;
}

RealWorkflowClock& RealWorkflowClock::instance() {
  static RealWorkflowClock clock;
  return clock;
}

json StepRecord::toJson() const {
  json j = {{"name", name}, {"state", state}, {"type", type}, {"phase", phase}};
  if (!startTime.empty()) j["startTime"] = startTime;
  if (!endTime.empty()) {
    j["endTime"] = endTime;
    j["durationMs"] = durationMs;
  }
  if (attempts > 0) j["attempts"] = attempts;
  if (!input.empty()) j["input"] = input;
  if (finishedPhase(phase) && phase != "Failed") j["output"] = output;
  if (!next.empty()) j["next"] = next;
  if (!error.empty()) j["error"] = error;
  if (!cause.empty()) j["cause"] = cause;
  return j;
}

StepRecord StepRecord::fromJson(const json& j) {
  StepRecord r;
  if (!j.is_object()) return r;
  r.name = j.value("name", "");
  r.state = j.value("state", "");
  r.type = j.value("type", "");
  r.phase = j.value("phase", "");
  r.startTime = j.value("startTime", "");
  r.endTime = j.value("endTime", "");
  r.durationMs = j.value("durationMs", int64_t{0});
  r.attempts = j.value("attempts", 0);
  r.input = j.value("input", "");
  r.output = j.value("output", json());
  r.next = j.value("next", "");
  r.error = j.value("error", "");
  r.cause = j.value("cause", "");
  return r;
}

ExecutionJournal::ExecutionJournal(std::vector<StepRecord> recorded, Persist persist)
    : steps_(std::move(recorded)), persist_(std::move(persist)) {}

std::optional<StepRecord> ExecutionJournal::find(const std::string& name) const {
  std::lock_guard lock(mu_);
  for (const auto& s : steps_) {
    if (s.name == name) return s;
  }
  return std::nullopt;
}

bool ExecutionJournal::record(const StepRecord& step, const std::atomic<bool>& cancel,
                              WorkflowClock& clock) {
  // Held while persisting: the list stored last is always the longest.
  std::lock_guard lock(mu_);
  auto it = std::find_if(steps_.begin(), steps_.end(),
                         [&](const StepRecord& s) { return s.name == step.name; });
  if (it == steps_.end()) {
    steps_.push_back(step);
  } else {
    *it = step;
  }
  while (true) {
    Status s = persist_ ? persist_(steps_) : Status();
    if (s.ok()) return true;
    LOG_WARN("workflow: cannot record step {}: {} (retrying)", step.name, s.toString());
    if (!clock.sleepFor(std::chrono::seconds(1), cancel)) return false;
  }
}

std::vector<StepRecord> ExecutionJournal::steps() const {
  std::lock_guard lock(mu_);
  return steps_;
}

// ---------------------------------------------------------------------------------------------
// Pure parts

namespace workflow {

Result<json> selectPath(const json& root, const std::string& path) {
  if (path.empty() || path[0] != '$') {
    return Status::BadRequest("path \"" + path + "\" must start with $");
  }
  if (path == "$") return root;
  auto parsed = api::JsonPath::parse(path.substr(1));
  if (!parsed.ok()) return parsed.status();
  std::vector<json> found = parsed->evaluate(root);
  if (found.empty()) {
    return Status::NotFoundMessage("path " + path + " matches nothing in the input");
  }
  if (found.size() == 1 && path.find('*') == std::string::npos &&
      path.find("?(") == std::string::npos) {
    return found[0];
  }
  return json(found);
}

Result<json> applyResultPath(const json& input, const json& path, const json& result) {
  if (path.is_null()) return input;
  if (!path.is_string()) return Status::BadRequest("ResultPath must be a path or null");
  const std::string p = path.get<std::string>();
  if (p == "$") return result;
  if (p.size() < 2 || p[0] != '$')
    return Status::BadRequest("ResultPath " + p + " must start with $");
  auto parsed = api::JsonPath::parse(p.substr(1));
  if (!parsed.ok()) return parsed.status();
  const std::string pointer = parsed->pointer();
  if (pointer.empty()) {
    return Status::BadRequest("ResultPath " + p + " must name fields only ($.a.b)");
  }
  if (!input.is_object()) {
    return Status::BadRequest("ResultPath " + p + " needs an object input, got " +
                              previewJson(input));
  }
  json out = input;
  try {
    out[json::json_pointer(pointer)] = result;
  } catch (const json::exception& e) {
    return Status::BadRequest("ResultPath " + p + " cannot be set in " + previewJson(input));
  }
  return out;
}

Result<json> applyParameters(const json& templ, const json& input, const json& context) {
  if (templ.is_array()) {
    json out = json::array();
    for (const auto& v : templ) {
      auto r = applyParameters(v, input, context);
      if (!r.ok()) return r;
      out.push_back(*r);
    }
    return out;
  }
  if (!templ.is_object()) return templ;
  json out = json::object();
  for (const auto& [key, value] : templ.items()) {
    if (key.size() > 2 && key.ends_with(".$")) {
      const std::string field = key.substr(0, key.size() - 2);
      if (!value.is_string()) {
        return Status::BadRequest(key + ": must be a path string");
      }
      const std::string p = value.get<std::string>();
      Result<json> v = p.rfind("$$", 0) == 0 ? selectPath(context, p.substr(1))
                       : p.rfind("$", 0) == 0
                           ? selectPath(input, p)
                           : Result<json>(Status::BadRequest(
                                 key + ": \"" + p +
                                 "\": a path starting with $ or $$ (intrinsic functions are not "
                                 "supported)"));
      if (!v.ok()) return v;
      out[field] = *v;
    } else {
      auto r = applyParameters(value, input, context);
      if (!r.ok()) return r;
      out[key] = *r;
    }
  }
  return out;
}

namespace {

// '*' matches any run of characters; "\*" a literal star.
bool wildcardMatch(const std::string& text, const std::string& pattern) {
  std::vector<std::pair<char, bool>> pat;  // (char, isStar)
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      pat.emplace_back(pattern[++i], false);
    } else {
      pat.emplace_back(pattern[i], pattern[i] == '*');
    }
  }
  size_t t = 0, p = 0, starP = std::string::npos, starT = 0;
  while (t < text.size()) {
    if (p < pat.size() && !pat[p].second && pat[p].first == text[t]) {
      ++t;
      ++p;
    } else if (p < pat.size() && pat[p].second) {
      starP = p++;
      starT = t;
    } else if (starP != std::string::npos) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p].second) ++p;
  return p == pat.size();
}

template <typename T>
bool compareOrdered(const std::string& op, const T& a, const T& b) {
  if (op.ends_with("GreaterThanEquals")) return a >= b;
  if (op.ends_with("LessThanEquals")) return a <= b;
  if (op.ends_with("GreaterThan")) return a > b;
  if (op.ends_with("LessThan")) return a < b;
  return a == b;  // ...Equals
}

}  // namespace

bool evaluateRule(const json& rule, const json& input) {
  if (!rule.is_object()) return false;
  if (rule.contains("And")) {
    for (const auto& r : rule["And"]) {
      if (!evaluateRule(r, input)) return false;
    }
    return true;
  }
  if (rule.contains("Or")) {
    for (const auto& r : rule["Or"]) {
      if (evaluateRule(r, input)) return true;
    }
    return false;
  }
  if (rule.contains("Not")) return !evaluateRule(rule["Not"], input);
  auto variable = selectPath(input, rule.value("Variable", "$"));
  for (const auto& [key, given] : rule.items()) {
    if (key == "Variable" || key == "Next" || key == "Comment") continue;
    std::string op = key;
    json operand = given;
    if (op.size() > 4 && op.ends_with("Path")) {
      op.resize(op.size() - 4);
      if (!given.is_string()) return false;
      auto v = selectPath(input, given.get<std::string>());
      if (!v.ok()) return false;
      operand = *v;
    }
    if (op == "IsPresent") return variable.ok() == operand.get<bool>();
    if (!variable.ok()) return false;
    const json& v = *variable;
    if (op == "IsNull") return v.is_null() == (operand == true);
    if (op == "IsString") return v.is_string() == (operand == true);
    if (op == "IsNumeric") return v.is_number() == (operand == true);
    if (op == "IsBoolean") return v.is_boolean() == (operand == true);
    if (op == "IsTimestamp") {
      return (v.is_string() && parseRfc3339(v.get<std::string>()).has_value()) == (operand == true);
    }
    if (op == "BooleanEquals") return v.is_boolean() && operand.is_boolean() && v == operand;
    if (op == "StringMatches") {
      return v.is_string() && operand.is_string() &&
             wildcardMatch(v.get<std::string>(), operand.get<std::string>());
    }
    if (op.starts_with("String")) {
      return v.is_string() && operand.is_string() &&
             compareOrdered(op, v.get<std::string>(), operand.get<std::string>());
    }
    if (op.starts_with("Numeric")) {
      return v.is_number() && operand.is_number() &&
             compareOrdered(op, v.get<double>(), operand.get<double>());
    }
    if (op.starts_with("Timestamp")) {
      if (!v.is_string() || !operand.is_string()) return false;
      auto a = parseRfc3339(v.get<std::string>());
      auto b = parseRfc3339(operand.get<std::string>());
      return a && b && compareOrdered(op, *a, *b);
    }
  }
  return false;
}

bool errorMatches(const json& errorEquals, const std::string& error) {
  if (!errorEquals.is_array()) return false;
  for (const auto& e : errorEquals) {
    if (!e.is_string()) continue;
    const std::string name = e.get<std::string>();
    if (name == error) return true;
    if (error == "States.Runtime") continue;  // as in AWS: no wildcard catches it
    if (name == "States.ALL") return true;
    if (name == "States.TaskFailed" && error != "States.Timeout") return true;
  }
  return false;
}

milliseconds retryDelay(const json& retrier, int attempt) {
  const double interval = retrier.value("IntervalSeconds", 1.0);
  const double rate = retrier.value("BackoffRate", 2.0);
  double seconds = interval * std::pow(rate, std::max(0, attempt - 1));
  if (retrier.contains("MaxDelaySeconds") && retrier["MaxDelaySeconds"].is_number()) {
    seconds = std::min(seconds, retrier["MaxDelaySeconds"].get<double>());
  }
  return milliseconds(static_cast<int64_t>(std::llround(seconds * 1000.0)));
}

}  // namespace workflow

// ---------------------------------------------------------------------------------------------
// The engine

struct WorkflowEngine::Outcome {
  enum class Kind { kOk, kFailed, kCancelled } kind = Kind::kOk;
  json output;
  std::string next;  // kOk from runState: the state to go to, "" at an end
  std::string error, cause;

  static Outcome ok(json out, std::string next = "") {
    Outcome o;
    o.output = std::move(out);
    o.next = std::move(next);
    return o;
  }
  static Outcome failed(std::string error, std::string cause) {
    Outcome o;
    o.kind = Kind::kFailed;
    o.error = std::move(error);
    o.cause = std::move(cause);
    return o;
  }
  static Outcome cancelled() {
    Outcome o;
    o.kind = Kind::kCancelled;
    return o;
  }
  static Outcome runtime(const Status& s) { return failed("States.Runtime", s.message()); }
};

struct WorkflowEngine::Run {
  ExecutionJournal& journal;
  const std::atomic<bool>& cancel;
  std::optional<std::chrono::system_clock::time_point> deadline;
};

WorkflowEngine::WorkflowEngine(TaskInvoker& invoker, WorkflowClock& clock, std::string ns)
    : invoker_(invoker), clock_(clock), ns_(std::move(ns)) {}

ExecutionResult WorkflowEngine::run(const json& machine, const json& input,
                                    ExecutionJournal& journal, const std::atomic<bool>& cancel) {
  Run run{journal, cancel, std::nullopt};
  if (machine.contains("TimeoutSeconds") && machine["TimeoutSeconds"].is_number()) {
    auto start = clock_.now();
    for (const auto& s : journal.steps()) {  // a resumed run counts from its first step
      if (auto t = parseRfc3339(s.startTime); t && *t < start) start = *t;
    }
    run.deadline = start + std::chrono::seconds(machine["TimeoutSeconds"].get<int64_t>());
  }
  Outcome o = runMachine(machine, input, "", run);
  ExecutionResult result;
  switch (o.kind) {
    case Outcome::Kind::kOk:
      result.phase = ExecutionResult::Phase::kSucceeded;
      result.output = std::move(o.output);
      break;
    case Outcome::Kind::kFailed:
      result.phase = ExecutionResult::Phase::kFailed;
      result.error = std::move(o.error);
      result.cause = std::move(o.cause);
      break;
    case Outcome::Kind::kCancelled:
      result.phase = ExecutionResult::Phase::kCancelled;
      break;
  }
  return result;
}

WorkflowEngine::Outcome WorkflowEngine::runMachine(const json& machine, const json& input,
                                                   const std::string& scope, Run& run) {
  const json& states = machine.at("States");
  std::string current = machine.value("StartAt", "");
  json data = input;
  std::map<std::string, int> visits;
  for (int step = 0;; ++step) {
    if (run.cancel.load()) return Outcome::cancelled();
    if (run.deadline && clock_.now() >= *run.deadline) {
      return Outcome::failed("States.Timeout",
                             "the execution ran past the workflow's TimeoutSeconds");
    }
    if (step >= kMaxVisitsPerMachine) {
      return Outcome::failed("States.Runtime",
                             "more than 10000 states visited: a loop that does not end?");
    }
    if (!states.contains(current)) {
      return Outcome::failed("States.Runtime", "no state \"" + current + "\"");
    }
    const int visit = visits[current]++;
    const std::string id = scope + current + (visit > 0 ? "#" + std::to_string(visit + 1) : "");
    Outcome o = runState(current, states[current], data, id, run);
    if (o.kind != Outcome::Kind::kOk) return o;
    data = std::move(o.output);
    if (o.next.empty()) return Outcome::ok(std::move(data));
    current = o.next;
  }
}

WorkflowEngine::Outcome WorkflowEngine::runState(const std::string& name, const json& state,
                                                 const json& input, const std::string& id,
                                                 Run& run) {
  const std::optional<StepRecord> recorded = run.journal.find(id);
  if (recorded && (recorded->phase == "Succeeded" || recorded->phase == "Caught")) {
    return Outcome::ok(recorded->output, recorded->next);  // replay: not run again
  }
  if (recorded && recorded->phase == "Failed") {
    return Outcome::failed(recorded->error, recorded->cause);
  }
  const std::string type = state.value("Type", "");
  const std::string next = state.value("End", false) ? "" : state.value("Next", "");
  StepRecord step;
  if (recorded) {
    step = *recorded;  // in flight when the engine stopped: run it again, same start time
  } else {
    step.name = id;
    step.state = name;
    step.type = type;
    step.phase = "Running";
    step.startTime = formatRfc3339Micro(clock_.now());
    step.input = previewJson(input);
  }
  const bool takesTime = type == "Task" || type == "Wait" || type == "Parallel" || type == "Map";
  if (takesTime && !recorded && !run.journal.record(step, run.cancel, clock_)) {
    return Outcome::cancelled();
  }
  // Ends the step: records it (durably) before the run moves on.
  auto finish = [&](Outcome o, const std::string& phase) -> Outcome {
    if (o.kind == Outcome::Kind::kCancelled) return o;
    const auto end = clock_.now();
    step.phase = phase;
    step.endTime = formatRfc3339Micro(end);
    if (auto start = parseRfc3339(step.startTime)) {
      step.durationMs = std::chrono::duration_cast<milliseconds>(end - *start).count();
    }
    if (o.kind == Outcome::Kind::kOk) {
      step.output = o.output;
      step.next = o.next;
    } else {
      step.error = o.error;
      step.cause = o.cause;
    }
    if (!run.journal.record(step, run.cancel, clock_)) return Outcome::cancelled();
    return o;
  };
  auto inputPath = [&](const json& in) -> Result<json> {
    if (state.contains("InputPath") && state["InputPath"].is_null()) return json::object();
    return workflow::selectPath(in, state.value("InputPath", "$"));
  };
  auto outputPath = [&](const json& out) -> Result<json> {
    if (state.contains("OutputPath") && state["OutputPath"].is_null()) return json::object();
    return workflow::selectPath(out, state.value("OutputPath", "$"));
  };
  const json resultPath = state.contains("ResultPath") ? state["ResultPath"] : json("$");

  auto effective = inputPath(input);
  if (!effective.ok()) return finish(Outcome::runtime(effective.status()), "Failed");

  if (type == "Choice") {
    std::string chosen;
    for (const auto& rule : state.value("Choices", json::array())) {
      if (workflow::evaluateRule(rule, *effective)) {
        chosen = rule.value("Next", "");
        break;
      }
    }
    if (chosen.empty()) chosen = state.value("Default", "");
    if (chosen.empty()) {
      return finish(Outcome::failed("States.NoChoiceMatched",
                                    "no Choice rule matched and there is no Default; input " +
                                        previewJson(*effective)),
                    "Failed");
    }
    auto out = outputPath(*effective);
    if (!out.ok()) return finish(Outcome::runtime(out.status()), "Failed");
    return finish(Outcome::ok(*out, chosen), "Succeeded");
  }
  if (type == "Succeed" || type == "Pass") {
    json result = *effective;
    if (type == "Pass") {
      if (state.contains("Result")) {
        result = state["Result"];
      } else if (state.contains("Parameters")) {
        auto p = workflow::applyParameters(state["Parameters"], *effective, json::object());
        if (!p.ok()) return finish(Outcome::runtime(p.status()), "Failed");
        result = *p;
      }
      auto placed = workflow::applyResultPath(input, resultPath, result);
      if (!placed.ok()) return finish(Outcome::runtime(placed.status()), "Failed");
      result = *placed;
    }
    auto out = outputPath(result);
    if (!out.ok()) return finish(Outcome::runtime(out.status()), "Failed");
    return finish(Outcome::ok(*out, type == "Pass" ? next : ""), "Succeeded");
  }
  if (type == "Fail") {
    return finish(Outcome::failed(state.value("Error", "States.Fail"), state.value("Cause", "")),
                  "Failed");
  }
  if (type == "Wait") {
    auto start = parseRfc3339(step.startTime).value_or(clock_.now());
    std::chrono::system_clock::time_point until = start;
    if (state.contains("Seconds") || state.contains("SecondsPath")) {
      json seconds = state.value("Seconds", json());
      if (state.contains("SecondsPath")) {
        auto v = workflow::selectPath(*effective, state.value("SecondsPath", "$"));
        if (!v.ok()) return finish(Outcome::runtime(v.status()), "Failed");
        seconds = *v;
      }
      if (!seconds.is_number() || seconds.get<double>() < 0) {
        return finish(Outcome::runtime(Status::BadRequest(
                          "Wait: seconds must be a number >= 0, got " + previewJson(seconds))),
                      "Failed");
      }
      until = start + milliseconds(static_cast<int64_t>(seconds.get<double>() * 1000));
    } else {
      json ts = state.value("Timestamp", json());
      if (state.contains("TimestampPath")) {
        auto v = workflow::selectPath(*effective, state.value("TimestampPath", "$"));
        if (!v.ok()) return finish(Outcome::runtime(v.status()), "Failed");
        ts = *v;
      }
      auto t = ts.is_string() ? parseRfc3339(ts.get<std::string>()) : std::nullopt;
      if (!t) {
        return finish(Outcome::runtime(Status::BadRequest("Wait: not an RFC 3339 timestamp: " +
                                                          previewJson(ts))),
                      "Failed");
      }
      until = *t;
    }
    // The workflow's TimeoutSeconds cuts a Wait short.
    const bool pastDeadline = run.deadline && *run.deadline < until;
    if (pastDeadline) until = *run.deadline;
    const auto left = until - clock_.now();
    if (left > std::chrono::system_clock::duration::zero() &&
        !clock_.sleepFor(std::chrono::duration_cast<milliseconds>(left) + milliseconds(1),
                         run.cancel)) {
      return Outcome::cancelled();
    }
    if (pastDeadline) {
      return finish(
          Outcome::failed("States.Timeout", "the execution ran past the workflow's TimeoutSeconds"),
          "Failed");
    }
    auto out = outputPath(*effective);
    if (!out.ok()) return finish(Outcome::runtime(out.status()), "Failed");
    return finish(Outcome::ok(*out, next), "Succeeded");
  }
  if (type != "Task" && type != "Parallel" && type != "Map") {
    return finish(Outcome::failed("States.Runtime", "unknown state type \"" + type + "\""),
                  "Failed");
  }

  // Task, Parallel, Map: attempts with Retry, then Catch.
  const json retriers = state.value("Retry", json::array());
  std::vector<int> retries(retriers.size(), 0);
  for (int attempt = 1;; ++attempt) {
    step.attempts = attempt;
    Outcome o = execute(state, *effective, id, attempt, run);
    if (o.kind == Outcome::Kind::kCancelled) return o;
    if (o.kind == Outcome::Kind::kOk) {
      json result = std::move(o.output);
      if (state.contains("ResultSelector")) {
        auto r = workflow::applyParameters(state["ResultSelector"], result, json::object());
        if (!r.ok()) return finish(Outcome::runtime(r.status()), "Failed");
        result = *r;
      }
      auto placed = workflow::applyResultPath(input, resultPath, result);
      if (!placed.ok()) return finish(Outcome::runtime(placed.status()), "Failed");
      auto out = outputPath(*placed);
      if (!out.ok()) return finish(Outcome::runtime(out.status()), "Failed");
      return finish(Outcome::ok(*out, next), "Succeeded");
    }
    bool retried = false;
    for (size_t i = 0; i < retriers.size(); ++i) {
      if (!workflow::errorMatches(retriers[i].value("ErrorEquals", json()), o.error)) continue;
      if (retries[i] < retriers[i].value("MaxAttempts", 3)) {
        const milliseconds delay = workflow::retryDelay(retriers[i], ++retries[i]);
        LOG_INFO("workflow: {} failed with {} (attempt {}): retrying in {} ms", id, o.error,
                 attempt, delay.count());
        if (!clock_.sleepFor(delay, run.cancel)) return Outcome::cancelled();
        retried = true;
      }
      break;  // the first retrier that matches decides
    }
    if (retried) continue;
    for (const auto& catcher : state.value("Catch", json::array())) {
      if (!workflow::errorMatches(catcher.value("ErrorEquals", json()), o.error)) continue;
      const json errorOutput = {{"Error", o.error}, {"Cause", o.cause}};
      auto placed = workflow::applyResultPath(
          input, catcher.contains("ResultPath") ? catcher["ResultPath"] : json("$"), errorOutput);
      if (!placed.ok()) return finish(Outcome::runtime(placed.status()), "Failed");
      step.error = o.error;
      step.cause = o.cause;
      return finish(Outcome::ok(*placed, catcher.value("Next", "")), "Caught");
    }
    return finish(o, "Failed");
  }
}

WorkflowEngine::Outcome WorkflowEngine::execute(const json& state, const json& effective,
                                                const std::string& id, int attempt, Run& run) {
  const std::string type = state.value("Type", "");
  if (type == "Task") {
    json taskInput = effective;
    if (state.contains("Parameters")) {
      auto p = workflow::applyParameters(state["Parameters"], effective, json::object());
      if (!p.ok()) return Outcome::runtime(p.status());
      taskInput = *p;
    }
    milliseconds timeout(state.value("TimeoutSeconds", 0) * 1000);
    if (run.deadline) {  // no call outlives the workflow's TimeoutSeconds
      const auto left = std::chrono::duration_cast<milliseconds>(*run.deadline - clock_.now());
      if (left <= milliseconds::zero()) {
        return Outcome::failed("States.Timeout",
                               "the execution ran past the workflow's TimeoutSeconds");
      }
      if (timeout.count() == 0 || left < timeout) timeout = left;
    }
    TaskOutcome t = invoker_.invoke(ns_, state.value("Resource", ""), taskInput, timeout);
    if (run.cancel.load() && !t.ok) return Outcome::cancelled();  // cut off by a stop
    if (t.ok) return Outcome::ok(std::move(t.output));
    return Outcome::failed(t.error.empty() ? "States.TaskFailed" : t.error, t.cause);
  }

  // Parallel branches and Map items: sub-machines on threads, each under its own scope (a retry
  // of the whole state gets new scopes: its first attempt's records stay as they were).
  const std::string base = id + (attempt > 1 ? "~" + std::to_string(attempt) : "") + "/";
  std::vector<json> machines;
  std::vector<json> inputs;
  size_t concurrency = 0;
  if (type == "Parallel") {
    json branchInput = effective;
    if (state.contains("Parameters")) {
      auto p = workflow::applyParameters(state["Parameters"], effective, json::object());
      if (!p.ok()) return Outcome::runtime(p.status());
      branchInput = *p;
    }
    for (const auto& b : state.value("Branches", json::array())) {
      machines.push_back(b);
      inputs.push_back(branchInput);
    }
  } else {
    auto items = workflow::selectPath(effective, state.value("ItemsPath", "$"));
    if (!items.ok()) return Outcome::runtime(items.status());
    if (!items->is_array()) {
      return Outcome::runtime(
          Status::BadRequest("Map: ItemsPath must select a list, got " + previewJson(*items)));
    }
    const json processor =
        state.contains("ItemProcessor") ? state["ItemProcessor"] : state.value("Iterator", json());
    const char* selectorKey = state.contains("ItemSelector") ? "ItemSelector" : "Parameters";
    for (size_t i = 0; i < items->size(); ++i) {
      json itemInput = (*items)[i];
      if (state.contains(selectorKey)) {
        const json context = {{"Map", {{"Item", {{"Index", i}, {"Value", (*items)[i]}}}}}};
        auto p = workflow::applyParameters(state[selectorKey], effective, context);
        if (!p.ok()) return Outcome::runtime(p.status());
        itemInput = *p;
      }
      machines.push_back(processor);
      inputs.push_back(itemInput);
    }
    concurrency = static_cast<size_t>(std::max(0, state.value("MaxConcurrency", 0)));
  }
  const size_t n = machines.size();
  if (concurrency == 0 || concurrency > n) concurrency = n;
  std::vector<Outcome> outcomes(n);
  std::atomic<size_t> nextIndex{0};
  auto worker = [&] {
    for (size_t i = nextIndex++; i < n; i = nextIndex++) {
      outcomes[i] = runMachine(machines[i], inputs[i], base + std::to_string(i) + "/", run);
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < concurrency; ++t) threads.emplace_back(worker);
  if (n > 0) worker();
  for (auto& t : threads) t.join();
  json results = json::array();
  for (auto& o : outcomes) {
    if (o.kind == Outcome::Kind::kCancelled) return o;
  }
  for (auto& o : outcomes) {
    if (o.kind == Outcome::Kind::kFailed) return o;
    results.push_back(std::move(o.output));
  }
  return Outcome::ok(std::move(results));
}

}  // namespace minik8s::serverless
