#include "mesh/rollout.h"

#include <fmt/core.h>

#include <algorithm>
#include <thread>

namespace minik8s::mesh {

Status validateRolloutOptions(const RolloutOptions& o) {
  if (o.stepPercent < 1 || o.stepPercent > 100) {
    return Status::BadRequest(
        fmt::format("--step: {} is not a percentage from 1 to 100", o.stepPercent));
  }
  if (o.interval.count() <= 0) return Status::BadRequest("--interval must be positive");
  if (!(o.maxErrorRate >= 0 && o.maxErrorRate < 1)) {
    return Status::BadRequest(fmt::format(
        "--max-error-rate: {} is not a fraction from 0 to 1 (0.05 is 5%)", o.maxErrorRate));
  }
  if (o.minRequests < 1) return Status::BadRequest("--min-requests must be at least 1");
  return Status::Ok();
}

std::vector<int> rolloutWeights(int stepPercent) {
  std::vector<int> out;
  const int step = std::clamp(stepPercent, 1, 100);
  for (int w = step; w < 100; w += step) out.push_back(w);
  out.push_back(100);
  return out;
}

ReplicaSplit replicasAt(int total, int newWeight) {
  total = std::max(total, 1);
  newWeight = std::clamp(newWeight, 0, 100);
  ReplicaSplit s;
  s.newReplicas = (total * newWeight + 99) / 100;
  s.oldReplicas = std::max(1, (total * (100 - newWeight) + 99) / 100);
  return s;
}

bool shouldRollBack(const RolloutOptions& o, const RequestCounts& c, bool stepOver,
                    std::string* reason) {
  if (c.requests <= 0) return false;
  if (!stepOver && c.requests < o.minRequests) return false;
  const double rate = static_cast<double>(c.errors) / static_cast<double>(c.requests);
  if (rate <= o.maxErrorRate) return false;
  if (reason) {
    *reason = fmt::format("error rate {:.1f}% ({} of {} requests answered 5xx) is above {:.1f}%",
                          rate * 100, c.errors, c.requests, o.maxErrorRate * 100);
  }
  return true;
}

std::map<std::string, RequestCounts> countersDelta(
    const std::map<std::string, std::map<std::string, RequestCounts>>& before,
    const std::map<std::string, std::map<std::string, RequestCounts>>& after) {
  std::map<std::string, RequestCounts> out;
  for (const auto& [pod, versions] : after) {
    auto prev = before.find(pod);
    // A restarted sidecar's counters go back; all of them count then, as Prometheus' rate().
    bool reset = false;
    if (prev != before.end()) {
      for (const auto& [v, c] : prev->second) {
        auto now = versions.find(v);
        if (now == versions.end() || now->second.requests < c.requests ||
            now->second.errors < c.errors) {
          reset = true;
        }
      }
    }
    for (const auto& [v, c] : versions) {
      RequestCounts d = c;
      if (prev != before.end() && !reset) {
        if (auto was = prev->second.find(v); was != prev->second.end()) {
          d.requests -= was->second.requests;
          d.errors -= was->second.errors;
        }
      }
      out[v] += d;
    }
  }
  return out;
}

std::chrono::steady_clock::time_point RealRolloutClock::now() const {
  return std::chrono::steady_clock::now();
}

void RealRolloutClock::sleepFor(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

const char* rolloutPhaseName(RolloutPhase phase) {
  switch (phase) {
    case RolloutPhase::kSucceeded:
      return "Succeeded";
    case RolloutPhase::kRolledBack:
      return "RolledBack";
    case RolloutPhase::kFailed:
      break;
  }
  return "Failed";
}

Rollout::Rollout(RolloutOptions options, RolloutTarget& target, RolloutMetrics& metrics,
                 RolloutClock& clock, Reporter report)
    : options_(std::move(options)),
      target_(target),
      metrics_(metrics),
      clock_(clock),
      report_(std::move(report)) {
  if (!report_) report_ = [](const std::string&) {};
}

bool Rollout::waitReady(int want, std::string* why) {
  const auto deadline = clock_.now() + options_.readyTimeout;
  int ready = 0;
  for (;;) {
    auto got = target_.readyNewEndpoints();
    if (got.ok()) {
      ready = *got;
      if (ready >= want) return true;
    }
    if (cancelled_) {
      *why = "interrupted";
      return false;
    }
    if (clock_.now() >= deadline) {
      *why = fmt::format("the new version has {} of {} pods ready after {} s", ready, want,
                         options_.readyTimeout.count() / 1000);
      return false;
    }
    clock_.sleepFor(std::chrono::milliseconds(250));
  }
}

RolloutResult Rollout::rollBack(const std::string& reason, int weight, int total) {
  report_("rolling back: " + reason);
  RolloutResult r;
  r.reason = reason;
  r.lastWeight = weight;
  r.total = total_;
  Status s = target_.rollBack(total);
  if (!s.ok()) {
    r.phase = RolloutPhase::kFailed;
    r.reason += "; the rollback failed too: " + s.message();
    return r;
  }
  r.phase = RolloutPhase::kRolledBack;
  report_(fmt::format("rolled back: every request to the old version, {} replicas", total));
  return r;
}

RolloutResult Rollout::run() {
  RolloutResult failed;
  if (Status s = validateRolloutOptions(options_); !s.ok()) {
    failed.reason = s.message();
    return failed;
  }
  auto old = target_.oldReplicas();
  if (!old.ok()) {
    failed.reason = old.status().message();
    return failed;
  }
  const int total = std::max(*old, 1);
  if (Status s = target_.prepare(); !s.ok()) return rollBack(s.message(), 0, total);
  report_(fmt::format("rules in place, every request to the old version ({} replicas)", total));
  int current = 0;
  int oldNow = total;
  for (int weight : rolloutWeights(options_.stepPercent)) {
    ReplicaSplit split = replicasAt(total, weight);
    if (Status s = target_.scaleNew(split.newReplicas); !s.ok()) {
      return rollBack(s.message(), current, total);
    }
    std::string why;
    if (!waitReady(split.newReplicas, &why)) return rollBack(why, current, total);
    clock_.sleepFor(options_.settle);
    if (cancelled_) return rollBack("interrupted", current, total);
    (void)metrics_.newVersionDelta();  // this step's counts start here
    if (Status s = target_.setWeights(100 - weight, weight); !s.ok()) {
      return rollBack(s.message(), current, total);
    }
    current = weight;
    if (split.oldReplicas < oldNow) {
      if (Status s = target_.scaleOld(split.oldReplicas); !s.ok()) {
        return rollBack(s.message(), current, total);
      }
      oldNow = split.oldReplicas;
    }
    report_(fmt::format("weight {}% new / {}% old; replicas {} new / {} old", weight, 100 - weight,
                        split.newReplicas, oldNow));
    // Watch the step; an error rate over the threshold ends it early.
    RequestCounts step;
    const auto end = clock_.now() + options_.interval;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock_.now());
      const bool over = left.count() <= 0;
      if (!over) clock_.sleepFor(std::min(left, options_.checkEvery));
      auto delta = metrics_.newVersionDelta();
      if (delta.ok()) {
        step += *delta;
        total_ += *delta;
      }
      if (shouldRollBack(options_, step, over, &why)) return rollBack(why, current, total);
      if (cancelled_) return rollBack("interrupted", current, total);
      if (over) break;
    }
    report_(fmt::format("step at {}% passed: {} requests to the new version, {} answered 5xx",
                        weight, step.requests, step.errors));
  }
  if (Status s = target_.promote(); !s.ok()) return rollBack(s.message(), current, total);
  RolloutResult done;
  done.phase = RolloutPhase::kSucceeded;
  done.lastWeight = 100;
  done.total = total_;
  done.reason = fmt::format("every request to the new version ({} requests analysed, {} 5xx)",
                            total_.requests, total_.errors);
  report_("promoted: " + done.reason);
  return done;
}

}  // namespace minik8s::mesh
