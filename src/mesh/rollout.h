// A progressive rollout of a meshed service to a new image, the way Flagger automates Istio
// canaries: the new version starts beside the old one, traffic moves to it by weight step by step
// (a VirtualService over DestinationRule subsets by the pods' `version` label) while the old
// version is scaled down in proportion, and the rollout undoes itself when the new version's
// error rate (5xx answers over the requests the sidecars sent it, during one step) crosses a
// threshold.
//
// The step arithmetic and the decision are pure functions. `Rollout::advance()` takes ONE step
// from a `RolloutState` (everything a rollout needs to go on, the counters' baseline included)
// against two interfaces (the cluster: RolloutTarget; the sidecars' counters: RolloutMetrics)
// and a clock, and says when to look again; the state round-trips through JSON, so the
// MeshRollout controller (controllers/mesh/mesh_rollout_controller.h) keeps it in the object's
// status and a restarted control plane resumes where it was. `Rollout::run()` loops advance()
// to the end (tests, with fakes and a fake clock). The API implementations are in
// mesh/rollout_cluster.h. Not thread-safe except cancel(): one thread drives one rollout.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::mesh {

struct RolloutOptions {
  int stepPercent = 20;                        // traffic moved per step, 1..100
  std::chrono::milliseconds interval{10'000};  // how long each step is watched
  double maxErrorRate = 0.05;                  // 5xx / requests of the new version in a step
  int64_t minRequests = 10;  // fewer requests than this in a step: not enough to judge an error
                             // rate early (the step's end still judges any error rate)
  std::chrono::milliseconds checkEvery{1'000};      // how often the counts are read within a step
  std::chrono::milliseconds readyTimeout{120'000};  // for the new pods of one step to be ready
  std::chrono::milliseconds settle{1'000};  // after the new pods are endpoints, before weight
                                            // moves (the sidecars' registries catch up)
  std::string newVersion = "v2";  // the new version's `version` label, whose counts are judged
};

// Checks the ranges; the message names the flag (--step, --interval, --max-error-rate).
Status validateRolloutOptions(const RolloutOptions& options);

// The weights the new version gets, step by step: 20 -> {20, 40, 60, 80, 100}; 30 -> {30, 60,
// 90, 100}.
std::vector<int> rolloutWeights(int stepPercent);

// Replicas of each version while the new one gets `newWeight` % of `total` (the old version's
// replicas when the rollout started): the new one gets its share rounded up, the old one keeps
// its share rounded up and at least one pod until the rollout is promoted.
struct ReplicaSplit {
  int newReplicas = 0;
  int oldReplicas = 0;
};
ReplicaSplit replicasAt(int total, int newWeight);

// Requests the sidecars sent to one version, and how many of them were answered 5xx.
struct RequestCounts {
  int64_t requests = 0;
  int64_t errors = 0;
  RequestCounts& operator+=(const RequestCounts& o) {
    requests += o.requests;
    errors += o.errors;
    return *this;
  }
};

// Whether the counts of one step condemn the new version: its error rate is above the
// threshold, and either there were at least minRequests requests or the step is over.
// `reason` says why, in words.
bool shouldRollBack(const RolloutOptions& options, const RequestCounts& counts, bool stepOver,
                    std::string* reason);

// Counters read from the sidecars, per scraped pod and version ("pod" -> "v2" -> counts, as
// totals since each sidecar started): what changed between two readings, a sidecar whose
// counters went back (it restarted) counting from zero, a pod that went away counting nothing.
using CounterSnapshot = std::map<std::string, std::map<std::string, RequestCounts>>;
std::map<std::string, RequestCounts> countersDelta(const CounterSnapshot& before,
                                                   const CounterSnapshot& after);

// The cluster side of a rollout (mesh/rollout_cluster.h talks to the API server).
class RolloutTarget {
 public:
  virtual ~RolloutTarget() = default;
  // The old version's replicas now (the total the steps divide).
  virtual Result<int> oldReplicas() = 0;
  // The rules first (subsets of both versions, every request to the old one), then the new
  // version's Deployment with no pod.
  virtual Status prepare() = 0;
  virtual Status scaleNew(int replicas) = 0;
  virtual Status scaleOld(int replicas) = 0;
  // The new version's pods that are ready endpoints of the service.
  virtual Result<int> readyNewEndpoints() = 0;
  virtual Status setWeights(int oldWeight, int newWeight) = 0;
  // Done: every request to the new version, the old version's Deployment and subset removed.
  virtual Status promote() = 0;
  // Undone: every request to the old version, which is scaled back to `oldReplicas`, and the
  // new version's Deployment and subset removed.
  virtual Status rollBack(int oldReplicas) = 0;
};

// The sidecars' counters now: pod -> version -> totals since that sidecar started, and the
// pods that are there but could not be read this time (their last counts stand).
struct CounterReading {
  CounterSnapshot counts;
  std::vector<std::string> unreadable;
};
class RolloutMetrics {
 public:
  virtual ~RolloutMetrics() = default;
  virtual Result<CounterReading> read() = 0;
};

// Wall-clock time: a persisted rollout's stage started at a time another process reads.
class RolloutClock {
 public:
  virtual ~RolloutClock() = default;
  virtual std::chrono::system_clock::time_point now() const = 0;
  virtual void sleepFor(std::chrono::milliseconds d) = 0;
};

class RealRolloutClock : public RolloutClock {
 public:
  std::chrono::system_clock::time_point now() const override;
  void sleepFor(std::chrono::milliseconds d) override;
};

enum class RolloutPhase { kProgressing, kPromoted, kRolledBack, kFailed };
// "Progressing", "Promoted", "RolledBack", "Failed" (the MeshRollout's status.phase).
const char* rolloutPhaseName(RolloutPhase phase);

// Where a progressing rollout is: Start (rules and the new Deployment not there yet), Scaling
// (the new version scaled to this step's share, waiting for its pods to be ready endpoints),
// Settling (ready; the sidecars' registries catch up), Analysing (this step's weight set, its
// counts watched for `interval`), Done.
enum class RolloutStage { kStart, kScaling, kSettling, kAnalysing, kDone };
const char* rolloutStageName(RolloutStage stage);

// Everything a rollout needs to go on from where it was.
struct RolloutState {
  RolloutPhase phase = RolloutPhase::kProgressing;
  RolloutStage stage = RolloutStage::kStart;
  int step = 0;           // index into rolloutWeights()
  int weight = 0;         // the new version's weight now
  int totalReplicas = 0;  // the old version's replicas when the rollout started
  int oldReplicas = 0;    // the old version's replicas now
  std::chrono::system_clock::time_point stageSince{};  // when the stage began
  RequestCounts stepCounts;                            // the new version's, in this step
  RequestCounts totalCounts;                           // the new version's, in every step
  CounterSnapshot baseline;  // the sidecars' counters at the last reading (deltas start here)
  std::string reason;        // why it ended, or what the last step did
};

// The state as the MeshRollout's status fields (phase, stage, step, weight, ..., counter
// baseline as {"pod": {"v2": [requests, errors]}}), and back: BadRequest naming the field.
json rolloutStateToJson(const RolloutState& state);
Result<RolloutState> rolloutStateFromJson(const json& status);

struct RolloutResult {
  RolloutPhase phase = RolloutPhase::kFailed;
  std::string reason;
  int lastWeight = 0;   // the new version's weight when it ended
  RequestCounts total;  // what the new version was sent during the analysis
};

class Rollout {
 public:
  using Reporter = std::function<void(const std::string& line)>;
  Rollout(RolloutOptions options, RolloutTarget& target, RolloutMetrics& metrics,
          RolloutClock& clock, Reporter report = nullptr);

  // Takes the next step of a progressing `state` (nothing when it has ended) and returns how
  // long to wait before the next one. An API error on the way rolls back (Failed when even that
  // fails). Each step's cluster change is idempotent, so a step repeated after a crash between
  // it and the state's write does no harm.
  std::chrono::milliseconds advance(RolloutState& state);
  // Ends a progressing `state` by rolling back, with `reason` (the rollout's object deleted).
  void abort(RolloutState& state, const std::string& reason);
  // Runs every step to the end from a new state. A cancel() rolls back.
  RolloutResult run();
  // Makes a running run() roll back at its next step: for Ctrl-C. Any thread.
  void cancel() { cancelled_ = true; }

 private:
  void rollBack(RolloutState& s, const std::string& reason);
  std::chrono::milliseconds enterScaling(RolloutState& s, int step);
  // Reads the counters; the baseline moves to them, and with `count` what the new version got
  // since the previous baseline goes to this step's and the total counts.
  void readCounts(RolloutState& s, bool count);

  RolloutOptions options_;
  RolloutTarget& target_;
  RolloutMetrics& metrics_;
  RolloutClock& clock_;
  Reporter report_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace minik8s::mesh
