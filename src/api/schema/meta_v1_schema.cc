// Schemas of meta/v1 (object and list metadata, selectors, options, Status) and Quantity.
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view metaSchemaText() {
  return R"schema(
package io.k8s.apimachinery.pkg.apis.meta.v1
ObjectMeta: Metadata every persisted object carries: identity, labels, annotations, owners and bookkeeping set by the server.
  name string: Name of the object, unique within its namespace and kind. Cannot be updated.
  generateName string: Prefix the server uses to generate a unique name when name is empty.
  namespace string: Namespace the object lives in; empty for cluster-scoped objects.
  uid string: Unique identifier the server assigns at creation, never reused.
  resourceVersion string: Opaque version of the object, changed on every write; used for optimistic concurrency and watches.
  generation int64: Sequence number of the desired state, bumped by the server on spec changes.
  creationTimestamp date-time: Time the server created the object (RFC 3339, UTC).
  deletionTimestamp date-time: Time after which the object will be deleted; set when graceful deletion is requested.
  deletionGracePeriodSeconds int64: Seconds allowed for graceful termination before the object is removed.
  labels map[string]: Key/value pairs used to organize and select objects.
  annotations map[string]: Arbitrary non-identifying key/value metadata for tools and libraries.
  ownerReferences []OwnerReference: Objects this object depends on; it is garbage collected when they are all gone.
  finalizers []string: Keys that must be removed before the object is deleted from storage.
  managedFields []ManagedFieldsEntry: Which manager owns which fields (server-side apply bookkeeping).
  selfLink string: Deprecated; always empty.
OwnerReference: Identifies an owning object, which must be in the same namespace (or cluster-scoped).
  apiVersion! string: API version of the owner.
  kind! string: Kind of the owner.
  name! string: Name of the owner.
  uid! string: UID of the owner.
  controller boolean: True if the owner is the managing controller.
  blockOwnerDeletion boolean: If true, foreground deletion of the owner waits for this object to be deleted.
ManagedFieldsEntry: The set of fields one manager owns, for server-side apply.
  manager string: Name of the workflow managing these fields.
  operation string: Apply or Update.
  apiVersion string: Version of the resource the field set applies to.
  time date-time: When the entry was last changed.
  fieldsType string: Format of fieldsV1; only FieldsV1.
  fieldsV1 object: The owned fields as a tree of field names.
  subresource string: Subresource the fields were written through, if any.
ListMeta: Metadata of a list response.
  resourceVersion string: Version of the list; watch from here to see later changes.
  continue string: Token to fetch the next page when the list was limited.
  remainingItemCount int64: Number of items after this page, when known.
  selfLink string: Deprecated; always empty.
LabelSelector: A label query over objects. matchLabels and matchExpressions are ANDed; an empty selector matches everything.
  matchLabels map[string]: Exact label matches, equivalent to In expressions with one value.
  matchExpressions []LabelSelectorRequirement: Set-based requirements.
LabelSelectorRequirement: A label key, an operator and values.
  key! string: The label key the requirement applies to.
  operator! string: In, NotIn, Exists or DoesNotExist.
  values []string: Values for In and NotIn; must be empty for Exists and DoesNotExist.
Preconditions: Conditions that must hold for a delete to proceed.
  uid string: Expected UID of the object.
  resourceVersion string: Expected resourceVersion of the object.
DeleteOptions @v1: Options of a delete request.
  gracePeriodSeconds int64: Seconds before the object is deleted; 0 deletes immediately.
  preconditions Preconditions: Must match the object, else the delete fails with a conflict.
  orphanDependents boolean: Deprecated; use propagationPolicy.
  propagationPolicy string: Orphan, Background or Foreground garbage collection of dependents.
  dryRun []string: All to validate without persisting.
Status @v1: Result of an operation that returns no object, or the error of a failed one.
  metadata ListMeta: Standard list metadata.
  status string: Success or Failure.
  message string: Human-readable description of the result.
  reason string: Machine-readable reason (NotFound, AlreadyExists, Conflict, Invalid, ...).
  details StatusDetails: Extra data about the reason, e.g. the invalid fields.
  code int32: HTTP status code.
StatusDetails: Details of a Status: the object concerned and the causes.
  name string: Name of the object concerned.
  group string: API group of the object.
  kind string: Kind (or resource) of the object.
  uid string: UID of the object.
  causes []StatusCause: Individual reasons, e.g. one per invalid field.
  retryAfterSeconds int32: Seconds the client should wait before retrying.
StatusCause: One cause of a failure.
  reason string: Machine-readable cause, e.g. FieldValueInvalid.
  message string: Human-readable description of the cause.
  field string: Path of the field concerned, e.g. spec.containers[0].name.
Condition: A generic observed condition of an object.
  type! string: Type of the condition in CamelCase.
  status! string: True, False or Unknown.
  observedGeneration int64: metadata.generation the condition was computed for.
  lastTransitionTime! date-time: When the status last changed.
  reason! string: Machine-readable reason of the last transition.
  message! string: Human-readable details of the last transition.
)schema";
}

}  // namespace minik8s::api::schema
