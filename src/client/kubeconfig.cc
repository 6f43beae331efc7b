#include "client/kubeconfig.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/base64.h"
#include "common/file_util.h"
#include "common/yaml_json.h"

namespace minik8s::client {
namespace {

namespace fs = std::filesystem;

Result<std::string> readKubeconfigFile(const fs::path& path) {
  auto text = readFile(path.string());
  if (!text.ok()) return Status::NotFoundMessage("kubeconfig: " + text.status().message());
  return text;
}

// The entry named `name` of a kubeconfig list ("clusters", "users", "contexts"), its inner object.
Result<json> namedEntry(const json& config, const std::string& list, const std::string& field,
                        const std::string& name) {
  if (config.contains(list) && config[list].is_array()) {
    for (const auto& entry : config[list]) {
      if (entry.is_object() && entry.value("name", "") == name) {
        json inner = entry.value(field, json::object());
        if (!inner.is_object()) break;
        return inner;
      }
    }
  }
  return Status::BadRequest("kubeconfig: no " + field + " named \"" + name + "\"");
}

// PEM from "<key>-data" (base64) or from the file "<key>" (relative to `dir`); "" when neither.
Result<std::string> pemFrom(const json& obj, const std::string& key, const fs::path& dir) {
  std::string data = obj.value(key + "-data", "");
  if (!data.empty()) {
    // Hand-written files: padding optional and wrapped text accepted, as minik8s always did.
    auto decoded = base64::decodeLenient(data);
    if (!decoded.ok()) return Status::BadRequest("kubeconfig: " + key + "-data is not base64");
    return decoded;
  }
  std::string file = obj.value(key, "");
  if (file.empty()) return std::string();
  fs::path p(file);
  return readKubeconfigFile(p.is_absolute() ? p : dir / p);
}

}  // namespace

Result<ClientConfig> loadKubeconfig(const std::string& path, const std::string& context) {
  auto text = readKubeconfigFile(path);
  if (!text.ok()) return text.status();
  auto parsed = parseYaml(*text);
  if (!parsed.ok() || !parsed->is_object()) {
    return Status::BadRequest("kubeconfig " + path + " is not a YAML object");
  }
  const json& config = *parsed;
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();
  try {
    std::string contextName = context.empty() ? config.value("current-context", "") : context;
    if (contextName.empty())
      return Status::BadRequest("kubeconfig " + path + " has no current-context");
    auto ctx = namedEntry(config, "contexts", "context", contextName);
    if (!ctx.ok()) return ctx.status();
    auto cluster = namedEntry(config, "clusters", "cluster", ctx->value("cluster", ""));
    if (!cluster.ok()) return cluster.status();

    ClientConfig out;
    out.servers = cluster->value("server", "");
    if (out.servers.empty()) return Status::BadRequest("kubeconfig: the cluster has no server");
    out.tls.insecureSkipVerify = cluster->value("insecure-skip-tls-verify", false);
    out.tls.serverName = cluster->value("tls-server-name", "");
    auto ca = pemFrom(*cluster, "certificate-authority", dir);
    if (!ca.ok()) return ca.status();
    out.tls.caPem = *ca;

    const std::string userName = ctx->value("user", "");
    if (!userName.empty()) {
      auto user = namedEntry(config, "users", "user", userName);
      if (!user.ok()) return user.status();
      if (user->contains("exec") || user->contains("auth-provider")) {
        return Status::BadRequest(
            "kubeconfig: exec and auth-provider credentials are not supported");
      }
      auto cert = pemFrom(*user, "client-certificate", dir);
      if (!cert.ok()) return cert.status();
      auto key = pemFrom(*user, "client-key", dir);
      if (!key.ok()) return key.status();
      if (cert->empty() != key->empty()) {
        return Status::BadRequest("kubeconfig: user \"" + userName +
                                  "\" needs both a client certificate and its key");
      }
      out.tls.certPem = *cert;
      out.tls.keyPem = *key;
      out.bearerToken = user->value("token", "");
      const std::string tokenFile = user->value("tokenFile", "");
      if (out.bearerToken.empty() && !tokenFile.empty()) {
        fs::path p(tokenFile);
        auto token = readKubeconfigFile(p.is_absolute() ? p : dir / p);
        if (!token.ok()) return token.status();
        out.bearerToken = *token;
        while (!out.bearerToken.empty() &&
               std::isspace(static_cast<unsigned char>(out.bearerToken.back()))) {
          out.bearerToken.pop_back();
        }
      }
    }
    return out;
  } catch (const json::exception& e) {
    return Status::BadRequest("kubeconfig " + path + ": " + e.what());
  }
}

Result<ClientConfig> inClusterConfig(const std::string& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port || !*host || !*port) {
    return Status::NotFoundMessage(
        "not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
  }
  auto token = readFile(dir + "/token");
  if (!token.ok()) return token.status();
  auto ca = readFile(dir + "/ca.crt");
  if (!ca.ok()) return ca.status();
  ClientConfig config;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  config.servers = "https://" + h + ":" + port;
  while (!token->empty() && (token->back() == '\n' || token->back() == '\r')) token->pop_back();
  config.bearerToken = *token;
  config.tls.caPem = *ca;
  return config;
}

}  // namespace minik8s::client
