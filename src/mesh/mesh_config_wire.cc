#include "mesh/mesh_config_wire.h"

#include <regex>
#include <stdexcept>

namespace minik8s::mesh {

namespace wire_detail {

// ---- encoding ----

json stringMatchToWire(const StringMatch& m) {
  const char* kind = m.kind == StringMatch::Kind::kExact    ? "exact"
                     : m.kind == StringMatch::Kind::kPrefix ? "prefix"
                                                            : "regex";
  return {{kind, m.value}};
}

json policyToWire(const TrafficPolicy& p) {
  json out = {{"loadBalancer", p.loadBalancer == LoadBalancer::kRoundRobin ? "ROUND_ROBIN"
                               : p.loadBalancer == LoadBalancer::kRandom   ? "RANDOM"
                                                                           : "LEAST_REQUEST"}};
  if (p.outlierDetection) {
    const OutlierDetection& o = *p.outlierDetection;
    out["outlierDetection"] = {{"consecutive5xxErrors", o.consecutive5xxErrors},
                               {"intervalMs", o.interval.count()},
                               {"baseEjectionTimeMs", o.baseEjectionTime.count()},
                               {"maxEjectionPercent", o.maxEjectionPercent}};
  }
  return out;
}

json routeToWire(const HttpRoute& r) {
  json match = json::array();
  for (const auto& m : r.match) {
    json item = json::object();
    if (m.uri) item["uri"] = stringMatchToWire(*m.uri);
    json headers = json::object();
    for (const auto& [name, h] : m.headers) headers[name] = stringMatchToWire(h);
    item["headers"] = std::move(headers);
    match.push_back(std::move(item));
  }
  json route = json::array();
  for (const auto& d : r.route) {
    route.push_back(
        {{"host", d.host}, {"subset", d.subset}, {"port", d.port}, {"weight", d.weight}});
  }
  return {{"name", r.name},
          {"match", std::move(match)},
          {"route", std::move(route)},
          {"timeoutMs", r.timeout.count()},
          {"retryAttempts", r.retryAttempts}};
}

json serviceToWire(const MeshService& svc) {
  json ports = json::array();
  for (const auto& p : svc.ports) {
    json eps = json::array();
    for (const auto& e : p.endpoints) {
      eps.push_back({{"ip", e.ip},
                     {"port", e.port},
                     {"pod", e.podName},
                     {"namespace", e.ns},
                     {"labels", e.labels},
                     {"sidecar", e.sidecar},
                     {"serviceAccount", e.serviceAccount}});
    }
    ports.push_back({{"name", p.name},
                     {"port", p.port},
                     {"protocol", p.protocol},
                     {"appProtocol", p.appProtocol},
                     {"endpoints", std::move(eps)}});
  }
  json routes = json::array();
  for (const auto& r : svc.routes) routes.push_back(routeToWire(r));
  json subsets = json::array();
  for (const auto& [name, s] : svc.subsets) {
    json item = {{"name", s.name}, {"key", name}, {"labels", s.labels}};
    if (s.trafficPolicy) item["trafficPolicy"] = policyToWire(*s.trafficPolicy);
    subsets.push_back(std::move(item));
  }
  return {{"namespace", svc.ns},
          {"name", svc.name},
          {"clusterIP", svc.clusterIP},
          {"ports", std::move(ports)},
          {"routes", std::move(routes)},
          {"subsets", std::move(subsets)},
          {"trafficPolicy", policyToWire(svc.trafficPolicy)}};
}

json peerAuthenticationToWire(const PeerAuthentication& p) {
  json portLevel = json::object();
  for (const auto& [port, mode] : p.portLevel) portLevel[std::to_string(port)] = mtlsModeName(mode);
  return {{"namespace", p.ns},
          {"name", p.name},
          {"creationTimestamp", p.creationTimestamp},
          {"hasSelector", p.hasSelector},
          {"selector", p.selector},
          {"mode", mtlsModeName(p.mode)},
          {"portLevel", std::move(portLevel)}};
}

// ---- decoding: a WireError carries the field path up to meshConfigFromWire ----

struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw WireError(path + ": " + what);
}

const json& field(const json& obj, const std::string& path, const char* name) {
  if (!obj.is_object()) fail(path, "want an object");
  auto it = obj.find(name);
  if (it == obj.end()) fail(path + "." + name, "Required value");
  return *it;
}

std::string str(const json& obj, const std::string& path, const char* name) {
  const json& v = field(obj, path, name);
  if (!v.is_string()) fail(path + "." + name, "want a string");
  return v.get<std::string>();
}

int64_t integer(const json& obj, const std::string& path, const char* name) {
  const json& v = field(obj, path, name);
  if (!v.is_number_integer()) fail(path + "." + name, "want an integer");
  return v.get<int64_t>();
}

bool boolean(const json& obj, const std::string& path, const char* name) {
  const json& v = field(obj, path, name);
  if (!v.is_boolean()) fail(path + "." + name, "want a boolean");
  return v.get<bool>();
}

const json& array(const json& obj, const std::string& path, const char* name) {
  const json& v = field(obj, path, name);
  if (!v.is_array()) fail(path + "." + name, "want an array");
  return v;
}

std::map<std::string, std::string> stringMap(const json& obj, const std::string& path,
                                             const char* name) {
  const json& v = field(obj, path, name);
  if (!v.is_object()) fail(path + "." + name, "want an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& [k, x] : v.items()) {
    if (!x.is_string()) fail(path + "." + name + "." + k, "want a string");
    out[k] = x.get<std::string>();
  }
  return out;
}

std::string at(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Calls fn(element, its path) for each element of the array obj[name].
template <class Fn>
void forEachAt(const json& obj, const std::string& path, const char* name, Fn&& fn) {
  const json& list = array(obj, path, name);
  const std::string listPath = path + "." + name;
  for (size_t i = 0; i < list.size(); ++i) fn(list[i], at(listPath, i));
}

StringMatch stringMatchFromWire(const json& j, const std::string& path) {
  if (!j.is_object() || j.size() != 1) fail(path, "want one of exact, prefix, regex");
  auto it = j.begin();
  if (!it.value().is_string()) fail(path + "." + it.key(), "want a string");
  StringMatch m;
  m.value = it.value().get<std::string>();
  if (it.key() == "exact") {
    m.kind = StringMatch::Kind::kExact;
  } else if (it.key() == "prefix") {
    m.kind = StringMatch::Kind::kPrefix;
  } else if (it.key() == "regex") {
    m.kind = StringMatch::Kind::kRegex;
    try {
      m.re = std::regex(m.value, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      fail(path + ".regex", e.what());
    }
  } else {
    fail(path + "." + it.key(), "Unsupported value: want exact, prefix or regex");
  }
  return m;
}

TrafficPolicy policyFromWire(const json& j, const std::string& path) {
  TrafficPolicy p;
  std::string lb = str(j, path, "loadBalancer");
  if (lb == "ROUND_ROBIN") {
    p.loadBalancer = LoadBalancer::kRoundRobin;
  } else if (lb == "RANDOM") {
    p.loadBalancer = LoadBalancer::kRandom;
  } else if (lb == "LEAST_REQUEST") {
    p.loadBalancer = LoadBalancer::kLeastRequest;
  } else {
    fail(path + ".loadBalancer", "Unsupported value: \"" + lb + "\"");
  }
  if (j.contains("outlierDetection")) {
    const json& o = j["outlierDetection"];
    std::string op = path + ".outlierDetection";
    OutlierDetection od;
    od.consecutive5xxErrors = static_cast<int>(integer(o, op, "consecutive5xxErrors"));
    od.interval = std::chrono::milliseconds(integer(o, op, "intervalMs"));
    od.baseEjectionTime = std::chrono::milliseconds(integer(o, op, "baseEjectionTimeMs"));
    od.maxEjectionPercent = static_cast<int>(integer(o, op, "maxEjectionPercent"));
    p.outlierDetection = od;
  }
  return p;
}

MtlsMode modeFromWire(const json& v, const std::string& path) {
  std::string s = v.is_string() ? v.get<std::string>() : "";
  for (MtlsMode m :
       {MtlsMode::kUnset, MtlsMode::kPermissive, MtlsMode::kStrict, MtlsMode::kDisable}) {
    if (s == mtlsModeName(m)) return m;
  }
  fail(path, "Unsupported value: " + v.dump());
}

HttpRoute routeFromWire(const json& j, const std::string& path) {
  HttpRoute r;
  r.name = str(j, path, "name");
  forEachAt(j, path, "match", [&r](const json& match, const std::string& mp) {
    HttpMatch m;
    if (match.is_object() && match.contains("uri"))
      m.uri = stringMatchFromWire(match["uri"], mp + ".uri");
    const json& headers = field(match, mp, "headers");
    if (!headers.is_object()) fail(mp + ".headers", "want an object");
    for (const auto& [name, h] : headers.items())
      m.headers[name] = stringMatchFromWire(h, mp + ".headers." + name);
    r.match.push_back(std::move(m));
  });
  forEachAt(j, path, "route", [&r](const json& route, const std::string& dp) {
    RouteDestination d;
    d.host = str(route, dp, "host");
    d.subset = str(route, dp, "subset");
    d.port = static_cast<int>(integer(route, dp, "port"));
    d.weight = static_cast<int>(integer(route, dp, "weight"));
    r.route.push_back(std::move(d));
  });
  r.timeout = std::chrono::milliseconds(integer(j, path, "timeoutMs"));
  r.retryAttempts = static_cast<int>(integer(j, path, "retryAttempts"));
  return r;
}

MeshService serviceFromWire(const json& j, const std::string& path) {
  MeshService svc;
  svc.ns = str(j, path, "namespace");
  svc.name = str(j, path, "name");
  svc.clusterIP = str(j, path, "clusterIP");
  forEachAt(j, path, "ports", [&svc](const json& p, const std::string& pp) {
    MeshServicePort port;
    port.name = str(p, pp, "name");
    port.port = static_cast<int>(integer(p, pp, "port"));
    port.protocol = str(p, pp, "protocol");
    port.appProtocol = str(p, pp, "appProtocol");
    forEachAt(p, pp, "endpoints", [&port](const json& ep, const std::string& epp) {
      MeshEndpoint e;
      e.ip = str(ep, epp, "ip");
      e.port = static_cast<int>(integer(ep, epp, "port"));
      e.podName = str(ep, epp, "pod");
      e.ns = str(ep, epp, "namespace");
      e.labels = stringMap(ep, epp, "labels");
      e.sidecar = boolean(ep, epp, "sidecar");
      e.serviceAccount = str(ep, epp, "serviceAccount");
      port.endpoints.push_back(std::move(e));
    });
    svc.ports.push_back(std::move(port));
  });
  forEachAt(j, path, "routes", [&svc](const json& route, const std::string& rp) {
    svc.routes.push_back(routeFromWire(route, rp));
  });
  forEachAt(j, path, "subsets", [&svc](const json& subset, const std::string& sp) {
    Subset s;
    s.name = str(subset, sp, "name");
    s.labels = stringMap(subset, sp, "labels");
    if (subset.contains("trafficPolicy"))
      s.trafficPolicy = policyFromWire(subset["trafficPolicy"], sp + ".trafficPolicy");
    svc.subsets[str(subset, sp, "key")] = std::move(s);
  });
  svc.trafficPolicy = policyFromWire(field(j, path, "trafficPolicy"), path + ".trafficPolicy");
  return svc;
}

PeerAuthentication peerAuthenticationFromWire(const json& j, const std::string& path) {
  PeerAuthentication p;
  p.ns = str(j, path, "namespace");
  p.name = str(j, path, "name");
  p.creationTimestamp = str(j, path, "creationTimestamp");
  p.hasSelector = boolean(j, path, "hasSelector");
  p.selector = stringMap(j, path, "selector");
  p.mode = modeFromWire(field(j, path, "mode"), path + ".mode");
  const json& portLevel = field(j, path, "portLevel");
  if (!portLevel.is_object()) fail(path + ".portLevel", "want an object");
  for (const auto& [port, mode] : portLevel.items()) {
    int number = 0;
    try {
      number = std::stoi(port);
    } catch (const std::exception&) {
      fail(path + ".portLevel." + port, "want a port number as the key");
    }
    p.portLevel[number] = modeFromWire(mode, path + ".portLevel." + port);
  }
  return p;
}

// AuthorizationPolicies travel as written (metadata and spec) and are parsed again on arrival.
json authorizationPoliciesToWire(const MeshConfig& config) {
  json out = json::array();
  for (const auto& p : config.authorizationPolicies) out.push_back(p.source);
  return out;
}

// Absent (from an older istiod) is none.
std::vector<AuthorizationPolicy> authorizationPoliciesFromWire(const json& j,
                                                               const std::string& path) {
  std::vector<AuthorizationPolicy> out;
  if (!j.contains("authorizationPolicies")) return out;
  forEachAt(j, path, "authorizationPolicies", [&out](const json& p, const std::string& pp) {
    if (!p.is_object()) fail(pp, "want an object");
    out.push_back(authorizationPolicyOrClosed(p, nullptr));
  });
  return out;
}

json podToWire(const MeshPod& p) {
  return {{"namespace", p.ns},  {"name", p.name},
          {"ip", p.ip},         {"serviceAccount", p.serviceAccount},
          {"labels", p.labels}, {"sidecar", p.sidecar}};
}

MeshPod podFromWire(const json& j, const std::string& path) {
  MeshPod p;
  p.ns = str(j, path, "namespace");
  p.name = str(j, path, "name");
  p.ip = str(j, path, "ip");
  p.serviceAccount = str(j, path, "serviceAccount");
  p.labels = stringMap(j, path, "labels");
  p.sidecar = boolean(j, path, "sidecar");
  return p;
}

}  // namespace wire_detail

json meshConfigToWire(const MeshConfig& config) {
  using namespace wire_detail;
  json services = json::array();
  for (const auto& [key, svc] : config.services) services.push_back(serviceToWire(svc));
  json pods = json::array();
  for (const auto& [key, p] : config.pods) pods.push_back(podToWire(p));
  json policies = json::array();
  for (const auto& p : config.peerAuthentications) policies.push_back(peerAuthenticationToWire(p));
  return {{"version", config.version},
          {"services", std::move(services)},
          {"byVip", config.byVip},
          {"pods", std::move(pods)},
          {"podByIp", config.podByIp},
          {"peerAuthentications", std::move(policies)},
          {"authorizationPolicies", authorizationPoliciesToWire(config)}};
}

Result<std::shared_ptr<const MeshConfig>> meshConfigFromWire(const json& wire) {
  using namespace wire_detail;
  const std::string path = "config";
  try {
    auto config = std::make_shared<MeshConfig>();
    config->version = integer(wire, path, "version");
    forEachAt(wire, path, "services", [&config](const json& s, const std::string& sp) {
      MeshService svc = serviceFromWire(s, sp);
      std::string key = svc.key();
      config->services.emplace(std::move(key), std::move(svc));
    });
    config->byVip = stringMap(wire, path, "byVip");
    forEachAt(wire, path, "pods", [&config](const json& p, const std::string& pp) {
      MeshPod pod = podFromWire(p, pp);
      std::string key = pod.ns + "/" + pod.name;
      config->pods.emplace(std::move(key), std::move(pod));
    });
    config->podByIp = stringMap(wire, path, "podByIp");
    forEachAt(wire, path, "peerAuthentications", [&config](const json& p, const std::string& pp) {
      config->peerAuthentications.push_back(peerAuthenticationFromWire(p, pp));
    });
    config->authorizationPolicies = authorizationPoliciesFromWire(wire, path);
    return std::shared_ptr<const MeshConfig>(std::move(config));
  } catch (const WireError& e) {
    return Status::BadRequest(e.what());
  }
}

json meshConfigDeltaToWire(const MeshConfig& from, const MeshConfig& to) {
  using namespace wire_detail;
  json services = json::array(), removedServices = json::array();
  for (const auto& [key, svc] : to.services) {
    auto old = from.services.find(key);
    json now = serviceToWire(svc);
    if (old == from.services.end() || serviceToWire(old->second) != now)
      services.push_back(std::move(now));
  }
  for (const auto& [key, svc] : from.services)
    if (!to.services.count(key)) removedServices.push_back(key);
  json pods = json::array(), removedPods = json::array();
  for (const auto& [key, p] : to.pods) {
    auto old = from.pods.find(key);
    json now = podToWire(p);
    if (old == from.pods.end() || podToWire(old->second) != now) pods.push_back(std::move(now));
  }
  for (const auto& [key, p] : from.pods)
    if (!to.pods.count(key)) removedPods.push_back(key);
  json podByIp = json::object();  // changed entries; null = gone
  for (const auto& [ip, key] : to.podByIp) {
    auto old = from.podByIp.find(ip);
    if (old == from.podByIp.end() || old->second != key) podByIp[ip] = key;
  }
  for (const auto& [ip, key] : from.podByIp)
    if (!to.podByIp.count(ip)) podByIp[ip] = nullptr;
  json byVip = json::object();
  for (const auto& [vip, key] : to.byVip) {
    auto old = from.byVip.find(vip);
    if (old == from.byVip.end() || old->second != key) byVip[vip] = key;
  }
  for (const auto& [vip, key] : from.byVip)
    if (!to.byVip.count(vip)) byVip[vip] = nullptr;
  json policies = json::array();
  for (const auto& p : to.peerAuthentications) policies.push_back(peerAuthenticationToWire(p));
  return {{"version", to.version},
          {"base", from.version},
          {"services", std::move(services)},
          {"removedServices", std::move(removedServices)},
          {"pods", std::move(pods)},
          {"removedPods", std::move(removedPods)},
          {"podByIp", std::move(podByIp)},
          {"byVip", std::move(byVip)},
          {"peerAuthentications", std::move(policies)},
          {"authorizationPolicies", authorizationPoliciesToWire(to)}};
}

Result<std::shared_ptr<const MeshConfig>> applyMeshConfigDelta(const MeshConfig& base,
                                                               const json& delta) {
  using namespace wire_detail;
  const std::string path = "delta";
  try {
    if (integer(delta, path, "base") != base.version) {
      return Status::ConflictMessage("the delta applies to version " +
                                     std::to_string(integer(delta, path, "base")) +
                                     ", this config is version " + std::to_string(base.version));
    }
    auto config = std::make_shared<MeshConfig>(base);
    config->version = integer(delta, path, "version");
    forEachAt(delta, path, "services", [&config](const json& s, const std::string& sp) {
      MeshService svc = serviceFromWire(s, sp);
      std::string key = svc.key();
      config->services.insert_or_assign(std::move(key), std::move(svc));
    });
    forEachAt(delta, path, "removedServices", [&config](const json& key, const std::string& kp) {
      if (!key.is_string()) fail(kp, "want a string");
      config->services.erase(key.get<std::string>());
    });
    forEachAt(delta, path, "pods", [&config](const json& p, const std::string& pp) {
      MeshPod pod = podFromWire(p, pp);
      std::string key = pod.ns + "/" + pod.name;
      config->pods.insert_or_assign(std::move(key), std::move(pod));
    });
    forEachAt(delta, path, "removedPods", [&config](const json& key, const std::string& kp) {
      if (!key.is_string()) fail(kp, "want a string");
      config->pods.erase(key.get<std::string>());
    });
    for (const char* name : {"podByIp", "byVip"}) {
      const json& changes = field(delta, path, name);
      if (!changes.is_object()) fail(path + "." + name, "want an object");
      auto& target = std::string(name) == "podByIp" ? config->podByIp : config->byVip;
      for (const auto& [k, v] : changes.items()) {
        if (v.is_null()) {
          target.erase(k);
        } else if (v.is_string()) {
          target[k] = v.get<std::string>();
        } else {
          fail(path + "." + name + "." + k, "want a string or null");
        }
      }
    }
    config->peerAuthentications.clear();
    forEachAt(delta, path, "peerAuthentications", [&config](const json& p, const std::string& pp) {
      config->peerAuthentications.push_back(peerAuthenticationFromWire(p, pp));
    });
    config->authorizationPolicies = authorizationPoliciesFromWire(delta, path);
    return std::shared_ptr<const MeshConfig>(std::move(config));
  } catch (const WireError& e) {
    return Status::BadRequest(e.what());
  }
}

}  // namespace minik8s::mesh
