#!/usr/bin/env bash
# Pod network figures on a 2-node `minik8s cluster` (VXLAN): round-trip latency (p50/p99 of 64-byte
# TCP ping-pongs) and bulk TCP throughput, pod to pod on the same node and across nodes, against
# host loopback as the physical baseline measured in the same run. Also the time from `cluster
# up` to all nodes Ready (in total, and after the cluster registry is ready: building the local
# images is not the cluster's start). Bounded: 2,000 round trips and 200 MB per pair. Needs root;
# cleans up (cluster, namespaces, links, rules, processes) on any exit.
# Usage: [BENCH_CLUSTER=bnet BENCH_SUBNET=172.29.110] bench/network_pod_to_pod_bench.sh [minik8s]
here=$(cd "$(dirname "$0")" && pwd)
export MINIK8S_BIN=${1:-${MINIK8S_BIN:-$here/../build/bin/minik8s}}
source "$here/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
ROUNDS=${ROUNDS:-2000}; MB=${MB:-200}
PY="$(cat "$here/net/pingpong.py")"
bench_load start

bench_cluster bnet 172.29.110 2 || exit 1

pod() {  # name node
  cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $2
  containers: [{name: py, image: minik8s/python:3.11, command: ["sleep", "3600"]}]
YAML
}
pod server node-1; pod near node-1; pod far node-2
kubectl wait --for=condition=Ready pod/server pod/near pod/far --timeout=120s >/dev/null ||
  { kubectl get pods -o wide; exit 1; }
kubectl exec -i server -- sh -c "cat > /tmp/pp.py" <<<"$PY"
kubectl exec -i near -- sh -c "cat > /tmp/pp.py" <<<"$PY"
kubectl exec -i far -- sh -c "cat > /tmp/pp.py" <<<"$PY"
kubectl exec server -- sh -c "python3 /tmp/pp.py serve 5001 </dev/null >/dev/null 2>&1 &"
ip=$(kubectl get pod server -o jsonpath='{.status.podIP}')
sleep 1
same=$(kubectl exec near -- python3 /tmp/pp.py run "$ip" 5001 "$ROUNDS" "$MB")
cross=$(kubectl exec far -- python3 /tmp/pp.py run "$ip" 5001 "$ROUNDS" "$MB")

echo "$PY" >"$E2E_DIR/pp.py"
lport=$(free_port)
/usr/bin/python3 "$E2E_DIR/pp.py" serve "$lport" & E2E_PIDS+=($!)
sleep 0.5
loop=$(/usr/bin/python3 "$E2E_DIR/pp.py" run 127.0.0.1 "$lport" "$ROUNDS" "$MB")

read -r s50 s99 sbw <<<"$same"; read -r c50 c99 cbw <<<"$cross"; read -r l50 l99 lbw <<<"$loop"
[[ -n "$same" && -n "$cross" && -n "$loop" ]] || { echo "a measurement failed"; exit 1; }
echo "cluster up (2 nodes) to all Ready: ${UP_TOTAL_S} s in total," \
  "${UP_AFTER_REGISTRY_S} s after the registry was ready"
printf '%-22s %10s %10s %12s %14s %12s\n' path rtt_p50_us rtt_p99_us Mbit/s p50_vs_loopback bw_vs_loopback
row() { printf '%-22s %10s %10s %12s %14.2f %12.2f\n' "$1" "$2" "$3" "$4" "$(echo "$2/$5" | bc -l)" "$(echo "$4/$6" | bc -l)"; }
row "host loopback" "$l50" "$l99" "$lbw" "$l50" "$lbw"
row "pod->pod same node" "$s50" "$s99" "$sbw" "$l50" "$lbw"
row "pod->pod cross node" "$c50" "$c99" "$cbw" "$l50" "$lbw"
printf 'cross/same node: latency x%.2f, throughput x%.2f\n' "$(echo "$c50/$s50" | bc -l)" "$(echo "$cbw/$sbw" | bc -l)"
bench_load end
