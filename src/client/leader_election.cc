#include "client/leader_election.h"

#include <unistd.h>

#include <cmath>

#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/random.h"
#include "common/time_util.h"

namespace minik8s::client {

std::string defaultLeaderIdentity(const std::string& suffix) {
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return std::string(host[0] ? host : "minik8s") + "_" + (suffix.empty() ? newUid() : suffix);
}

std::unique_ptr<LeaderElector> startLeaderElection(RestClient& client, const std::string& lockName,
                                                   const std::string& identity,
                                                   std::function<void()> start,
                                                   std::function<void()> stop) {
  LeaderElectionConfig config;
  config.lockName = lockName;
  config.identity = identity;
  config.onStartedLeading = std::move(start);
  config.onStoppedLeading = std::move(stop);
  config.onNewLeader = [lockName](const std::string& leader) {
    LOG_INFO("leader election: {} is led by {}", lockName, leader);
  };
  auto elector = std::make_unique<LeaderElector>(client, std::move(config));
  elector->start();
  return elector;
}

LeaderElector::LeaderElector(RestClient& client, LeaderElectionConfig config)
    : client_(client), config_(std::move(config)) {}

LeaderElector::~LeaderElector() { stop(); }

void LeaderElector::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  {
    std::lock_guard cb(callbacksMu_);
    callbacksDone_ = false;
  }
  callbackThread_ = std::thread([this] { callbackLoop(); });
  thread_ = std::thread([this] { run(); });
}

void LeaderElector::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard cb(callbacksMu_);
    callbacksDone_ = true;
  }
  callbacksCv_.notify_all();
  if (callbackThread_.joinable()) callbackThread_.join();
}

std::string LeaderElector::leader() const {
  std::lock_guard lock(mu_);
  return observedHolder_;
}

bool LeaderElector::waitFor(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stopping_; });
}

void LeaderElector::post(std::function<void()> callback) {
  if (!callback) return;
  {
    std::lock_guard lock(callbacksMu_);
    callbacks_.push_back(std::move(callback));
  }
  callbacksCv_.notify_all();
}

void LeaderElector::callbackLoop() {
  std::unique_lock lock(callbacksMu_);
  while (true) {
    callbacksCv_.wait(lock, [this] { return callbacksDone_ || !callbacks_.empty(); });
    if (callbacks_.empty()) return;  // done and drained
    auto cb = std::move(callbacks_.front());
    callbacks_.pop_front();
    lock.unlock();
    cb();
    lock.lock();
  }
}

void LeaderElector::setLeading(bool leading) {
  if (leading_.exchange(leading) == leading) return;
  LOG_INFO("leader election {}/{}: {} {}", config_.lockNamespace, config_.lockName,
           config_.identity, leading ? "is now the leader" : "stopped leading");
  post(leading ? config_.onStartedLeading : config_.onStoppedLeading);
}

void LeaderElector::observe(const std::string& holder) {
  bool changed = false;
  {
    std::lock_guard lock(mu_);
    changed = holder != observedHolder_;
    observedHolder_ = holder;
  }
  if (changed && !holder.empty() && config_.onNewLeader) {
    post([cb = config_.onNewLeader, holder] { cb(holder); });
  }
}

bool LeaderElector::tryAcquireOrRenew() {
  const std::string now = formatRfc3339Micro(std::chrono::system_clock::now());
  const auto observedNow = config_.clock->now();
  const int64_t durationSeconds =
      static_cast<int64_t>(std::ceil(static_cast<double>(config_.leaseDuration.count()) / 1000.0));
  auto existing = client_.get(resources::kLeases, config_.lockNamespace, config_.lockName);
  if (!existing.ok() && existing.status().code() != 404) {
    LOG_DEBUG("leader election: cannot read lease {}/{}: {}", config_.lockNamespace,
              config_.lockName, existing.status().message());
    return false;
  }
  json spec = {{"holderIdentity", config_.identity},
               {"leaseDurationSeconds", durationSeconds},
               {"acquireTime", now},
               {"renewTime", now},
               {"leaseTransitions", 0}};
  if (!existing.ok()) {
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", config_.lockName}, {"namespace", config_.lockNamespace}}},
                  {"spec", spec}};
    auto created = client_.create(resources::kLeases, config_.lockNamespace, lease);
    if (!created.ok()) return false;
    std::lock_guard lock(mu_);
    observedSpec_ = spec;
    observedTime_ = observedNow;
    observedHolder_ = config_.identity;
    return true;
  }
  const json old = existing->value("spec", json::object());
  const std::string holder = old.value("holderIdentity", std::string());
  bool expired = false;
  {
    std::lock_guard lock(mu_);
    if (old != observedSpec_) {
      observedSpec_ = old;
      observedTime_ = observedNow;
    }
    expired = observedTime_ + std::chrono::seconds(old.value("leaseDurationSeconds", int64_t{0})) <=
              observedNow;
  }
  observe(holder);
  if (!holder.empty() && holder != config_.identity && !expired) return false;
  if (holder == config_.identity) {
    spec["acquireTime"] = old.value("acquireTime", json(now));
    spec["leaseTransitions"] = old.value("leaseTransitions", int64_t{0});
  } else {
    spec["leaseTransitions"] = old.value("leaseTransitions", int64_t{0}) + 1;
  }
  json lease = *existing;
  lease["spec"] = spec;
  auto updated = client_.update(resources::kLeases, lease);
  if (!updated.ok()) return false;  // a Conflict: someone else wrote first
  {
    std::lock_guard lock(mu_);
    observedSpec_ = spec;
    observedTime_ = observedNow;
  }
  observe(config_.identity);
  return true;
}

void LeaderElector::release() {
  auto existing = client_.get(resources::kLeases, config_.lockNamespace, config_.lockName);
  if (!existing.ok()) return;
  json lease = *existing;
  if (valueAt(lease, "/spec/holderIdentity", std::string()) != config_.identity) return;
  const std::string now = formatRfc3339Micro(std::chrono::system_clock::now());
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = now;
  lease["spec"]["acquireTime"] = now;
  auto r = client_.update(resources::kLeases, lease);
  if (!r.ok()) {
    LOG_WARN("leader election: cannot release lease {}/{}: {}", config_.lockNamespace,
             config_.lockName, r.status().message());
  }
}

void LeaderElector::run() {
  while (true) {
    // Campaign.
    while (!tryAcquireOrRenew()) {
      if (!waitFor(config_.retryPeriod)) return;
    }
    setLeading(true);
    // Lead: renew until stopped or the renew deadline passes without success.
    auto lastRenew = config_.clock->now();
    bool stopped = false;
    while (true) {
      if (!waitFor(config_.retryPeriod)) {
        stopped = true;
        break;
      }
      if (tryAcquireOrRenew()) {
        lastRenew = config_.clock->now();
      } else if (config_.clock->now() - lastRenew >= config_.renewDeadline) {
        LOG_WARN("leader election {}/{}: failed to renew the lease within {} ms",
                 config_.lockNamespace, config_.lockName, config_.renewDeadline.count());
        break;
      }
    }
    setLeading(false);
    if (stopped) {
      if (config_.releaseOnStop) release();
      return;
    }
    if (!waitFor(config_.retryPeriod)) return;
  }
}

}  // namespace minik8s::client
