// GarbageCollector: deletes objects whose owners are gone and carries out the foreground and
// orphan deletion policies, over the kinds it is given informers for (ownerReferences).
//
// - background: an object all of whose owners are gone (absent, or present with another uid)
//   is deleted; owners that are gone are dropped from an object that still has a live owner.
// - foreground: an owner marked for deletion with the "foregroundDeletion" finalizer has its
//   dependents deleted; once none is left the finalizer is removed and the server deletes it.
// - orphan: an owner marked for deletion with the "orphan" finalizer has its ownerReference
//   removed from every dependent, then the finalizer is removed.
// A missing owner in the cache is confirmed with a live GET before anything is deleted.
// decideForDependent() is the pure decision, tested alone. Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

inline constexpr char kForegroundFinalizer[] = "foregroundDeletion";
inline constexpr char kOrphanFinalizer[] = "orphan";

enum class OwnerState { kPresent, kGone, kDeletingForeground, kUnknownKind };

struct GcDecision {
  enum class Action { kKeep, kDelete, kRemoveOwnerRefs } action = Action::kKeep;
  std::string propagationPolicy;        // for kDelete: "Background" or "Foreground"
  std::vector<std::string> removeUids;  // for kRemoveOwnerRefs
};

// What to do with `obj` given the state of each owner (looked up by ownerReference).
GcDecision decideForDependent(const json& obj,
                              const std::function<OwnerState(const json& ownerRef)>& ownerState);

// One kind the collector watches.
struct GcKind {
  std::string kind;  // "Pod"
  client::Resource resource;
  client::Informer* informer = nullptr;
};

class GarbageCollector {
 public:
  // Registers handlers and an "ownerUid" index on every informer: construct before they start.
  GarbageCollector(client::RestClient& rest, std::vector<GcKind> kinds, int workers = 1,
                   const client::Clock& clock = client::RealClock::instance());
  ~GarbageCollector();
  void start();
  void stop();

  // Processes one "<Kind>/<namespace>/<name>" key.
  Status sync(const std::string& key);

 private:
  const GcKind* kindOf(const std::string& kind) const;
  void enqueue(const std::string& kind, const json& obj);
  void enqueueRelated(const std::string& kind, const json& obj);
  OwnerState lookupOwner(const std::string& ns, const json& ref);
  std::vector<std::pair<const GcKind*, json>> dependentsOf(const std::string& uid) const;
  Status processOwner(const GcKind& k, const json& obj, bool& done);
  Status removeFinalizer(const GcKind& k, const json& obj, const std::string& finalizer);

  client::RestClient& rest_;
  std::vector<GcKind> kinds_;
  int workerCount_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
