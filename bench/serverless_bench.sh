#!/usr/bin/env bash
# Serverless Functions on a 2-node cluster with the serverless addon (docs/serverless.md):
#  1. cold start: a request to a Function at zero instances -> its answer, N times (p50/p99),
#     with the gateway's view of each (request held -> Deployment scaled -> ready instance seen),
#     against a plain pod start of the same pod spec (create -> Ready, watched through the API);
#  2. warm latency through the gateway vs straight to the instance's pod IP (wrk, one connection,
#     from node-1's network namespace), and req/s at 50 connections both ways (one instance);
#  3. autoscaling: from zero instances, a step to 50 connections for 30 s (wrk through the
#     gateway's NodePort): req/s, latency, errors, the most instances seen, the time from the step
#     until the autoscaler's target count is Ready, and the time back to zero once it stops.
# The runtime image is pulled onto both nodes first. Reports figures, never fails on a time.
#
#   sudo MINIK8S_BIN=build/bin/minik8s bash bench/serverless_bench.sh [N]
# Cluster "bsrvls" on the underlay 172.29.131.0/24 unless BENCH_CLUSTER / BENCH_SUBNET say otherwise.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)"; exit 1; }
N=${1:-10}
SUBNET=${BENCH_SUBNET:-172.29.131}
GW=http://$SUBNET.2:30080
now_ms() { echo $(($(date +%s%N) / 1000000)); }
bench_load start
bench_cluster bsrvls "$SUBNET" 2 || exit 1
echo "cluster up: ${UP_TOTAL_S} s"
"$MINIK8S_BIN" addons apply serverless >/dev/null || exit 1
wait_for 30 kubectl get crd functions.serverless.minik8s.io || exit 1
kubectl -n serverless rollout status deploy/gateway --timeout=120s >/dev/null || exit 1
wait_for 60 curl -sf --max-time 2 "$GW/healthz" || exit 1

step "the runtime image on both nodes"
for node in node-1 node-2; do
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: pull-$node}
spec:
  nodeName: $node
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: minik8s/python-function:latest, imagePullPolicy: IfNotPresent}]
YAML
done
for node in node-1 node-2; do kubectl wait --for=condition=Ready "pod/pull-$node" --timeout=120s >/dev/null; done
kubectl delete pod pull-node-1 pull-node-2 --grace-period=0 >/dev/null 2>&1

cat >"$E2E_DIR/hello.py" <<'PY'
def handle(event):
    return {"hello": (event or {}).get("name", "world")}
PY
"$MINIK8S_BIN" function deploy hello --file "$E2E_DIR/hello.py" --scale-to-zero-after 1s >/dev/null || exit 1
at_zero() {
  [[ $(kubectl get deploy hello-fn -o jsonpath='{.spec.replicas}' 2>/dev/null) == 0 ]] &&
    [[ -z $(kubectl get pods -l serverless.minik8s.io/function=hello -o name 2>/dev/null) ]]
}
wait_for 60 kubectl get deploy hello-fn || exit 1

step "$N cold starts"
cold=()
for i in $(seq 1 "$N"); do
  wait_for 120 at_zero || exit 1
  t0=$(now_ms)
  out=$(curl -s --max-time 60 -d "{\"name\": \"c$i\"}" "$GW/function/default/hello")
  t1=$(now_ms)
  [[ $out == *"c$i"* ]] || echo "cold start $i answered: $out"
  cold+=($((t1 - t0)))
done
gw_log=$(kubectl -n serverless logs -l app=serverless-gateway --tail=-1)
echo "$gw_log" >"$E2E_DIR/gateway.log"
# Per cold start, in the gateway's clock: "0 -> 1 instances" (the activator's scale-up) to
# "1 ready instance(s)" (the Endpoints update that releases the held request).
scale_to_ready=$(echo "$gw_log" | python3 -c '
import re, sys, datetime
t_scale = None
for line in sys.stdin:
    m = re.match(r"(\d{4}-\d\d-\d\dT\S+) ", line)
    if not m or "default/hello" not in line:
        continue
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
    if ": 0 -> " in line:
        t_scale = t
    elif "1 ready instance(s)" in line and t_scale:
        print(int((t - t_scale).total_seconds() * 1000))
        t_scale = None')

step "$N plain pod starts of the same pod spec (create -> Ready)"
kubectl get deploy hello-fn -o json | python3 -c '
import json, sys
t = json.load(sys.stdin)["spec"]["template"]
t["metadata"] = {"labels": {"bench": "plain"}}
print(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"}, "spec": t["spec"]}))' \
  >"$E2E_DIR/plain.json"
# Timed in one process (no kubectl start-up in the figure): POST the pod, watch it until Ready.
kubectl config view --raw --minify -o json >"$E2E_DIR/kubeconfig.json"
plain=$(python3 - "$E2E_DIR/kubeconfig.json" "$E2E_DIR/plain.json" "$N" <<'PY'
import base64, http.client, json, os, ssl, sys, tempfile, time, urllib.parse
kc = json.load(open(sys.argv[1]))
cluster, user = kc["clusters"][0]["cluster"], kc["users"][0]["user"]
def data_file(key):
    f = tempfile.NamedTemporaryFile(delete=False)
    f.write(base64.b64decode(key))
    f.close()
    return f.name
ctx = ssl.create_default_context(cafile=data_file(cluster["certificate-authority-data"]))
ctx.load_cert_chain(data_file(user["client-certificate-data"]), data_file(user["client-key-data"]))
server = urllib.parse.urlparse(cluster["server"])
def conn():
    return http.client.HTTPSConnection(server.hostname, server.port, context=ctx, timeout=120)
pod = json.load(open(sys.argv[2]))
base = "/api/v1/namespaces/default/pods"
for i in range(int(sys.argv[3])):
    name = f"plain-{i}"
    pod["metadata"]["name"] = name
    c = conn()
    t0 = time.monotonic()
    c.request("POST", base, json.dumps(pod), {"Content-Type": "application/json"})
    created = json.loads(c.getresponse().read())
    rv = created["metadata"]["resourceVersion"]
    w = conn()
    w.request("GET", f"{base}?watch=1&fieldSelector=metadata.name%3D{name}&resourceVersion={rv}")
    r = w.getresponse()
    while True:
        line = r.readline()
        if not line:
            break
        obj = json.loads(line)["object"]
        conds = obj.get("status", {}).get("conditions", [])
        if any(x["type"] == "Ready" and x["status"] == "True" for x in conds):
            print(int((time.monotonic() - t0) * 1000), flush=True)
            break
    w.close()
    c.request("DELETE", f"{base}/{name}", json.dumps({"gracePeriodSeconds": 0}),
              {"Content-Type": "application/json"})
    c.getresponse().read()
    time.sleep(2)
PY
)

step "warm: through the gateway vs the pod IP (one instance)"
"$MINIK8S_BIN" function deploy hello --file "$E2E_DIR/hello.py" --min-scale 1 --max-scale 1 >/dev/null
curl -s --max-time 60 "$GW/function/default/hello" >/dev/null
wait_for 60 bash -c "[[ \$(kubectl get deploy hello-fn -o jsonpath='{.status.readyReplicas}') == 1 ]]"
gw_ip=$(kubectl -n serverless get pods -l app=serverless-gateway -o jsonpath='{.items[0].status.podIP}')
fn_ip=$(kubectl get pods -l serverless.minik8s.io/function=hello -o jsonpath='{.items[0].status.podIP}')
in_node() { ip netns exec "$(node_ns node-1)" "$@"; }
pct() { awk -v p="$1" '$1 == p {print $2}'; }
rps() { awk '/Requests\/sec/ {print $2}'; }
via_gw_1=$(in_node wrk -t1 -c1 -d5s --latency "http://$gw_ip:8080/function/default/hello")
direct_1=$(in_node wrk -t1 -c1 -d5s --latency "http://$fn_ip:8080/")
via_gw_50=$(in_node wrk -t2 -c50 -d5s "http://$gw_ip:8080/function/default/hello")
direct_50=$(in_node wrk -t2 -c50 -d5s "http://$fn_ip:8080/")

step "autoscaling: a step from zero to 50 connections for 30 s, then idle"
# targetConcurrency 10: 50 connections ask for 5 instances (the panic window decides at once).
"$MINIK8S_BIN" function deploy hello --file "$E2E_DIR/hello.py" --min-scale 0 --max-scale 10 \
  --target-concurrency 10 --scale-to-zero-after 10s >/dev/null
wait_for 120 at_zero || echo "hello did not go back to zero"
# Sample the Deployment every 250 ms: the target (spec.replicas) and the ready instances.
(while :; do
  # The time after the answer: a sample's state is at most that old (an upper bound).
  r=$(kubectl get deploy hello-fn -o jsonpath='{.spec.replicas} {.status.readyReplicas}' 2>/dev/null)
  echo "$(now_ms) $r"
  sleep 0.25
done) >"$E2E_DIR/scale.log" &
sampler=$!
t_step=$(now_ms)
# --timeout 30s: the requests held during the cold start wait for the first instance (up to the
# function's timeoutSeconds); wrk's default of 2 s would count them as errors of its own.
load_50=$(wrk -t2 -c50 -d30s --timeout 30s --latency "$GW/function/default/hello")
t_stop=$(now_ms)
wait_for 120 at_zero || echo "hello did not go back to zero in 120 s"
t_zero=$(now_ms)
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
echo "$load_50"
scale=$(python3 - "$E2E_DIR/scale.log" "$t_step" <<'PY'
import sys
t_step = int(sys.argv[2])
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 2:
        rows.append((int(f[0]), int(f[1]), int(f[2]) if len(f) > 2 else 0))
during = [r for r in rows if r[0] >= t_step]
target = max((r[1] for r in during), default=0)
max_ready = max((r[2] for r in during), default=0)
# The first sample where the ready count reached the highest target the autoscaler set.
reached = next((r[0] - t_step for r in during if r[2] >= target > 0), -1)
# ... and the first where the autoscaler had set it (spec.replicas).
decided = next((r[0] - t_step for r in during if r[1] >= target > 0), -1)
print(target, max_ready, reached, decided)
PY
)
read -r scale_target scale_max_ready scale_reached scale_decided <<<"$scale"

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2)}'; }
p99() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {i = int(NR * 0.99 + 0.999); if (i > NR) i = NR; print a[i]}'; }
echo
echo "cold start, request at zero instances -> answer (ms): p50 $(median "${cold[@]}"), p99 $(p99 "${cold[@]}"), all: ${cold[*]}"
# shellcheck disable=SC2086
echo "  of which scale-up -> ready instance seen by the gateway (ms): p50 $(median $scale_to_ready), all: $(echo $scale_to_ready)"
# shellcheck disable=SC2086
echo "plain pod start of the same spec, create -> Ready (ms): p50 $(median $plain), p99 $(p99 $plain), all: $(echo $plain)"
echo "warm, 1 connection: via gateway p50 $(echo "$via_gw_1" | pct 50%) p99 $(echo "$via_gw_1" | pct 99%);" \
  "pod IP p50 $(echo "$direct_1" | pct 50%) p99 $(echo "$direct_1" | pct 99%)"
echo "warm, 50 connections: via gateway $(echo "$via_gw_50" | rps) req/s; pod IP $(echo "$direct_50" | rps) req/s"
echo "step 0 -> 50 connections for 30 s (NodePort): $(echo "$load_50" | rps) req/s," \
  "latency p50 $(echo "$load_50" | pct 50%) p99 $(echo "$load_50" | pct 99%)," \
  "errors: $(echo "$load_50" | grep -E 'Non-2xx|Socket errors' | tr '\n' ' ')$(echo "$load_50" | grep -qE 'Non-2xx|Socket errors' || echo none)"
echo "  target instances $scale_target (set ${scale_decided} ms after the step), most ready $scale_max_ready," \
  "step -> target Ready ${scale_reached} ms," \
  "wrk's end -> zero instances $(((t_zero - t_stop) / 1000)) s (scaleToZeroAfter 10s)"
bench_load end
