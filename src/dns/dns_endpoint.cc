#include "dns/dns_endpoint.h"

#include "fmt/format.h"

namespace minik8s::dns {

namespace {

std::string dnsSliceName(const std::string& nodeName) { return "kube-dns-" + nodeName; }

}  // namespace

json dnsServiceObject() {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata",
           {{"name", kDnsServiceName},
            {"namespace", kDnsServiceNamespace},
            {"labels", {{"k8s-app", "kube-dns"}, {"kubernetes.io/name", "CoreDNS"}}}}},
          {"spec",
           {{"type", "ClusterIP"},
            {"clusterIP", kDnsServiceIP},
            {"ports",
             {{{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}, {"targetPort", 53}},
              {{"name", "dns-tcp"}, {"port", 53}, {"protocol", "TCP"}, {"targetPort", 53}}}}}}};
}

json dnsEndpointSliceObject(const std::string& nodeName, const std::string& nodeIP) {
  return {{"apiVersion", "discovery.k8s.io/v1"},
          {"kind", "EndpointSlice"},
          {"metadata",
           {{"name", dnsSliceName(nodeName)},
            {"namespace", kDnsServiceNamespace},
            {"labels",
             {{"kubernetes.io/service-name", kDnsServiceName},
              {"endpointslice.kubernetes.io/managed-by", "minik8s-agent"}}}}},
          {"addressType", "IPv4"},
          {"endpoints",
           {{{"addresses", {nodeIP}},
             {"nodeName", nodeName},
             {"conditions", {{"ready", true}, {"serving", true}, {"terminating", false}}}}}},
          {"ports",
           {{{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}},
            {{"name", "dns-tcp"}, {"port", 53}, {"protocol", "TCP"}}}}};
}

Status ensureNodeDnsEndpoint(client::RestClient& client, const std::string& nodeName,
                             const std::string& nodeIP) {
  return ensureNodeServiceEndpoint(client, dnsServiceObject(),
                                   dnsEndpointSliceObject(nodeName, nodeIP), nodeName);
}

Status ensureNodeServiceEndpoint(client::RestClient& client, const json& service, json desired,
                                 const std::string& nodeName) {
  const auto& services = client::resources::kServices;
  const auto& slices = client::resources::kEndpointSlices;
  const std::string ns = service["metadata"].value("namespace", "");
  const std::string sliceName = desired["metadata"].value("name", "");
  auto svc = client.get(services, ns, service["metadata"].value("name", ""));
  if (!svc.ok()) {
    if (svc.status().code() != 404) return svc.status();
    auto created = client.create(services, ns, service);
    if (!created.ok() && created.status().reason() != "AlreadyExists") return created.status();
  }

  // Owned by the Node, so deleting the node deletes its DNS endpoint (garbage collector).
  auto node = client.get(client::resources::kNodes, "", nodeName);
  if (node.ok() && node->contains("metadata") && (*node)["metadata"].contains("uid")) {
    desired["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                               {"kind", "Node"},
                                               {"name", nodeName},
                                               {"uid", (*node)["metadata"]["uid"]}}};
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto current = client.get(slices, ns, sliceName);
    if (!current.ok()) {
      if (current.status().code() != 404) return current.status();
      auto created = client.create(slices, ns, desired);
      if (created.ok()) return Status::Ok();
      if (created.status().reason() == "AlreadyExists") continue;
      return created.status();
    }
    json updated = *current;
    bool same = updated.value("endpoints", json()) == desired["endpoints"] &&
                updated.value("ports", json()) == desired["ports"] &&
                updated.value("addressType", json()) == desired["addressType"];
    if (same) return Status::Ok();
    if (updated.value("addressType", json()) != desired["addressType"]) {
      // addressType is immutable: replace the slice.
      auto removed = client.remove(slices, ns, sliceName);
      if (!removed.ok() && removed.status().code() != 404) return removed.status();
      continue;
    }
    updated["endpoints"] = desired["endpoints"];
    updated["ports"] = desired["ports"];
    for (auto& [k, v] : desired["metadata"]["labels"].items()) {
      updated["metadata"]["labels"][k] = v;
    }
    if (desired["metadata"].contains("ownerReferences")) {
      updated["metadata"]["ownerReferences"] = desired["metadata"]["ownerReferences"];
    }
    auto put = client.update(slices, updated);
    if (put.ok()) return Status::Ok();
    if (put.status().code() != 409) return put.status();
  }
  return Status::ConflictMessage(fmt::format("endpointslice {}/{} kept changing", ns, sliceName));
}

Status removeNodeDnsEndpoint(client::RestClient& client, const std::string& nodeName) {
  auto removed = client.remove(client::resources::kEndpointSlices, kDnsServiceNamespace,
                               dnsSliceName(nodeName));
  if (!removed.ok() && removed.status().code() != 404) return removed.status();
  return Status::Ok();
}

}  // namespace minik8s::dns
