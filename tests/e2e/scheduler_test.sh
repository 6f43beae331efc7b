#!/usr/bin/env bash
# The scheduler against a real server, driven by the real kubectl: three Node objects (no agent
# serves them), pods bound and spread, nodeSelector honoured, an unschedulable pod explained by
# `kubectl describe`, cordon, uncordon and drain.
source "$(dirname "$0")/lib.sh"

# The server's own scheduler and controllers are off: this test is about the scheduler process,
# and no node lifecycle controller must mark the agent-less nodes NotReady.
SERVER_PORT=$(free_port)
"$MINIK8S_BIN" server --data-dir "$E2E_DIR/server" --listen "127.0.0.1:$SERVER_PORT" \
  --disable-scheduler --disable-controllers >>"$E2E_DIR/server.log" 2>&1 &
E2E_PIDS+=($!)
SERVER_URL="https://127.0.0.1:$SERVER_PORT"
export KUBECONFIG="$E2E_DIR/server/kubeconfig"
wait_for 20 test -s "$KUBECONFIG"
wait_for 20 curl -sf --cacert "$E2E_DIR/server/pki/ca.crt" "$SERVER_URL/readyz"
# No controllers run here, so nothing creates the default ServiceAccount pods need.
wait_for 10 kubectl get namespace default
kubectl create serviceaccount default >/dev/null
"$MINIK8S_BIN" scheduler --kubeconfig "$KUBECONFIG" >>"$E2E_DIR/scheduler.log" 2>&1 &
E2E_PIDS+=($!)

step "three Ready nodes with 4 cpu each"
for n in node-a node-b node-c; do
  disk=hdd; [[ $n == node-a ]] && disk=ssd
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $n
  labels: {kubernetes.io/hostname: $n, disk: $disk}
YAML
  kubectl patch node "$n" --subresource=status --type=merge -p \
    '{"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ready"}]}}' >/dev/null
done
expect_contains "$(kubectl get nodes)" "node-c   Ready" "nodes are Ready"

pod_yaml() {  # name cpu [nodeSelector-disk]
  local selector=""
  [[ -n "${3:-}" ]] && selector="  nodeSelector: {disk: $3}"
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: e2e}}
spec:
$selector
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: "$2"}}
YAML
}

node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [[ -n "$(node_of "$1")" ]]; }

step "six equal pods are bound and spread two per node"
for i in 1 2 3 4 5 6; do pod_yaml "spread-$i" 500m | kubectl apply -f - >/dev/null; done
for i in 1 2 3 4 5 6; do wait_for 20 bound "spread-$i"; done
counts=$(for i in 1 2 3 4 5 6; do node_of "spread-$i"; echo; done | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')
expect_eq "$counts" "2 2 2 " "pods per node"
expect_contains "$(kubectl describe pod spread-1)" "Successfully assigned default/spread-1 to" \
  "Scheduled event"

step "nodeSelector is honoured"
pod_yaml picky 100m ssd | kubectl apply -f - >/dev/null
wait_for 20 bound picky
expect_eq "$(node_of picky)" "node-a" "nodeSelector disk=ssd"

step "a pod that fits nowhere says why"
pod_yaml huge 100 | kubectl apply -f - >/dev/null
wait_for 20 bash -c "kubectl describe pod huge | grep -q FailedScheduling"
described=$(kubectl describe pod huge)
expect_contains "$described" "0/3 nodes are available: 3 Insufficient cpu." "describe message"
expect_contains "$described" "default-scheduler" "event source"
expect_contains "$(kubectl get pod huge -o jsonpath='{.status.conditions[0].reason}')" \
  "Unschedulable" "PodScheduled condition"
expect_eq "$(node_of huge)" "" "huge stays pending"

step "cordon keeps new pods off a node; uncordon lets them back"
kubectl cordon node-b >/dev/null
expect_contains "$(kubectl get node node-b)" "SchedulingDisabled" "cordoned node"
for i in 1 2 3; do pod_yaml "cordon-$i" 100m | kubectl apply -f - >/dev/null; done
for i in 1 2 3; do wait_for 20 bound "cordon-$i"; done
for i in 1 2 3; do
  [[ "$(node_of "cordon-$i")" != node-b ]] || fail "cordon-$i went to the cordoned node-b"
done
kubectl uncordon node-b >/dev/null
expect_not_contains "$(kubectl get node node-b)" "SchedulingDisabled" "uncordoned node"

step "drain evicts the pods of a node and cordons it"
on_c=$(kubectl get pods --field-selector spec.nodeName=node-c -o name | wc -l)
((on_c > 0)) || fail "expected pods on node-c before the drain"
kubectl drain node-c --force --grace-period=0 --timeout=30s >"$E2E_DIR/drain.log" 2>&1 ||
  { fail "kubectl drain failed"; cat "$E2E_DIR/drain.log" >&2; }
expect_contains "$(kubectl get node node-c)" "SchedulingDisabled" "drained node is cordoned"
expect_eq "$(kubectl get pods --field-selector spec.nodeName=node-c -o name | wc -l)" "0" \
  "no pods left on node-c"

step "freeing room lets the unschedulable pod in"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata: {name: node-big, labels: {kubernetes.io/hostname: node-big}}
YAML
kubectl patch node node-big --subresource=status --type=merge -p \
  '{"status":{"allocatable":{"cpu":"200","memory":"64Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
wait_for 30 bound huge
expect_eq "$(node_of huge)" "node-big" "huge goes to the big node"

finish
