#include "kubelet/backoff.h"

namespace minik8s::kubelet {

Backoff::Backoff(const client::Clock& clock, Duration initial, Duration max)
    : clock_(clock), initial_(initial), max_(max) {}

bool Backoff::inBackoffSince(const std::string& key, TimePoint eventTime) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  TimePoint now = clock_.now();
  if (now - it->second.lastUpdate > 2 * max_) return false;  // stale: a fresh start
  return now - eventTime < it->second.delay;
}

void Backoff::next(const std::string& key) {
  std::lock_guard lock(mu_);
  TimePoint now = clock_.now();
  auto it = entries_.find(key);
  if (it == entries_.end() || now - it->second.lastUpdate > 2 * max_) {
    entries_[key] = Entry{initial_, now};
    return;
  }
  it->second.delay = std::min(it->second.delay * 2, max_);
  it->second.lastUpdate = now;
}

Backoff::Duration Backoff::get(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? Duration::zero() : it->second.delay;
}

void Backoff::reset(const std::string& key) {
  std::lock_guard lock(mu_);
  entries_.erase(key);
}

void Backoff::gc() {
  std::lock_guard lock(mu_);
  TimePoint now = clock_.now();
  std::erase_if(entries_, [&](const auto& e) { return now - e.second.lastUpdate > 2 * max_; });
}

}  // namespace minik8s::kubelet
