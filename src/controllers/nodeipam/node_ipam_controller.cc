#include "controllers/nodeipam/node_ipam_controller.h"

#include "common/logging.h"

namespace minik8s::controllers {

namespace {
std::string podCidrOf(const json& node) {
  return node.value("spec", json::object()).value("podCIDR", "");
}
}  // namespace

std::optional<Ipv4Cidr> firstFreeBlock(const Ipv4Cidr& range, int maskSize,
                                       const std::vector<Ipv4Cidr>& used) {
  const uint64_t count = subnetCount(range, maskSize);
  for (uint64_t i = 0; i < count; ++i) {
    auto block = nthSubnet(range, maskSize, i);
    bool taken = false;
    for (const auto& u : used) taken = taken || u.overlaps(*block);
    if (!taken) return block;
  }
  return std::nullopt;
}

NodeIpamController::NodeIpamController(client::RestClient& rest, client::Informer& nodes,
                                       NodeIpamOptions options)
    : rest_(rest),
      nodes_(nodes),
      options_(std::move(options)),
      range_(parseCidr(options_.clusterCidr).value_or(Ipv4Cidr{0x0af40000, 16})),
      workers_(
          queue_, [this](const std::string& key) { return sync(key); }, "node-ipam") {
  auto enqueue = [this](const json& node) {
    if (podCidrOf(node).empty()) queue_.add(client::objectKey(node));
  };
  nodes_.addHandlers({enqueue, [enqueue](const json&, const json& n) { enqueue(n); },
                      [this](const json& node) {
                        std::lock_guard lock(mu_);
                        pending_.erase(client::objectKey(node));
                      }});
}

NodeIpamController::~NodeIpamController() { stop(); }

void NodeIpamController::start() { workers_.start(1); }
void NodeIpamController::stop() { workers_.stop(); }

Status NodeIpamController::sync(const std::string& nodeName) {
  auto node = nodes_.get(nodeName);
  if (!node || isTerminating(*node)) return Status::Ok();
  if (!podCidrOf(*node).empty()) {
    std::lock_guard lock(mu_);
    pending_.erase(nodeName);
    return Status::Ok();
  }
  std::vector<Ipv4Cidr> used;
  for (const auto& n : nodes_.list())
    if (auto c = parseCidr(podCidrOf(n))) used.push_back(*c);
  std::optional<Ipv4Cidr> block;
  {
    std::lock_guard lock(mu_);
    // A retry for the same node reuses its reservation.
    if (auto it = pending_.find(nodeName); it != pending_.end()) {
      block = it->second;
    } else {
      for (const auto& [name, c] : pending_) used.push_back(c);
      block = firstFreeBlock(range_, options_.nodeMaskSize, used);
      if (!block) {
        return Status::Unavailable("node-ipam: no free /" + std::to_string(options_.nodeMaskSize) +
                                   " left in " + range_.toString() + " for node " + nodeName);
      }
      pending_[nodeName] = *block;
    }
  }
  const std::string cidr = block->toString();
  json patch = {{"spec", {{"podCIDR", cidr}, {"podCIDRs", json::array({cidr})}}}};
  auto r = rest_.patch(client::resources::kNodes, "", nodeName, patch, "merge");
  if (!r.ok()) {
    if (r.status().code() == 404) {
      std::lock_guard lock(mu_);
      pending_.erase(nodeName);
      return Status::Ok();
    }
    return r.status();
  }
  LOG_INFO("node-ipam: node {} gets podCIDR {}", nodeName, cidr);
  return Status::Ok();
}

}  // namespace minik8s::controllers
