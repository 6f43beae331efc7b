// ControllerRevisions of a DaemonSet or StatefulSet, as Kubernetes' controller history keeps
// them: each pod template is stored once as a strategic merge patch ({"spec": {"template": {...,
// "$patch": "replace"}}}, what `kubectl rollout undo` applies), named OWNER-<hash>, labelled with
// the template's labels (so `kubectl rollout history` finds them by selector) and
// controller-revision-hash, numbered 1, 2, ... A template seen before (an undo) gets the next
// number again; old revisions beyond spec.revisionHistoryLimit go unless a pod still uses them.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::controllers {

inline constexpr char kControllerRevisionHashLabel[] = "controller-revision-hash";
extern const client::Resource kControllerRevisions;  // apps/v1 controllerrevisions

struct OwnerRevisions {
  json current;           // the ControllerRevision of the owner's template now
  std::vector<json> all;  // every revision of the owner before this sync, oldest first
};

// Finds or creates the revision of `owner`'s spec.template (the revision informer must carry
// the "namespace" index), renumbers it when an older template became current, and prunes the
// history; `inUse` are revision names or hashes pods still carry. A hash collision bumps
// status.collisionCount of `owner` (through `ownerResource`) and fails with Conflict: the
// next sync uses another name.
Result<OwnerRevisions> syncControllerRevisions(client::RestClient& rest,
                                               client::Informer& revisions, const json& owner,
                                               const client::Resource& ownerResource,
                                               const std::set<std::string>& inUse);

// The controller-revision-hash label of a pod or revision ("" when absent).
std::string revisionHashOf(const json& obj);

// The pod template stored in a revision (without the $patch directive).
json revisionTemplate(const json& revision);

}  // namespace minik8s::controllers
