// ControllerManager: runs the controllers over one set of shared informers, as
// kube-controller-manager does. Each controller is registered by kube-controller-manager's name
// in one table (controller_manager.cc: name, on by default or not, and how to build it from the
// shared informers and options); --controllers=*,-name,... chooses which run. `minik8s server`
// runs it in-process (reading the server's SharedInformers, which its scheduler reads too);
// `minik8s controller-manager --server URL` runs it alone (informers of its own). It only talks to
// the API server through the RestClient, so it is restart-safe: start() lists everything and
// converges. start() and stop() are called from one thread; the controllers run on their own
// threads; after stop() none of their informer handlers runs again.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "common/pki.h"
#include "common/status.h"

namespace minik8s::controllers {

// A duration flag as Kubernetes writes them ("15s", "5m0s", "1m30s"), or plain seconds ("40").
Result<std::chrono::milliseconds> parseDurationFlag(const std::string& flag,
                                                    const std::string& value);

// A controller the manager knows, by kube-controller-manager's name.
struct ControllerInfo {
  std::string name;  // "replicaset", "garbagecollector", "horizontalpodautoscaling", ...
  bool enabledByDefault = true;
};
// Every known controller, in the order they start.
std::vector<ControllerInfo> knownControllers();

// kube-controller-manager's --controllers list: "*" turns on every controller on by default,
// "name" turns one on, "-name" turns one off (later entries win). The names of the controllers
// to run, in start order; BadRequest naming an unknown controller.
Result<std::vector<std::string>> selectControllers(const std::vector<std::string>& flags);

class ControllerManager {
 public:
  struct Options {
    int workersPerController = 2;
    // --controllers, as selectControllers() reads it.
    std::vector<std::string> controllers = {"*"};
    std::string clusterCidr = "10.244.0.0/16";  // pod network; nodes get /24 blocks of it
    std::chrono::milliseconds syncTimeout = std::chrono::seconds(30);
    // HorizontalPodAutoscaler: --horizontal-pod-autoscaler-sync-period and
    // --horizontal-pod-autoscaler-downscale-stabilization.
    std::chrono::milliseconds hpaSyncPeriod = std::chrono::seconds(15);
    std::chrono::seconds hpaDownscaleStabilization = std::chrono::seconds(300);
    // Node lifecycle: --node-monitor-grace-period and --pod-eviction-timeout.
    std::chrono::seconds nodeMonitorGracePeriod = std::chrono::seconds(40);
    std::chrono::seconds podEvictionTimeout = std::chrono::seconds(300);
    // Pod GC: --terminated-pod-gc-threshold (<= 0 keeps every terminated pod), and how long a
    // pod's node must be missing before its pods are force-deleted (40 s, as Kubernetes).
    int terminatedPodGcThreshold = 12500;
    std::chrono::milliseconds podGcQuarantine = std::chrono::seconds(40);
    // ResourceQuota: --resource-quota-sync-period, between full recalculations of each quota.
    std::chrono::milliseconds resourceQuotaSyncPeriod = std::chrono::minutes(5);
    // Service accounts: a "default" ServiceAccount in every namespace, and (when the CA is
    // known) the kube-root-ca.crt ConfigMap pods mount with their token.
    std::string rootCaPem;
    // Certificates: node CSRs approved by the kubelet rules; approved CSRs signed with the
    // cluster CA (--cluster-signing-cert-file/-key-file) when it is given.
    pki::KeyAndCert signingCa;
    // --cluster-signing-duration: the lifetime of the certificates it signs (at most; a CSR's
    // spec.expirationSeconds may ask for less). Short ones let tests watch rotation.
    std::chrono::seconds signingDuration = std::chrono::hours(24 * 365);
    // CSI drivers whose volumes the csi-provisioner creates, deletes and expands: driver name ->
    // endpoint of its Controller service. Without any, csi-provisioner does not run.
    std::map<std::string, std::string> csiDrivers;
    // The server's --mesh: every application namespace is meshed (the mesh controller lets the
    // sidecars of every namespace read the registry).
    bool meshAllNamespaces = false;
    // How the controllers reach the API server (TLS and credentials of `rest`): the
    // meshrollout controller's pods/exec uses it (`minik8s server` and `controller-manager`
    // set it). Unset: plain HTTP to rest's server.
    client::ClientConfig apiConfig;
  };

  // With `informers` (which must outlive it) the controllers read those shared caches; without,
  // the manager lists and watches through `rest` itself. Controllers write through `rest`.
  ControllerManager(client::RestClient& rest, Options options,
                    client::SharedInformers* informers = nullptr);
  ~ControllerManager();
  ControllerManager(const ControllerManager&) = delete;
  ControllerManager& operator=(const ControllerManager&) = delete;

  // Starts the informers, waits for their first list, then starts the controllers. Fails
  // (Unavailable) if the caches do not fill within syncTimeout, BadRequest for an unknown
  // controller name in options.controllers.
  Status start();
  void stop();

  // The controllers start() runs (or ran), in start order.
  std::vector<std::string> running() const;

  // What a controller's entry in the table builds from: the shared informers and recorders.
  class Context;
  // A running controller: its own start() and stop().
  class Runnable {
   public:
    virtual ~Runnable() = default;
    virtual void start() = 0;
    virtual void stop() = 0;
  };

 private:
  client::RestClient& rest_;
  Options options_;
  client::SharedInformers* sharedInformers_;
  std::unique_ptr<client::SharedInformers> ownInformers_;  // alone, from start() on
  std::unique_ptr<Context> context_;
  std::vector<std::pair<std::string, std::unique_ptr<Runnable>>> controllers_;
  bool started_ = false;
};

// The controller flags `minik8s server` and `minik8s controller-manager` share, as typed
// (durations, the one count, the controller list).
struct ControllerDurationFlags {
  std::string hpaSyncPeriod = "15s";                 // --horizontal-pod-autoscaler-sync-period
  std::string hpaDownscaleStabilization = "5m0s";    // ...-downscale-stabilization
  std::string nodeMonitorGracePeriod = "40s";        // --node-monitor-grace-period
  std::string podEvictionTimeout = "5m0s";           // --pod-eviction-timeout
  int terminatedPodGcThreshold = 12500;              // --terminated-pod-gc-threshold
  std::string resourceQuotaSyncPeriod = "5m0s";      // --resource-quota-sync-period
  std::string clusterSigningDuration = "8760h0m0s";  // --cluster-signing-duration
  std::vector<std::string> controllers = {"*"};      // --controllers
  // BadRequest naming the flag when a value does not parse.
  Status applyTo(ControllerManager::Options& options) const;
};

}  // namespace minik8s::controllers
