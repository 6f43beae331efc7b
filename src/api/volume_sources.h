// The volume sources of a PodSpec volume, in the order Kubernetes checks them (when a volume has
// two, the second found is the one reported). Shared by defaulting and validation.
#pragma once

namespace minik8s::api {

inline constexpr const char* kVolumeSources[] = {"hostPath",
                                                 "emptyDir",
                                                 "gitRepo",
                                                 "awsElasticBlockStore",
                                                 "gcePersistentDisk",
                                                 "secret",
                                                 "nfs",
                                                 "iscsi",
                                                 "glusterfs",
                                                 "flocker",
                                                 "persistentVolumeClaim",
                                                 "rbd",
                                                 "cinder",
                                                 "cephfs",
                                                 "quobyte",
                                                 "downwardAPI",
                                                 "fc",
                                                 "flexVolume",
                                                 "configMap",
                                                 "azureFile",
                                                 "vsphereVolume",
                                                 "photonPersistentDisk",
                                                 "portworxVolume",
                                                 "azureDisk",
                                                 "scaleIO",
                                                 "storageos",
                                                 "csi",
                                                 "projected",
                                                 "ephemeral",
                                                 "image"};

}  // namespace minik8s::api
