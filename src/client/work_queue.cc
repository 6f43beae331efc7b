#include "client/work_queue.h"

namespace minik8s::client {

const RealClock& RealClock::instance() {
  static const RealClock clock;
  return clock;
}

WorkQueue::WorkQueue(const Clock& clock, std::chrono::milliseconds baseDelay,
                     std::chrono::milliseconds maxDelay)
    : clock_(clock), baseDelay_(baseDelay), maxDelay_(maxDelay) {}

namespace {

double secondsBetween(std::chrono::steady_clock::time_point from,
                      std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

void WorkQueue::enableMetrics(const std::string& name, metrics::Registry& registry) {
  // client-go's buckets: 10 ns to 10 s.
  auto buckets = metrics::exponentialBuckets(10e-9, 10, 10);
  auto metrics = std::make_unique<Metrics>(Metrics{
      registry
          .counterVec("workqueue_adds_total", "Total number of adds handled by workqueue", {"name"})
          .with({name}),
      registry.gaugeVec("workqueue_depth", "Current depth of workqueue", {"name"}).with({name}),
      registry
          .histogramVec("workqueue_queue_duration_seconds",
                        "How long in seconds an item stays in workqueue before being requested.",
                        {"name"}, buckets)
          .with({name}),
      registry
          .histogramVec("workqueue_work_duration_seconds",
                        "How long in seconds processing an item from workqueue takes.", {"name"},
                        buckets)
          .with({name}),
      registry
          .counterVec("workqueue_retries_total", "Total number of retries handled by workqueue",
                      {"name"})
          .with({name}),
  });
  std::lock_guard lock(mu_);
  metrics_ = std::move(metrics);
  metrics_->depth.set(static_cast<double>(queue_.size()));
}

void WorkQueue::addLocked(const std::string& key) {
  if (shutdown_ || dirty_.count(key)) return;
  dirty_.insert(key);
  if (metrics_) {
    metrics_->adds.inc();
    addedAt_.emplace(key, clock_.now());
  }
  if (processing_.count(key)) return;  // queued again by done()
  queue_.push_back(key);
  if (metrics_) metrics_->depth.set(static_cast<double>(queue_.size()));
  cv_.notify_one();
}

void WorkQueue::add(const std::string& key) {
  std::lock_guard lock(mu_);
  addLocked(key);
}

void WorkQueue::addAfter(const std::string& key, std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  if (shutdown_) return;
  if (delay.count() <= 0) return addLocked(key);
  delayed_.emplace(clock_.now() + delay, key);
  cv_.notify_all();
}

void WorkQueue::addRateLimited(const std::string& key) {
  std::chrono::milliseconds delay;
  {
    std::lock_guard lock(mu_);
    if (metrics_) metrics_->retries.inc();
    int n = failures_[key]++;
    delay = baseDelay_;
    for (int i = 0; i < n && delay < maxDelay_; ++i) delay *= 2;
    delay = std::min(delay, maxDelay_);
  }
  addAfter(key, delay);
}

void WorkQueue::forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

int WorkQueue::requeues(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::promoteDueLocked() {
  auto now = clock_.now();
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    std::string key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    addLocked(key);
  }
}

void WorkQueue::promoteDue() {
  std::lock_guard lock(mu_);
  promoteDueLocked();
}

std::optional<std::string> WorkQueue::get(std::chrono::milliseconds maxWait) {
  std::unique_lock lock(mu_);
  auto deadline = std::chrono::steady_clock::now() + maxWait;
  while (true) {
    promoteDueLocked();
    if (!queue_.empty()) break;
    if (shutdown_) return std::nullopt;
    auto wake = deadline;
    if (!delayed_.empty()) {
      // Delays are measured on clock_; wait at most that long in real time.
      auto untilDue = delayed_.begin()->first - clock_.now();
      wake = std::min(wake, std::chrono::steady_clock::now() +
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::max(untilDue, decltype(untilDue)::zero())));
    }
    if (cv_.wait_until(lock, wake) == std::cv_status::timeout &&
        std::chrono::steady_clock::now() >= deadline) {
      promoteDueLocked();
      if (queue_.empty()) return std::nullopt;
      break;
    }
  }
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  if (metrics_) {
    auto now = clock_.now();
    metrics_->depth.set(static_cast<double>(queue_.size()));
    if (auto it = addedAt_.find(key); it != addedAt_.end()) {
      metrics_->queueDuration.observe(secondsBetween(it->second, now));
      addedAt_.erase(it);
    }
    startedAt_[key] = now;
  }
  return key;
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (metrics_) {
    if (auto it = startedAt_.find(key); it != startedAt_.end()) {
      metrics_->workDuration.observe(secondsBetween(it->second, clock_.now()));
      startedAt_.erase(it);
    }
  }
  if (dirty_.count(key)) {
    queue_.push_back(key);
    if (metrics_) metrics_->depth.set(static_cast<double>(queue_.size()));
    cv_.notify_one();
  }
}

void WorkQueue::shutDown() {
  std::lock_guard lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

bool WorkQueue::shuttingDown() {
  std::lock_guard lock(mu_);
  return shutdown_;
}

size_t WorkQueue::length() {
  std::lock_guard lock(mu_);
  return queue_.size();
}

}  // namespace minik8s::client
