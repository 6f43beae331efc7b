#include "apiserver/kubernetes_service.h"

#include "apiserver/service_allocator.h"
#include "common/json_pointer.h"
#include "common/logging.h"

namespace minik8s::apiserver {

namespace {

constexpr char kNamespace[] = "default";
constexpr char kName[] = "kubernetes";

// Creates `desired`, or makes the stored object's `fields` (top-level keys) and labels equal to
// it.
Status upsert(Registry& registry, const api::ResourceInfo& r, const json& desired,
              const std::vector<std::string>& fields) {
  auto got = registry.get(r, kNamespace, kName);
  if (!got.ok() && got.status().code() != 404) return got.status();
  if (!got.ok()) {
    auto created = registry.create(r, kNamespace, desired);
    if (created.ok() || created.status().reason() == "AlreadyExists") return Status::Ok();
    return created.status();
  }
  auto differs = [&](const json& cur) {
    for (const auto& f : fields) {
      if (cur.value(f, json()) != desired.value(f, json())) return true;
    }
    json labels = valueAt(cur, "/metadata/labels", json::object());
    for (auto& [k, v] : desired["metadata"]["labels"].items()) {
      if (labels.value(k, json()) != v) return true;
    }
    return false;
  };
  if (!differs(*got)) return Status::Ok();
  LOG_INFO("repairing {} {}/{}", r.kind, kNamespace, kName);
  auto updated = registry.guaranteedUpdate(r, kNamespace, kName, [&](json cur) -> Result<json> {
    for (const auto& f : fields) cur[f] = desired[f];
    for (auto& [k, v] : desired["metadata"]["labels"].items()) cur["metadata"]["labels"][k] = v;
    cur["metadata"].erase("resourceVersion");
    return cur;
  });
  return updated.status();
}

bool routableIpv4(const std::string& host) {
  auto ip = parseIpv4(host);
  if (!ip) return false;
  const uint32_t first = *ip >> 24;
  return *ip != 0 && first != 127 && (*ip >> 16) != 0xa9fe;  // not 0.0.0.0, 127/8, 169.254/16
}

}  // namespace

Status reconcileKubernetesService(Registry& registry, const KubernetesServiceSpec& spec) {
  const auto colon = spec.advertiseAddress.rfind(':');
  if (colon == std::string::npos) {
    return Status::BadRequest("advertise address " + spec.advertiseAddress + " has no port");
  }
  const std::string host = spec.advertiseAddress.substr(0, colon);
  int port = 0;
  try {
    port = std::stoi(spec.advertiseAddress.substr(colon + 1));
  } catch (const std::exception&) {
    return Status::BadRequest("advertise address " + spec.advertiseAddress + " has no port");
  }
  const api::Scheme& scheme = registry.scheme();
  const auto* services = scheme.byResource("", "v1", "services");
  const auto* endpoints = scheme.byResource("", "v1", "endpoints");
  const auto* slices = scheme.byResource("discovery.k8s.io", "v1", "endpointslices");
  if (!services || !endpoints || !slices) return Status::Internal("scheme lacks services");

  json svc = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", kName},
        {"namespace", kNamespace},
        {"labels", {{"component", "apiserver"}, {"provider", "kubernetes"}}}}},
      {"spec",
       {{"type", "ClusterIP"},
        {"clusterIP", spec.clusterIP},
        {"clusterIPs", json::array({spec.clusterIP})},
        {"sessionAffinity", "None"},
        {"ports",
         json::array(
             {{{"name", "https"}, {"port", 443}, {"protocol", "TCP"}, {"targetPort", port}}})}}}};
  auto current = registry.get(*services, kNamespace, kName);
  if (current.ok()) {
    // Only the ports are ours to repair: the clusterIP is immutable, the rest users may tune.
    const std::string ip = valueAt(*current, "/spec/clusterIP", std::string());
    if (ip != spec.clusterIP) {
      LOG_WARN("service default/kubernetes has clusterIP {}, not {}: leaving it", ip,
               spec.clusterIP);
    }
    if (valueAt(*current, "/spec/ports", json()) != svc["spec"]["ports"]) {
      auto up =
          registry.guaranteedUpdate(*services, kNamespace, kName, [&](json cur) -> Result<json> {
            cur["spec"]["ports"] = svc["spec"]["ports"];
            cur["metadata"].erase("resourceVersion");
            return cur;
          });
      if (!up.ok()) return up.status();
    }
  } else if (current.status().code() == 404) {
    auto created = registry.create(*services, kNamespace, svc);
    if (!created.ok() && created.status().reason() != "AlreadyExists") return created.status();
  } else {
    return current.status();
  }

  if (!routableIpv4(host)) {
    LOG_INFO(
        "advertised address {} is not a routable IPv4 address: the kubernetes service has "
        "no endpoints (pass --advertise-address)",
        host);
    return Status::Ok();
  }
  json ep = {
      {"apiVersion", "v1"},
      {"kind", "Endpoints"},
      {"metadata",
       {{"name", kName},
        {"namespace", kNamespace},
        {"labels", {{"endpointslice.kubernetes.io/skip-mirror", "true"}}}}},
      {"subsets",
       json::array({{{"addresses", json::array({{{"ip", host}}})},
                     {"ports",
                      json::array({{{"name", "https"}, {"port", port}, {"protocol", "TCP"}}})}}})}};
  if (Status s = upsert(registry, *endpoints, ep, {"subsets"}); !s.ok()) return s;
  json slice = {
      {"apiVersion", "discovery.k8s.io/v1"},
      {"kind", "EndpointSlice"},
      {"metadata",
       {{"name", kName},
        {"namespace", kNamespace},
        {"labels", {{"kubernetes.io/service-name", kName}}}}},
      {"addressType", "IPv4"},
      {"endpoints",
       json::array({{{"addresses", json::array({host})}, {"conditions", {{"ready", true}}}}})},
      {"ports", json::array({{{"name", "https"}, {"port", port}, {"protocol", "TCP"}}})}};
  return upsert(registry, *slices, slice, {"addressType", "endpoints", "ports"});
}

}  // namespace minik8s::apiserver
