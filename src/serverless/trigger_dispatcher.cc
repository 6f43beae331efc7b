#include "serverless/trigger_dispatcher.h"

#include "common/logging.h"

namespace minik8s::serverless {

TriggerDispatcher::TriggerDispatcher(DeliveryTarget& target, DeliveryRecorder& recorder,
                                     const client::Clock& clock, size_t maxQueued)
    : target_(target), recorder_(recorder), clock_(clock), maxQueued_(maxQueued) {}

TriggerDispatcher::~TriggerDispatcher() { stop(); }

Status TriggerDispatcher::submit(Delivery delivery, bool forbidConcurrent) {
  const std::string key = delivery.ns + "/" + delivery.trigger;
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= maxQueued_) {
      return Status::Unavailable("the trigger delivery queue is full; retry later");
    }
    int& busy = perTrigger_[key];
    if (forbidConcurrent && busy > 0) {
      return Status::ConflictMessage("trigger " + key +
                                     ": the previous event is still being delivered (Forbid)");
    }
    ++busy;
    delivery.attempts = 0;
    queue_.push({clock_.now(), seq_++, std::move(delivery)});
  }
  wake_.notify_one();
  return {};
}

bool TriggerDispatcher::popDue(std::unique_lock<std::mutex>&, Delivery* out) {
  if (queue_.empty() || queue_.top().due > clock_.now()) return false;
  *out = queue_.top().delivery;
  queue_.pop();
  ++inProgress_;
  return true;
}

void TriggerDispatcher::attempt(Delivery d) {
  ++d.attempts;
  Status s = target_.deliver(d.ns, d.target, d.event);
  const std::string key = d.ns + "/" + d.trigger;
  if (!s.ok() && d.attempts <= d.policy.retry) {
    d.lastError = s.message();
    const auto wait = retryBackoff(d.policy, d.attempts);
    LOG_INFO("trigger {}: event {} to {} failed (attempt {}): {}; retry in {} ms", key, d.event.id,
             d.target.describe(), d.attempts, s.message(), wait.count());
    {
      std::lock_guard lock(mu_);
      --inProgress_;
      queue_.push({clock_.now() + wait, seq_++, std::move(d)});
    }
    wake_.notify_one();
    return;
  }
  DeliveryOutcome outcome;
  outcome.delivered = s.ok();
  outcome.attempts = d.attempts;
  outcome.error = s.ok() ? "" : s.message();
  outcome.event = d.event;
  outcome.firedAt = d.firedAt;
  if (!s.ok()) {
    LOG_WARN("trigger {}: event {} to {} failed after {} attempt(s): {}{}", key, d.event.id,
             d.target.describe(), d.attempts, s.message(),
             d.policy.deadLetter ? " (dead letter recorded)" : "");
  }
  recorder_.record(d.ns, d.trigger, outcome, d.policy.deadLetter);
  {
    std::lock_guard lock(mu_);
    --inProgress_;
    auto it = perTrigger_.find(key);
    if (it != perTrigger_.end() && --it->second <= 0) perTrigger_.erase(it);
  }
  wake_.notify_all();
}

size_t TriggerDispatcher::runDue() {
  size_t ran = 0;
  for (;;) {
    Delivery d;
    {
      std::unique_lock lock(mu_);
      if (!popDue(lock, &d)) return ran;
    }
    attempt(std::move(d));
    ++ran;
  }
}

std::optional<std::chrono::steady_clock::time_point> TriggerDispatcher::nextDue() const {
  std::lock_guard lock(mu_);
  if (queue_.empty()) return std::nullopt;
  return queue_.top().due;
}

size_t TriggerDispatcher::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size() + inProgress_;
}

void TriggerDispatcher::start(int workers) {
  std::lock_guard lock(mu_);
  stopping_ = false;
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { workerLoop(); });
}

void TriggerDispatcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

void TriggerDispatcher::workerLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    Delivery d;
    if (popDue(lock, &d)) {
      lock.unlock();
      attempt(std::move(d));
      lock.lock();
      continue;
    }
    if (queue_.empty()) {
      wake_.wait(lock);
    } else {
      wake_.wait_until(lock, queue_.top().due);
    }
  }
}

}  // namespace minik8s::serverless
