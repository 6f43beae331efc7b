#!/usr/bin/env bash
# `cluster up --storage gluster`: the built-in CSI driver's volumes on a replica-3 GlusterFS
# volume (one glusterd per node, each in its node's network namespace and its own mount
# namespace). The volume is FUSE-mounted on the host and in every node; a claim of the default
# class is written on node-1 and read on node-3; the data is in the bricks of all three nodes;
# with node-2's glusterd and brick killed, node-3 still reads and writes; `cluster down --purge`
# leaves no glusterfs mount and no gluster process of this cluster (and touches no other).
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
command -v glusterd >/dev/null || { echo "needs glusterfs-server (scripts/setup.sh)"; exit 1; }

step "cluster up --storage gluster: 3 nodes"
start_cluster glus 172.29.123 3 --storage gluster || exit 1

step "the volume is mounted on the host and in every node"
mounts=$(mount | grep glusterfs | grep "$CL_DIR/")
for m in "$CL_DIR/volumes" "$CL_DIR/nodes/node-1/volumes" "$CL_DIR/nodes/node-2/volumes" \
  "$CL_DIR/nodes/node-3/volumes"; do
  expect_contains "$mounts" "on $m type fuse.glusterfs" "glusterfs mount at $m"
done
expect_contains "$(cluster_cmd status)" "gluster volume minik8s" "cluster status shows the storage"
expect_eq "$(jq -r .storage "$CL_DIR/cluster.json")" "gluster" "the choice is saved"

step "a claim of the default class; written on node-1, read on node-3"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shared}
spec:
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
YAML
wait_for 30 bash -c "kubectl get pvc shared -o jsonpath='{.status.phase}' | grep -qx Bound" ||
  kubectl describe pvc shared
pv=$(kubectl get pvc shared -o jsonpath='{.spec.volumeName}')
claim_pod() {  # NAME NODE COMMAND: a pod on NODE with the claim at /data
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $2
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes: [{name: data, persistentVolumeClaim: {claimName: shared}}]
  containers:
  - {name: c, image: minik8s/busybox:1.35, command: [sh, -c, "$3"], volumeMounts: [{name: data, mountPath: /data}]}
YAML
}
succeeded() { wait_for 60 bash -c "kubectl get pod $1 -o jsonpath='{.status.phase}' | grep -qx Succeeded" ||
  kubectl describe pod "$1" | tail -20; }
claim_pod writer node-1 "echo from-node-1 > /data/f"
succeeded writer
claim_pod reader node-3 "cat /data/f"
succeeded reader
expect_eq "$(kubectl logs reader)" "from-node-1" "node-3 reads what node-1 wrote"
for i in 1 2 3; do
  expect_eq "$(cat "$CL_DIR/nodes/node-$i/gluster/bricks/minik8s/$pv/f" 2>&1)" "from-node-1" \
    "the data is in node-$i's brick"
done

step "node-2's glusterd and brick killed (by their recorded PIDs): node-3 still reads and writes"
g2=$(jq -c '.gluster.servers[] | select(.name == "node-2")' "$CL_DIR/cluster.json")
ns2=$(jq -r '.mntns[-1]' <<<"$g2")
victims=$(jq -r .pid <<<"$g2")
for f in "$CL_DIR"/nodes/node-2/gluster/run/gluster/vols/minik8s/*.pid; do victims+=" $(cat "$f")"; done
for p in $victims; do  # only processes in node-2's recorded mount namespace
  [[ "$(readlink /proc/"$p"/ns/mnt)" == "$ns2" ]] && kill -9 "$p" || fail "pid $p is not node-2's gluster"
done
claim_pod survivor node-3 "cat /data/f && echo after-kill >> /data/f && cat /data/f"
succeeded survivor
expect_eq "$(kubectl logs survivor | tr '\n' ' ')" "from-node-1 from-node-1 after-kill " \
  "node-3 reads and writes with node-2's brick gone"
for i in 1 3; do
  expect_contains "$(cat "$CL_DIR/nodes/node-$i/gluster/bricks/minik8s/$pv/f" 2>&1)" "after-kill" \
    "the write reached node-$i's brick"
done

step "cluster down --purge: no glusterfs mount and no gluster process of this cluster"
namespaces=$(jq -r '.gluster.servers[].mntns[]' "$CL_DIR/cluster.json")
in_our_ns() { local p; for p in /proc/[0-9]*; do
  grep -qxF "$(readlink "$p/ns/mnt" 2>/dev/null)" <<<"$namespaces" && echo "${p#/proc/}"; done; }
# Live gluster processes of anything else (not in our namespaces, not a client of our mounts).
live_gluster() { ps -eo pid=,stat=,comm= | awk '$2 !~ /^Z/ && $3 ~ /^gluster(d|fs|fsd)$/ {print $1}'; }
others=$(for p in $(live_gluster | grep -vxF "$(in_our_ns)"); do
  tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | grep -qF "$CL_DIR/" || echo "$p"; done)
before=$(in_our_ns)
cluster_cmd down --purge >/dev/null 2>&1
expect_eq "$(grep -c "$CL_DIR" /proc/mounts)" "0" "no mount under the data dir"
# A namespace's id (its nsfs inode) is reused once it is gone: a pod sandbox of another test
# (pause: sleep 2147483647) started after the down can sit in a new namespace with one of our old
# ids. A leftover is a process that was in our namespaces before the down, or a gluster process.
left=$(for p in $(in_our_ns); do
  if grep -qxF "$p" <<<"$before" || [[ $(cat /proc/"$p"/comm 2>/dev/null) == gluster* ]]; then echo "$p"; fi
done)
expect_eq "$(tr '\n' ' ' <<<"$left" | sed 's/ $//')" "" "no process in the cluster's glusterd namespaces"
[[ -z "$left" ]] || ps -o pid,ppid,stat,lstart,args -p "$(paste -sd, <<<"$left")" >&2 || true
expect_eq "$(pgrep -f "$CL_DIR" | tr '\n' ' ')" "" "no process mentioning the data dir"
for p in $others; do live_gluster | grep -qx "$p" || fail "gluster process $p of another cluster ended"; done

finish
