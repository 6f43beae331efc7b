#include "cli/serverless_command.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "api/object_meta.h"
#include "cli/api_client_flags.h"
#include "cli/exit_error.h"
#include "cli/stop_signals.h"
#include "client/kubeconfig.h"
#include "common/base64.h"
#include "common/command.h"
#include "common/file_util.h"
#include "common/http_client.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/random.h"
#include "common/time_util.h"
#include "serverless/cloud_event.h"
#include "serverless/function.h"
#include "serverless/gateway.h"
#include "serverless/trigger.h"
#include "serverless/trigger_file_watcher.h"

// Helpers in a namespace of their own: cli/ is a unity build, other command files have their
// own die() and friends.
namespace minik8s::cli::serverless_cmd {

namespace fs = std::filesystem;
namespace sl = serverless;

namespace {

constexpr size_t kMaxCodeBytes = 1000 * 1000;  // the ConfigMap must stay under 1 MiB

// Checks the code as the runtime will load it: argv = [path, handler, kind (py|zip)]. Prints
// what is wrong (Python's own SyntaxError text, with the line) and exits 1.
constexpr const char* kCheckScript = R"PY(
import ast, sys, traceback, zipfile
path, handler, kind = sys.argv[1], sys.argv[2], sys.argv[3]
module, _, func = handler.rpartition(".")

def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)

def check(source, filename):
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as e:
        fail("".join(traceback.format_exception_only(type(e), e)).rstrip())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    if func not in names:
        fail(f"{filename}: no function {func} at the top level (the handler is {handler})")

if kind == "zip":
    try:
        bundle = zipfile.ZipFile(path)
    except zipfile.BadZipFile as e:
        fail(f"{path}: {e}")
    members = bundle.namelist()
    for name in members:
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
            fail(f"{path}: member {name!r} points outside the bundle")
    if sum(i.file_size for i in bundle.infolist()) > 64 * 1024 * 1024:
        fail(f"{path}: over 64 MiB uncompressed")
    base = module.replace(".", "/")
    found = next((m for m in (base + ".py", base + "/__init__.py") if m in members), None)
    if found is None:
        fail(f"{path}: no module {module} in the bundle (want {base}.py or {base}/__init__.py)")
    check(bundle.read(found), f"{path}:{found}")
else:
    with open(path, "rb") as f:
        check(f.read(), path)
)PY";

struct DeployFlags {
  ApiClientFlags api;
  std::string name, file, handler, ns = "default", scaleToZeroAfter;
  int minScale = -1, maxScale = -1, targetConcurrency = -1, timeoutSeconds = -1;
  bool update = false;  // `function update`: the Function must exist; its handler is kept
  bool wait = false;    // wait until the new revision has rolled out
  int waitSeconds = 120;
};

// The code as the ConfigMap NAME-code holds it: a .py file under its own name, a zip as
// bundle.zip. Checked with python3 first.
json codeConfigMap(const DeployFlags& f, const std::string& handler, const std::string& code,
                   bool zip) {
  auto checked = runProgram({"python3", "-c", kCheckScript, f.file, handler, zip ? "zip" : "py"});
  if (!checked.ok()) {
    exitWithError(
        Status::Unavailable("python3 is needed to check the code: " + checked.status().message()));
  }
  if (checked->exitCode != 0) {
    std::cerr << "error: " << f.file << " refused:\n" << checked->output;
    std::exit(1);
  }
  json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata",
              {{"name", f.name + "-code"},
               {"namespace", f.ns},
               {"labels", {{sl::kFunctionLabel, f.name}}}}}};
  if (zip) {
    cm["binaryData"] = {{"bundle.zip", base64::encode(code)}};
  } else {
    cm["data"] = {{fs::path(f.file).filename().string(), code}};
  }
  return cm;
}

void deploy(DeployFlags& f) {
  if (f.update) {
    client::RestClient rest(valueOrExit(f.api.clientConfigOrLocal()));
    auto got = rest.get(sl::kFunctions, f.ns, f.name);
    if (!got.ok()) {
      if (got.status().code() == 404) {
        exitWithError(
            Status::NotFoundMessage("function " + f.ns + "/" + f.name +
                                    " not found: create it with `minik8s function deploy`"));
      }
      exitWithError(got.status());
    }
    if (f.handler.empty()) f.handler = api::stringAt(*got, "/spec/handler");
  }
  auto code = readFile(f.file);
  if (!code.ok()) exitWithError(code.status());
  const bool zip = code->size() >= 4 && code->compare(0, 4, "PK\x03\x04") == 0;
  const std::string stem = fs::path(f.file).stem().string();
  if (!zip && fs::path(f.file).extension() != ".py") {
    exitWithError(Status::BadRequest("--file " + f.file + ": want a Python file (.py) or a zip"));
  }
  if (code->size() > kMaxCodeBytes) {
    exitWithError(
        Status::BadRequest(fmt::format("--file {}: {} bytes, at most {} (a ConfigMap's limit)",
                                       f.file, code->size(), kMaxCodeBytes)));
  }
  std::string handler = f.handler;
  if (handler.empty()) {
    if (zip) exitWithError(Status::BadRequest("--handler module.function is required with a zip"));
    handler = stem + ".handle";
  }
  if (Status s = sl::validateHandler(handler, "--handler"); !s.ok()) exitWithError(s);
  if (!zip && handler.substr(0, handler.rfind('.')) != stem) {
    exitWithError(Status::BadRequest("--handler " + handler + ": the module of " + f.file + " is " +
                                     stem + " (e.g. --handler " + stem + ".handle)"));
  }
  json cm = codeConfigMap(f, handler, *code, zip);

  client::RestClient rest(valueOrExit(f.api.clientConfigOrLocal()));
  const auto& configMaps = client::resources::kConfigMaps;
  auto stored = rest.create(configMaps, f.ns, cm);
  if (!stored.ok() && stored.status().code() == 409) {
    auto old = rest.get(configMaps, f.ns, f.name + "-code");
    if (old.ok()) cm["metadata"]["resourceVersion"] = (*old)["metadata"]["resourceVersion"];
    stored = rest.update(configMaps, cm);
  }
  if (!stored.ok()) exitWithError(stored.status());

  json spec = {{"handler", handler}, {"code", {{"configMap", f.name + "-code"}}}};
  json scale = json::object();
  if (f.minScale >= 0) scale["minScale"] = f.minScale;
  if (f.maxScale >= 0) scale["maxScale"] = f.maxScale;
  if (f.targetConcurrency >= 0) scale["targetConcurrency"] = f.targetConcurrency;
  if (!f.scaleToZeroAfter.empty()) scale["scaleToZeroAfter"] = f.scaleToZeroAfter;
  if (!scale.empty()) spec["scale"] = scale;
  if (f.timeoutSeconds >= 0) spec["timeoutSeconds"] = f.timeoutSeconds;
  // The code's hash on the Function: new code is a change of the Function (a new revision)
  // even when the spec stays the same.
  json annotations = {{"serverless.minik8s.io/code-hash", sl::stableHash(*code)}};
  json fn = {{"apiVersion", sl::kApiVersion},
             {"kind", "Function"},
             {"metadata", {{"name", f.name}, {"namespace", f.ns}, {"annotations", annotations}}},
             {"spec", spec}};
  auto created = rest.create(sl::kFunctions, f.ns, fn);
  std::string verb = "created";
  if (!created.ok() && created.status().code() == 409) {
    created = rest.patch(sl::kFunctions, f.ns, f.name,
                         {{"metadata", {{"annotations", annotations}}}, {"spec", spec}});
    verb = "configured";
  }
  if (!created.ok()) exitWithError(created.status());
  std::cout << "function.serverless.minik8s.io/" << f.name << " " << verb << " (handler " << handler
            << ", " << (zip ? "bundle.zip" : fs::path(f.file).filename().string())
            << " in configmap/" << f.name << "-code)\n";
  if (!f.wait) return;
  // The new revision is out when the status names the code's revision and the Deployment has
  // finished its rollout (no instance of the old template left).
  const std::string revision = api::stringAt(*stored, "/metadata/resourceVersion");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(f.waitSeconds);
  for (;;) {
    auto fn = rest.get(sl::kFunctions, f.ns, f.name);
    auto dep = rest.get(client::resources::kDeployments, f.ns, sl::deploymentName(f.name));
    if (fn.ok() && dep.ok() && api::stringAt(*fn, "/status/codeRevision") == revision) {
      const int want = valueAt(*dep, "/spec/replicas", 0);
      const bool observed = valueAt(*dep, "/status/observedGeneration", int64_t{0}) >=
                            valueAt(*dep, "/metadata/generation", int64_t{0});
      if (observed && valueAt(*dep, "/status/updatedReplicas", 0) >= want &&
          valueAt(*dep, "/status/replicas", 0) <= want) {
        std::cout << "revision " << revision << " rolled out (" << want << " instance(s))\n";
        return;
      }
    }
    if (std::chrono::steady_clock::now() >= until) {
      exitWithError(Status::Timeout(
          fmt::format("revision {} not rolled out within {} s", revision, f.waitSeconds)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

Result<std::string> gatewayUrl(client::RestClient& rest) { return sl::gatewayNodeUrl(rest); }

// The instances of a Function, oldest first.
std::vector<json> functionPods(client::RestClient& rest, const std::string& ns,
                               const std::string& name) {
  client::ListParams p;
  p.labelSelector = std::string(sl::kFunctionLabel) + "=" + name;
  auto pods = rest.list(client::resources::kPods, ns, p);
  if (!pods.ok()) exitWithError(pods.status());
  std::vector<json> out = pods->value("items", json::array());
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return api::stringAt(a, "/metadata/creationTimestamp") <
           api::stringAt(b, "/metadata/creationTimestamp");
  });
  return out;
}

struct LogsFlags {
  ApiClientFlags api;
  std::string name, ns = "default";
  bool follow = false, prefix = false;
  int tail = -1;
};

// Prints one pod's log (followed with -f until it ends), each line prefixed with
// "[pod] " when asked. Lines of several pods do not interleave within a line.
void printPodLog(const client::ClientConfig& config, const LogsFlags& f, const std::string& pod,
                 std::mutex& out) {
  std::string target = "/api/v1/namespaces/" + f.ns + "/pods/" + pod + "/log?container=function";
  if (f.tail >= 0) target += "&tailLines=" + std::to_string(f.tail);
  if (f.follow) target += "&follow=true";
  const std::string server = config.servers.substr(0, config.servers.find(','));
  http::ClientTimeouts t = config.timeouts;
  t.deadPeer = std::chrono::hours(24);
  http::Client client(server, config.tls, t);
  std::vector<std::pair<std::string, std::string>> headers;
  if (!config.bearerToken.empty()) {
    headers.emplace_back("Authorization", "Bearer " + config.bearerToken);
  }
  const std::string label = f.prefix ? "[pod/" + pod + "] " : "";
  std::string pending;
  auto flushLines = [&](bool all) {
    size_t nl;
    std::lock_guard lock(out);
    while ((nl = pending.find('\n')) != std::string::npos) {
      std::cout << label << pending.substr(0, nl + 1);
      pending.erase(0, nl + 1);
    }
    if (all && !pending.empty()) std::cout << label << pending << "\n";
    std::cout.flush();
  };
  auto r = client.stream(
      "GET", target,
      [&](std::string_view chunk) {
        pending.append(chunk);
        flushLines(false);
        return true;
      },
      headers);
  if (r.ok() && r->status >= 400) {
    std::lock_guard lock(out);
    std::cerr << "error: " << pod << ": HTTP " << r->status << "\n";
  }
  flushLines(true);
}

void addFunctionCommand(CLI::App& app) {
  auto* fn = app.add_subcommand("function",
                                "Serverless Functions: deploy, update, invoke, logs, delete, list");
  fn->require_subcommand(1);

  auto df = std::make_shared<DeployFlags>();
  auto* deployCmd =
      fn->add_subcommand("deploy", "Create or update a Function from a .py file or a zip");
  deployCmd->add_option("name", df->name, "The Function")->required();
  deployCmd->add_option("--file", df->file, "handler.py, or bundle.zip (modules, packages)")
      ->required();
  deployCmd->add_option("--handler", df->handler,
                        "module.function (default for a .py file: <file name>.handle)");
  deployCmd->add_option("-n,--namespace", df->ns, "Namespace");
  deployCmd->add_option("--min-scale", df->minScale, "Fewest instances (default 0)");
  deployCmd->add_option("--max-scale", df->maxScale, "Most instances (default 10)");
  deployCmd->add_option("--target-concurrency", df->targetConcurrency,
                        "In-flight requests per instance (default 10)");
  deployCmd->add_option("--scale-to-zero-after", df->scaleToZeroAfter,
                        "Idle time before the last instance goes (default 30s)");
  deployCmd->add_option("--timeout", df->timeoutSeconds, "Request timeout in seconds (default 30)");
  df->api.addTo(deployCmd);
  deployCmd->callback([df] { deploy(*df); });

  struct InvokeFlags {
    ApiClientFlags api;
    std::string name, ns = "default", data, gateway;
  };
  auto inv = std::make_shared<InvokeFlags>();
  auto* invoke = fn->add_subcommand("invoke", "POST JSON to a Function through the gateway");
  invoke->add_option("name", inv->name, "The Function")->required();
  invoke->add_option("-n,--namespace", inv->ns, "Namespace");
  invoke->add_option("--data", inv->data, "The JSON body, or @FILE");
  invoke->add_option("--gateway", inv->gateway,
                     "The gateway's URL (default: its NodePort on a Ready node)");
  inv->api.addTo(invoke);
  invoke->callback([inv] {
    std::string body = inv->data;
    if (!body.empty() && body[0] == '@') {
      auto text = readFile(body.substr(1));
      if (!text.ok()) exitWithError(text.status());
      body = *text;
    }
    std::string url = inv->gateway;
    if (url.empty()) {
      client::RestClient rest(valueOrExit(inv->api.clientConfigOrLocal()));
      auto found = gatewayUrl(rest);
      if (!found.ok()) exitWithError(found.status());
      url = *found;
    }
    http::ClientTimeouts t;
    t.request = std::chrono::minutes(15);
    http::Client client(url, {}, t);
    auto r = client.request("POST", "/function/" + inv->ns + "/" + inv->name, body,
                            {{"Content-Type", "application/json"}});
    if (!r.ok()) exitWithError(r.status());
    std::cout << r->body << (r->body.empty() || r->body.back() == '\n' ? "" : "\n");
    if (r->status >= 400) {
      std::cerr << "error: HTTP " << r->status << "\n";
      std::exit(1);
    }
  });

  auto uf = std::make_shared<DeployFlags>();
  uf->update = true;
  auto* updateCmd = fn->add_subcommand(
      "update", "New code for an existing Function: a new revision rolls out (no failed request)");
  updateCmd->add_option("name", uf->name, "The Function")->required();
  updateCmd->add_option("--file", uf->file, "handler.py, or bundle.zip")->required();
  updateCmd->add_option("--handler", uf->handler, "module.function (default: the Function's)");
  updateCmd->add_option("-n,--namespace", uf->ns, "Namespace");
  updateCmd->add_flag("--wait", uf->wait, "Wait until the new revision has rolled out");
  updateCmd->add_option("--wait-timeout", uf->waitSeconds, "Seconds --wait waits (default 120)");
  uf->api.addTo(updateCmd);
  updateCmd->callback([uf] { deploy(*uf); });

  auto lf = std::make_shared<LogsFlags>();
  auto* logsCmd = fn->add_subcommand(
      "logs",
      "The logs of a Function's instances (print() output, tracebacks), as kubectl logs -l");
  logsCmd->add_option("name", lf->name, "The Function")->required();
  logsCmd->add_option("-n,--namespace", lf->ns, "Namespace");
  logsCmd->add_flag("-f,--follow", lf->follow,
                    "Follow the logs, of instances that start later too (Ctrl-C to stop)");
  logsCmd->add_option("--tail", lf->tail, "Lines of each instance's log (default: all)");
  logsCmd->add_flag("--prefix", lf->prefix, "Prefix each line with its pod (default with >1)");
  lf->api.addTo(logsCmd);
  logsCmd->callback([lf] {
    const client::ClientConfig config = valueOrExit(lf->api.clientConfigOrLocal());
    client::RestClient rest(config);
    if (auto fnObj = rest.get(sl::kFunctions, lf->ns, lf->name); !fnObj.ok())
      exitWithError(fnObj.status());
    std::vector<json> pods = functionPods(rest, lf->ns, lf->name);
    if (pods.size() > 1) lf->prefix = true;
    std::mutex out;
    if (!lf->follow) {
      if (pods.empty()) {
        std::cerr << "function " << lf->name << " has no instance (scaled to zero)\n";
        return;
      }
      for (const auto& pod : pods) printPodLog(config, *lf, api::nameOf(pod), out);
      return;
    }
    // Follow every instance, and the ones the autoscaler starts later (a Function at zero has
    // none until its next request).
    lf->prefix = true;
    std::set<std::string> followed;
    std::vector<std::thread> threads;
    for (;;) {
      for (const auto& pod : functionPods(rest, lf->ns, lf->name)) {
        const std::string name = api::nameOf(pod);
        const std::string phase = api::stringAt(pod, "/status/phase");
        if (followed.count(name) ||
            (phase != "Running" && phase != "Succeeded" && phase != "Failed")) {
          continue;
        }
        followed.insert(name);
        threads.emplace_back([config, flags = *lf, name, &out] {
          std::mutex& m = out;
          printPodLog(config, flags, name, m);
        });
        threads.back().detach();
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });

  struct NameFlags {
    ApiClientFlags api;
    std::string name, ns = "default";
  };
  auto del = std::make_shared<NameFlags>();
  auto* remove = fn->add_subcommand("delete", "Delete a Function (its instances go with it)");
  remove->add_option("name", del->name, "The Function")->required();
  remove->add_option("-n,--namespace", del->ns, "Namespace");
  del->api.addTo(remove);
  remove->callback([del] {
    client::RestClient rest(valueOrExit(del->api.clientConfigOrLocal()));
    auto r = rest.remove(sl::kFunctions, del->ns, del->name);
    if (!r.ok()) exitWithError(r.status());
    auto cm = rest.get(client::resources::kConfigMaps, del->ns, del->name + "-code");
    if (cm.ok() && api::labelValue(*cm, sl::kFunctionLabel) == del->name) {
      (void)rest.remove(client::resources::kConfigMaps, del->ns, del->name + "-code");
    }
    std::cout << "function.serverless.minik8s.io \"" << del->name << "\" deleted\n";
  });

  auto ls = std::make_shared<NameFlags>();
  auto* list = fn->add_subcommand("list", "The Functions of a namespace");
  list->add_option("-n,--namespace", ls->ns, "Namespace");
  ls->api.addTo(list);
  list->callback([ls] {
    client::RestClient rest(valueOrExit(ls->api.clientConfigOrLocal()));
    auto items = rest.list(sl::kFunctions, ls->ns);
    if (!items.ok()) exitWithError(items.status());
    std::cout << fmt::format("{:<24} {:<20} {:>5}  {:<14} {}\n", "NAME", "HANDLER", "READY",
                             "REASON", "URL");
    for (const auto& f : items->value("items", json::array())) {
      std::string reason;
      for (const auto& c : valueAt(f, "/status/conditions", json::array())) {
        if (c.value("type", "") == "Ready") reason = c.value("reason", "");
      }
      std::cout << fmt::format(
          "{:<24} {:<20} {:>5}  {:<14} {}\n", api::nameOf(f), api::stringAt(f, "/spec/handler"),
          valueAt(f, "/status/readyReplicas", 0), reason, api::stringAt(f, "/status/url"));
    }
  });
}

void addGatewayCommand(CLI::App& app) {
  struct Flags {
    ApiClientFlags api;
    std::string listen = "0.0.0.0:8080";
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "serverless-gateway",
      "Run the serverless gateway, activator and autoscaler (what the serverless addon's pod "
      "runs)");
  cmd->add_option("--listen", f->listen, "host:port to serve Functions on")->capture_default_str();
  f->api.addTo(cmd);
  cmd->callback([f] {
    initLogging("info", "serverless-gateway");
    sigset_t signals = blockStopSignals();
    auto config = f->api.clientConfigOrInCluster();
    if (!config.ok()) exitWithError(config.status());
    client::RestClient rest(*config);
    sl::GatewayOptions options;
    options.listen = f->listen;
    sl::Gateway gateway(rest, sl::restScaler(rest), options);
    if (Status s = gateway.start(); !s.ok()) exitWithError(s);
    int sig = waitForStopSignal(signals);
    LOG_INFO("signal {}: stopping the serverless gateway", sig);
    gateway.stop();
  });
}

void addFileWatcherCommand(CLI::App& app) {
  struct Flags {
    std::string dir, pattern = "*", events = "created,modified", interval = "1s", url, source;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "serverless-file-watcher",
      "Post a CloudEvent for each file created or changed under a directory (what a file "
      "Trigger's watcher pod runs)");
  cmd->add_option("--dir", f->dir, "The directory to watch (and below it)")->required();
  cmd->add_option("--pattern", f->pattern, "A glob on file names")->capture_default_str();
  cmd->add_option("--events", f->events, "created, modified or both")->capture_default_str();
  cmd->add_option("--interval", f->interval, "How often to scan")->capture_default_str();
  cmd->add_option("--url", f->url, "Where to POST each event (the gateway's /trigger/NS/NAME)")
      ->required();
  cmd->add_option("--source", f->source, "The events' source attribute");
  cmd->callback([f] {
    initLogging("info", "serverless-file-watcher");
    sigset_t signals = blockStopSignals();
    auto interval = parseGoDuration(f->interval);
    if (!interval || interval->count() <= 0) {
      exitWithError(
          Status::BadRequest("--interval " + f->interval + ": want a duration such as 1s"));
    }
    const bool created = f->events.find("created") != std::string::npos;
    const bool modified = f->events.find("modified") != std::string::npos;
    const std::string source = f->source.empty() ? "minik8s-file-watcher" : f->source;
    const size_t pathStart = f->url.find('/', f->url.find("://") + 3);
    const std::string base = f->url.substr(0, pathStart);
    const std::string target = pathStart == std::string::npos ? "/" : f->url.substr(pathStart);
    std::atomic<bool> stop{false};
    std::thread signalWaiter([&] {
      int sig = waitForStopSignal(signals);
      LOG_INFO("signal {}: stopping", sig);
      stop = true;
    });
    signalWaiter.detach();
    sl::DirectorySnapshot last = sl::snapshotDirectory(f->dir, f->pattern);
    LOG_INFO("watching {} ({}; {} file(s) there now) every {} ms, posting to {}", f->dir,
             f->pattern, last.size(), interval->count(), f->url);
    http::ClientTimeouts t;
    t.connect = std::chrono::seconds(2);
    t.request = std::chrono::seconds(10);
    while (!stop) {
      std::this_thread::sleep_for(*interval);
      sl::DirectorySnapshot now = sl::snapshotDirectory(f->dir, f->pattern);
      for (const auto& change : sl::diffSnapshots(last, now)) {
        if ((change.created && !created) || (!change.created && !modified)) continue;
        sl::CloudEvent e;
        e.id = newUid();
        e.source = source;
        e.type = change.created ? sl::kFileCreatedEventType : sl::kFileModifiedEventType;
        e.subject = change.path;
        e.time = formatRfc3339(Clock::now());
        e.data = {{"path", change.path},
                  {"size", change.size},
                  {"event", change.created ? "created" : "modified"}};
        auto headers = sl::toBinaryHeaders(e);
        headers.emplace_back("Content-Type", "application/json");
        for (int attempt = 1; attempt <= 5 && !stop; ++attempt) {
          http::Client client(base, {}, t);
          auto r = client.request("POST", target, e.data.dump(), headers);
          if (r.ok() && r->status < 500) {
            LOG_INFO("{} {}: HTTP {}", e.type, change.path, r->status);
            break;
          }
          LOG_WARN("{} {}: attempt {} failed: {}", e.type, change.path, attempt,
                   r.ok() ? "HTTP " + std::to_string(r->status) : r.status().message());
          std::this_thread::sleep_for(std::chrono::seconds(attempt));
        }
      }
      last = std::move(now);
    }
  });
}

}  // namespace

}  // namespace minik8s::cli::serverless_cmd

namespace minik8s::cli {

void addServerlessCommands(CLI::App& app) {
  serverless_cmd::addFunctionCommand(app);
  serverless_cmd::addGatewayCommand(app);
  serverless_cmd::addFileWatcherCommand(app);
}

}  // namespace minik8s::cli
