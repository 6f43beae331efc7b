#include "apiserver/kubeconfig.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "common/base64.h"
#include "common/yaml_json.h"

namespace minik8s::apiserver {
namespace {

Status writeConfig(const std::string& path, const std::string& serverUrl, const json& cluster,
                   const std::string& userName, const json& user, const std::string& clusterName) {
  json clusterEntry = cluster;
  clusterEntry["server"] = serverUrl;
  json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", {{{"name", clusterName}, {"cluster", clusterEntry}}}},
      {"users", {{{"name", userName}, {"user", user}}}},
      {"contexts",
       {{{"name", clusterName},
         {"context", {{"cluster", clusterName}, {"user", userName}, {"namespace", "default"}}}}}},
      {"current-context", clusterName},
      {"preferences", json::object()}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::Internal("cannot write " + tmp);
    ::chmod(tmp.c_str(), 0600);  // before the credentials are in it
    out << toYaml(config);
    if (!out) return Status::Internal("cannot write " + tmp);
  }
  ::chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::Internal("cannot rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

}  // namespace

Status writeKubeconfig(const std::string& path, const std::string& serverUrl,
                       const KubeconfigCredentials& credentials, const std::string& clusterName) {
  if (credentials.clientCertPem.empty() != credentials.clientKeyPem.empty()) {
    return Status::BadRequest("a kubeconfig client certificate needs its key");
  }
  json cluster = json::object();
  if (!credentials.caPem.empty()) {
    cluster["certificate-authority-data"] = base64::encode(credentials.caPem);
  }
  json user = json::object();
  if (!credentials.clientCertPem.empty()) {
    user["client-certificate-data"] = base64::encode(credentials.clientCertPem);
    user["client-key-data"] = base64::encode(credentials.clientKeyPem);
  }
  if (!credentials.token.empty()) user["token"] = credentials.token;
  return writeConfig(path, serverUrl, cluster, credentials.userName, user, clusterName);
}

Status writeKubeconfig(const std::string& path, const std::string& serverUrl,
                       const std::string& clusterName) {
  return writeConfig(path, serverUrl, json::object(), "admin", {{"username", "admin"}},
                     clusterName);
}

}  // namespace minik8s::apiserver
