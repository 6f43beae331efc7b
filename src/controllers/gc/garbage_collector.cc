#include "controllers/gc/garbage_collector.h"

#include <algorithm>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::uidOf;

namespace {

json ownerRefs(const json& o) {
  json r = valueAt(o, "/metadata/ownerReferences", json::array());
  return r.is_array() ? r : json::array();
}

}  // namespace

GcDecision decideForDependent(const json& obj,
                              const std::function<OwnerState(const json&)>& ownerState) {
  GcDecision d;
  const json refs = ownerRefs(obj);
  if (refs.empty() || isTerminating(obj)) return d;
  int solid = 0, waiting = 0;
  std::vector<std::string> notSolid;
  for (const auto& ref : refs) {
    switch (ownerState(ref)) {
      case OwnerState::kPresent:
      case OwnerState::kUnknownKind:  // not ours to judge
        ++solid;
        break;
      case OwnerState::kDeletingForeground:
        ++waiting;
        notSolid.push_back(ref.value("uid", ""));
        break;
      case OwnerState::kGone:
        notSolid.push_back(ref.value("uid", ""));
        break;
    }
  }
  if (solid > 0) {
    if (!notSolid.empty()) {
      d.action = GcDecision::Action::kRemoveOwnerRefs;
      d.removeUids = std::move(notSolid);
    }
    return d;
  }
  d.action = GcDecision::Action::kDelete;
  d.propagationPolicy = waiting > 0 ? "Foreground" : "Background";
  return d;
}

GarbageCollector::GarbageCollector(client::RestClient& rest, std::vector<GcKind> kinds, int workers,
                                   const client::Clock& clock)
    : rest_(rest),
      kinds_(std::move(kinds)),
      workerCount_(workers),
      queue_(clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "garbage-collector") {
  for (const GcKind& k : kinds_) {
    k.informer->addIndex("ownerUid", [](const json& o) {
      std::vector<std::string> uids;
      for (const auto& r : ownerRefs(o)) uids.push_back(r.value("uid", ""));
      return uids;
    });
    const std::string kind = k.kind;
    k.informer->addHandlers({[this, kind](const json& o) { enqueue(kind, o); },
                             [this, kind](const json&, const json& o) { enqueue(kind, o); },
                             [this, kind](const json& o) { enqueueRelated(kind, o); }});
  }
}

GarbageCollector::~GarbageCollector() { stop(); }
void GarbageCollector::start() { workers_.start(workerCount_); }
void GarbageCollector::stop() { workers_.stop(); }

const GcKind* GarbageCollector::kindOf(const std::string& kind) const {
  for (const auto& k : kinds_) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

void GarbageCollector::enqueue(const std::string& kind, const json& o) {
  const bool owned = !ownerRefs(o).empty();
  const bool finalizing = isTerminating(o) && (hasFinalizer(o, kForegroundFinalizer) ||
                                               hasFinalizer(o, kOrphanFinalizer));
  if (owned || finalizing) queue_.add(kind + "/" + namespaceOf(o) + "/" + nameOf(o));
}

// A deleted object: its dependents may now be garbage, and an owner waiting in foreground
// deletion may now be free to go.
void GarbageCollector::enqueueRelated(const std::string& kind, const json& o) {
  for (const auto& [k, dep] : dependentsOf(uidOf(o))) enqueue(k->kind, dep);
  for (const auto& ref : ownerRefs(o)) {
    queue_.add(ref.value("kind", "") + "/" + namespaceOf(o) + "/" + ref.value("name", ""));
  }
}

std::vector<std::pair<const GcKind*, json>> GarbageCollector::dependentsOf(
    const std::string& uid) const {
  std::vector<std::pair<const GcKind*, json>> out;
  if (uid.empty()) return out;
  for (const auto& k : kinds_) {
    for (auto& o : k.informer->byIndex("ownerUid", uid)) out.emplace_back(&k, std::move(o));
  }
  return out;
}

OwnerState GarbageCollector::lookupOwner(const std::string& ns, const json& ref) {
  const GcKind* k = kindOf(ref.value("kind", ""));
  if (!k) return OwnerState::kUnknownKind;
  const std::string name = ref.value("name", ""), uid = ref.value("uid", "");
  std::optional<json> owner = k->informer->get(k->resource.namespaced ? ns + "/" + name : name);
  if (!owner || uidOf(*owner) != uid) {
    // The cache may lag behind a just-created owner: only the server can say it is gone.
    auto live = rest_.get(k->resource, k->resource.namespaced ? ns : "", name);
    if (!live.ok()) {
      return live.status().code() == 404 ? OwnerState::kGone : OwnerState::kUnknownKind;
    }
    if (uidOf(*live) != uid) return OwnerState::kGone;
    owner = *live;
  }
  if (isTerminating(*owner) && hasFinalizer(*owner, kForegroundFinalizer)) {
    return OwnerState::kDeletingForeground;
  }
  return OwnerState::kPresent;
}

Status GarbageCollector::removeFinalizer(const GcKind& k, const json& obj,
                                         const std::string& finalizer) {
  json kept = json::array();
  for (const auto& f : valueAt(obj, "/metadata/finalizers", json::array())) {
    if (f != finalizer) kept.push_back(f);
  }
  // resourceVersion makes it a compare-and-swap: a concurrent finalizer change is not lost.
  json patch = {{"metadata",
                 {{"finalizers", kept},
                  {"resourceVersion", valueAt(obj, "/metadata/resourceVersion", std::string())}}}};
  auto r = rest_.patch(k.resource, namespaceOf(obj), nameOf(obj), patch);
  if (!r.ok() && r.status().code() == 404) return Status::Ok();
  return r.status();
}

Status GarbageCollector::processOwner(const GcKind& k, const json& obj, bool& done) {
  done = false;
  if (!isTerminating(obj)) return Status::Ok();
  const std::string uid = uidOf(obj);
  if (hasFinalizer(obj, kOrphanFinalizer)) {
    for (const auto& [dk, dep] : dependentsOf(uid)) {
      json patch = {{"metadata", {{"ownerReferences", ownerRefsWithout(dep, uid)}}}};
      auto r = rest_.patch(dk->resource, namespaceOf(dep), nameOf(dep), patch);
      if (!r.ok() && r.status().code() != 404) return r.status();
    }
    done = true;
    return removeFinalizer(k, obj, kOrphanFinalizer);
  }
  if (hasFinalizer(obj, kForegroundFinalizer)) {
    done = true;
    auto deps = dependentsOf(uid);
    if (deps.empty()) return removeFinalizer(k, obj, kForegroundFinalizer);
    for (const auto& [dk, dep] : deps) {
      if (isTerminating(dep)) continue;
      const bool hasOwnDependents = !dependentsOf(uidOf(dep)).empty();
      json opts = {{"kind", "DeleteOptions"},
                   {"apiVersion", "v1"},
                   {"propagationPolicy", hasOwnDependents ? "Foreground" : "Background"},
                   {"preconditions", {{"uid", uidOf(dep)}}}};
      auto r = rest_.remove(dk->resource, namespaceOf(dep), nameOf(dep), opts);
      if (!r.ok() && r.status().code() != 404 && r.status().code() != 409) return r.status();
    }
    // The dependents' delete events bring this owner back to drop its finalizer.
  }
  return Status::Ok();
}

Status GarbageCollector::sync(const std::string& key) {
  const size_t a = key.find('/'), b = key.find('/', a + 1);
  if (a == std::string::npos || b == std::string::npos) return Status::Ok();
  const GcKind* k = kindOf(key.substr(0, a));
  if (!k) return Status::Ok();
  const std::string ns = key.substr(a + 1, b - a - 1), name = key.substr(b + 1);
  auto cached = k->informer->get(ns.empty() ? name : ns + "/" + name);
  if (!cached) return Status::Ok();
  const json& obj = *cached;

  bool handledAsOwner = false;
  Status s = processOwner(*k, obj, handledAsOwner);
  if (!s.ok() || handledAsOwner) return s;

  GcDecision d = decideForDependent(obj, [&](const json& ref) { return lookupOwner(ns, ref); });
  if (d.action == GcDecision::Action::kKeep) return Status::Ok();
  if (d.action == GcDecision::Action::kRemoveOwnerRefs) {
    json refs = json::array();
    for (const auto& r : ownerRefs(obj)) {
      if (std::find(d.removeUids.begin(), d.removeUids.end(), r.value("uid", "")) ==
          d.removeUids.end()) {
        refs.push_back(r);
      }
    }
    auto r = rest_.patch(k->resource, ns, name, {{"metadata", {{"ownerReferences", refs}}}});
    return r.ok() || r.status().code() == 404 ? Status::Ok() : r.status();
  }
  LOG_INFO("garbage collector: deleting {} {}/{} (owners gone, {})", k->kind, ns, name,
           d.propagationPolicy);
  json opts = {{"kind", "DeleteOptions"},
               {"apiVersion", "v1"},
               {"propagationPolicy", d.propagationPolicy},
               {"preconditions", {{"uid", uidOf(obj)}}}};
  auto r = rest_.remove(k->resource, ns, name, opts);
  if (!r.ok() && r.status().code() != 404 && r.status().code() != 409) return r.status();
  return Status::Ok();
}

}  // namespace minik8s::controllers
