#include "mesh/discovery_client.h"

#include <random>

#include "common/logging.h"
#include "mesh/discovery_server.h"
#include "mesh/mesh_config_wire.h"

namespace minik8s::mesh {

DiscoveryClient::DiscoveryClient(DiscoveryClientOptions options, Callback onConfig)
    : options_(std::move(options)), onConfig_(std::move(onConfig)) {}

DiscoveryClient::~DiscoveryClient() { stop(); }

void DiscoveryClient::start() {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { run(); });
}

void DiscoveryClient::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (current_) current_->close();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool DiscoveryClient::waitForConfig(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return haveConfig_; });
}

bool DiscoveryClient::onLine(std::string_view line, http::Client& ackClient) {
  json msg = json::parse(line, nullptr, false);
  if (!msg.is_object()) return true;
  const std::string type = msg.value("type", "");
  Result<std::shared_ptr<const MeshConfig>> config = Status::Internal("no config in the line");
  if (type == "CONFIG") {
    config = meshConfigFromWire(msg.value("config", json()));
  } else if (type == "DELTA") {
    if (!config_) return false;
    config = applyMeshConfigDelta(*config_, msg.value("delta", json()));
    if (!config.ok() && config.status().code() == 409) {
      LOG_INFO("mesh discovery: {}: asking for the whole config", config.status().message());
      return false;
    }
  } else {
    return true;  // HEARTBEAT, or a line of an error answer
  }
  if (!config.ok()) {
    LOG_WARN("mesh discovery: a config the proxy cannot read (kept the last one): {}",
             config.status().message());
    return true;
  }
  const int64_t version = (*config)->version;
  config_ = *config;
  // version() is the config's before the proxy applies it: whoever sees the new config (through
  // onConfig) also sees its version.
  version_ = version;
  onConfig_(std::move(config).value());
  {
    std::lock_guard lock(mu_);
    haveConfig_ = true;
  }
  cv_.notify_all();
  if (options_.ack) {
    json ack = {{"pod", options_.pod}, {"version", version}};
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Content-Type", "application/json"}};
    if (options_.token) headers.emplace_back("Authorization", "Bearer " + options_.token());
    auto r = ackClient.request("POST", kDiscoveryAckPath, ack.dump(), headers);
    if (!r.ok()) LOG_DEBUG("mesh discovery: ack of {} failed: {}", version, r.status().message());
  }
  return true;
}

Status DiscoveryClient::streamOnce(http::Client& client) {
  http::Client ackClient(options_.url, options_.tls);
  std::string target = std::string(kDiscoveryConfigPath) + "?watch=1";
  if (!options_.pod.empty()) target += "&pod=" + http::percentEncode(options_.pod);
  std::vector<std::pair<std::string, std::string>> headers;
  if (options_.token) headers.emplace_back("Authorization", "Bearer " + options_.token());
  std::string buffer, errorBody;
  auto r = client.stream(
      "GET", target,
      [&](std::string_view data) {
        buffer.append(data);
        size_t start = 0;
        for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
          connected_ = true;
          onLine(std::string_view(buffer).substr(start, nl - start), ackClient);
        }
        buffer.erase(0, start);
        if (buffer.size() > 64 * 1024 * 1024) return false;  // no line that long: not our server
        return true;
      },
      headers);
  connected_ = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Ok();
  }
  if (!r.ok()) return r.status();
  if (r->status != 200) {
    return Status::Unavailable("the discovery server answered " + std::to_string(r->status) +
                               (buffer.empty() ? "" : ": " + buffer.substr(0, 300)));
  }
  return Status::Unavailable("the discovery server ended the stream");
}

void DiscoveryClient::run() {
  std::mt19937_64 rng(std::random_device{}());
  auto backoff = options_.initialBackoff;
  while (true) {
    http::ClientTimeouts timeouts;
    timeouts.request = std::chrono::milliseconds(10'000);
    http::Client client(options_.url, options_.tls, timeouts);
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      current_ = &client;
    }
    const int64_t before = version_.load();
    const auto started = std::chrono::steady_clock::now();
    Status s = streamOnce(client);
    {
      std::lock_guard lock(mu_);
      current_ = nullptr;
      if (stopping_) return;
    }
    // A stream that delivered something, or lived a while, starts the backoff again.
    if (version_.load() != before || std::chrono::steady_clock::now() - started > backoff * 10)
      backoff = options_.initialBackoff;
    ++reconnects_;
    auto wait = backoff / 2 + std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(
                                  0, std::max<int64_t>(1, backoff.count() / 2))(rng));
    LOG_WARN("mesh discovery: {} (keeping config version {}); reconnecting in {} ms", s.message(),
             version_.load(), wait.count());
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, wait, [this] { return stopping_; })) return;
    backoff = std::min(backoff * 2, options_.maxBackoff);
  }
}

}  // namespace minik8s::mesh
