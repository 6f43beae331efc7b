#include "kubelet/object_source.h"

#include "common/base64.h"

namespace minik8s::kubelet {

namespace {

// The API server validated these values as Go's StdEncoding; a raw object's value that is not
// base64 is left out rather than half-decoded.
void putDecoded(KeyBytes& out, const std::string& key, const std::string& text) {
  if (auto bytes = base64::decode(text); bytes.ok()) out[key] = std::move(*bytes);
}

}  // namespace

Status unreadableObject(const char* kind, const std::string& name, const Status& cause) {
  if (isMissing(cause))
    return Status::NotFoundMessage(std::string(kind) + " \"" + name + "\" not found");
  return Status(cause.code(), cause.reason(),
                std::string(kind) + " \"" + name + "\" could not be read: " + cause.message());
}

KeyBytes configMapDataOf(const json& configMap) {
  KeyBytes out;
  if (configMap.contains("data") && configMap["data"].is_object())
    for (const auto& [k, v] : configMap["data"].items())
      if (v.is_string()) out[k] = v.get<std::string>();
  if (configMap.contains("binaryData") && configMap["binaryData"].is_object())
    for (const auto& [k, v] : configMap["binaryData"].items())
      if (v.is_string()) putDecoded(out, k, v.get_ref<const std::string&>());
  return out;
}

KeyBytes secretDataOf(const json& secret) {
  KeyBytes out;
  if (secret.contains("data") && secret["data"].is_object())
    for (const auto& [k, v] : secret["data"].items())
      if (v.is_string()) putDecoded(out, k, v.get_ref<const std::string&>());
  // stringData is folded into data by the API server; honour it anyway for raw objects.
  if (secret.contains("stringData") && secret["stringData"].is_object())
    for (const auto& [k, v] : secret["stringData"].items())
      if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

Result<KeyBytes> RestClientObjectSource::configMapData(const std::string& ns,
                                                       const std::string& name) {
  auto obj = client_.get(client::resources::kConfigMaps, ns, name);
  if (!obj.ok()) return obj.status();
  return configMapDataOf(*obj);
}

Result<KeyBytes> RestClientObjectSource::secretData(const std::string& ns,
                                                    const std::string& name) {
  auto obj = client_.get(client::resources::kSecrets, ns, name);
  if (!obj.ok()) return obj.status();
  return secretDataOf(*obj);
}

Result<std::vector<json>> RestClientObjectSource::services(const std::string& ns) {
  if (const client::Informer* cache = services_.load(); cache && cache->hasSynced()) {
    std::vector<json> out;
    for (const auto& svc : cache->byIndexShared(client::kNamespaceIndex, ns)) out.push_back(*svc);
    return out;
  }
  auto list = client_.list(client::resources::kServices, ns);
  if (!list.ok()) return list.status();
  std::vector<json> out;
  if (list->contains("items") && (*list)["items"].is_array()) {
    for (const json& item : (*list)["items"]) out.push_back(item);
  }
  return out;
}

Result<json> RestClientObjectSource::persistentVolumeClaim(const std::string& ns,
                                                           const std::string& name) {
  return client_.get(client::Resource{"", "v1", "persistentvolumeclaims", true}, ns, name);
}

Result<json> RestClientObjectSource::persistentVolume(const std::string& name) {
  return client_.get(client::Resource{"", "v1", "persistentvolumes", false}, "", name);
}

}  // namespace minik8s::kubelet
