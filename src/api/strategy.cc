#include "api/strategy.h"

#include <algorithm>

#include "api/object_meta.h"
#include "api/quantity.h"
#include "api/resource_type.h"
#include "common/json_pointer.h"

namespace minik8s::api::strategy {

namespace {

// Kinds whose spec is what `generation` counts. ConfigMaps and such have no generation bumps.
bool hasSpec(const json& obj) { return obj.contains("spec"); }

bool quantitiesEqual(const json& a, const json& b) {
  if (!a.is_string() && !a.is_number()) return false;
  if (!b.is_string() && !b.is_number()) return false;
  auto qa = Quantity::parse(a.is_string() ? a.get<std::string>() : a.dump());
  auto qb = Quantity::parse(b.is_string() ? b.get<std::string>() : b.dump());
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

void prepareForCreate(const ResourceInfo& r, json& obj) {
  if (r.custom) {
    // Custom resources count every change in generation, from 1; with a status subresource the
    // status is the controllers' to write.
    obj["metadata"]["generation"] = 1;
    if (r.hasStatus()) obj.erase("status");
    return;
  }
  const ResourceType* type = builtinResourceType(r);
  if (type && type->prepareForCreate) return type->prepareForCreate(obj);
  if (obj.contains("spec")) dropNullTimestamps(obj["spec"]);
  if (r.hasStatus()) obj["status"] = json::object();
}

void prepareForUpdate(const ResourceInfo& r, json& obj, const json& old,
                      const std::string& subresource) {
  json& meta = obj["metadata"];  // only until obj gets a member: that may move it
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
    json finalizers = valueAt(obj, "/spec/finalizers", json::array());
    obj = old;
    obj["spec"]["finalizers"] = std::move(finalizers);
    return;
  }
  if (subresource == "binding") {  // pods: the node and the PodScheduled condition only
    json nodeName = valueAt(obj, "/spec/nodeName", json());
    json status = obj.contains("status") ? obj["status"] : json::object();
    obj = old;
    obj["spec"]["nodeName"] = std::move(nodeName);
    obj["status"] = std::move(status);
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
    if (a != b) obj["metadata"]["generation"] = oldMeta.value("generation", int64_t{1}) + 1;
    return;
  }
  const ResourceType* type = builtinResourceType(r);
  if (type && type->prepareForUpdate) type->prepareForUpdate(obj, old);
  if (obj.contains("spec")) dropNullTimestamps(obj["spec"]);
  if (r.hasStatus()) {
    if (old.contains("status")) {
      obj["status"] = old["status"];
    } else {
      obj.erase("status");
    }
  }
  if (hasSpec(old) || hasSpec(obj)) {
    if (member(old, "spec") != member(obj, "spec")) {
      obj["metadata"]["generation"] = oldMeta.value("generation", int64_t{1}) + 1;
    }
  }
}

}  // namespace minik8s::api::strategy
