// EndpointBalancer: how a sidecar chooses among the endpoints of one destination (a service, or
// one subset of it) by the DestinationRule's trafficPolicy (mesh/rules.h), as Envoy does:
//
//   ROUND_ROBIN    in turn;
//   RANDOM         uniformly;
//   LEAST_REQUEST  the one with fewer requests in flight of two picked at random (Envoy's
//                  default choice count), so a slow endpoint gets less;
//   outlierDetection  an endpoint whose answers were 5xx (or that could not be reached)
//                  consecutive5xxErrors times in a row is ejected: not chosen for
//                  baseEjectionTime x the times it was ejected; at most maxEjectionPercent of the
//                  endpoints are out at once, but always one may be; when every endpoint is out
//                  they are all chosen again (Envoy's panic mode). An endpoint that answered well
//                  for `interval` after its ejection is forgiven one ejection.
//
// It keeps what it needs between requests (the turn, requests in flight, error runs and
// ejections, by "ip:port"). Not thread-safe: one per destination on the proxy's io thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "mesh/rules.h"

namespace minik8s::mesh {

class EndpointBalancer {
 public:
  using Clock = std::chrono::steady_clock;

  // Index into `endpoints` ("ip:port" each, not empty) of the one to send the next request to.
  size_t pick(const std::vector<std::string>& endpoints, const TrafficPolicy& policy,
              Clock::time_point now, std::mt19937_64& rng);
  // A request to `endpoint` started / ended with `status` (0: no answer: refused, reset,
  // timed out).
  void started(const std::string& endpoint);
  void finished(const std::string& endpoint, int status, const TrafficPolicy& policy,
                Clock::time_point now);

  bool ejected(const std::string& endpoint, Clock::time_point now) const;
  int inFlight(const std::string& endpoint) const;

 private:
  struct State {
    int inFlight = 0;
    int errorsInARow = 0;
    int ejections = 0;
    Clock::time_point ejectedUntil{};
  };
  uint64_t turn_ = 0;
  size_t endpointCount_ = 0;  // of the last pick: the base of maxEjectionPercent
  std::map<std::string, State> state_;
};

}  // namespace minik8s::mesh
