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
)schema";
}

}  // namespace minik8s::api::schema
