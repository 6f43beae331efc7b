#include "apiserver/discovery.h"

namespace minik8s::apiserver {

namespace {

json groupVersionJson(const std::string& group, const std::string& version) {
  return {{"groupVersion", group.empty() ? version : group + "/" + version}, {"version", version}};
}

json groupJson(const api::GroupInfo& g) {
  json versions = json::array();
  for (const auto& v : g.versions) versions.push_back(groupVersionJson(g.name, v));
  return {{"name", g.name},
          {"versions", versions},
          {"preferredVersion", groupVersionJson(g.name, g.versions.front())}};
}

json responseKind(const std::string& group, const std::string& version, const std::string& kind) {
  return {{"group", group}, {"version", version}, {"kind", kind}};
}

}  // namespace

json legacyApiVersions(const std::string& serverAddress) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", serverAddress}}}}};
}

json legacyApiGroupList(const api::Scheme& scheme) {
  json groups = json::array();
  for (const auto& g : scheme.groups()) {
    if (g.name.empty()) continue;
    groups.push_back(groupJson(g));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

Result<json> legacyApiGroup(const api::Scheme& scheme, const std::string& group) {
  for (const auto& g : scheme.groups()) {
    if (g.name == group && !group.empty()) {
      json j = groupJson(g);
      j["kind"] = "APIGroup";
      j["apiVersion"] = "v1";
      return j;
    }
  }
  return Status::NotFoundMessage("the server could not find the requested resource");
}

Result<json> legacyResourceList(const api::Scheme& scheme, const std::string& group,
                                const std::string& version) {
  auto resources = scheme.groupVersion(group, version);
  if (resources.empty()) {
    return Status::NotFoundMessage("the server could not find the requested resource");
  }
  json list = json::array();
  for (const auto* r : resources) {
    json e = {{"name", r->plural},
              {"singularName", r->singular},
              {"namespaced", r->namespaced},
              {"kind", r->kind},
              {"verbs", r->verbs}};
    if (!r->shortNames.empty()) e["shortNames"] = r->shortNames;
    if (!r->categories.empty()) e["categories"] = r->categories;
    list.push_back(e);
    for (const auto& s : r->subresources) {
      json se = {{"name", r->plural + "/" + s.name},
                 {"singularName", ""},
                 {"namespaced", r->namespaced},
                 {"kind", s.kind},
                 {"verbs", s.verbs}};
      if (s.group != r->group || s.version != r->version) {
        se["group"] = s.group;
        se["version"] = s.version;
      }
      list.push_back(se);
    }
  }
  return json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", group.empty() ? version : group + "/" + version},
              {"resources", list}};
}

json aggregatedDiscovery(const api::Scheme& scheme, bool legacy) {
  json items = json::array();
  for (const auto& g : scheme.groups()) {
    if (g.name.empty() != legacy) continue;
    json versions = json::array();
    for (const auto& v : g.versions) {
      json resources = json::array();
      for (const auto* r : scheme.groupVersion(g.name, v)) {
        json e = {{"resource", r->plural},
                  {"responseKind", responseKind(r->group, r->version, r->kind)},
                  {"scope", r->namespaced ? "Namespaced" : "Cluster"},
                  {"singularResource", r->singular},
                  {"verbs", r->verbs}};
        if (!r->shortNames.empty()) e["shortNames"] = r->shortNames;
        if (!r->categories.empty()) e["categories"] = r->categories;
        json subs = json::array();
        for (const auto& s : r->subresources) {
          subs.push_back({{"subresource", s.name},
                          {"responseKind", responseKind(s.group, s.version, s.kind)},
                          {"verbs", s.verbs}});
        }
        if (!subs.empty()) e["subresources"] = subs;
        resources.push_back(e);
      }
      versions.push_back({{"version", v}, {"resources", resources}, {"freshness", "Current"}});
    }
    items.push_back({{"metadata", {{"name", g.name}, {"creationTimestamp", nullptr}}},
                     {"versions", versions}});
  }
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", "apidiscovery.k8s.io/v2"},
          {"metadata", json::object()},
          {"items", items}};
}

bool wantsAggregatedDiscovery(const std::string& accept) {
  return accept.find("as=APIGroupDiscoveryList") != std::string::npos &&
         accept.find("g=apidiscovery.k8s.io") != std::string::npos;
}

std::string aggregatedContentType(const std::string& accept) {
  // Answer with the newest version the client offered.
  if (accept.find("v=v2;") != std::string::npos || accept.find("v=v2,") != std::string::npos ||
      accept.find("v=v2\"") != std::string::npos) {
    return "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
  }
  if (accept.find("v=v2beta1") != std::string::npos) {
    return "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
  }
  return "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
}

}  // namespace minik8s::apiserver
