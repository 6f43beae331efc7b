#!/usr/bin/env bash
# Serverless Functions end to end on a 2-node cluster with the serverless addon: a Python file
# deployed with `minik8s function deploy` sits at zero instances; the first request starts one
# through the gateway's activator (the cold start is printed); a handler that raises answers 500
# with its error and leaves the traceback in `kubectl logs`; the idle window takes it back to
# zero; wrk with 50 connections gets no error while the autoscaler adds instances, and the
# Function goes back to zero afterwards; a syntax error is refused by the CLI with its line;
# `kubectl get fn` shows URL and READY; `kubectl delete fn` removes the Deployment and Service.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
if ! command -v wrk >/dev/null; then
  echo "SKIPPED: wrk not installed (Debian's wrk)"
  [[ -n "${CI:-}" ]] && exit 1
  exit 0
fi

SUBNET=172.29.130
GW=http://$SUBNET.2:30080
WORK=$E2E_DIR/functions
mkdir -p "$WORK/v2"
fn() { "$MINIK8S_BIN" function "$@"; }
replicas() { kubectl get deploy "$1-fn" -o jsonpath='{.spec.replicas}' 2>/dev/null; }
at_zero() {  # NAME: the Deployment asks for 0 and no instance is left
  [[ $(replicas "$1") == 0 ]] &&
    [[ -z $(kubectl get pods -l "serverless.minik8s.io/function=$1" -o name 2>/dev/null) ]]
}
reason() { kubectl get fn "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}'; }

step "a 2-node cluster and the serverless addon"
start_cluster srvls "$SUBNET" 2 || exit 1
out=$("$MINIK8S_BIN" addons apply serverless 2>&1)
expect_contains "$out" "addon serverless applied" "minik8s addons apply serverless"
wait_for 30 kubectl get crd functions.serverless.minik8s.io || fail "the Function CRD is installed"
expect_contains "$(kubectl explain function.spec.scale 2>&1)" "scaleToZeroAfter" "kubectl explain"
kubectl -n serverless rollout status deploy/gateway --timeout=120s >/dev/null || fail "gateway rolled out"
wait_for 60 curl -sf --max-time 2 "$GW/healthz" || fail "the gateway answers on NodePort 30080"

step "a function deployed from one file sits at zero"
cat >"$WORK/hello.py" <<'PY'
import os


def handle(event):
    name = (event or {}).get("name", "world")
    if name == "boom":
        raise ValueError("boom requested by the caller")
    return {"hello": name, "instance": os.environ.get("HOSTNAME", "")}
PY
out=$(fn deploy hello --file "$WORK/hello.py" --scale-to-zero-after 5s 2>&1)
expect_contains "$out" "function.serverless.minik8s.io/hello created" "function deploy"
wait_for 30 bash -c "[[ \$(kubectl get deploy hello-fn -o jsonpath='{.spec.replicas}') == 0 ]]" ||
  fail "Deployment hello-fn created with 0 replicas"
wait_for 30 bash -c "[[ \$(kubectl get fn hello -o jsonpath='{.status.conditions[0].reason}') == ScaledToZero ]]" ||
  fail "hello is Ready (ScaledToZero)"
expect_eq "$(kubectl get pods -l serverless.minik8s.io/function=hello -o name)" "" "no instance yet"

step "the first request starts an instance (cold start)"
t0=$(date +%s%N)
out=$(fn invoke hello --data '{"name": "e2e"}' 2>&1)
t1=$(date +%s%N)
expect_contains "$out" '"hello": "e2e"' "the cold request gets the handler's JSON answer"
echo "cold start (invoke at zero -> answer; the node pulls the runtime image first): $(((t1 - t0) / 1000000)) ms"
expect_eq "$(replicas hello)" "1" "the activator scaled hello-fn to 1"
t0=$(date +%s%N)
out=$(curl -s --max-time 10 -d '{"name": "warm"}' "$GW/function/default/hello")
t1=$(date +%s%N)
expect_contains "$out" '"hello": "warm"' "a warm request through the NodePort"
echo "warm request (curl through the NodePort): $(((t1 - t0) / 1000000)) ms"
expect_contains "$(curl -s --max-time 10 "$GW/function/default/hello")" '"hello": "world"' \
  "GET without a body calls the handler with null"
wait_for 30 bash -c "[[ \$(kubectl get fn hello -o jsonpath='{.status.readyReplicas}') == 1 ]]" ||
  fail "status.readyReplicas 1"

step "from a pod: http://hello.default.fn.cluster.local/ (cluster DNS wildcard -> the gateway)"
pod=$(kubectl get pods -l serverless.minik8s.io/function=hello -o name | head -1)
wait_for 30 bash -c "kubectl exec $pod -- timeout 5 wget -q -O - --post-data '{\"name\": \"dns\"}' \
  http://hello.default.fn.cluster.local/ 2>/dev/null | grep -q '\"hello\": \"dns\"'" ||
  fail "a pod reaches the function by its name under fn.cluster.local"

step "a handler that raises: 500 with the error, the traceback in kubectl logs"
code=$(curl -s -o "$WORK/err.json" -w '%{http_code}' --max-time 10 -d '{"name": "boom"}' \
  "$GW/function/default/hello")
expect_eq "$code" "500" "HTTP status of a raising handler"
expect_contains "$(cat "$WORK/err.json")" '"error": "boom requested by the caller"' "the error in the body"
expect_contains "$(cat "$WORK/err.json")" '"type": "ValueError"' "the exception type in the body"
wait_for 15 bash -c "kubectl logs -l serverless.minik8s.io/function=hello --tail=-1 | grep -q 'raise ValueError'" ||
  fail "the traceback is in kubectl logs: $(kubectl logs -l serverless.minik8s.io/function=hello --tail=5)"
expect_contains "$(fn invoke hello --data '{"name": "again"}' 2>&1)" '"hello": "again"' \
  "the instance lives on after the exception"

step "new code rolls out a new revision with no failed request"
sed 's/return {"hello": name,/return {"version": 2, "hello": name,/' "$WORK/hello.py" >"$WORK/v2/hello.py"
(while true; do
  curl -s -o /dev/null -w '%{http_code}\n' --max-time 10 -d '{"name": "roll"}' "$GW/function/default/hello"
done) >"$WORK/rollout-codes.log" 2>&1 &
loop=$!
out=$(fn deploy hello --file "$WORK/v2/hello.py" 2>&1)
expect_contains "$out" "function.serverless.minik8s.io/hello configured" "deploy new code"
wait_for 60 bash -c "curl -s --max-time 5 -d '{}' $GW/function/default/hello | grep -q '\"version\": 2'" ||
  fail "the new revision answers"
wait_for 60 bash -c "[[ \$(kubectl get pods -l serverless.minik8s.io/function=hello -o name | wc -l) == 1 ]]" ||
  fail "the old revision's instance is gone"
kill "$loop" 2>/dev/null; wait "$loop" 2>/dev/null
echo "answers during the rollout: $(sort "$WORK/rollout-codes.log" | uniq -c | tr '\n' ' ')"
expect_eq "$(grep -cv '^200$' "$WORK/rollout-codes.log")" "0" "no failed request during the rollout"
expect_eq "$(replicas hello)" "1" "the rollout kept the autoscaler's replicas"

step "idle for scaleToZeroAfter (5 s): back to zero"
t0=$SECONDS
wait_for 90 at_zero hello || fail "hello back to 0 instances (replicas $(replicas hello))"
echo "last request -> no instance left: $((SECONDS - t0)) s"

step "wrk: 50 connections for 10 s against targetConcurrency 5"
cat >"$WORK/load.py" <<'PY'
import time


def handle(event):
    time.sleep(0.02)  # some work, so requests overlap
    return {"ok": True}
PY
out=$(fn deploy load --file "$WORK/load.py" --target-concurrency 5 --max-scale 4 \
  --scale-to-zero-after 5s 2>&1)
expect_contains "$out" "created" "deploy load"
expect_contains "$(fn invoke load 2>&1)" '"ok": true' "load answers (its cold start done before wrk)"
(while true; do
  kubectl get deploy load-fn -o jsonpath='{.status.readyReplicas}{"\n"}' 2>/dev/null
  sleep 0.5
done) >"$WORK/ready.log" &
watcher=$!
wrk -t 2 -c 50 -d 10s --timeout 10s "$GW/function/default/load" >"$WORK/wrk.txt" 2>&1
kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
cat "$WORK/wrk.txt"
expect_contains "$(cat "$WORK/wrk.txt")" "requests in" "wrk ran"
expect_not_contains "$(cat "$WORK/wrk.txt")" "Non-2xx" "no non-2xx answers under load"
expect_not_contains "$(cat "$WORK/wrk.txt")" "Socket errors" "no socket errors under load"
most=$(grep -E '^[0-9]+$' "$WORK/ready.log" | sort -n | tail -1)
echo "ready instances seen during the run: $(grep -E '^[0-9]+$' "$WORK/ready.log" | uniq | tr '\n' ' ')"
((${most:-0} > 1)) || fail "more than one ready instance during the run (most: ${most:-0})"
t0=$SECONDS
wait_for 120 at_zero load || fail "load back to 0 instances after the run (replicas $(replicas load))"
echo "end of the run -> no instance left: $((SECONDS - t0)) s"

step "a file with a syntax error is refused by the CLI with its line"
printf 'def handle(event):\n    return {"a": 1\n' >"$WORK/broken.py"
out=$(must_fail fn deploy broken --file "$WORK/broken.py")
expect_contains "$out" "line 2" "the line of the syntax error"
expect_contains "$out" "SyntaxError" "Python's message"
expect_contains "$(kubectl get fn broken 2>&1)" "NotFound" "nothing was created"

step "a module that cannot be imported: ImportFailed in the status, 500 with the error"
printf 'import no_such_module\n\n\ndef handle(event):\n    return 1\n' >"$WORK/noimport.py"
expect_contains "$(fn deploy noimport --file "$WORK/noimport.py" 2>&1)" "created" "deploy noimport"
out=$(fn invoke noimport 2>&1)
expect_contains "$out" "No module named 'no_such_module'" "the answer says why"
expect_contains "$out" "HTTP 500" "the answer is a 500"
expect_eq "$(reason noimport)" "ImportFailed" "Ready reason ImportFailed"
expect_contains "$(kubectl get fn noimport -o jsonpath='{.status.conditions[0].message}')" \
  "no_such_module" "the status message has the import error"

step "kubectl get fn shows URL and READY"
table=$(kubectl get fn)
echo "$table"
expect_contains "$(echo "$table" | head -1)" "URL" "URL column"
expect_contains "$(echo "$table" | head -1)" "READY" "READY column"
expect_contains "$table" "http://gateway.serverless.svc.cluster.local/function/default/hello" "hello's URL"

step "kubectl delete fn removes its Deployment and Service"
kubectl delete fn hello >/dev/null || fail "kubectl delete fn hello"
wait_for 30 bash -c "! kubectl get deploy hello-fn 2>/dev/null" || fail "Deployment hello-fn deleted"
wait_for 30 bash -c "! kubectl get svc hello 2>/dev/null" || fail "Service hello deleted"
out=$(curl -s --max-time 5 "$GW/function/default/hello")
expect_contains "$out" "function default/hello not found" "the gateway forgets it"

finish
