#include "proxy/nftables_backend.h"

#include "common/logging.h"

namespace minik8s::proxy {

namespace {

const NftServiceRules kNoRules;

NftObjects objectsOf(const std::map<std::string, NftServiceRules, std::less<>>& rules) {
  NftObjects out;
  for (const auto& [key, r] : rules) {
    for (const ChainRules& c : r.chains) out.chains.insert(c.name);
    for (const NftAffinitySet& s : r.affinitySets) out.sets.insert(s.name);
  }
  return out;
}

}  // namespace

NftablesBackend::NftablesBackend(std::unique_ptr<Nftables> nft, RuleOptions options,
                                 std::function<Status()> removeOtherMode)
    : nft_(std::move(nft)),
      options_(std::move(options)),
      removeOtherMode_(std::move(removeOtherMode)) {}

Status NftablesBackend::start() {
  if (removeOtherMode_) {
    if (Status s = removeOtherMode_(); !s.ok()) LOG_WARN("proxy: {}", s.message());
  }
  // The table and its fixed chains now (the services follow with the first sync); fails early
  // when nft cannot be driven.
  if (Status s = nft_->apply(nftFullDocument({}, {})); !s.ok()) return s;
  kernel_.reset();
  return readKernel() ? Status::Ok() : Status::Internal("cannot list table ip kube-proxy");
}

bool NftablesBackend::readKernel() {
  auto listing = nft_->listTable();
  if (!listing.ok()) {
    LOG_ERROR("proxy: {}", listing.status().message());
    return false;
  }
  kernel_ = parseNftObjects(*listing);
  return true;
}

std::string NftablesBackend::prepareFull(const std::vector<json>& services,
                                         const std::vector<json>& slices) {
  pending_.clear();
  // Slices by service, so each service reads only its own.
  std::map<std::string, std::vector<const json*>, std::less<>> byService;
  for (const json& s : slices) byService[sliceServiceKey(s)].push_back(&s);
  static const std::vector<const json*> kNone;
  for (const json& svc : services) {
    std::string key = serviceKey(svc);
    auto it = byService.find(key);
    pending_[key] = buildNftServiceRules(svc, it == byService.end() ? kNone : it->second, options_);
  }
  pendingFull_ = true;
  lastRegenerated_ = static_cast<int>(services.size());
  std::vector<const NftServiceRules*> rules;
  rules.reserve(pending_.size());
  for (const auto& [key, r] : pending_) rules.push_back(&r);
  return nftFullDocument(rules, kernel_ ? *kernel_ : objectsOf(applied_));
}

std::string NftablesBackend::preparePartial(const std::map<std::string, ServiceInput>& changed) {
  pending_.clear();
  pendingFull_ = false;
  lastRegenerated_ = static_cast<int>(changed.size());
  std::vector<const NftServiceRules*> before, after;
  std::map<std::string, int, std::less<>> delta;
  for (const auto& [key, input] : changed) {
    NftServiceRules& next = pending_[key];
    if (input.service) {
      std::vector<const json*> slices;
      slices.reserve(input.slices.size());
      for (const json& s : input.slices) slices.push_back(&s);
      next = buildNftServiceRules(*input.service, slices, options_);
    }
    auto it = applied_.find(key);
    const NftServiceRules& prev = it == applied_.end() ? kNoRules : it->second;
    before.push_back(&prev);
    after.push_back(&next);
    for (const std::string& ip : prev.endpointIPs) --delta[ip];
    for (const std::string& ip : next.endpointIPs) ++delta[ip];
  }
  std::vector<std::string> hairpinGone, hairpinNew;
  for (const auto& [ip, d] : delta) {
    if (d == 0) continue;
    auto it = hairpin_.find(ip);
    int now = it == hairpin_.end() ? 0 : it->second;
    if (now > 0 && now + d <= 0) hairpinGone.push_back(ip);
    if (now <= 0 && now + d > 0) hairpinNew.push_back(ip);
  }
  return nftPartialDocument(before, after, hairpinGone, hairpinNew);
}

void NftablesBackend::commit() {
  if (pendingFull_) {
    applied_.clear();
    hairpin_.clear();
    servicePorts_ = endpoints_ = 0;
    kernel_.reset();
  }
  for (auto& [key, next] : pending_) {
    auto it = applied_.find(key);
    if (it != applied_.end()) {
      servicePorts_ -= it->second.servicePorts;
      endpoints_ -= it->second.endpoints;
      for (const std::string& ip : it->second.endpointIPs) {
        if (--hairpin_[ip] <= 0) hairpin_.erase(ip);
      }
    }
    servicePorts_ += next.servicePorts;
    endpoints_ += next.endpoints;
    for (const std::string& ip : next.endpointIPs) ++hairpin_[ip];
    bool gone = next.chains.empty() && next.servicePorts == 0;
    if (gone) {
      if (it != applied_.end()) applied_.erase(it);
    } else if (it != applied_.end()) {
      it->second = std::move(next);
    } else {
      applied_.emplace(key, std::move(next));
    }
  }
  pending_.clear();
}

void NftablesBackend::recover() {
  pending_.clear();
  readKernel();
}

Status NftablesBackend::cleanup() {
  applied_.clear();
  hairpin_.clear();
  pending_.clear();
  servicePorts_ = endpoints_ = 0;
  kernel_ = NftObjects();
  return nft_->apply(nftDeleteTableDocument());
}

}  // namespace minik8s::proxy
