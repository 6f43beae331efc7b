#!/usr/bin/env bash
# Deployment scale-out on a real 3-node cluster (`minik8s cluster up`, real containers): the time
# for a 100-replica Deployment to be fully Running (and Ready), against the baseline of creating
# the same 100 pods directly (one `kubectl apply` of 100 pod documents). Images are pulled onto every node by
# a warm-up first, so both runs start from the same state. Reports figures, never fails on a time.
#
#   sudo MINIK8S_BIN=build/bin/minik8s bash bench/deployment_scale_bench.sh [REPLICAS]
# Cluster "bdep" on the underlay 172.29.111.0/24 unless BENCH_CLUSTER / BENCH_SUBNET say otherwise.
# Cleans up (cluster, namespaces, links, rules, processes) on any exit.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
N=${1:-100}
bench_load start

bench_cluster bdep 172.29.111 3 || exit 1
echo "cluster up: ${UP_TOTAL_S} s (${UP_AFTER_REGISTRY_S} s after the registry)"

pod_spec() {
  cat <<YAML
      terminationGracePeriodSeconds: 0
      containers:
      - name: c
        image: minik8s/busybox:1.35
        command: [sleep, "3600"]
        resources: {requests: {cpu: 5m, memory: 4Mi}}
YAML
}
deployment_yaml() {  # name replicas
  cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
$(pod_spec)
YAML
}
pods_yaml() {  # app count: one YAML document per pod
  for i in $(seq 1 "$2"); do
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1-$i, labels: {app: $1}}
spec:
$(pod_spec | sed 's/^    //')
YAML
  done
}
count_phase() {  # app phase
  kubectl get pods -l "app=$1" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' |
    grep -c "^$2\$"
}
count_ready() {
  kubectl get pods -l "app=$1" \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    grep -c '^True$'
}
# time_until_running APP START_SECONDS: prints "<running s> <ready s>" once all N pods are both.
time_until_running() {
  local running_at="" deadline=$((SECONDS + 600))
  while ((SECONDS < deadline)); do
    [[ -z "$running_at" && $(count_phase "$1" Running) -ge $N ]] && running_at=$(now_ms)
    if [[ -n "$running_at" && $(count_ready "$1") -ge $N ]]; then
      secs() { awk -v ms="$1" 'BEGIN {printf "%.1f", ms / 1000}'; }
      echo "$(secs $((running_at - $2))) $(secs $(($(now_ms) - $2)))"
      return 0
    fi
    sleep 0.5
  done
  echo "timeout timeout"
}
# breakdown APP T0_MS: when the pods were created, scheduled and started, relative to the apply
# (server timestamps, whole seconds): the last pod created, scheduled (PodScheduled=True) and
# Running (its container's startedAt), and how many pods were created in each second (the
# ReplicaSet controller's slow-start batches show as 1, 2, 4, 8...).
breakdown() {
  kubectl get pods -l "app=$1" -o json | jq -r --argjson t0 "$(($2 / 1000))" '
    def ts: sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601 - $t0;
    [.items[] | {
      c: (.metadata.creationTimestamp | ts),
      s: ([.status.conditions[]? | select(.type == "PodScheduled" and .status == "True")
           | .lastTransitionTime | ts] | max),
      r: ([.status.containerStatuses[]?.state.running.startedAt // empty | ts] | max)}] as $p
    | "  last created +\($p | map(.c) | max) s, last scheduled +\($p | map(.s) | max) s, " +
      "last container started +\($p | map(.r) | max) s (server clock, whole seconds)",
      "  created per second: " +
      ([$p | group_by(.c)[] | "+\(.[0].c)s:\(length)"] | join(" "))'
}
clean() {  # app
  kubectl delete deployment "$1" --ignore-not-found --wait=false >/dev/null 2>&1
  kubectl delete pods -l "app=$1" --grace-period=0 --wait=false >/dev/null 2>&1
  wait_for 300 bash -c "[[ \$(kubectl get pods -l app=$1 --no-headers 2>/dev/null | wc -l) == 0 ]]"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

step "warm-up: the image on every node"
deployment_yaml warm 6 | kubectl apply -f - >/dev/null
kubectl rollout status deployment/warm --timeout=180s >/dev/null
clean warm

step "a $N-replica Deployment"
t0=$(now_ms)
deployment_yaml scale "$N" | kubectl apply -f - >/dev/null
read -r dep_running dep_ready < <(time_until_running scale "$t0")
echo "Deployment: all $N Running after $dep_running s, Ready after $dep_ready s"
kubectl get pods -l app=scale -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | uniq -c
breakdown scale "$t0"
clean scale

step "the same $N pods created directly (one kubectl apply of $N documents)"
pods_yaml direct "$N" >"$E2E_DIR/pods.yaml"
t0=$(now_ms)
kubectl apply -f "$E2E_DIR/pods.yaml" >/dev/null || fail "creating the pods"
created=$((($(now_ms) - t0)))
read -r pod_running pod_ready < <(time_until_running direct "$t0")
echo "direct pods: created in ${created} ms; all $N Running after $pod_running s, Ready after $pod_ready s  [baseline]"
breakdown direct "$t0"
clean direct

echo
echo "RESULT replicas=$N deployment_running_s=$dep_running direct_running_s=$pod_running" \
  "ratio=$(awk -v a="$dep_running" -v b="$pod_running" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}')"
bench_load end
finish
