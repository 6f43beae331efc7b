#!/usr/bin/env bash
# Serverless workflows end to end on a 2-node cluster with the serverless addon: three small
# Python functions; a Workflow with a Task, a Choice and a Map over a list, run with `minik8s
# workflow run --data --wait` on both branches of the Choice; `kubectl get wfx` and `kubectl
# describe wfx` show the execution and a record per step; a Task whose function raises is retried
# and then caught (Catch with ResultPath); POST /workflow/NS/NAME on the gateway runs one; an invalid Workflow is refused by `workflow validate`
# and marked Valid=False with the field path; the control plane is SIGKILLed while an execution
# waits between two Tasks, `cluster up` restarts it, and the execution finishes with each Task
# run exactly once (counted in the function's log).
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

SUBNET=172.29.144
WORK=$E2E_DIR/workflows
mkdir -p "$WORK"
fn() { "$MINIK8S_BIN" function "$@"; }
wf() { "$MINIK8S_BIN" workflow "$@"; }
phase() { kubectl get wfx "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }

step "a 2-node cluster and the serverless addon"
start_cluster wflow "$SUBNET" 2 || exit 1
expect_contains "$("$MINIK8S_BIN" addons apply serverless 2>&1)" "addon serverless applied" "addons apply"
wait_for 30 kubectl get crd workflows.serverless.minik8s.io workflowexecutions.serverless.minik8s.io ||
  fail "the Workflow and WorkflowExecution CRDs are installed"
expect_contains "$(kubectl explain workflowexecution.status.steps 2>&1)" "written before the next step" \
  "kubectl explain wfx status.steps"
kubectl -n serverless rollout status deploy/gateway --timeout=120s >/dev/null || fail "gateway rolled out"

step "three functions"
cat >"$WORK/classify.py" <<'PY'
def handle(event):
    n = event["n"]
    return {"kind": "big" if n > 10 else "small", "n": n}
PY
cat >"$WORK/double.py" <<'PY'
def handle(event):
    return event * 2
PY
cat >"$WORK/counter.py" <<'PY'
import sys


def handle(event):
    if event.get("fail"):
        raise ValueError("bad input: " + str(event["fail"]))
    print("counter-call " + event["tag"], file=sys.stderr, flush=True)
    return {"tag": event["tag"]}
PY
for f in classify double counter; do
  # Instances stay for the whole test: the counter's log counts its calls.
  expect_contains "$(fn deploy $f --file "$WORK/$f.py" --scale-to-zero-after 10m 2>&1)" "created" "deploy $f"
done

step "a Workflow with a Choice and a Map"
cat >"$WORK/pipeline.yaml" <<'YAML'
apiVersion: serverless.minik8s.io/v1
kind: Workflow
metadata: {name: pipeline}
spec:
  Comment: classify a number, double a list when it is big
  StartAt: Classify
  States:
    Classify: {Type: Task, Resource: classify, ResultPath: $.classified, Next: Check}
    Check:
      Type: Choice
      Choices:
      - And:
        - {Variable: $.classified.kind, StringEquals: big}
        - {Variable: $.items, IsPresent: true}
        Next: Fanout
      Default: Small
    Fanout:
      Type: Map
      ItemsPath: $.items
      ItemProcessor:
        StartAt: Double
        States:
          Double: {Type: Task, Resource: double, End: true}
      ResultPath: $.doubled
      Next: Done
    Small: {Type: Pass, Result: too small, ResultPath: $.note, Next: Done}
    Done: {Type: Succeed, OutputPath: $}
YAML
expect_contains "$(wf validate -f "$WORK/pipeline.yaml" 2>&1)" "workflow pipeline: valid" "workflow validate"
kubectl apply -f "$WORK/pipeline.yaml" >/dev/null || fail "kubectl apply the Workflow"
wait_for 20 bash -c "[[ \$(kubectl get wf pipeline -o jsonpath='{.status.conditions[0].status}') == True ]]" ||
  fail "the Workflow is Valid"
t0=$(date +%s%N)
out=$(wf run pipeline --data '{"n": 42, "items": [1, 2, 3]}' --name big-run --wait 2>&1)
t1=$(date +%s%N)
echo "$out"
echo "big-run (cold starts included): $(((t1 - t0) / 1000000)) ms"
expect_contains "$out" '"doubled":[2,4,6]' "the Map's outputs in order"
expect_contains "$out" '"kind":"big"' "the Task's output at its ResultPath"
out=$(wf run pipeline --data '{"n": 3}' --name small-run --wait 2>&1)
expect_contains "$out" '"note":"too small"' "the Choice's Default branch"
expect_not_contains "$out" "doubled" "no Map on the Default branch"

step "POST /workflow/NS/NAME on the gateway starts one and answers with its output"
GW=http://$SUBNET.2:30080
out=$(curl -s -D "$WORK/headers" --max-time 60 -d '{"n": 42, "items": [5]}' "$GW/workflow/default/pipeline")
expect_contains "$out" '"doubled":[10]' "the gateway answers with the execution's output"
expect_contains "$(cat "$WORK/headers")" "X-Workflow-Execution: pipeline-" "the execution's name in a header"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -d '{}' "$GW/workflow/default/nope")" "404" \
  "an unknown workflow: 404"
out=$(curl -s --max-time 10 -d '{"n": 1}' "$GW/workflow/default/pipeline?wait=false")
expect_contains "$out" '"execution":"pipeline-' "wait=false: 202 with the execution's name"

step "kubectl get / describe wfx"
table=$(kubectl get wfx)
echo "$table"
expect_contains "$(echo "$table" | head -1)" "WORKFLOW" "WORKFLOW column"
expect_contains "$(echo "$table" | grep big-run)" "Succeeded" "big-run Succeeded in the table"
expect_contains "$(kubectl get wfx -l serverless.minik8s.io/workflow=pipeline -o name | wc -l)" "4" \
  "the executions of pipeline by label (CLI x2, HTTP x2)"
expect_eq "$(kubectl get wfx big-run -o jsonpath='{.status.stepCount}')" "7" \
  "steps of big-run: Classify, Check, Fanout, 3 x Double, Done"
desc=$(kubectl describe wfx big-run)
expect_contains "$desc" "Fanout/1/Double" "describe: a Map iteration's step"
expect_contains "$desc" "Duration Ms" "describe: step timings"
expect_eq "$(kubectl get wfx big-run -o jsonpath='{.status.steps[?(@.name=="Check")].next}')" "Fanout" \
  "the Choice's record says where it went"

expect_contains "$(kubectl delete wfx small-run 2>&1)" "deleted" "kubectl delete wfx"
expect_contains "$(kubectl get wfx small-run 2>&1)" "NotFound" "the execution is gone"
expect_contains "$(kubectl get wf pipeline)" "True" "kubectl get wf: Valid"

step "Retry, then Catch, on a function that raises"
cat >"$WORK/guarded.yaml" <<'YAML'
apiVersion: serverless.minik8s.io/v1
kind: Workflow
metadata: {name: guarded}
spec:
  StartAt: Try
  States:
    Try:
      Type: Task
      Resource: counter
      Retry: [{ErrorEquals: [ValueError], IntervalSeconds: 0.2, MaxAttempts: 1}]
      Catch: [{ErrorEquals: [States.ALL], ResultPath: $.caught, Next: Recover}]
      Next: Unreached
    Unreached: {Type: Fail, Error: Unreachable}
    Recover: {Type: Pass, End: true}
YAML
kubectl apply -f "$WORK/guarded.yaml" >/dev/null || fail "apply guarded"
out=$(wf run guarded --data '{"fail": "oops", "tag": "g"}' --name guarded-run --wait 2>&1)
echo "$out"
expect_contains "$out" '"Error":"ValueError"' "the error name is the exception's type"
expect_contains "$out" 'bad input: oops' "the cause is its message"
expect_eq "$(kubectl get wfx guarded-run -o jsonpath='{.status.steps[0].phase} {.status.steps[0].attempts}')" \
  "Caught 2" "the Task step: caught after 2 attempts"
out=$(wf run pipeline --data '{"items": []}' --name no-catch --wait 2>&1)
expect_eq "$?" "1" "an uncaught error: workflow run --wait exits 1"
expect_contains "$out" "KeyError" "the uncaught error is the execution's error"
expect_eq "$(phase no-catch)" "Failed" "the execution Failed"

step "an invalid Workflow: validate refuses it, the status names the field"
cat >"$WORK/broken.yaml" <<'YAML'
apiVersion: serverless.minik8s.io/v1
kind: Workflow
metadata: {name: broken}
spec:
  StartAt: A
  States:
    A: {Type: Pass, Next: Nowhere}
YAML
out=$(must_fail wf validate -f "$WORK/broken.yaml")
expect_contains "$out" 'spec.States[A].Next: Not found: "Nowhere"' "validate names the field"
kubectl apply -f "$WORK/broken.yaml" >/dev/null || fail "apply broken"
wait_for 20 bash -c "[[ \$(kubectl get wf broken -o jsonpath='{.status.conditions[0].status}') == False ]]" ||
  fail "broken is Valid=False"
expect_contains "$(kubectl get wf broken -o wide)" "spec.States[A].Next" "kubectl get wf -o wide shows why"
out=$(must_fail wf run broken --wait)
expect_contains "$out" "States.Runtime" "an execution of it fails at once"
expect_contains "$(kubectl apply -f - 2>&1 <<'YAML'
apiVersion: serverless.minik8s.io/v1
kind: Workflow
metadata: {name: typo}
spec:
  StartAt: A
  States:
    A: {Type: Tusk, End: true}
YAML
)" "spec.States[A].Type" "the schema refuses an unknown Type with its path"

step "SIGKILL the control plane while an execution waits; it resumes"
cat >"$WORK/durable.yaml" <<'YAML'
apiVersion: serverless.minik8s.io/v1
kind: Workflow
metadata: {name: durable}
spec:
  StartAt: First
  States:
    First: {Type: Task, Resource: counter, Parameters: {tag: first}, ResultPath: $.first, Next: Pause}
    Pause: {Type: Wait, Seconds: 8, Next: Second}
    Second: {Type: Task, Resource: counter, Parameters: {tag: second}, ResultPath: $.second, End: true}
YAML
kubectl apply -f "$WORK/durable.yaml" >/dev/null || fail "apply durable"
wf run durable --data '{"x": 1}' --name durable-run >/dev/null || fail "run durable"
wait_for 30 bash -c "[[ \$(kubectl get wfx durable-run -o jsonpath='{.status.currentStep}') == Pause ]]" ||
  fail "durable-run reached the Wait"
t_kill=$SECONDS
kill -9 "$(jq -r .serverPid "$CL_DIR/cluster.json")"
sleep 1
cluster_cmd up >"$WORK/up.log" 2>&1 || { cat "$WORK/up.log"; fail "cluster up restarts the server"; }
echo "control plane back $((SECONDS - t_kill)) s after the kill"
wait_for 60 bash -c "[[ \$(kubectl get wfx durable-run -o jsonpath='{.status.phase}') == Succeeded ]]" ||
  fail "durable-run Succeeded after the restart ($(phase durable-run))"
logs=$(kubectl logs -l serverless.minik8s.io/function=counter --tail=-1)
expect_eq "$(grep -c 'counter-call first' <<<"$logs")" "1" "the Task finished before the kill ran once"
expect_eq "$(grep -c 'counter-call second' <<<"$logs")" "1" "the Task after the Wait ran once"
expect_contains "$(kubectl get wfx durable-run -o jsonpath='{.status.output}')" '"second":{"tag":"second"}' \
  "the output has both Tasks' results"
expect_contains "$(kubectl describe wfx durable-run)" "Resumed" "an Event says it resumed"
wait_s=$(kubectl get wfx durable-run -o jsonpath='{.status.steps[?(@.name=="Pause")].durationMs}')
echo "Wait step: ${wait_s} ms (8 s asked, across the restart)"
((wait_s >= 8000 && wait_s < 20000)) || fail "the Wait kept its start time across the restart ($wait_s ms)"

echo "serverless_workflow_test: $SECONDS s in all"
finish
