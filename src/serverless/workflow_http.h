// Starting a workflow over HTTP on the serverless gateway:
//   POST /workflow/<namespace>/<name>[?wait=false][&timeout=SECONDS]
// creates a WorkflowExecution of that Workflow with the request's JSON body as its input (empty:
// {}), then waits for its end (at most `timeout`, default 300 s) and answers
//   200 with the execution's output (header X-Workflow-Execution: its name);
//   500 {"error", "cause", "execution"} when it failed;
//   202 {"execution", "phase"} with wait=false, or when the wait ran out;
//   400 for a body that is not JSON, 404 for a missing Workflow, the API's error otherwise.
// Thread-safe: one blocking request per caller's thread (the gateway serves each connection on
// its own).
#pragma once

#include <string>

#include "client/rest_client.h"
#include "common/http.h"

namespace minik8s::serverless {

bool isWorkflowRequest(const std::string& path);
void serveWorkflowRequest(client::RestClient& rest, const http::Request& req,
                          http::ResponseWriter& w);

}  // namespace minik8s::serverless
