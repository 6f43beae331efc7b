#include "dns/gateway_config.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "fmt/format.h"

namespace minik8s::dns {

namespace {

std::string stringField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string keyOf(const json& obj) {
  const json meta = objectField(obj, "metadata");
  return stringField(meta, "namespace") + "/" + stringField(meta, "name");
}

// "ip:port" of `service`'s port `port`, or the reason it has none.
struct Upstream {
  std::string address;
  std::string reason;
  std::string problem;
};

Upstream upstreamOf(const std::map<std::string, json>& services, const std::string& ns,
                    const std::string& name, int port) {
  auto it = services.find(ns + "/" + name);
  if (it == services.end())
    return {"", "ServiceNotFound", fmt::format("service {}/{} not found", ns, name)};
  const json spec = objectField(it->second, "spec");
  const std::string ip = stringField(spec, "clusterIP");
  if (ip.empty() || ip == "None")
    return {"", "ServiceHeadless",
            fmt::format("service {}/{} has no cluster IP (headless)", ns, name)};
  const json ports = spec.value("ports", json::array());
  for (const auto& p : ports.is_array() ? ports : json::array()) {
    if (!p.is_object()) continue;
    const json number = p.value("port", json());
    const std::string protocol = p.contains("protocol") ? stringField(p, "protocol") : "TCP";
    if (number.is_number_integer() && number.get<int>() == port && protocol == "TCP")
      return {fmt::format("{}:{}", ip, port), "", ""};
  }
  return {"", "ServicePortNotFound",
          fmt::format("service {}/{} has no TCP port {}", ns, name, port)};
}

bool allowedPathChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("-._~/%+@:!$&()*,=").find(c) != std::string_view::npos;
}

}  // namespace

json objectField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : json::object();
}

std::string normaliseGatewayPath(const std::string& path) {
  if (path.empty() || path.front() != '/') return "";
  if (!std::all_of(path.begin(), path.end(), allowedPathChar)) return "";
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

GatewayPlan planGateway(const std::vector<json>& dnses, const std::vector<json>& services) {
  std::map<std::string, json> byKey;
  for (const auto& s : services) byKey[keyOf(s)] = s;
  std::vector<json> sorted = dnses;
  std::sort(sorted.begin(), sorted.end(),
            [](const json& a, const json& b) { return keyOf(a) < keyOf(b); });

  std::map<std::string, std::map<std::string, GatewayLocation>> routes;  // host -> path -> where
  GatewayPlan plan;
  for (const auto& dns : sorted) {
    DnsForwardingStatus st;
    st.key = keyOf(dns);
    const std::string ns = stringField(objectField(dns, "metadata"), "namespace");
    const json spec = objectField(dns, "spec");
    const std::string host = stringField(spec, "host");
    std::vector<std::string> problems;
    std::vector<std::string> forwarded;
    if (!host.empty()) plan.hosts.push_back(host);
    const json paths = spec.value("paths", json::array());
    for (const auto& entry : paths.is_array() ? paths : json::array()) {
      if (!entry.is_object()) continue;
      const std::string rawPath = stringField(entry, "path");
      const std::string service = stringField(entry, "serviceName");
      const json portJson = entry.value("servicePort", json());
      const int port = portJson.is_number_integer() ? portJson.get<int>() : 0;
      auto fail = [&](const std::string& reason, const std::string& message) {
        if (st.ready) st.reason = reason;  // the first problem names the reason
        st.ready = false;
        problems.push_back(fmt::format("path {}: {}", rawPath, message));
      };
      const std::string path = normaliseGatewayPath(rawPath);
      if (path.empty()) {
        fail("InvalidPath", "not a path the gateway can serve");
        continue;
      }
      Upstream up = upstreamOf(byKey, ns, service, port);
      if (up.address.empty()) {
        fail(up.reason, up.problem);
        continue;
      }
      auto& hostRoutes = routes[host];
      auto taken = hostRoutes.find(path);
      if (taken != hostRoutes.end() && taken->second.source != st.key) {
        fail("PathConflict",
             fmt::format("{}{} is already forwarded by {}", host, path, taken->second.source));
        continue;
      }
      hostRoutes[path] = GatewayLocation{path, up.address, st.key};
      forwarded.push_back(fmt::format("{} -> {}:{}", path, service, port));
    }
    if (st.ready) {
      st.reason = "Forwarding";
      st.message = forwarded.empty()
                       ? "no paths"
                       : "forwarding " + fmt::format("{}", fmt::join(forwarded, ", "));
    } else {
      st.message = fmt::format("{}", fmt::join(problems, "; "));
    }
    plan.statuses.push_back(std::move(st));
  }
  std::sort(plan.hosts.begin(), plan.hosts.end());
  plan.hosts.erase(std::unique(plan.hosts.begin(), plan.hosts.end()), plan.hosts.end());
  for (const auto& host : plan.hosts) {
    GatewayServer server{host, {}};
    for (const auto& [path, loc] : routes[host]) server.locations.push_back(loc);
    plan.servers.push_back(std::move(server));
  }
  return plan;
}

std::string renderNginxConfig(const GatewayPlan& plan, const NginxSettings& s) {
  const std::string listen = fmt::format("{}:{}", s.listenAddress, s.port);
  const std::string& run = s.runDir;
  std::string out;
  out += "# Rendered by the minik8s agent from the Dns objects (minik8s.io/v1); do not edit.\n";
  out += "daemon off;\n";
  out += "master_process on;\n";
  out += "worker_processes 1;\n";
  if (!s.user.empty()) out += fmt::format("user {};\n", s.user);
  out += fmt::format("pid {}/nginx.pid;\n", run);
  out += fmt::format("error_log {}/error.log warn;\n", run);
  out += "events {\n  worker_connections 1024;\n}\n";
  out += "http {\n";
  out += fmt::format("  access_log {}/access.log;\n", run);
  for (const char* t : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
    out += fmt::format("  {}_temp_path {}/tmp/{};\n", t, run, t);
  out += "  proxy_http_version 1.1;\n";
  out += "  proxy_set_header Host $http_host;\n";
  out += "  proxy_set_header Connection \"\";\n";
  out += "  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n";
  out += "  proxy_connect_timeout 5s;\n";
  out += "  server {\n";
  out += fmt::format("    listen {} default_server;\n", listen);
  out += "    server_name _;\n";
  out += "    location / {\n      return 404;\n    }\n";
  out += "  }\n";
  for (const auto& server : plan.servers) {
    out += "  server {\n";
    out += fmt::format("    listen {};\n", listen);
    out += fmt::format("    server_name {};\n", server.host);
    bool hasRoot = false;
    for (const auto& loc : server.locations) {
      out += fmt::format("    # {}\n", loc.source);
      if (loc.path == "/") {
        hasRoot = true;
        out +=
            fmt::format("    location / {{\n      proxy_pass http://{};\n    }}\n", loc.upstream);
        continue;
      }
      // The exact path and everything under it; the prefix is replaced by "/".
      out += fmt::format("    location = {} {{\n      proxy_pass http://{}/;\n    }}\n", loc.path,
                         loc.upstream);
      out += fmt::format("    location {}/ {{\n      proxy_pass http://{}/;\n    }}\n", loc.path,
                         loc.upstream);
    }
    if (!hasRoot) out += "    location / {\n      return 404;\n    }\n";
    out += "  }\n";
  }
  out += "}\n";
  return out;
}

}  // namespace minik8s::dns
