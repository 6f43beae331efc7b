// LeaderElector: leader election on a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection package does, so that of several schedulers or controller-managers only one
// acts.
//
// A candidate tries every retryPeriod (2 s) to take the Lease: it may when the Lease does not
// exist, has no holder, or its holder has not renewed it for leaseDurationSeconds (15 s) as
// observed on this candidate's own clock (clocks of different machines are never compared). It
// then writes holderIdentity, acquireTime, renewTime and leaseTransitions+1. The leader renews
// every retryPeriod; when it could not renew for renewDeadline (10 s) it stops leading and becomes
// a candidate again. Updates use the Lease's resourceVersion, so two candidates never both win.
// stop() releases a held Lease (empty holder) so a successor takes over at once.
//
// Callbacks (onStartedLeading, onStoppedLeading, onNewLeader) run in order on a thread of their
// own, so a slow start never delays renewals. All methods are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "client/rest_client.h"
#include "client/work_queue.h"

namespace minik8s::client {

struct LeaderElectionConfig {
  std::string lockNamespace = "kube-system";
  std::string lockName;  // "kube-scheduler", "kube-controller-manager"
  std::string identity;  // unique per candidate; see defaultLeaderIdentity()
  std::chrono::milliseconds leaseDuration{15000};
  std::chrono::milliseconds renewDeadline{10000};
  std::chrono::milliseconds retryPeriod{2000};
  bool releaseOnStop = true;
  std::function<void()> onStartedLeading;
  std::function<void()> onStoppedLeading;
  std::function<void(const std::string& identity)> onNewLeader;
  // Where observation times come from (a fake in tests); renewTime/acquireTime use wall time.
  const Clock* clock = &RealClock::instance();
};

// "hostname_<uuid>", as Kubernetes components name themselves; "hostname_<suffix>" when a
// suffix is given (an identity that survives restarts).
std::string defaultLeaderIdentity(const std::string& suffix = "");

// Starts an elector for Lease kube-system/`lockName` that calls `start` when this process
// becomes the leader and `stop` when it stops leading (for the commands that gate a component).
std::unique_ptr<class LeaderElector> startLeaderElection(RestClient& client,
                                                         const std::string& lockName,
                                                         const std::string& identity,
                                                         std::function<void()> start,
                                                         std::function<void()> stop);

class LeaderElector {
 public:
  LeaderElector(RestClient& client, LeaderElectionConfig config);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  void start();
  // Stops campaigning; a leader calls onStoppedLeading and (releaseOnStop) releases the Lease.
  // Waits for the callbacks to finish.
  void stop();

  bool isLeader() const { return leading_; }
  // The holder last observed ("" when none).
  std::string leader() const;

  // One attempt to acquire or renew (what the loop does every retryPeriod); true when this
  // candidate holds the Lease afterwards. Public for tests that drive time by hand.
  bool tryAcquireOrRenew();
  // Gives the Lease up if this candidate holds it.
  void release();

 private:
  void run();
  bool waitFor(std::chrono::milliseconds d);  // false when stopping
  void setLeading(bool leading);
  void post(std::function<void()> callback);
  void callbackLoop();
  void observe(const std::string& holder);

  RestClient& client_;
  LeaderElectionConfig config_;
  std::atomic<bool> leading_{false};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  json observedSpec_;  // the Lease spec as last seen
  std::chrono::steady_clock::time_point observedTime_{};
  std::string observedHolder_;
  std::thread thread_;

  std::mutex callbacksMu_;
  std::condition_variable callbacksCv_;
  std::deque<std::function<void()>> callbacks_;
  bool callbacksDone_ = false;
  std::thread callbackThread_;
};

}  // namespace minik8s::client
