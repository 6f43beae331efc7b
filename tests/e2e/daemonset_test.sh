#!/usr/bin/env bash
# DaemonSets on a real 3-node cluster with the real kubectl: one pod on each node, a node added
# with `minik8s cluster add-node` gets its own, `kubectl set image` rolls node by node with
# maxUnavailable 1 (never more than one node without a ready pod), `rollout status|history|undo|
# restart ds/NAME`, `get ds` columns, and deleting the DaemonSet takes its pods.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 3 nodes"
start_cluster dset 172.29.116 3 || exit 1
cluster() { cluster_cmd "$@"; }

kubectl apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: agent
        image: minik8s/busybox:1.35
        command: ["sh", "-c", "touch /tmp/ready; exec sleep 3600"]
        readinessProbe:
          exec: {command: ["cat", "/tmp/ready"]}
          periodSeconds: 1
YAML

# "<node> <ready> <image>" of every live pod of the DaemonSet.
pod_table() {
  kubectl get pods -l app=agent -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status} {.spec.containers[0].image} {.metadata.deletionTimestamp}{"\n"}{end}' |
    awk '$4 == "" {print $1, $2, $3}'
}
per_node() { pod_table | awk '{print $1}' | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}'; }

step "one pod on each node"
out=$(kubectl rollout status ds/agent --timeout=120s 2>&1) || fail "rollout status: $out"
expect_contains "$out" "successfully rolled out" "rollout status of the new DaemonSet"
expect_eq "$(per_node)" "node-1=1 node-2=1 node-3=1 " "a pod per node"
out=$(kubectl get ds agent)
echo "$out"
expect_contains "$(head -1 <<<"$out")" "DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR" \
  "get ds columns"
expect_contains "$out" "agent   3         3         3       3            3           <none>" "get ds row"

step "control plane SIGKILL: the same pods afterwards, none duplicated"
before=$(kubectl get pods -l app=agent -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}')
kill -9 "$(cluster_state .serverPid)"
sleep 2
out=$(cluster_cmd up 2>&1) || { fail "cluster up after the kill"; echo "$out"; }
out=$(kubectl rollout status ds/agent --timeout=60s 2>&1) || fail "rollout status after the restart: $out"
sleep 3  # the controllers resync; a duplicate or a replacement would show now
expect_eq "$(kubectl get pods -l app=agent -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}')" \
  "$before" "the same pods after the control plane restart"

step "a node added with cluster add-node gets a pod"
cluster add-node --timeout 120 >/dev/null || tail -20 "$CL_DIR/logs/node-4.log"
wait_for 90 bash -c "kubectl get pods -l app=agent -o wide | grep -q node-4"
out=$(kubectl rollout status ds/agent --timeout=90s 2>&1) || fail "rollout status with node-4: $out"
expect_eq "$(per_node)" "node-1=1 node-2=1 node-3=1 node-4=1 " "node-4 has its pod"

step "set image rolls node by node (maxUnavailable 1)"
t0=$(date +%s%N)
kubectl set image ds/agent agent=minik8s/busybox:latest >/dev/null
kubectl rollout status ds/agent --timeout=180s >"$E2E_DIR/rollout.out" 2>&1 &
rollout=$!
min_ready=4 samples=0
while kill -0 "$rollout" 2>/dev/null; do
  r=$(pod_table | awk '$2 == "True" {n++} END {print n+0}')
  ((r < min_ready)) && min_ready=$r
  samples=$((samples + 1))
  sleep 0.2
done
wait "$rollout" || fail "rollout status after set image: $(cat "$E2E_DIR/rollout.out")"
echo "DaemonSet rollout on 4 nodes: $((($(date +%s%N) - t0) / 1000000)) ms; $samples samples, at least $min_ready ready"
((min_ready >= 3)) || fail "ready pods dropped to $min_ready (4 nodes, maxUnavailable 1)"
wait_for 30 bash -c "[[ \$(kubectl get pods -l app=agent -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u) == minik8s/busybox:latest ]]"
expect_eq "$(pod_table | awk '{print $3}' | sort -u)" "minik8s/busybox:latest" "every pod runs the new image"

step "rollout history and undo"
history=$(kubectl rollout history ds/agent)
echo "$history"
expect_eq "$(awk '$1 ~ /^[0-9]+$/ {print $1}' <<<"$history" | tr '\n' ' ')" "1 2 " "revisions"
expect_contains "$(kubectl get controllerrevisions)" "daemonset.apps/agent" "controller revisions listed"
out=$(kubectl rollout undo ds/agent 2>&1)
expect_contains "$out" "rolled back" "rollout undo"
out=$(kubectl rollout status ds/agent --timeout=180s 2>&1) || fail "rollout status after undo: $out"
wait_for 30 bash -c "[[ \$(kubectl get pods -l app=agent -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u) == minik8s/busybox:1.35 ]]"
expect_eq "$(pod_table | awk '{print $3}' | sort -u)" "minik8s/busybox:1.35" "every pod runs the old image again"
history=$(kubectl rollout history ds/agent)
expect_eq "$(awk '$1 ~ /^[0-9]+$/ {print $1}' <<<"$history" | tr '\n' ' ')" "2 3 " \
  "revisions after undo (1 became 3)"

step "rollout restart replaces every pod"
before=$(kubectl get pods -l app=agent -o jsonpath='{.items[*].metadata.uid}')
kubectl rollout restart ds/agent >/dev/null || fail "rollout restart"
out=$(kubectl rollout status ds/agent --timeout=180s 2>&1) || fail "rollout status after restart: $out"
wait_for 30 bash -c "[[ \$(kubectl get pods -l app=agent -o name | wc -l) == 4 ]]"
for uid in $before; do
  expect_not_contains "$(kubectl get pods -l app=agent -o jsonpath='{.items[*].metadata.uid}')" "$uid" \
    "pod $uid replaced"
done

step "deleting the DaemonSet takes its pods"
kubectl delete ds agent >/dev/null || fail "delete ds"
wait_for 60 bash -c "[[ \$(kubectl get pods -l app=agent -o name | wc -l) == 0 ]]" || kubectl get pods -l app=agent
wait_for 30 bash -c "[[ \$(kubectl get controllerrevisions -o name | wc -l) == 0 ]]" ||
  fail "its ControllerRevisions go too"

finish
