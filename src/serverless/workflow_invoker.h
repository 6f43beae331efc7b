// GatewayInvoker: how the workflow engine calls a Task's Function: POST /function/NS/NAME to the
// serverless gateway, as `minik8s function invoke` does (the gateway Service's NodePort on a
// Ready node's InternalIP, found through the API; or a URL given). The gateway's activator holds
// a call while the Function starts from zero, so a cold start is only a slower call.
//
// Answers become TaskOutcomes: 200 -> the JSON body; 500 from a handler that raised -> error =
// the exception's type (ValueError), cause = its message; 504 or no answer within the timeout ->
// States.Timeout; anything else -> States.TaskFailed with the status and body. A gateway that
// cannot be reached is asked again every second for up to 30 s before the call fails (the call
// never reached it, so nothing ran twice). Thread-safe: one connection per call.
#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <string>

#include "client/rest_client.h"
#include "common/http_client.h"
#include "serverless/workflow_engine.h"

namespace minik8s::serverless {

// A gateway answer (or the failure to get one) as a Task's outcome.
TaskOutcome taskOutcomeFromResponse(const Result<http::Response>& response);

class GatewayInvoker : public TaskInvoker {
 public:
  // `gatewayUrl` empty: found with gatewayNodeUrl (serverless/function.h) (again after a failure to
  // connect).
  explicit GatewayInvoker(client::RestClient& rest, std::string gatewayUrl = "");
  TaskOutcome invoke(const std::string& ns, const std::string& function, const json& input,
                     std::chrono::milliseconds timeout) override;
  // Ends the calls in flight and refuses new ones (the controller is stopping).
  void cancelAll();

 private:
  Result<std::string> url();

  client::RestClient& rest_;
  const std::string fixedUrl_;
  std::mutex mu_;
  std::string foundUrl_;
  std::set<http::Client*> active_;
  bool cancelled_ = false;
};

}  // namespace minik8s::serverless
