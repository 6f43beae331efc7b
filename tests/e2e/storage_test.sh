#!/usr/bin/env bash
# Persistent volumes on a real 3-node cluster with the real kubectl (static provisioning): the
# Kubernetes docs' hostPath PersistentVolume and claim bind (smallest fit, both sides Bound,
# kubectl's columns), a pod writes through the claim and its replacement on another node reads
# it; a local volume with node affinity pulls its pod to that node; a claim in use is only
# deleted after its pod; the volume is then Released and kept (Retain); a claim of an unknown
# class stays Pending with an Event saying why; bad input gets 422 with field paths. Dynamic
# provisioning through the built-in CSI driver: a claim of the default class gets a volume that
# pods on all three nodes share, grows, and is deleted with its data (reclaim Delete); a
# claim of the node-local class local-path waits for its pod, gets a volume on the pod's node
# (nodeAffinity, data in that node's directory) that a replacement pod finds there, and is
# deleted with its data; a StatefulSet's claims follow its pods through deletion and scale-down.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

data=/tmp/minik8s-e2e-storage-data
rm -rf "$data"
mkdir -p "$data/local-2"
cleanup_data() { rm -rf "$data"; }

step "cluster up: 3 nodes"
start_cluster stor 172.29.121 3 || exit 1
trap 'rc=$?; cluster_down_quiet; cleanup_data; (exit $rc); cleanup' EXIT

step "static PersistentVolumes and a claim (the Kubernetes docs' task, hostPath)"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: task-pv-volume, labels: {type: local}}
spec:
  storageClassName: manual
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: "$data/task"}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: small-pv}
spec:
  storageClassName: manual
  capacity: {storage: 3Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: "$data/small", type: DirectoryOrCreate}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: task-pv-claim}
spec:
  storageClassName: manual
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 3Gi}}
YAML
wait_for 30 bash -c "kubectl get pvc task-pv-claim -o jsonpath='{.status.phase}' | grep -qx Bound" ||
  kubectl describe pvc task-pv-claim
expect_eq "$(kubectl get pvc task-pv-claim -o jsonpath='{.spec.volumeName}')" "small-pv" \
  "the smallest volume that fits"
out=$(kubectl get pv)
expect_contains "$out" "CAPACITY" "kubectl get pv columns"
expect_contains "$(grep small-pv <<<"$out" | tr -s ' ')" "small-pv 3Gi RWO Retain Bound default/task-pv-claim manual" \
  "kubectl get pv row"
expect_contains "$(kubectl get pv task-pv-volume)" "Available" "the other volume stays Available"
expect_contains "$(kubectl get pvc task-pv-claim | tr -s ' ')" "task-pv-claim Bound small-pv 3Gi RWO manual" \
  "kubectl get pvc row"

step "a pod writes through the claim; its replacement on another node reads it"
claim_pod() {  # NAME NODE CLAIM COMMAND: a pod on NODE with CLAIM mounted at /data
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $2
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes: [{name: data, persistentVolumeClaim: {claimName: $3}}]
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "$4"]
    volumeMounts: [{name: data, mountPath: /data}]
YAML
}
writer_reader() { claim_pod "$1" "$2" task-pv-claim "$3"; }
writer_reader writer node-1 "echo written-on-node-1 > /data/file && sleep 3600"
wait_for 60 bash -c "[[ -f $data/small/file ]]" || kubectl describe pod writer
kubectl delete pod writer --wait=true --timeout=60s >/dev/null
writer_reader reader node-3 "cat /data/file"
wait_for 60 bash -c "kubectl get pod reader -o jsonpath='{.status.phase}' | grep -qx Succeeded"
expect_eq "$(kubectl logs reader)" "written-on-node-1" "the data followed the claim to node-3"

step "a claim in use is deleted only after its pod; its volume is then Released and kept"
writer_reader holder node-2 "sleep 3600"
wait_for 60 bash -c "kubectl get pod holder -o jsonpath='{.status.phase}' | grep -qx Running"
kubectl delete pod reader --wait=false >/dev/null
kubectl delete pvc task-pv-claim --wait=false >/dev/null
sleep 2
expect_contains "$(kubectl get pvc task-pv-claim 2>&1)" "Terminating" "the claim waits for its pod"
kubectl delete pod holder --wait=false >/dev/null
wait_for 60 bash -c "! kubectl get pvc task-pv-claim >/dev/null 2>&1" || fail "claim not deleted after its pod"
wait_for 30 bash -c "kubectl get pv small-pv -o jsonpath='{.status.phase}' | grep -qx Released"
expect_eq "$(cat "$data/small/file")" "written-on-node-1" "Retain keeps the data"

step "a local volume with node affinity brings its pod to that node (WaitForFirstConsumer)"
kubectl apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-storage}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-node-2}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local-storage
  local: {path: "$data/local-2"}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-2]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: local-claim}
spec:
  storageClassName: local-storage
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: local-user}
spec:
  restartPolicy: Never
  volumes: [{name: data, persistentVolumeClaim: {claimName: local-claim}}]
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "hostname > /data/where"]
    volumeMounts: [{name: data, mountPath: /data}]
YAML
wait_for 60 bash -c "kubectl get pod local-user -o jsonpath='{.status.phase}' | grep -qx Succeeded" ||
  { kubectl describe pod local-user; kubectl describe pvc local-claim; }
expect_eq "$(kubectl get pod local-user -o jsonpath='{.spec.nodeName}')" "node-2" "scheduled where the volume is"
expect_eq "$(cat "$data/local-2/where" 2>/dev/null)" "local-user" "written into the local volume"
# A WaitForFirstConsumer class with a provisioner: the volume is made once the pod has a node.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: late}
provisioner: dir.csi.minik8s.io
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: late-claim}
spec:
  storageClassName: late
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
wait_for 30 bash -c "kubectl describe pvc late-claim | grep -q 'waiting for first consumer'" ||
  fail "WaitForFirstConsumer event"
expect_eq "$(kubectl get pvc late-claim -o jsonpath='{.status.phase}')" "Pending" "no volume before a pod"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: late-user}
spec:
  restartPolicy: Never
  volumes: [{name: data, persistentVolumeClaim: {claimName: late-claim}}]
  containers:
  - {name: c, image: minik8s/busybox:1.35, command: [sh, -c, "echo late > /data/f"], volumeMounts: [{name: data, mountPath: /data}]}
YAML
wait_for 60 bash -c "kubectl get pod late-user -o jsonpath='{.status.phase}' | grep -qx Succeeded" ||
  { kubectl describe pod late-user; kubectl describe pvc late-claim; }
node=$(kubectl get pod late-user -o jsonpath='{.spec.nodeName}')
expect_eq "$(kubectl get pvc late-claim -o jsonpath="{.metadata.annotations['volume\.kubernetes\.io/selected-node']}")" \
  "$node" "the scheduler chose the claim's node"
expect_eq "$(kubectl get pvc late-claim -o jsonpath='{.status.phase}')" "Bound" "provisioned once the pod had a node"
kubectl delete pod late-user local-user --wait=false >/dev/null

step "dynamic provisioning through CSI: the default class, data on all three nodes, expansion, Delete"
expect_contains "$(kubectl get sc standard)" "standard (default)   dir.csi.minik8s.io" "default StorageClass"
expect_contains "$(kubectl get csidriver)" "dir.csi.minik8s.io" "the CSIDriver"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: dynamic}
spec:
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
YAML
wait_for 30 bash -c "kubectl get pvc dynamic -o jsonpath='{.status.phase}' | grep -qx Bound" ||
  kubectl describe pvc dynamic
pv=$(kubectl get pvc dynamic -o jsonpath='{.spec.volumeName}')
expect_eq "$(kubectl get pvc dynamic -o jsonpath='{.spec.storageClassName}')" "standard" "the default class was applied"
expect_eq "$(kubectl get pv "$pv" -o jsonpath='{.spec.csi.driver}')" "dir.csi.minik8s.io" "a CSI volume"
dyn_pod() { claim_pod "$1" "$2" dynamic "$3"; }
dyn_pod dyn-1 node-1 "echo from-node-1 >> /data/log"
wait_for 60 bash -c "kubectl get pod dyn-1 -o jsonpath='{.status.phase}' | grep -qx Succeeded"
dyn_pod dyn-2 node-2 "echo from-node-2 >> /data/log"
wait_for 60 bash -c "kubectl get pod dyn-2 -o jsonpath='{.status.phase}' | grep -qx Succeeded"
dyn_pod dyn-3 node-3 "cat /data/log"
wait_for 60 bash -c "kubectl get pod dyn-3 -o jsonpath='{.status.phase}' | grep -qx Succeeded"
expect_eq "$(kubectl logs dyn-3 | tr '\n' ' ')" "from-node-1 from-node-2 " "one volume, written on node-1 and node-2, read on node-3"
# Finished pods let their volumes go (their objects stay until deleted).
wait_for 30 bash -c "! grep -q 'minik8s-e2e-stor/.*kubernetes.io~csi' /proc/mounts" ||
  { fail "no CSI mount left after the pods finished"; grep 'kubernetes.io~csi' /proc/mounts; }
kubectl delete pod dyn-1 dyn-2 dyn-3 --wait=true --timeout=60s >/dev/null
kubectl patch pvc dynamic -p '{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}' >/dev/null
wait_for 30 bash -c "kubectl get pvc dynamic -o jsonpath='{.status.capacity.storage}' | grep -qx 3Gi" ||
  fail "the claim grew to 3Gi"
voldir=$(ls -d /tmp/minik8s-e2e-stor/volumes/"$pv" 2>/dev/null)
expect_eq "$voldir" "/tmp/minik8s-e2e-stor/volumes/$pv" "the volume's directory"
kubectl delete pvc dynamic >/dev/null
wait_for 30 bash -c "! kubectl get pv $pv >/dev/null 2>&1" || fail "reclaim Delete removes the volume"
wait_for 10 bash -c "[[ ! -e $voldir ]]" || fail "reclaim Delete removes the data"

step "node-local volumes (local-path): made on the pod's node once it is scheduled, deleted with their data"
expect_contains "$(kubectl get sc local-path | tr -s ' ')" \
  "local-path local.csi.minik8s.io Delete WaitForFirstConsumer" "the local-path class"
expect_contains "$(kubectl get csidriver)" "local.csi.minik8s.io" "its CSIDriver"
expect_contains "$(kubectl get csinode | tr -s ' ')" "node-3 2 " "every node lists its CSI drivers (CSINode)"
expect_eq "$(kubectl get csinode node-2 -o jsonpath='{range .spec.drivers[*]}{.name}={.nodeID}:{.topologyKeys[*]} {end}')" \
  "dir.csi.minik8s.io=node-2: local.csi.minik8s.io=node-2:kubernetes.io/hostname " "node-2's drivers and topology keys"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: local-data}
spec:
  storageClassName: local-path
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
wait_for 30 bash -c "kubectl describe pvc local-data | grep -q 'waiting for first consumer'" ||
  fail "WaitForFirstConsumer event on the local claim"
sleep 2
expect_eq "$(kubectl get pvc local-data -o jsonpath='{.status.phase}')" "Pending" "no local volume before a pod"
expect_eq "$(kubectl get pv -o jsonpath='{.items[?(@.spec.storageClassName=="local-path")].metadata.name}')" "" \
  "no PersistentVolume yet"
local_pod() {  # NAME COMMAND: a pod of the claim local-data, placed by the scheduler
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes: [{name: data, persistentVolumeClaim: {claimName: local-data}}]
  containers:
  - {name: c, image: minik8s/busybox:1.35, command: [sh, -c, "$2"], volumeMounts: [{name: data, mountPath: /data}]}
YAML
}
local_pod local-writer "echo kept-on-this-node > /data/file"
wait_for 60 bash -c "kubectl get pod local-writer -o jsonpath='{.status.phase}' | grep -qx Succeeded" ||
  { kubectl describe pod local-writer; kubectl describe pvc local-data; }
node=$(kubectl get pod local-writer -o jsonpath='{.spec.nodeName}')
expect_eq "$(kubectl get pvc local-data -o jsonpath='{.status.phase}')" "Bound" "provisioned once the pod had a node"
pv=$(kubectl get pvc local-data -o jsonpath='{.spec.volumeName}')
expect_eq "$(kubectl get pv "$pv" -o jsonpath='{.spec.csi.driver}')" "local.csi.minik8s.io" "a node-local CSI volume"
expect_eq "$(kubectl get pv "$pv" -o jsonpath='{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key}={.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[*]}')" \
  "kubernetes.io/hostname=$node" "the volume's nodeAffinity names the pod's node"
expect_eq "$(cat "$CL_DIR/nodes/$node/local-volumes/$pv/file" 2>/dev/null)" "kept-on-this-node" \
  "the data lives in $node's local directory"
for other in node-1 node-2 node-3; do
  [[ $other == "$node" ]] && continue
  [[ ! -e $CL_DIR/nodes/$other/local-volumes/$pv ]] || fail "the volume is also on $other"
done
kubectl delete pod local-writer --wait=true --timeout=60s >/dev/null
local_pod local-reader "cat /data/file"
wait_for 60 bash -c "kubectl get pod local-reader -o jsonpath='{.status.phase}' | grep -qx Succeeded" ||
  kubectl describe pod local-reader
expect_eq "$(kubectl get pod local-reader -o jsonpath='{.spec.nodeName}')" "$node" "the replacement pod went to the volume's node"
expect_eq "$(kubectl logs local-reader)" "kept-on-this-node" "and read the data there"
kubectl delete pod local-reader --wait=true --timeout=60s >/dev/null
kubectl delete pvc local-data >/dev/null
wait_for 30 bash -c "! kubectl get pv $pv >/dev/null 2>&1" || fail "reclaim Delete removes the local volume"
wait_for 10 bash -c "[[ ! -e $CL_DIR/nodes/$node/local-volumes/$pv ]]" || fail "reclaim Delete removes the local data"

step "a StatefulSet's claims from the default class follow its pods through deletion and scale-down"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: counter}
spec:
  selector: {matchLabels: {app: counter}}
  serviceName: counter
  replicas: 2
  template:
    metadata: {labels: {app: counter}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - {name: c, image: minik8s/busybox:1.35, command: [sh, -c, "hostname >> /data/starts; exec sleep 3600"], volumeMounts: [{name: data, mountPath: /data}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
YAML
starts() { kubectl exec "$1" -- cat /data/starts 2>/dev/null | wc -l; }
wait_for 90 bash -c "[[ \$(kubectl get pods -l app=counter -o jsonpath='{.items[*].status.phase}') == 'Running Running' ]]" ||
  kubectl describe pod counter-0 counter-1
expect_eq "$(kubectl get pvc data-counter-0 data-counter-1 -o jsonpath='{.items[*].status.phase}')" "Bound Bound" \
  "one claim per ordinal, provisioned"
kubectl delete pod counter-0 --wait=false >/dev/null
wait_for 60 bash -c "[[ \$(kubectl exec counter-0 -- cat /data/starts 2>/dev/null | wc -l) == 2 ]]" ||
  fail "counter-0 came back to its own data (2 starts recorded)"
kubectl scale sts counter --replicas=1 >/dev/null
wait_for 60 bash -c "! kubectl get pod counter-1 >/dev/null 2>&1"
expect_eq "$(kubectl get pvc data-counter-1 -o jsonpath='{.status.phase}')" "Bound" "scale-down keeps the claim"
kubectl scale sts counter --replicas=2 >/dev/null
wait_for 60 bash -c "[[ \$(kubectl exec counter-1 -- cat /data/starts 2>/dev/null | wc -l) == 2 ]]" ||
  fail "counter-1 came back to its own data after scale-up"
kubectl delete sts counter --wait=false >/dev/null

step "claims nothing can serve say why; bad input is refused with field paths"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ghost}
spec:
  storageClassName: ghost
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
wait_for 30 bash -c "kubectl describe pvc ghost | grep -q 'storageclass.storage.k8s.io \"ghost\" not found'" ||
  fail "ProvisioningFailed event on the claim"
expect_eq "$(kubectl get pvc ghost -o jsonpath='{.status.phase}')" "Pending" "the claim stays Pending"
out=$(must_fail kubectl apply -f - <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: bad}
spec:
  accessModes: [ReadWriteSometimes]
  resources: {requests: {storage: lots}}
YAML
)
expect_contains "$out" "spec.accessModes" "422 names the access mode"
expect_contains "$out" "spec.resources.requests" "422 names the request"

finish
