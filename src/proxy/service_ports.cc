#include "proxy/service_ports.h"

#include <openssl/sha.h>

#include <algorithm>
#include <tuple>

#include "common/strings.h"
#include "fmt/format.h"

namespace minik8s::proxy {

namespace {

// Tolerant readers: a malformed object yields defaults instead of an exception.
const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string str(const json& obj, const char* key, const std::string& fallback = "") {
  const json* v = field(obj, key);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

int64_t num(const json& obj, const char* key, int64_t fallback = 0) {
  const json* v = field(obj, key);
  return v && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

const json& arrayOrEmpty(const json& obj, const char* key) {
  static const json kEmpty = json::array();
  const json* v = field(obj, key);
  return v && v->is_array() ? *v : kEmpty;
}

const json& objectOrEmpty(const json& obj, const char* key) {
  static const json kEmpty = json::object();
  const json* v = field(obj, key);
  return v && v->is_object() ? *v : kEmpty;
}

}  // namespace

std::string hash16(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char byte : digest) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.size() < 16) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
    if (out.size() == 16) break;
  }
  return out;
}

EndpointIndex indexEndpoints(const std::vector<const json*>& slices) {
  EndpointIndex index;
  for (const json* slicePtr : slices) {
    const json& slice = *slicePtr;
    if (str(slice, "addressType") != "IPv4") continue;
    const json& meta = objectOrEmpty(slice, "metadata");
    std::string service = str(objectOrEmpty(meta, "labels"), "kubernetes.io/service-name");
    if (service.empty()) continue;
    auto& byPort = index[str(meta, "namespace") + "/" + service];
    for (const json& port : arrayOrEmpty(slice, "ports")) {
      int64_t number = num(port, "port");
      if (number <= 0) continue;
      auto& set = byPort[str(port, "name") + "/" + str(port, "protocol", "TCP")];
      for (const json& ep : arrayOrEmpty(slice, "endpoints")) {
        const json* ready = field(objectOrEmpty(ep, "conditions"), "ready");
        if (ready && ready->is_boolean() && !ready->get<bool>()) continue;
        for (const json& address : arrayOrEmpty(ep, "addresses")) {
          if (address.is_string()) {
            set.insert(fmt::format("{}:{}", address.get<std::string>(), number));
          }
        }
      }
    }
  }
  return index;
}

std::vector<ServicePort> servicePorts(const json& svc, const EndpointIndex& endpoints) {
  std::vector<ServicePort> out;
  const json& meta = objectOrEmpty(svc, "metadata");
  const json& spec = objectOrEmpty(svc, "spec");
  std::string ns = str(meta, "namespace"), name = str(meta, "name");
  std::string type = str(spec, "type", "ClusterIP");
  if (type == "ExternalName") return out;
  std::string clusterIP = str(spec, "clusterIP");
  if (clusterIP == "None") clusterIP.clear();  // headless: DNS only
  bool nodePorts = type == "NodePort" || type == "LoadBalancer";
  int64_t affinity = 0;
  if (str(spec, "sessionAffinity") == "ClientIP") {
    affinity = num(objectOrEmpty(objectOrEmpty(spec, "sessionAffinityConfig"), "clientIP"),
                   "timeoutSeconds", 10800);
    if (affinity <= 0) affinity = 10800;
  }
  auto svcEndpoints = endpoints.find(ns + "/" + name);
  for (const json& port : arrayOrEmpty(spec, "ports")) {
    ServicePort sp;
    std::string portName = str(port, "name");
    std::string protocol = str(port, "protocol", "TCP");
    sp.name = servicePortName(ns, name, portName);
    sp.protocol = asciiLower(protocol);
    sp.clusterIP = clusterIP;
    sp.port = num(port, "port");
    sp.nodePort = nodePorts ? num(port, "nodePort") : 0;
    sp.affinitySeconds = affinity;
    if ((sp.clusterIP.empty() || sp.port <= 0) && sp.nodePort <= 0) continue;
    if (svcEndpoints != endpoints.end()) {
      auto eps = svcEndpoints->second.find(portName + "/" + protocol);
      if (eps != svcEndpoints->second.end()) {
        sp.endpoints.assign(eps->second.begin(), eps->second.end());
      }
    }
    out.push_back(std::move(sp));
  }
  std::stable_sort(out.begin(), out.end(), [](const ServicePort& a, const ServicePort& b) {
    return std::tie(a.name, a.protocol) < std::tie(b.name, b.protocol);
  });
  return out;
}

std::string servicePortName(const std::string& ns, const std::string& name,
                            const std::string& port) {
  return port.empty() ? ns + "/" + name : ns + "/" + name + ":" + port;
}

std::string serviceKey(const json& service) {
  const json& meta = objectOrEmpty(service, "metadata");
  return str(meta, "namespace") + "/" + str(meta, "name");
}

std::string sliceServiceKey(const json& slice) {
  const json& meta = objectOrEmpty(slice, "metadata");
  std::string service = str(objectOrEmpty(meta, "labels"), "kubernetes.io/service-name");
  return service.empty() ? service : str(meta, "namespace") + "/" + service;
}

}  // namespace minik8s::proxy
