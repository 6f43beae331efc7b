#!/usr/bin/env bash
# Persistent volumes on a real 3-node cluster: the time from creating a claim of the default
# StorageClass (dynamic provisioning through the built-in CSI driver) to Bound; the time from
# creating a pod with a fresh claim to Running, against the same pod without a volume (baseline,
# same run); and sequential write/read throughput inside a pod (busybox dd, 256 MiB, fsync) on
# the CSI class against the node's own disk (an emptyDir), as a ratio. Reports figures, never
# fails on a time. Reads come from the page cache (a pod cannot drop it). Random 4 KiB IOPS (fio)
# are not measured yet: no image carries fio.
#
#   sudo MINIK8S_BIN=build/bin/minik8s bash bench/storage_volumes_bench.sh [N]
# Cluster "bstor" on the underlay 172.29.122.0/24 unless BENCH_CLUSTER / BENCH_SUBNET say
# otherwise. Cleans up (cluster, namespaces, links, rules, processes, mounts) on any exit.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
N=${1:-10}
bench_load start

bench_cluster bstor 172.29.122 3 || exit 1
echo "cluster up: ${UP_TOTAL_S} s"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# median and max of the numbers on stdin (ms), as seconds
summary() { sort -n | awk '{a[NR]=$1} END {printf "median %.3f s, max %.3f s (n=%d)", a[int((NR+1)/2)]/1000, a[NR]/1000, NR}'; }

claim_yaml() {
  cat <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
}
pod_yaml() {  # name claim|"" command
  local volumes="" mounts=""
  if [[ -n $2 ]]; then
    volumes="  volumes: [{name: d, persistentVolumeClaim: {claimName: $2}}]"
    mounts="    volumeMounts: [{name: d, mountPath: /d}]"
  fi
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  terminationGracePeriodSeconds: 0
$volumes
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "$3"]
$mounts
YAML
}
wait_phase() {  # kind name phase
  until [[ $(kubectl get "$1" "$2" -o jsonpath='{.status.phase}' 2>/dev/null) == "$3" ]]; do
    sleep 0.02
  done
}

step "warm-up: the image on every node"
for n in 1 2 3; do
  kubectl run "warm-$n" --image=minik8s/busybox:1.35 --restart=Never \
    --overrides="{\"spec\":{\"nodeName\":\"node-$n\"}}" -- true >/dev/null
done
for n in 1 2 3; do wait_for 120 bash -c "kubectl get pod warm-$n -o jsonpath='{.status.phase}' | grep -qx Succeeded"; done
kubectl delete pod warm-1 warm-2 warm-3 --wait=false >/dev/null

step "claim created -> Bound ($N claims, one at a time)"
for i in $(seq 1 "$N"); do
  t0=$(now_ms)
  claim_yaml "c$i" | kubectl create -f - >/dev/null
  wait_phase pvc "c$i" Bound
  echo $(($(now_ms) - t0))
done | summary
echo

step "pod with a fresh claim -> Running, against the same pod without a volume ($N each)"
for i in $(seq 1 "$N"); do
  t0=$(now_ms)
  { claim_yaml "p$i"; echo "---"; pod_yaml "withvol-$i" "p$i" "exec sleep 3600"; } | kubectl create -f - >/dev/null
  wait_phase pod "withvol-$i" Running
  echo $(($(now_ms) - t0))
done | summary | sed 's/^/with a fresh claim: /'
echo
for i in $(seq 1 "$N"); do
  t0=$(now_ms)
  pod_yaml "novol-$i" "" "exec sleep 3600" | kubectl create -f - >/dev/null
  wait_phase pod "novol-$i" Running
  echo $(($(now_ms) - t0))
done | summary | sed 's/^/without a volume:   /'
echo
kubectl delete pod --all --wait=false >/dev/null

step "sequential throughput inside a pod: CSI class vs the node's disk (emptyDir)"
# busybox dd prints no rate: the pod times it with /proc/uptime (10 ms resolution); the script
# comes from a ConfigMap.
cat >"$E2E_DIR/dd.sh" <<'SH'
up() { cut -d' ' -f1 /proc/uptime; }
t0=$(up); dd if=/dev/zero of=/d/f bs=1M count=256 conv=fsync 2>/dev/null
t1=$(up); dd if=/d/f of=/dev/null bs=1M 2>/dev/null
t2=$(up); rm /d/f
echo "$t0 $t1 $t2" | awk '{printf "write %.1f MB/s\nread %.1f MB/s\n", 256/($2-$1), 256/($3-$2)}'
SH
kubectl create configmap ddscript --from-file=dd.sh="$E2E_DIR/dd.sh" >/dev/null
dd_pod() {  # name volume-yaml
  kubectl create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: node-1
  restartPolicy: Never
  volumes: [$2, {name: s, configMap: {name: ddscript}}]
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sh", "/s/dd.sh"]
    volumeMounts: [{name: d, mountPath: /d}, {name: s, mountPath: /s}]
YAML
  wait_for 300 bash -c "kubectl get pod $1 -o jsonpath='{.status.phase}' | grep -qx Succeeded"
  kubectl logs "$1"
}
claim_yaml tput | kubectl create -f - >/dev/null
wait_phase pvc tput Bound
csi_out=$(dd_pod dd-csi "{name: d, persistentVolumeClaim: {claimName: tput}}")
disk_out=$(dd_pod dd-disk "{name: d, emptyDir: {}}")
echo "CSI class (dir.csi.minik8s.io): $(echo "$csi_out" | tr '\n' ';')"
echo "node disk (emptyDir):          $(echo "$disk_out" | tr '\n' ';')"
rate() { sed -n "$1p" <<<"$2" | awk '{print $2}'; }
for what in 1:write 2:read; do
  line=${what%%:*} name=${what#*:}
  a=$(rate "$line" "$csi_out") b=$(rate "$line" "$disk_out")
  [[ -n $a && -n $b ]] && echo "sequential $name: CSI $a MB/s, node disk $b MB/s, ratio $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')"
done
bench_load end
finish
