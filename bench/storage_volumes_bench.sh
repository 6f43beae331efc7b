#!/usr/bin/env bash
# Persistent volumes on a real 3-node cluster with GlusterFS under the default StorageClass
# (`cluster up --storage gluster`: replica-3 volume, FUSE mounts on every node):
#   - the time from creating a claim of the default class (dynamic provisioning through the
#     built-in CSI driver) to Bound;
#   - the time from creating a pod with a fresh claim to Running, against the same pod without a
#     volume (baseline, same run);
#   - fio inside a pod on node-1 (image minik8s/fio, built from bench/images/fio and pushed by this
#     script): sequential write and read MB/s (1 MiB blocks, 256 MiB, write ends with fsync) and
#     4 KiB random-write IOPS with an fdatasync after every write (what a database's commits
#     cost) for 10 s, on the network class (GlusterFS), the node-local class `local-path` (when
#     the cluster has it) and the node's own disk (an emptyDir), as ratios to the node's disk.
# Reports figures, never fails on a time. Reads may come partly from the page cache (a pod
# cannot drop it; fio invalidates the file's cached pages first where the filesystem allows).
#
#   sudo MINIK8S_BIN=build/bin/minik8s bash bench/storage_volumes_bench.sh [N]
# Cluster "bstor" on the underlay 172.29.122.0/24 unless BENCH_CLUSTER / BENCH_SUBNET say
# otherwise; STORAGE=dir runs it on the plain-directory backend instead of GlusterFS. Cleans up
# (cluster, namespaces, links, rules, processes, mounts) on any exit. Needs fio and GlusterFS
# (scripts/setup.sh installs both).
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
N=${1:-10}
bench_load start

command -v fio >/dev/null || { echo "needs fio (apt-get install fio; scripts/setup.sh)"; exit 1; }
STORAGE=${STORAGE:-gluster}
bench_cluster bstor 172.29.122 3 --storage "$STORAGE" || exit 1
echo "cluster up (--storage $STORAGE): ${UP_TOTAL_S} s"
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

step "fio inside a pod on node-1: network class vs node-local class vs the node's disk"
"$MINIK8S_BIN" image build "$(dirname "$0")/images/fio/image.yaml" -o "$E2E_DIR/img" >/dev/null &&
  "$MINIK8S_BIN" image push "$E2E_DIR"/img/fio.tar \
    --registry "${BENCH_SUBNET:-172.29.122}.1:5000" >/dev/null ||
  { echo "cannot build or push minik8s/fio"; exit 1; }
cat >"$E2E_DIR/fio.sh" <<'SH'
set -e
cd /d
common="--name=j --filename=/d/fio.dat --ioengine=psync --output-format=json"
fio $common --rw=write --bs=1M --size=256M --end_fsync=1 >/tmp/w.json
fio $common --rw=read --bs=1M --size=256M --invalidate=1 >/tmp/r.json
fio $common --rw=randwrite --bs=4k --size=64M --fdatasync=1 --runtime=10 --time_based >/tmp/rw.json
rm -f /d/fio.dat
for f in w r rw; do echo "== $f"; cat /tmp/$f.json; done
SH
kubectl create configmap fioscript --from-file=fio.sh="$E2E_DIR/fio.sh" >/dev/null
fio_pod() {  # name volume-yaml: prints "seqwrite MB/s, seqread MB/s, randwrite IOPS"
  kubectl create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: node-1
  restartPolicy: Never
  volumes: [$2, {name: s, configMap: {name: fioscript}}]
  containers:
  - name: c
    image: minik8s/fio:3.33
    command: ["sh", "/s/fio.sh"]
    volumeMounts: [{name: d, mountPath: /d}, {name: s, mountPath: /s}]
YAML
  wait_for 300 bash -c "kubectl get pod $1 -o jsonpath='{.status.phase}' | grep -qxE 'Succeeded|Failed'"
  kubectl logs "$1" >"$E2E_DIR/$1.log" 2>&1
  python3 - "$E2E_DIR/$1.log" <<'PY'
import json, sys
parts, cur = {}, None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        cur = line[3:].strip(); parts[cur] = ""
    elif cur:
        parts[cur] += line
try:
    w = json.loads(parts["w"])["jobs"][0]["write"]
    r = json.loads(parts["r"])["jobs"][0]["read"]
    rw = json.loads(parts["rw"])["jobs"][0]["write"]
    print(f"{w['bw'] / 1024:.1f} {r['bw'] / 1024:.1f} {rw['iops']:.0f}")
except Exception as e:
    print(f"- - - (no fio result: {e})")
PY
}
claim_yaml tput | kubectl create -f - >/dev/null
wait_phase pvc tput Bound
declare -A fio_res
fio_res[network]=$(fio_pod fio-net "{name: d, persistentVolumeClaim: {claimName: tput}}")
if kubectl get storageclass local-path >/dev/null 2>&1; then
  claim_yaml tlocal | sed 's/^spec:/spec:\n  storageClassName: local-path/' | kubectl create -f - >/dev/null
  fio_res[local]=$(fio_pod fio-local "{name: d, persistentVolumeClaim: {claimName: tlocal}}")
else
  echo "!! no StorageClass local-path in this cluster: the node-local class is not measured"
fi
fio_res[disk]=$(fio_pod fio-disk "{name: d, emptyDir: {}}")
printf '%-30s %12s %12s %16s\n' "volume" "seq write" "seq read" "4k randwrite"
for k in network local disk; do
  [[ -n ${fio_res[$k]:-} ]] || continue
  read -r w r i <<<"${fio_res[$k]}"
  case $k in
    network) label="network ($STORAGE, CSI)" ;;
    local) label="node-local (local-path)" ;;
    disk) label="node disk (emptyDir)" ;;
  esac
  printf '%-30s %9s MB/s %9s MB/s %11s IOPS\n' "$label" "$w" "$r" "$i"
done
read -r dw dr di <<<"${fio_res[disk]}"
for k in network local; do
  [[ -n ${fio_res[$k]:-} ]] || continue
  read -r w r i <<<"${fio_res[$k]}"
  awk -v k="$k" -v w="$w" -v r="$r" -v i="$i" -v dw="$dw" -v dr="$dr" -v di="$di" 'BEGIN {
    if (dw > 0 && dr > 0 && di > 0)
      printf "%s / node disk: seq write %.2f, seq read %.2f, 4k randwrite %.2f\n", k, w / dw, r / dr, i / di }'
done
bench_load end
finish
