// Schemas of apps/v1 (Deployment, ReplicaSet, DaemonSet, StatefulSet, ControllerRevision) and
// batch/v1 (Job, CronJob).
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view appsBatchSchemaText() {
  return R"schema(
package io.k8s.api.apps.v1
Deployment @apps/v1 +list: A Deployment declares the desired state of a set of identical pods and rolls out changes to them through ReplicaSets.
  spec DeploymentSpec: Desired behavior of the Deployment.
  status DeploymentStatus: Most recently observed status of the Deployment.
DeploymentSpec: Desired state of a Deployment.
  replicas int32: Number of desired pods. Default 1.
  selector! LabelSelector: Label selector of the pods; must match the template's labels. Immutable.
  template! PodTemplateSpec: Template of the pods created.
  strategy DeploymentStrategy: How old pods are replaced by new ones.
  minReadySeconds int32: Seconds a new pod must be ready to count as available. Default 0.
  revisionHistoryLimit int32: Number of old ReplicaSets kept for rollback. Default 10.
  paused boolean: The deployment is paused: template changes do not start a rollout.
  progressDeadlineSeconds int32: Seconds to make progress before the rollout is reported failed. Default 600.
DeploymentStrategy: How a deployment replaces pods.
  type string: Recreate or RollingUpdate. Default RollingUpdate.
  rollingUpdate RollingUpdateDeployment: Parameters of RollingUpdate.
RollingUpdateDeployment: Rolling update parameters.
  maxUnavailable int-or-string: Pods that may be unavailable during the update, a number or a percentage. Default 25%.
  maxSurge int-or-string: Pods that may be created above the desired count, a number or a percentage. Default 25%.
DeploymentStatus: Observed state of a Deployment.
  observedGeneration int64: Generation the controller last acted on.
  replicas int32: Total non-terminated pods targeted by the deployment.
  updatedReplicas int32: Pods with the latest template.
  readyReplicas int32: Pods ready.
  availableReplicas int32: Pods ready for at least minReadySeconds.
  unavailableReplicas int32: Pods still needed for 100% availability.
  terminatingReplicas int32: Pods being terminated.
  conditions []DeploymentCondition: Available, Progressing, ReplicaFailure.
  collisionCount int32: Count of template hash collisions.
DeploymentCondition: A condition of a deployment.
  type! string: Available, Progressing or ReplicaFailure.
  status! string: True, False or Unknown.
  lastUpdateTime date-time: Last time the condition was updated.
  lastTransitionTime date-time: Last time the status changed.
  reason string: Machine-readable reason, e.g. NewReplicaSetAvailable.
  message string: Human-readable details.
ReplicaSet @apps/v1 +list: A ReplicaSet keeps a given number of pod replicas running.
  spec ReplicaSetSpec: Desired behavior of the ReplicaSet.
  status ReplicaSetStatus: Most recently observed status of the ReplicaSet.
ReplicaSetSpec: Desired state of a ReplicaSet.
  replicas int32: Number of desired pods. Default 1.
  minReadySeconds int32: Seconds a new pod must be ready to count as available.
  selector! LabelSelector: Label selector of the pods; must match the template's labels.
  template PodTemplateSpec: Template of the pods created when too few exist.
ReplicaSetStatus: Observed state of a ReplicaSet.
  replicas! int32: Current number of pods.
  fullyLabeledReplicas int32: Pods whose labels match the template's.
  readyReplicas int32: Pods ready.
  availableReplicas int32: Pods available.
  terminatingReplicas int32: Pods being terminated.
  observedGeneration int64: Generation last acted on.
  conditions []ReplicaSetCondition: Conditions of the ReplicaSet.
ReplicaSetCondition: A condition of a ReplicaSet.
  type! string: ReplicaFailure.
  status! string: True, False or Unknown.
  lastTransitionTime date-time: Last status change.
  reason string: Machine-readable reason.
  message string: Human-readable details.
DaemonSet @apps/v1 +list: A DaemonSet runs a copy of a pod on every eligible node.
  spec DaemonSetSpec: Desired behavior of the daemon set.
  status DaemonSetStatus: Most recently observed status of the daemon set.
DaemonSetSpec: Desired state of a daemon set.
  selector! LabelSelector: Label selector of the pods; must match the template's labels. Immutable.
  template! PodTemplateSpec: Template of the pod run on each eligible node.
  updateStrategy DaemonSetUpdateStrategy: How pods are replaced when the template changes.
  minReadySeconds int32: Seconds a new pod must be ready to count as available. Default 0.
  revisionHistoryLimit int32: Old ControllerRevisions kept for rollback. Default 10.
DaemonSetUpdateStrategy: How a daemon set replaces pods.
  type string: RollingUpdate (default) or OnDelete.
  rollingUpdate RollingUpdateDaemonSet: Parameters of RollingUpdate.
RollingUpdateDaemonSet: Rolling update parameters of a daemon set.
  maxUnavailable int-or-string: Nodes whose pod may be unavailable during the update, a number or a percentage. Default 1.
  maxSurge int-or-string: Nodes that may run an old and a new pod at once, a number or a percentage. Default 0.
DaemonSetStatus: Observed state of a daemon set.
  currentNumberScheduled! int32: Nodes that run at least one daemon pod and should.
  numberMisscheduled! int32: Nodes that run a daemon pod but should not.
  desiredNumberScheduled! int32: Nodes that should run the daemon pod.
  numberReady! int32: Nodes whose daemon pod is ready.
  observedGeneration int64: Generation the controller last acted on.
  updatedNumberScheduled int32: Nodes running the updated daemon pod.
  numberAvailable int32: Nodes whose daemon pod is available.
  numberUnavailable int32: Nodes that should run an available daemon pod and do not.
  collisionCount int32: Count of hash collisions.
  conditions []DaemonSetCondition: Conditions of the daemon set.
DaemonSetCondition: A condition of a daemon set.
  type! string: Type of the condition.
  status! string: True, False or Unknown.
  lastTransitionTime date-time: Last status change.
  reason string: Machine-readable reason.
  message string: Human-readable details.
StatefulSet @apps/v1 +list: A StatefulSet runs pods with stable names, network identities and storage, started and updated in order.
  spec StatefulSetSpec: Desired behavior of the stateful set.
  status StatefulSetStatus: Most recently observed status of the stateful set.
StatefulSetSpec: Desired state of a stateful set.
  replicas int32: Number of desired pods, NAME-0 to NAME-(replicas-1). Default 1.
  selector! LabelSelector: Label selector of the pods; must match the template's labels. Immutable.
  template! PodTemplateSpec: Template of the pods.
  volumeClaimTemplates []object: PersistentVolumeClaims each pod gets, named TEMPLATE-NAME-ORDINAL.
  serviceName string: The headless Service that gives each pod its DNS name POD.SERVICE.NAMESPACE.svc.
  podManagementPolicy string: OrderedReady (default: one at a time, in order) or Parallel.
  updateStrategy StatefulSetUpdateStrategy: How pods are replaced when the template changes.
  revisionHistoryLimit int32: Old ControllerRevisions kept for rollback. Default 10.
  minReadySeconds int32: Seconds a new pod must be ready to count as available. Default 0.
  persistentVolumeClaimRetentionPolicy object: Whether claims are deleted with the set or on scale-down.
  ordinals object: The first ordinal (start). Default 0.
StatefulSetUpdateStrategy: How a stateful set replaces pods.
  type string: RollingUpdate (default) or OnDelete.
  rollingUpdate RollingUpdateStatefulSetStrategy: Parameters of RollingUpdate.
RollingUpdateStatefulSetStrategy: Rolling update parameters of a stateful set.
  partition int32: Only pods with an ordinal at or above it are updated. Default 0.
  maxUnavailable int-or-string: Pods that may be unavailable during the update. Default 1.
StatefulSetStatus: Observed state of a stateful set.
  observedGeneration int64: Generation the controller last acted on.
  replicas! int32: Pods created.
  readyReplicas int32: Pods ready.
  currentReplicas int32: Pods at currentRevision.
  updatedReplicas int32: Pods at updateRevision.
  availableReplicas int32: Pods ready for at least minReadySeconds.
  currentRevision string: The revision of the pods before the update in progress.
  updateRevision string: The revision of the current template.
  collisionCount int32: Count of hash collisions.
  conditions []StatefulSetCondition: Conditions of the stateful set.
StatefulSetCondition: A condition of a stateful set.
  type! string: Type of the condition.
  status! string: True, False or Unknown.
  lastTransitionTime date-time: Last status change.
  reason string: Machine-readable reason.
  message string: Human-readable details.
ControllerRevision @apps/v1 +list: An immutable snapshot of state data, kept by DaemonSet and StatefulSet controllers for rollback.
  data object: The state data (a strategic merge patch of the owner's template).
  revision! int64: The revision number.

package io.k8s.api.batch.v1
Job @batch/v1 +list: A Job runs pods until a given number of them complete successfully.
  spec JobSpec: Desired behavior of the job.
  status JobStatus: Most recently observed status of the job.
JobSpec: Desired state of a job.
  parallelism int32: Maximum pods running at once. Default 1.
  completions int32: Successful pods needed. Default 1; null means any one success completes the job.
  activeDeadlineSeconds int64: Seconds the job may run before it is failed.
  podFailurePolicy object: Rules deciding how pod failures count.
  successPolicy object: Rules declaring the job succeeded early.
  backoffLimit int32: Retries before the job is failed. Default 6.
  backoffLimitPerIndex int32: Retries per index of an Indexed job.
  maxFailedIndexes int32: Failed indexes tolerated before the job fails.
  selector LabelSelector: Selector of the pods; generated by default.
  manualSelector boolean: Use the given selector instead of a generated one.
  template! PodTemplateSpec: Template of the pods; restartPolicy must be Never or OnFailure.
  ttlSecondsAfterFinished int32: Seconds after finishing before the job is deleted.
  completionMode string: NonIndexed or Indexed.
  suspend boolean: Do not create pods while true.
  podReplacementPolicy string: TerminatingOrFailed or Failed.
  managedBy string: Controller managing the job.
JobStatus: Observed state of a job.
  conditions []JobCondition: Complete, Failed, Suspended, ...
  startTime date-time: When the job controller started the job.
  completionTime date-time: When the job completed.
  active int32: Pods running.
  succeeded int32: Pods succeeded.
  failed int32: Pods failed.
  terminating int32: Pods terminating.
  completedIndexes string: Completed indexes of an Indexed job.
  failedIndexes string: Failed indexes of an Indexed job.
  uncountedTerminatedPods object: Finished pods not yet counted.
  ready int32: Pods ready.
JobCondition: A condition of a job.
  type! string: Complete, Failed, Suspended, FailureTarget or SuccessCriteriaMet.
  status! string: True, False or Unknown.
  lastProbeTime date-time: Last probe time.
  lastTransitionTime date-time: Last status change.
  reason string: Machine-readable reason.
  message string: Human-readable details.
CronJob @batch/v1 +list: A CronJob creates Jobs on a repeating schedule.
  spec CronJobSpec: Desired behavior of the cron job, including the schedule.
  status CronJobStatus: Current status of the cron job.
CronJobSpec: Desired state of a cron job.
  schedule! string: The schedule in Cron format (five fields, or @hourly, @daily...).
  timeZone string: IANA time zone of the schedule, e.g. Europe/Berlin. Default: the controller's (UTC).
  startingDeadlineSeconds int64: Seconds after a missed scheduled time within which the job may still start.
  concurrencyPolicy string: Allow (default), Forbid or Replace concurrent runs.
  suspend boolean: Do not start new jobs while true. Default false.
  jobTemplate! JobTemplateSpec: The job to create at each scheduled time.
  successfulJobsHistoryLimit int32: Finished successful jobs kept. Default 3.
  failedJobsHistoryLimit int32: Finished failed jobs kept. Default 1.
JobTemplateSpec: A job created from a template.
  metadata ObjectMeta: Metadata of the jobs created.
  spec JobSpec: Specification of the jobs created.
CronJobStatus: Observed state of a cron job.
  active []ObjectReference: Jobs that are running.
  lastScheduleTime date-time: When a job was last successfully scheduled.
  lastSuccessfulTime date-time: When a job last completed successfully.
)schema";
}

}  // namespace minik8s::api::schema
