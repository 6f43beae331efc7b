#include "mesh/mesh_config.h"

namespace minik8s::mesh {

const MeshServicePort* MeshService::port(int number) const {
  for (const auto& p : ports) {
    if (p.port == number) return &p;
  }
  return nullptr;
}

const MeshService* MeshConfig::serviceAt(const std::string& ip, int port) const {
  auto it = byVip.find(ip + ":" + std::to_string(port));
  return it == byVip.end() ? nullptr : service(it->second);
}

const MeshService* MeshConfig::service(const std::string& key) const {
  auto it = services.find(key);
  return it == services.end() ? nullptr : &it->second;
}

const MeshPod* MeshConfig::pod(const std::string& key) const {
  auto it = pods.find(key);
  return it == pods.end() ? nullptr : &it->second;
}

const MeshPod* MeshConfig::podAt(const std::string& ip) const {
  auto it = podByIp.find(ip);
  return it == podByIp.end() ? nullptr : pod(it->second);
}

MtlsMode MeshConfig::mtlsMode(const std::string& ns,
                              const std::map<std::string, std::string>& labels, int port) const {
  return resolveMtlsMode(peerAuthentications, ns, labels, port);
}

namespace {

std::string meta(const json& obj, const char* field) {
  const json m = obj.value("metadata", json::object());
  return m.value(field, "");
}

std::map<std::string, std::string> labelsOf(const json& obj) {
  std::map<std::string, std::string> out;
  const json m = obj.value("metadata", json::object());
  const json labels = m.value("labels", json::object());
  for (auto& [k, v] : labels.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

bool looksHttp(const std::string& name, const std::string& appProtocol) {
  auto starts = [](const std::string& s, const char* p) { return s.rfind(p, 0) == 0; };
  if (!appProtocol.empty()) return starts(appProtocol, "http");
  return name.empty() || starts(name, "http");
}

}  // namespace

std::shared_ptr<const MeshConfig> buildMeshConfig(const MeshObjects& objects, int64_t version,
                                                  std::vector<std::string>* errors) {
  auto config = std::make_shared<MeshConfig>();
  config->version = version;

  for (const auto& p : objects.pods) {
    MeshPod mp;
    mp.ns = meta(p, "namespace");
    mp.name = meta(p, "name");
    mp.labels = labelsOf(p);
    const json spec = p.value("spec", json::object());
    mp.serviceAccount = spec.value("serviceAccountName", "default");
    for (const auto& c : spec.value("containers", json::array())) {
      if (c.is_object() && c.value("name", "") == "istio-proxy") mp.sidecar = true;
    }
    const json status = p.value("status", json::object());
    mp.ip = status.value("podIP", "");
    std::string key = mp.ns + "/" + mp.name;
    if (!mp.ip.empty() && status.value("phase", "") == "Running") config->podByIp[mp.ip] = key;
    config->pods.emplace(key, std::move(mp));
  }
  for (const auto& obj : objects.peerAuthentications) {
    auto pa = parsePeerAuthentication(obj);
    if (!pa.ok()) {
      if (errors)
        errors->push_back("PeerAuthentication " + meta(obj, "namespace") + "/" + meta(obj, "name") +
                          ": " + pa.status().message());
      continue;
    }
    config->peerAuthentications.push_back(std::move(pa).value());
  }
  for (const auto& obj : objects.authorizationPolicies) {
    // One that does not parse fails closed (leaving it out could open its workloads).
    std::string error;
    config->authorizationPolicies.push_back(authorizationPolicyOrClosed(obj, &error));
    if (!error.empty() && errors) {
      errors->push_back("AuthorizationPolicy " + meta(obj, "namespace") + "/" + meta(obj, "name") +
                        ": " + error + " (enforced as closed)");
    }
  }

  for (const auto& s : objects.services) {
    MeshService svc;
    svc.ns = meta(s, "namespace");
    svc.name = meta(s, "name");
    const json spec = s.value("spec", json::object());
    svc.clusterIP = spec.value("clusterIP", "");
    for (const auto& p : spec.value("ports", json::array())) {
      MeshServicePort port;
      port.name = p.value("name", "");
      port.port = p.value("port", 0);
      port.protocol = p.value("protocol", "TCP");
      std::string app = p.value("appProtocol", "");
      port.appProtocol = port.protocol == "TCP" && looksHttp(port.name, app) ? "http" : app;
      svc.ports.push_back(std::move(port));
      if (!svc.clusterIP.empty() && svc.clusterIP != "None") {
        config->byVip[svc.clusterIP + ":" + std::to_string(svc.ports.back().port)] = svc.key();
      }
    }
    config->services.emplace(svc.key(), std::move(svc));
  }

  for (const auto& e : objects.endpoints) {
    auto it = config->services.find(meta(e, "namespace") + "/" + meta(e, "name"));
    if (it == config->services.end()) continue;
    MeshService& svc = it->second;
    for (const auto& subset : e.value("subsets", json::array())) {
      for (const auto& ep : subset.value("ports", json::array())) {
        std::string portName = ep.value("name", "");
        MeshServicePort* port = nullptr;
        for (auto& p : svc.ports) {
          if (p.name == portName || svc.ports.size() == 1) port = &p;
        }
        if (port == nullptr) continue;
        for (const auto& addr : subset.value("addresses", json::array())) {
          MeshEndpoint me;
          me.ip = addr.value("ip", "");
          me.port = ep.value("port", 0);
          const json ref = addr.value("targetRef", json::object());
          if (ref.value("kind", "") == "Pod") {
            me.podName = ref.value("name", "");
            me.ns = ref.value("namespace", svc.ns);
            if (const MeshPod* pod = config->pod(me.ns + "/" + me.podName)) {
              me.labels = pod->labels;
              me.sidecar = pod->sidecar;
              me.serviceAccount = pod->serviceAccount;
            }
          }
          port->endpoints.push_back(std::move(me));
        }
      }
    }
  }

  for (const auto& obj : objects.destinationRules) {
    auto dr = parseDestinationRule(obj);
    if (!dr.ok()) {
      if (errors)
        errors->push_back("DestinationRule " + meta(obj, "namespace") + "/" + meta(obj, "name") +
                          ": " + dr.status().message());
      continue;
    }
    auto it = config->services.find(serviceKeyOfHost(dr->host, dr->ns));
    if (it == config->services.end()) continue;
    for (auto& s : dr->subsets) it->second.subsets[s.name] = s;
    it->second.trafficPolicy = dr->trafficPolicy;
  }
  // Sorted by namespace/name so that two rules for one host apply in a stable order.
  for (const auto& obj : objects.virtualServices) {
    auto vs = parseVirtualService(obj);
    if (!vs.ok()) {
      if (errors)
        errors->push_back("VirtualService " + meta(obj, "namespace") + "/" + meta(obj, "name") +
                          ": " + vs.status().message());
      continue;
    }
    for (const auto& host : vs->hosts) {
      auto it = config->services.find(serviceKeyOfHost(host, vs->ns));
      if (it == config->services.end()) continue;
      for (auto route : vs->http) {
        for (auto& d : route.route) d.host = serviceKeyOfHost(d.host, vs->ns);
        it->second.routes.push_back(std::move(route));
      }
    }
  }
  return config;
}

std::vector<const MeshEndpoint*> subsetEndpoints(const MeshService& svc,
                                                 const MeshServicePort& port,
                                                 const std::string& subset) {
  std::vector<const MeshEndpoint*> out;
  const Subset* s = nullptr;
  if (!subset.empty()) {
    auto it = svc.subsets.find(subset);
    if (it == svc.subsets.end()) return out;
    s = &it->second;
  }
  for (const auto& e : port.endpoints) {
    if (s == nullptr || labelsMatch(s->labels, e.labels)) out.push_back(&e);
  }
  return out;
}

json meshConfigToJson(const MeshConfig& config) {
  json services = json::array();
  for (const auto& [key, svc] : config.services) {
    json ports = json::array();
    for (const auto& p : svc.ports) {
      json eps = json::array();
      for (const auto& e : p.endpoints) {
        eps.push_back({{"ip", e.ip},
                       {"port", e.port},
                       {"pod", e.podName},
                       {"labels", e.labels},
                       {"sidecar", e.sidecar}});
      }
      ports.push_back({{"name", p.name},
                       {"port", p.port},
                       {"protocol", p.appProtocol.empty() ? p.protocol : p.appProtocol},
                       {"endpoints", eps}});
    }
    json subsets = json::array();
    for (const auto& [name, s] : svc.subsets)
      subsets.push_back({{"name", name}, {"labels", s.labels}});
    services.push_back({{"namespace", svc.ns},
                        {"name", svc.name},
                        {"clusterIP", svc.clusterIP},
                        {"ports", ports},
                        {"subsets", subsets},
                        {"httpRoutes", svc.routes.size()}});
  }
  json policies = json::array();
  for (const auto& p : config.peerAuthentications) {
    json item = {{"namespace", p.ns}, {"name", p.name}, {"mode", mtlsModeName(p.mode)}};
    if (p.hasSelector) item["selector"] = p.selector;
    policies.push_back(std::move(item));
  }
  json authz = json::array();
  for (const auto& p : config.authorizationPolicies) {
    json item = {{"namespace", p.ns},
                 {"name", p.name},
                 {"action", authzActionName(p.action)},
                 {"rules", p.rules.size()}};
    if (p.hasSelector) item["selector"] = p.selector;
    authz.push_back(std::move(item));
  }
  return {{"version", config.version},
          {"services", services},
          {"peerAuthentications", policies},
          {"authorizationPolicies", authz}};
}

}  // namespace minik8s::mesh
