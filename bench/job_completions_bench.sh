#!/usr/bin/env bash
# A Job of N completions with parallelism P (default 200 and 20) of a pod that exits at once, on
# a real 3-node cluster: the time from `kubectl apply` to the Complete condition, against the
# baseline of creating the same N pods directly (one `kubectl apply` of N documents) and waiting
# until all N have Succeeded. The image is pulled onto every node by a warm-up first. Reports
# figures, never fails on a time.
#
#   sudo MINIK8S_BIN=build/bin/minik8s bash bench/job_completions_bench.sh [N] [P]
# Cluster "bjob" on the underlay 172.29.113.0/24 unless BENCH_CLUSTER / BENCH_SUBNET say otherwise.
# Cleans up (cluster, namespaces, links, rules, processes) on any exit.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
N=${1:-200}
P=${2:-20}
bench_load start

bench_cluster bjob 172.29.113 3 || exit 1
echo "cluster up: ${UP_TOTAL_S} s (${UP_AFTER_REGISTRY_S} s after the registry)"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { awk -v ms="$1" 'BEGIN {printf "%.1f", ms / 1000}'; }

pod_spec() {  # indent
  sed "s/^/$1/" <<YAML
restartPolicy: Never
terminationGracePeriodSeconds: 0
containers:
- name: c
  image: minik8s/busybox:1.35
  command: ["true"]
  resources: {requests: {cpu: 5m, memory: 4Mi}}
YAML
}
job_yaml() {  # name completions parallelism
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  completions: $2
  parallelism: $3
  backoffLimit: 1000
  template:
    spec:
$(pod_spec "      ")
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
$(pod_spec "  ")
YAML
  done
}

step "warm-up: the image on every node"
job_yaml warm 6 6 | kubectl apply -f - >/dev/null
kubectl wait --for=condition=complete job/warm --timeout=180s >/dev/null || fail "warm-up job"
kubectl delete job warm --wait=true >/dev/null

step "a Job of $N completions, parallelism $P"
t0=$(now_ms)
job_yaml burst "$N" "$P" | kubectl apply -f - >/dev/null
kubectl wait --for=condition=complete job/burst --timeout=900s >/dev/null || fail "job burst"
job_ms=$(($(now_ms) - t0))
echo "Job: Complete after $(secs $job_ms) s ($(kubectl get job burst -o jsonpath='{.status.succeeded} succeeded, {.status.failed} failed'))"
kubectl get pods -l job-name=burst -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | uniq -c
kubectl delete job burst --wait=true --timeout=300s >/dev/null

step "the same $N pods created directly (one kubectl apply of $N documents)"
pods_yaml direct "$N" >"$E2E_DIR/pods.yaml"
t0=$(now_ms)
kubectl apply -f "$E2E_DIR/pods.yaml" >/dev/null || fail "creating the pods"
deadline=$((SECONDS + 900))
until [[ $(kubectl get pods -l app=direct -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' |
  grep -c '^Succeeded$') -ge $N ]]; do
  ((SECONDS < deadline)) || { fail "direct pods did not all succeed"; break; }
  sleep 0.5
done
pods_ms=$(($(now_ms) - t0))
echo "direct pods: all $N Succeeded after $(secs $pods_ms) s  [baseline, no parallelism limit]"
kubectl delete pods -l app=direct --wait=false >/dev/null

echo
echo "RESULT completions=$N parallelism=$P job_complete_s=$(secs $job_ms)" \
  "direct_pods_succeeded_s=$(secs $pods_ms)" \
  "ratio=$(awk -v a="$job_ms" -v b="$pods_ms" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}')"
bench_load end
finish
