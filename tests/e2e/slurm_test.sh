#!/usr/bin/env bash
# SlurmJob end to end: a real Slurm (scripts/slurm.sh: munged, slurmctld, slurmd on this host, a
# stand-in for an HPC cluster) and a 2-node cluster whose submitter pods reach it over the
# underlay. A C++ program is uploaded, built and run in a Slurm job and its output read back; a
# failing build, a non-zero exit, an unknown partition and a time limit end Failed with the
# reason; kubectl delete cancels the Slurm job; a submitter killed mid-job does not submit twice;
# two jobs run in two submitter pods.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "SKIPPED: slurmctld or munged not installed (scripts/setup.sh installs them)"
  [[ -n "${CI:-}" ]] && exit 1
  exit 0
fi

SUBNET=172.29.127
SL_DIR=/tmp/minik8s-e2e-slurm-hpc
bash "$SOURCE_DIR/scripts/slurm.sh" down "$SL_DIR" >/dev/null 2>&1
rm -rf "$SL_DIR"

step "a 2-node cluster and a local Slurm reachable from its pods"
start_cluster slurm "$SUBNET" 2 || exit 1
trap 'rc=$?; bash "$SOURCE_DIR/scripts/slurm.sh" down "$SL_DIR" >/dev/null 2>&1; rm -rf "$SL_DIR"; cluster_down_quiet; (exit $rc); cleanup' EXIT
out=$(bash "$SOURCE_DIR/scripts/slurm.sh" up "$SL_DIR" --address "$SUBNET.1" \
  --ctld-port "$(free_port)" --slurmd-port "$(free_port)" 2>&1) || { echo "$out"; fail "slurm up"; finish; }
export SLURM_CONF=$SL_DIR/slurm.conf
sinfo
kubectl create secret generic slurm --from-file=munge.key="$SL_DIR/munge.key" \
  --from-file=slurm.conf="$SL_DIR/client/slurm.conf" --from-literal=shared-dir="$SL_DIR/shared" >/dev/null ||
  fail "create the credentials Secret"

step "the kind is served: CRD, explain, validation"
wait_for 30 kubectl get crd slurmjobs.slurm.minik8s.io || fail "the SlurmJob CRD is installed"
expect_contains "$(kubectl explain slurmjob.spec.slurm 2>&1)" "cpusPerTask" "kubectl explain"
out=$(kubectl apply -f - 2>&1 <<'YAML'
apiVersion: slurm.minik8s.io/v1
kind: SlurmJob
metadata: {name: bad}
spec: {slurm: {time: "two hours", nodes: 0}, run: hostname}
YAML
)
expect_contains "$out" 'spec.slurm.time' "a malformed time limit is refused with its field"
expect_contains "$out" 'spec.slurm.nodes' "nodes: 0 is refused with its field"

phase() { kubectl get sj "$1" -o jsonpath='{.status.phase}'; }
field() { kubectl get sj "$1" -o jsonpath="{.status.$2}"; }
wait_phase() {  # NAME PHASE SECONDS
  wait_for "$3" bash -c "[[ \$(kubectl get sj $1 -o jsonpath='{.status.phase}') == $2 ]]" ||
    { kubectl describe sj "$1"; kubectl logs -l "slurm.minik8s.io/job-name=$1" --tail=20; return 1; }
}
sj() {  # NAME PARTITION TIME RUN
  kubectl apply -f - >/dev/null <<YAML
apiVersion: slurm.minik8s.io/v1
kind: SlurmJob
metadata: {name: $1}
spec:
  slurm: {partition: $2, time: "$3", cpusPerTask: 1}
  run: |
    $4
YAML
}

step "a job over its time limit (started first: Slurm checks limits every 30 s)"
sj overtime debug 1 "sleep 300"

step "a C++ program uploaded with minik8s job submit, built and run by Slurm"
t0=$(date +%s.%N)
out=$("$MINIK8S_BIN" job submit "$SOURCE_DIR/examples/gpu/slurmjob-cpu.yaml" --source "$SOURCE_DIR/examples/gpu" 2>&1)
expect_contains "$out" "slurmjob.slurm.minik8s.io/matmul-cpu created" "job submit"
wait_for 60 bash -c "[[ -n \$(kubectl get sj matmul-cpu -o jsonpath='{.status.jobId}') ]]" || fail "sbatch accepted matmul-cpu"
t1=$(date +%s.%N)
wait_phase matmul-cpu Succeeded 120 || fail "matmul-cpu Succeeded"
t2=$(date +%s.%N)
id=$(field matmul-cpu jobId)
end=$(scontrol show job -o "$id" | grep -o 'EndTime=[^ ]*' | cut -d= -f2)
echo "apply -> sbatch accepted: $(echo "$t1 - $t0" | bc) s; apply -> Succeeded: $(echo "$t2 - $t0" | bc) s"
expect_contains "$(scontrol show job -o "$id")" "JobState=COMPLETED" "Slurm says COMPLETED"
expect_contains "$(field matmul-cpu outputTail)" "check=ok" "status.outputTail has the result line"
expect_eq "$(field matmul-cpu exitCode)" "0" "exit code 0"
out=$("$MINIK8S_BIN" job output matmul-cpu)
expect_contains "$out" "== build" "job output has the build"
expect_contains "$out" "matmul M=256 N=256 K=256 device=cpu" "job output has the program's line"
expect_not_contains "$out" "[slurm-submitter]" "job output leaves out the submitter's own log"
expect_contains "$(kubectl logs -l slurm.minik8s.io/job-name=matmul-cpu --tail=-1)" "check=ok" "kubectl logs of the submitter pod"
table=$(kubectl get sj matmul-cpu)
expect_contains "$table" "PHASE" "table columns"
expect_contains "$(echo "$table" | tail -1)" "Succeeded   $id" "table row: phase and Slurm id"

step "a failing build, a non-zero exit and an unknown partition end Failed with the reason"
kubectl create configmap broken-src --from-literal=main.cc='int main() { return undefined_name; }' >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: slurm.minik8s.io/v1
kind: SlurmJob
metadata: {name: badbuild}
spec:
  slurm: {time: "5"}
  source: {configMap: broken-src}
  build: g++ -o main main.cc
  run: ./main
YAML
sj exit3 debug 5 "echo about to fail; exit 3"
sj nopart nosuch 5 "hostname"
for j in badbuild exit3 nopart; do wait_phase "$j" Failed 90 || fail "$j Failed"; done
expect_eq "$(field badbuild reason)" "BuildFailed" "badbuild reason"
expect_contains "$(field badbuild message)" "undefined_name" "badbuild says the compiler's error"
expect_eq "$(field exit3 reason)" "NonZeroExitCode" "exit3 reason"
expect_eq "$(field exit3 exitCode)" "3" "exit3 exit code"
expect_eq "$(field nopart reason)" "SubmitRefused" "nopart reason"
expect_contains "$(field nopart message)" "nvalid partition" "nopart has Slurm's message"

step "kubectl delete cancels the Slurm job"
sj long debug 10 "sleep 600"
wait_phase long Running 60 || fail "long Running"
id=$(field long jobId)
kubectl delete sj long --timeout=60s >/dev/null || fail "kubectl delete sj long"
# Slurm says COMPLETING while the job's processes end, then CANCELLED.
wait_for 20 bash -c "scontrol show job -o $id | grep -q JobState=CANCELLED" ||
  fail "Slurm job $id cancelled: $(scontrol show job -o "$id" | grep -o 'JobState=[^ ]*')"
expect_contains "$(kubectl get sj long 2>&1)" "NotFound" "the SlurmJob is gone"
wait_for 30 bash -c "! kubectl get job long-submitter 2>/dev/null" || fail "its submitter Job is gone"

step "a submitter killed mid-job does not submit twice; two jobs, two submitter pods"
sj steady debug 5 "sleep 8; echo steady done"
sj other debug 5 "echo other done"
wait_phase steady Running 60 || fail "steady Running"
pod1=$(field steady submitter)
kubectl delete pod "$pod1" --wait=false >/dev/null
wait_phase steady Succeeded 90 || fail "steady Succeeded after its submitter was killed"
pod2=$(kubectl get pods -l slurm.minik8s.io/job-name=steady -o jsonpath='{.items[*].metadata.name}')
[[ -n "$pod2" && "$pod2" != "$pod1" ]] || fail "a new submitter pod ($pod2) took over from $pod1"
uid=$(kubectl get sj steady -o jsonpath='{.metadata.uid}')
expect_eq "$(squeue --noheader --states=all --format='%k' | grep -c "minik8s-uid=$uid")" "1" "one Slurm job for steady"
expect_contains "$("$MINIK8S_BIN" job output steady)" "steady done" "the new submitter streams the output"
wait_phase other Succeeded 60 || fail "other Succeeded"
expect_eq "$([[ $(field other submitter) != $(field steady submitter) ]] && echo different)" "different" \
  "two jobs, two submitter pods"

step "the job over its time limit"
wait_phase overtime Failed 150 || fail "overtime Failed"
expect_eq "$(field overtime reason)" "TimeLimitExceeded" "overtime reason"
expect_contains "$(scontrol show job -o "$(field overtime jobId)")" "JobState=TIMEOUT" "Slurm says TIMEOUT"
kubectl get sj -o wide

finish
