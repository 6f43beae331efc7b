#include "cli/mesh_command.h"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/api_client_flags.h"
#include "cli/stop_signals.h"
#include "client/kubeconfig.h"
#include "common/command.h"
#include "common/http_client.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "mesh/config_watcher.h"
#include "mesh/interception.h"
#include "mesh/mesh_config.h"
#include "mesh/proxy/sidecar_proxy.h"
#include "mesh/rollout.h"
#include "mesh/rollout_cluster.h"
#include "mesh/workload_certificate.h"

// Helpers in a namespace of their own: cli/ is a unity build.
namespace minik8s::cli::mesh_cmd {

namespace {

[[noreturn]] void fatal(const Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  std::exit(1);
}

// In a pod: the service account; elsewhere --kubeconfig, --server, $KUBECONFIG or the server's.
client::ClientConfig configFor(ApiClientFlags& flags, bool inCluster) {
  if (inCluster) {
    auto config = flags.clientConfigOrInCluster();
    if (!config.ok()) fatal(config.status());
    return *config;
  }
  if (flags.kubeconfig.empty() && flags.server.empty()) {
    const char* env = std::getenv("KUBECONFIG");
    flags.kubeconfig = env ? env : "/var/lib/minik8s/server/kubeconfig";
  }
  auto config = flags.clientConfig();
  if (!config.ok()) fatal(config.status());
  return *config;
}

std::vector<json> listAll(client::RestClient& rest, const client::Resource& r, bool required) {
  auto list = rest.list(r, "");
  if (!list.ok()) {
    if (required) fatal(list.status());
    return {};  // the rules' CRDs are not installed yet
  }
  return list->value("items", json::array()).get<std::vector<json>>();
}

struct ServicesFlags {
  ApiClientFlags api;
  std::string ns, output;
};

void printServices(const mesh::MeshConfig& config, const std::string& ns) {
  std::printf("%-12s %-20s %-16s %-16s %s\n", "NAMESPACE", "NAME", "VIRTUAL-IP", "PORTS",
              "ENDPOINTS");
  for (const auto& [key, svc] : config.services) {
    if (!ns.empty() && svc.ns != ns) continue;
    std::string ports, endpoints;
    for (const auto& p : svc.ports) {
      ports += (ports.empty() ? "" : ",") + std::to_string(p.port) + "/" +
               (p.appProtocol.empty() ? p.protocol : p.appProtocol);
      for (const auto& e : p.endpoints) {
        std::string version;
        if (auto v = e.labels.find("version"); v != e.labels.end()) version = "(" + v->second + ")";
        endpoints += (endpoints.empty() ? "" : ",") + e.ip + ":" + std::to_string(e.port) + version;
      }
    }
    std::printf("%-12s %-20s %-16s %-16s %s\n", svc.ns.c_str(), svc.name.c_str(),
                svc.clusterIP.empty() ? "<none>" : svc.clusterIP.c_str(), ports.c_str(),
                endpoints.empty() ? "<none>" : endpoints.c_str());
  }
}

void addServicesCommand(CLI::App& mesh) {
  auto f = std::make_shared<ServicesFlags>();
  auto* cmd = mesh.add_subcommand(
      "services", "List every service with its virtual IP, ports and endpoints (the registry)");
  cmd->add_option("-n,--namespace", f->ns, "only this namespace");
  cmd->add_option("-o,--output", f->output, "json for the whole registry as JSON");
  f->api.addTo(cmd);
  cmd->callback([f] {
    client::RestClient rest(configFor(f->api, false));
    namespace res = client::resources;
    auto config = mesh::buildMeshConfig(
        listAll(rest, res::kServices, true), listAll(rest, res::kEndpoints, true),
        listAll(rest, res::kPods, true), listAll(rest, mesh::kVirtualServices, false),
        listAll(rest, mesh::kDestinationRules, false),
        listAll(rest, mesh::kPeerAuthentications, false), 0);
    if (f->output == "json") {
      std::cout << mesh::meshConfigToJson(*config).dump(2) << "\n";
    } else {
      printServices(*config, f->ns);
    }
  });
}

struct RolloutFlags {
  ApiClientFlags api;
  std::string ns = "default", service, image, version, container;
  std::string interval = "10s";
  mesh::RolloutOptions options;
};

std::chrono::milliseconds durationFlag(const std::string& flag, const std::string& value) {
  auto d = parseGoDuration(value);
  if (!d || d->count() <= 0) {
    fatal(Status::BadRequest("invalid value \"" + value + "\" for " + flag +
                             ": want a duration such as 10s, 1m or 500ms"));
  }
  return *d;
}

void addRolloutCommand(CLI::App& mesh) {
  auto f = std::make_shared<RolloutFlags>();
  auto* cmd = mesh.add_subcommand(
      "rollout",
      "Roll a meshed service out to a new image: the new version starts beside the old one, "
      "traffic moves to it by --step every --interval while the old one is scaled down, and "
      "it rolls back by itself when the new version's 5xx rate passes --max-error-rate");
  cmd->add_option("service", f->service, "The Service whose Deployment is rolled out")->required();
  cmd->add_option("--image", f->image, "The new version's image")->required();
  cmd->add_option("-n,--namespace", f->ns, "The service's namespace")->capture_default_str();
  cmd->add_option("--step", f->options.stepPercent, "Percent of the traffic moved per step")
      ->capture_default_str();
  cmd->add_option("--interval", f->interval, "How long each step is watched")
      ->capture_default_str();
  cmd->add_option("--max-error-rate", f->options.maxErrorRate,
                  "Roll back when the new version's 5xx answers over its requests in a step "
                  "pass this fraction")
      ->capture_default_str();
  cmd->add_option("--min-requests", f->options.minRequests,
                  "Requests a step needs before it may be judged early")
      ->capture_default_str();
  cmd->add_option("--version", f->version,
                  "The new version's `version` label (default: the image's tag)");
  cmd->add_option("--container", f->container, "The container to update (default: the first)");
  f->api.addTo(cmd);
  cmd->callback([f] {
    f->options.interval = durationFlag("--interval", f->interval);
    f->options.checkEvery = std::min(f->options.interval, std::chrono::milliseconds(1000));
    if (Status s = mesh::validateRolloutOptions(f->options); !s.ok()) fatal(s);
    // Ctrl-C (or SIGTERM) rolls back instead of leaving both versions half way.
    sigset_t signals = blockStopSignals();
    client::ClientConfig config = configFor(f->api, false);
    client::RestClient rest(config);
    mesh::ApiRolloutTarget target(rest, {.ns = f->ns,
                                         .service = f->service,
                                         .image = f->image,
                                         .version = f->version,
                                         .container = f->container});
    if (Status s = target.resolve(); !s.ok()) fatal(s);
    mesh::ExecRolloutMetrics metrics(config, rest, f->ns, f->service, target.newVersion());
    mesh::RealRolloutClock clock;
    const auto start = std::chrono::steady_clock::now();
    auto report = [start](const std::string& line) {
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("[%6.1fs] %s\n", t, line.c_str());
      std::fflush(stdout);
    };
    report("rollout of " + f->ns + "/" + f->service + ": " + target.oldDeployment() + " (" +
           target.oldVersion() + ") -> " + target.newDeployment() + " (" + target.newVersion() +
           ", " + f->image + ")");
    mesh::Rollout rollout(f->options, target, metrics, clock, report);
    std::thread([&rollout, &report, signals] {
      int sig = waitForStopSignal(signals);
      report("signal " + std::to_string(sig) + ": rolling back");
      rollout.cancel();
    }).detach();
    mesh::RolloutResult r = rollout.run();
    std::printf("%s: %s\n", mesh::rolloutPhaseName(r.phase), r.reason.c_str());
    std::exit(r.phase == mesh::RolloutPhase::kSucceeded ? 0 : 1);
  });
}

void addProxyMetricsCommand(CLI::App& app) {
  auto port = std::make_shared<int>(15090);
  auto* cmd = app.add_subcommand(
      "mesh-proxy-metrics",
      "Print the local sidecar's metrics (what `mesh rollout` reads through pods/exec)");
  cmd->add_option("--metrics-port", *port)->capture_default_str();
  cmd->callback([port] {
    http::Client client("http://127.0.0.1:" + std::to_string(*port));
    auto res = client.get("/metrics");
    if (!res.ok()) fatal(res.status());
    if (res->status != 200)
      fatal(Status::Unavailable("metrics answered " + std::to_string(res->status)));
    std::cout << res->body;
  });
}

struct ProxyFlags {
  ApiClientFlags api;
  mesh::ProxyOptions options;
  std::string drain = "3s";
  int certTtlSeconds = static_cast<int>(mesh::kDefaultWorkloadCertTtl.count());
  std::string serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
  bool mtls = true;
};

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The pod's default gateways (the node's address on the pod network) from /proc/net/route.
std::vector<std::string> defaultGateways() {
  std::vector<std::string> out;
  std::ifstream in("/proc/net/route");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string iface, destination, gateway;
    fields >> iface >> destination >> gateway;
    if (destination != "00000000" || gateway.size() != 8) continue;
    unsigned long g = std::stoul(gateway, nullptr, 16);  // little-endian
    out.push_back(std::to_string(g & 0xff) + "." + std::to_string((g >> 8) & 0xff) + "." +
                  std::to_string((g >> 16) & 0xff) + "." + std::to_string((g >> 24) & 0xff));
  }
  return out;
}

// The workload's SPIFFE identity from its service-account token, and the CSR loop feeding the
// proxy its certificate (mesh/workload_certificate.h); null (plain text only) outside a pod.
std::unique_ptr<mesh::WorkloadCertificateManager> startIdentity(ProxyFlags& f,
                                                                client::RestClient& rest,
                                                                mesh::SidecarProxy& proxy) {
  if (!f.mtls) return nullptr;
  std::string token = readWholeFile(f.serviceAccountDir + "/token");
  std::string ca = readWholeFile(f.serviceAccountDir + "/ca.crt");
  auto id = mesh::workloadOfToken(token);
  if (!id.ok() || ca.empty()) {
    LOG_WARN("mesh identity: no service account token or ca.crt under {} ({}): plain text only",
             f.serviceAccountDir, id.ok() ? "no ca.crt" : id.status().message());
    return nullptr;
  }
  mesh::WorkloadCertificateOptions o;
  o.id = *id;
  o.podName = f.options.podName;
  o.caPem = ca;
  o.ttl = std::chrono::seconds(f.certTtlSeconds);
  auto manager = std::make_unique<mesh::WorkloadCertificateManager>(
      rest, o, [&proxy](const mesh::WorkloadCredentials& c) {
        if (Status s = proxy.setCredentials(c); !s.ok()) LOG_WARN("mesh identity: {}", s.message());
      });
  manager->start();
  return manager;
}

void addProxyCommand(CLI::App& app) {
  auto f = std::make_shared<ProxyFlags>();
  auto* cmd = app.add_subcommand("mesh-proxy", "Run the mesh sidecar (what a meshed pod runs)");
  cmd->add_option("--outbound-port", f->options.outboundPort)->capture_default_str();
  cmd->add_option("--inbound-port", f->options.inboundPort)->capture_default_str();
  cmd->add_option("--metrics-port", f->options.metricsPort)->capture_default_str();
  cmd->add_option("--drain-duration", f->drain,
                  "After SIGTERM, keep serving this long (the pod's endpoints go first, as "
                  "Istio's terminationDrainDuration)")
      ->capture_default_str();
  cmd->add_option("--cert-ttl-seconds", f->certTtlSeconds,
                  "Validity the workload certificate is asked for (renewed at half of it)")
      ->capture_default_str();
  cmd->add_option("--service-account-dir", f->serviceAccountDir)->capture_default_str();
  cmd->add_flag("!--no-mtls", f->mtls, "No workload certificate: plain text only");
  f->api.addTo(cmd);
  cmd->callback([f] {
    initLogging("info", "mesh-proxy");
    auto drain = parseGoDuration(f->drain);
    if (!drain) fatal(Status::BadRequest("--drain-duration: \"" + f->drain + "\" is no duration"));
    sigset_t signals = blockStopSignals();
    client::RestClient rest(configFor(f->api, true));
    if (const char* ns = std::getenv("POD_NAMESPACE")) f->options.podNamespace = ns;
    if (const char* name = std::getenv("POD_NAME")) f->options.podName = name;
    f->options.probeSources = defaultGateways();
    mesh::SidecarProxy proxy(f->options);
    mesh::ConfigWatcher watcher(rest, [&proxy](std::shared_ptr<const mesh::MeshConfig> c) {
      LOG_INFO("mesh config version {}: {} services", c->version, c->services.size());
      proxy.setConfig(std::move(c));
    });
    if (Status s = proxy.start(); !s.ok()) fatal(s);
    watcher.start();
    auto identity = startIdentity(*f, rest, proxy);
    int sig = waitForStopSignal(signals);
    if (sig == SIGTERM && drain->count() > 0) {
      // The pod is terminating: its endpoints are being removed and the callers' sidecars stop
      // choosing it within ~50 ms; requests already on their way still need this one.
      LOG_INFO("signal {}: draining for {} ms", sig, drain->count());
      std::this_thread::sleep_for(*drain);
    }
    LOG_INFO("signal {}: stopping the mesh proxy", sig);
    if (identity) identity->stop();
    watcher.stop();
    proxy.stop();
  });
}

struct InitFlags {
  mesh::InterceptionOptions options;
  std::string iptablesRestore = "iptables-restore";
  bool print = false;
};

void addInitCommand(CLI::App& app) {
  auto f = std::make_shared<InitFlags>();
  auto* cmd = app.add_subcommand(
      "mesh-init", "Install the pod's iptables redirection to its sidecar (the init container)");
  cmd->add_option("--outbound-port", f->options.outboundPort)->capture_default_str();
  cmd->add_option("--inbound-port", f->options.inboundPort)->capture_default_str();
  cmd->add_option("--proxy-uid", f->options.proxyUid)->capture_default_str();
  cmd->add_option("--exclude-inbound-ports", f->options.excludeInboundPorts)
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--iptables-restore", f->iptablesRestore)->capture_default_str();
  cmd->add_flag("--print", f->print, "print the rules instead of installing them");
  cmd->callback([f] {
    std::string rules = mesh::interceptionRules(f->options);
    if (f->print) {
      std::cout << rules;
      return;
    }
    auto r = runChecked({f->iptablesRestore, "--noflush"}, rules);
    if (!r.ok()) fatal(r.status());
    std::cout << "mesh-init: outbound to :" << f->options.outboundPort
              << ", inbound to :" << f->options.inboundPort << ", UID " << f->options.proxyUid
              << " excluded\n";
  });
}

}  // namespace

}  // namespace minik8s::cli::mesh_cmd

namespace minik8s::cli {

void addMeshCommands(CLI::App& app) {
  auto* mesh = app.add_subcommand("mesh", "The service mesh: registry and rules");
  mesh->require_subcommand(1);
  mesh_cmd::addServicesCommand(*mesh);
  mesh_cmd::addRolloutCommand(*mesh);
  mesh_cmd::addProxyCommand(app);
  mesh_cmd::addProxyMetricsCommand(app);
  mesh_cmd::addInitCommand(app);
}

}  // namespace minik8s::cli
