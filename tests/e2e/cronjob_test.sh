#!/usr/bin/env bash
# CronJobs on a real 1-node cluster with the real kubectl: `kubectl create cronjob` every minute
# runs Jobs that complete, keeps successfulJobsHistoryLimit, shows in `get cronjobs`; `kubectl
# create job --from=cronjob/NAME` runs one by hand; a bad schedule gets 422 with its field path;
# deleting it deletes its Jobs. (Time zones, missed schedules, concurrency, suspend: unit tests.)
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 1 node"
start_cluster cron 172.29.114 1 || exit 1
IMAGE=minik8s/busybox:1.35

step "a bad schedule is refused with its field path"
out=$(kubectl create cronjob bad --image=$IMAGE --schedule="61 * * * *" -- true 2>&1)
expect_contains "$out" 'spec.schedule: Invalid value: "61 * * * *"' "422 names spec.schedule"

step "kubectl create cronjob, every minute"
kubectl create cronjob tick --image=$IMAGE --schedule="*/1 * * * *" -- sh -c 'echo tick' >/dev/null ||
  fail "kubectl create cronjob"
out=$(kubectl get cronjobs)
echo "$out"
expect_contains "$(head -1 <<<"$out")" "SCHEDULE" "get cronjobs columns"
expect_contains "$out" "*/1 * * * *" "schedule shown"
expect_eq "$(kubectl get cj tick -o jsonpath='{.spec.concurrencyPolicy} {.spec.suspend}')" "Allow false" \
  "defaults"

step "kubectl create job --from=cronjob/tick runs it by hand"
kubectl create job manual --from=cronjob/tick >/dev/null || fail "create job --from"
out=$(kubectl wait --for=condition=complete job/manual --timeout=60s 2>&1) || fail "manual job: $out"
expect_contains "$(kubectl logs job/manual)" "tick" "the manual run's log"
# A Job made --from a CronJob is owned by it and counts toward its history limit, as in
# Kubernetes: with limit 1 a scheduled run finishing meanwhile would delete it before its log is
# read, so the limit drops to 1 only now (the scheduled runs below delete the manual one).
kubectl patch cronjob tick --type=merge -p '{"spec":{"successfulJobsHistoryLimit":1}}' >/dev/null ||
  fail "set successfulJobsHistoryLimit 1"

completed_runs() {
  kubectl get jobs -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name} {.status.succeeded}{"\n"}{end}' |
    awk '$1 == "tick" && $2 == 1 {n++} END {print n+0}'
}
step "two scheduled runs complete; one is kept"
t0=$SECONDS
last_schedule() { kubectl get cronjob tick -o jsonpath='{.status.lastScheduleTime}'; }
wait_for 90 bash -c "[[ \$(kubectl get cronjob tick -o jsonpath='{.status.lastScheduleTime}') != '' ]]" ||
  kubectl describe cronjob tick
first=$(last_schedule)
echo "first scheduled run at $first, $((SECONDS - t0)) s after creation"
wait_for 90 bash -c "[[ \$(kubectl get cronjob tick -o jsonpath='{.status.lastScheduleTime}') != '$first' ]]"
second=$(last_schedule)
echo "second scheduled run at $second"
[[ $(date -d "$second" +%s) -eq $(($(date -d "$first" +%s) + 60)) ]] ||
  fail "runs a minute apart ($first, $second)"
wait_for 60 bash -c "[[ \$(kubectl get jobs -o name | grep -c '^job.batch/tick-') == 1 && \$(kubectl get cronjob tick -o jsonpath='{.status.active}') == '' ]]" ||
  kubectl get jobs
expect_eq "$(kubectl get jobs -o name | grep -c '^job.batch/tick-')" "1" \
  "successfulJobsHistoryLimit 1 keeps one scheduled Job"
expect_eq "$(completed_runs)" "1" "the kept Job completed"
[[ -n "$(kubectl get cronjob tick -o jsonpath='{.status.lastSuccessfulTime}')" ]] ||
  fail "lastSuccessfulTime set"
events=$(kubectl get events --field-selector involvedObject.name=tick -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}')
for reason in SuccessfulCreate SawCompletedJob SuccessfulDelete; do
  expect_contains "$events" "$reason" "CronJob event $reason"
done
expect_contains "$(kubectl get cronjob tick)" "False" "get cronjob shows SUSPEND False"

step "deleting the CronJob deletes its Jobs"
kubectl delete cronjob tick >/dev/null || fail "delete cronjob"
wait_for 60 bash -c "[[ \$(kubectl get jobs -o name | grep -c '^job.batch/tick-') == 0 ]]" ||
  fail "the CronJob's Jobs are deleted with it"

finish
