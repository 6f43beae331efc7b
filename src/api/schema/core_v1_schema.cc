// Schemas of the core/v1 kinds other than Pod: services, endpoints, nodes, events, config.
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view coreV1OtherSchemaText() {
  return R"schema(
package io.k8s.api.core.v1
PodTemplateSpec: Template of the pods a controller creates.
  metadata ObjectMeta: Metadata of the created pods; labels must match the controller's selector.
  spec PodSpec: Spec of the created pods.
ObjectReference: A reference to any object.
  apiVersion string: API version of the referent.
  kind string: Kind of the referent.
  namespace string: Namespace of the referent.
  name string: Name of the referent.
  uid string: UID of the referent.
  resourceVersion string: Version of the referent the reference was made from.
  fieldPath string: Part of the object referred to, e.g. spec.containers{web}.
Binding @v1: Binds a pod to a node; posted by the scheduler to pods/binding.
  target! ObjectReference: The node to bind to.
Service @v1 +list: A Service is a stable virtual IP and DNS name load-balancing to the pods its selector matches.
  spec ServiceSpec: Desired behavior of the service.
  status ServiceStatus: Observed state of the service (load balancer).
ServiceSpec: Desired state of a service.
  ports []ServicePort: Ports the service exposes.
  selector map[string]: Pods with these labels receive the traffic; without a selector, endpoints are managed by hand.
  clusterIP string: Virtual IP, allocated when empty; None for a headless service.
  clusterIPs []string: Virtual IPs, one per IP family.
  type string: ClusterIP, NodePort, LoadBalancer or ExternalName. Default ClusterIP.
  externalIPs []string: Extra IPs the nodes accept traffic for.
  sessionAffinity string: ClientIP or None. Default None.
  sessionAffinityConfig SessionAffinityConfig: Settings of client-IP affinity.
  loadBalancerIP string: Deprecated requested load balancer IP.
  loadBalancerSourceRanges []string: Client CIDRs allowed through the load balancer.
  loadBalancerClass string: Load balancer implementation.
  externalName string: DNS name returned as a CNAME for type ExternalName.
  externalTrafficPolicy string: Cluster or Local.
  internalTrafficPolicy string: Cluster or Local.
  healthCheckNodePort int32: Health check node port for Local traffic policy.
  publishNotReadyAddresses boolean: Publish endpoints of pods that are not ready.
  ipFamilies []string: IPv4 and/or IPv6.
  ipFamilyPolicy string: SingleStack, PreferDualStack or RequireDualStack.
  allocateLoadBalancerNodePorts boolean: Allocate node ports for LoadBalancer services. Default true.
  trafficDistribution string: Preference of traffic distribution, e.g. PreferClose.
ServicePort: A port of a service.
  name string: Name of the port, required when there are several.
  protocol string: TCP, UDP or SCTP. Default TCP.
  appProtocol string: Application protocol, e.g. http.
  port! int32: Port the service listens on.
  targetPort int-or-string: Port number or name on the pods. Defaults to port.
  nodePort int32: Port on every node for NodePort and LoadBalancer services.
SessionAffinityConfig: Session affinity settings.
  clientIP ClientIPConfig: Client IP affinity settings.
ClientIPConfig: Client IP affinity.
  timeoutSeconds int32: Seconds the affinity lasts. Default 10800.
ServiceStatus: Observed state of a service.
  loadBalancer LoadBalancerStatus: The load balancer, if any.
  conditions []Condition: Conditions of the service.
LoadBalancerStatus: A load balancer.
  ingress []LoadBalancerIngress: Ingress points.
LoadBalancerIngress: An ingress point of a load balancer.
  ip string: IP address.
  hostname string: Host name.
  ipMode string: VIP or Proxy.
  ports []PortStatus: Port states.
PortStatus: State of a load balancer port.
  port! int32: Port number.
  protocol! string: Protocol.
  error string: Error of the port, if any.
Endpoints @v1 +list: The addresses behind a service, grouped in subsets; maintained by the endpoints controller.
  subsets []EndpointSubset: Sets of addresses sharing ports.
EndpointSubset: Addresses and the ports they all serve.
  addresses []EndpointAddress: Ready addresses.
  notReadyAddresses []EndpointAddress: Addresses not ready yet.
  ports []EndpointPort: Ports of the addresses.
EndpointAddress: An endpoint address.
  ip! string: IP of the endpoint.
  hostname string: Hostname of the endpoint.
  nodeName string: Node hosting the endpoint.
  targetRef ObjectReference: The pod behind the address.
EndpointPort: A port of an endpoint.
  name string: Name matching the service port.
  port! int32: Port number.
  protocol string: TCP, UDP or SCTP.
  appProtocol string: Application protocol.
Node @v1 +list: A Node is a worker machine running a kubelet; pods are scheduled onto nodes.
  spec NodeSpec: Configuration of the node.
  status NodeStatus: Most recently observed status of the node, reported by its kubelet.
NodeSpec: Configuration of a node.
  podCIDR string: Pod IP range of the node.
  podCIDRs []string: Pod IP ranges of the node.
  providerID string: Cloud provider ID.
  unschedulable boolean: Keep new pods off the node (kubectl cordon).
  taints []Taint: Taints repelling pods that do not tolerate them.
  configSource object: Deprecated.
  externalID string: Deprecated.
Taint: A taint on a node.
  key! string: Taint key.
  value string: Taint value.
  effect! string: NoSchedule, PreferNoSchedule or NoExecute.
  timeAdded date-time: When a NoExecute taint was added.
NodeStatus: Observed state of a node.
  capacity map[quantity]: Total resources of the node.
  allocatable map[quantity]: Resources available to pods.
  phase string: Deprecated.
  conditions []NodeCondition: Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable.
  addresses []NodeAddress: Addresses of the node.
  daemonEndpoints NodeDaemonEndpoints: Ports of the node's daemons.
  nodeInfo NodeSystemInfo: Versions and identifiers of the node.
  images []ContainerImage: Images on the node.
  volumesInUse []string: Volumes in use.
  volumesAttached []object: Volumes attached.
  config object: Dynamic config status.
  runtimeHandlers []object: Runtime handlers.
  features object: Features supported by the node.
NodeCondition: A condition of a node.
  type! string: Ready, MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable.
  status! string: True, False or Unknown.
  lastHeartbeatTime date-time: Last time the condition was reported.
  lastTransitionTime date-time: Last time the status changed.
  reason string: Machine-readable reason.
  message string: Human-readable details.
NodeAddress: An address of a node.
  type! string: Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.
  address! string: The address.
NodeDaemonEndpoints: Endpoints of daemons on a node.
  kubeletEndpoint DaemonEndpoint: The kubelet's endpoint.
DaemonEndpoint: A daemon's port.
  Port! int32: Port number.
NodeSystemInfo: Identity and versions of a node.
  machineID! string: Machine ID.
  systemUUID! string: System UUID.
  bootID! string: Boot ID.
  kernelVersion! string: Kernel version (uname -r).
  osImage! string: OS image, e.g. Debian GNU/Linux 12.
  containerRuntimeVersion! string: Container runtime, e.g. containerd://1.6.
  kubeletVersion! string: Kubelet version.
  kubeProxyVersion! string: Deprecated.
  operatingSystem! string: linux.
  architecture! string: amd64, arm64, ...
ContainerImage: An image on a node.
  names []string: Names of the image.
  sizeBytes int64: Size of the image.
Event @v1 +list: An Event reports something that happened to an object, e.g. a pod being scheduled or a container failing.
  involvedObject! ObjectReference: The object the event is about.
  reason string: Machine-readable reason, e.g. Scheduled, Pulled, BackOff.
  message string: Human-readable description.
  source EventSource: Component reporting the event.
  firstTimestamp date-time: First time the event was recorded.
  lastTimestamp date-time: Most recent time the event was recorded.
  count int32: Number of times the event occurred.
  type string: Normal or Warning.
  eventTime date-time: Time the event was first observed, with microseconds.
  series object: Data about a series of events.
  action string: Action taken or failed.
  related ObjectReference: A secondary object.
  reportingComponent string: Controller that emitted the event.
  reportingInstance string: Instance of the controller.
EventSource: The component that reported an event.
  component string: Component name, e.g. kubelet.
  host string: Node name.
ConfigMap @v1 +list: A ConfigMap holds non-confidential configuration data as key/value pairs for pods to consume.
  data map[string]: UTF-8 configuration data.
  binaryData map[byte]: Binary data, base64-encoded.
  immutable boolean: If true, the data can no longer be changed.
Secret @v1 +list: A Secret holds a small amount of sensitive data, such as a password, token or key.
  data map[byte]: Secret data, base64-encoded.
  stringData map[string]: Write-only convenience field: plain values merged into data on write.
  type string: Type of the secret, e.g. Opaque, kubernetes.io/tls, kubernetes.io/service-account-token.
  immutable boolean: If true, the data can no longer be changed.
ServiceAccount @v1 +list: A ServiceAccount is an identity for processes running in pods.
  secrets []ObjectReference: Secrets pods of this account may use.
  imagePullSecrets []LocalObjectReference: Secrets used to pull images for pods of this account.
  automountServiceAccountToken boolean: Whether pods mount the account's token by default.
Namespace @v1 +list: A Namespace is a scope for names; deleting it deletes everything in it.
  spec NamespaceSpec: Spec of the namespace.
  status NamespaceStatus: Status of the namespace.
NamespaceSpec: Spec of a namespace.
  finalizers []string: Finalizers to run before the namespace is removed.
NamespaceStatus: Status of a namespace.
  phase string: Active or Terminating.
  conditions []NamespaceCondition: Conditions of the namespace.
NamespaceCondition: A condition of a namespace.
  type! string: Type of the condition.
  status! string: True, False or Unknown.
  lastTransitionTime date-time: Last status change.
  reason string: Machine-readable reason.
  message string: Human-readable details.
)schema";
}

}  // namespace minik8s::api::schema
