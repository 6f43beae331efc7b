#!/usr/bin/env bash
# Workloads on a real 3-node cluster (`minik8s cluster up`, real containers) driven by the real
# kubectl: a 6-replica Deployment spread two per node, a deleted pod and a killed container
# repaired, a rolling update that never drops below replicas - maxUnavailable ready pods,
# `rollout status|history|undo`, an unschedulable pod explained by `kubectl describe`, cordon,
# and drain moving pods to the other nodes.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 3 nodes"
start_cluster wl 172.29.104 3 || exit 1

deployment_yaml() {  # image
  cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: web
        image: $1
        command: ["sh", "-c", "mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 8080 -h /www"]
        resources: {requests: {cpu: 50m, memory: 16Mi}}
        readinessProbe:  # ready 2 s after start: a rollout takes a few seconds to watch
          httpGet: {path: /index.html, port: 8080}
          initialDelaySeconds: 2
          periodSeconds: 1
YAML
}

# "<pod> <node> <ready> <terminating>" for every pod of the app.
pod_table() {
  kubectl get pods -l app=web -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status} {.metadata.deletionTimestamp}{"\n"}{end}'
}
# Ready pods that are not being deleted.
ready_pods() { pod_table | awk '$3 == "True" && $4 == "" {n++} END {print n+0}'; }
live_pods() { pod_table | awk '$4 == "" {n++} END {print n+0}'; }
all_ready() { [[ $(ready_pods) == "$1" && $(live_pods) == "$1" ]]; }
per_node() { pod_table | awk '$4 == "" {print $2}' | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}'; }
rollout_done() { kubectl rollout status deployment/web --timeout=150s; }

step "a 6-replica Deployment is spread two per node"
t0=$SECONDS
deployment_yaml minik8s/busybox:1.35 | kubectl apply -f - >/dev/null
out=$(rollout_done 2>&1) || fail "first rollout: $out"
expect_contains "$out" "successfully rolled out" "rollout status of the new Deployment"
echo "6 pods Running and Ready in $((SECONDS - t0)) s"
kubectl get pods -o wide
expect_eq "$(per_node)" "node-1=2 node-2=2 node-3=2 " "pods per node"
expect_eq "$(kubectl get deploy web -o jsonpath='{.status.readyReplicas}/{.status.availableReplicas}')" \
  "6/6" "ready/available replicas"

step "a deleted pod is replaced"
victim=$(pod_table | awk 'NR == 1 {print $1}')
kubectl delete pod "$victim" --wait=false >/dev/null
wait_for 60 bash -c "! kubectl get pods -l app=web -o name | grep -q '/$victim\$'"
wait_for 60 all_ready 6 || pod_table
expect_not_contains "$(pod_table)" "$victim" "deleted pod gone"
expect_eq "$(ready_pods)" "6" "six ready pods after the delete"

step "a killed container is restarted in place"
read -r pod node _ < <(pod_table | awk '$4 == "" && NR == 2')
cid=$(kubectl get pod "$pod" -o jsonpath='{.status.containerStatuses[0].containerID}')
cid=${cid#containerd://}
[[ -n "$cid" ]] || fail "no containerID in the status of $pod"
ctr --address "$CL_DIR/nodes/$node/containerd/containerd.sock" -n k8s.io task kill -s KILL "$cid" ||
  fail "ctr task kill $cid on $node"
restarted() {
  [[ $(kubectl get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}') -ge 1 ]]
}
wait_for 60 restarted || kubectl describe pod "$pod" | tail -20
wait_for 60 all_ready 6
expect_eq "$(kubectl get pod "$pod" -o jsonpath='{.status.containerStatuses[0].restartCount}')" "1" \
  "restartCount of $pod"
expect_eq "$(ready_pods)" "6" "six ready pods after the kill, the same pod kept"
expect_contains "$(pod_table)" "$pod" "the pod whose container was killed is still there"

step "a rolling update never drops below 5 ready pods nor goes above 7"
kubectl set image deployment/web web=minik8s/busybox:latest >/dev/null
t0=$SECONDS
rollout_done >"$E2E_DIR/rollout.out" 2>&1 &
rollout_pid=$!
min_ready=6 max_live=6 samples=0
while kill -0 "$rollout_pid" 2>/dev/null; do
  table=$(pod_table)
  r=$(awk '$3 == "True" && $4 == "" {n++} END {print n+0}' <<<"$table")
  l=$(awk '$4 == "" {n++} END {print n+0}' <<<"$table")
  ((r < min_ready)) && min_ready=$r
  ((l > max_live)) && max_live=$l
  samples=$((samples + 1))
  sleep 0.2
done
wait "$rollout_pid" || fail "rollout status after set image: $(cat "$E2E_DIR/rollout.out")"
echo "rolled out in $((SECONDS - t0)) s; $samples samples: at least $min_ready ready, at most $max_live pods"
expect_contains "$(cat "$E2E_DIR/rollout.out")" "successfully rolled out" "rollout status returns"
((samples >= 5)) || fail "only $samples samples during the rollout"
((min_ready >= 5)) || fail "ready pods dropped to $min_ready (replicas 6, maxUnavailable 1)"
((max_live <= 7)) || fail "$max_live pods at once (replicas 6, maxSurge 1)"
pod_images() {
  kubectl get pods -l app=web -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | sort -u
}
# The old pods' grace period (2 s) may still be running.
wait_for 30 bash -c "[[ \$(kubectl get pods -l app=web -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u) == minik8s/busybox:latest ]]"
expect_eq "$(pod_images)" "minik8s/busybox:latest" "every pod runs the new image"
wait_for 30 all_ready 6

step "rollout history and undo"
history=$(kubectl rollout history deployment/web)
echo "$history"
expect_contains "$history" "REVISION" "history header"
expect_eq "$(awk '$1 ~ /^[0-9]+$/ {print $1}' <<<"$history" | tr '\n' ' ')" "1 2 " "revisions"
out=$(kubectl rollout undo deployment/web 2>&1)
expect_contains "$out" "rolled back" "rollout undo"
out=$(rollout_done 2>&1) || fail "rollout status after undo: $out"
expect_eq "$(kubectl get deploy web -o jsonpath='{.spec.template.spec.containers[0].image}')" \
  "minik8s/busybox:1.35" "template image after undo"
wait_for 60 all_ready 6
wait_for 30 bash -c "[[ \$(kubectl get pods -l app=web -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u) == minik8s/busybox:1.35 ]]"
expect_eq "$(pod_images)" "minik8s/busybox:1.35" "every pod runs the old image again"
history=$(kubectl rollout history deployment/web)
expect_eq "$(awk '$1 ~ /^[0-9]+$/ {print $1}' <<<"$history" | tr '\n' ' ')" "2 3 " \
  "revisions after undo (1 became 3)"
expect_eq "$(kubectl get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" \
  "3" "deployment revision annotation"

step "an unschedulable pod says why"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec:
  containers:
  - {name: c, image: minik8s/busybox:1.35, command: [sleep, "3600"], resources: {requests: {cpu: "100"}}}
YAML
wait_for 30 bash -c "kubectl describe pod huge | grep -q FailedScheduling"
described=$(kubectl describe pod huge)
expect_contains "$described" "0/3 nodes are available: 3 Insufficient cpu." "describe shows the reason"
expect_eq "$(kubectl get pod huge -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" \
  "Unschedulable" "PodScheduled condition"
expect_contains "$(kubectl get pod huge)" "Pending" "huge stays Pending"
kubectl delete pod huge --wait=false >/dev/null

step "cordon keeps new pods off a node"
on3=$(pod_table | awk '$2 == "node-3" && $4 == "" {n++} END {print n+0}')
kubectl cordon node-3 >/dev/null
expect_contains "$(kubectl get node node-3)" "SchedulingDisabled" "node-3 cordoned"
kubectl scale deployment web --replicas=9 >/dev/null
wait_for 90 all_ready 9 || pod_table
counts=$(per_node)
echo "after scaling to 9 with node-3 cordoned: $counts"
expect_eq "$(pod_table | awk '$2 == "node-3" && $4 == "" {n++} END {print n+0}')" "$on3" \
  "node-3 keeps its $on3 pods and gets no new one"
kubectl uncordon node-3 >/dev/null
expect_not_contains "$(kubectl get node node-3)" "SchedulingDisabled" "node-3 uncordoned"
kubectl scale deployment web --replicas=6 >/dev/null
wait_for 60 all_ready 6

step "drain moves the pods of node-2 to the other nodes"
before=$(pod_table | awk '$2 == "node-2" && $4 == "" {print $1}')
[[ -n "$before" ]] || fail "expected pods on node-2 before the drain"
t0=$SECONDS
kubectl drain node-2 --ignore-daemonsets --delete-emptydir-data --timeout=120s >"$E2E_DIR/drain.log" 2>&1 ||
  { fail "kubectl drain failed"; cat "$E2E_DIR/drain.log" >&2; }
cat "$E2E_DIR/drain.log"
for p in $before; do expect_contains "$(cat "$E2E_DIR/drain.log")" "pod/$p evicted" "drain evicts $p"; done
expect_contains "$(kubectl get node node-2)" "SchedulingDisabled" "drained node is cordoned"
wait_for 90 all_ready 6 || pod_table
echo "drained and back to 6 ready pods in $((SECONDS - t0)) s: $(per_node)"
expect_not_contains "$(per_node)" "node-2" "no pod left on node-2"
expect_eq "$(kubectl get pods --field-selector spec.nodeName=node-2 -o name | wc -l)" "0" \
  "no pod object bound to node-2"
kubectl uncordon node-2 >/dev/null

finish
