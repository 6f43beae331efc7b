#include "mesh/config_watcher.h"

#include "common/logging.h"

namespace minik8s::mesh {

const client::Resource kVirtualServices{"networking.istio.io", "v1", "virtualservices", true};
const client::Resource kDestinationRules{"networking.istio.io", "v1", "destinationrules", true};
const client::Resource kPeerAuthentications{"security.istio.io", "v1", "peerauthentications", true};
const client::Resource kAuthorizationPolicies{"security.istio.io", "v1", "authorizationpolicies",
                                              true};

namespace {
constexpr auto kCoalesce = std::chrono::milliseconds(50);
}

ConfigWatcher::ConfigWatcher(client::RestClient& rest, Callback onConfig)
    : onConfig_(std::move(onConfig)) {
  namespace res = client::resources;
  for (const auto& r : {res::kServices, res::kEndpoints, res::kPods, kVirtualServices,
                        kDestinationRules, kPeerAuthentications, kAuthorizationPolicies}) {
    auto informer = std::make_unique<client::Informer>(rest, r);
    informer->addHandlers({[this](const json&) { changed(); },
                           [this](const json&, const json&) { changed(); },
                           [this](const json&) { changed(); }});
    informers_.push_back(std::move(informer));
  }
}

ConfigWatcher::~ConfigWatcher() { stop(); }

void ConfigWatcher::start() {
  for (auto& i : informers_) i->start();
  thread_ = std::thread([this] { run(); });
}

void ConfigWatcher::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& i : informers_) i->stop();
}

bool ConfigWatcher::waitForSync(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (size_t i = 0; i < 3; ++i) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!informers_[i]->waitForSync(std::max(left, std::chrono::milliseconds(0)))) return false;
  }
  return true;
}

void ConfigWatcher::changed() {
  {
    std::lock_guard lock(mu_);
    dirty_ = true;
  }
  cv_.notify_all();
}

void ConfigWatcher::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return dirty_ || stopping_; });
    if (stopping_) return;
    // Let a burst (a rollout, the initial lists) settle into one build.
    cv_.wait_for(lock, kCoalesce, [this] { return stopping_; });
    if (stopping_) return;
    dirty_ = false;
    int64_t version = ++version_;
    lock.unlock();
    std::vector<std::string> errors;
    MeshObjects objects{informers_[0]->list(), informers_[1]->list(), informers_[2]->list(),
                        informers_[3]->list(), informers_[4]->list(), informers_[5]->list(),
                        informers_[6]->list()};
    auto config = buildMeshConfig(objects, version, &errors);
    for (const auto& e : errors) LOG_WARN("mesh config: {}", e);
    onConfig_(std::move(config));
    lock.lock();
  }
}

}  // namespace minik8s::mesh
