#include "mesh/discovery_server.h"

#include "common/logging.h"
#include "mesh/mesh_config_wire.h"

namespace minik8s::mesh {

namespace discovery_server_detail {

constexpr char kServiceAccountPrefix[] = "system:serviceaccount:";

std::string bearerOf(const http::Request& req) {
  std::string h = req.header("Authorization");
  const std::string prefix = "Bearer ";
  if (h.size() <= prefix.size() || h.compare(0, prefix.size(), prefix) != 0) return "";
  return h.substr(prefix.size());
}

}  // namespace discovery_server_detail

TokenReviewAuthenticator::TokenReviewAuthenticator(client::RestClient& rest,
                                                   std::chrono::seconds cacheFor)
    : rest_(rest), cacheFor_(cacheFor) {}

Result<DiscoveryPeer> TokenReviewAuthenticator::authenticate(const std::string& token) {
  if (token.empty()) return Status::Unauthorized("no bearer token");
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(token);
    if (it != cache_.end() && it->second.until > now) {
      if (!it->second.peer) return Status::Unauthorized("the token was refused");
      return *it->second.peer;
    }
  }
  json review = {{"apiVersion", "authentication.k8s.io/v1"},
                 {"kind", "TokenReview"},
                 {"spec", {{"token", token}}}};
  auto answer = rest_.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", review.dump());
  if (!answer.ok()) {
    // Not the proxy's fault: it retries, nothing is cached.
    return Status::Unavailable("TokenReview failed: " + answer.status().message());
  }
  const json status = answer->value("status", json::object());
  std::optional<DiscoveryPeer> peer;
  if (status.value("authenticated", false)) {
    const json user = status.value("user", json::object());
    DiscoveryPeer p;
    p.user = user.value("username", "");
    for (const auto& g : user.value("groups", json::array()))
      if (g.is_string()) p.groups.push_back(g.get<std::string>());
    peer = std::move(p);
  }
  std::lock_guard lock(mu_);
  if (cache_.size() > 10'000) cache_.clear();  // bounded: tokens of long-gone pods
  cache_[token] = {peer, now + cacheFor_};
  if (!peer) return Status::Unauthorized("the token was refused");
  return *peer;
}

DiscoveryServer::DiscoveryServer(DiscoveryAuthenticator& authenticator,
                                 DiscoveryServerOptions options)
    : authenticator_(authenticator), options_(std::move(options)) {}

DiscoveryServer::~DiscoveryServer() { stop(); }

Status DiscoveryServer::start(const std::string& listenAddress) {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  http::ServerLimits limits;
  limits.maxBodyBytes = 64 * 1024;  // acks only
  server_ = std::make_unique<http::Server>(
      [this](const http::Request& req, http::ResponseWriter& w) { handle(req, w); }, limits);
  if (options_.tls) {
    if (Status s = server_->enableTls(*options_.tls); !s.ok()) return s;
  }
  return server_->start(listenAddress);
}

void DiscoveryServer::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (server_) server_->stop();
  server_.reset();
}

int DiscoveryServer::port() const { return server_ ? server_->port() : 0; }

void DiscoveryServer::setConfig(std::shared_ptr<const MeshConfig> config) {
  auto snap = std::make_shared<Snapshot>();
  snap->version = config->version;
  json line = {{"type", "CONFIG"}, {"version", config->version}};
  line["config"] = meshConfigToWire(*config);
  snap->line = line.dump() + "\n";
  std::shared_ptr<const Snapshot> previous;
  {
    std::lock_guard lock(mu_);
    previous = snapshot_;
  }
  if (previous && previous->config->version < config->version) {
    json delta = {{"type", "DELTA"}, {"version", config->version}, {"base", previous->version}};
    delta["delta"] = meshConfigDeltaToWire(*previous->config, *config);
    std::string text = delta.dump() + "\n";
    if (text.size() < snap->line.size()) {
      snap->base = previous->version;
      snap->deltaLine = std::move(text);
    }
  }
  snap->config = std::move(config);
  {
    std::lock_guard lock(mu_);
    snapshot_ = std::move(snap);
  }
  changed_.notify_all();
}

std::vector<DiscoveryConnection> DiscoveryServer::connections() const {
  std::lock_guard lock(mu_);
  std::vector<DiscoveryConnection> out;
  for (const auto& [id, c] : connections_) out.push_back(c);
  return out;
}

Result<DiscoveryPeer> DiscoveryServer::authenticate(const http::Request& req, bool sidecarOnly) {
  auto peer = authenticator_.authenticate(discovery_server_detail::bearerOf(req));
  if (!peer.ok()) return peer.status();
  if (sidecarOnly && peer->user.rfind(discovery_server_detail::kServiceAccountPrefix, 0) != 0) {
    return Status::Forbidden("user \"" + peer->user +
                             "\" is not a service account: only sidecars may read the mesh "
                             "configuration stream");
  }
  return peer;
}

void DiscoveryServer::handle(const http::Request& req, http::ResponseWriter& w) {
  if (req.path == "/healthz") {
    w.send(http::Response::text(200, "ok"));
    return;
  }
  const bool stream = req.path == kDiscoveryConfigPath;
  const bool ack = req.path == kDiscoveryAckPath;
  const bool registry = req.path == "/debug/registryz";
  const bool conns = req.path == "/debug/connectionz";
  if (!stream && !ack && !registry && !conns) {
    w.send(http::Response::error(Status::NotFoundMessage("no such path: " + req.path)));
    return;
  }
  if (ack ? req.method != "POST" : req.method != "GET") {
    w.send(http::Response::error(
        Status::MethodNotAllowed(req.method + " is not allowed on " + req.path)));
    return;
  }
  auto peer = authenticate(req, stream || ack);
  if (!peer.ok()) {
    w.send(http::Response::error(peer.status()));
    return;
  }
  if (ack) return serveAck(req, w, *peer);
  if (stream) return serveStream(req, w, *peer);
  std::shared_ptr<const Snapshot> snap;
  {
    std::lock_guard lock(mu_);
    snap = snapshot_;
  }
  if (registry) {
    if (!snap) {
      w.send(http::Response::error(Status::Unavailable("no mesh configuration yet")));
      return;
    }
    w.send(http::Response::json(200, meshConfigToJson(*snap->config)));
    return;
  }
  json items = json::array();
  for (const auto& c : connections()) {
    items.push_back({{"pod", c.pod},
                     {"user", c.user},
                     {"remote", c.remote},
                     {"sent", c.sent},
                     {"acked", c.acked}});
  }
  w.send(http::Response::json(
      200, {{"version", snap ? snap->version : 0}, {"connections", std::move(items)}}));
}

void DiscoveryServer::serveAck(const http::Request& req, http::ResponseWriter& w,
                               const DiscoveryPeer& peer) {
  json body = json::parse(req.body, nullptr, false);
  if (!body.is_object() || !body.contains("version") || !body["version"].is_number_integer() ||
      !body.value("pod", json()).is_string()) {
    w.send(http::Response::error(
        Status::BadRequest("ack: want {\"pod\": \"NS/NAME\", \"version\": <integer>}")));
    return;
  }
  const std::string pod = body["pod"].get<std::string>();
  const int64_t version = body["version"].get<int64_t>();
  std::lock_guard lock(mu_);
  for (auto& [id, c] : connections_) {
    if (c.pod == pod && c.user == peer.user) c.acked = std::max(c.acked, version);
  }
  w.send(http::Response::json(200, {{"pod", pod}, {"version", version}}));
}

void DiscoveryServer::serveStream(const http::Request& req, http::ResponseWriter& w,
                                  const DiscoveryPeer& peer) {
  const bool watch =
      req.param("watch").value_or("") == "1" || req.param("watch").value_or("") == "true";
  std::unique_lock lock(mu_);
  std::shared_ptr<const Snapshot> snap = snapshot_;
  if (!snap) {
    lock.unlock();
    w.send(http::Response::error(Status::Unavailable("no mesh configuration yet: retry")));
    return;
  }
  if (!watch) {
    lock.unlock();
    w.send({200, {{"Content-Type", "application/x-ndjson"}}, snap->line});
    return;
  }
  const uint64_t id = nextConnection_++;
  const std::string pod = req.param("pod").value_or("");
  connections_[id] = {pod, peer.user, req.remoteAddress};
  lock.unlock();
  LOG_INFO("mesh discovery: {} ({}) connected from {}", pod, peer.user, req.remoteAddress);

  int64_t sent = -1;
  if (w.beginStream(200, {{"Content-Type", "application/x-ndjson"}})) {
    while (true) {
      bool ok = true;
      if (snap->version != sent) {
        const bool delta = snap->base == sent && !snap->deltaLine.empty();
        ok = w.write(delta ? snap->deltaLine : snap->line);
        ++(delta ? deltasSent_ : configsSent_);
        sent = snap->version;
        std::lock_guard g(mu_);
        connections_[id].sent = sent;
      } else {
        json beat = {{"type", "HEARTBEAT"}, {"version", sent}};
        ok = w.write(beat.dump() + "\n");
      }
      if (!ok || w.clientGone()) break;
      lock.lock();
      changed_.wait_for(lock, options_.heartbeat,
                        [&] { return stopping_ || snapshot_->version != sent; });
      if (stopping_) {
        lock.unlock();
        break;
      }
      snap = snapshot_;
      lock.unlock();
    }
    w.end();
  }
  lock.lock();
  connections_.erase(id);
  lock.unlock();
  LOG_INFO("mesh discovery: {} ({}) disconnected", pod, peer.user);
}

}  // namespace minik8s::mesh
