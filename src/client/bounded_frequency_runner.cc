#include "client/bounded_frequency_runner.h"

#include <algorithm>

namespace minik8s::client {

BoundedFrequencyRunner::BoundedFrequencyRunner(std::function<bool()> fn,
                                               std::chrono::milliseconds minInterval,
                                               std::chrono::milliseconds maxInterval,
                                               std::chrono::milliseconds retryInterval)
    : fn_(std::move(fn)),
      minInterval_(minInterval),
      maxInterval_(maxInterval),
      retryInterval_(retryInterval) {}

void BoundedFrequencyRunner::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  requested_ = true;
  thread_ = std::thread([this] { loop(); });
}

void BoundedFrequencyRunner::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BoundedFrequencyRunner::requestRun() {
  {
    std::lock_guard lock(mu_);
    requested_ = true;
  }
  cv_.notify_all();
}

void BoundedFrequencyRunner::loop() {
  std::unique_lock lock(mu_);
  Clock::time_point lastRun = Clock::now() - minInterval_;
  Clock::time_point retryAt = Clock::time_point::max();
  while (!stopping_) {
    Clock::time_point due =
        requested_ ? lastRun + minInterval_ : std::min(lastRun + maxInterval_, retryAt);
    if (Clock::now() < due) {
      // Woken early by a request (which may move `due` earlier) or by stop().
      cv_.wait_until(lock, due);
      continue;
    }
    requested_ = false;
    retryAt = Clock::time_point::max();
    lock.unlock();
    lastRun = Clock::now();
    bool ok = fn_();
    lock.lock();
    if (!ok) retryAt = Clock::now() + retryInterval_;
  }
}

CoalescedSync::CoalescedSync(std::vector<Informer*> informers, std::function<bool()> sync,
                             SyncIntervals intervals)
    : informers_(std::move(informers)),
      runner_(std::move(sync), intervals.min, intervals.max, intervals.retry) {
  EventHandlers poke{[this](const json&) { runner_.requestRun(); },
                     [this](const json&, const json&) { runner_.requestRun(); },
                     [this](const json&) { runner_.requestRun(); }};
  for (Informer* informer : informers_) informer->addHandlers(poke);
}

bool CoalescedSync::startInformers(std::chrono::milliseconds timeout) {
  for (Informer* informer : informers_) informer->start();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (Informer* informer : informers_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!informer->waitForSync(std::max(left, std::chrono::milliseconds(1)))) return false;
  }
  return true;
}

void CoalescedSync::stop() {
  runner_.stop();
  for (Informer* informer : informers_) informer->stop();
}

}  // namespace minik8s::client
