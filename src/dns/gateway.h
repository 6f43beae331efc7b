// DnsGateway: the node's part of Dns host/path forwarding (minik8s.io/v1 kind Dns). Every agent
// runs one, in its node's network namespace:
//   - nginx (gateway_nginx.h) on <node IP>:80, configured from all Dns objects and the Services
//     they name (gateway_config.h), reloaded (`nginx -s reload`, no dropped connections) within
//     minSyncInterval of a change;
//   - the node's EndpointSlice in the kube-system/minik8s-gateway Service (ClusterIP 10.96.0.80,
//     port 80), so that address reaches a gateway from every pod and node;
//   - the Dns hosts -> 10.96.0.80, handed to `publishHosts` (ClusterDns::setExtraHosts), so the
//     names resolve through cluster DNS;
//   - each Dns object's status (condition Ready, with the reason a path cannot be served) and a
//     Warning Event when it stops being servable. All agents compute the same status; updates
//     carry the resourceVersion, so one wins and only that one records the Event.
//
// Thread-safety: start()/stop() from one owner thread; the rest runs on internal threads.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "client/bounded_frequency_runner.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "dns/gateway_config.h"
#include "dns/gateway_nginx.h"
#include "dns/hosts_file.h"

namespace minik8s::dns {

inline constexpr const char* kGatewayServiceNamespace = "kube-system";
inline constexpr const char* kGatewayServiceName = "minik8s-gateway";
inline constexpr const char* kGatewayServiceIP = "10.96.0.80";

// The gateway Service (ClusterIP 10.96.0.80, port http/TCP/80, no selector).
json gatewayServiceObject();
// The EndpointSlice announcing `nodeIP`:`port` as the gateway of `nodeName`.
json gatewayEndpointSliceObject(const std::string& nodeName, const std::string& nodeIP,
                                int port = 80);

struct GatewayOptions {
  std::string nodeName;
  std::string listenAddress;  // the node's IP
  int port = 80;
  std::string dataDir;  // nginx.conf, pid, logs, temp files
  std::string nginxPath = "nginx";
  std::string user = "root";  // nginx workers' user; "" leaves nginx's default
  std::string gatewayIP = kGatewayServiceIP;
  bool publishEndpoint = true;  // the node's slice of the gateway Service
  std::function<void(std::vector<HostEntry>)> publishHosts;  // may be empty
  std::chrono::milliseconds minSyncInterval{200};
  std::chrono::milliseconds maxSyncInterval{30000};
  std::chrono::milliseconds retryInterval{1000};
  std::chrono::milliseconds informerSyncTimeout{10000};
  // The process' shared informers (the agent's), for Services; its own when null.
  client::SharedInformers* informers = nullptr;
};

class DnsGateway {
 public:
  DnsGateway(client::RestClient& client, GatewayOptions options);
  ~DnsGateway();
  DnsGateway(const DnsGateway&) = delete;
  DnsGateway& operator=(const DnsGateway&) = delete;

  // Starts the informers, waits for their first list, starts nginx on the rendered
  // configuration, publishes the node's gateway endpoint, then keeps everything in sync.
  Status start();
  void stop();

  std::string configPath() const { return options_.dataDir + "/nginx.conf"; }
  int64_t reloads() const;  // successful `nginx -s reload`s so far

 private:
  bool sync();
  bool syncOnce();
  // Brings each Dns object's status to `plan`'s; false when an update must be retried.
  bool syncStatuses(const GatewayPlan& plan);
  void recordEvent(const json& dns, const std::string& type, const std::string& reason,
                   const std::string& message);

  client::RestClient& client_;
  GatewayOptions options_;
  client::ApiEventRecorder events_;
  client::Informer dnses_;
  std::unique_ptr<client::Informer> services_;
  GatewayNginx nginx_;
  client::CoalescedSync sync_;  // after the informers it wires
  bool started_ = false;

  mutable std::mutex mu_;
  int64_t reloads_ = 0;

  // Sync thread only.
  std::string written_;  // the configuration nginx runs
  std::vector<std::string> publishedHosts_;
  bool hostsPublished_ = false;
  bool endpointPublished_ = false;
};

}  // namespace minik8s::dns
