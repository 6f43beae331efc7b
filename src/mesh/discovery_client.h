// DiscoveryClient: the sidecar's side of the discovery stream (mesh/discovery_server.h). It
// connects at start, hands every CONFIG it receives to a callback and acknowledges it; when the
// server is down or the stream breaks it KEEPS the last config (traffic keeps flowing, only
// changes stop arriving) and reconnects with exponential backoff and jitter; the first config of
// the new stream replaces the old one. A DELTA is applied to the config it was made from; one
// that does not apply (another base) ends the stream, and the reconnect brings the whole config.
//
// One thread of its own; the callback runs on it. start()/stop() from one thread; the getters
// from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/http.h"
#include "common/http_client.h"
#include "mesh/mesh_config.h"

namespace minik8s::mesh {

struct DiscoveryClientOptions {
  std::string url;  // "https://istiod.istio-system.svc:15012" or "http://127.0.0.1:PORT"
  http::TlsClientConfig tls;
  // The bearer token for each connection (re-read: projected tokens rotate).
  std::function<std::string()> token;
  std::string pod;  // "NS/NAME", for the server's connection list and acks
  std::chrono::milliseconds initialBackoff{100};
  std::chrono::milliseconds maxBackoff{5'000};
  bool ack = true;
};

class DiscoveryClient {
 public:
  using Callback = std::function<void(std::shared_ptr<const MeshConfig>)>;
  DiscoveryClient(DiscoveryClientOptions options, Callback onConfig);
  ~DiscoveryClient();
  DiscoveryClient(const DiscoveryClient&) = delete;
  DiscoveryClient& operator=(const DiscoveryClient&) = delete;

  void start();
  void stop();

  // True once a config arrived (within `timeout`).
  bool waitForConfig(std::chrono::milliseconds timeout);
  int64_t version() const { return version_.load(); }
  bool connected() const { return connected_.load(); }
  int reconnects() const { return reconnects_.load(); }

 private:
  void run();
  // One stream until it ends; OK when it ended by stop().
  Status streamOnce(http::Client& client);
  // False when the stream must start again (a delta this client cannot apply).
  bool onLine(std::string_view line, http::Client& ackClient);

  DiscoveryClientOptions options_;
  Callback onConfig_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool haveConfig_ = false;
  http::Client* current_ = nullptr;           // the stream's connection, closed by stop()
  std::shared_ptr<const MeshConfig> config_;  // the last applied (the stream's thread only)
  std::atomic<int64_t> version_{0};
  std::atomic<bool> connected_{false};
  std::atomic<int> reconnects_{0};
};

}  // namespace minik8s::mesh
