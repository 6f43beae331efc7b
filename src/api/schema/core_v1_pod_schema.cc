// Schemas of core/v1 Pod and everything a PodSpec holds (containers, volumes, scheduling).
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view coreV1SchemaText() {
  return R"schema(
package io.k8s.api.core.v1
Pod @v1 +list: A Pod is a group of containers that share network and storage and are scheduled together onto one node.
  spec PodSpec: Desired behavior of the pod: containers, volumes, scheduling constraints.
  status PodStatus: Most recently observed status of the pod; written by the kubelet.
PodSpec: Desired state of a pod.
  containers! []Container: Containers of the pod, at least one. Cannot be added or removed after creation.
  initContainers []Container: Containers run to completion, in order, before the app containers start.
  ephemeralContainers []EphemeralContainer: Debugging containers added to a running pod through the ephemeralcontainers subresource.
  volumes []Volume: Volumes the containers of the pod can mount.
  restartPolicy string: Always, OnFailure or Never. Default Always.
  terminationGracePeriodSeconds int64: Seconds between SIGTERM and SIGKILL when the pod is deleted. Default 30.
  activeDeadlineSeconds int64: Seconds the pod may be active before the system fails it.
  dnsPolicy string: ClusterFirst, ClusterFirstWithHostNet, Default or None. Default ClusterFirst.
  dnsConfig PodDNSConfig: DNS parameters merged into the generated resolv.conf.
  nodeSelector map[string]: Labels a node must carry for the pod to be scheduled on it.
  serviceAccountName string: Service account the pod runs as.
  serviceAccount string: Deprecated alias of serviceAccountName.
  automountServiceAccountToken boolean: Whether the service account token is mounted.
  nodeName string: Node the pod is bound to; set by the scheduler through the binding subresource.
  hostNetwork boolean: Use the node's network namespace.
  hostPID boolean: Use the node's PID namespace.
  hostIPC boolean: Use the node's IPC namespace.
  shareProcessNamespace boolean: Share one PID namespace between the containers of the pod.
  securityContext PodSecurityContext: Pod-level security attributes and common container settings.
  imagePullSecrets []LocalObjectReference: Secrets used to pull the images.
  hostname string: Hostname of the pod; defaults to the pod name.
  subdomain string: Subdomain giving the pod the FQDN <hostname>.<subdomain>.<namespace>.svc.<cluster-domain>.
  affinity Affinity: Node and pod affinity and anti-affinity scheduling constraints.
  schedulerName string: Scheduler that places the pod. Default default-scheduler.
  tolerations []Toleration: Taints the pod tolerates.
  hostAliases []HostAlias: Extra entries for the pod's /etc/hosts.
  priorityClassName string: Name of the PriorityClass giving the pod its priority.
  priority int32: Priority value resolved from priorityClassName.
  preemptionPolicy string: Never or PreemptLowerPriority.
  readinessGates []PodReadinessGate: Extra conditions that must be true for the pod to be ready.
  runtimeClassName string: RuntimeClass used to run the pod.
  enableServiceLinks boolean: Inject service environment variables. Default true.
  overhead map[quantity]: Resource overhead of running the pod sandbox.
  topologySpreadConstraints []TopologySpreadConstraint: How pods spread across topology domains.
  setHostnameAsFQDN boolean: Set the hostname to the pod's FQDN.
  os PodOS: Operating system the containers need.
  hostUsers boolean: Use the host user namespace. Default true.
Container: A single application container of a pod.
  name! string: Name of the container, a DNS label unique within the pod.
  image string: Container image reference, e.g. nginx:1.27.
  command []string: Entrypoint array, not run in a shell; replaces the image ENTRYPOINT. $(VAR) references are expanded.
  args []string: Arguments to the entrypoint; replace the image CMD.
  workingDir string: Working directory; defaults to the image's.
  ports []ContainerPort: Ports the container exposes (informational, used by services by name).
  envFrom []EnvFromSource: Sources (ConfigMaps, Secrets) whose keys become environment variables.
  env []EnvVar: Environment variables to set in the container.
  resources ResourceRequirements: Compute resources: requests used for scheduling, limits enforced at runtime.
  resizePolicy []ContainerResizePolicy: How resources are resized in place.
  restartPolicy string: For init containers only: Always makes it a sidecar.
  volumeMounts []VolumeMount: Pod volumes mounted into the container's filesystem.
  volumeDevices []VolumeDevice: Block devices the container uses.
  livenessProbe Probe: Periodic check of liveness; the container restarts when it fails.
  readinessProbe Probe: Periodic check of readiness; the pod leaves service endpoints when it fails.
  startupProbe Probe: Check that the container has started; other probes wait for it.
  lifecycle Lifecycle: Actions run right after start and right before stop.
  terminationMessagePath string: File the termination message is read from. Default /dev/termination-log.
  terminationMessagePolicy string: File or FallbackToLogsOnError.
  imagePullPolicy string: Always, Never or IfNotPresent. Defaults to Always for :latest, else IfNotPresent.
  securityContext SecurityContext: Security options of the container.
  stdin boolean: Allocate a buffer for stdin.
  stdinOnce boolean: Close stdin after the first attach session.
  tty boolean: Allocate a TTY; needs stdin.
EphemeralContainer: A temporary container added to a running pod for debugging.
  name! string: Name of the ephemeral container.
  image string: Container image reference.
  command []string: Entrypoint array.
  args []string: Arguments to the entrypoint.
  workingDir string: Working directory.
  env []EnvVar: Environment variables.
  envFrom []EnvFromSource: Environment variable sources.
  volumeMounts []VolumeMount: Volume mounts.
  imagePullPolicy string: Image pull policy.
  securityContext SecurityContext: Security options.
  stdin boolean: Allocate a buffer for stdin.
  stdinOnce boolean: Close stdin after the first attach.
  tty boolean: Allocate a TTY.
  targetContainerName string: Container whose namespaces this one joins.
  terminationMessagePath string: Path of the termination message file.
  terminationMessagePolicy string: File or FallbackToLogsOnError.
ContainerPort: A network port of a container.
  containerPort! int32: Port number on the pod's IP address (1-65535).
  name string: IANA_SVC_NAME, unique in the pod; services may refer to it.
  protocol string: TCP, UDP or SCTP. Default TCP.
  hostPort int32: Port exposed on the node's IP.
  hostIP string: Node IP the host port binds to.
EnvVar: An environment variable of a container.
  name! string: Name of the variable.
  value string: Value; $(VAR) references to earlier variables are expanded.
  valueFrom EnvVarSource: Source of the value; cannot be used with value.
EnvVarSource: Where an environment variable's value comes from.
  fieldRef ObjectFieldSelector: A field of the pod: metadata.name, metadata.namespace, status.podIP, spec.nodeName, ...
  resourceFieldRef ResourceFieldSelector: A resource limit or request of a container.
  configMapKeyRef ConfigMapKeySelector: A key of a ConfigMap.
  secretKeyRef SecretKeySelector: A key of a Secret.
EnvFromSource: A source whose keys all become environment variables.
  prefix string: Prefix added to every key.
  configMapRef ConfigMapEnvSource: The ConfigMap to read.
  secretRef SecretEnvSource: The Secret to read.
ConfigMapEnvSource: A ConfigMap used as environment.
  name string: Name of the ConfigMap.
  optional boolean: Do not fail when the ConfigMap is missing.
SecretEnvSource: A Secret used as environment.
  name string: Name of the Secret.
  optional boolean: Do not fail when the Secret is missing.
ConfigMapKeySelector: One key of a ConfigMap.
  name string: Name of the ConfigMap.
  key! string: The key to select.
  optional boolean: Do not fail when the ConfigMap or key is missing.
SecretKeySelector: One key of a Secret.
  name string: Name of the Secret.
  key! string: The key to select.
  optional boolean: Do not fail when the Secret or key is missing.
ObjectFieldSelector: A field of the pod object.
  apiVersion string: Version of the schema the path is written in. Default v1.
  fieldPath! string: Path of the field, e.g. metadata.labels['app'].
ResourceFieldSelector: A container resource.
  containerName string: Container name; required for volumes.
  resource! string: limits.cpu, limits.memory, requests.cpu, ...
  divisor quantity: Output unit. Default 1.
ResourceRequirements: Compute resources of a container.
  limits map[quantity]: Maximum amount of each resource (cpu, memory, ephemeral-storage).
  requests map[quantity]: Minimum amount of each resource, used for scheduling; defaults to limits.
  claims []ResourceClaim: Dynamic resource claims used by the container.
ResourceClaim: A resource claim of the pod used by a container.
  name! string: Name of the claim in pod.spec.resourceClaims.
  request string: Request within the claim.
ContainerResizePolicy: Resize policy of one resource.
  resourceName! string: cpu or memory.
  restartPolicy! string: NotRequired or RestartContainer.
VolumeMount: A volume mounted into a container.
  name! string: Name of the pod volume.
  mountPath! string: Path in the container; must not contain ':'.
  subPath string: Path within the volume to mount instead of its root.
  subPathExpr string: Like subPath, with $(VAR) expansion.
  readOnly boolean: Mount read-only.
  recursiveReadOnly string: Disabled, IfPossible or Enabled.
  mountPropagation string: None, HostToContainer or Bidirectional.
VolumeDevice: A raw block volume in a container.
  name! string: Name of the pod volume (a PVC).
  devicePath! string: Path of the device in the container.
Probe: A health check run by the kubelet against a container.
  exec ExecAction: Run a command in the container; exit 0 is success.
  httpGet HTTPGetAction: HTTP GET; a status in 200-399 is success.
  tcpSocket TCPSocketAction: TCP connect; an open port is success.
  grpc GRPCAction: gRPC health check.
  initialDelaySeconds int32: Seconds after start before the first probe.
  timeoutSeconds int32: Seconds before a probe times out. Default 1.
  periodSeconds int32: Seconds between probes. Default 10.
  successThreshold int32: Consecutive successes needed after a failure. Default 1.
  failureThreshold int32: Consecutive failures that count as failed. Default 3.
  terminationGracePeriodSeconds int64: Grace period when a failed probe kills the container.
ExecAction: A command run in the container.
  command []string: Command line, run without a shell.
HTTPGetAction: An HTTP GET request.
  path string: Path to request.
  port! int-or-string: Port number or name.
  host string: Host to connect to; defaults to the pod IP.
  scheme string: HTTP or HTTPS. Default HTTP.
  httpHeaders []HTTPHeader: Extra request headers.
HTTPHeader: An HTTP header.
  name! string: Header name.
  value! string: Header value.
TCPSocketAction: A TCP connection attempt.
  port! int-or-string: Port number or name.
  host string: Host to connect to; defaults to the pod IP.
GRPCAction: A gRPC health check request.
  port! int32: Port number.
  service string: Service name sent in the HealthCheckRequest.
Lifecycle: Actions the kubelet runs at container lifecycle events.
  postStart LifecycleHandler: Run right after the container is created; failure restarts it.
  preStop LifecycleHandler: Run before the container is stopped; the grace period keeps counting.
  stopSignal string: Signal used to stop the container.
LifecycleHandler: One lifecycle action.
  exec ExecAction: Run a command.
  httpGet HTTPGetAction: Send an HTTP GET.
  tcpSocket TCPSocketAction: Deprecated TCP check.
  sleep SleepAction: Sleep for a while.
SleepAction: Sleep before continuing.
  seconds! int64: Seconds to sleep.
SecurityContext: Security options of one container; they override the pod's.
  capabilities Capabilities: Capabilities to add and drop.
  privileged boolean: Run privileged, like root on the host.
  seLinuxOptions SELinuxOptions: SELinux context.
  windowsOptions WindowsSecurityContextOptions: Windows-specific settings.
  runAsUser int64: UID the process runs as.
  runAsGroup int64: GID the process runs as.
  runAsNonRoot boolean: Refuse to start if the image runs as root.
  readOnlyRootFilesystem boolean: Mount the root filesystem read-only.
  allowPrivilegeEscalation boolean: Whether a process can gain more privileges than its parent.
  procMount string: Default or Unmasked.
  seccompProfile SeccompProfile: Seccomp profile.
  appArmorProfile AppArmorProfile: AppArmor profile.
Capabilities: Linux capabilities.
  add []string: Capabilities to add.
  drop []string: Capabilities to drop.
SELinuxOptions: SELinux labels.
  user string: SELinux user.
  role string: SELinux role.
  type string: SELinux type.
  level string: SELinux level.
WindowsSecurityContextOptions: Windows security settings.
  gmsaCredentialSpecName string: GMSA credential spec name.
  gmsaCredentialSpec string: GMSA credential spec.
  runAsUserName string: User name.
  hostProcess boolean: Run as a host process.
SeccompProfile: A seccomp profile.
  type! string: Localhost, RuntimeDefault or Unconfined.
  localhostProfile string: Profile file on the node, for Localhost.
AppArmorProfile: An AppArmor profile.
  type! string: Localhost, RuntimeDefault or Unconfined.
  localhostProfile string: Profile name loaded on the node, for Localhost.
PodSecurityContext: Pod-level security attributes.
  runAsUser int64: UID of the containers' processes.
  runAsGroup int64: GID of the containers' processes.
  runAsNonRoot boolean: Refuse to start containers running as root.
  fsGroup int64: Group owning the pod's volumes, added to every container.
  fsGroupChangePolicy string: OnRootMismatch or Always.
  supplementalGroups []int64: Extra groups of the first process of each container.
  supplementalGroupsPolicy string: Merge or Strict.
  sysctls []Sysctl: Namespaced sysctls set for the pod.
  seLinuxOptions SELinuxOptions: SELinux context of all containers.
  seLinuxChangePolicy string: MountOption or Recursive.
  seccompProfile SeccompProfile: Seccomp profile of all containers.
  appArmorProfile AppArmorProfile: AppArmor profile of all containers.
  windowsOptions WindowsSecurityContextOptions: Windows-specific settings.
Sysctl: A kernel parameter.
  name! string: Name of the sysctl.
  value! string: Value of the sysctl.
LocalObjectReference: A reference to an object in the same namespace.
  name string: Name of the referent.
PodDNSConfig: DNS settings of a pod.
  nameservers []string: DNS server IPs.
  searches []string: DNS search domains.
  options []PodDNSConfigOption: Resolver options.
PodDNSConfigOption: A resolver option.
  name string: Option name, e.g. ndots.
  value string: Option value.
HostAlias: An /etc/hosts entry.
  ip! string: IP address.
  hostnames []string: Hostnames for the IP.
PodReadinessGate: An extra readiness condition.
  conditionType! string: Condition type in the pod's conditions.
PodOS: Operating system of a pod.
  name! string: linux or windows.
Toleration: Allows scheduling onto nodes with a matching taint.
  key string: Taint key; empty with Exists matches all taints.
  operator string: Exists or Equal. Default Equal.
  value string: Taint value to match with Equal.
  effect string: NoSchedule, PreferNoSchedule or NoExecute; empty matches all.
  tolerationSeconds int64: For NoExecute: how long the pod stays bound after the taint appears.
TopologySpreadConstraint: How pods spread over a topology.
  maxSkew! int32: Maximum difference of matching pod counts between domains.
  topologyKey! string: Node label key defining the domains.
  whenUnsatisfiable! string: DoNotSchedule or ScheduleAnyway.
  labelSelector LabelSelector: Pods counted in each domain.
  minDomains int32: Minimum number of eligible domains.
  matchLabelKeys []string: Pod label keys whose values are added to the selector.
  nodeAffinityPolicy string: Honor or Ignore.
  nodeTaintsPolicy string: Honor or Ignore.
Affinity: Scheduling affinity rules.
  nodeAffinity NodeAffinity: Constraints on the nodes the pod may run on.
  podAffinity PodAffinity: Run near pods matching a selector.
  podAntiAffinity PodAntiAffinity: Run away from pods matching a selector.
NodeAffinity: Node affinity rules.
  requiredDuringSchedulingIgnoredDuringExecution NodeSelector: Hard requirement at scheduling time.
  preferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm: Weighted preferences.
NodeSelector: Terms ORed together.
  nodeSelectorTerms! []NodeSelectorTerm: The terms; at least one must match.
NodeSelectorTerm: Requirements ANDed together.
  matchExpressions []NodeSelectorRequirement: Requirements on node labels.
  matchFields []NodeSelectorRequirement: Requirements on node fields.
NodeSelectorRequirement: A requirement on a node label or field.
  key! string: Label key or field name.
  operator! string: In, NotIn, Exists, DoesNotExist, Gt or Lt.
  values []string: Values for the operator.
PreferredSchedulingTerm: A weighted node selector term.
  weight! int32: Weight 1-100.
  preference! NodeSelectorTerm: The term.
PodAffinity: Pod affinity rules.
  requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm: Hard requirements.
  preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm: Weighted preferences.
PodAntiAffinity: Pod anti-affinity rules.
  requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm: Hard requirements.
  preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm: Weighted preferences.
PodAffinityTerm: Pods matching the selector in the given namespaces, within a topology domain.
  labelSelector LabelSelector: Pods to match.
  namespaces []string: Namespaces to look in; default the pod's own.
  namespaceSelector LabelSelector: Namespaces to look in, by label.
  topologyKey! string: Node label key defining co-location.
  matchLabelKeys []string: Pod label keys added to the selector.
  mismatchLabelKeys []string: Pod label keys added negated to the selector.
WeightedPodAffinityTerm: A weighted pod affinity term.
  weight! int32: Weight 1-100.
  podAffinityTerm! PodAffinityTerm: The term.
Volume: A named volume of a pod.
  name! string: Name of the volume, a DNS label unique in the pod.
  emptyDir EmptyDirVolumeSource: A directory that lives as long as the pod.
  hostPath HostPathVolumeSource: A file or directory of the node.
  configMap ConfigMapVolumeSource: The keys of a ConfigMap as files.
  secret SecretVolumeSource: The keys of a Secret as files.
  persistentVolumeClaim PersistentVolumeClaimVolumeSource: A PersistentVolumeClaim in the pod's namespace.
  projected ProjectedVolumeSource: Several sources projected into one directory.
  downwardAPI DownwardAPIVolumeSource: Pod fields as files.
  nfs NFSVolumeSource: An NFS export.
EmptyDirVolumeSource: An empty directory for the pod's lifetime.
  medium string: Storage medium: empty for the node default, Memory for tmpfs.
  sizeLimit quantity: Maximum size of the directory.
HostPathVolumeSource: A path on the node.
  path! string: Path on the node.
  type string: "", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice or BlockDevice.
KeyToPath: Maps a key to a file path.
  key! string: The key.
  path! string: Relative path of the file.
  mode int32: File mode bits.
ConfigMapVolumeSource: A ConfigMap as a volume.
  name string: Name of the ConfigMap.
  items []KeyToPath: Keys to project; all keys when empty.
  defaultMode int32: Mode bits of the files. Default 0644.
  optional boolean: Do not fail when the ConfigMap is missing.
SecretVolumeSource: A Secret as a volume.
  secretName string: Name of the Secret.
  items []KeyToPath: Keys to project; all keys when empty.
  defaultMode int32: Mode bits of the files. Default 0644.
  optional boolean: Do not fail when the Secret is missing.
PersistentVolumeClaimVolumeSource: A reference to a PVC.
  claimName! string: Name of the PVC.
  readOnly boolean: Mount read-only.
NFSVolumeSource: An NFS mount.
  server! string: NFS server.
  path! string: Exported path.
  readOnly boolean: Mount read-only.
DownwardAPIVolumeSource: Pod information as files.
  items []DownwardAPIVolumeFile: Files to create.
  defaultMode int32: Mode bits of the files.
DownwardAPIVolumeFile: One downward API file.
  path! string: Relative path of the file.
  fieldRef ObjectFieldSelector: Pod field to write.
  resourceFieldRef ResourceFieldSelector: Container resource to write.
  mode int32: Mode bits of the file.
ProjectedVolumeSource: Sources projected into one directory.
  sources []VolumeProjection: The sources.
  defaultMode int32: Mode bits of the files.
VolumeProjection: One projected source.
  configMap ConfigMapProjection: Keys of a ConfigMap.
  secret SecretProjection: Keys of a Secret.
  downwardAPI DownwardAPIProjection: Pod fields.
  serviceAccountToken ServiceAccountTokenProjection: A service account token.
ConfigMapProjection: A ConfigMap in a projected volume.
  name string: Name of the ConfigMap.
  items []KeyToPath: Keys to project.
  optional boolean: Do not fail when missing.
SecretProjection: A Secret in a projected volume.
  name string: Name of the Secret.
  items []KeyToPath: Keys to project.
  optional boolean: Do not fail when missing.
DownwardAPIProjection: Pod fields in a projected volume.
  items []DownwardAPIVolumeFile: Files to create.
ServiceAccountTokenProjection: A service account token in a projected volume.
  audience string: Intended audience of the token.
  expirationSeconds int64: Requested lifetime of the token. Default 3600.
  path! string: Relative path of the token file.
PodStatus: Observed state of a pod.
  phase string: Pending, Running, Succeeded, Failed or Unknown.
  conditions []PodCondition: Current service state: PodScheduled, Initialized, ContainersReady, Ready.
  message string: Human-readable details of the pod's state.
  reason string: Brief reason of the pod's state, e.g. Evicted.
  nominatedNodeName string: Node the pod is expected to be placed on after preemption.
  hostIP string: IP of the node the pod runs on.
  hostIPs []HostIP: IPs of the node.
  podIP string: IP address of the pod.
  podIPs []PodIP: IP addresses of the pod.
  startTime date-time: When the kubelet acknowledged the pod.
  initContainerStatuses []ContainerStatus: Status of each init container.
  containerStatuses []ContainerStatus: Status of each container.
  ephemeralContainerStatuses []ContainerStatus: Status of each ephemeral container.
  qosClass string: Guaranteed, Burstable or BestEffort.
  resize string: Status of an in-place resize.
HostIP: An IP of the host.
  ip! string: The IP address.
PodIP: An IP of the pod.
  ip! string: The IP address.
PodCondition: A condition of a pod.
  type! string: PodScheduled, Initialized, ContainersReady, Ready, ...
  status! string: True, False or Unknown.
  lastProbeTime date-time: Last time the condition was probed.
  lastTransitionTime date-time: Last time the status changed.
  reason string: Machine-readable reason of the last transition.
  message string: Human-readable details of the last transition.
ContainerStatus: Observed state of one container.
  name! string: Name of the container.
  state ContainerState: Current state.
  lastState ContainerState: State of the previous run.
  ready! boolean: Whether the container passes its readiness probe.
  restartCount! int32: Number of restarts.
  image! string: Image the container runs.
  imageID! string: Resolved image ID.
  containerID string: <runtime>://<id> of the container.
  started boolean: Whether the container passed its startup probe.
  allocatedResources map[quantity]: Resources allocated to the container.
  resources ResourceRequirements: Resources actually configured.
ContainerState: Exactly one of waiting, running, terminated.
  waiting ContainerStateWaiting: The container is not running yet.
  running ContainerStateRunning: The container is running.
  terminated ContainerStateTerminated: The container has exited.
ContainerStateWaiting: A waiting container.
  reason string: Why it is waiting, e.g. ContainerCreating, CrashLoopBackOff, ImagePullBackOff.
  message string: Details.
ContainerStateRunning: A running container.
  startedAt date-time: When it started.
ContainerStateTerminated: An exited container.
  exitCode! int32: Exit code.
  signal int32: Signal that killed it.
  reason string: Brief reason, e.g. Completed, Error, OOMKilled.
  message string: Details.
  startedAt date-time: When it started.
  finishedAt date-time: When it exited.
  containerID string: ID of the container.
)schema";
}

}  // namespace minik8s::api::schema
