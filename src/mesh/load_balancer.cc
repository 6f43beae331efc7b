#include "mesh/load_balancer.h"

#include <algorithm>

namespace minik8s::mesh {

size_t EndpointBalancer::pick(const std::vector<std::string>& endpoints,
                              const TrafficPolicy& policy, Clock::time_point now,
                              std::mt19937_64& rng) {
  endpointCount_ = endpoints.size();
  if (endpoints.size() <= 1) return 0;
  // Endpoints the outlier detection has not ejected; all of them when it ejected every one.
  std::vector<size_t> healthy;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    if (!policy.outlierDetection || !ejected(endpoints[i], now)) healthy.push_back(i);
  }
  if (healthy.empty()) {
    for (size_t i = 0; i < endpoints.size(); ++i) healthy.push_back(i);
  }
  switch (policy.loadBalancer) {
    case LoadBalancer::kRandom:
      return healthy[std::uniform_int_distribution<size_t>(0, healthy.size() - 1)(rng)];
    case LoadBalancer::kLeastRequest: {
      std::uniform_int_distribution<size_t> any(0, healthy.size() - 1);
      size_t a = healthy[any(rng)], b = healthy[any(rng)];
      return inFlight(endpoints[b]) < inFlight(endpoints[a]) ? b : a;
    }
    case LoadBalancer::kRoundRobin:
      break;
  }
  return healthy[turn_++ % healthy.size()];
}

void EndpointBalancer::started(const std::string& endpoint) { ++state_[endpoint].inFlight; }

void EndpointBalancer::finished(const std::string& endpoint, int status,
                                const TrafficPolicy& policy, Clock::time_point now) {
  State& s = state_[endpoint];
  s.inFlight = std::max(0, s.inFlight - 1);
  const bool failed = status == 0 || status >= 500;
  if (!failed) {
    s.errorsInARow = 0;
    // Well since its last ejection ended for an interval: one ejection forgiven.
    if (s.ejections > 0 && policy.outlierDetection &&
        now >= s.ejectedUntil + policy.outlierDetection->interval) {
      --s.ejections;
      s.ejectedUntil = now;
    }
    return;
  }
  ++s.errorsInARow;
  if (!policy.outlierDetection) return;
  const OutlierDetection& od = *policy.outlierDetection;
  if (od.consecutive5xxErrors <= 0 || s.errorsInARow < od.consecutive5xxErrors) return;
  if (now < s.ejectedUntil) return;  // already out
  int out = 0;
  for (const auto& [key, other] : state_) {
    if (now < other.ejectedUntil) ++out;
  }
  const int allowed = std::max(
      1, static_cast<int>(endpointCount_ * static_cast<size_t>(od.maxEjectionPercent) / 100));
  if (out >= allowed) return;
  ++s.ejections;
  s.errorsInARow = 0;
  s.ejectedUntil = now + od.baseEjectionTime * s.ejections;
}

bool EndpointBalancer::ejected(const std::string& endpoint, Clock::time_point now) const {
  auto it = state_.find(endpoint);
  return it != state_.end() && now < it->second.ejectedUntil;
}

int EndpointBalancer::inFlight(const std::string& endpoint) const {
  auto it = state_.find(endpoint);
  return it == state_.end() ? 0 : it->second.inFlight;
}

}  // namespace minik8s::mesh
