#include "network/network_agent.h"

#include "common/logging.h"

namespace minik8s::network {

NetworkAgent::NetworkAgent(client::RestClient& client, NetworkAgentOptions options, Runner runner)
    : client_(client),
      options_(std::move(options)),
      overlay_(options_.overlay, std::move(runner)),
      nodes_(client_, client::resources::kNodes) {
  nodes_.addHandlers({[this](const json&) { markDirty(); },
                      [this](const json& a, const json& b) {
                        // Heartbeats change nothing the overlay uses: skip them cheaply.
                        auto addresses = [](const json& n) {
                          return n.value("status", json::object())
                              .value("addresses", json::array());
                        };
                        auto deleting = [](const json& n) {
                          return n.value("metadata", json::object()).contains("deletionTimestamp");
                        };
                        if (a.value("spec", json::object()) != b.value("spec", json::object()) ||
                            addresses(a) != addresses(b) || deleting(a) != deleting(b))
                          markDirty();
                      },
                      [this](const json&) { markDirty(); }});
}

NetworkAgent::~NetworkAgent() { stop(); }

Ipv4Cidr NetworkAgent::podCidr() const {
  std::lock_guard lock(mu_);
  return podCidr_;
}

void NetworkAgent::markDirty() {
  std::lock_guard lock(mu_);
  dirty_ = true;
  cv_.notify_all();
}

Status NetworkAgent::start() {
  nodes_.start();
  const auto deadline = std::chrono::steady_clock::now() + options_.podCidrTimeout;
  std::optional<Ipv4Cidr> cidr;
  bool logged = false;
  while (!cidr) {
    if (auto node = nodes_.get(options_.nodeName)) {
      const std::string text = (*node)["spec"].value("podCIDR", "");
      if (!text.empty()) {
        cidr = parseCidr(text);
        if (!cidr) return Status::BadRequest("node " + options_.nodeName + ": bad podCIDR " + text);
        break;
      }
    }
    if (std::chrono::steady_clock::now() > deadline)
      return Status::Unavailable("node " + options_.nodeName +
                                 " got no spec.podCIDR (is the node IPAM controller running?)");
    if (!logged) {
      LOG_INFO("network: waiting for the podCIDR of node {}", options_.nodeName);
      logged = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  {
    std::lock_guard lock(mu_);
    podCidr_ = *cidr;
  }
  if (options_.configureCni) {
    Status s = options_.configureCni(*cidr);
    if (!s.ok()) return s;
  }
  Status s = overlay_.setUp(*cidr);
  if (!s.ok()) return s;
  LOG_INFO("network: node {} has podCIDR {} ({})", options_.nodeName, cidr->toString(),
           options_.overlay.backend == OverlayBackend::kVxlan    ? "vxlan"
           : options_.overlay.backend == OverlayBackend::kHostGw ? "host-gw"
                                                                 : "no overlay");
  thread_ = std::thread([this] { syncLoop(); });
  return Status::Ok();
}

void NetworkAgent::syncLoop() {
  std::vector<PeerNode> last;
  bool first = true;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, options_.resyncPeriod, [this] { return dirty_ || stopping_; });
      if (stopping_) return;
      dirty_ = false;
    }
    auto peers = peersFromNodes(nodes_.list(), options_.nodeName);
    if (peers != last || first) LOG_INFO("network: {} peer node(s)", peers.size());
    Status s = overlay_.sync(peers);
    if (!s.ok()) {
      LOG_WARN("network: sync failed, retrying: {}", s.message());
      std::this_thread::sleep_for(std::chrono::seconds(1));
      markDirty();
      continue;
    }
    last = std::move(peers);
    first = false;
    ++syncs_;
  }
}

void NetworkAgent::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  nodes_.stop();
}

}  // namespace minik8s::network
