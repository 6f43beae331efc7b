#include "apiserver/kubeconfig.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "common/yaml_json.h"

namespace minik8s::apiserver {

Status writeKubeconfig(const std::string& path, const std::string& serverUrl,
                       const std::string& clusterName) {
  json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", {{{"name", clusterName}, {"cluster", {{"server", serverUrl}}}}}},
      {"users", {{{"name", "admin"}, {"user", {{"username", "admin"}}}}}},
      {"contexts",
       {{{"name", clusterName},
         {"context", {{"cluster", clusterName}, {"user", "admin"}, {"namespace", "default"}}}}}},
      {"current-context", clusterName},
      {"preferences", json::object()}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::Internal("cannot write " + tmp);
    out << toYaml(config);
    if (!out) return Status::Internal("cannot write " + tmp);
  }
  ::chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::Internal("cannot rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

}  // namespace minik8s::apiserver
