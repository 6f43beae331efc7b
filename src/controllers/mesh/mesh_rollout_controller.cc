#include "controllers/mesh/mesh_rollout_controller.h"

#include <fmt/core.h>

#include <algorithm>

#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "mesh/rollout_cluster.h"
#include "mesh/rollout_resource.h"

namespace minik8s::controllers {

namespace {

using std::chrono::milliseconds;

bool hasRolloutFinalizer(const json& obj) {
  for (const auto& f : valueAt(obj, "/metadata/finalizers", json::array())) {
    if (f == mesh::kMeshRolloutFinalizer) return true;
  }
  return false;
}

bool rolloutEnded(const std::string& phase) {
  return phase == "Promoted" || phase == "RolledBack" || phase == "Failed";
}

// What the first sync resolved, kept in the status.
struct ResolvedNames {
  std::string oldDeployment, newDeployment, oldVersion, newVersion;
  json toJson() const {
    return {{"oldDeployment", oldDeployment},
            {"newDeployment", newDeployment},
            {"oldVersion", oldVersion},
            {"newVersion", newVersion}};
  }
};

ResolvedNames namesIn(const json& status) {
  auto text = [&](const char* k) {
    return status.contains(k) && status[k].is_string() ? status[k].get<std::string>() : "";
  };
  return {text("oldDeployment"), text("newDeployment"), text("oldVersion"), text("newVersion")};
}

// An error the rollout cannot get past by waiting (the spec or the cluster says no), as opposed
// to the API server being away or busy.
bool permanentRolloutError(const Status& s) {
  const int c = s.code();
  return c >= 400 && c < 500 && c != 408 && c != 409 && c != 429;
}

}  // namespace

MeshRolloutController::MeshRolloutController(client::RestClient& rest,
                                             client::Informer& meshRollouts,
                                             MeshRolloutControllerOptions options)
    : rest_(rest),
      meshRollouts_(meshRollouts),
      options_(std::move(options)),
      ownClock_(options_.clock ? nullptr : std::make_unique<mesh::RealRolloutClock>()),
      queue_(options_.queueClock ? *options_.queueClock : client::RealClock::instance()),
      workers_(
          queue_,
          [this](const std::string& key) -> Status {
            auto next = syncRollout(key);
            if (!next.ok()) return next.status();
            if (*next) queue_.addAfter(key, **next);
            return Status::Ok();
          },
          "meshrollout") {
  if (!options_.clock) options_.clock = ownClock_.get();
  // Our own status writes come back as updates: they must not cut the step's wait short, so an
  // update counts only when the spec changed or a deletion began.
  meshRollouts_.addHandlers({[this](const json& r) { queue_.add(client::objectKey(r)); },
                             [this](const json& before, const json& after) {
                               const bool specChanged =
                                   valueAt(before, "/metadata/generation", 0) !=
                                   valueAt(after, "/metadata/generation", 0);
                               const bool deleting = isTerminating(after) && !isTerminating(before);
                               if (specChanged || deleting) queue_.add(client::objectKey(after));
                             },
                             nullptr});
}

MeshRolloutController::~MeshRolloutController() { stop(); }
void MeshRolloutController::start() { workers_.start(1); }
void MeshRolloutController::stop() { workers_.stop(); }

Status MeshRolloutController::writeStatus(json& obj, const mesh::RolloutState& state,
                                          const json& names) {
  const json before = obj.value("status", json::object());
  json st = mesh::rolloutStateToJson(state);
  st.update(names);
  st["observedGeneration"] = valueAt(obj, "/metadata/generation", 0);
  const std::string phase = st.value("phase", "");
  const std::string now = formatRfc3339(options_.clock->now());
  const bool phaseChanged = before.value("phase", "") != phase || !before.contains("phase");
  st["lastTransitionTime"] = phaseChanged ? now : before.value("lastTransitionTime", now);
  const char* promoted = state.phase == mesh::RolloutPhase::kPromoted      ? "True"
                         : state.phase == mesh::RolloutPhase::kProgressing ? "Unknown"
                                                                           : "False";
  st["conditions"] = json::array({{{"type", "Promoted"},
                                   {"status", promoted},
                                   {"reason", phase},
                                   {"message", state.reason},
                                   {"lastTransitionTime", st["lastTransitionTime"]}}});
  if (st == before) return Status::Ok();
  json updated = obj;
  updated["status"] = st;
  auto r = rest_.update(mesh::kMeshRollouts, updated, "status");
  if (!r.ok()) return r.status();
  obj = *r;
  return Status::Ok();
}

void MeshRolloutController::event(const json& obj, const std::string& type,
                                  const std::string& reason, const std::string& message) {
  if (options_.events) options_.events->record(obj, type, reason, message);
}

Status MeshRolloutController::dropFinalizer(json& obj) {
  if (!hasRolloutFinalizer(obj)) return Status::Ok();
  json updated = obj;
  json kept = json::array();
  for (const auto& f : obj["metadata"]["finalizers"]) {
    if (f != mesh::kMeshRolloutFinalizer) kept.push_back(f);
  }
  updated["metadata"]["finalizers"] = kept;
  auto r = rest_.update(mesh::kMeshRollouts, updated);
  if (!r.ok()) return r.status().code() == 404 ? Status::Ok() : r.status();
  obj = *r;
  return Status::Ok();
}

Result<std::optional<milliseconds>> MeshRolloutController::syncRollout(const std::string& key) {
  using Next = std::optional<milliseconds>;
  const auto [ns, name] = client::splitObjectKey(key);
  auto got = rest_.get(mesh::kMeshRollouts, ns, name);
  if (!got.ok()) return got.status().code() == 404 ? Result<Next>(Next()) : got.status();
  json obj = *got;
  const json status = obj.value("status", json::object());
  const std::string phase = status.value("phase", "");
  ResolvedNames names = namesIn(status);
  auto spec = mesh::parseMeshRolloutSpec(obj);
  auto report = [ns = ns, name = name](const std::string& line) {
    LOG_INFO("meshrollout {}/{}: {}", ns, name, line);
  };
  auto fail = [&](const std::string& reason) -> Result<Next> {
    mesh::RolloutState state;
    state.phase = mesh::RolloutPhase::kFailed;
    state.stage = mesh::RolloutStage::kDone;
    state.reason = reason;
    report("failed: " + reason);
    if (Status s = writeStatus(obj, state, names.toJson()); !s.ok()) return s;
    event(obj, "Warning", "Failed", reason);
    if (Status s = dropFinalizer(obj); !s.ok()) return s;
    return Next();
  };

  if (rolloutEnded(phase) || isTerminating(obj)) {
    if (isTerminating(obj) && !rolloutEnded(phase) && !names.newDeployment.empty() && spec.ok()) {
      // Deleted mid-way: the old version gets every request back before the object goes.
      auto state = mesh::rolloutStateFromJson(status);
      if (state.ok()) {
        mesh::ApiRolloutTarget target(rest_, {.ns = ns,
                                              .service = spec->service,
                                              .image = spec->image,
                                              .version = spec->version,
                                              .container = spec->container});
        target.restore(names.oldDeployment, names.newDeployment, names.oldVersion,
                       names.newVersion);
        auto metrics = options_.metrics(ns, spec->service);
        mesh::Rollout rollout(spec->options, target, *metrics, *options_.clock, report);
        rollout.abort(*state, "the MeshRollout was deleted");
        if (state->phase == mesh::RolloutPhase::kFailed) return Status::Unavailable(state->reason);
        if (Status s = writeStatus(obj, *state, names.toJson()); !s.ok()) return s;
        event(obj, "Warning", "RolledBack", state->reason);
      }
    }
    if (Status s = dropFinalizer(obj); !s.ok()) return s;
    return Next();
  }
  if (!spec.ok()) return fail(spec.status().message());
  if (!hasRolloutFinalizer(obj)) {
    json updated = obj;
    if (!updated["metadata"]["finalizers"].is_array()) {
      updated["metadata"]["finalizers"] = json::array();
    }
    updated["metadata"]["finalizers"].push_back(mesh::kMeshRolloutFinalizer);
    auto r = rest_.update(mesh::kMeshRollouts, updated);
    if (!r.ok()) return r.status();
    obj = *r;
  }
  mesh::ApiRolloutTarget target(rest_, {.ns = ns,
                                        .service = spec->service,
                                        .image = spec->image,
                                        .version = spec->version,
                                        .container = spec->container});
  if (names.newDeployment.empty()) {
    // The first sync: which Deployment is the old version, what the new one is called.
    if (Status s = target.resolve(); !s.ok()) {
      // resolve() only reads: a 409 is its "the new Deployment exists already", final too.
      if (!permanentRolloutError(s) && s.code() != 409) return s;
      return fail(s.message());
    }
    names = {target.oldDeployment(), target.newDeployment(), target.oldVersion(),
             target.newVersion()};
    mesh::RolloutState state;
    state.reason = fmt::format("{} ({}) -> {} ({}, {})", names.oldDeployment, names.oldVersion,
                               names.newDeployment, names.newVersion, spec->image);
    report("started: " + state.reason);
    if (Status s = writeStatus(obj, state, names.toJson()); !s.ok()) return s;
    event(obj, "Normal", "Started", state.reason);
    return Next(milliseconds(0));
  }
  auto state = mesh::rolloutStateFromJson(status);
  if (!state.ok()) return fail(state.status().message());
  target.restore(names.oldDeployment, names.newDeployment, names.oldVersion, names.newVersion);
  mesh::RolloutOptions o = spec->options;
  o.newVersion = names.newVersion;
  o.readyTimeout = options_.readyTimeout;
  o.settle = options_.settle;
  auto metrics = options_.metrics(ns, spec->service);
  mesh::Rollout rollout(o, target, *metrics, *options_.clock, report);
  const int weightBefore = state->weight;
  const milliseconds wait = rollout.advance(*state);
  if (Status s = writeStatus(obj, *state, names.toJson()); !s.ok()) return s;
  if (state->phase == mesh::RolloutPhase::kProgressing && state->weight != weightBefore) {
    event(obj, "Normal", "Advanced", state->reason);
  } else if (state->phase == mesh::RolloutPhase::kPromoted) {
    event(obj, "Normal", "Promoted", state->reason);
  } else if (state->phase == mesh::RolloutPhase::kRolledBack) {
    event(obj, "Warning", "RolledBack", state->reason);
  } else if (state->phase == mesh::RolloutPhase::kFailed) {
    event(obj, "Warning", "Failed", state->reason);
  }
  if (state->phase != mesh::RolloutPhase::kProgressing) {
    if (Status s = dropFinalizer(obj); !s.ok()) return s;
    return Next();
  }
  return Next(wait);
}

}  // namespace minik8s::controllers
