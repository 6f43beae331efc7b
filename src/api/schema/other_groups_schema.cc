// Schemas of autoscaling (v1, v2), coordination, discovery, policy, authentication and
// minik8s.io.
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view otherGroupsSchemaText() {
  return R"schema(
package io.k8s.api.autoscaling.v2
HorizontalPodAutoscaler @autoscaling/v2 +list: A HorizontalPodAutoscaler scales a workload's replicas automatically from observed metrics.
  spec HorizontalPodAutoscalerSpec: Desired behavior of the autoscaler.
  status HorizontalPodAutoscalerStatus: Current information about the autoscaler.
HorizontalPodAutoscalerSpec: Desired behavior of an autoscaler.
  scaleTargetRef! CrossVersionObjectReference: The scaled workload (through its scale subresource).
  minReplicas int32: Lower bound of replicas. Default 1.
  maxReplicas! int32: Upper bound of replicas.
  metrics []MetricSpec: Metrics whose desired replica counts are computed; the largest wins. Default: 80% average CPU utilization.
  behavior HorizontalPodAutoscalerBehavior: Scaling speed up and down.
CrossVersionObjectReference: A reference to the scaled object.
  kind! string: Kind of the target, e.g. Deployment.
  name! string: Name of the target.
  apiVersion string: API version of the target.
MetricSpec: One metric to scale on.
  type! string: Resource, ContainerResource, Pods, Object or External.
  resource ResourceMetricSource: A resource (cpu, memory) of the pods.
  containerResource ContainerResourceMetricSource: A resource of one container of the pods.
  pods PodsMetricSource: A metric averaged over the pods.
  object ObjectMetricSource: A metric of another object.
  external ExternalMetricSource: A metric from outside the cluster.
ResourceMetricSource: A resource metric.
  name! string: Resource name: cpu or memory.
  target! MetricTarget: Target value.
ContainerResourceMetricSource: A container resource metric.
  name! string: Resource name.
  container! string: Container name.
  target! MetricTarget: Target value.
PodsMetricSource: A per-pod metric.
  metric! MetricIdentifier: The metric.
  target! MetricTarget: Target value.
ObjectMetricSource: A metric of an object.
  describedObject! CrossVersionObjectReference: The object.
  metric! MetricIdentifier: The metric.
  target! MetricTarget: Target value.
ExternalMetricSource: An external metric.
  metric! MetricIdentifier: The metric.
  target! MetricTarget: Target value.
MetricIdentifier: Names a metric.
  name! string: Name of the metric.
  selector LabelSelector: Selector narrowing the metric.
MetricTarget: The target of a metric.
  type! string: Utilization, Value or AverageValue.
  value quantity: Target value.
  averageValue quantity: Target average value over the pods.
  averageUtilization int32: Target average utilization, percent of the requests.
HorizontalPodAutoscalerBehavior: Scaling policies.
  scaleUp HPAScalingRules: Rules for scaling up.
  scaleDown HPAScalingRules: Rules for scaling down.
HPAScalingRules: Scaling rules of one direction.
  stabilizationWindowSeconds int32: Seconds of past recommendations considered.
  selectPolicy string: Max, Min or Disabled.
  policies []HPAScalingPolicy: Allowed changes.
  tolerance quantity: Tolerance of the ratio before scaling.
HPAScalingPolicy: One allowed change.
  type! string: Pods or Percent.
  value! int32: Amount of change.
  periodSeconds! int32: Window the policy holds over.
HorizontalPodAutoscalerStatus: Observed state of an autoscaler.
  observedGeneration int64: Generation last observed.
  lastScaleTime date-time: Last time the target was scaled.
  currentReplicas int32: Current replicas of the target.
  desiredReplicas! int32: Replicas wanted at the last computation.
  currentMetrics []MetricStatus: Last read value of each metric.
  conditions []HorizontalPodAutoscalerCondition: AbleToScale, ScalingActive, ScalingLimited.
MetricStatus: Current value of one metric.
  type! string: Resource, ContainerResource, Pods, Object or External.
  resource ResourceMetricStatus: A resource metric.
  containerResource ContainerResourceMetricStatus: A container resource metric.
  pods PodsMetricStatus: A per-pod metric.
  object ObjectMetricStatus: An object metric.
  external ExternalMetricStatus: An external metric.
ResourceMetricStatus: Current value of a resource metric.
  name! string: Resource name.
  current! MetricValueStatus: Current value.
ContainerResourceMetricStatus: Current value of a container resource metric.
  name! string: Resource name.
  container! string: Container name.
  current! MetricValueStatus: Current value.
PodsMetricStatus: Current value of a per-pod metric.
  metric! MetricIdentifier: The metric.
  current! MetricValueStatus: Current value.
ObjectMetricStatus: Current value of an object metric.
  metric! MetricIdentifier: The metric.
  current! MetricValueStatus: Current value.
  describedObject! CrossVersionObjectReference: The object.
ExternalMetricStatus: Current value of an external metric.
  metric! MetricIdentifier: The metric.
  current! MetricValueStatus: Current value.
MetricValueStatus: A metric value.
  value quantity: Current value.
  averageValue quantity: Current average value.
  averageUtilization int32: Current average utilization, percent of the requests.
HorizontalPodAutoscalerCondition: A condition of an autoscaler.
  type! string: AbleToScale, ScalingActive or ScalingLimited.
  status! string: True, False or Unknown.
  lastTransitionTime date-time: Last status change.
  reason string: Machine-readable reason.
  message string: Human-readable details.

package io.k8s.api.autoscaling.v1
HorizontalPodAutoscaler @autoscaling/v1 +list: A HorizontalPodAutoscaler scales a workload's replicas from average CPU utilization (v1 API; v2 has more metrics).
  spec HorizontalPodAutoscalerSpec: Desired behavior of the autoscaler.
  status HorizontalPodAutoscalerStatus: Current information about the autoscaler.
HorizontalPodAutoscalerSpec: Desired behavior of an autoscaler.
  scaleTargetRef! CrossVersionObjectReference: The scaled workload.
  minReplicas int32: Lower bound of replicas. Default 1.
  maxReplicas! int32: Upper bound of replicas.
  targetCPUUtilizationPercentage int32: Target average CPU utilization, percent of the requests. Default 80.
CrossVersionObjectReference: A reference to the scaled object.
  kind! string: Kind of the target.
  name! string: Name of the target.
  apiVersion string: API version of the target.
HorizontalPodAutoscalerStatus: Observed state of an autoscaler.
  observedGeneration int64: Generation last observed.
  lastScaleTime date-time: Last time the target was scaled.
  currentReplicas! int32: Current replicas of the target.
  desiredReplicas! int32: Replicas wanted at the last computation.
  currentCPUUtilizationPercentage int32: Current average CPU utilization, percent of the requests.
Scale @autoscaling/v1: Scale is the replica count of a scalable resource, read and written through its scale subresource.
  spec ScaleSpec: Desired replicas.
  status ScaleStatus: Current replicas.
ScaleSpec: Desired scale.
  replicas int32: Desired number of replicas.
ScaleStatus: Current scale.
  replicas! int32: Actual number of replicas.
  selector string: Label selector of the pods, in string form.

package io.k8s.api.coordination.v1
Lease @coordination.k8s.io/v1 +list: A Lease is a lock with a holder and a renew time, used for leader election and node heartbeats.
  spec LeaseSpec: Specification of the lease.
LeaseSpec: State of a lease.
  holderIdentity string: Identity of the holder.
  leaseDurationSeconds int32: Seconds candidates wait before taking the lease over.
  acquireTime date-time: When the current holder acquired the lease.
  renewTime date-time: When the holder last renewed the lease.
  leaseTransitions int32: Number of holder changes.
  strategy string: Strategy for picking the leader.
  preferredHolder string: Holder candidates should yield to.

package io.k8s.api.discovery.v1
EndpointSlice @discovery.k8s.io/v1 +list: An EndpointSlice lists a subset of the endpoints of a service.
  addressType! string: IPv4, IPv6 or FQDN.
  endpoints! []Endpoint: The endpoints.
  ports []EndpointPort: Ports served by every endpoint.
Endpoint: One endpoint.
  addresses! []string: Addresses of the endpoint.
  conditions EndpointConditions: Ready, serving, terminating.
  hostname string: Hostname of the endpoint.
  targetRef ObjectReference: The pod behind the endpoint.
  nodeName string: Node hosting the endpoint.
  zone string: Zone of the endpoint.
  deprecatedTopology map[string]: Deprecated topology labels.
  hints object: Topology hints.
EndpointConditions: Conditions of an endpoint.
  ready boolean: Ready to receive traffic.
  serving boolean: Serving, even if terminating.
  terminating boolean: Terminating.
EndpointPort: A port of the endpoints.
  name string: Name matching the service port.
  protocol string: TCP, UDP or SCTP.
  port int32: Port number.
  appProtocol string: Application protocol.

package io.k8s.api.policy.v1
Eviction @policy/v1: An Eviction asks for a pod to be deleted while honouring disruption budgets; posted to pods/eviction.
  deleteOptions DeleteOptions: Options of the deletion.

package io.k8s.api.authentication.v1
TokenRequest @authentication.k8s.io/v1: A TokenRequest asks for a token of a service account; posted to serviceaccounts/token.
  spec! TokenRequestSpec: Parameters of the token.
  status TokenRequestStatus: The issued token.
TokenRequestSpec: Parameters of a token.
  audiences! []string: Audiences of the token.
  expirationSeconds int64: Requested lifetime.
  boundObjectRef object: Object the token is bound to.
TokenRequestStatus: An issued token.
  token! string: The token.
  expirationTimestamp! date-time: When the token expires.

package io.minik8s.v1
Dns @minik8s.io/v1 +list: A Dns publishes services under a host name: each path of the host forwards to a service port.
  spec DnsSpec: The host and its paths.
  status DnsStatus: Observed state.
DnsSpec: A host and its paths.
  host! string: Host name served, e.g. app.example.com.
  paths []DnsPath: Paths of the host, each forwarded to a service.
DnsPath: One path of a host.
  path! string: URL path prefix, e.g. /api.
  serviceName! string: Service receiving the requests.
  servicePort! int32: Port of the service.
DnsStatus: Observed state of a Dns.
  conditions []Condition: Conditions of the Dns.
  observedGeneration int64: Generation last acted on.
package io.k8s.api.admissionregistration.v1
MutatingWebhookConfiguration @admissionregistration.k8s.io/v1 +list: MutatingWebhookConfiguration describes admission webhooks that may change an object before it is stored.
  webhooks []MutatingWebhook: The webhooks, called in order.
ValidatingWebhookConfiguration @admissionregistration.k8s.io/v1 +list: ValidatingWebhookConfiguration describes admission webhooks that may refuse an object before it is stored.
  webhooks []ValidatingWebhook: The webhooks.
MutatingWebhook: An admission webhook that may patch the object.
  name! string: Fully qualified name of the webhook, e.g. imagepolicy.kubernetes.io.
  clientConfig! WebhookClientConfig: How to reach the webhook.
  rules []RuleWithOperations: Operations and resources the webhook cares about.
  failurePolicy string: Ignore or Fail (default): what an error calling the webhook does.
  matchPolicy string: Exact or Equivalent (default).
  namespaceSelector LabelSelector: Only objects in namespaces matching it are sent.
  objectSelector LabelSelector: Only objects with labels matching it are sent.
  sideEffects! string: None or NoneOnDryRun.
  timeoutSeconds int32: Seconds to wait for the webhook, 1 to 30. Default 10.
  admissionReviewVersions! []string: AdmissionReview versions the webhook understands (v1).
  reinvocationPolicy string: Never (default) or IfNeeded.
  matchConditions []MatchCondition: CEL conditions an object must meet to be sent.
ValidatingWebhook: An admission webhook that may refuse the object.
  name! string: Fully qualified name of the webhook, e.g. imagepolicy.kubernetes.io.
  clientConfig! WebhookClientConfig: How to reach the webhook.
  rules []RuleWithOperations: Operations and resources the webhook cares about.
  failurePolicy string: Ignore or Fail (default): what an error calling the webhook does.
  matchPolicy string: Exact or Equivalent (default).
  namespaceSelector LabelSelector: Only objects in namespaces matching it are sent.
  objectSelector LabelSelector: Only objects with labels matching it are sent.
  sideEffects! string: None or NoneOnDryRun.
  timeoutSeconds int32: Seconds to wait for the webhook, 1 to 30. Default 10.
  admissionReviewVersions! []string: AdmissionReview versions the webhook understands (v1).
  matchConditions []MatchCondition: CEL conditions an object must meet to be sent.
WebhookClientConfig: How the API server reaches a webhook.
  url string: https URL of the webhook.
  service ServiceReference: A service in the cluster serving the webhook.
  caBundle byte: PEM bundle of the CA that signed the webhook's serving certificate.
ServiceReference: A service serving a webhook.
  namespace! string: Namespace of the service.
  name! string: Name of the service.
  path string: URL path of the webhook.
  port int32: Port of the service. Default 443.
RuleWithOperations: Operations and resources a webhook is called for.
  operations []string: CREATE, UPDATE, DELETE, CONNECT or *.
  apiGroups []string: API groups, "" for core, * for all.
  apiVersions []string: API versions, * for all.
  resources []string: Resources, with subresources as pods/status; * for all.
  scope string: Cluster, Namespaced or * (default).
MatchCondition: A CEL condition.
  name! string: Name of the condition.
  expression! string: CEL expression.

package io.k8s.api.apiextensions.v1
CustomResourceDefinition @apiextensions.k8s.io/v1 +list: CustomResourceDefinition represents a resource that should be exposed on the API server. Its name MUST be in the format <.spec.name>.<.spec.group>.
  spec! CustomResourceDefinitionSpec: Describes how the user wants the resources to appear.
  status CustomResourceDefinitionStatus: The actual state of the CustomResourceDefinition.
CustomResourceDefinitionSpec: How the resources of a CRD appear.
  group! string: The API group of the defined resource, e.g. stable.example.com.
  names! CustomResourceDefinitionNames: Resource and kind names.
  scope! string: Cluster or Namespaced.
  versions! []CustomResourceDefinitionVersion: The served versions; exactly one is stored.
  conversion CustomResourceConversion: How objects convert between versions.
  preserveUnknownFields boolean: Deprecated; must be false.
CustomResourceDefinitionNames: The names of the defined resource.
  plural! string: Plural name used in URLs, e.g. crontabs.
  singular string: Singular name, lowercase kind by default.
  shortNames []string: Short names for kubectl, e.g. ct.
  kind! string: The serialized kind, e.g. CronTab.
  listKind string: The kind of lists, kind + List by default.
  categories []string: Groups of resources the resource belongs to, e.g. all.
CustomResourceDefinitionVersion: One version of the defined resource.
  name! string: Version name, e.g. v1 or v1beta1.
  served! boolean: Whether the version is served.
  storage! boolean: Whether objects are stored in this version; exactly one version is.
  deprecated boolean: Whether the version is deprecated.
  deprecationWarning string: Warning returned to clients of a deprecated version.
  schema CustomResourceValidation: The schema of the version.
  subresources CustomResourceSubresources: The status and scale subresources.
  additionalPrinterColumns []CustomResourceColumnDefinition: Columns of kubectl get.
  selectableFields []SelectableField: Fields usable in field selectors.
CustomResourceValidation: The schema of a version.
  openAPIV3Schema object: The OpenAPI v3 (structural) schema of the objects.
CustomResourceSubresources: Subresources of a version.
  status object: Enables the status subresource.
  scale CustomResourceSubresourceScale: Enables the scale subresource.
CustomResourceSubresourceScale: Where the scale subresource reads and writes.
  specReplicasPath! string: JSON path of the desired replicas, under .spec.
  statusReplicasPath! string: JSON path of the observed replicas, under .status.
  labelSelectorPath string: JSON path of the label selector string.
CustomResourceColumnDefinition: A column of kubectl get.
  name! string: Column name.
  type! string: integer, number, string, boolean or date.
  format string: Optional OpenAPI format.
  description string: Description of the column.
  priority int32: 0 shows always; higher only with -o wide.
  jsonPath! string: Simple JSON path of the value.
SelectableField: A field usable in field selectors.
  jsonPath! string: Simple JSON path of the field.
CustomResourceConversion: Conversion between versions.
  strategy! string: None or Webhook.
  webhook object: The conversion webhook.
CustomResourceDefinitionStatus: Observed state of a CRD.
  conditions []CustomResourceDefinitionCondition: NamesAccepted, Established, Terminating.
  acceptedNames CustomResourceDefinitionNames: The names actually served.
  storedVersions []string: Versions objects have ever been stored in.
CustomResourceDefinitionCondition: A condition of a CRD.
  type! string: NamesAccepted, Established or Terminating.
  status! string: True, False or Unknown.
  lastTransitionTime date-time: Last change of status.
  reason string: Machine-readable reason.
  message string: Human-readable message.
)schema";
}

}  // namespace minik8s::api::schema
