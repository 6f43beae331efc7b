// coordination.k8s.io Leases, discovery.k8s.io EndpointSlices, networking.k8s.io NetworkPolicies.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/defaulting.h"
#include "api/resources/builders.h"
#include "api/validation/kinds.h"

namespace minik8s::api::resources {
namespace {

json endpointSliceCells(const json& obj, const json& meta, TimePoint now) {
  std::vector<std::string> ports, addresses;
  for (const auto& p : array(obj, "ports")) {
    if (p.contains("port") && p["port"].is_number_integer()) {
      ports.push_back(std::to_string(integer(p, "port")));
    } else {
      ports.push_back(str(p, "name", "*"));
    }
  }
  for (const auto& e : array(obj, "endpoints")) {
    for (const auto& a : array(e, "addresses")) {
      if (a.is_string()) addresses.push_back(a);
    }
  }
  auto format = [](const std::vector<std::string>& v) {
    std::string s = listWithMore(v, v.size(), 3);
    return s.empty() ? std::string("<unset>") : s;
  };
  return json::array({str(meta, "name"), str(obj, "addressType"), format(ports), format(addresses),
                      age(meta, now)});
}

json networkPolicyCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  return json::array({str(meta, "name"), orNone(labelSelectorString(object(spec, "podSelector"))),
                      age(meta, now)});
}

ResourceType lease() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("coordination.k8s.io", "v1", "Lease", "leases", "lease");
  t.validate = validation::validateLease;
  t.columns = {nameColumn(), col("Holder", "The holder of the lease."), ageColumn()};
  t.cells = [](const json& obj, const json& meta, TimePoint now) {
    return json::array(
        {str(meta, "name"), str(object(obj, "spec"), "holderIdentity"), age(meta, now)});
  };
  return t;
}

ResourceType endpointSlice() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "endpointslice");
  t.defaults = defaulting::endpointSlice;
  t.validate = validation::validateEndpointSlice;
  t.columns = {nameColumn(), col("AddressType", "The type of the addresses."),
               col("Ports", "The ports of the endpoints."),
               col("Endpoints", "The addresses of the endpoints."), ageColumn()};
  t.cells = endpointSliceCells;
  return t;
}

ResourceType networkPolicy() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", "networkpolicy");
  r.shortNames = {"netpol"};
  t.defaults = defaulting::networkPolicy;
  t.validate = validation::validateNetworkPolicy;
  t.columns = {nameColumn(), col("Pod-Selector", "Displays the selector of the networkpolicy."),
               ageColumn()};
  t.cells = networkPolicyCells;
  return t;
}

}  // namespace

void addNetworkingResources(std::vector<ResourceType>& out) {
  out.push_back(lease());
  out.push_back(endpointSlice());
  out.push_back(networkPolicy());
}

}  // namespace minik8s::api::resources
