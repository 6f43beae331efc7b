#include "serverless/autoscaler.h"

#include <algorithm>
#include <cmath>

namespace minik8s::serverless {

namespace {

double secondsBetween(std::chrono::steady_clock::time_point a,
                      std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double meanOfLast(const std::deque<double>& samples, size_t n) {
  n = std::min(n, samples.size());
  if (n == 0) return 0;
  double sum = 0;
  for (size_t i = samples.size() - n; i < samples.size(); ++i) sum += samples[i];
  return sum / static_cast<double>(n);
}

int ceilDiv(double concurrency, int target) {
  // A hair of tolerance: 10.0000001 requests over a target of 10 is still one instance.
  return static_cast<int>(std::ceil(concurrency / target - 1e-9));
}

}  // namespace

Autoscaler::Autoscaler(const client::Clock& clock, AutoscalerWindows windows)
    : clock_(clock), windows_(windows) {}

void Autoscaler::configure(const std::string& key, const ScaleSettings& settings) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = functions_.try_emplace(key);
  it->second.settings = settings;
  if (fresh) {
    const auto now = clock_.now();
    it->second.lastChange = it->second.bucketStart = it->second.lastActive = now;
  }
}

void Autoscaler::forget(const std::string& key) {
  std::lock_guard lock(mu_);
  functions_.erase(key);
}

void Autoscaler::accumulate(FunctionStats& f, TimePoint now) {
  f.area += f.inFlight * secondsBetween(f.lastChange, now);
  f.lastChange = now;
}

void Autoscaler::requestStarted(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = functions_.find(key);
  if (it == functions_.end()) return;
  const auto now = clock_.now();
  accumulate(it->second, now);
  ++it->second.inFlight;
  it->second.lastActive = now;
  it->second.sawRequest = true;
}

void Autoscaler::requestFinished(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = functions_.find(key);
  if (it == functions_.end() || it->second.inFlight == 0) return;
  const auto now = clock_.now();
  accumulate(it->second, now);
  --it->second.inFlight;
  it->second.lastActive = now;
}

int Autoscaler::inFlight(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = functions_.find(key);
  return it == functions_.end() ? 0 : it->second.inFlight;
}

void Autoscaler::sample() {
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  const size_t keep = static_cast<size_t>(windows_.stable.count());
  for (auto& [key, f] : functions_) {
    accumulate(f, now);
    const double length = secondsBetween(f.bucketStart, now);
    f.samples.push_back(length > 0 ? f.area / length : f.inFlight);
    while (f.samples.size() > keep) f.samples.pop_front();
    f.area = 0;
    f.bucketStart = now;
  }
}

ScaleDecision Autoscaler::decide(const std::string& key, int readyInstances, int currentInstances) {
  std::lock_guard lock(mu_);
  ScaleDecision d;
  auto it = functions_.find(key);
  if (it == functions_.end()) return d;
  FunctionStats& f = it->second;
  const ScaleSettings& s = f.settings;
  const auto now = clock_.now();

  d.stableConcurrency = meanOfLast(f.samples, static_cast<size_t>(windows_.stable.count()));
  d.panicConcurrency = meanOfLast(f.samples, static_cast<size_t>(windows_.panic.count()));
  // Requests held at a Function without instances count at once, before any sample has them.
  d.stableConcurrency = std::max(d.stableConcurrency, f.samples.empty() ? f.inFlight * 1.0 : 0.0);
  d.panicConcurrency = std::max(d.panicConcurrency, readyInstances == 0 ? f.inFlight * 1.0 : 0.0);

  const double capacity = std::max(readyInstances, 1) * static_cast<double>(s.targetConcurrency);
  const int panicDesired = ceilDiv(d.panicConcurrency, s.targetConcurrency);
  const bool overloaded =
      d.panicConcurrency > 0 && d.panicConcurrency >= windows_.panicThreshold * capacity;
  if (overloaded) {
    if (!f.panicking) f.panicDesired = 0;
    f.panicking = true;
    f.panicSince = now;
  } else if (f.panicking && now - f.panicSince >= windows_.stable) {
    f.panicking = false;
  }

  int desired = ceilDiv(d.stableConcurrency, s.targetConcurrency);
  if (f.panicking) {
    f.panicDesired = std::max({f.panicDesired, panicDesired, desired});
    desired = f.panicDesired;  // never down while panicking
  }
  const bool idle = f.inFlight == 0 && now - f.lastActive >= s.scaleToZeroAfter;
  if (idle && s.minScale == 0) {
    desired = 0;
    f.panicking = false;
  } else if (!idle) {
    // Recent traffic keeps an instance until the idle window has passed.
    desired = std::max(desired, f.sawRequest ? 1 : currentInstances);
  }
  desired = std::clamp(desired, s.minScale, std::max(s.maxScale, s.minScale));
  d.desired = desired;
  d.panicking = f.panicking;
  return d;
}

}  // namespace minik8s::serverless
