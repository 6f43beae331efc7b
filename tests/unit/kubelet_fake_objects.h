// An ObjectSource for kubelet tests: ConfigMaps and Secrets from in-memory maps keyed "ns/name".
#pragma once

#include <map>
#include <string>

#include "kubelet/object_source.h"

namespace minik8s::testing {

class MapObjects : public kubelet::ObjectSource {
 public:
  Result<kubelet::KeyBytes> configMapData(const std::string& ns,
                                          const std::string& name) override {
    auto it = configMaps.find(ns + "/" + name);
    if (it == configMaps.end()) return Status::NotFound("configmaps", name);
    return it->second;
  }
  Result<kubelet::KeyBytes> secretData(const std::string& ns, const std::string& name) override {
    auto it = secrets.find(ns + "/" + name);
    if (it == secrets.end()) return Status::NotFound("secrets", name);
    return it->second;
  }
  std::map<std::string, kubelet::KeyBytes> configMaps, secrets;
};

}  // namespace minik8s::testing
