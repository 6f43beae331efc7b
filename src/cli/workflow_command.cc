#include "cli/workflow_command.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "api/object_meta.h"
#include "cli/api_client_flags.h"
#include "cli/exit_error.h"
#include "common/file_util.h"
#include "common/json_pointer.h"
#include "common/time_util.h"
#include "common/yaml_json.h"
#include "serverless/workflow.h"

// Helpers in a namespace of their own: cli/ is a unity build.
namespace minik8s::cli::workflow_cmd {

namespace sl = serverless;

namespace {

struct RunFlags {
  ApiClientFlags api;
  std::string workflow, ns = "default", data, name, timeout = "10m";
  bool wait = false;
};

void run(RunFlags& f) {
  json input = json::object();
  std::string text = f.data;
  if (!text.empty() && text[0] == '@') {
    auto file = readFile(text.substr(1));
    if (!file.ok()) exitWithError(file.status());
    text = *file;
  }
  if (!text.empty()) {
    input = json::parse(text, nullptr, false);
    if (input.is_discarded()) exitWithError(Status::BadRequest("--data: not JSON: " + text));
  }
  const auto limit = parseGoDuration(f.timeout);
  if (!limit)
    exitWithError(Status::BadRequest("--timeout " + f.timeout + ": want a duration such as 5m"));
  client::RestClient rest(valueOrExit(f.api.clientConfigOrLocal()));
  auto created = sl::startWorkflowExecution(rest, f.ns, f.workflow, input, f.name);
  if (!created.ok()) exitWithError(created.status());
  const std::string name = api::nameOf(*created);
  if (!f.wait) {
    std::cout << "workflowexecution.serverless.minik8s.io/" << name << " created\n";
    return;
  }
  std::cerr << "workflowexecution.serverless.minik8s.io/" << name << " created\n";
  const auto end = std::chrono::steady_clock::now() + *limit;
  while (true) {
    auto x = rest.get(sl::kWorkflowExecutions, f.ns, name);
    if (!x.ok() && x.status().code() == 404) exitWithError(x.status());
    if (x.ok() && sl::executionFinished(*x)) {
      const json status = (*x)["status"];
      if (status.value("phase", "") == "Succeeded") {
        std::cout << status.value("output", json()).dump() << "\n";
        return;
      }
      std::cerr << "error: workflow execution " << name << " failed: " << status.value("error", "")
                << ": " << status.value("cause", "") << "\n";
      std::exit(1);
    }
    if (std::chrono::steady_clock::now() > end) {
      exitWithError(Status::Timeout("workflow execution " + name + " still running after " +
                                    f.timeout + " (kubectl describe wfx " + name + ")"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void validate(const std::string& file) {
  auto text = readFile(file);
  if (!text.ok()) exitWithError(text.status());
  auto docs = parseYamlDocuments(*text);
  if (!docs.ok()) exitWithError(docs.status());
  int problems = 0, workflows = 0;
  for (const auto& doc : *docs) {
    if (!doc.is_object() || doc.value("kind", "") != "Workflow") continue;
    ++workflows;
    const std::string name = valueAt(doc, "/metadata/name", std::string("?"));
    for (const auto& c : sl::validateStateMachine(doc.value("spec", json()), "spec")) {
      std::cerr << "workflow " << name << ": " << c.field << ": " << c.message << "\n";
      ++problems;
    }
    if (problems == 0) std::cout << "workflow " << name << ": valid\n";
  }
  if (workflows == 0) exitWithError(Status::BadRequest(file + ": no kind: Workflow in it"));
  if (problems > 0) std::exit(1);
}

}  // namespace

}  // namespace minik8s::cli::workflow_cmd

namespace minik8s::cli {

void addWorkflowCommands(CLI::App& app) {
  using namespace workflow_cmd;  // NOLINT(google-build-using-namespace)
  auto* wf = app.add_subcommand("workflow", "Serverless workflows: run an execution, validate");
  wf->require_subcommand(1);

  auto rf = std::make_shared<RunFlags>();
  auto* runCmd =
      wf->add_subcommand("run", "Start an execution of a Workflow (a WorkflowExecution)");
  runCmd->add_option("name", rf->workflow, "The Workflow")->required();
  runCmd->add_option("--data", rf->data, "The input: JSON, or @FILE (default {})");
  runCmd->add_option("-n,--namespace", rf->ns, "Namespace");
  runCmd->add_option("--name", rf->name, "The execution's name (default: generated NAME-xxxxx)");
  runCmd->add_flag("--wait", rf->wait, "Wait for the end; print the output (or the error, exit 1)");
  runCmd->add_option("--timeout", rf->timeout, "With --wait: the longest wait")
      ->capture_default_str();
  rf->api.addTo(runCmd);
  runCmd->callback([rf] { run(*rf); });

  auto file = std::make_shared<std::string>();
  auto* validateCmd =
      wf->add_subcommand("validate", "Check Workflows in a YAML file as the engine will");
  validateCmd->add_option("-f,--filename", *file, "The YAML file")->required();
  validateCmd->callback([file] { validate(*file); });
}

}  // namespace minik8s::cli
