// ObjectSource: where the kubelet reads the ConfigMaps and Secrets that env vars and volumes
// name, the claims and volumes behind persistentVolumeClaim volumes, and the Services that become
// environment variables. The agent reads them from the API server (RestClientObjectSource), the
// Services from an informer's cache once it is given one (as the kubelet's service lister: two
// LISTs per container start otherwise); tests use a map.
// configMapData/secretData return the decoded key -> bytes map (data and binaryData for
// ConfigMaps; base64-decoded data for Secrets), or the API's NotFound. Implementations are
// thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::kubelet {

using KeyBytes = std::map<std::string, std::string>;

class ObjectSource {
 public:
  virtual ~ObjectSource() = default;
  virtual Result<KeyBytes> configMapData(const std::string& ns, const std::string& name) = 0;
  virtual Result<KeyBytes> secretData(const std::string& ns, const std::string& name) = 0;
  // The Service objects of a namespace.
  virtual Result<std::vector<json>> services(const std::string& ns) = 0;
  // A PersistentVolumeClaim and a PersistentVolume (the API's NotFound when missing).
  virtual Result<json> persistentVolumeClaim(const std::string& ns, const std::string& name) = 0;
  virtual Result<json> persistentVolume(const std::string& name) = 0;
};

// Whether a failed configMapData/secretData means the object does not exist: only then may an
// optional source be skipped (with the API server unreachable, the pod waits instead).
inline bool isMissing(const Status& s) { return s.code() == 404; }
// The error for a ConfigMap or Secret (`kind` "configmap" or "secret") that could not be read:
// `configmap "x" not found` as the kubelet words it, or what else went wrong.
Status unreadableObject(const char* kind, const std::string& name, const Status& cause);

// Decodes the data (and binaryData) of a ConfigMap or Secret object.
KeyBytes configMapDataOf(const json& configMap);
KeyBytes secretDataOf(const json& secret);

class RestClientObjectSource : public ObjectSource {
 public:
  explicit RestClientObjectSource(client::RestClient& client) : client_(client) {}
  // Services come from `services` (every namespace's, with client::namespaceIndex()) once it has
  // synced, from the API before that. Null: from the API again. It must outlive its use.
  void useServiceCache(const client::Informer* services) { services_.store(services); }
  Result<KeyBytes> configMapData(const std::string& ns, const std::string& name) override;
  Result<KeyBytes> secretData(const std::string& ns, const std::string& name) override;
  Result<std::vector<json>> services(const std::string& ns) override;
  Result<json> persistentVolumeClaim(const std::string& ns, const std::string& name) override;
  Result<json> persistentVolume(const std::string& name) override;

 private:
  client::RestClient& client_;
  std::atomic<const client::Informer*> services_{nullptr};
};

}  // namespace minik8s::kubelet
