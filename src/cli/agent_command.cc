#include "cli/agent_command.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "api/quantity.h"
#include "cli/flags_file.h"
#include "cli/stop_signals.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/strings.h"
#include "common/tls.h"
#include "common/yaml_json.h"
#include "controllers/volume/csi_provisioner.h"
#include "controllers/volume/persistent_volume_controller.h"
#include "csi/directory_driver.h"
#include "dns/cluster_dns.h"
#include "dns/dns_endpoint.h"
#include "dns/gateway.h"
#include "kubelet/certificate_manager.h"
#include "kubelet/cri/grpc_runtime.h"
#include "kubelet/kubelet.h"
#include "kubelet/node_credentials.h"
#include "kubelet/runtime/containerd_supervisor.h"
#include "kubelet/security_context.h"
#include "kubelet/server/agent_server.h"
#include "kubelet/stats_provider.h"
#include "netpol/network_policy_agent.h"
#include "network/network_agent.h"
#include "proxy/service_proxy.h"

namespace minik8s::cli {

namespace {

struct AgentFlags {
  std::string server;
  std::string nodeName;
  std::string dataDir;
  std::string configFile;
  std::string runtimeEndpoint;
  std::string netns;
  std::string registry = kubelet::runtime::kDefaultRegistry;
  std::string listen = "0.0.0.0:10250";
  std::string logLevel = "info";
  std::string token;
  std::string caFile;  // the cluster CA (or `caFile:` in node.yaml)
  bool insecureSkipTlsVerify = false;
  std::string networkBackend;  // vxlan (default), host-gw or none
  bool disableProxy = false;
  std::string proxyMode = "iptables";
  bool disableNetworkPolicy = false;
  bool disableDns = false;
  std::string csiVolumesDir;  // the built-in directory CSI driver's volumes; empty: none
  // The node-local CSI driver's volumes (default <data-dir>/local-volumes).
  std::string localVolumesDir;
  bool disableLocalStorage = false;
  std::vector<std::string> allowedUnsafeSysctls;  // names or prefix* patterns
  int podWorkers = kubelet::KubeletOptions{}.workers;
};

// The node-local storage of this node (StorageClass local-path), as Kubernetes' CSI distributed
// provisioning runs it: the driver local.csi.minik8s.io serves its Controller and Node services
// for a directory of this node, and a csi-provisioner in node-deployment mode creates the
// volumes of the claims the scheduler placed here and deletes them when released.
struct LocalStorage {
  std::unique_ptr<csi::DirectoryDriver> driver;
  std::unique_ptr<client::Informer> claims, volumes, classes;
  std::unique_ptr<client::ApiEventRecorder> events;
  std::unique_ptr<controllers::CsiProvisioner> provisioner;

  void stop() {
    if (provisioner) provisioner->stop();
    for (auto* i : {claims.get(), volumes.get(), classes.get()})
      if (i) i->stop();
    if (driver) driver->stop();
  }
};

// Starts the provisioner of `storage` (its driver already serves `socket`).
void startLocalProvisioner(LocalStorage& storage, client::RestClient& client,
                           const std::string& nodeName, const std::string& socket) {
  storage.claims = std::make_unique<client::Informer>(client, controllers::kPersistentVolumeClaims);
  storage.volumes = std::make_unique<client::Informer>(client, controllers::kPersistentVolumes);
  storage.classes = std::make_unique<client::Informer>(client, controllers::kStorageClasses);
  client::ApiEventRecorderOptions eo;
  eo.component = "external-provisioner";
  eo.host = nodeName;
  storage.events = std::make_unique<client::ApiEventRecorder>(client, eo);
  controllers::CsiProvisionerOptions po;
  po.drivers = {{csi::kLocalDriverName, "unix://" + socket}};
  po.nodeName = nodeName;
  po.events = storage.events.get();
  storage.provisioner = std::make_unique<controllers::CsiProvisioner>(
      client, *storage.claims, *storage.volumes, *storage.classes, po);
  for (auto* i : {storage.claims.get(), storage.volumes.get(), storage.classes.get()}) i->start();
  storage.provisioner->start();
}

// What node.yaml adds beyond the kubelet's options.
struct NodeConfigExtras {
  std::string name;
  std::string token;
  std::string caFile;
  std::string networkBackend;
  json taints = json::array();
};

// The first IPv4 address of an interface that is up and not loopback.
std::string detectHostIP() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "127.0.0.1";
  std::string found;
  for (ifaddrs* a = list; a && found.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    std::string name = a->ifa_name;
    if (name == "cni0" || name.rfind("veth", 0) == 0) continue;  // our own pod bridge
    char buf[INET_ADDRSTRLEN];
    auto* in = reinterpret_cast<sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf)) found = buf;
  }
  ::freeifaddrs(list);
  return found.empty() ? "127.0.0.1" : found;
}

// The machine's hostname in lower case (node names are DNS subdomains); empty if unknown.
std::string lowercaseHostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return asciiLower(name);
}

// The keys of node.yaml that describe the node rather than name a flag.
const std::set<std::string> kNodeConfigKeys = {
    "name",           "token",      "caFile",        "labels",  "taints",   "address",   "podCIDR",
    "networkBackend", "clusterDNS", "clusterDomain", "maxPods", "capacity", "cgroupRoot"};

// node.yaml: name, token, caFile, labels (map), taints (list of {key, value, effect}), address,
// podCIDR, networkBackend, capacity (map of quantities), clusterDNS (list or string),
// clusterDomain, maxPods, cgroupRoot.
Status applyConfigFile(const std::string& path, kubelet::KubeletOptions& o,
                       NodeConfigExtras& extras) {
  auto text = readFile(path);
  if (!text.ok()) return Status::BadRequest("config file: " + text.status().message());
  auto doc = parseYaml(*text);
  if (!doc.ok()) return doc.status();
  const json& c = *doc;
  if (!c.is_object()) return Status::BadRequest(path + ": expected a mapping");
  try {
    if (c.contains("name")) extras.name = c["name"].get<std::string>();
    if (c.contains("token")) extras.token = c["token"].get<std::string>();
    if (c.contains("caFile")) extras.caFile = c["caFile"].get<std::string>();
    if (c.contains("networkBackend"))
      extras.networkBackend = c["networkBackend"].get<std::string>();
    if (c.contains("taints")) {
      if (!c["taints"].is_array()) return Status::BadRequest(path + ": taints must be a list");
      for (const auto& t : c["taints"]) {
        if (!t.is_object() || !t.contains("key") || !t.contains("effect"))
          return Status::BadRequest(path + ": every taint needs key and effect");
        extras.taints.push_back(t);
      }
    }
    if (c.contains("capacity")) {
      if (!c["capacity"].is_object())
        return Status::BadRequest(path + ": capacity must be a mapping such as {cpu: \"2\"}");
      for (const auto& [k, v] : c["capacity"].items()) {
        const std::string q = v.is_string() ? v.get<std::string>() : v.dump();
        if (!api::Quantity::parse(q).ok())
          return Status::BadRequest(path + ": capacity." + k + ": invalid quantity " + q);
        o.capacityOverrides[k] = q;
      }
    }
    if (c.contains("labels") && c["labels"].is_object())
      for (const auto& [k, v] : c["labels"].items())
        o.nodeLabels[k] = v.is_string() ? v.get<std::string>() : v.dump();
    if (c.contains("address")) o.hostIP = c["address"].get<std::string>();
    if (c.contains("podCIDR")) o.podCIDR = c["podCIDR"].get<std::string>();
    if (c.contains("clusterDomain")) o.clusterDomain = c["clusterDomain"].get<std::string>();
    if (c.contains("cgroupRoot")) o.cgroupRoot = c["cgroupRoot"].get<std::string>();
    if (c.contains("maxPods")) o.maxPods = c["maxPods"].get<int>();
    if (c.contains("clusterDNS")) {
      if (c["clusterDNS"].is_array())
        for (const auto& s : c["clusterDNS"]) o.clusterDNS.push_back(s.get<std::string>());
      else
        o.clusterDNS.push_back(c["clusterDNS"].get<std::string>());
    }
  } catch (const json::exception& e) {
    return Status::BadRequest(path + ": " + e.what());
  }
  return Status::Ok();
}

// The agent's connection to the API server once it has joined.
struct JoinedCluster {
  kubelet::ServerTrust trust;
  kubelet::ClientFactory clients;  // join token (null) or a client certificate
  std::unique_ptr<kubelet::NodeCredentials> credentials;
  std::optional<pki::KeyAndCert> clientCertificate;  // set when the server speaks TLS
  std::unique_ptr<client::RestClient> client;        // what every component of the agent uses
};

// Waits up to `delay` for one of `signals` (blocked in this thread): true when one arrived.
bool signalledWithin(const sigset_t& signals, std::chrono::milliseconds delay) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(delay.count() / 1000);
  ts.tv_nsec = static_cast<long>((delay.count() % 1000) * 1000000);
  siginfo_t info{};
  return ::sigtimedwait(&signals, &info, &ts) > 0;
}

// Errors another try may mend: the server is unreachable, starting, overloaded or busy.
bool retriable(const Status& s) {
  const int code = s.code();
  return code == 0 || code == 409 || code == 429 || code == 502 || code == 503 || code == 504;
}

// Runs `attempt` until it succeeds, as a kubelet keeps trying its API server: a retriable error
// waits 200 ms doubling up to 10 s and tries again for as long as it takes (logged at each
// doubling, then every minute). Returns the first error that is not retriable, or Unavailable
// when SIGINT/SIGTERM arrives meanwhile.
Status retryUntilDone(const std::string& what, const sigset_t& signals,
                      const std::function<Status()>& attempt) {
  std::chrono::milliseconds delay(200);
  const auto started = std::chrono::steady_clock::now();
  auto lastLog = started - std::chrono::hours(1);
  for (int tries = 1;; ++tries) {
    Status s = attempt();
    if (s.ok() || !retriable(s)) return s;
    const auto now = std::chrono::steady_clock::now();
    if (delay < std::chrono::seconds(10) || now - lastLog >= std::chrono::minutes(1)) {
      lastLog = now;
      LOG_WARN("{} (try {}, {} s so far): {}; retrying in {} ms", what, tries,
               std::chrono::duration_cast<std::chrono::seconds>(now - started).count(), s.message(),
               delay.count());
    }
    if (signalledWithin(signals, delay)) return Status::Unavailable(what + ": interrupted");
    delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(10));
  }
}

// Trusts the server (CA file or CA hash of the join token), then, over TLS, trades the join
// token for the node's client certificate (node_credentials.h) and checks that the server
// accepts the credential. Over plain HTTP the join token stays the credential. An unreachable
// or starting server is waited for (retryUntilDone); a refused credential ends the join.
Result<JoinedCluster> joinCluster(const AgentFlags& f, const kubelet::KubeletOptions& opts,
                                  const sigset_t& signals) {
  std::string caFilePem;
  if (!f.caFile.empty()) {
    auto pem = pki::readPemFile(f.caFile);
    if (!pem.ok()) return Status::BadRequest("cannot read --ca-file " + f.caFile);
    caFilePem = *pem;
  }
  JoinedCluster j;
  Status s = retryUntilDone("cluster CA from " + f.server, signals, [&] {
    auto trust =
        kubelet::discoverServerTrust(f.server, caFilePem, f.token, f.insecureSkipTlsVerify);
    if (trust.ok()) j.trust = *trust;
    return trust.status();
  });
  if (!s.ok()) return s;
  j.clients = [server = f.server, token = f.token, trust = j.trust](const pki::KeyAndCert* cert) {
    client::ClientConfig config;
    config.servers = server;
    config.tls.caPem = trust.caPem;
    config.tls.insecureSkipVerify = trust.insecureSkipVerify;
    if (cert) {
      config.tls.certPem = cert->certPem;
      config.tls.keyPem = cert->keyPem;
    } else {
      config.bearerToken = token;
    }
    return std::make_unique<client::RestClient>(config);
  };
  const bool tls = f.server.rfind("https://", 0) == 0;
  if (tls) {
    kubelet::NodeCredentialsOptions co;
    co.pkiDir = opts.dataDir + "/pki";
    co.nodeName = opts.nodeName;
    co.servingIps = {opts.hostIP};
    j.credentials = std::make_unique<kubelet::NodeCredentials>(co);
    s = retryUntilDone("node client certificate", signals, [&] {
      auto cert = j.credentials->ensureClientCertificate(j.clients);
      if (cert.ok()) j.clientCertificate = *cert;
      return cert.status();
    });
    if (s.code() == 401)
      return Status::Unauthorized("the server at " + f.server + " refused the join token");
    if (!s.ok()) return Status(s.code(), s.reason(), "no node credential: " + s.message());
    // By file (tls.h): the certificate manager's renewals reach every component's new
    // connections, while established watches and streams keep theirs.
    const pki::KeyAndCert onDisk{http::kFileReference + j.credentials->clientKeyPath(),
                                 http::kFileReference + j.credentials->clientCertPath()};
    j.client = j.clients(&onDisk);
  } else {
    j.client = j.clients(nullptr);
  }
  // Join: the server must answer and accept the credential before anything starts.
  s = retryUntilDone("API server " + f.server, signals,
                     [&] { return j.client->request("GET", "/version").status(); });
  if (s.code() == 401)
    return Status::Unauthorized("the server at " + f.server + " refused the " +
                                (tls ? "node's client certificate" : "join token"));
  if (!s.ok()) return s;
  return j;
}

int runAgent(AgentFlags f) {
  kubelet::KubeletOptions opts;
  NodeConfigExtras extras;
  if (!f.configFile.empty()) {
    Status s = applyConfigFile(f.configFile, opts, extras);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  if (f.nodeName.empty()) f.nodeName = extras.name;
  if (f.nodeName.empty()) f.nodeName = lowercaseHostname();  // as the kubelet defaults it
  if (f.token.empty()) f.token = extras.token;
  if (f.caFile.empty()) f.caFile = extras.caFile;
  if (f.networkBackend.empty()) f.networkBackend = extras.networkBackend;
  if (f.networkBackend.empty()) f.networkBackend = "vxlan";
  initLogging(f.logLevel, "agent:" + f.nodeName);
  if (f.nodeName.empty()) {
    LOG_ERROR("the node needs a name: --node-name or `name:` in the config file");
    return 1;
  }
  auto backend = network::parseOverlayBackend(f.networkBackend);
  if (!backend.ok()) {
    LOG_ERROR("{}", backend.status().message());
    return 1;
  }
  if (Status s = kubelet::validateAllowedUnsafeSysctls(f.allowedUnsafeSysctls); !s.ok()) {
    LOG_ERROR("--allowed-unsafe-sysctls: {}", s.message());
    return 1;
  }
  opts.allowedUnsafeSysctls = f.allowedUnsafeSysctls;
  opts.workers = f.podWorkers;
  opts.nodeName = f.nodeName;
  opts.dataDir = f.dataDir.empty() ? "/var/lib/minik8s/agent-" + f.nodeName : f.dataDir;
  if (opts.hostIP.empty()) opts.hostIP = detectHostIP();
  std::error_code ec;
  std::filesystem::create_directories(opts.dataDir, ec);
  if (ec) {
    LOG_ERROR("cannot create data dir {}: {}", opts.dataDir, ec.message());
    return 1;
  }
  sigset_t signals = blockStopSignals();

  auto joined = joinCluster(f, opts, signals);
  if (!joined.ok()) {
    LOG_ERROR("{}", joined.status().message());
    return 1;
  }
  std::unique_ptr<client::RestClient> apiClient = std::move(joined->client);
  client::RestClient& client = *apiClient;

  // The runtime: an existing CRI socket, or our own containerd.
  std::unique_ptr<kubelet::runtime::ContainerdSupervisor> containerd;
  std::string endpoint = f.runtimeEndpoint;
  if (endpoint.empty()) {
    kubelet::runtime::ContainerdSupervisorOptions co;
    co.dataDir = opts.dataDir;
    co.nodeName = f.nodeName;
    co.netns = f.netns;
    co.registry = f.registry;
    containerd = std::make_unique<kubelet::runtime::ContainerdSupervisor>(co);
    Status s = containerd->start();
    if (!s.ok()) {
      LOG_ERROR("cannot start containerd: {}", s.message());
      return 1;
    }
    endpoint = containerd->socketPath();
  }
  if (endpoint.rfind("unix://", 0) == 0) endpoint = endpoint.substr(7);
  kubelet::cri::GrpcRuntime runtime("unix://" + endpoint);
  Status s = runtime.waitReady(std::chrono::seconds(20));
  if (!s.ok()) {
    LOG_ERROR("container runtime at {} does not answer: {}", endpoint, s.message());
    return 1;
  }
  // The Node advertises the port the agent API really listens on (daemonEndpoints).
  if (size_t colon = f.listen.rfind(':'); colon != std::string::npos) {
    try {
      opts.kubeletPort = std::stoi(f.listen.substr(colon + 1));
    } catch (...) {
      LOG_ERROR("invalid --listen address {}", f.listen);
      return 1;
    }
  }
  opts.registerTaints = extras.taints;
  // The built-in CSI driver's Node service, for this node's kubelet.
  std::unique_ptr<csi::DirectoryDriver> csiDriver;
  if (!f.csiVolumesDir.empty()) {
    csi::DirectoryDriverOptions dopts;
    dopts.baseDir = f.csiVolumesDir;
    dopts.nodeId = f.nodeName;
    dopts.controllerService = false;
    csiDriver = std::make_unique<csi::DirectoryDriver>(dopts);
    const std::string socket = opts.dataDir + "/plugins/" + dopts.name + "/csi.sock";
    if (Status ds = csiDriver->start(socket); !ds.ok()) {
      LOG_ERROR("cannot start the CSI driver {}: {}", dopts.name, ds.toString());
      return 1;
    }
    opts.csiDrivers[dopts.name] = "unix://" + socket;
  }
  LocalStorage localStorage;
  std::string localSocket;
  if (!f.disableLocalStorage) {
    csi::DirectoryDriverOptions dopts;
    dopts.name = csi::kLocalDriverName;
    dopts.baseDir = f.localVolumesDir.empty() ? opts.dataDir + "/local-volumes" : f.localVolumesDir;
    dopts.nodeId = f.nodeName;
    dopts.topologyKey = csi::kLocalTopologyKey;
    localStorage.driver = std::make_unique<csi::DirectoryDriver>(dopts);
    localSocket = opts.dataDir + "/plugins/" + dopts.name + "/csi.sock";
    if (Status ds = localStorage.driver->start(localSocket); !ds.ok()) {
      LOG_ERROR("cannot start the CSI driver {}: {}", dopts.name, ds.toString());
      return 1;
    }
    opts.csiDrivers[dopts.name] = "unix://" + localSocket;
  }
  // One list + watch of Services and EndpointSlices for the kubelet (service variables), the
  // service proxy, the cluster DNS and the gateway alike.
  client::SharedInformers informers(client);
  opts.informers = &informers;
  kubelet::Kubelet kubeletCore(client, runtime, runtime, opts);
  // The server may be unreachable for a while (restarting, failing over): wait for it.
  s = retryUntilDone("starting the kubelet", signals, [&] { return kubeletCore.start(); });
  if (!s.ok()) {
    LOG_ERROR("cannot start the kubelet: {}", s.toString());
    return 1;
  }
  if (localStorage.driver) startLocalProvisioner(localStorage, client, f.nodeName, localSocket);
  // The pod network: podCIDR from the node IPAM controller, CNI config, overlay routes.
  std::unique_ptr<network::NetworkAgent> net;
  {
    network::NetworkAgentOptions no;
    no.nodeName = f.nodeName;
    no.overlay.backend = *backend;
    no.overlay.underlayIp = opts.hostIP;
    const int mtu = *backend == network::OverlayBackend::kVxlan ? no.overlay.mtu : 1500;
    if (containerd) {
      const auto& layout = containerd->layout();
      // ipMasq off: the network agent masquerades the node's pods with one chain (overlay.h).
      no.configureCni = [&layout, mtu](const Ipv4Cidr& cidr) {
        return kubelet::runtime::writeCniConfig(layout.cniConfDir(), cidr.toString(), "cni0", mtu,
                                                false, layout.cniIpamDir());
      };
    }
    net = std::make_unique<network::NetworkAgent>(client, no, network::realRunner());
    s = net->start();
    if (!s.ok()) {
      LOG_ERROR("pod network: {}", s.message());
      kubeletCore.stop();
      return 1;
    }
  }
  // Services: the iptables proxy and the node's cluster DNS server (kube-dns endpoint).
  std::unique_ptr<proxy::ServiceProxy> serviceProxy;
  if (!f.disableProxy) {
    proxy::ProxyOptions po;
    po.mode = *proxy::parseProxyMode(f.proxyMode);  // checked by the flag
    po.nodeName = f.nodeName;
    po.nodeIPs = {opts.hostIP};
    po.informers = &informers;
    serviceProxy = std::make_unique<proxy::ServiceProxy>(client, po);
    if (Status ps = serviceProxy->start(); !ps.ok()) LOG_ERROR("service proxy: {}", ps.message());
  }
  // NetworkPolicies of this node's pods: filter rules beside the proxy's, in the same namespace
  // (an agent told to leave that namespace's iptables to others, --disable-proxy, runs neither).
  std::unique_ptr<netpol::NetworkPolicyAgent> policyAgent;
  if (!f.disableNetworkPolicy && !f.disableProxy) {
    netpol::NetworkPolicyOptions npo;
    npo.nodeName = f.nodeName;
    policyAgent = std::make_unique<netpol::NetworkPolicyAgent>(client, npo);
    if (Status ps = policyAgent->start(); !ps.ok()) LOG_ERROR("network policy: {}", ps.message());
  }
  std::unique_ptr<dns::ClusterDns> clusterDns;
  if (!f.disableDns) {
    dns::DnsOptions dopts;
    dopts.listenAddress = opts.hostIP;
    dopts.dataDir = opts.dataDir + "/dns";
    dopts.informers = &informers;
    clusterDns = std::make_unique<dns::ClusterDns>(client, dopts);
    if (Status ds = clusterDns->start(); !ds.ok()) {
      LOG_ERROR("cluster DNS: {}", ds.message());
    } else if (Status es = dns::ensureNodeDnsEndpoint(client, f.nodeName, opts.hostIP); !es.ok()) {
      LOG_WARN("kube-dns endpoint: {}", es.message());
    }
  }
  // Dns objects: nginx on the node's port 80 behind 10.96.0.80; their hosts via cluster DNS.
  std::unique_ptr<dns::DnsGateway> gateway;
  if (!f.disableDns) {
    dns::GatewayOptions gopts;
    gopts.nodeName = f.nodeName;
    gopts.listenAddress = opts.hostIP;
    gopts.dataDir = opts.dataDir + "/gateway";
    gopts.informers = &informers;
    gopts.publishHosts = [dnsServer = clusterDns.get()](std::vector<dns::HostEntry> hosts) {
      if (dnsServer) dnsServer->setExtraHosts(std::move(hosts));
    };
    gateway = std::make_unique<dns::DnsGateway>(client, gopts);
    if (Status gs = gateway->start(); !gs.ok()) LOG_ERROR("dns gateway: {}", gs.message());
  }
  // The agent's HTTP API (logs, exec, stats) on port 10250.
  kubelet::server::CtrExecBackend exec(endpoint);
  kubelet::CriStatsProvider stats(runtime, f.nodeName);
  kubelet::server::AgentServerOptions agentOptions;
  bool serveAgentApi = true;
  if (joined->clientCertificate) {
    // TLS with the node's serving certificate; callers need a certificate of the cluster CA.
    auto serving =
        joined->credentials->ensureServingCertificate(joined->clients, *joined->clientCertificate);
    if (serving.ok()) {
      http::TlsServerConfig tls;
      tls.certPem = http::kFileReference + joined->credentials->servingCertPath();
      tls.keyPem = http::kFileReference + joined->credentials->servingKeyPath();
      tls.clientCaPem = joined->trust.caPem;
      tls.requireClientCertificate = true;
      agentOptions.tls = tls;
    } else {
      LOG_ERROR("no serving certificate, the agent API (logs, exec, stats) stays off: {}",
                serving.status().message());
      serveAgentApi = false;
    }
  }
  kubelet::server::AgentServer agentServer(kubeletCore, exec, stats, agentOptions, &kubeletCore);
  if (serveAgentApi) {
    s = agentServer.start(f.listen);
    if (!s.ok()) LOG_WARN("agent API not served on {}: {}", f.listen, s.message());
  }
  // Renews both certificates at 70-90% of their lifetime while the agent runs.
  std::unique_ptr<kubelet::CertificateManager> rotation;
  if (joined->clientCertificate) {
    kubelet::CertificateRotationOptions ro;
    ro.rotateServing = serveAgentApi;
    rotation =
        std::make_unique<kubelet::CertificateManager>(*joined->credentials, joined->clients, ro);
    rotation->start();
  }
  LOG_INFO("agent of node {} running (runtime {}, data {})", f.nodeName, endpoint, opts.dataDir);
  int sig = waitForStopSignal(signals);
  LOG_INFO("signal {}: shutting down (containers keep running)", sig);
  if (rotation) rotation->stop();
  agentServer.stop();
  if (gateway) gateway->stop();
  if (clusterDns) clusterDns->stop();
  if (serviceProxy) serviceProxy->stop();
  // Unlike the proxy's rules, policies are removed with the agent: they follow pods and
  // policies only while it watches them. (A killed agent leaves them; the next start rewrites.)
  if (policyAgent) {
    if (Status cs = policyAgent->cleanup(); !cs.ok()) {
      LOG_WARN("network policy cleanup: {}", cs.message());
    }
  }
  if (net) net->stop();
  localStorage.stop();
  kubeletCore.stop();
  informers.stop();
  if (containerd) containerd->stop();
  return 0;
}

}  // namespace

void addAgentCommand(CLI::App& app) {
  auto flags = std::make_shared<AgentFlags>();
  CLI::App* cmd = app.add_subcommand("agent", "Run a node agent (kubelet) against a server");
  cmd->add_option("--server", flags->server,
                  "API server URL (https://host:6443; or `server:` in --config)");
  cmd->add_option("--node-name", flags->nodeName,
                  "Name of this node (or `name:` in --config; default: the hostname)");
  cmd->add_option(
      "--token", flags->token,
      "The cluster's join token (the server's <data-dir>/token; or `token:` in --config)");
  cmd->add_option("--ca-file", flags->caFile,
                  "The cluster CA certificate (or `caFile:` in --config); without it the CA is "
                  "fetched from the server and checked against the join token's CA hash");
  cmd->add_flag("--insecure-skip-tls-verify", flags->insecureSkipTlsVerify,
                "Accept any server certificate when the join token has no CA hash (debugging)");
  cmd->add_option("--network-backend", flags->networkBackend,
                  "Pod network between nodes: vxlan (default), host-gw, or none");
  cmd->add_option("--proxy-mode", flags->proxyMode,
                  "Service proxy: iptables (kube-proxy's default) or nftables (one nft table, "
                  "maps instead of rule lists)")
      ->check(CLI::IsMember({"iptables", "nftables"}))
      ->capture_default_str();
  cmd->add_flag("--disable-proxy", flags->disableProxy,
                "Do not run the service proxy (it rewrites this namespace's iptables nat rules)");
  cmd->add_flag("--disable-network-policy", flags->disableNetworkPolicy,
                "Do not enforce NetworkPolicies (they rewrite this namespace's iptables filter "
                "rules)");
  cmd->add_flag("--disable-dns", flags->disableDns,
                "Do not run the cluster DNS server (dnsmasq on the node address, port 53)");
  cmd->add_option("--data-dir", flags->dataDir,
                  "Agent state: containerd, pod volumes, logs (default /var/lib/minik8s/agent-"
                  "<node>)");
  cmd->add_option(
      "--config", flags->configFile,
      "node.yaml: name, token, caFile, labels, taints, address, podCIDR, networkBackend, "
      "clusterDNS, clusterDomain, maxPods, capacity, cgroupRoot, and any long flag of this "
      "command by name (server, registry, data-dir, ...); the command line wins over it");
  cmd->add_option("--container-runtime-endpoint", flags->runtimeEndpoint,
                  "Use this CRI socket instead of starting containerd");
  cmd->add_option("--netns", flags->netns,
                  "Network namespace to run our containerd in (name under /var/run/netns)");
  cmd->add_option("--registry", flags->registry,
                  "Cluster registry host:port our containerd uses as its mirror")
      ->capture_default_str();
  cmd->add_option("--csi-volumes-dir", flags->csiVolumesDir,
                  "Serve the built-in CSI driver dir.csi.minik8s.io's node side with its "
                  "volumes in this directory (the server's --csi-volumes-dir, mounted here)");
  cmd->add_option("--local-volumes-dir", flags->localVolumesDir,
                  "Where the node-local CSI driver local.csi.minik8s.io keeps this node's "
                  "volumes (StorageClass local-path; default <data-dir>/local-volumes)");
  cmd->add_flag("--disable-local-storage", flags->disableLocalStorage,
                "Do not serve node-local volumes (local.csi.minik8s.io and its provisioner)");
  cmd->add_option("--allowed-unsafe-sysctls", flags->allowedUnsafeSysctls,
                  "Sysctls (or prefix* patterns) pods may set beyond the safe ones, comma "
                  "separated, e.g. 'kernel.msg*,net.core.somaxconn'; namespaced ones only")
      ->delimiter(',');
  cmd->add_option("--pod-workers", flags->podWorkers,
                  "Pods synced at once (a pod's start holds a worker until its containers run)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--listen", flags->listen, "Address of the agent's HTTP API")
      ->capture_default_str();
  cmd->add_option("--log-level", flags->logLevel, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->callback([flags, cmd] {
    applyFlagsFileOrExit(*cmd, flags->configFile, kNodeConfigKeys);
    if (flags->server.empty()) {
      std::fprintf(stderr, "error: the agent needs --server (or `server:` in --config)\n");
      std::exit(1);
    }
    std::exit(runAgent(*flags));
  });
}

}  // namespace minik8s::cli
