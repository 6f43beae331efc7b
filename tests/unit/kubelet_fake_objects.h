// An ObjectSource for kubelet tests: ConfigMaps, Secrets and claims from in-memory maps keyed
// "ns/name", PersistentVolumes by name,
// Services from a list per namespace.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kubelet/object_source.h"

namespace minik8s::testing {

class MapObjects : public kubelet::ObjectSource {
 public:
  Result<kubelet::KeyBytes> configMapData(const std::string& ns, const std::string& name) override {
    if (failReads) return Status::Unavailable("cannot connect to the API server");
    auto it = configMaps.find(ns + "/" + name);
    if (it == configMaps.end()) return Status::NotFound("configmaps", name);
    return it->second;
  }
  Result<kubelet::KeyBytes> secretData(const std::string& ns, const std::string& name) override {
    if (failReads) return Status::Unavailable("cannot connect to the API server");
    auto it = secrets.find(ns + "/" + name);
    if (it == secrets.end()) return Status::NotFound("secrets", name);
    return it->second;
  }
  Result<std::vector<json>> services(const std::string& ns) override {
    if (failServices) return Status::Unavailable("services cannot be listed");
    auto it = serviceObjects.find(ns);
    return it == serviceObjects.end() ? std::vector<json>{} : it->second;
  }
  Result<json> persistentVolumeClaim(const std::string& ns, const std::string& name) override {
    auto it = claims.find(ns + "/" + name);
    if (it == claims.end()) return Status::NotFound("persistentvolumeclaims", name);
    return it->second;
  }
  Result<json> persistentVolume(const std::string& name) override {
    auto it = volumes.find(name);
    if (it == volumes.end()) return Status::NotFound("persistentvolumes", name);
    return it->second;
  }
  std::map<std::string, kubelet::KeyBytes> configMaps, secrets;
  std::map<std::string, json> claims;                       // by "ns/name"
  std::map<std::string, json> volumes;                      // by name
  std::map<std::string, std::vector<json>> serviceObjects;  // by namespace
  bool failServices = false;
  bool failReads = false;  // ConfigMaps and Secrets cannot be read (the API server is down)
};

}  // namespace minik8s::testing
