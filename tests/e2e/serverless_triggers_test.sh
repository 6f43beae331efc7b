#!/usr/bin/env bash
# Serverless Triggers end to end on a 2-node cluster with the serverless addon, driven by the
# real kubectl and curl: CloudEvents posted to the gateway's broker (binary and structured mode)
# reach the Function whose Trigger filter matches and no other, and every event of a wrk burst
# the broker accepted is delivered; a Function that always fails
# gets its retries, then a dead letter in the Trigger's status and a DeliveryFailed Event; a
# schedule ("@every 5s", the extension; cron minutes are unit-tested with a fake clock) fires the
# Function; a Trigger with a Workflow target starts a WorkflowExecution with the event as input;
# a file written into a watched PersistentVolume by a pod on the OTHER node than the
# watcher fires it (a GlusterFS claim, each node through its own FUSE mount, where glusterd is
# installed; else a shared hostPath); `minik8s function update --wait` rolls out new code with no failed request
# and `minik8s function logs` shows what the instances printed; kubectl get trg columns; a bad
# Trigger is refused by the schema or marked InvalidSpec with its field.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

SUBNET=172.29.145
GW=http://$SUBNET.2:30080
WORK=$E2E_DIR/triggers
DATA=/tmp/minik8s-e2e-trg-data
mkdir -p "$WORK/v2"
rm -rf "$DATA" && mkdir -p "$DATA/uploads"
fn() { "$MINIK8S_BIN" function "$@"; }
tstatus() { kubectl get trigger "$1" -o jsonpath="{.status.$2}" 2>/dev/null; }
logs_have() { fn logs "$1" 2>/dev/null | grep -q -- "$2"; }

# The watched volume: a GlusterFS claim (each node writes through its own FUSE mount) where
# glusterd is installed, else a hostPath directory the nodes share.
STORAGE=dir
command -v glusterd >/dev/null && STORAGE=gluster

step "a 2-node cluster (storage $STORAGE) and the serverless addon"
start_cluster trg "$SUBNET" 2 --storage "$STORAGE" || exit 1
trap 'rc=$?; cluster_down_quiet; rm -rf "$DATA"; (exit $rc); cleanup' EXIT
expect_contains "$("$MINIK8S_BIN" addons apply serverless 2>&1)" "addon serverless applied" "addons apply"
wait_for 30 kubectl get crd triggers.serverless.minik8s.io || fail "the Trigger CRD is installed"
expect_contains "$(kubectl explain trigger.spec.delivery 2>&1)" "backoffDelay" "kubectl explain"
kubectl -n serverless rollout status deploy/gateway --timeout=120s >/dev/null || fail "gateway rolled out"
wait_for 60 curl -sf --max-time 2 "$GW/healthz" || fail "the gateway answers on NodePort 30080"

step "two Functions: sink prints each event, flaky always raises"
cat >"$WORK/sink.py" <<'PY'
def handle(event):
    event = event or {}
    print("sink got", event.get("type"), event.get("id"), event.get("subject", "-"), flush=True)
    return {"version": 1}
PY
cat >"$WORK/flaky.py" <<'PY'
def handle(event):
    raise RuntimeError("flaky cannot take " + str((event or {}).get("id")))
PY
expect_contains "$(fn deploy sink --file "$WORK/sink.py" --min-scale 1 2>&1)" "created" "deploy sink"
expect_contains "$(fn deploy flaky --file "$WORK/flaky.py" --min-scale 1 2>&1)" "created" "deploy flaky"

kubectl apply -f - >/dev/null <<'YAML' || fail "kubectl apply the event Triggers"
apiVersion: serverless.minik8s.io/v1
kind: Trigger
metadata: {name: on-orders}
spec:
  target: {function: sink}
  event:
    broker: default
    filter: {attributes: {type: order.created, region: eu}}
---
apiVersion: serverless.minik8s.io/v1
kind: Trigger
metadata: {name: on-refunds}
spec:
  target: {function: flaky}
  event:
    filter: {attributes: {type: refund.created}}
  delivery: {retry: 2, backoffPolicy: exponential, backoffDelay: PT0.2S}
YAML
wait_for 30 bash -c "[[ \$(kubectl get trigger on-orders -o jsonpath='{.status.conditions[0].reason}') == Listening ]]" ||
  fail "on-orders is Listening"
wait_for 90 bash -c "[[ \$(kubectl get fn sink -o jsonpath='{.status.readyReplicas}') == 1 && \$(kubectl get fn flaky -o jsonpath='{.status.readyReplicas}') == 1 ]]" ||
  fail "sink and flaky have a ready instance"

step "CloudEvents to the broker: only the matching Trigger's Function gets them"
post_binary() {  # ID TYPE REGION
  curl -s -o "$WORK/post.json" -w '%{http_code}' --max-time 10 "$GW/broker/default/default" \
    -H "ce-specversion: 1.0" -H "ce-id: $1" -H "ce-source: /e2e" -H "ce-type: $2" \
    -H "ce-region: $3" -H 'Content-Type: application/json' -d '{"total": 12}'
}
t0=$(date +%s%N)
expect_eq "$(post_binary us-1 order.created us)" "202" "a non-matching event is accepted (202)"
expect_contains "$(cat "$WORK/post.json")" '"triggers":[]' "no Trigger matches region us"
code=$(curl -s -o "$WORK/post.json" -w '%{http_code}' --max-time 10 "$GW/broker/default/default" \
  -H 'Content-Type: application/cloudevents+json' \
  -d '{"specversion": "1.0", "id": "other-1", "source": "/e2e", "type": "order.shipped", "region": "eu"}')
expect_eq "$code" "202" "a structured event is accepted"
expect_contains "$(cat "$WORK/post.json")" '"triggers":[]' "no Trigger matches order.shipped"
expect_eq "$(post_binary eu-1 order.created eu)" "202" "the matching event is accepted"
expect_contains "$(cat "$WORK/post.json")" '"triggers":["on-orders"]' "on-orders matches"
wait_for 30 logs_have sink "sink got order.created eu-1" || fail "sink got eu-1: $(fn logs sink 2>&1 | tail -3)"
echo "broker POST -> the event in the function's log: $((($(date +%s%N) - t0) / 1000000)) ms (polling the log)"
code=$(curl -s -o "$WORK/post.json" -w '%{http_code}' --max-time 10 "$GW/broker/default/default" \
  -H 'Content-Type: application/cloudevents+json' \
  -d '{"specversion": "1.0", "id": "eu-2", "source": "/e2e", "type": "order.created", "region": "eu", "data": {"total": 3}}')
expect_eq "$code" "202" "a structured matching event"
wait_for 30 logs_have sink "sink got order.created eu-2" || fail "sink got eu-2 (structured)"
out=$(fn logs sink 2>&1)
expect_not_contains "$out" "us-1" "the non-matching event never reached sink"
expect_not_contains "$out" "other-1" "order.shipped never reached sink"
wait_for 20 bash -c "[[ \$(kubectl get trigger on-orders -o jsonpath='{.status.delivered}') == 2 ]]" ||
  fail "on-orders status.delivered 2 (got $(tstatus on-orders delivered))"
code=$(curl -s -o "$WORK/post.json" -w '%{http_code}' --max-time 10 "$GW/broker/default/default" \
  -H 'ce-specversion: 1.0' -H 'ce-source: /e2e' -H 'ce-type: order.created' -d '{}')
expect_eq "$code" "400" "an event without ce-id is refused"
expect_contains "$(cat "$WORK/post.json")" "ce-id: Required value" "the missing attribute is named"

step "a burst: wrk posts events with 4 connections for 2 s; every accepted one is delivered"
if command -v wrk >/dev/null; then
  cat >"$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"total": 1}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["ce-specversion"] = "1.0"
wrk.headers["ce-id"] = "burst"
wrk.headers["ce-source"] = "/e2e"
wrk.headers["ce-type"] = "order.created"
wrk.headers["ce-region"] = "eu"
LUA
  t0=$(date +%s%N)
  wrk -t 2 -c 4 -d 2s --latency -s "$WORK/post.lua" "$GW/broker/default/default" >"$WORK/burst.txt" 2>&1
  total=$(grep -oE '[0-9]+ requests in' "$WORK/burst.txt" | grep -oE '^[0-9]+')
  non2xx=$(grep -oE 'Non-2xx or 3xx responses: [0-9]+' "$WORK/burst.txt" | grep -oE '[0-9]+$')
  accepted=$((${total:-0} - ${non2xx:-0}))
  expect_not_contains "$(cat "$WORK/burst.txt")" "Socket errors" "no socket errors in the burst"
  ((accepted > 100)) || fail "the broker accepted more than 100 events in 2 s (got $accepted)"
  # wrk does not count the requests of its last round (sent, answered after it stopped
  # counting): up to one per connection more may have been accepted.
  want=$((accepted + 2))
  wait_for 120 bash -c "(( \$(kubectl get trigger on-orders -o jsonpath='{.status.delivered}') >= $want ))" ||
    fail "every accepted event delivered: $(tstatus on-orders delivered) of $want"
  got=$(tstatus on-orders delivered)
  ((got <= want + 4)) || fail "no more deliveries than events posted: $got > $want + 4"
  echo "burst: $accepted events accepted in 2 s ($((accepted / 2))/s, ${non2xx:-0} refused, p99 $(grep -A4 'Latency Distribution' "$WORK/burst.txt" | grep 99% | tr -s ' ')); all delivered $((($(date +%s%N) - t0) / 1000000)) ms after the first POST"
  expect_eq "$(tstatus on-orders failed)" "" "no failed delivery in the burst"
else
  echo "SKIPPED: the burst needs wrk"
fi

step "a failing Function: retries with back-off, then a dead letter"
t0=$SECONDS
expect_eq "$(post_binary refund-1 refund.created eu)" "202" "refund event accepted"
wait_for 30 bash -c "[[ \$(kubectl get trigger on-refunds -o jsonpath='{.status.failed}') == 1 ]]" ||
  fail "on-refunds status.failed 1"
expect_eq "$(tstatus on-refunds 'deadLetters[0].id')" "refund-1" "the dead letter names the event"
expect_eq "$(tstatus on-refunds 'deadLetters[0].attempts')" "3" "1 attempt + 2 retries"
expect_contains "$(tstatus on-refunds 'deadLetters[0].error')" "flaky cannot take refund-1" "the function's error"
expect_eq "$(fn logs flaky 2>&1 | grep -c '^RuntimeError: flaky cannot take refund-1')" "3" \
  "the function saw three attempts (three tracebacks)"
wait_for 20 bash -c "kubectl get events --field-selector involvedObject.name=on-refunds | grep -q DeliveryFailed" ||
  fail "a DeliveryFailed Event on the Trigger"
echo "refund event -> dead letter: $((SECONDS - t0)) s"

step "a Trigger whose target is a Workflow: the event starts an execution"
kubectl apply -f - >/dev/null <<'YAML' || fail "apply the Workflow and its Trigger"
apiVersion: serverless.minik8s.io/v1
kind: Workflow
metadata: {name: audit}
spec:
  StartAt: Keep
  States:
    Keep: {Type: Pass, Parameters: {"event.$": "$.id", "kind.$": "$.type"}, End: true}
---
apiVersion: serverless.minik8s.io/v1
kind: Trigger
metadata: {name: on-audit}
spec:
  target: {workflow: audit}
  event: {filter: {attributes: {type: audit.logged}}}
YAML
wait_for 30 bash -c "[[ \$(kubectl get trigger on-audit -o jsonpath='{.status.conditions[0].reason}') == Listening ]]" ||
  fail "on-audit is Listening"
expect_eq "$(post_binary audit-7 audit.logged eu)" "202" "audit event accepted"
wfx_output() { kubectl get wfx -l serverless.minik8s.io/workflow=audit -o jsonpath='{.items[0].status.phase} {.items[0].status.output}' 2>/dev/null; }
wait_for 30 bash -c "[[ \$(kubectl get wfx -l serverless.minik8s.io/workflow=audit -o jsonpath='{.items[0].status.phase}') == Succeeded ]]" ||
  fail "a WorkflowExecution of audit Succeeded ($(wfx_output))"
expect_contains "$(wfx_output)" '"event":"audit-7"' "the execution's input was the event"

step "a schedule (@every 5s) fires the Function"
kubectl apply -f - >/dev/null <<'YAML' || fail "apply the schedule Trigger"
apiVersion: serverless.minik8s.io/v1
kind: Trigger
metadata: {name: tick}
spec:
  target: {function: sink}
  schedule: {cron: "@every 5s", concurrencyPolicy: Forbid}
YAML
wait_for 30 logs_have sink "sink got minik8s.schedule default.tick." || fail "sink got a schedule event"
wait_for 20 bash -c "[[ -n \$(kubectl get trigger tick -o jsonpath='{.status.lastScheduleTime}') ]]" ||
  fail "tick has status.lastScheduleTime"
expect_contains "$(kubectl get trigger tick -o jsonpath='{.status.conditions[0].message}')" "next at" \
  "the condition names the next activation"
kubectl delete trigger tick >/dev/null || fail "delete tick"

step "a file written on the other node into a watched volume fires the Function"
if [[ $STORAGE == gluster ]]; then
  kubectl apply -f - >/dev/null <<'YAML' || fail "apply the claim (GlusterFS, the default class)"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: uploads}
spec:
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
YAML
else
  kubectl apply -f - >/dev/null <<YAML || fail "apply the PV and claim (hostPath)"
apiVersion: v1
kind: PersistentVolume
metadata: {name: trg-uploads}
spec:
  storageClassName: manual
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  hostPath: {path: "$DATA/uploads"}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: uploads}
spec:
  storageClassName: manual
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
YAML
fi
wait_for 30 bash -c "kubectl get pvc uploads -o jsonpath='{.status.phase}' | grep -qx Bound" ||
  fail "the claim is Bound"
kubectl apply -f - >/dev/null <<'YAML' || fail "apply the file Trigger"
apiVersion: serverless.minik8s.io/v1
kind: Trigger
metadata: {name: on-upload}
spec:
  target: {function: sink}
  file: {persistentVolumeClaim: uploads, pattern: "*.txt", events: [created], pollInterval: 500ms}
YAML
wait_for 90 bash -c "[[ \$(kubectl get trigger on-upload -o jsonpath='{.status.conditions[0].reason}') == Watching ]]" ||
  fail "on-upload is Watching: $(kubectl get trigger on-upload -o jsonpath='{.status.conditions[0].message}')"
watcher_node=$(kubectl get pods -l serverless.minik8s.io/trigger=on-upload -o jsonpath='{.items[0].spec.nodeName}')
other_node=$(kubectl get nodes -o name | sed 's|node/||' | grep -vx "$watcher_node" | head -1)
echo "watcher on $watcher_node, writer on $other_node ($STORAGE volume)"
[[ -n $other_node && $other_node != "$watcher_node" ]] || fail "two different nodes"
sleep 1  # the watcher's first scan is its baseline
kubectl apply -f - >/dev/null <<YAML || fail "apply the writer pod"
apiVersion: v1
kind: Pod
metadata: {name: writer}
spec:
  nodeName: $other_node
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: minik8s/busybox:1.35, command: [sh, -c, "echo hi > /data/photo.txt; echo no > /data/skip.bin"], volumeMounts: [{name: data, mountPath: /data}]}
  volumes: [{name: data, persistentVolumeClaim: {claimName: uploads}}]
YAML
wait_for 60 bash -c "[[ \$(kubectl get pod writer -o jsonpath='{.status.phase}') == Succeeded ]]" ||
  fail "the writer pod ran"
t0=$SECONDS
wait_for 30 logs_have sink "sink got minik8s.file.created .* photo.txt" ||
  fail "sink got the file event: $(kubectl logs -l serverless.minik8s.io/trigger=on-upload --tail=5)"
echo "writer done -> file event in the function's log: $((SECONDS - t0)) s"
expect_not_contains "$(fn logs sink 2>&1)" "skip.bin" "the pattern keeps *.bin out"

step "kubectl get trg: TYPE, TARGET, LAST-FIRED"
table=$(kubectl get trg)
echo "$table"
expect_contains "$(echo "$table" | head -1 | tr -s ' ')" "NAME TYPE TARGET LAST-FIRED AGE" "columns"
expect_contains "$(grep on-orders <<<"$table" | tr -s ' ')" "on-orders event function/sink" "on-orders row"
expect_contains "$(grep on-upload <<<"$table" | tr -s ' ')" "on-upload file function/sink" "on-upload row"

step "bad Triggers: the schema's field, or InvalidSpec with the field"
out=$(kubectl apply -f - 2>&1 <<'YAML'
apiVersion: serverless.minik8s.io/v1
kind: Trigger
metadata: {name: bad-policy}
spec:
  target: {function: sink}
  schedule: {cron: "* * * * *", concurrencyPolicy: Replace}
YAML
)
expect_contains "$out" "spec.schedule.concurrencyPolicy" "the schema refuses Replace with its field"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: serverless.minik8s.io/v1
kind: Trigger
metadata: {name: bad-cron}
spec:
  target: {function: sink}
  schedule: {cron: "61 * * * *"}
YAML
wait_for 20 bash -c "[[ \$(kubectl get trigger bad-cron -o jsonpath='{.status.conditions[0].reason}') == InvalidSpec ]]" ||
  fail "bad-cron is InvalidSpec"
expect_contains "$(tstatus bad-cron 'conditions[0].message')" "spec.schedule.cron" "the message names the field"

step "function update rolls out new code with no failed request; function logs"
sed 's/"version": 1/"version": 2/' "$WORK/sink.py" >"$WORK/v2/sink.py"
(while true; do
  curl -s -o /dev/null -w '%{http_code}\n' --max-time 10 -d '{"id": "loop"}' "$GW/function/default/sink"
done) >"$WORK/codes.log" 2>&1 &
loop=$!
t0=$SECONDS
out=$(fn update sink --file "$WORK/v2/sink.py" --wait 2>&1)
expect_contains "$out" "function.serverless.minik8s.io/sink configured" "function update"
expect_contains "$out" "rolled out" "function update --wait"
echo "function update --wait: $((SECONDS - t0)) s"
expect_contains "$(curl -s --max-time 10 -d '{}' "$GW/function/default/sink")" '"version": 2' "the new revision answers"
sleep 1
kill "$loop" 2>/dev/null; wait "$loop" 2>/dev/null
echo "answers during the update: $(sort "$WORK/codes.log" | uniq -c | tr '\n' ' ')"
expect_eq "$(grep -cv '^200$' "$WORK/codes.log")" "0" "no failed request during the update"
out=$(must_fail fn update nosuch --file "$WORK/v2/sink.py")
expect_contains "$out" "function default/nosuch not found" "update of a missing Function"
wait_for 20 logs_have sink "sink got None loop" || fail "function logs shows the new instance's prints"
wait_for 30 bash -c "[[ \$(kubectl get pods -l serverless.minik8s.io/function=sink -o name | wc -l) == 1 ]]" ||
  fail "the old revision's instance is gone"
expect_eq "$(fn logs sink --tail 1 2>/dev/null | wc -l)" "1" "function logs --tail 1"
timeout 5 "$MINIK8S_BIN" function logs sink -f >"$WORK/follow.log" 2>&1 &
follower=$!
sleep 1.5
curl -s -o /dev/null --max-time 10 -d '{"id": "followed"}' "$GW/function/default/sink"
wait "$follower" 2>/dev/null
expect_contains "$(cat "$WORK/follow.log")" "sink got None followed" "function logs -f streams new lines"

step "deleting a file Trigger removes its watcher"
kubectl delete trigger on-upload >/dev/null || fail "delete on-upload"
wait_for 30 bash -c "! kubectl get deploy on-upload-trigger-watch 2>/dev/null" || fail "the watcher Deployment is gone"

finish
