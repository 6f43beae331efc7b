// BoundedFrequencyRunner: runs a function on its own thread when asked, coalescing requests, like
// Kubernetes' async.BoundedFrequencyRunner: never more often than `minInterval`, at least every
// `maxInterval` (a periodic repair), and again after `retryInterval` when the function reports
// failure. A request made while the function runs causes one more run afterwards.
//
// Header-only so both the proxy and the cluster DNS use it without a link-order dependency.
// requestRun() is thread-safe and cheap (fit for informer handlers); start()/stop() are called
// by the owner.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace minik8s::proxy {

class BoundedFrequencyRunner {
 public:
  using Clock = std::chrono::steady_clock;

  // `fn` returns false on failure (then it is retried after retryInterval).
  BoundedFrequencyRunner(std::function<bool()> fn, std::chrono::milliseconds minInterval,
                         std::chrono::milliseconds maxInterval,
                         std::chrono::milliseconds retryInterval)
      : fn_(std::move(fn)),
        minInterval_(minInterval),
        maxInterval_(maxInterval),
        retryInterval_(retryInterval) {}
  ~BoundedFrequencyRunner() { stop(); }
  BoundedFrequencyRunner(const BoundedFrequencyRunner&) = delete;
  BoundedFrequencyRunner& operator=(const BoundedFrequencyRunner&) = delete;

  // Starts the thread; the first run happens at once.
  void start() {
    std::lock_guard lock(mu_);
    if (thread_.joinable()) return;
    stopping_ = false;
    requested_ = true;
    thread_ = std::thread([this] { loop(); });
  }

  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  void requestRun() {
    {
      std::lock_guard lock(mu_);
      requested_ = true;
    }
    cv_.notify_all();
  }

 private:
  void loop() {
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

  std::function<bool()> fn_;
  const std::chrono::milliseconds minInterval_, maxInterval_, retryInterval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool requested_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace minik8s::proxy
