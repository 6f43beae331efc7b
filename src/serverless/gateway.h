// Gateway: the HTTP front of every Function, its activator and its autoscaler (what
// `minik8s serverless-gateway` runs in the serverless addon's pod).
//
//   POST|GET|PUT /function/<ns>/<name>[/path][?query]   -> an instance's /path?query
//   any path with Host: <name>.<ns>.fn.cluster.local    -> the same path on an instance
//   GET /healthz                                         -> 200 (the gateway itself)
//   POST /broker/<ns>/<broker>, /trigger/<ns>/<trigger>  -> CloudEvents for Triggers
//                                                           (trigger_broker.h)
//
// Informers on Functions, on the Endpoints of their Services and on their Deployments (both by
// the serverless.minik8s.io/function label) keep, per Function, its ready instances (pod IP:8080)
// and the requests in flight to each. A request goes to the ready instance with the fewest in
// flight (below containerConcurrency when set), over a pooled keep-alive connection, with the
// Function's timeoutSeconds (504 past it) and a 6 MB body limit (413). A connection refused (an
// instance going away) is retried on another instance.
//
// Activator: while a Function has no ready instance, its requests are held (counted as in
// flight, so a burst asks for enough instances), the autoscaler loop is woken to scale the
// Deployment up through its scale subresource, and the requests go out as soon as an instance is
// ready (a wake-up, not polling); 504 after timeoutSeconds, 500 at once with the error when the
// Function's status says its handler cannot be imported. An instance is ready when the
// Endpoints list it as ready, or earlier, as Knative's activator does: a starting pod (in
// notReadyAddresses, so it has an IP and is not terminating) is probed on the runtime's /healthz
// every 25 ms (backing off to 1 s), and used as soon as it answers 200, the same check as its
// readiness probe, without waiting for the kubelet's next probe period and the status round trip.
//
// Autoscaler loop: once a second (and at once when a request is held) it samples the in-flight
// counts (autoscaler.h) and patches each Deployment's spec.replicas to the decision. Instances
// are removed by the Deployment like any pod: the endpoints controller drops a terminating pod
// (so it gets no new request) and the runtime drains on SIGTERM (so none in flight is lost).
//
// Thread-safe: the HTTP server runs a thread per connection; informer handlers, the loop and the
// requests share the per-Function state under one mutex.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "common/http.h"
#include "common/http_client.h"
#include "serverless/autoscaler.h"
#include "serverless/function.h"

namespace minik8s::serverless {

// Where a request goes: the Function and the target (path and query) its instance sees.
struct Route {
  std::string ns, name;
  std::string target = "/";
};

// The Function a request addresses, from its target ("/function/ns/name/rest?q") or its Host
// header ("name.ns.fn.cluster.local[:port]"); nullopt when neither names one.
std::optional<Route> routeRequest(const std::string& target, const std::string& host);

// The IPs in one list of an Endpoints object's subsets ("addresses": the ready pods,
// "notReadyAddresses": the starting ones), sorted and without duplicates.
std::vector<std::string> endpointAddresses(const json& endpoints,
                                           const std::string& list = "addresses");

// The instance with the fewest requests in flight among those below `limit` (0 = no limit);
// ties go to the first at or after `start` (round robin between equals). -1 when none can take
// one more.
int pickLeastInFlight(const std::vector<int>& inFlight, int limit, size_t start);

// Sets a Deployment's replicas (the gateway: PATCH of its scale subresource; tests: a fake).
class Scaler {
 public:
  virtual ~Scaler() = default;
  virtual Status scale(const std::string& ns, const std::string& deployment, int replicas) = 0;
};
std::unique_ptr<Scaler> restScaler(client::RestClient& rest);

struct GatewayOptions {
  std::string listen = "0.0.0.0:8080";
  size_t maxBodyBytes = 6 * 1024 * 1024;
  int instancePort = kRuntimePort;  // where instances listen (tests: a fake's port)
  std::string dialHost;             // tests: dial this host instead of the pod IP
  std::chrono::milliseconds sampleInterval{1000};
  std::chrono::milliseconds syncTimeout{60'000};  // for the informers at start
  const client::Clock* clock = &client::RealClock::instance();
  AutoscalerWindows windows;
  bool triggers = true;  // serve the CloudEvents broker (trigger_broker.h)
};

class TriggerBroker;

class Gateway {
 public:
  Gateway(client::RestClient& rest, std::unique_ptr<Scaler> scaler, GatewayOptions options = {});
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Starts and syncs the informers, then serves and runs the autoscaler loop.
  Status start();
  void stop();
  int port() const;

  void serve(const http::Request& req, http::ResponseWriter& w);

 private:
  struct Instance {
    std::string ip;
    int inFlight = 0;
    std::chrono::steady_clock::time_point failedUntil;  // refused a connection: skip until
  };
  struct FunctionState {
    bool exists = false;  // in the Functions informer
    bool specOk = false;
    FunctionSpec spec;
    std::string importError;            // the Function's status says the handler does not import
    std::vector<Instance> instances;    // ready ones, and starting ones that answered /healthz
    std::vector<std::string> starting;  // notReadyAddresses: probed until they answer
    std::set<std::string> probedReady;  // of `starting`, those that answered
    int replicas = -1;                  // the Deployment's spec.replicas; -1 while it has none
    size_t rotate = 0;
  };

  void onFunction(const json& fn, bool deleted);
  void onEndpoints(const json& endpoints, bool deleted);
  void onDeployment(const json& deployment, bool deleted);
  // Reserves an instance for one request of `key` (waiting while there is none): its IP, or the
  // answer to give instead.
  Result<std::string> acquire(const std::string& key, std::chrono::steady_clock::time_point until);
  void release(const std::string& key, const std::string& ip, bool refused);
  Result<http::Response> forward(const std::string& ip, const http::Request& req,
                                 const std::string& target, std::chrono::milliseconds timeout);
  void autoscaleLoop();
  void autoscaleOnce();
  void probeLoop();
  bool healthy(const std::string& ip);
  // Rebuilds f.instances from the ready IPs and the probed starting ones (in-flight counts kept).
  void setInstances(FunctionState& f, const std::vector<std::string>& ips);

  client::RestClient& rest_;
  std::unique_ptr<Scaler> scaler_;
  GatewayOptions options_;
  Autoscaler autoscaler_;
  client::Informer functions_, endpoints_, deployments_;
  std::unique_ptr<http::Server> server_;
  std::unique_ptr<TriggerBroker> broker_;  // set in the constructor when options_.triggers

  std::mutex mu_;
  std::condition_variable changed_;  // instances or Functions changed, a request ended
  std::map<std::string, FunctionState> state_;

  std::mutex loopMu_;
  std::condition_variable loopWake_;
  bool poked_ = false;
  std::atomic<bool> stopping_{false};
  std::thread loop_;

  std::mutex probeMu_;
  std::condition_variable probeWake_;
  bool probePoked_ = false;
  std::thread prober_;

  std::mutex poolMu_;
  std::map<std::string, std::vector<std::unique_ptr<http::Client>>> idle_;  // by IP
};

}  // namespace minik8s::serverless
