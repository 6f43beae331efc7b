// Resource quota arithmetic, as Kubernetes' quota evaluators compute it: what one object uses
// of a namespace's quota (pods: requests and limits of cpu, memory, ephemeral-storage and
// extended resources, pod counts; services: counts, node ports and load balancers; claims:
// counts and requests.storage, per storage class too; every kind: count/<resource>.<group>),
// which quota resource names each kind is charged for, and the list arithmetic the ResourceQuota
// admission plugin and the resourcequota controller share. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "api/quantity.h"
#include "common/status.h"

namespace minik8s::api {

// Resource name -> quantity, sorted by name (Kubernetes' v1.ResourceList).
using ResourceList = std::map<std::string, Quantity>;

// A JSON map of quantities; entries that do not parse are skipped.
ResourceList parseResourceList(const json& list);
json toJson(const ResourceList& list);

// a + b per name (a name of either side is kept); a - b, never below zero (names of a only).
ResourceList addLists(const ResourceList& a, const ResourceList& b);
ResourceList subtractNonNegative(const ResourceList& a, const ResourceList& b);
// Only the entries of `list` named in `names`.
ResourceList maskList(const ResourceList& list, const std::vector<std::string>& names);
std::vector<std::string> listNames(const ResourceList& list);
// Whether every entry of `a` is <= the same entry of `b` (names missing from b are not limited);
// `exceeded` gets the names that are not.
bool lessThanOrEqual(const ResourceList& a, const ResourceList& b,
                     std::vector<std::string>* exceeded = nullptr);
// "limits.cpu=2,pods=1": sorted, canonical quantities (the refusal messages' form).
std::string prettyPrint(const ResourceList& list);

// A container's requests and limits, with a missing request defaulting to the limit as the API
// defaults it.
ResourceList containerRequests(const json& container);
ResourceList containerLimits(const json& container);
// The pod's effective requests / limits: containers and sidecars (init containers with
// restartPolicy Always) summed, each other init container's need (plus the sidecars started
// before it) taken when larger, plus spec.overhead.
ResourceList podRequests(const json& pod);
ResourceList podLimits(const json& pod);

// False for pods that no longer use compute resources: Succeeded or Failed, or past their
// deletion deadline (deletionTimestamp + deletionGracePeriodSeconds).
bool podCountsForQuota(const json& pod, std::chrono::system_clock::time_point now);
// BestEffort: no container (init included) sets any request or limit.
bool podIsBestEffort(const json& pod);

// What `obj` of `group`/`resource` (plural) uses. Every object counts under
// count/<resource>[.<group>]; core kinds also under their legacy names (pods, services,
// configmaps, secrets, persistentvolumeclaims, replicationcontrollers, resourcequotas).
ResourceList objectUsage(const std::string& group, const std::string& resource, const json& obj,
                         std::chrono::system_clock::time_point now);
// Whether quota resource `name` is charged for objects of `group`/`resource`.
bool quotaTracks(const std::string& group, const std::string& resource, const std::string& name);
// The object count name Kubernetes uses: "count/pods", "count/deployments.apps".
std::string objectCountName(const std::string& group, const std::string& resource);
// The group and plural a count/ name counts ({"apps", "deployments"}); nullopt-like empty plural
// for names that are not object counts.
std::pair<std::string, std::string> countedResource(const std::string& name);

// Whether the quota's scopes (spec.scopes and spec.scopeSelector) select `obj`. Non-pod
// objects are only selected by quotas without scopes.
bool quotaScopesMatch(const json& quota, const std::string& group, const std::string& resource,
                      const json& obj);

// Kubernetes' pod constraint: when a quota limits cpu or memory requests or limits, every
// container must state them. "" or "must specify limits.cpu for: a,b; requests.memory for: a".
std::string podQuotaConstraints(const std::vector<std::string>& limited, const json& pod);

}  // namespace minik8s::api
