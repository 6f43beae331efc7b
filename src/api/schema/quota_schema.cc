// Schemas of the namespace policy kinds: core/v1 ResourceQuota and LimitRange.
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view quotaSchemaText() {
  return R"schema(
package io.k8s.api.core.v1
ResourceQuota @v1 +list: ResourceQuota sets aggregate quota restrictions enforced per namespace.
  spec ResourceQuotaSpec: The desired hard limits.
  status ResourceQuotaStatus: The actual enforced quota and its current usage.
ResourceQuotaSpec: The desired hard limits to enforce for a quota.
  hard map[quantity]: The set of desired hard limits for each named resource, e.g. pods, requests.cpu, limits.memory, count/deployments.apps.
  scopes []string: A collection of filters that must match each object tracked by a quota: Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass, CrossNamespacePodAffinity.
  scopeSelector ScopeSelector: A collection of filters like scopes that must match each object tracked by a quota, expressed with operators.
ScopeSelector: A scope selector represents the AND of the selectors of its requirements.
  matchExpressions []ScopedResourceSelectorRequirement: A list of scope selector requirements by scope of the resources.
ScopedResourceSelectorRequirement: A selector that contains values, a scope name, and an operator that relates them.
  scopeName! string: The name of the scope that the selector applies to.
  operator! string: How the scope relates to the values: In, NotIn, Exists or DoesNotExist.
  values []string: An array of string values: non-empty for In and NotIn, empty for Exists and DoesNotExist.
ResourceQuotaStatus: The enforced hard limits and observed use.
  hard map[quantity]: The set of enforced hard limits for each named resource (spec.hard, as the quota controller last saw it).
  used map[quantity]: The current observed total usage of the resource in the namespace.
LimitRange @v1 +list: LimitRange sets resource usage limits for each kind of resource in a namespace.
  spec LimitRangeSpec: The limits enforced.
LimitRangeSpec: The limits enforced for kinds of resources.
  limits! []LimitRangeItem: The list of LimitRangeItem objects that are enforced.
LimitRangeItem: The min/max usage limits for any resource that matches on kind.
  type! string: The type of resource that this limit applies to: Pod, Container or PersistentVolumeClaim.
  max map[quantity]: The maximum usage constraints on this kind by resource name.
  min map[quantity]: The minimum usage constraints on this kind by resource name.
  default map[quantity]: The default resource limits of a container when none are given (type Container).
  defaultRequest map[quantity]: The default resource requests of a container when none are given (type Container).
  maxLimitRequestRatio map[quantity]: The largest ratio of limit over request allowed for each named resource.
)schema";
}

}  // namespace minik8s::api::schema
