#include "serverless/workflow_http.h"

#include <chrono>
#include <thread>

#include "api/object_meta.h"
#include "serverless/workflow.h"

namespace minik8s::serverless {

namespace {

constexpr const char* kWorkflowPrefix = "/workflow/";

http::Response workflowAnswer(int code, const json& body, const std::string& execution = "") {
  http::Response r = http::Response::json(code, body);
  if (!execution.empty()) r.headers.emplace_back("X-Workflow-Execution", execution);
  return r;
}

http::Response workflowError(int code, const std::string& message) {
  return workflowAnswer(code, {{"error", message}});
}

}  // namespace

bool isWorkflowRequest(const std::string& path) { return path.rfind(kWorkflowPrefix, 0) == 0; }

void serveWorkflowRequest(client::RestClient& rest, const http::Request& req,
                          http::ResponseWriter& w) {
  const std::string rest_of = req.path.substr(std::string(kWorkflowPrefix).size());
  const size_t slash = rest_of.find('/');
  const std::string ns = slash == std::string::npos ? "" : rest_of.substr(0, slash);
  const std::string name = slash == std::string::npos ? "" : rest_of.substr(slash + 1);
  if (ns.empty() || name.empty() || name.find('/') != std::string::npos) {
    return w.send(workflowError(404, "use POST /workflow/<namespace>/<name>"));
  }
  if (req.method != "POST") {
    return w.send(workflowError(405, "method " + req.method + " not allowed: use POST"));
  }
  json input = json::object();
  if (!req.body.empty()) {
    input = json::parse(req.body, nullptr, false);
    if (input.is_discarded()) return w.send(workflowError(400, "the body is not JSON"));
  }
  int timeoutSeconds = 300;
  if (auto t = req.param("timeout")) {
    try {
      timeoutSeconds = std::stoi(*t);
    } catch (const std::exception&) {
      return w.send(workflowError(400, "timeout: want a number of seconds"));
    }
  }
  const bool wait = req.param("wait").value_or("true") != "false";
  if (!rest.get(kWorkflows, ns, name).ok()) {
    return w.send(workflowError(404, "workflow " + ns + "/" + name + " not found"));
  }
  auto created = startWorkflowExecution(rest, ns, name, input);
  if (!created.ok()) {
    return w.send(workflowError(created.status().code(), created.status().message()));
  }
  const std::string execution = api::nameOf(*created);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  json phase = "Pending";
  while (wait && std::chrono::steady_clock::now() < end && !w.clientGone()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto x = rest.get(kWorkflowExecutions, ns, execution);
    if (!x.ok()) continue;
    const json status = x->value("status", json::object());
    phase = status.value("phase", json("Pending"));
    if (phase == "Succeeded") {
      return w.send(workflowAnswer(200, status.value("output", json()), execution));
    }
    if (phase == "Failed") {
      return w.send(workflowAnswer(500,
                                   {{"error", status.value("error", "")},
                                    {"cause", status.value("cause", "")},
                                    {"execution", execution}},
                                   execution));
    }
  }
  w.send(workflowAnswer(202, {{"execution", execution}, {"phase", phase}}, execution));
}

}  // namespace minik8s::serverless
