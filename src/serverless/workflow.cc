#include "serverless/workflow.h"

#include <set>

#include "client/custom_resource_definitions.h"
#include "common/json_pointer.h"
#include "common/yaml_json.h"
#include "serverless/function.h"

namespace minik8s::serverless {

const client::Resource kWorkflows{kGroup, "v1", "workflows", true};
const client::Resource kWorkflowExecutions{kGroup, "v1", "workflowexecutions", true};

namespace {

constexpr const char* kWorkflowCrdYaml = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: workflows.serverless.minik8s.io
  labels: {app.kubernetes.io/managed-by: minik8s}
spec:
  group: serverless.minik8s.io
  scope: Namespaced
  names:
    plural: workflows
    singular: workflow
    kind: Workflow
    listKind: WorkflowList
    shortNames: [wf]
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Start-At, type: string, jsonPath: .spec.StartAt}
    - {name: States, type: integer, jsonPath: .status.states}
    - {name: Valid, type: string, jsonPath: '.status.conditions[?(@.type=="Valid")].status'}
    - {name: Message, type: string, jsonPath: '.status.conditions[?(@.type=="Valid")].message', priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: 'A state machine in the shape of the Amazon States Language: Task states call Functions of the same namespace; Choice, Parallel, Map, Pass, Wait, Succeed, Fail; Retry and Catch per step.'
        properties:
          spec:
            type: object
            required: [StartAt, States]
            properties:
              Comment: {type: string, description: A human-readable description}
              StartAt: {type: string, minLength: 1, description: The state the execution starts in}
              TimeoutSeconds: {type: integer, minimum: 1, description: Longest an execution may run; it fails with States.Timeout after}
              States:
                type: object
                description: 'The states by name. Each has Type (Task, Choice, Parallel, Map, Pass, Wait, Succeed, Fail) and, but for Choice, Succeed and Fail, Next or End: true. Task: Resource (a Function name), TimeoutSeconds, Retry, Catch. Paths: InputPath, Parameters, ResultSelector, ResultPath, OutputPath.'
                minProperties: 1
                additionalProperties:
                  type: object
                  required: [Type]
                  x-kubernetes-preserve-unknown-fields: true
                  properties:
                    Type: {type: string, enum: [Task, Choice, Parallel, Map, Pass, Wait, Succeed, Fail]}
                    Comment: {type: string}
                    Next: {type: string, minLength: 1}
                    End: {type: boolean}
                    Resource: {type: string, minLength: 1, description: 'Task: the Function to call (NAME, in the workflow''s namespace)'}
                    TimeoutSeconds: {type: integer, minimum: 1}
                    Seconds: {type: integer, minimum: 0}
                    Timestamp: {type: string}
                    InputPath: {type: string, nullable: true}
                    OutputPath: {type: string, nullable: true}
                    ResultPath: {type: string, nullable: true}
                    Error: {type: string}
                    Cause: {type: string}
                    Default: {type: string}
                    ItemsPath: {type: string}
                    MaxConcurrency: {type: integer, minimum: 0}
          status:
            type: object
            properties:
              states: {type: integer, description: How many states the top level has}
              observedGeneration: {type: integer}
              conditions:
                type: array
                items:
                  type: object
                  required: [type, status]
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
)";

constexpr const char* kExecutionCrdYaml = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: workflowexecutions.serverless.minik8s.io
  labels: {app.kubernetes.io/managed-by: minik8s}
spec:
  group: serverless.minik8s.io
  scope: Namespaced
  names:
    plural: workflowexecutions
    singular: workflowexecution
    kind: WorkflowExecution
    listKind: WorkflowExecutionList
    shortNames: [wfx]
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Workflow, type: string, jsonPath: .spec.workflowRef.name}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Steps, type: integer, jsonPath: .status.stepCount}
    - {name: Duration, type: string, jsonPath: .status.duration}
    - {name: Current, type: string, jsonPath: .status.currentStep, priority: 1}
    - {name: Error, type: string, jsonPath: .status.error, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: One run of a Workflow, with its input, output and a record of each step.
        properties:
          spec:
            type: object
            required: [workflowRef]
            properties:
              workflowRef:
                type: object
                required: [name]
                description: The Workflow to run, in the same namespace
                properties:
                  name: {type: string, minLength: 1}
              input: {x-kubernetes-preserve-unknown-fields: true, description: The execution's input (any JSON value)}
          status:
            type: object
            properties:
              phase: {type: string, enum: [Pending, Running, Succeeded, Failed]}
              startTime: {type: string}
              completionTime: {type: string}
              duration: {type: string, description: 'Start to completion, e.g. 1.234s'}
              output: {x-kubernetes-preserve-unknown-fields: true, description: The output of the last state}
              error: {type: string}
              cause: {type: string}
              currentStep: {type: string, description: The step started last}
              stepCount: {type: integer, description: Steps recorded}
              steps:
                type: array
                description: 'One record per step, in the order they started; written before the next step starts, so a restarted engine resumes after the last finished step. Names of steps in a Parallel branch or a Map iteration are prefixed with the state and index (Fanout/0/Double); a state visited again gets #N.'
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    state: {type: string}
                    type: {type: string}
                    phase: {type: string, description: 'Running, Succeeded, Failed, or Caught (failed, then handled by a Catch)'}
                    startTime: {type: string}
                    endTime: {type: string}
                    durationMs: {type: integer}
                    attempts: {type: integer}
                    input: {type: string, description: The step's input (JSON text, truncated)}
                    output: {x-kubernetes-preserve-unknown-fields: true}
                    next: {type: string}
                    error: {type: string}
                    cause: {type: string}
)";

json parsedCrd(const char* text) {
  auto parsed = parseYaml(text);
  return parsed.ok() ? *parsed : json::object();
}

const std::set<std::string>& knownTypes() {
  static const std::set<std::string> kTypes = {"Task", "Choice", "Parallel", "Map",
                                               "Pass", "Wait",   "Succeed",  "Fail"};
  return kTypes;
}

const std::set<std::string>& comparisonOperators() {
  static const std::set<std::string> kOps = {"StringEquals",
                                             "StringLessThan",
                                             "StringGreaterThan",
                                             "StringLessThanEquals",
                                             "StringGreaterThanEquals",
                                             "StringMatches",
                                             "NumericEquals",
                                             "NumericLessThan",
                                             "NumericGreaterThan",
                                             "NumericLessThanEquals",
                                             "NumericGreaterThanEquals",
                                             "BooleanEquals",
                                             "TimestampEquals",
                                             "TimestampLessThan",
                                             "TimestampGreaterThan",
                                             "TimestampLessThanEquals",
                                             "TimestampGreaterThanEquals",
                                             "IsPresent",
                                             "IsNull",
                                             "IsString",
                                             "IsNumeric",
                                             "IsBoolean",
                                             "IsTimestamp"};
  return kOps;
}

void addCause(std::vector<Cause>& out, const std::string& reason, const std::string& field,
              const std::string& message) {
  out.push_back({reason, field, message});
}

bool isReferencePath(const json& v) {
  return v.is_string() && !v.get<std::string>().empty() && v.get<std::string>()[0] == '$';
}

void validateRule(const json& rule, const std::string& path, bool top, const json& states,
                  std::vector<Cause>& out) {
  if (!rule.is_object()) {
    addCause(out, "FieldValueInvalid", path, "must be an object");
    return;
  }
  if (top) {
    const std::string next = rule.value("Next", "");
    if (next.empty()) {
      addCause(out, "FieldValueRequired", path + ".Next",
               "Required value: a Choice rule names its Next");
    } else if (!states.contains(next)) {
      addCause(out, "FieldValueNotFound", path + ".Next",
               "Not found: \"" + next + "\": no such state");
    }
  }
  for (const char* combinator : {"And", "Or"}) {
    if (!rule.contains(combinator)) continue;
    const json& list = rule[combinator];
    if (!list.is_array() || list.empty()) {
      addCause(out, "FieldValueInvalid", path + "." + combinator,
               "must be a non-empty list of rules");
      continue;
    }
    for (size_t i = 0; i < list.size(); ++i) {
      validateRule(list[i], path + "." + combinator + "[" + std::to_string(i) + "]", false, states,
                   out);
    }
    return;
  }
  if (rule.contains("Not")) {
    validateRule(rule["Not"], path + ".Not", false, states, out);
    return;
  }
  if (!isReferencePath(rule.value("Variable", json()))) {
    addCause(out, "FieldValueRequired", path + ".Variable",
             "Required value: a path such as $.status (or And, Or, Not)");
  }
  int operators = 0;
  for (const auto& [key, value] : rule.items()) {
    std::string op = key;
    const bool byPath = op.size() > 4 && op.ends_with("Path");
    if (byPath) op.resize(op.size() - 4);
    if (!comparisonOperators().count(op)) continue;
    ++operators;
    if (byPath && !isReferencePath(value)) {
      addCause(out, "FieldValueInvalid", path + "." + key, "must be a path such as $.limit");
    } else if (!byPath && (op.starts_with("Numeric") && !value.is_number())) {
      addCause(out, "FieldValueInvalid", path + "." + key, "must be a number");
    } else if (!byPath && (op.starts_with("String") || op.starts_with("Timestamp")) &&
               !value.is_string()) {
      addCause(out, "FieldValueInvalid", path + "." + key, "must be a string");
    } else if (!byPath && (op == "BooleanEquals" || op.starts_with("Is")) && !value.is_boolean()) {
      addCause(out, "FieldValueInvalid", path + "." + key, "must be true or false");
    }
  }
  if (operators != 1) {
    addCause(out, "FieldValueInvalid", path,
             operators == 0 ? "a rule needs one comparison (StringEquals, NumericLessThan, "
                              "BooleanEquals, StringMatches, IsPresent, ...) or And, Or, Not"
                            : "a rule has exactly one comparison");
  }
}

void validateRetryCatch(const json& state, const std::string& path, const json& states,
                        std::vector<Cause>& out) {
  for (const char* key : {"Retry", "Catch"}) {
    if (!state.contains(key)) continue;
    const json& list = state[key];
    const std::string base = path + "." + key;
    if (!list.is_array()) {
      addCause(out, "FieldValueInvalid", base, "must be a list");
      continue;
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = base + "[" + std::to_string(i) + "]";
      const json& r = list[i];
      if (!r.is_object()) {
        addCause(out, "FieldValueInvalid", at, "must be an object");
        continue;
      }
      const json errors = r.value("ErrorEquals", json());
      if (!errors.is_array() || errors.empty()) {
        addCause(out, "FieldValueRequired", at + ".ErrorEquals",
                 "Required value: a non-empty list of error names (States.ALL matches any)");
      }
      if (std::string(key) == "Retry") {
        if (r.contains("MaxAttempts") &&
            (!r["MaxAttempts"].is_number_integer() || r["MaxAttempts"].get<int>() < 0)) {
          addCause(out, "FieldValueInvalid", at + ".MaxAttempts", "must be an integer >= 0");
        }
        if (r.contains("IntervalSeconds") &&
            (!r["IntervalSeconds"].is_number() || r["IntervalSeconds"].get<double>() < 0)) {
          addCause(out, "FieldValueInvalid", at + ".IntervalSeconds", "must be a number >= 0");
        }
        if (r.contains("BackoffRate") &&
            (!r["BackoffRate"].is_number() || r["BackoffRate"].get<double>() < 1.0)) {
          addCause(out, "FieldValueInvalid", at + ".BackoffRate", "must be a number >= 1.0");
        }
      } else {
        const std::string next = r.value("Next", "");
        if (next.empty()) {
          addCause(out, "FieldValueRequired", at + ".Next", "Required value: the state to go to");
        } else if (!states.contains(next)) {
          addCause(out, "FieldValueNotFound", at + ".Next",
                   "Not found: \"" + next + "\": no such state");
        }
      }
    }
  }
}

}  // namespace

json workflowCrd() {
  static const json crd = parsedCrd(kWorkflowCrdYaml);
  return crd;
}

json workflowExecutionCrd() {
  static const json crd = parsedCrd(kExecutionCrdYaml);
  return crd;
}

Status ensureWorkflowCrds(client::RestClient& rest) {
  if (Status s = client::ensureCustomResourceDefinition(rest, workflowCrd()); !s.ok()) return s;
  return client::ensureCustomResourceDefinition(rest, workflowExecutionCrd());
}

std::vector<Cause> validateStateMachine(const json& machine, const std::string& path) {
  std::vector<Cause> out;
  if (!machine.is_object()) {
    addCause(out, "FieldValueInvalid", path, "must be an object with StartAt and States");
    return out;
  }
  const json states = machine.value("States", json());
  if (!states.is_object() || states.empty()) {
    addCause(out, "FieldValueRequired", path + ".States", "Required value: at least one state");
    return out;
  }
  const json startAt = machine.value("StartAt", json());
  if (!startAt.is_string() || startAt.get<std::string>().empty()) {
    addCause(out, "FieldValueRequired", path + ".StartAt",
             "Required value: the first state's name");
  } else if (!states.contains(startAt.get<std::string>())) {
    addCause(out, "FieldValueNotFound", path + ".StartAt",
             "Not found: \"" + startAt.get<std::string>() + "\": no such state");
  }
  for (const auto& [name, state] : states.items()) {
    const std::string at = path + ".States[" + name + "]";
    if (!state.is_object()) {
      addCause(out, "FieldValueInvalid", at, "must be an object");
      continue;
    }
    if (name.size() > 80)
      addCause(out, "FieldValueInvalid", at, "a state name has at most 80 characters");
    const std::string type = state.value("Type", "");
    if (type.empty()) {
      addCause(out, "FieldValueRequired", at + ".Type", "Required value");
      continue;
    }
    if (!knownTypes().count(type)) {
      addCause(out, "FieldValueNotSupported", at + ".Type",
               "Unsupported value: \"" + type +
                   "\": supported values: Task, Choice, Parallel, Map, Pass, Wait, Succeed, Fail");
      continue;
    }
    const bool terminalType = type == "Choice" || type == "Succeed" || type == "Fail";
    if (!terminalType) {
      const bool end = state.value("End", false);
      const std::string next = state.value("Next", "");
      if (end && !next.empty()) {
        addCause(out, "FieldValueInvalid", at, "Next and End: true cannot both be set");
      } else if (!end && next.empty()) {
        addCause(out, "FieldValueRequired", at + ".Next", "Required value: Next, or End: true");
      } else if (!next.empty() && !states.contains(next)) {
        addCause(out, "FieldValueNotFound", at + ".Next",
                 "Not found: \"" + next + "\": no such state");
      }
    } else if (state.contains("Next") || state.contains("End")) {
      addCause(out, "FieldValueForbidden", at, "a " + type + " state has no Next or End");
    }
    for (const char* p :
         {"InputPath", "OutputPath", "ResultPath", "ItemsPath", "SecondsPath", "TimestampPath"}) {
      if (state.contains(p) && !state[p].is_null() && !isReferencePath(state[p])) {
        addCause(out, "FieldValueInvalid", at + "." + p, "must be a path starting with $");
      }
    }
    if (type == "Task") {
      if (state.value("Resource", "").empty()) {
        addCause(out, "FieldValueRequired", at + ".Resource",
                 "Required value: the Function to call");
      }
    } else if (type == "Choice") {
      const json choices = state.value("Choices", json());
      if (!choices.is_array() || choices.empty()) {
        addCause(out, "FieldValueRequired", at + ".Choices",
                 "Required value: a non-empty list of rules");
      } else {
        for (size_t i = 0; i < choices.size(); ++i) {
          validateRule(choices[i], at + ".Choices[" + std::to_string(i) + "]", true, states, out);
        }
      }
      const std::string def = state.value("Default", "");
      if (!def.empty() && !states.contains(def)) {
        addCause(out, "FieldValueNotFound", at + ".Default",
                 "Not found: \"" + def + "\": no such state");
      }
    } else if (type == "Parallel") {
      const json branches = state.value("Branches", json());
      if (!branches.is_array() || branches.empty()) {
        addCause(out, "FieldValueRequired", at + ".Branches",
                 "Required value: a non-empty list of {StartAt, States}");
      } else {
        for (size_t i = 0; i < branches.size(); ++i) {
          auto sub = validateStateMachine(branches[i], at + ".Branches[" + std::to_string(i) + "]");
          out.insert(out.end(), sub.begin(), sub.end());
        }
      }
    } else if (type == "Map") {
      const char* key = state.contains("ItemProcessor") ? "ItemProcessor" : "Iterator";
      if (!state.contains(key)) {
        addCause(out, "FieldValueRequired", at + ".ItemProcessor",
                 "Required value: the {StartAt, States} each item runs (or Iterator)");
      } else {
        auto sub = validateStateMachine(state[key], at + "." + key);
        out.insert(out.end(), sub.begin(), sub.end());
      }
    } else if (type == "Wait") {
      int given = 0;
      for (const char* k : {"Seconds", "SecondsPath", "Timestamp", "TimestampPath"}) {
        given += state.contains(k) ? 1 : 0;
      }
      if (given != 1) {
        addCause(out, "FieldValueInvalid", at,
                 "a Wait state has exactly one of Seconds, SecondsPath, Timestamp, TimestampPath");
      } else if (state.contains("Seconds") &&
                 (!state["Seconds"].is_number() || state["Seconds"].get<double>() < 0)) {
        addCause(out, "FieldValueInvalid", at + ".Seconds", "must be a number >= 0");
      }
    }
    if (type == "Task" || type == "Parallel" || type == "Map") {
      validateRetryCatch(state, at, states, out);
    } else {
      for (const char* k : {"Retry", "Catch"}) {
        if (state.contains(k)) {
          addCause(out, "FieldValueForbidden", at + "." + k,
                   std::string(k) + " is for Task, Parallel and Map states");
        }
      }
    }
  }
  return out;
}

json workflowExecution(const std::string& ns, const std::string& workflow, const json& input,
                       const std::string& name) {
  json meta = {{"namespace", ns}, {"labels", {{kWorkflowLabel, workflow}}}};
  if (name.empty()) {
    // Names are at most 63 characters in labels' world; keep room for the 5 random ones.
    meta["generateName"] = workflow.substr(0, 57) + "-";
  } else {
    meta["name"] = name;
  }
  return {{"apiVersion", kApiVersion},
          {"kind", "WorkflowExecution"},
          {"metadata", meta},
          {"spec", {{"workflowRef", {{"name", workflow}}}, {"input", input}}}};
}

Result<json> startWorkflowExecution(client::RestClient& rest, const std::string& ns,
                                    const std::string& workflow, const json& input,
                                    const std::string& name) {
  return rest.create(kWorkflowExecutions, ns, workflowExecution(ns, workflow, input, name));
}

bool executionFinished(const json& execution) {
  const json phase = valueAt(execution, "/status/phase", json());
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace minik8s::serverless
