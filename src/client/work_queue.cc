#include "client/work_queue.h"

namespace minik8s::client {

const RealClock& RealClock::instance() {
  static const RealClock clock;
  return clock;
}

WorkQueue::WorkQueue(const Clock& clock, std::chrono::milliseconds baseDelay,
                     std::chrono::milliseconds maxDelay)
    : clock_(clock), baseDelay_(baseDelay), maxDelay_(maxDelay) {}

void WorkQueue::addLocked(const std::string& key) {
  if (shutdown_ || dirty_.count(key)) return;
  dirty_.insert(key);
  if (processing_.count(key)) return;  // queued again by done()
  queue_.push_back(key);
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
  return key;
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key)) {
    queue_.push_back(key);
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
