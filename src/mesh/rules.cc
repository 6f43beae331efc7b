#include "mesh/rules.h"

#include <algorithm>
#include <cctype>

#include "common/json_pointer.h"

namespace minik8s::mesh {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Result<StringMatch> parseStringMatch(const json& j, const std::string& field) {
  if (!j.is_object() || j.size() != 1) {
    return Status::BadRequest(field + ": want exactly one of exact, prefix, regex");
  }
  StringMatch m;
  auto [key, value] = *j.items().begin();
  if (!value.is_string()) return Status::BadRequest(field + "." + key + ": want a string");
  m.value = value.get<std::string>();
  if (key == "exact") {
    m.kind = StringMatch::Kind::kExact;
  } else if (key == "prefix") {
    m.kind = StringMatch::Kind::kPrefix;
  } else if (key == "regex") {
    m.kind = StringMatch::Kind::kRegex;
    try {
      m.re = std::regex(m.value, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return Status::BadRequest(field + ".regex: " + e.what());
    }
  } else {
    return Status::BadRequest(field + "." + key + ": unsupported (exact, prefix, regex)");
  }
  return m;
}

// Istio durations: "1.5s", "300ms", "2m", "1h".
Result<std::chrono::milliseconds> parseDuration(const json& j, const std::string& field) {
  if (!j.is_string()) return Status::BadRequest(field + ": want a duration such as 2s");
  std::string s = j.get<std::string>();
  size_t unitAt = s.find_first_not_of("0123456789.");
  if (unitAt == 0 || unitAt == std::string::npos) {
    return Status::BadRequest(field + ": " + s + " has no unit (ms, s, m, h)");
  }
  double n = std::stod(s.substr(0, unitAt));
  std::string unit = s.substr(unitAt);
  double ms = unit == "ms"  ? n
              : unit == "s" ? n * 1e3
              : unit == "m" ? n * 6e4
              : unit == "h" ? n * 3.6e6
                            : -1;
  if (ms < 0) return Status::BadRequest(field + ": unknown unit " + unit + " (ms, s, m, h)");
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

std::map<std::string, std::string> stringMap(const json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (auto& [k, v] : j.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

bool StringMatch::matches(std::string_view s) const {
  switch (kind) {
    case Kind::kExact:
      return s == value;
    case Kind::kPrefix:
      return s.substr(0, value.size()) == value;
    case Kind::kRegex:
      return std::regex_match(s.begin(), s.end(), re);
  }
  return false;
}

Result<VirtualService> parseVirtualService(const json& obj) {
  VirtualService vs;
  vs.ns = valueAt(obj, "/metadata/namespace", std::string("default"));
  vs.name = valueAt(obj, "/metadata/name", std::string());
  const json spec = obj.value("spec", json::object());
  for (const auto& h : spec.value("hosts", json::array())) {
    if (h.is_string()) vs.hosts.push_back(h.get<std::string>());
  }
  const json http = spec.value("http", json::array());
  for (size_t i = 0; i < http.size(); ++i) {
    const json& r = http[i];
    std::string at = "spec.http[" + std::to_string(i) + "]";
    HttpRoute route;
    route.name = r.value("name", "");
    const json matches = r.value("match", json::array());
    for (size_t k = 0; k < matches.size(); ++k) {
      const json& m = matches[k];
      std::string mat = at + ".match[" + std::to_string(k) + "]";
      HttpMatch hm;
      if (m.contains("uri")) {
        auto uri = parseStringMatch(m["uri"], mat + ".uri");
        if (!uri.ok()) return uri.status();
        hm.uri = std::move(*uri);
      }
      const json headers = m.value("headers", json::object());
      for (auto& [name, sm] : headers.items()) {
        auto parsed = parseStringMatch(sm, mat + ".headers." + name);
        if (!parsed.ok()) return parsed.status();
        hm.headers.emplace(lower(name), std::move(*parsed));
      }
      route.match.push_back(std::move(hm));
    }
    const json dests = r.value("route", json::array());
    for (size_t k = 0; k < dests.size(); ++k) {
      const json& d = dests[k].value("destination", json::object());
      RouteDestination rd;
      rd.host = d.value("host", "");
      if (rd.host.empty()) {
        return Status::BadRequest(at + ".route[" + std::to_string(k) +
                                  "].destination.host: required");
      }
      rd.subset = d.value("subset", "");
      if (d.contains("port")) rd.port = d["port"].value("number", 0);
      rd.weight = dests[k].value("weight", 0);
      route.route.push_back(std::move(rd));
    }
    if (route.route.empty()) return Status::BadRequest(at + ".route: at least one destination");
    if (r.contains("timeout")) {
      auto t = parseDuration(r["timeout"], at + ".timeout");
      if (!t.ok()) return t.status();
      route.timeout = *t;
    }
    if (r.contains("retries")) route.retryAttempts = r["retries"].value("attempts", 0);
    vs.http.push_back(std::move(route));
  }
  return vs;
}

Result<TrafficPolicy> parseTrafficPolicy(const json& policy, const std::string& path) {
  TrafficPolicy tp;
  if (!policy.is_object()) return Status::BadRequest(path + ": want an object");
  if (policy.contains("loadBalancer")) {
    const json& lb = policy["loadBalancer"];
    const std::string simple = lb.is_object() ? lb.value("simple", "") : "";
    if (simple == "ROUND_ROBIN" || simple == "UNSPECIFIED") {
      tp.loadBalancer = LoadBalancer::kRoundRobin;
    } else if (simple == "RANDOM") {
      tp.loadBalancer = LoadBalancer::kRandom;
    } else if (simple == "LEAST_REQUEST" || simple == "LEAST_CONN") {
      tp.loadBalancer = LoadBalancer::kLeastRequest;
    } else {
      return Status::BadRequest(path + ".loadBalancer.simple: unsupported value \"" + simple +
                                "\" (ROUND_ROBIN, RANDOM, LEAST_REQUEST)");
    }
  }
  if (policy.contains("outlierDetection")) {
    const json& od = policy["outlierDetection"];
    const std::string at = path + ".outlierDetection";
    if (!od.is_object()) return Status::BadRequest(at + ": want an object");
    OutlierDetection o;
    for (const char* field : {"consecutive5xxErrors", "consecutiveErrors", "maxEjectionPercent"}) {
      if (od.contains(field) && !od[field].is_number_integer()) {
        return Status::BadRequest(at + "." + field + ": want an integer");
      }
    }
    // consecutiveErrors is the deprecated name of consecutive5xxErrors.
    o.consecutive5xxErrors = od.value("consecutive5xxErrors", od.value("consecutiveErrors", 5));
    o.maxEjectionPercent = od.value("maxEjectionPercent", 10);
    if (o.consecutive5xxErrors < 0) {
      return Status::BadRequest(at + ".consecutive5xxErrors: must not be negative");
    }
    if (o.maxEjectionPercent < 0 || o.maxEjectionPercent > 100) {
      return Status::BadRequest(at + ".maxEjectionPercent: must be from 0 to 100");
    }
    if (od.contains("interval")) {
      auto d = parseDuration(od["interval"], at + ".interval");
      if (!d.ok()) return d.status();
      o.interval = *d;
    }
    if (od.contains("baseEjectionTime")) {
      auto d = parseDuration(od["baseEjectionTime"], at + ".baseEjectionTime");
      if (!d.ok()) return d.status();
      o.baseEjectionTime = *d;
    }
    tp.outlierDetection = o;
  }
  return tp;
}

Result<DestinationRule> parseDestinationRule(const json& obj) {
  DestinationRule dr;
  dr.ns = valueAt(obj, "/metadata/namespace", std::string("default"));
  dr.name = valueAt(obj, "/metadata/name", std::string());
  const json spec = obj.value("spec", json::object());
  dr.host = spec.value("host", "");
  if (dr.host.empty()) return Status::BadRequest("spec.host: required");
  if (spec.contains("trafficPolicy")) {
    auto tp = parseTrafficPolicy(spec["trafficPolicy"], "spec.trafficPolicy");
    if (!tp.ok()) return tp.status();
    dr.trafficPolicy = std::move(*tp);
  }
  const json subsets = spec.value("subsets", json::array());
  for (size_t i = 0; i < subsets.size(); ++i) {
    const json& s = subsets[i];
    Subset subset;
    subset.name = s.value("name", "");
    if (subset.name.empty()) return Status::BadRequest("spec.subsets[].name: required");
    subset.labels = stringMap(s.value("labels", json::object()));
    if (s.contains("trafficPolicy")) {
      auto tp = parseTrafficPolicy(s["trafficPolicy"],
                                   "spec.subsets[" + std::to_string(i) + "].trafficPolicy");
      if (!tp.ok()) return tp.status();
      subset.trafficPolicy = std::move(*tp);
    }
    dr.subsets.push_back(std::move(subset));
  }
  return dr;
}

std::string serviceKeyOfHost(std::string_view host, std::string_view ruleNamespace) {
  std::string_view name = host;
  std::string_view ns = ruleNamespace;
  if (size_t dot = host.find('.'); dot != std::string_view::npos) {
    name = host.substr(0, dot);
    std::string_view rest = host.substr(dot + 1);
    ns = rest.substr(0, rest.find('.'));
  }
  return std::string(ns) + "/" + std::string(name);
}

const HttpRoute* matchRoute(const std::vector<HttpRoute>& routes, std::string_view path,
                            const HeaderLookup& header) {
  std::string_view uri = path.substr(0, path.find('?'));
  for (const HttpRoute& r : routes) {
    if (r.match.empty()) return &r;
    for (const HttpMatch& m : r.match) {
      if (m.uri && !m.uri->matches(uri)) continue;
      bool all = true;
      for (const auto& [name, sm] : m.headers) {
        auto v = header(name);
        if (!v || !sm.matches(*v)) {
          all = false;
          break;
        }
      }
      if (all) return &r;
    }
  }
  return nullptr;
}

size_t pickWeighted(const std::vector<RouteDestination>& route, std::mt19937_64& rng) {
  if (route.size() <= 1) return 0;
  int64_t total = 0;
  for (const auto& d : route) total += std::max(d.weight, 0);
  if (total == 0) return std::uniform_int_distribution<size_t>(0, route.size() - 1)(rng);
  int64_t draw = std::uniform_int_distribution<int64_t>(0, total - 1)(rng);
  for (size_t i = 0; i < route.size(); ++i) {
    draw -= std::max(route[i].weight, 0);
    if (draw < 0) return i;
  }
  return route.size() - 1;
}

bool labelsMatch(const std::map<std::string, std::string>& selector,
                 const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

}  // namespace minik8s::mesh
