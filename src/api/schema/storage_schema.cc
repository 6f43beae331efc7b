// Schemas of storage: core/v1 PersistentVolume and PersistentVolumeClaim, storage.k8s.io/v1
// StorageClass, CSIDriver and CSINode.
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view storageSchemaText() {
  return R"schema(
package io.k8s.api.core.v1
PersistentVolume @v1 +list: A PersistentVolume is a piece of storage in the cluster, provisioned by an administrator or dynamically through a StorageClass, that a PersistentVolumeClaim binds to.
  spec PersistentVolumeSpec: Capacity, access modes and source of the volume.
  status PersistentVolumeStatus: Observed state of the volume (phase).
PersistentVolumeSpec: Desired state of a persistent volume. Exactly one volume source is set; it is immutable.
  capacity map[quantity]: Size of the volume: storage is the only key.
  accessModes []string: How the volume can be mounted: ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.
  claimRef ObjectReference: The PersistentVolumeClaim bound to the volume (or reserved for it).
  persistentVolumeReclaimPolicy string: What happens when the claim is released: Retain (default for manual volumes), Delete or Recycle.
  storageClassName string: Name of the StorageClass the volume belongs to; empty for no class.
  mountOptions []string: Mount options, e.g. ro or soft; not validated.
  volumeMode string: Filesystem (default) or Block.
  nodeAffinity VolumeNodeAffinity: Nodes the volume can be used from; required for local volumes.
  volumeAttributesClassName string: Name of the VolumeAttributesClass of the volume.
  hostPath HostPathVolumeSource: A directory on the node, for single-node testing.
  local LocalVolumeSource: A disk, partition or directory of one node; needs nodeAffinity.
  csi CSIPersistentVolumeSource: A volume of an external CSI driver.
  nfs NFSVolumeSource: An NFS export.
  awsElasticBlockStore object: Deprecated AWS EBS disk (use the ebs.csi.aws.com CSI driver).
  azureDisk object: Deprecated Azure data disk (use the disk.csi.azure.com CSI driver).
  azureFile object: Deprecated Azure File share (use the file.csi.azure.com CSI driver).
  cephfs object: A Ceph filesystem.
  cinder object: Deprecated OpenStack Cinder volume (use the cinder.csi.openstack.org CSI driver).
  fc object: A Fibre Channel disk.
  flexVolume object: A volume of a FlexVolume driver.
  flocker object: A Flocker dataset.
  gcePersistentDisk object: Deprecated GCE persistent disk (use the pd.csi.storage.gke.io CSI driver).
  glusterfs object: A Glusterfs volume.
  iscsi object: An iSCSI disk.
  photonPersistentDisk object: A Photon Controller persistent disk.
  portworxVolume object: A Portworx volume.
  quobyte object: A Quobyte volume.
  rbd object: A Rados Block Device.
  scaleIO object: A ScaleIO volume.
  storageos object: A StorageOS volume.
  vsphereVolume object: Deprecated vSphere volume (use the csi.vsphere.vmware.com CSI driver).
PersistentVolumeStatus: Observed state of a persistent volume.
  phase string: Pending, Available, Bound, Released or Failed.
  message string: Human-readable reason the volume is in its phase.
  reason string: Brief reason, e.g. for a Failed volume.
  lastPhaseTransitionTime date-time: When the volume last changed phase.
VolumeNodeAffinity: Nodes a volume can be accessed from.
  required NodeSelector: Hard node constraints.
LocalVolumeSource: Local storage of a node.
  path! string: Full path of the volume on the node: a directory or a block device.
  fsType string: Filesystem type to mount when path is a block device, e.g. ext4.
CSIPersistentVolumeSource: A volume managed by an external CSI driver.
  driver! string: Name of the driver, as in its CSIDriver object.
  volumeHandle! string: The driver's unique name of the volume.
  readOnly boolean: Publish the volume read-only. Default false.
  fsType string: Filesystem type to mount, e.g. ext4.
  volumeAttributes map[string]: Attributes of the volume passed to the driver.
  controllerPublishSecretRef SecretReference: Secret passed to ControllerPublishVolume and ControllerUnpublishVolume.
  nodeStageSecretRef SecretReference: Secret passed to NodeStageVolume.
  nodePublishSecretRef SecretReference: Secret passed to NodePublishVolume.
  controllerExpandSecretRef SecretReference: Secret passed to ControllerExpandVolume.
  nodeExpandSecretRef SecretReference: Secret passed to NodeExpandVolume.
SecretReference: A Secret in any namespace.
  name string: Name of the secret.
  namespace string: Namespace of the secret.
PersistentVolumeClaim @v1 +list: A PersistentVolumeClaim is a user's request for storage, bound to a PersistentVolume that satisfies it.
  spec PersistentVolumeClaimSpec: The storage asked for.
  status PersistentVolumeClaimStatus: Observed state of the claim (phase, bound capacity).
PersistentVolumeClaimSpec: Desired state of a claim. Immutable after creation, except resources.requests (growing only) and volumeName while empty.
  accessModes []string: Access modes the volume must have: ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.
  selector LabelSelector: Label query over volumes to consider for binding.
  resources VolumeResourceRequirements: Minimum resources the volume must have (requests.storage).
  volumeName string: Name of the PersistentVolume backing the claim.
  storageClassName string: Name of the StorageClass; empty string for no class, absent for the default class.
  volumeMode string: Filesystem (default) or Block.
  dataSource TypedLocalObjectReference: A VolumeSnapshot or PersistentVolumeClaim to populate the volume from.
  dataSourceRef TypedObjectReference: Any object to populate the volume from.
  volumeAttributesClassName string: Name of the VolumeAttributesClass of the claim.
VolumeResourceRequirements: Storage resources of a claim.
  limits map[quantity]: Maximum amount of storage.
  requests map[quantity]: Minimum amount of storage (storage key).
TypedLocalObjectReference: A typed reference to an object in the same namespace.
  apiGroup string: Group of the referent; empty for the core group.
  kind! string: Kind of the referent.
  name! string: Name of the referent.
TypedObjectReference: A typed reference to an object, possibly in another namespace.
  apiGroup string: Group of the referent; empty for the core group.
  kind! string: Kind of the referent.
  name! string: Name of the referent.
  namespace string: Namespace of the referent.
PersistentVolumeClaimStatus: Observed state of a claim.
  phase string: Pending, Bound or Lost.
  accessModes []string: Access modes of the bound volume.
  capacity map[quantity]: Actual resources of the bound volume.
  conditions []PersistentVolumeClaimCondition: Resizing, FileSystemResizePending, ...
  allocatedResources map[quantity]: Resources allocated to the claim during expansion.
  allocatedResourceStatuses map[string]: State of each resource being resized.
  currentVolumeAttributesClassName string: VolumeAttributesClass applied to the volume.
  modifyVolumeStatus ModifyVolumeStatus: State of a pending volume modification.
PersistentVolumeClaimCondition: A condition of a claim.
  type! string: Resizing, FileSystemResizePending, ModifyingVolume or ModifyVolumeError.
  status! string: True, False or Unknown.
  lastProbeTime date-time: Last time the condition was probed.
  lastTransitionTime date-time: Last status change.
  reason string: Machine-readable reason.
  message string: Human-readable details.
ModifyVolumeStatus: State of a volume modification.
  targetVolumeAttributesClassName string: The VolumeAttributesClass being applied.
  status! string: Pending, InProgress or Infeasible.
TopologySelectorTerm: Topology labels ANDed together.
  matchLabelExpressions []TopologySelectorLabelRequirement: Label requirements.
TopologySelectorLabelRequirement: A topology label and the values it may have.
  key! string: The label key.
  values! []string: Values the label may have; at least one.

package io.k8s.api.storage.v1
StorageClass @storage.k8s.io/v1 +list: A StorageClass describes a class of storage: the provisioner that creates its PersistentVolumes dynamically and the parameters it passes. Cluster-scoped.
  provisioner! string: Name of the volume plugin or CSI driver that provisions volumes. Immutable.
  parameters map[string]: Parameters for the provisioner. Immutable.
  reclaimPolicy string: Reclaim policy of the volumes provisioned: Delete (default) or Retain. Immutable.
  mountOptions []string: Mount options of the volumes provisioned, e.g. ro or soft.
  allowVolumeExpansion boolean: Claims of this class may grow.
  volumeBindingMode string: When volumes are bound and provisioned: Immediate (default) or WaitForFirstConsumer. Immutable.
  allowedTopologies []TopologySelectorTerm: Topologies volumes may be provisioned in; empty for any.
CSIDriver @storage.k8s.io/v1 +list: A CSIDriver tells Kubernetes how to work with a CSI volume driver installed in the cluster. Its name is the driver's name.
  spec! CSIDriverSpec: How the driver is used.
CSIDriverSpec: Properties of a CSI driver.
  attachRequired boolean: The driver needs ControllerPublishVolume (an attach step). Default true. Immutable.
  podInfoOnMount boolean: Pass pod name, namespace, UID and service account to NodePublishVolume. Default false.
  volumeLifecycleModes []string: Persistent and/or Ephemeral. Default [Persistent]. Immutable.
  storageCapacity boolean: The driver reports capacity through CSIStorageCapacity objects. Default false.
  fsGroupPolicy string: How fsGroup applies to volumes: ReadWriteOnceWithFSType (default), File or None.
  tokenRequests []TokenRequest: Service account tokens passed to NodePublishVolume.
  requiresRepublish boolean: Call NodePublishVolume periodically to remount. Default false.
  seLinuxMount boolean: The driver supports the -o context mount option. Default false.
TokenRequest: A service account token a CSI driver receives.
  audience! string: Intended audience of the token.
  expirationSeconds int64: Lifetime of the token.
CSINode @storage.k8s.io/v1 +list: A CSINode holds the CSI drivers installed on a node. Its name is the node's; the kubelet writes it.
  spec! CSINodeSpec: The drivers of the node.
CSINodeSpec: The CSI drivers a node serves.
  drivers! []CSINodeDriver: One entry per driver registered on the node.
CSINodeDriver: A CSI driver on one node.
  name! string: Name of the driver, as in its CSIDriver object.
  nodeID! string: The node as the driver names it (NodeGetInfo).
  topologyKeys []string: Node label keys the driver uses for topology (NodeGetInfo's accessible_topology).
  allocatable VolumeNodeResources: Limits of the driver's volumes on the node.
VolumeNodeResources: Volume limits of a driver on a node.
  count int32: Most volumes of the driver the node can use; unset for no limit.
)schema";
}

}  // namespace minik8s::api::schema
