// Service and EndpointSlice objects for the proxy and DNS tests, in their API (JSON) form.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::testing {

struct TestPort {
  std::string name;
  int port = 0;
  std::string protocol = "TCP";
  int nodePort = 0;
};

inline json serviceObject(const std::string& ns, const std::string& name,
                          const std::string& clusterIP, const std::vector<TestPort>& ports,
                          const std::string& type = "ClusterIP") {
  json p = json::array();
  for (const auto& tp : ports) {
    json port = {
        {"name", tp.name}, {"port", tp.port}, {"protocol", tp.protocol}, {"targetPort", tp.port}};
    if (tp.nodePort) port["nodePort"] = tp.nodePort;
    p.push_back(port);
  }
  json spec = {{"type", type}, {"ports", p}};
  if (!clusterIP.empty()) spec["clusterIP"] = clusterIP;
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"namespace", ns}, {"name", name}}},
          {"spec", spec}};
}

struct TestEndpoint {
  std::string ip;
  bool ready = true;
  std::string hostname;
};

inline json sliceObject(const std::string& ns, const std::string& name, const std::string& service,
                        const std::vector<TestEndpoint>& endpoints,
                        const std::vector<TestPort>& ports) {
  json eps = json::array();
  for (const auto& e : endpoints) {
    json ep = {{"addresses", {e.ip}}, {"conditions", {{"ready", e.ready}}}};
    if (!e.hostname.empty()) ep["hostname"] = e.hostname;
    eps.push_back(ep);
  }
  json p = json::array();
  for (const auto& tp : ports) {
    p.push_back({{"name", tp.name}, {"port", tp.port}, {"protocol", tp.protocol}});
  }
  return {
      {"apiVersion", "discovery.k8s.io/v1"},
      {"kind", "EndpointSlice"},
      {"metadata",
       {{"namespace", ns}, {"name", name}, {"labels", {{"kubernetes.io/service-name", service}}}}},
      {"addressType", "IPv4"},
      {"endpoints", eps},
      {"ports", p}};
}

}  // namespace minik8s::testing
