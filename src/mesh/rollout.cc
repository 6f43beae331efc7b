#include "mesh/rollout.h"

#include <fmt/core.h>

#include <algorithm>
#include <thread>

#include "common/time_util.h"

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

std::map<std::string, RequestCounts> countersDelta(const CounterSnapshot& before,
                                                   const CounterSnapshot& after) {
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

std::chrono::system_clock::time_point RealRolloutClock::now() const {
  return std::chrono::system_clock::now();
}

void RealRolloutClock::sleepFor(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

const char* rolloutPhaseName(RolloutPhase phase) {
  switch (phase) {
    case RolloutPhase::kProgressing:
      return "Progressing";
    case RolloutPhase::kPromoted:
      return "Promoted";
    case RolloutPhase::kRolledBack:
      return "RolledBack";
    case RolloutPhase::kFailed:
      break;
  }
  return "Failed";
}

const char* rolloutStageName(RolloutStage stage) {
  switch (stage) {
    case RolloutStage::kStart:
      return "Start";
    case RolloutStage::kScaling:
      return "Scaling";
    case RolloutStage::kSettling:
      return "Settling";
    case RolloutStage::kAnalysing:
      return "Analysing";
    case RolloutStage::kDone:
      break;
  }
  return "Done";
}

namespace {

json countsJson(const RequestCounts& c) { return json::array({c.requests, c.errors}); }

bool countsFrom(const json& j, RequestCounts* out) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_number_integer() || !j[1].is_number_integer()) {
    return false;
  }
  out->requests = j[0].get<int64_t>();
  out->errors = j[1].get<int64_t>();
  return out->requests >= 0 && out->errors >= 0 && out->errors <= out->requests;
}

}  // namespace

json rolloutStateToJson(const RolloutState& s) {
  json baseline = json::object();
  for (const auto& [pod, versions] : s.baseline) {
    for (const auto& [v, c] : versions) baseline[pod][v] = countsJson(c);
  }
  json out = {{"phase", rolloutPhaseName(s.phase)},
              {"stage", rolloutStageName(s.stage)},
              {"step", s.step},
              {"weight", s.weight},
              {"totalReplicas", s.totalReplicas},
              {"oldReplicas", s.oldReplicas},
              {"stepCounts", countsJson(s.stepCounts)},
              {"totalCounts", countsJson(s.totalCounts)},
              {"counterBaseline", baseline},
              {"reason", s.reason}};
  if (s.stageSince != std::chrono::system_clock::time_point{}) {
    out["stageStartedAt"] = formatRfc3339Micro(s.stageSince);
  }
  return out;
}

Result<RolloutState> rolloutStateFromJson(const json& status) {
  RolloutState s;
  if (!status.is_object()) return s;
  auto bad = [](const std::string& field, const std::string& why) {
    return Status::BadRequest("status." + field + ": " + why);
  };
  const std::string phase = status.value("phase", "");
  if (phase.empty() || phase == "Progressing") {
    s.phase = RolloutPhase::kProgressing;
  } else if (phase == "Promoted") {
    s.phase = RolloutPhase::kPromoted;
  } else if (phase == "RolledBack") {
    s.phase = RolloutPhase::kRolledBack;
  } else if (phase == "Failed") {
    s.phase = RolloutPhase::kFailed;
  } else {
    return bad("phase", "unknown phase \"" + phase + "\"");
  }
  const std::string stage = status.value("stage", "Start");
  bool known = false;
  for (auto st : {RolloutStage::kStart, RolloutStage::kScaling, RolloutStage::kSettling,
                  RolloutStage::kAnalysing, RolloutStage::kDone}) {
    if (stage == rolloutStageName(st)) {
      s.stage = st;
      known = true;
    }
  }
  if (!known) return bad("stage", "unknown stage \"" + stage + "\"");
  for (auto [field, out] :
       {std::pair{"step", &s.step}, std::pair{"weight", &s.weight},
        std::pair{"totalReplicas", &s.totalReplicas}, std::pair{"oldReplicas", &s.oldReplicas}}) {
    if (!status.contains(field)) continue;
    if (!status[field].is_number_integer() || status[field].get<int64_t>() < 0) {
      return bad(field, "not a count");
    }
    *out = status[field].get<int>();
  }
  if (status.contains("stageStartedAt")) {
    auto t = parseRfc3339(status.value("stageStartedAt", ""));
    if (!t) return bad("stageStartedAt", "not an RFC 3339 time");
    s.stageSince = *t;
  }
  for (auto [field, out] :
       {std::pair{"stepCounts", &s.stepCounts}, std::pair{"totalCounts", &s.totalCounts}}) {
    if (status.contains(field) && !countsFrom(status[field], out)) {
      return bad(field, "want [requests, errors]");
    }
  }
  const json baseline = status.value("counterBaseline", json::object());
  if (!baseline.is_object()) return bad("counterBaseline", "want an object");
  for (const auto& [pod, versions] : baseline.items()) {
    if (!versions.is_object()) return bad("counterBaseline." + pod, "want an object");
    for (const auto& [v, c] : versions.items()) {
      if (!countsFrom(c, &s.baseline[pod][v])) {
        return bad("counterBaseline." + pod + "." + v, "want [requests, errors]");
      }
    }
  }
  s.reason = status.value("reason", "");
  return s;
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

void Rollout::rollBack(RolloutState& s, const std::string& reason) {
  report_("rolling back: " + reason);
  s.reason = reason;
  s.stage = RolloutStage::kDone;
  if (s.totalReplicas <= 0) {
    // Stopped before its first step was recorded: the old version still has all its replicas.
    auto old = target_.oldReplicas();
    s.totalReplicas = old.ok() ? std::max(*old, 1) : 1;
  }
  Status st = target_.rollBack(s.totalReplicas);
  if (!st.ok()) {
    s.phase = RolloutPhase::kFailed;
    s.reason += "; the rollback failed too: " + st.message();
    return;
  }
  s.phase = RolloutPhase::kRolledBack;
  s.oldReplicas = s.totalReplicas;
  report_(
      fmt::format("rolled back: every request to the old version, {} replicas", s.totalReplicas));
}

void Rollout::abort(RolloutState& s, const std::string& reason) {
  if (s.phase == RolloutPhase::kProgressing) rollBack(s, reason);
}

void Rollout::readCounts(RolloutState& s, bool count) {
  auto reading = metrics_.read();
  if (!reading.ok()) return;  // the next reading counts what this one missed
  CounterSnapshot now = std::move(reading->counts);
  // A pod that could not be read keeps its last counts: it counts nothing new yet.
  for (const auto& pod : reading->unreadable) {
    if (auto was = s.baseline.find(pod); was != s.baseline.end()) now[pod] = was->second;
  }
  auto delta = countersDelta(s.baseline, now);
  s.baseline = std::move(now);
  if (!count) return;
  const RequestCounts d = delta[options_.newVersion];
  s.stepCounts += d;
  s.totalCounts += d;
}

std::chrono::milliseconds Rollout::enterScaling(RolloutState& s, int step) {
  const int weight = rolloutWeights(options_.stepPercent)[static_cast<size_t>(step)];
  ReplicaSplit split = replicasAt(s.totalReplicas, weight);
  if (Status st = target_.scaleNew(split.newReplicas); !st.ok()) {
    rollBack(s, st.message());
    return std::chrono::milliseconds(0);
  }
  s.step = step;
  s.stage = RolloutStage::kScaling;
  s.stageSince = clock_.now();
  return std::chrono::milliseconds(0);
}

std::chrono::milliseconds Rollout::advance(RolloutState& s) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  if (s.phase != RolloutPhase::kProgressing) return milliseconds(0);
  if (cancelled_) {
    rollBack(s, "interrupted");
    return milliseconds(0);
  }
  const std::vector<int> weights = rolloutWeights(options_.stepPercent);
  // stepPercent may have changed since the state was written (a MeshRollout's spec): the
  // rollout goes on from the nearest step there is.
  s.step = std::clamp(s.step, 0, static_cast<int>(weights.size()) - 1);
  const auto now = clock_.now();
  switch (s.stage) {
    case RolloutStage::kStart: {
      if (Status st = validateRolloutOptions(options_); !st.ok()) {
        s.phase = RolloutPhase::kFailed;
        s.stage = RolloutStage::kDone;
        s.reason = st.message();
        return milliseconds(0);
      }
      auto old = target_.oldReplicas();
      if (!old.ok()) {  // nothing changed yet: nothing to roll back
        s.phase = RolloutPhase::kFailed;
        s.stage = RolloutStage::kDone;
        s.reason = old.status().message();
        return milliseconds(0);
      }
      s.totalReplicas = std::max(*old, 1);
      s.oldReplicas = s.totalReplicas;
      if (Status st = target_.prepare(); !st.ok()) {
        rollBack(s, st.message());
        return milliseconds(0);
      }
      report_(fmt::format("rules in place, every request to the old version ({} replicas)",
                          s.totalReplicas));
      return enterScaling(s, 0);
    }
    case RolloutStage::kScaling: {
      const int want =
          replicasAt(s.totalReplicas, weights[static_cast<size_t>(s.step)]).newReplicas;
      auto got = target_.readyNewEndpoints();
      const int ready = got.ok() ? *got : 0;
      if (ready >= want) {
        s.stage = RolloutStage::kSettling;
        s.stageSince = now;
        return options_.settle;
      }
      if (now - s.stageSince >= options_.readyTimeout) {
        rollBack(s, fmt::format("the new version has {} of {} pods ready after {} s", ready, want,
                                options_.readyTimeout.count() / 1000));
        return milliseconds(0);
      }
      return milliseconds(250);
    }
    case RolloutStage::kSettling: {
      const auto left = duration_cast<milliseconds>(s.stageSince + options_.settle - now);
      if (left.count() > 0) return left;
      readCounts(s, false);  // this step's counts start here
      s.stepCounts = {};
      const int weight = weights[static_cast<size_t>(s.step)];
      ReplicaSplit split = replicasAt(s.totalReplicas, weight);
      if (Status st = target_.setWeights(100 - weight, weight); !st.ok()) {
        rollBack(s, st.message());
        return milliseconds(0);
      }
      s.weight = weight;
      if (split.oldReplicas < s.oldReplicas) {
        if (Status st = target_.scaleOld(split.oldReplicas); !st.ok()) {
          rollBack(s, st.message());
          return milliseconds(0);
        }
        s.oldReplicas = split.oldReplicas;
      }
      s.reason = fmt::format("weight {}% new / {}% old; replicas {} new / {} old", weight,
                             100 - weight, split.newReplicas, s.oldReplicas);
      report_(s.reason);
      s.stage = RolloutStage::kAnalysing;
      s.stageSince = now;
      return std::min(options_.interval, options_.checkEvery);
    }
    case RolloutStage::kAnalysing: {
      readCounts(s, true);
      const auto left = duration_cast<milliseconds>(s.stageSince + options_.interval - now);
      const bool over = left.count() <= 0;
      std::string why;
      if (shouldRollBack(options_, s.stepCounts, over, &why)) {
        rollBack(s, why);
        return milliseconds(0);
      }
      if (!over) return std::min(left, options_.checkEvery);
      s.reason = fmt::format("step at {}% passed: {} requests to the new version, {} answered 5xx",
                             s.weight, s.stepCounts.requests, s.stepCounts.errors);
      report_(s.reason);
      if (static_cast<size_t>(s.step) + 1 < weights.size()) return enterScaling(s, s.step + 1);
      if (Status st = target_.promote(); !st.ok()) {
        rollBack(s, st.message());
        return milliseconds(0);
      }
      s.phase = RolloutPhase::kPromoted;
      s.stage = RolloutStage::kDone;
      s.weight = 100;
      s.oldReplicas = 0;
      s.reason = fmt::format("every request to the new version ({} requests analysed, {} 5xx)",
                             s.totalCounts.requests, s.totalCounts.errors);
      report_("promoted: " + s.reason);
      return milliseconds(0);
    }
    case RolloutStage::kDone:
      break;
  }
  return milliseconds(0);
}

RolloutResult Rollout::run() {
  RolloutState s;
  while (s.phase == RolloutPhase::kProgressing) {
    auto wait = advance(s);
    if (s.phase != RolloutPhase::kProgressing) break;
    clock_.sleepFor(wait);
  }
  RolloutResult r;
  r.phase = s.phase;
  r.reason = s.reason;
  r.lastWeight = s.weight;
  r.total = s.totalCounts;
  return r;
}

}  // namespace minik8s::mesh
