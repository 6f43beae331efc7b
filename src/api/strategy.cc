#include "apiserver/strategy.h"

#include <algorithm>

#include "api/custom_resource.h"
#include "api/quantity.h"
#include "common/base64.h"

namespace minik8s::apiserver::strategy {

namespace {

// Kinds whose spec is what `generation` counts. ConfigMaps and such have no generation bumps.
bool hasSpec(const json& obj) { return obj.contains("spec"); }

bool quantitiesEqual(const json& a, const json& b) {
  if (!a.is_string() && !a.is_number()) return false;
  if (!b.is_string() && !b.is_number()) return false;
  auto qa = api::Quantity::parse(a.is_string() ? a.get<std::string>() : a.dump());
  auto qb = api::Quantity::parse(b.is_string() ? b.get<std::string>() : b.dump());
  return qa.ok() && qb.ok() && qa->compare(*qb) == 0;
}

}  // namespace

std::string podQosClass(const json& pod) {
  bool any = false, guaranteed = true;
  auto visit = [&](const json& containers) {
    if (!containers.is_array()) return;
    for (const auto& c : containers) {
      const json& res = c.contains("resources") ? c["resources"] : json::object();
      const json req = res.value("requests", json::object());
      const json lim = res.value("limits", json::object());
      if (!req.empty() || !lim.empty()) any = true;
      for (const char* name : {"cpu", "memory"}) {
        if (!lim.is_object() || !lim.contains(name)) {
          guaranteed = false;
          continue;
        }
        if (req.is_object() && req.contains(name) && !quantitiesEqual(req[name], lim[name])) {
          guaranteed = false;
        }
      }
    }
  };
  const json& spec = pod.contains("spec") ? pod["spec"] : json::object();
  if (spec.contains("containers")) visit(spec["containers"]);
  if (spec.contains("initContainers")) visit(spec["initContainers"]);
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

namespace {

// Secret.stringData is a write-only convenience: it is merged into data (base64) and dropped.
void mergeStringData(json& secret) {
  if (!secret.contains("stringData")) return;
  const json sd = secret["stringData"];
  secret.erase("stringData");
  if (!sd.is_object()) return;
  if (!secret.contains("data") || !secret["data"].is_object()) secret["data"] = json::object();
  for (auto it = sd.begin(); it != sd.end(); ++it) {
    if (!it.value().is_string()) continue;
    secret["data"][it.key()] = base64::encode(it.value().get_ref<const std::string&>());
  }
}

// A Service update that leaves out what the server allocated keeps it (kubectl replace with a
// manifest that never had a clusterIP must not drop the service's address).
void keepAllocatedServiceFields(json& svc, const json& old) {
  json& spec = svc["spec"];
  if (!spec.is_object() || !old.contains("spec")) return;
  const json& oldSpec = old["spec"];
  for (const char* f : {"clusterIP", "clusterIPs"}) {
    if ((!spec.contains(f) || spec[f].is_null() || spec[f] == "") && oldSpec.contains(f)) {
      spec[f] = oldSpec[f];
    }
  }
  if (!spec.contains("ports") || !spec["ports"].is_array() || !oldSpec.contains("ports")) return;
  for (auto& port : spec["ports"]) {
    if (!port.is_object() || port.contains("nodePort")) continue;
    for (const auto& op : oldSpec["ports"]) {
      if (op.is_object() && op.value("port", -1) == port.value("port", -2) &&
          op.value("protocol", "TCP") == port.value("protocol", "TCP") && op.contains("nodePort")) {
        port["nodePort"] = op["nodePort"];
      }
    }
  }
}

// Clients send "creationTimestamp": null in embedded templates (kubectl rollout undo does);
// Kubernetes' decoder drops it, so stored templates compare equal to the ones controllers build.
void dropNullTimestamps(json& node) {
  if (node.is_object()) {
    if (node.contains("metadata") && node["metadata"].is_object()) {
      auto& m = node["metadata"];
      if (m.contains("creationTimestamp") && m["creationTimestamp"].is_null()) {
        m.erase("creationTimestamp");
      }
    }
    for (auto& [k, v] : node.items()) dropNullTimestamps(v);
  } else if (node.is_array()) {
    for (auto& v : node) dropNullTimestamps(v);
  }
}

}  // namespace

void prepareForCreate(const api::ResourceInfo& r, json& obj) {
  if (r.custom) {
    // Custom resources count every change in generation, from 1; with a status subresource the
    // status is the controllers' to write.
    obj["metadata"]["generation"] = 1;
    if (r.hasStatus()) obj.erase("status");
    return;
  }
  const std::string& k = r.kind;
  if (k == "CustomResourceDefinition" && r.group == "apiextensions.k8s.io") {
    obj["status"] = json::object();
    json& finalizers = obj["metadata"]["finalizers"];
    if (!finalizers.is_array()) finalizers = json::array();
    if (std::find(finalizers.begin(), finalizers.end(), json(api::kCrdCleanupFinalizer)) ==
        finalizers.end()) {
      finalizers.push_back(api::kCrdCleanupFinalizer);
    }
    return;
  }
  if (obj.contains("spec")) dropNullTimestamps(obj["spec"]);
  if (k == "Secret") mergeStringData(obj);
  if (k == "Pod") {
    obj["status"] = {{"phase", "Pending"}, {"qosClass", podQosClass(obj)}};
  } else if (k == "Namespace") {
    obj["status"] = {{"phase", "Active"}};
    if (!obj.contains("spec") || !obj["spec"].is_object()) obj["spec"] = json::object();
    obj["spec"]["finalizers"] = json::array({"kubernetes"});
  } else if (k == "Service") {
    obj["status"] = {{"loadBalancer", json::object()}};
  } else if (k == "Node") {
    // The node agent registers its node with a status: keep it.
  } else if (r.hasStatus()) {
    obj["status"] = json::object();
  }
}

void prepareForUpdate(const api::ResourceInfo& r, json& obj, const json& old,
                      const std::string& subresource) {
  json& meta = obj["metadata"];
  const json& oldMeta = old["metadata"];
  for (const char* f : {"uid", "creationTimestamp", "deletionTimestamp",
                        "deletionGracePeriodSeconds", "generation"}) {
    if (oldMeta.contains(f)) {
      meta[f] = oldMeta[f];
    } else {
      meta.erase(f);
    }
  }
  if (subresource == "finalize") {  // namespaces: only spec.finalizers changes
    json finalizers = obj.value("/spec/finalizers"_json_pointer, json::array());
    obj = old;
    obj["spec"]["finalizers"] = std::move(finalizers);
    return;
  }
  if (subresource == "status") {
    json status = obj.contains("status") ? obj["status"] : json::object();
    obj = old;
    obj["status"] = std::move(status);
    return;
  }
  if (r.custom) {
    // Everything but metadata (and status, when it is a subresource) is the spec here.
    if (r.hasStatus()) {
      if (old.contains("status")) {
        obj["status"] = old["status"];
      } else {
        obj.erase("status");
      }
    }
    json a = obj, b = old;
    for (json* o : {&a, &b}) {
      o->erase("metadata");
      if (r.hasStatus()) o->erase("status");
    }
    if (a != b) meta["generation"] = oldMeta.value("generation", int64_t{1}) + 1;
    return;
  }
  if (r.kind == "Secret") mergeStringData(obj);
  if (r.kind == "Service") keepAllocatedServiceFields(obj, old);
  if (obj.contains("spec")) dropNullTimestamps(obj["spec"]);
  if (r.hasStatus()) {
    if (old.contains("status")) {
      obj["status"] = old["status"];
    } else {
      obj.erase("status");
    }
  }
  if (r.kind == "Namespace" && old.contains("spec")) obj["spec"] = old["spec"];
  if (hasSpec(old) || hasSpec(obj)) {
    const json oldSpec = old.value("spec", json());
    const json newSpec = obj.value("spec", json());
    if (oldSpec != newSpec) {
      meta["generation"] = oldMeta.value("generation", int64_t{1}) + 1;
    }
  }
}

}  // namespace minik8s::apiserver::strategy
