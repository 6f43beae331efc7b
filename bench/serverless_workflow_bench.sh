#!/usr/bin/env bash
# Serverless workflows (docs/serverless.md, Workflows): the engine's overhead per step. A 5-step
# workflow (Task, Choice, Task, Task, Task) over warm Functions that sleep WORK_MS each, run N
# times one after the other; against, in the same run, the same 4 calls made straight to the
# gateway from the host one after the other (a new connection each, as the engine does): the
# Functions' own time. Overhead per step = (execution duration - the 4 calls) / 5. Also the
# time `minik8s workflow run --wait` takes (create -> output seen, 50 ms polling).
# Reports figures, never fails on a time.
#
#   sudo MINIK8S_BIN=build/bin/minik8s bash bench/serverless_workflow_bench.sh [N] [WORK_MS]
# Cluster "bwflow" on the underlay 172.29.144.0/24 (the e2e test's: not both at once) unless BENCH_CLUSTER / BENCH_SUBNET say otherwise.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
N=${1:-20}
WORK_MS=${2:-20}
SUBNET=${BENCH_SUBNET:-172.29.144}
GW=http://$SUBNET.2:30080
now_ms() { echo $(($(date +%s%N) / 1000000)); }
bench_load start
bench_cluster bwflow "$SUBNET" 2 || exit 1
echo "cluster up: ${UP_TOTAL_S} s"
"$MINIK8S_BIN" addons apply serverless >/dev/null || exit 1
wait_for 30 kubectl get crd workflowexecutions.serverless.minik8s.io || exit 1
kubectl -n serverless rollout status deploy/gateway --timeout=120s >/dev/null || exit 1
wait_for 60 curl -sf --max-time 2 "$GW/healthz" || exit 1

step "a Function that works $WORK_MS ms, one warm instance"
cat >"$E2E_DIR/work.py" <<PY
import time


def handle(event):
    time.sleep($WORK_MS / 1000.0)
    return {"n": (event or {}).get("n", 0) + 1}
PY
"$MINIK8S_BIN" function deploy work --file "$E2E_DIR/work.py" --min-scale 1 >/dev/null || exit 1
wait_for 120 bash -c "[[ \$(kubectl get fn work -o jsonpath='{.status.readyReplicas}') == 1 ]]" || exit 1
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: serverless.minik8s.io/v1
kind: Workflow
metadata: {name: five}
spec:
  StartAt: One
  States:
    One: {Type: Task, Resource: work, Next: Check}
    Check:
      Type: Choice
      Choices: [{Variable: $.n, NumericGreaterThan: 0, Next: Two}]
      Default: Four
    Two: {Type: Task, Resource: work, Next: Three}
    Three: {Type: Task, Resource: work, Next: Four}
    Four: {Type: Task, Resource: work, End: true}
YAML
"$MINIK8S_BIN" workflow run five --data '{"n": 0}' --wait >/dev/null || exit 1  # warm-up

step "$N executions and $N x 4 direct calls"
bench_load before
engine=()
cli=()
direct=()
for i in $(seq 1 "$N"); do
  t0=$(now_ms)
  out=$("$MINIK8S_BIN" workflow run five --data '{"n": 0}' --name "five-$i" --wait 2>/dev/null)
  t1=$(now_ms)
  [[ $out == '{"n":4}' ]] || { echo "run $i: $out"; exit 1; }
  cli+=($((t1 - t0)))
  d=$(kubectl get wfx "five-$i" -o jsonpath='{.status.duration}')
  engine+=("$(awk -v d="${d%s}" 'BEGIN {printf "%d", d * 1000}')")
  direct+=("$(/usr/bin/python3 - "$SUBNET.2" <<'PY'
import http.client, json, sys, time
body = {"n": 0}
t0 = time.monotonic()
for _ in range(4):
    c = http.client.HTTPConnection(sys.argv[1], 30080, timeout=30)
    c.request("POST", "/function/default/work", json.dumps(body), {"Content-Type": "application/json"})
    body = json.loads(c.getresponse().read())
    c.close()
print(int((time.monotonic() - t0) * 1000))
PY
)")
done
bench_load after
kubectl get wfx five-1 -o jsonpath='{range .status.steps[*]}{.name}{" "}{.durationMs}{" ms\n"}{end}'

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2)}'; }
p99() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {i = int(NR * 0.99 + 0.999); if (i > NR) i = NR; print a[i]}'; }
e=$(median "${engine[@]}")
d=$(median "${direct[@]}")
echo
echo "5-step workflow (4 Tasks of ${WORK_MS} ms, 1 Choice), $N runs, warm instance:"
echo "  execution duration (status.startTime -> completionTime, ms): p50 $e, p99 $(p99 "${engine[@]}"), all: ${engine[*]}"
echo "  the 4 calls straight to the gateway (ms): p50 $d, p99 $(p99 "${direct[@]}"), all: ${direct[*]}"
echo "  workflow run --wait as the user sees it (ms): p50 $(median "${cli[@]}"), p99 $(p99 "${cli[@]}")"
echo "  engine overhead per step: $(awk -v e="$e" -v d="$d" 'BEGIN {printf "%.1f", (e - d) / 5}') ms" \
  "(($e - $d) / 5); per run: $((e - d)) ms over the Functions' $d ms"
