#include "scheduler/scheduling_queue.h"

#include <algorithm>

namespace minik8s::scheduler {

using namespace std::chrono_literals;

void TimedKeys::set(const std::string& key, TimePoint t) {
  auto [it, added] = byKey_.try_emplace(key, t);
  if (!added) {
    if (it->second == t) return;
    byTime_.erase({it->second, key});
    it->second = t;
  }
  byTime_.emplace(t, key);
}

bool TimedKeys::erase(const std::string& key) {
  auto it = byKey_.find(key);
  if (it == byKey_.end()) return false;
  byTime_.erase({it->second, key});
  byKey_.erase(it);
  return true;
}

std::vector<std::string> TimedKeys::takeUntil(TimePoint until) {
  std::vector<std::string> due;
  while (!byTime_.empty() && byTime_.begin()->first <= until) {
    auto node = byTime_.extract(byTime_.begin());
    byKey_.erase(node.value().second);
    due.push_back(std::move(node.value().second));
  }
  return due;
}

std::vector<std::pair<std::string, TimedKeys::TimePoint>> TimedKeys::takeAll() {
  std::vector<std::pair<std::string, TimePoint>> all;
  all.reserve(byTime_.size());
  for (auto& [t, key] : byTime_) all.emplace_back(key, t);
  byTime_.clear();
  byKey_.clear();
  return all;
}

SchedulingQueue::SchedulingQueue(const client::Clock& clock, QueueOptions options)
    : clock_(clock), options_(options) {}

void SchedulingQueue::pushActiveLocked(const std::string& key) {
  if (activeSet_.insert(key).second) {
    active_.push_back(key);
    cv_.notify_one();
  }
}

void SchedulingQueue::add(const std::string& key) {
  std::lock_guard l(mu_);
  if (closed_ || activeSet_.count(key) || backoff_.contains(key) || unschedulable_.contains(key)) {
    return;
  }
  pushActiveLocked(key);
}

std::chrono::steady_clock::time_point SchedulingQueue::backoffExpiry(const std::string& key) {
  int n = std::max(1, attempts_[key]);
  auto delay = options_.initialBackoff;
  for (int i = 1; i < n && delay < options_.maxBackoff; ++i) delay *= 2;
  delay = std::min(delay, options_.maxBackoff);
  return lastFailure_[key] + delay;
}

void SchedulingQueue::flushLocked() {
  const auto now = clock_.now();
  for (const std::string& key : backoff_.takeUntil(now)) pushActiveLocked(key);
  for (const std::string& key : unschedulable_.takeUntil(now - options_.unschedulableTimeout))
    pushActiveLocked(key);
}

void SchedulingQueue::flush() {
  std::lock_guard l(mu_);
  flushLocked();
}

std::optional<std::string> SchedulingQueue::pop(std::chrono::milliseconds maxWait) {
  std::unique_lock l(mu_);
  const auto deadline = std::chrono::steady_clock::now() + maxWait;
  while (true) {
    flushLocked();
    if (closed_) return std::nullopt;
    if (!active_.empty()) {
      std::string key = active_.front();
      active_.pop_front();
      activeSet_.erase(key);
      ++cycle_;
      return key;
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    // Wake up at least every 100 ms to promote back-offs that came due.
    cv_.wait_until(l, std::min(deadline, now + 100ms));
  }
}

void SchedulingQueue::addUnschedulable(const std::string& key, int64_t cycle) {
  std::lock_guard l(mu_);
  if (closed_) return;
  ++attempts_[key];
  lastFailure_[key] = clock_.now();
  if (activeSet_.count(key)) return;  // re-added by an update meanwhile: try again soon
  if (moveRequestCycle_ >= cycle) {
    backoff_.set(key, backoffExpiry(key));
  } else {
    unschedulable_.set(key, clock_.now());
  }
}

void SchedulingQueue::addBackoff(const std::string& key) {
  std::lock_guard l(mu_);
  if (closed_ || activeSet_.count(key)) return;
  ++attempts_[key];
  lastFailure_[key] = clock_.now();
  unschedulable_.erase(key);
  backoff_.set(key, backoffExpiry(key));
}

void SchedulingQueue::moveAllToActiveOrBackoff() {
  std::lock_guard l(mu_);
  const auto now = clock_.now();
  for (const auto& [key, since] : unschedulable_.takeAll()) {
    auto expiry = backoffExpiry(key);
    if (expiry > now) {
      backoff_.set(key, expiry);
    } else {
      pushActiveLocked(key);
    }
  }
  moveRequestCycle_ = cycle_;
}

void SchedulingQueue::remove(const std::string& key) {
  std::lock_guard l(mu_);
  if (activeSet_.erase(key)) active_.erase(std::find(active_.begin(), active_.end(), key));
  backoff_.erase(key);
  unschedulable_.erase(key);
  attempts_.erase(key);
  lastFailure_.erase(key);
}

void SchedulingQueue::close() {
  std::lock_guard l(mu_);
  closed_ = true;
  cv_.notify_all();
}

int64_t SchedulingQueue::schedulingCycle() {
  std::lock_guard l(mu_);
  return cycle_;
}

size_t SchedulingQueue::activeLength() {
  std::lock_guard l(mu_);
  return active_.size();
}

size_t SchedulingQueue::backoffLength() {
  std::lock_guard l(mu_);
  return backoff_.size();
}

size_t SchedulingQueue::unschedulableLength() {
  std::lock_guard l(mu_);
  return unschedulable_.size();
}

int SchedulingQueue::attempts(const std::string& key) {
  std::lock_guard l(mu_);
  auto it = attempts_.find(key);
  return it == attempts_.end() ? 0 : it->second;
}

}  // namespace minik8s::scheduler
