#include "serverless/workflow_invoker.h"

#include <fmt/format.h>

#include <thread>

#include "common/logging.h"
#include "serverless/function.h"

namespace minik8s::serverless {

using std::chrono::milliseconds;

TaskOutcome taskOutcomeFromResponse(const Result<http::Response>& response) {
  TaskOutcome out;
  if (!response.ok()) {
    out.error = response.status().code() == 504 ? "States.Timeout" : "States.TaskFailed";
    out.cause = response.status().message();
    return out;
  }
  const http::Response& r = *response;
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded()) body = r.body;
  if (r.status == 200) {
    out.ok = true;
    out.output = std::move(body);
    return out;
  }
  if (r.status == 500 && body.is_object() && body.contains("type") && body["type"].is_string()) {
    out.error = body["type"].get<std::string>();  // the handler raised
    out.cause = body.value("error", "");
    return out;
  }
  out.error = r.status == 504 ? "States.Timeout" : "States.TaskFailed";
  std::string text = r.body;
  if (text.size() > 512) text = text.substr(0, 512) + "...";
  while (!text.empty() && text.back() == '\n') text.pop_back();
  out.cause = fmt::format("HTTP {}: {}", r.status, text);
  return out;
}

GatewayInvoker::GatewayInvoker(client::RestClient& rest, std::string gatewayUrl)
    : rest_(rest), fixedUrl_(std::move(gatewayUrl)) {}

Result<std::string> GatewayInvoker::url() {
  if (!fixedUrl_.empty()) return fixedUrl_;
  {
    std::lock_guard lock(mu_);
    if (!foundUrl_.empty()) return foundUrl_;
  }
  auto found = gatewayNodeUrl(rest_);
  if (!found.ok()) return found;
  std::lock_guard lock(mu_);
  foundUrl_ = *found;
  return foundUrl_;
}

void GatewayInvoker::cancelAll() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  for (http::Client* c : active_) c->close();
}

TaskOutcome GatewayInvoker::invoke(const std::string& ns, const std::string& function,
                                   const json& input, milliseconds timeout) {
  const std::string target = "/function/" + ns + "/" + function;
  const std::string body = input.dump();
  Result<http::Response> response = Status::Unavailable("not called");
  for (int tries = 0;; ++tries) {
    {
      std::lock_guard lock(mu_);
      if (cancelled_) return {false, nullptr, "States.TaskFailed", "the engine is stopping"};
    }
    auto base = url();
    if (base.ok()) {
      http::ClientTimeouts t;
      // The gateway answers 504 after the Function's timeoutSeconds (at most 900 s).
      t.request = timeout.count() > 0 ? timeout : milliseconds(910'000);
      http::Client client(*base, {}, t);
      {
        std::lock_guard lock(mu_);
        active_.insert(&client);
      }
      response = client.request("POST", target, body, {{"Content-Type", "application/json"}});
      std::lock_guard lock(mu_);
      active_.erase(&client);
      if (response.ok() || !http::neverReachedServer(response.status()) || cancelled_) break;
      if (fixedUrl_.empty()) foundUrl_.clear();  // look for a Ready node again
    } else {
      response = base.status();
    }
    if (tries >= 30) break;
    LOG_WARN("workflow: cannot reach the gateway for {}/{}: {} (retrying)", ns, function,
             response.status().toString());
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (!response.ok() && response.status().code() == 504 && timeout.count() > 0) {
    return {
        false, nullptr, "States.Timeout",
        fmt::format("no answer within the Task's TimeoutSeconds ({} s)", timeout.count() / 1000)};
  }
  return taskOutcomeFromResponse(response);
}

}  // namespace minik8s::serverless
