#include "cli/server_command.h"

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <map>

#include "api/scheme.h"
#include "apiserver/admission/admission_chain.h"
#include "apiserver/admission_lister.h"
#include "apiserver/api_server.h"
#include "apiserver/auth/authorization.h"
#include "apiserver/auth/bootstrap_policy.h"
#include "apiserver/auth/node_authorizer.h"
#include "apiserver/auth/node_restriction.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/auth/review_handlers.h"
#include "apiserver/auth/service_account_admission.h"
#include "apiserver/auth/service_account_token.h"
#include "apiserver/auth/static_token_authenticator.h"
#include "apiserver/join_token.h"
#include "apiserver/kubeconfig.h"
#include "apiserver/server_pki.h"
#include "apiserver/serving_cert_rotation.h"
#include "cli/controller_flags.h"
#include "cli/flags_file.h"
#include "cli/stop_signals.h"
#include "client/in_process_server.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "common/cidr.h"
#include "common/http.h"
#include "common/logging.h"
#include "common/tls.h"
#include "controllers/manager/controller_manager.h"
#include "csi/directory_driver.h"
#include "monitoring/custom_metrics_api.h"
#include "monitoring/discovery_service.h"
#include "scheduler/scheduler.h"
#include "storage/store.h"

namespace minik8s::cli {

namespace {

// Where the API server serves Prometheus' HTTP service discovery (monitoring/).
constexpr const char* kServiceDiscoveryPath = "/monitoring/sd";

struct ServerFlags {
  std::string configFile;
  std::string dataDir = "/var/lib/minik8s/server";
  std::string listen = "0.0.0.0:6443";
  std::string datastore;  // default: sqlite in the data dir
  std::string advertise;  // host clients use; default 127.0.0.1
  std::string logLevel = "info";
  std::string servingCertDuration = "8760h0m0s";  // --serving-cert-duration
  // Where the custom metrics API queries Prometheus; default: the NodePort of Service
  // monitoring/prometheus on a Ready node (the monitoring addon).
  std::string prometheusUrl;
  std::string schedulerPolicy = "default";
  std::string serviceClusterIPRange = "10.96.0.0/16";
  std::string token;  // node join token; default: <data-dir>/token, created at first start
  bool disableScheduler = false;
  bool disableControllers = false;
  bool leaderElect = true;
  bool insecureHttp = false;  // debugging only: plain HTTP, bearer tokens only
  std::vector<std::string> enableAdmissionPlugins, disableAdmissionPlugins;
  std::string admissionControlConfigFile;
  controllers::ControllerDurationFlags durations;
  // The built-in directory CSI driver's volumes (a filesystem every node mounts at the same
  // path); empty: no built-in driver, no default StorageClass.
  std::string csiVolumesDir;
  // No CSIDriver local.csi.minik8s.io and StorageClass local-path (the agents' node-local
  // storage).
  bool disableLocalStorage = false;
  bool mesh = false;
  // Overload protection (apiserver/flow_control.h), kube-apiserver's flags and defaults.
  int maxRequestsInflight = 400;
  int maxMutatingRequestsInflight = 200;
};

// A CSIDriver object for one of the built-in drivers (no attach, no pod info, persistent).
json builtinCsiDriver(const std::string& name) {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "CSIDriver"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"attachRequired", false},
            {"podInfoOnMount", false},
            {"volumeLifecycleModes", {"Persistent"}}}}};
}

// The built-in drivers' CSIDriver objects and StorageClasses, each created once (an
// administrator's later changes, such as another default class, are kept): with `shared`, the
// directory driver and the default class "standard" on it; with `local`, the node-local driver
// every agent serves and the class "local-path" on it (WaitForFirstConsumer: the scheduler
// picks the node, the volume is made there).
Status ensureBuiltinStorage(apiserver::Registry& registry, bool shared, bool local) {
  const api::Scheme& scheme = registry.scheme();
  const auto* drivers = scheme.byResource("storage.k8s.io", "v1", "csidrivers");
  const auto* classes = scheme.byResource("storage.k8s.io", "v1", "storageclasses");
  if (!drivers || !classes) return Status::Internal("the scheme has no storage.k8s.io resources");
  std::vector<std::pair<const api::ResourceInfo*, json>> objects;
  if (shared) {
    objects.emplace_back(drivers, builtinCsiDriver(csi::kDirectoryDriverName));
    objects.emplace_back(
        classes,
        json{{"apiVersion", "storage.k8s.io/v1"},
             {"kind", "StorageClass"},
             {"metadata",
              {{"name", "standard"},
               {"annotations", {{"storageclass.kubernetes.io/is-default-class", "true"}}}}},
             {"provisioner", csi::kDirectoryDriverName},
             {"reclaimPolicy", "Delete"},
             {"volumeBindingMode", "Immediate"},
             {"allowVolumeExpansion", true}});
  }
  if (local) {
    objects.emplace_back(drivers, builtinCsiDriver(csi::kLocalDriverName));
    objects.emplace_back(classes, json{{"apiVersion", "storage.k8s.io/v1"},
                                       {"kind", "StorageClass"},
                                       {"metadata", {{"name", "local-path"}}},
                                       {"provisioner", csi::kLocalDriverName},
                                       {"reclaimPolicy", "Delete"},
                                       {"volumeBindingMode", "WaitForFirstConsumer"}});
  }
  for (const auto& [info, obj] : objects) {
    auto existing = registry.get(*info, "", obj["metadata"]["name"]);
    if (existing.ok()) continue;
    if (existing.status().code() != 404) return existing.status();
    auto created = registry.create(*info, "", obj);
    if (!created.ok() && created.status().reason() != "AlreadyExists") return created.status();
  }
  return Status::Ok();
}

// The first address of the service range: the `kubernetes` service's ClusterIP, which pods use
// to reach this server (so it is a SAN of the serving certificate).
std::string kubernetesServiceIp(const std::string& range) {
  auto cidr = parseCidr(range);
  return cidr ? formatIpv4(cidr->base + 1) : "10.96.0.1";
}

// A client of this server for one of its own components (scheduler, controllers, monitoring):
// in-process (client/in_process_server.h), as `user` - the subject of a client certificate - when
// the server runs TLS, or with the admin token when it runs without (the identity each had over
// the socket). The URL and a certificate of `user` stay for what cannot go in-process (pods/exec
// of the meshrollout controller, over WebSocket).
Result<client::ClientConfig> loopbackConfig(const std::string& url, const apiserver::ServerPki& pki,
                                            const std::string& user, const std::string& adminToken,
                                            std::shared_ptr<client::InProcessServer> inProcess) {
  client::ClientConfig config;
  config.servers = url;
  config.inProcess = std::move(inProcess);
  if (url.rfind("https://", 0) != 0) {
    config.bearerToken = adminToken;
    return config;
  }
  auto cert = apiserver::issueClientCertificate(pki, user, {});
  if (!cert.ok()) return cert.status();
  config.tls.caPem = pki.ca.certPem;
  config.tls.certPem = cert->certPem;
  config.tls.keyPem = cert->keyPem;
  config.inProcessIdentity = http::PeerCertificate{user, {}, true};
  return config;
}

int runServer(const ServerFlags& f) {
  // Blocked before any thread starts (the etcd client starts gRPC's threads), so that every
  // thread inherits the mask: SIGHUP re-issues the serving certificate (below) and must never
  // reach a thread that would take its default action and end the process.
  sigset_t signals = blockStopSignals();
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  initLogging(f.logLevel, "server");
  std::error_code ec;
  std::filesystem::create_directories(f.dataDir, ec);
  if (ec) {
    LOG_ERROR("cannot create data dir {}: {}", f.dataDir, ec.message());
    return 1;
  }
  std::string datastore = f.datastore.empty() ? "sqlite://" + f.dataDir + "/state.db" : f.datastore;
  auto store = storage::openStore(datastore);
  if (!store.ok()) {
    LOG_ERROR("cannot open datastore {}: {}", datastore, store.status().message());
    return 1;
  }
  auto servingValidity =
      controllers::parseDurationFlag("--serving-cert-duration", f.servingCertDuration);
  if (!servingValidity.ok() || servingValidity->count() < 1000) {
    LOG_ERROR("--serving-cert-duration: a positive duration of at least 1s, got \"{}\"",
              f.servingCertDuration);
    return 2;
  }

  std::string host = f.advertise.empty() ? "127.0.0.1" : f.advertise;
  std::string listenHost = f.listen.substr(0, f.listen.rfind(':'));
  apiserver::ServerPkiOptions pkiOptions;
  pkiOptions.dataDir = f.dataDir;
  pkiOptions.servingValidity = std::chrono::duration_cast<std::chrono::seconds>(*servingValidity);
  pkiOptions.ipAddresses = {host, kubernetesServiceIp(f.serviceClusterIPRange)};
  if (!listenHost.empty() && listenHost != "0.0.0.0") pkiOptions.ipAddresses.push_back(listenHost);
  auto pki = apiserver::loadOrCreateServerPki(pkiOptions);
  if (!pki.ok()) {
    LOG_ERROR("cannot set up the server certificates: {}", pki.status().message());
    return 1;
  }
  // The admin's bearer token: the kubeconfig's credential when the server runs without TLS.
  auto adminToken = apiserver::loadOrCreateSecretFile(pki->dir + "/admin.token");
  if (!adminToken.ok()) {
    LOG_ERROR("{}", adminToken.status().message());
    return 1;
  }

  // Bind first: the advertised address needs the bound port. Until the API server is ready
  // requests get 503.
  std::atomic<apiserver::ApiServer*> ready{nullptr};
  const http::Handler topLevel = [&ready](const http::Request& req, http::ResponseWriter& w) {
    if (auto* api = ready.load()) return api->handle(req, w);
    w.send(http::Response::error(Status::Unavailable("the API server is starting")));
  };
  http::Server server(topLevel);
  // This server's own components reach it through the same handler, without a socket.
  auto inProcess = std::make_shared<client::InProcessServer>();
  inProcess->setHandler(topLevel);
  if (!f.insecureHttp) {
    http::TlsServerConfig tls;
    // By file: a re-issued certificate reaches new connections (serving_cert_rotation.h).
    tls.certPem = http::kFileReference + pki->dir + "/apiserver.crt";
    tls.keyPem = http::kFileReference + pki->dir + "/apiserver.key";
    tls.clientCaPem = pki->ca.certPem;  // client certificates are optional: tokens work too
    if (Status t = server.enableTls(tls); !t.ok()) {
      LOG_ERROR("cannot serve TLS: {}", t.message());
      return 1;
    }
  } else {
    LOG_WARN("--insecure-http: serving plain HTTP; credentials travel in clear text");
  }
  Status s = server.start(f.listen);
  if (!s.ok()) {
    LOG_ERROR("{}", s.message());
    return 1;
  }
  const std::string scheme = f.insecureHttp ? "http://" : "https://";
  const std::string address = host + ":" + std::to_string(server.port());
  apiserver::ApiServerOptions opts;
  opts.advertiseAddress = address;
  opts.serviceClusterIPRange = f.serviceClusterIPRange;
  opts.flowControl.maxRequestsInflight = f.maxRequestsInflight;
  opts.flowControl.maxMutatingRequestsInflight = f.maxMutatingRequestsInflight;
  auto token = loadOrCreateJoinToken(f.dataDir, f.token, pki->ca.certPem);
  if (!token.ok()) {
    LOG_ERROR("{}", token.status().message());
    return 1;
  }
  auto joinToken = parseJoinToken(*token);
  if (!joinToken.ok()) {
    LOG_ERROR("join token: {}", joinToken.status().message());
    return 1;
  }

  // Security: who (client certificates, the join token, service-account tokens, the admin
  // token), may they (Node authorizer, then RBAC), and admission (service accounts, node
  // restriction). The auth components read objects through their own Registry on the store.
  const api::Scheme& scheme_ = api::Scheme::builtin();
  apiserver::Registry authRegistry(**store, scheme_);
  auto tokenGenerator = std::make_shared<const apiserver::auth::ServiceAccountTokenGenerator>(
      apiserver::auth::kServiceAccountIssuer, pki->serviceAccountKey);
  apiserver::auth::UserInfo admin{"kubernetes-admin", "", {apiserver::auth::kSystemMasters}, {}};
  opts.tokenAuthenticators = {
      std::make_shared<apiserver::JoinTokenAuthenticator>(*joinToken),
      std::make_shared<apiserver::auth::StaticTokenAuthenticator>(
          std::map<std::string, apiserver::auth::UserInfo>{{*adminToken, admin}}),
      std::make_shared<apiserver::auth::ServiceAccountTokenAuthenticator>(
          apiserver::auth::kServiceAccountIssuer, std::vector<std::string>{pki->serviceAccountPub},
          authRegistry)};
  opts.allowAnonymous = false;
  // What the pods bound to each node reference, for the node authorizer (from a pod watch through
  // the watch cache, started with it below; until then every answer comes from the registry).
  auto nodeGraph = std::make_shared<apiserver::auth::NodeGraph>(authRegistry);
  auto authorizer = std::make_shared<apiserver::auth::UnionAuthorizer>(
      std::vector<std::shared_ptr<apiserver::auth::Authorizer>>{
          std::make_shared<apiserver::auth::NodeAuthorizer>(&authRegistry, nodeGraph),
          apiserver::auth::RbacAuthorizer::fromRegistry(authRegistry)});
  opts.authorizer = authorizer;
  opts.createOnlyHandlers = apiserver::auth::reviewHandlers(authorizer, opts.tokenAuthenticators);
  opts.createOnlyHandlers["serviceaccounts/token"] =
      apiserver::auth::makeTokenRequestHandler(authRegistry, tokenGenerator);
  apiserver::admission::AdmissionPluginConfigs admissionConfigs;
  if (!f.admissionControlConfigFile.empty()) {
    auto read = apiserver::admission::readAdmissionConfiguration(f.admissionControlConfigFile);
    if (!read.ok()) {
      LOG_ERROR("--admission-control-config-file: {}", read.status().message());
      return 1;
    }
    admissionConfigs = std::move(read.value());
  }
  // --mesh: every application namespace is meshed unless labelled istio-injection=disabled.
  if (f.mesh) admissionConfigs["MeshSidecarInjection"]["enableNamespacesByDefault"] = true;
  auto admissionLister = std::make_shared<apiserver::AdmissionLister>(authRegistry);
  auto admissionChain = apiserver::admission::buildAdmissionChain(
      apiserver::admission::selectAdmissionPlugins(f.enableAdmissionPlugins,
                                                   f.disableAdmissionPlugins),
      authRegistry, admissionConfigs, admissionLister);
  if (!admissionChain.ok()) {
    LOG_ERROR("admission plugins: {}", admissionChain.status().message());
    return 1;
  }
  opts.admissionPlugins = std::move(admissionChain.value());
  opts.caPem = pki->ca.certPem;
  http::TlsClientConfig agentTls;
  agentTls.caPem = pki->ca.certPem;
  agentTls.certPem = pki->kubeletClient.certPem;
  agentTls.keyPem = pki->kubeletClient.keyPem;
  opts.nodeProxy.agentTls = agentTls;
  // Prometheus' service discovery and the custom metrics API (monitoring/): mounted now, set up
  // below once this server listens; their informers start at the first request.
  struct Monitoring {
    std::shared_ptr<monitoring::ClusterCache> cache;
    std::unique_ptr<monitoring::DiscoveryService> discovery;
    std::unique_ptr<monitoring::CustomMetricsApi> customMetrics;
  };
  auto monitoringSlot = std::make_shared<std::atomic<std::shared_ptr<Monitoring>>>();
  const auto starting = [](http::ResponseWriter& w) {
    w.send(http::Response::error(Status::Unavailable("monitoring is starting")));
  };
  opts.pathHandlers[kServiceDiscoveryPath] = [monitoringSlot, starting](const http::Request& req,
                                                                        http::ResponseWriter& w) {
    if (auto m = monitoringSlot->load()) return m->discovery->serve(req, w);
    starting(w);
  };
  opts.pathHandlers[monitoring::CustomMetricsApi::kPrefix] =
      [monitoringSlot, starting](const http::Request& req, http::ResponseWriter& w) {
        if (auto m = monitoringSlot->load()) return m->customMetrics->serve(req, w);
        starting(w);
      };
  apiserver::ApiServer api(**store, scheme_, opts);
  // A create's namespace (it exists, it is not Terminating) is read where the admission plugins
  // read namespaces, as kube-apiserver's NamespaceLifecycle: one store round trip less per create.
  if (const auto* nsInfo = scheme_.byResource("", "v1", "namespaces")) {
    api.registry().setNamespaceReader([admissionLister, nsInfo](const std::string& ns) {
      return admissionLister->get(*nsInfo, "", ns);
    });
  }
  s = api.start();
  if (!s.ok()) {
    LOG_ERROR("cannot start the API server: {}", s.toString());
    return 1;
  }
  nodeGraph->start(&api.watchCache());
  // The graph follows the watch cache: it stops before `api` on every way out of here.
  struct StopGraph {
    std::shared_ptr<apiserver::auth::NodeGraph> graph;
    ~StopGraph() { graph->stop(); }
  } stopGraph{nodeGraph};
  if (Status p = apiserver::auth::ensureBootstrapPolicy(api.registry()); !p.ok()) {
    LOG_ERROR("cannot create the default RBAC policy: {}", p.toString());
    return 1;
  }
  ready = &api;

  // The scheduler and the controllers are API clients like any other (they could run as their
  // own processes: `minik8s scheduler`, `minik8s controller-manager`); by default they run here.
  // Reach our own listener: its host unless it listens on every address.
  std::string selfHost = listenHost;
  if (selfHost.empty() || selfHost == "0.0.0.0") selfHost = "127.0.0.1";
  const std::string selfUrl = scheme + selfHost + ":" + std::to_string(server.port());
  auto schedulerConfig =
      loopbackConfig(selfUrl, *pki, "system:kube-scheduler", *adminToken, inProcess);
  auto controllersConfig =
      loopbackConfig(selfUrl, *pki, "system:kube-controller-manager", *adminToken, inProcess);
  if (!schedulerConfig.ok() || !controllersConfig.ok()) {
    LOG_ERROR("cannot issue the scheduler's and controllers' certificates");
    return 1;
  }
  client::RestClient schedulerRest(*schedulerConfig);
  client::RestClient rest(*controllersConfig);
  // One informer per resource for the scheduler, the controllers and monitoring: each object is
  // listed, watched, decoded and kept once in this process, not once per component. They read
  // as the controller-manager, which may read everything; each component writes as itself.
  client::SharedInformers informers(rest);
  auto monitoringConfig =
      loopbackConfig(selfUrl, *pki, "system:minik8s-monitoring", *adminToken, inProcess);
  if (!monitoringConfig.ok()) {
    LOG_ERROR("cannot issue the service discovery's certificate");
    return 1;
  }
  auto monitoringParts = std::make_shared<Monitoring>();
  monitoringParts->cache =
      std::make_shared<monitoring::ClusterCache>(*monitoringConfig, &informers);
  monitoringParts->discovery =
      std::make_unique<monitoring::DiscoveryService>(monitoringParts->cache, kServiceDiscoveryPath);
  std::weak_ptr<const monitoring::ClusterCache> weakCache = monitoringParts->cache;
  std::string prometheusUrl = f.prometheusUrl;
  auto prometheus = std::make_shared<monitoring::HttpPrometheusClient>(
      [weakCache, prometheusUrl]() -> Result<std::string> {
        if (!prometheusUrl.empty()) return prometheusUrl;
        auto cache = weakCache.lock();
        if (!cache) return Status::Unavailable("shutting down");
        return monitoring::prometheusUrlFromCluster(*cache);
      });
  monitoringParts->customMetrics =
      std::make_unique<monitoring::CustomMetricsApi>(monitoringParts->cache, prometheus);
  monitoringSlot->store(monitoringParts);
  // With --leader-elect (the default) each runs only while this server holds its Lease, so
  // several servers on one datastore never both schedule or reconcile. The identity is stable
  // across restarts so a restarted server takes its Lease back at once.
  const std::string identity = client::defaultLeaderIdentity(address);
  std::vector<std::unique_ptr<client::LeaderElector>> electors;
  std::unique_ptr<scheduler::Scheduler> sched;
  if (!f.disableScheduler) {
    auto policy = scheduler::parsePolicy(f.schedulerPolicy);
    if (!policy.ok()) {
      LOG_ERROR("{}", policy.status().message());
      return 1;
    }
    scheduler::SchedulerOptions so;
    so.policy = *policy;
    auto startScheduler = [&schedulerRest, &informers, &sched, so] {
      sched = std::make_unique<scheduler::Scheduler>(schedulerRest, so, &informers);
      sched->start();
    };
    auto stopScheduler = [&sched] {
      if (sched) sched->stop();
      sched.reset();
    };
    if (f.leaderElect) {
      electors.push_back(client::startLeaderElection(schedulerRest, "kube-scheduler", identity,
                                                     startScheduler, stopScheduler));
    } else {
      startScheduler();
    }
  }
  // The built-in CSI driver's Controller service, for the csi-provisioner.
  std::unique_ptr<csi::DirectoryDriver> csiDriver;
  std::map<std::string, std::string> csiDrivers;
  if (!f.csiVolumesDir.empty()) {
    csi::DirectoryDriverOptions dopts;
    dopts.baseDir = f.csiVolumesDir;
    dopts.nodeService = false;
    csiDriver = std::make_unique<csi::DirectoryDriver>(dopts);
    const std::string socket = f.dataDir + "/csi/" + dopts.name + "/controller.sock";
    if (Status ds = csiDriver->start(socket); !ds.ok()) {
      LOG_ERROR("cannot start the CSI driver {}: {}", dopts.name, ds.toString());
      return 1;
    }
    csiDrivers[dopts.name] = "unix://" + socket;
  }
  if (Status es =
          ensureBuiltinStorage(api.registry(), !f.csiVolumesDir.empty(), !f.disableLocalStorage);
      !es.ok()) {
    LOG_ERROR("cannot create the built-in StorageClasses: {}", es.toString());
    return 1;
  }
  std::unique_ptr<controllers::ControllerManager> cm;
  if (!f.disableControllers) {
    controllers::ControllerManager::Options cmOptions;
    cmOptions.rootCaPem = pki->ca.certPem;
    cmOptions.signingCa = pki->ca;
    cmOptions.csiDrivers = csiDrivers;
    cmOptions.meshAllNamespaces = f.mesh;
    cmOptions.apiConfig = *controllersConfig;  // the meshrollout controller's pods/exec
    if (Status ds = f.durations.applyTo(cmOptions); !ds.ok()) {
      LOG_ERROR("{}", ds.message());
      return 2;
    }
    auto startControllers = [&rest, &informers, &cm, cmOptions] {
      cm = std::make_unique<controllers::ControllerManager>(rest, cmOptions, &informers);
      Status cs = cm->start();
      if (!cs.ok()) LOG_ERROR("controller-manager did not start: {}", cs.toString());
    };
    auto stopControllers = [&cm] {
      if (cm) cm->stop();
      cm.reset();
    };
    if (f.leaderElect) {
      electors.push_back(client::startLeaderElection(rest, "kube-controller-manager", identity,
                                                     startControllers, stopControllers));
    } else {
      startControllers();
    }
  }
  const std::string kubeconfig = f.dataDir + "/kubeconfig";
  apiserver::KubeconfigCredentials credentials;
  if (f.insecureHttp) {
    credentials.token = *adminToken;
  } else {
    credentials.caPem = pki->ca.certPem;
    credentials.clientCertPem = pki->admin.certPem;
    credentials.clientKeyPem = pki->admin.keyPem;
  }
  s = apiserver::writeKubeconfig(kubeconfig, scheme + address, credentials);
  if (!s.ok()) {
    LOG_ERROR("{}", s.message());
    return 1;
  }
  LOG_INFO("minik8s API server listening on {} (datastore {}); KUBECONFIG={}", address, datastore,
           kubeconfig);
  LOG_INFO("nodes join with: minik8s agent --server {}{} --token $(cat {}/token) ...", scheme,
           address, f.dataDir);
  std::unique_ptr<apiserver::ServingCertificateRotation> servingRotation;
  if (!f.insecureHttp) {
    servingRotation = std::make_unique<apiserver::ServingCertificateRotation>(*pki);
    servingRotation->start();
  }
  int sig = 0;
  while ((sig = waitForStopSignal(signals)) == SIGHUP) {
    LOG_INFO("SIGHUP: re-issuing the serving certificate");
    if (servingRotation) servingRotation->reissueNow();
  }
  LOG_INFO("signal {}: shutting down", sig);
  if (servingRotation) servingRotation->stop();
  // Nothing waits out an overloaded server's Retry-After any more.
  schedulerRest.stopRetrying();
  rest.stopRetrying();
  // The in-process watches end together, not one by one (each at the API server's next client
  // check, 500 ms) as each informer stops; requests still work (the Leases are released).
  inProcess->stopStreams();
  for (auto& e : electors) e->stop();  // stops what they started and releases the Leases
  if (cm) cm->stop();
  if (sched) sched->stop();
  inProcess->stop();  // what the monitoring cache asks now is refused, as by a stopped server
  monitoringParts->cache->stop();
  informers
      .stop();  // the monitoring cache (the API server's handlers hold it) reads what is cached
  server.stop();
  ready = nullptr;
  nodeGraph->stop();  // before the watch cache it follows
  api.stop();
  return 0;
}

}  // namespace

void addServerCommand(CLI::App& app) {
  auto flags = std::make_shared<ServerFlags>();
  CLI::App* cmd = app.add_subcommand("server", "Run the control plane (Kubernetes API server)");
  cmd->add_option("--config", flags->configFile,
                  "YAML file of flags (`data-dir: /var/lib/minik8s/server`, one key per long "
                  "flag, as k3s' config.yaml); the command line wins over it");
  cmd->add_option("--data-dir", flags->dataDir, "State and kubeconfig directory")
      ->capture_default_str();
  cmd->add_option("--listen", flags->listen, "Address to serve the API on (host:port)")
      ->capture_default_str();
  cmd->add_option("--token", flags->token,
                  "Node join token (default: the one in <data-dir>/token, created at first start)");
  cmd->add_option("--datastore", flags->datastore,
                  "sqlite:///path/state.db (default: in the data dir) or etcd://host:2379[,...]");
  cmd->add_option("--advertise-address", flags->advertise,
                  "Host clients use to reach this server (default 127.0.0.1)");
  cmd->add_option("--service-cluster-ip-range", flags->serviceClusterIPRange,
                  "IPv4 CIDR ClusterIPs are allocated from (.1 is the kubernetes service)")
      ->capture_default_str();
  cmd->add_option("--log-level", flags->logLevel, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->add_option("--scheduler-policy", flags->schedulerPolicy,
                  "default, round-robin, random or least-allocated")
      ->capture_default_str();
  cmd->add_option("--enable-admission-plugins", flags->enableAdmissionPlugins,
                  "Admission plugins to turn on besides the default ones (all are on by default: "
                  "MeshSidecarInjection, ServiceAccount, DefaultStorageClass, "
                  "StorageObjectInUseProtection, "
                  "MutatingAdmissionWebhook, NodeRestriction, PodSecurity, "
                  "ValidatingAdmissionWebhook)")
      ->delimiter(',');
  cmd->add_option("--disable-admission-plugins", flags->disableAdmissionPlugins,
                  "Admission plugins to turn off, comma-separated")
      ->delimiter(',');
  cmd->add_option("--admission-control-config-file", flags->admissionControlConfigFile,
                  "An AdmissionConfiguration file with the plugins' configurations (PodSecurity: "
                  "a PodSecurityConfiguration with defaults and exemptions)");
  cmd->add_option("--prometheus-url", flags->prometheusUrl,
                  "Prometheus for the custom metrics API (custom.metrics.k8s.io); default: "
                  "Service monitoring/prometheus's NodePort");
  cmd->add_option("--csi-volumes-dir", flags->csiVolumesDir,
                  "Run the built-in CSI driver dir.csi.minik8s.io with its volumes in this "
                  "directory (on a filesystem every node mounts at the same path), and create "
                  "the default StorageClass \"standard\" on it");
  cmd->add_flag("--mesh", flags->mesh,
                "Mesh every application pod: a sidecar in every namespace but the kube-* ones "
                "and those labelled istio-injection=disabled (docs/mesh.md)");
  cmd->add_flag("--disable-local-storage", flags->disableLocalStorage,
                "Do not create the StorageClass \"local-path\" (node-local volumes of "
                "local.csi.minik8s.io, which every agent serves unless started with "
                "--disable-local-storage)");
  cmd->add_option("--max-requests-inflight", flags->maxRequestsInflight,
                  "Read-only requests in flight at most (watches excluded; system:masters "
                  "exempt); past it, and past a user's fair share, 429 with Retry-After. 0: no "
                  "limit")
      ->capture_default_str();
  cmd->add_option("--max-mutating-requests-inflight", flags->maxMutatingRequestsInflight,
                  "Mutating requests in flight at most, as --max-requests-inflight")
      ->capture_default_str();
  cmd->add_flag("--insecure-http", flags->insecureHttp,
                "Serve plain HTTP instead of TLS (debugging only; client certificates cannot "
                "be used, the kubeconfig carries the admin token)");
  cmd->add_flag("--disable-scheduler", flags->disableScheduler,
                "Do not run the scheduler in this process");
  cmd->add_flag("--disable-controllers", flags->disableControllers,
                "Do not run the controllers in this process");
  cmd->add_flag("--leader-elect", flags->leaderElect,
                "Run the scheduler and controllers only while this server holds their Leases "
                "(kube-system/kube-scheduler, kube-controller-manager); --leader-elect=false "
                "to always run them")
      ->capture_default_str();
  addControllerFlags(cmd, flags->durations);
  cmd->add_option("--serving-cert-duration", flags->servingCertDuration,
                  "Lifetime of the API server's serving certificate (re-issued at 70-90% of it, "
                  "or on SIGHUP, without a restart)")
      ->capture_default_str();
  cmd->callback([flags, cmd] {
    applyFlagsFileOrExit(*cmd, flags->configFile);
    std::exit(runServer(*flags));
  });
}

}  // namespace minik8s::cli
