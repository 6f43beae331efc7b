// DiscoveryServer: the mesh's control plane (istiod's discovery role, `minik8s mesh-discovery`).
// ONE ConfigWatcher (mesh/config_watcher.h) feeds it the MeshConfig; every connected sidecar gets
// it streamed, so N sidecars cost the API server one set of watches instead of N.
//
//   GET /v1/mesh/config?watch=1[&pod=NS/NAME]   (sidecars: Authorization: Bearer <SA token>)
//       200, chunked application/x-ndjson, one JSON object a line:
//         {"type":"CONFIG","version":V,"config":<meshConfigToWire()>}   at connect, then each
//                                                                       new version
//         {"type":"DELTA","version":V,"base":B,"delta":<meshConfigDeltaToWire()>}
//                                 instead, when the proxy was sent B, the version before V
//         {"type":"HEARTBEAT","version":V}                             when quiet (heartbeat)
//       without watch=1: the current CONFIG line alone. 503 until the first config is there.
//   POST /v1/mesh/ack  {"pod":"NS/NAME","version":V}   the proxy applied V (as an xDS ACK)
//   GET /debug/registryz   the registry (meshConfigToJson(), what `mesh services -o json` prints)
//   GET /debug/connectionz the connected proxies: pod, user, version sent, version acked
//   GET /healthz           "ok" (no authentication: the readiness probe)
//
// Authentication: the bearer token is checked by a DiscoveryAuthenticator (in a cluster: a
// TokenReview); no token or a bad one is 401. The config stream and acks take service accounts
// only (403 for other users); the debug pages take any authenticated user.
//
// Thread-safety: everything may be called from any thread. The http::Server it runs (or the one
// handle() is given to) serves each stream from its own thread; a new version is serialised once
// and written by every stream's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "common/http.h"
#include "common/status.h"
#include "mesh/mesh_config.h"

namespace minik8s::mesh {

inline constexpr int kDiscoveryPort = 15012;  // istiod's TLS xDS port
inline constexpr char kDiscoveryConfigPath[] = "/v1/mesh/config";
inline constexpr char kDiscoveryAckPath[] = "/v1/mesh/ack";

struct DiscoveryPeer {
  std::string user;  // "system:serviceaccount:NS:NAME" for a sidecar
  std::vector<std::string> groups;
};

// Who owns a bearer token. Unauthorized when nobody does. Thread-safe.
class DiscoveryAuthenticator {
 public:
  virtual ~DiscoveryAuthenticator() = default;
  virtual Result<DiscoveryPeer> authenticate(const std::string& bearerToken) = 0;
};

// Asks the API server (POST tokenreviews.authentication.k8s.io/v1) and remembers an answer for
// `cacheFor` (as kube-apiserver's webhook token cache), so a reconnecting proxy costs no review.
class TokenReviewAuthenticator : public DiscoveryAuthenticator {
 public:
  explicit TokenReviewAuthenticator(client::RestClient& rest,
                                    std::chrono::seconds cacheFor = std::chrono::seconds(60));
  Result<DiscoveryPeer> authenticate(const std::string& bearerToken) override;

 private:
  client::RestClient& rest_;
  std::chrono::seconds cacheFor_;
  std::mutex mu_;
  struct Cached {
    std::optional<DiscoveryPeer> peer;  // nullopt: refused
    std::chrono::steady_clock::time_point until;
  };
  std::map<std::string, Cached> cache_;
};

struct DiscoveryServerOptions {
  std::chrono::milliseconds heartbeat{10'000};
  std::optional<http::TlsServerConfig> tls;  // set: HTTPS (the cluster CA's serving certificate)
};

struct DiscoveryConnection {
  std::string pod, user, remote;
  int64_t sent = 0, acked = 0;
};

class DiscoveryServer {
 public:
  DiscoveryServer(DiscoveryAuthenticator& authenticator, DiscoveryServerOptions options = {});
  ~DiscoveryServer();
  DiscoveryServer(const DiscoveryServer&) = delete;
  DiscoveryServer& operator=(const DiscoveryServer&) = delete;

  // Serves on "host:port" (port 0: a free one) with its own http::Server.
  Status start(const std::string& listenAddress);
  // Ends every stream (the proxies keep their config and reconnect) and stops serving.
  void stop();
  int port() const;

  // A new version for every proxy (the ConfigWatcher's callback).
  void setConfig(std::shared_ptr<const MeshConfig> config);
  // The request handler, for a server of one's own.
  void handle(const http::Request& req, http::ResponseWriter& w);

  std::vector<DiscoveryConnection> connections() const;
  // Lines written so far, by kind (CONFIG, DELTA).
  uint64_t configsSent() const { return configsSent_.load(); }
  uint64_t deltasSent() const { return deltasSent_.load(); }

 private:
  struct Snapshot {
    int64_t version = 0;
    std::shared_ptr<const MeshConfig> config;
    std::string line;       // the CONFIG line, serialised once
    int64_t base = -1;      // the version deltaLine applies to (the previous one)
    std::string deltaLine;  // DELTA from `base`; "" when none or not smaller
  };
  Result<DiscoveryPeer> authenticate(const http::Request& req, bool sidecarOnly);
  void serveStream(const http::Request& req, http::ResponseWriter& w, const DiscoveryPeer& peer);
  void serveAck(const http::Request& req, http::ResponseWriter& w, const DiscoveryPeer& peer);

  DiscoveryAuthenticator& authenticator_;
  DiscoveryServerOptions options_;
  std::unique_ptr<http::Server> server_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::shared_ptr<const Snapshot> snapshot_;
  bool stopping_ = false;
  uint64_t nextConnection_ = 0;
  std::map<uint64_t, DiscoveryConnection> connections_;
  std::atomic<uint64_t> configsSent_{0}, deltasSent_{0};
};

}  // namespace minik8s::mesh
