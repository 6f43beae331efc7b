// Workflows (serverless.minik8s.io/v1): a `Workflow` is a state machine in the shape of AWS Step
// Functions' states language (StartAt, States: Task, Choice, Parallel, Map, Pass, Wait, Succeed,
// Fail, with Retry and Catch); a `WorkflowExecution` (short name wfx) is one run of it: its input
// in the spec, its phase, output, error and one record per step in the status. The workflow
// controller (controllers/workflow) runs executions with the engine of workflow_engine.h.
//
// Starting a workflow from anywhere (the CLI, the gateway, an event trigger) is creating a
// WorkflowExecution: workflowExecution() builds one, startWorkflowExecution() creates it.
//
// This header holds the two CustomResourceDefinitions (installed by the workflow controller at
// start) and the definition checks a schema cannot make (validateStateMachine: unknown Next,
// missing StartAt, a state without Next or End, bad Choice rules; every problem with its field
// path). Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::serverless {

extern const client::Resource kWorkflows;           // serverless.minik8s.io/v1 workflows
extern const client::Resource kWorkflowExecutions;  // serverless.minik8s.io/v1 workflowexecutions
// On a WorkflowExecution: the Workflow it runs (also spec.workflowRef.name), for label selectors.
inline constexpr const char* kWorkflowLabel = "serverless.minik8s.io/workflow";

json workflowCrd();
json workflowExecutionCrd();
// Makes sure both CRDs exist and match (created or updated).
Status ensureWorkflowCrds(client::RestClient& rest);

// Every problem of a state machine ({StartAt, States}) with its field path under `path` (e.g.
// "spec.States[Check].Choices[0].Next"); empty when it can run. Cycles are allowed, as in ASL.
std::vector<Cause> validateStateMachine(const json& machine, const std::string& path = "spec");

// A WorkflowExecution of `workflow` in `ns` with `input`, named `name` or, when empty,
// generated from the workflow's name (metadata.generateName "<workflow>-").
json workflowExecution(const std::string& ns, const std::string& workflow, const json& input,
                       const std::string& name = "");
// Creates it: the seam for anything that starts a workflow (CLI, gateway, triggers). Returns
// the stored object (its generated name).
Result<json> startWorkflowExecution(client::RestClient& rest, const std::string& ns,
                                    const std::string& workflow, const json& input,
                                    const std::string& name = "");

// An execution's phase is final (Succeeded or Failed).
bool executionFinished(const json& execution);

}  // namespace minik8s::serverless
