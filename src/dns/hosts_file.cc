#include "dns/hosts_file.h"

#include <map>
#include <set>

#include "fmt/format.h"

namespace minik8s::dns {

namespace {

const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string str(const json& obj, const char* key) {
  const json* v = field(obj, key);
  return v && v->is_string() ? v->get<std::string>() : "";
}

const json& sub(const json& obj, const char* key) {
  static const json kNull;
  const json* v = field(obj, key);
  return v ? *v : kNull;
}

// A name or address must be one token of the hosts file: no blanks, no comment sign.
bool isToken(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#') return false;
  }
  return true;
}

}  // namespace

std::string buildHostsFile(const std::vector<json>& services, const std::vector<json>& slices,
                           const std::string& domain, const std::vector<HostEntry>& extra) {
  // Ready endpoint IPs and hostname -> IP per "ns/service" (from every IPv4 slice).
  struct Endpoints {
    std::set<std::string> ready, all;
    std::set<std::pair<std::string, std::string>> hostnames;  // (hostname, ip)
  };
  std::map<std::string, Endpoints> endpoints;
  for (const json& slice : slices) {
    if (str(slice, "addressType") != "IPv4") continue;
    const json& meta = sub(slice, "metadata");
    std::string service = str(sub(meta, "labels"), "kubernetes.io/service-name");
    if (service.empty()) continue;
    Endpoints& eps = endpoints[str(meta, "namespace") + "/" + service];
    const json& list = sub(slice, "endpoints");
    if (!list.is_array()) continue;
    for (const json& ep : list) {
      const json* ready = field(sub(ep, "conditions"), "ready");
      bool isReady = !(ready && ready->is_boolean() && !ready->get<bool>());
      std::string hostname = str(ep, "hostname");
      const json& addresses = sub(ep, "addresses");
      if (!addresses.is_array()) continue;
      for (const json& a : addresses) {
        if (!a.is_string() || !isToken(a.get<std::string>())) continue;
        std::string ip = a.get<std::string>();
        eps.all.insert(ip);
        if (isReady) eps.ready.insert(ip);
        if (isToken(hostname)) eps.hostnames.insert({hostname, ip});
      }
    }
  }

  std::set<std::string> lines;  // "ip names", sorted and de-duplicated
  for (const json& svc : services) {
    const json& meta = sub(svc, "metadata");
    const json& spec = sub(svc, "spec");
    std::string ns = str(meta, "namespace"), name = str(meta, "name");
    if (!isToken(ns) || !isToken(name) || str(spec, "type") == "ExternalName") continue;
    std::string fqdn = fmt::format("{}.{}.svc.{}", name, ns, domain);
    std::string names = fmt::format("{} {}.{}.svc {}.{}", fqdn, name, ns, name, ns);
    std::string clusterIP = str(spec, "clusterIP");
    if (!clusterIP.empty() && clusterIP != "None") {
      if (isToken(clusterIP)) lines.insert(clusterIP + " " + names);
      continue;
    }
    if (clusterIP != "None") continue;  // not allocated yet
    auto it = endpoints.find(ns + "/" + name);
    if (it == endpoints.end()) continue;
    const json* publish = field(spec, "publishNotReadyAddresses");
    bool all = publish && publish->is_boolean() && publish->get<bool>();
    const auto& ips = all ? it->second.all : it->second.ready;
    for (const std::string& ip : ips) lines.insert(ip + " " + names);
    for (const auto& [hostname, ip] : it->second.hostnames) {
      if (ips.count(ip)) lines.insert(fmt::format("{} {}.{}", ip, hostname, fqdn));
    }
  }
  for (const HostEntry& e : extra) {
    if (isToken(e.ip) && isToken(e.name)) lines.insert(e.ip + " " + e.name);
  }

  std::string out = "# cluster DNS records written by the minik8s agent; do not edit\n";
  for (const std::string& line : lines) {
    out += line;
    out += '\n';
  }
  return out;
}

std::vector<HostEntry> wildcardDomains(const std::vector<json>& services) {
  auto dnsName = [](const std::string& d) {
    if (d.empty() || d.size() > 253 || d.front() == '.' || d.back() == '.') return false;
    for (char c : d) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
      if (!ok) return false;
    }
    return true;
  };
  std::map<std::string, std::pair<std::string, std::string>> byDomain;  // -> (ns/name, ip)
  for (const json& svc : services) {
    const json& meta = sub(svc, "metadata");
    std::string domains = str(sub(meta, "annotations"), kWildcardAnnotation);
    std::string ip = str(sub(svc, "spec"), "clusterIP");
    if (domains.empty() || !isToken(ip) || ip == "None") continue;
    std::string owner = str(meta, "namespace") + "/" + str(meta, "name");
    size_t start = 0;
    while (start <= domains.size()) {
      size_t comma = domains.find(',', start);
      std::string d =
          domains.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      d.erase(0, d.find_first_not_of(' '));
      d.erase(d.find_last_not_of(' ') + 1);
      if (dnsName(d)) {
        auto it = byDomain.find(d);
        if (it == byDomain.end() || owner < it->second.first) byDomain[d] = {owner, ip};
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  std::vector<HostEntry> out;
  for (const auto& [domain, owned] : byDomain) out.push_back({domain, owned.second});
  return out;
}

}  // namespace minik8s::dns
