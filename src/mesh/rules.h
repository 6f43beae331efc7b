// Traffic rules in Istio's shape (networking.istio.io/v1), the subset docs/mesh.md documents:
// DestinationRule subsets by labels and trafficPolicy (loadBalancer.simple, outlierDetection),
// for the whole host or one subset; VirtualService http routes with match uri and headers
// (exact/prefix/regex), route destinations with subset and weight, timeout and retries.attempts.
//
// Parsing turns an object into rules (refusing what the subset does not know, with the field
// path); matching and weighted picking are pure functions so they are tested without a proxy.
// Everything here is immutable after parsing and safe to share between threads.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/yaml_json.h"

namespace minik8s::mesh {

struct StringMatch {
  enum class Kind { kExact, kPrefix, kRegex };
  Kind kind = Kind::kExact;
  std::string value;
  std::regex re;  // kRegex: whole-string match, as Envoy's RE2 safe_regex
  bool matches(std::string_view s) const;
};

struct HttpMatch {
  std::optional<StringMatch> uri;              // the path without the query
  std::map<std::string, StringMatch> headers;  // lower-case names
};

// Istio retries a failed request twice unless the route says otherwise.
inline constexpr int kDefaultRetryAttempts = 2;

struct RouteDestination {
  std::string host;    // a service name, "name.ns", or "name.ns.svc.cluster.local"
  std::string subset;  // "" = every endpoint
  int port = 0;        // 0 = the port the request was sent to
  int weight = 0;      // 0 with a single destination means all of it
};

struct HttpRoute {
  std::string name;
  std::vector<HttpMatch> match;  // empty = every request; any one of them matches
  std::vector<RouteDestination> route;
  std::chrono::milliseconds timeout{0};       // 0 = none
  int retryAttempts = kDefaultRetryAttempts;  // retries.attempts; Istio's default when absent
};

struct VirtualService {
  std::string ns, name;
  std::vector<std::string> hosts;
  std::vector<HttpRoute> http;
};

// DestinationRule.trafficPolicy.loadBalancer.simple.
enum class LoadBalancer { kRoundRobin, kRandom, kLeastRequest };

// DestinationRule.trafficPolicy.outlierDetection, with Istio's defaults.
struct OutlierDetection {
  int consecutive5xxErrors = 5;  // 5xx answers or connect failures in a row; 0 = off
  std::chrono::milliseconds interval{10'000};
  std::chrono::milliseconds baseEjectionTime{30'000};
  int maxEjectionPercent = 10;  // of the endpoints; one may always be ejected (as Envoy)
};

struct TrafficPolicy {
  LoadBalancer loadBalancer = LoadBalancer::kRoundRobin;
  std::optional<OutlierDetection> outlierDetection;
};

// A trafficPolicy object; errors name the field under `path` ("spec.trafficPolicy").
Result<TrafficPolicy> parseTrafficPolicy(const json& policy, const std::string& path);

struct Subset {
  std::string name;
  std::map<std::string, std::string> labels;
  std::optional<TrafficPolicy> trafficPolicy;  // overrides the rule's for this subset
};

struct DestinationRule {
  std::string ns, name;
  std::string host;
  std::vector<Subset> subsets;
  TrafficPolicy trafficPolicy;
};

Result<VirtualService> parseVirtualService(const json& obj);
Result<DestinationRule> parseDestinationRule(const json& obj);

// "reviews", "reviews.ns", "reviews.ns.svc", "reviews.ns.svc.cluster.local" -> "ns/reviews"
// (the rule's own namespace when the host does not say).
std::string serviceKeyOfHost(std::string_view host, std::string_view ruleNamespace);

// The first route whose match list accepts the request (path may carry a query, ignored);
// `header` returns a request header by lower-case name, or nullopt.
using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view)>;
const HttpRoute* matchRoute(const std::vector<HttpRoute>& routes, std::string_view path,
                            const HeaderLookup& header);

// Index of the destination picked by weight (a single destination or all-zero weights: the
// first / uniformly). `draw` is uniform in [0, total).
size_t pickWeighted(const std::vector<RouteDestination>& route, std::mt19937_64& rng);

// True when every label of `selector` is in `labels`.
bool labelsMatch(const std::map<std::string, std::string>& selector,
                 const std::map<std::string, std::string>& labels);

}  // namespace minik8s::mesh
