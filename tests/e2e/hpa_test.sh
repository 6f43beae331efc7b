#!/usr/bin/env bash
# HorizontalPodAutoscalers on a real 3-node cluster with real containers, driven by the real
# kubectl: `kubectl top` shows real figures; a CPU-burning Deployment (kubectl autoscale, v1) is
# scaled up within a minute and back down when the load stops; a Deployment holding memory
# (autoscaling/v2, memory Utilization) likewise. The server runs with short HPA windows.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up with a 2 s HPA sync period and a 10 s downscale window"
start_cluster hpa 172.29.105 3 \
  --server-arg=--horizontal-pod-autoscaler-sync-period=2s \
  --server-arg=--horizontal-pod-autoscaler-downscale-stabilization=10s || exit 1
# The server's pid from the cluster's state (a pgrep on the data dir also matches the agents, whose
# flags name the server's CA file).
expect_contains "$(tr '\0' ' ' </proc/"$(jq -r .serverPid "$CL_DIR/cluster.json")"/cmdline)" \
  "--horizontal-pod-autoscaler-sync-period=2s" "the server got the extra flag"

replicas() { kubectl get deploy "$1" -o jsonpath='{.status.replicas}'; }
spec_replicas() { kubectl get deploy "$1" -o jsonpath='{.spec.replicas}'; }
targets() { kubectl get hpa "$1" --no-headers | awk '{for (i = 3; i < NF - 3; i++) printf "%s ", $i; print ""}'; }
# wait_replicas DEPLOY N SECONDS: spec.replicas reaches N; prints the time it took.
wait_replicas() {
  local t0=$SECONDS
  wait_for "$3" bash -c "[[ \$(kubectl get deploy $1 -o jsonpath='{.spec.replicas}') == $2 ]]" ||
    { kubectl describe hpa "$1" | tail -20; return 1; }
  echo "$1 at $2 replicas after $((SECONDS - t0)) s"
}

step "a CPU-burning Deployment and kubectl autoscale"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: burn}
spec:
  replicas: 1
  selector: {matchLabels: {app: burn}}
  template:
    metadata: {labels: {app: burn}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: burn
        image: minik8s/busybox:1.35
        # Burns a core (capped at 200m) while /tmp/burn exists.
        command: ["sh", "-c", "while true; do while [ -f /tmp/burn ]; do :; done; sleep 0.5; done"]
        resources: {requests: {cpu: 100m}, limits: {cpu: 200m}}
YAML
kubectl rollout status deployment/burn --timeout=90s >/dev/null || fail "burn did not start"
burner=$(kubectl get pods -l app=burn -o jsonpath='{.items[0].metadata.name}')
out=$(kubectl autoscale deployment burn --cpu-percent=50 --min=1 --max=4 2>&1)
expect_contains "$out" "autoscaled" "kubectl autoscale"
wait_for 40 bash -c "kubectl get hpa burn --no-headers | grep -Eq 'cpu: [0-9]+%/50%'"
echo "idle: $(targets burn)"
expect_contains "$(kubectl get hpa burn)" "%/50%" "TARGETS shows a cpu percentage"

step "kubectl top shows real figures"
wait_for 30 bash -c "kubectl top node --no-headers | grep -q node-3"
sleep 1  # the first query has no earlier reading to take a cpu rate from
top=$(kubectl top node --no-headers)
echo "$top"
expect_eq "$(awk '$2 ~ /^[1-9][0-9]*m$/ && $4 ~ /^[1-9][0-9]*Mi$/ {n++} END {print n+0}' <<<"$top")" \
  "3" "three nodes with non-zero cpu and memory"
top=$(kubectl top node --no-headers)  # at once again: still a real rate
expect_eq "$(awk '$2 ~ /^[1-9][0-9]*m$/ {n++} END {print n+0}' <<<"$top")" "3" \
  "non-zero node cpu on a query right after another"
top=$(kubectl top pod --no-headers)
echo "$top"
expect_contains "$top" "$burner" "kubectl top pod lists the burner"

step "load: the HPA scales burn up to 4 within a minute"
kubectl exec "$burner" -- touch /tmp/burn || fail "could not start the load"
t0=$SECONDS
seen=""
until [[ $(spec_replicas burn) == 4 ]] || ((SECONDS - t0 > 60)); do
  t=$(targets burn); [[ $t =~ cpu:\ ([0-9]+)% ]] && ((BASH_REMATCH[1] > 50)) && seen=$t
  sleep 1
done
expect_eq "$(spec_replicas burn)" "4" "burn replicas within a minute of load"
echo "scaled to $(spec_replicas burn) in $((SECONDS - t0)) s; TARGETS above target seen: '$seen'"
# One burning pod (~200m) over four pods' requests (400m): TARGETS shows that real load.
wait_for 20 bash -c "kubectl get hpa burn --no-headers | grep -Eq 'cpu: ([3-9][0-9]|[1-9][0-9][0-9]+)%/50%'" ||
  fail "TARGETS does not show the load: $(targets burn)"
echo "TARGETS with 4 replicas: $(targets burn)"
# The burner's share of 2 cores shrinks while other work runs: sample until one window shows it.
burner_busy() {
  local cpu
  cpu=$(kubectl top pod "$burner" --no-headers | awk '{print $2}')
  cpu=${cpu%m}
  ((${cpu:-0} >= 100))
}
wait_for 30 burner_busy ||
  fail "kubectl top pod $burner shows $(kubectl top pod "$burner" --no-headers | awk '{print $2}') under load (limit 200m)"
echo "top: $(kubectl top pod "$burner" --no-headers)"
events=$(kubectl describe hpa burn)
expect_contains "$events" "SuccessfulRescale" "rescale event"
expect_contains "$events" "New size: 4; reason: cpu resource utilization (percentage of request) above target" \
  "rescale message"
wait_for 60 bash -c "[[ \$(kubectl get deploy burn -o jsonpath='{.status.readyReplicas}') == 4 ]]"

step "the load stops: back down to 1"
kubectl exec "$burner" -- rm -f /tmp/burn || fail "could not stop the load"
t0=$SECONDS
wait_replicas burn 1 90
echo "scaled down after $((SECONDS - t0)) s (10 s stabilization window): $(targets burn)"
expect_contains "$(kubectl describe hpa burn)" "below target" "scale-down event"
kubectl delete hpa burn >/dev/null
kubectl delete deployment burn --wait=false >/dev/null

step "a memory HPA (autoscaling/v2, 60% of requests)"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: mem}
spec:
  replicas: 1
  selector: {matchLabels: {app: mem}}
  template:
    metadata: {labels: {app: mem}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: mem
        image: minik8s/python:latest
        # Holds as many MiB as /tmp/mb says (written pages, so they count in the working set).
        command:
        - python3
        - -c
        - |
          import time
          hold = b""
          while True:
              try:
                  mb = int(open("/tmp/mb").read())
              except Exception:
                  mb = 0
              if len(hold) != mb << 20:
                  hold = b""
                  hold = b"\x01" * (mb << 20)
              time.sleep(0.5)
        resources: {requests: {memory: 64Mi}, limits: {memory: 256Mi}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: mem}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: mem}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: memory, target: {type: Utilization, averageUtilization: 60}}
YAML
kubectl rollout status deployment/mem --timeout=90s >/dev/null || fail "mem did not start"
holder=$(kubectl get pods -l app=mem -o jsonpath='{.items[0].metadata.name}')
wait_for 40 bash -c "kubectl get hpa mem --no-headers | grep -Eq 'memory: [0-9]+%/60%'"
echo "idle: $(targets mem)"
expect_eq "$(spec_replicas mem)" "1" "idle memory keeps one replica"

step "the pod grows to 100 MiB: the HPA scales mem up"
kubectl exec "$holder" -- sh -c 'echo 100 > /tmp/mb' || fail "could not grow the memory"
t0=$SECONDS
wait_for 30 bash -c "kubectl top pod $holder --no-headers | awk '{exit !(\$3+0 >= 90)}'"
echo "top: $(kubectl top pod "$holder" --no-headers)"
wait_replicas mem 3 60
echo "TARGETS with 100 MiB held: $(targets mem)"
expect_contains "$(kubectl describe hpa mem)" "memory resource utilization (percentage of request) above target" \
  "memory rescale event"

step "the memory is released: back down to 1"
kubectl exec "$holder" -- sh -c 'echo 0 > /tmp/mb' || fail "could not release the memory"
wait_replicas mem 1 90
echo "after release: $(targets mem)"
out=$(kubectl get hpa mem -o jsonpath='{.status.currentMetrics[0].resource.current.averageUtilization}')
((out < 60)) || fail "memory utilization after release is $out%"

finish
