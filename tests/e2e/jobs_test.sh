#!/usr/bin/env bash
# Jobs on a real 3-node cluster with the real kubectl: `kubectl create job`, `wait
# --for=condition=complete`, `logs job/NAME` and the `get jobs` columns; an Indexed Job of 6
# completions with parallelism 3 spread over the nodes, each pod seeing its JOB_COMPLETION_INDEX;
# a failing Job stopped by backoffLimit (with back-off between pods); a FailJob podFailurePolicy;
# ttlSecondsAfterFinished; deleting a Job takes its pods; and a control-plane SIGKILL in the
# middle of an Indexed Job that neither duplicates nor loses a pod.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 3 nodes"
start_cluster job 172.29.109 3 || exit 1
IMAGE=minik8s/busybox:1.35

job_field() { kubectl get job "$1" -o jsonpath="$2"; }
job_pods() { kubectl get pods -l "job-name=$1" -o name | wc -l; }

step "kubectl create job, wait for complete, logs job/NAME, get jobs"
t0=$SECONDS
kubectl create job hello --image=$IMAGE -- sh -c 'echo hello from a job' >/dev/null ||
  fail "kubectl create job"
out=$(kubectl wait --for=condition=complete job/hello --timeout=90s 2>&1) ||
  { fail "wait for hello: $out"; kubectl describe job hello; kubectl get pods -o wide; }
expect_contains "$out" "job.batch/hello condition met" "kubectl wait --for=condition=complete"
echo "a one-pod Job completed in $((SECONDS - t0)) s"
expect_contains "$(kubectl logs job/hello)" "hello from a job" "kubectl logs job/hello"
out=$(kubectl get jobs)
echo "$out"
expect_contains "$(head -1 <<<"$out")" "NAME    STATUS     COMPLETIONS   DURATION   AGE" "get jobs columns"
expect_contains "$out" "Complete   1/1" "hello Complete 1/1"
expect_eq "$(job_field hello '{.status.succeeded}/{.status.failed}')" "1/" "succeeded, no failure"
[[ -n "$(job_field hello '{.status.completionTime}')" ]] || fail "completionTime set"
expect_contains "$(kubectl describe job hello)" "Completed" "describe shows the Completed event"
expect_eq "$(kubectl get pods -l job-name=hello -o jsonpath='{.items[*].metadata.finalizers}')" "" \
  "the finished pod keeps no tracking finalizer"

step "an Indexed Job of 6 completions, parallelism 3, over the nodes"
kubectl apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: indexed}
spec:
  completions: 6
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: worker
        image: $IMAGE
        command: ["sh", "-c", "echo index=\$JOB_COMPLETION_INDEX host=\$(hostname); sleep 1"]
YAML
out=$(kubectl wait --for=condition=complete job/indexed --timeout=120s 2>&1) ||
  { fail "indexed job: $out"; kubectl describe job indexed; kubectl get pods -o wide; }
expect_eq "$(job_field indexed '{.status.completedIndexes} {.status.succeeded}')" "0-5 6" \
  "completedIndexes and succeeded"
expect_eq "$(job_pods indexed)" "6" "exactly 6 pods"
nodes=$(kubectl get pods -l job-name=indexed -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | wc -l)
echo "the Indexed Job ran on $nodes nodes"
((nodes >= 2)) || fail "the pods of the Indexed Job ran on $nodes node(s)"
seen=""
for p in $(kubectl get pods -l job-name=indexed -o name); do
  idx=$(kubectl get "$p" -o jsonpath="{.metadata.annotations['batch\.kubernetes\.io/job-completion-index']}")
  expect_contains "$(kubectl logs "$p")" "index=$idx host=indexed-$idx" "$p sees its index and hostname"
  seen="$seen$idx "
done
expect_eq "$(tr ' ' '\n' <<<"$seen" | sort -n | tr '\n' ' ')" " 0 1 2 3 4 5 " "one pod per index"

step "backoffLimit stops a failing Job (back-off between pods)"
t0=$SECONDS
kubectl apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: failing}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: $IMAGE, command: ["sh", "-c", "echo failing; exit 3"]}
YAML
out=$(kubectl wait --for=condition=failed job/failing --timeout=90s 2>&1) ||
  { fail "failing job: $out"; kubectl describe job failing; }
echo "backoffLimit 1 reached in $((SECONDS - t0)) s"
expect_eq "$(job_field failing '{.status.failed}')" "2" "two failed pods"
expect_eq "$(job_field failing '{.status.conditions[?(@.type=="Failed")].reason}')" \
  "BackoffLimitExceeded" "Failed reason"
expect_contains "$(kubectl get job failing)" "Failed" "get job shows Failed"
expect_contains "$(kubectl describe job failing)" "BackoffLimitExceeded" "describe shows the event"
# The second pod waited for the back-off (10 s) after the first failure.
first_end=$(kubectl get pods -l job-name=failing --sort-by=.metadata.creationTimestamp \
  -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.finishedAt}')
second_start=$(kubectl get pods -l job-name=failing --sort-by=.metadata.creationTimestamp \
  -o jsonpath='{.items[1].metadata.creationTimestamp}')
gap=$(($(date -d "$second_start" +%s) - $(date -d "$first_end" +%s)))
echo "second pod created $gap s after the first failed"
((gap >= 9)) || {
  fail "no back-off between the failed pods ($gap s)"
  kubectl get events --field-selector involvedObject.name=failing
  kubectl get pods -l job-name=failing -o wide
  kubectl get job failing -o yaml
}

step "podFailurePolicy FailJob on exit code 42"
kubectl apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: policy}
spec:
  backoffLimit: 6
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: c, operator: In, values: [42]}
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: $IMAGE, command: ["sh", "-c", "exit 42"]}
YAML
out=$(kubectl wait --for=condition=failed job/policy --timeout=60s 2>&1) ||
  { fail "policy job: $out"; kubectl describe job policy; }
expect_eq "$(job_field policy '{.status.conditions[?(@.type=="Failed")].reason}')" \
  "PodFailurePolicy" "Failed by the policy at the first failure"
expect_contains "$(job_field policy '{.status.conditions[?(@.type=="Failed")].message}')" \
  "failed with exit code 42 matching FailJob rule at index 0" "policy message"
expect_eq "$(job_pods policy)" "1" "no retry after FailJob"

step "ttlSecondsAfterFinished deletes a finished Job with its pods"
kubectl apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: shortlived}
spec:
  ttlSecondsAfterFinished: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: $IMAGE, command: ["true"]}
YAML
wait_for 60 bash -c "! kubectl get job shortlived" || kubectl get job shortlived -o yaml
wait_for 30 bash -c "[[ \$(kubectl get pods -l job-name=shortlived -o name | wc -l) == 0 ]]"

step "kubectl delete job takes its pods"
kubectl delete job hello indexed >/dev/null || fail "delete jobs"
wait_for 60 bash -c "[[ \$(kubectl get pods -l 'job-name in (hello,indexed)' -o name | wc -l) == 0 ]]" ||
  kubectl get pods -l 'job-name in (hello,indexed)' -o yaml | grep -E 'name:|finalizers|deletion'

step "control plane SIGKILL in the middle of an Indexed Job: no pod duplicated or lost"
kubectl apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: survivor}
spec:
  completions: 8
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: $IMAGE, command: ["sh", "-c", "sleep 2"]}
YAML
wait_for 60 bash -c "[[ \$(kubectl get job survivor -o jsonpath='{.status.succeeded}') -ge 2 ]]"
kill -9 "$(cluster_state .serverPid)"
echo "server killed with $(job_field survivor '{.status.succeeded}' 2>/dev/null || echo '?') completions recorded"
sleep 3
out=$(cluster_cmd up 2>&1) || { fail "cluster up after the kill"; echo "$out"; }
out=$(kubectl wait --for=condition=complete job/survivor --timeout=120s 2>&1) ||
  { fail "survivor: $out"; kubectl describe job survivor; }
expect_eq "$(job_field survivor '{.status.completedIndexes} {.status.succeeded}')" "0-7 8" \
  "every index completed once"
expect_eq "$(job_field survivor '{.status.failed}')" "" "no failure"
expect_eq "$(job_pods survivor)" "8" "exactly 8 pods: none duplicated, none lost"

finish
