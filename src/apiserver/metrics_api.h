// The resource metrics API (metrics.k8s.io/v1beta1) that `kubectl top` and the HPA read:
// PodMetrics and NodeMetrics computed from each node agent's /stats/summary.
//
//   /apis/metrics.k8s.io                                   APIGroup
//   /apis/metrics.k8s.io/v1beta1                           APIResourceList (pods, nodes)
//   /apis/metrics.k8s.io/v1beta1/nodes[/{name}]            NodeMetrics(List)
//   /apis/metrics.k8s.io/v1beta1/[namespaces/{ns}/]pods[/{name}]   PodMetrics(List), labelSelector
//
// cpu is a rate (nanocores) derived from the cumulative usageCoreNanoSeconds of two scrapes at
// least a second apart (the agent's own usageNanoCores when no older scrape is known yet);
// memory is the working set. Thread-safe: the scrape history is behind a mutex.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

#include "apiserver/node_proxy.h"
#include "apiserver/registry.h"
#include "common/http.h"

namespace minik8s::apiserver {

// One cumulative cpu reading.
struct CpuReading {
  std::chrono::nanoseconds time{0};  // since the epoch
  uint64_t coreNanoSeconds = 0;
};

// Nanocores between two readings; nullopt when they are not usable (too close, counter reset).
std::optional<uint64_t> cpuRate(const CpuReading& older, const CpuReading& newer);
// "1500000n" and "10240Ki" (plain bytes when not a multiple of 1024).
std::string formatNanoCores(uint64_t nanoCores);
std::string formatBytes(uint64_t bytes);

// An agent's /stats/summary, over TLS when `options` say so.
Result<json> fetchSummary(const NodeEndpoint& ep, const NodeProxyOptions& options);

class MetricsApi {
 public:
  // How to read a node agent's /stats/summary; the default uses HTTP.
  using SummaryFetcher = std::function<Result<json>(const NodeEndpoint&)>;
  explicit MetricsApi(Registry& registry, SummaryFetcher fetcher = {});

  // True when `req` is under /apis/metrics.k8s.io (and was answered).
  bool handle(const http::Request& req, http::ResponseWriter& w);

  // Discovery pieces for the lead's discovery documents.
  static json legacyGroup();      // an element of /apis "groups"
  static json resourceList();     // GET /apis/metrics.k8s.io/v1beta1
  static json aggregatedGroup();  // an element of the aggregated /apis "items"

 private:
  struct Usage {
    std::optional<uint64_t> nanoCores;
    std::optional<uint64_t> workingSet;
    std::string timestamp;
    std::string window = "10s";
  };
  Usage usageOf(const std::string& key, const json& stats);
  Result<json> summaryOf(const std::string& nodeName);
  Result<json> nodeMetrics(const json& node);
  Result<json> listPodMetrics(const http::Request& req, const std::string& ns,
                              const std::string& name);

  Registry& registry_;
  SummaryFetcher fetcher_;
  std::mutex mu_;
  std::map<std::string, std::deque<CpuReading>> history_;  // by node / ns/pod/container
};

}  // namespace minik8s::apiserver
