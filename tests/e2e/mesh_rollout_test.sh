#!/usr/bin/env bash
# The mesh's rollout on a 3-node cluster started with `cluster up --mesh`, with the example shop
# (examples/mesh-shop: frontend, catalogue, reviews, ratings; images built from its Dockerfiles):
# --mesh meshes a pod of an unlabelled namespace (not kube-system, not an opted-out pod); the
# shop's page is put together through the sidecars; the hand-made canary sends about a quarter
# of the requests to reviews v2 by weight and every tester to v2 by header regex; `minik8s mesh
# rollout` (a MeshRollout the control plane drives) moves reviews to v2 under a steady request
# stream without a single failed request; a rollout to the broken v3 (500s) rolls back by itself
# and the stream recovers; a rollout whose control plane is killed and started again mid-way
# resumes from its status and finishes, still without a failed request; deleting a MeshRollout
# mid-way rolls back; outlier detection ejects a failing endpoint.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

SUBNET=${MESH_ROLLOUT_SUBNET:-172.29.143}
step() { echo "=== [$SECONDS s] $*"; }
SHOP=$SOURCE_DIR/examples/mesh-shop
WORK=$E2E_DIR/mesh-rollout
mkdir -p "$WORK"

step "a 3-node cluster with --mesh"
start_cluster mroll "$SUBNET" 3 --mesh || exit 1
wait_for 60 kubectl get crd virtualservices.networking.istio.io destinationrules.networking.istio.io \
  meshrollouts.mesh.minik8s.io || fail "the mesh's CRDs are installed"

step "the shop's images, built from examples/mesh-shop (buildah, FROM the cluster's python image)"
# build NAME DOCKERFILE: in the background; built_ok NAME waits for it.
declare -A BUILDS
build() {
  "$MINIK8S_BIN" image build -t "$1" -f "$SHOP/$2" "$SHOP" --registry "$SUBNET.1:5000" \
    >"$WORK/build-${1//[:\/]/-}.log" 2>&1 &
  BUILDS[$1]=$!
}
built_ok() {
  wait "${BUILDS[$1]}" || fail "build $1: $(tail -5 "$WORK/build-${1//[:\/]/-}.log")"
}
t0=$SECONDS
build shop/app:1.0 Dockerfile
build shop/reviews:v1 reviews-v1.Dockerfile
built_ok shop/app:1.0
built_ok shop/reviews:v1
echo "shop/app:1.0 and shop/reviews:v1 built and pushed in $((SECONDS - t0)) s"
# v2 and v3 build while the shop starts.
build shop/reviews:v2 reviews-v2.Dockerfile
build shop/reviews:v3 reviews-v3.Dockerfile

step "the shop and a client in the unlabelled namespace default"
kubectl apply -f "$SHOP/shop.yaml" >/dev/null || fail "apply shop.yaml"
kubectl apply -f - >/dev/null <<'YAML' || fail "apply the client"
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: default}
spec:
  containers:
  - {name: client, image: minik8s/python:latest, command: [python3, -c, "import time; time.sleep(1e9)"]}
YAML
for d in frontend catalogue ratings reviews-v1; do
  kubectl -n shop rollout status "deploy/$d" --timeout=150s >/dev/null || fail "$d is rolled out"
done
kubectl wait --for=condition=Ready pod/client --timeout=90s >/dev/null || fail "client ready"

step "--mesh: a pod of an unlabelled namespace is meshed; kube-system and an opted-out pod are not"
expect_eq "$(kubectl get pod client -o jsonpath='{.spec.containers[*].name}')" \
  "client istio-proxy" "the client in default (no istio-injection label) got the sidecar"
dry() {  # NAMESPACE [ANNOTATION]: the containers a new pod would get (server-side dry run)
  kubectl run dry -n "$1" --image=minik8s/python:latest ${2:+--annotations=$2} --dry-run=server \
    -o jsonpath='{.spec.containers[*].name}' -- sleep 1
}
expect_eq "$(dry kube-system)" "dry" "no sidecar in kube-system"
expect_eq "$(dry default sidecar.istio.io/inject=false)" "dry" "sidecar.istio.io/inject=false opts out"
kubectl label namespace default istio-injection=disabled >/dev/null
expect_eq "$(dry default)" "dry" "a namespace labelled istio-injection=disabled opts out"
kubectl label namespace default istio-injection- >/dev/null

# get PATH [END_USER]: one request to the frontend from the client; the body.
get() {
  kubectl exec client -c client -- python3 -c '
import sys, urllib.request
req = urllib.request.Request("http://frontend.shop" + sys.argv[1], headers={"end-user": sys.argv[2]})
print(urllib.request.urlopen(req, timeout=5).read().decode())' "$1" "${2:-}"
}
# versions N [END_USER]: N product requests; how many answers came from each reviews version.
versions() {
  kubectl exec client -c client -- python3 -c '
import collections, json, sys, urllib.request
seen = collections.Counter()
for _ in range(int(sys.argv[1])):
    req = urllib.request.Request("http://frontend.shop/api/products/1",
                                headers={"end-user": sys.argv[2]})
    try:
        seen[json.load(urllib.request.urlopen(req, timeout=5))["reviewsVersion"]] += 1
    except Exception:
        seen["error"] += 1
print(" ".join(f"{k}={v}" for k, v in sorted(seen.items())))' "$1" "${2:-}"
}

page_ready() { [[ $(get /) == *"Espresso machine"*"reviews v1"* ]]; }
wait_for 60 page_ready || fail "the shop's page: $(get / 2>&1 | head -5)"
out=$(get /api/products/2)
expect_contains "$out" '"name": "Burr grinder"' "the product API joins the catalogue..."
expect_contains "$out" '"reviewsVersion": "v1"' "...and the reviews"
out=$("$MINIK8S_BIN" mesh services -n shop 2>&1)
for s in frontend catalogue reviews ratings; do expect_contains "$out" "$s" "discovery lists $s"; done

step "the hand-made canary: a quarter to reviews v2 by weight, testers to v2 by header regex"
built_ok shop/reviews:v2
built_ok shop/reviews:v3
kubectl apply -f "$SHOP/canary.yaml" >/dev/null || fail "apply canary.yaml"
kubectl -n shop rollout status deploy/reviews-v2 --timeout=90s >/dev/null || fail "reviews-v2 ready"
testers() { [[ $(versions 10 tester-7) == "v2=10" ]]; }
wait_for 20 testers || fail "end-user tester-7 always gets v2 (last: $(versions 10 tester-7))"
expect_eq "$(versions 10 jason)" "v2=10" "end-user jason gets v2"
out=$(versions 200)
echo "200 requests with the 75/25 rule: $out"
v2=$(echo "$out" | grep -o 'v2=[0-9]*' | cut -d= -f2)
((${v2:-0} >= 25 && ${v2:-0} <= 80)) || fail "about 25% to v2 over 200 requests (got ${v2:-0})"
expect_not_contains "$out" "error" "no failed request during the canary"
kubectl delete -f "$SHOP/canary.yaml" --wait >/dev/null || fail "delete the canary"
kubectl -n shop wait --for=delete pod -l version=v2 --timeout=60s >/dev/null 2>&1

# stream start|stop NAME: the client requests a product every 20 ms until stopped, and prints a
# JSON summary: answers per reviews version, failures (with the first few), the seconds it ran.
stream_start() {
  kubectl exec client -c client -- rm -f /tmp/stop
  kubectl exec client -c client -- python3 -c "$STREAM" >"$WORK/$1.json" 2>&1 &
  STREAM_PID=$!
}
STREAM=$(cat <<'PY'
import collections, json, os, time, urllib.request
seen, errors, t0, last = collections.Counter(), [], time.time(), None
while not os.path.exists("/tmp/stop") and time.time() - t0 < 240:
    try:
        body = json.load(urllib.request.urlopen("http://frontend.shop/api/products/1", timeout=5))
        seen[body["reviewsVersion"]] += 1
    except Exception as e:
        seen["error"] += 1
        last = round(time.time() - t0, 1)
        errors.append(f"{last}s: {e}")
    time.sleep(0.02)
print(json.dumps({"counts": seen, "errors": errors[:5], "lastError": last,
                  "seconds": round(time.time() - t0, 1)}))
PY
)
stream_stop() {
  kubectl exec client -c client -- touch /tmp/stop
  wait "$STREAM_PID"
  cat "$WORK/$1.json"
}
count_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counts"].get(sys.argv[2], 0))' "$WORK/$1.json" "$2" 2>/dev/null || echo 0; }
# quiet_tail NAME: seconds the stream ran after its last failure (all of it when none failed).
quiet_tail() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(int(d["seconds"] - (d["lastError"] or 0)))' "$WORK/$1.json" 2>/dev/null || echo 0; }

step "mesh rollout reviews to v2 under a steady stream: no request fails"
stream_start healthy
sleep 2  # the stream is under way before the rollout starts
t0=$SECONDS
"$MINIK8S_BIN" mesh rollout reviews -n shop --image shop/reviews:v2 --step 50 --interval 5s \
  2>&1 | tee "$WORK/rollout-v2.log"
rc=${PIPESTATUS[0]}
echo "the rollout took $((SECONDS - t0)) s"
sleep 2
stream_stop healthy
expect_eq "$rc" "0" "the rollout succeeded"
expect_contains "$(cat "$WORK/rollout-v2.log")" "Promoted: every request to the new version" \
  "the rollout says it promoted v2"
out=$(kubectl -n shop get meshrollouts reviews-v2 --no-headers 2>&1)
[[ $out =~ ^reviews-v2\ +reviews\ +Promoted\ +100\  ]] || fail "kubectl get meshrollouts: $out"
expect_eq "$(count_of healthy error)" "0" "not one failed request during the rollout"
((10#$(count_of healthy v1) > 20 && 10#$(count_of healthy v2) > 20)) ||
  fail "the stream saw both versions (v1 $(count_of healthy v1), v2 $(count_of healthy v2))"
expect_eq "$(kubectl -n shop get deploy -l app=reviews -o jsonpath='{.items[*].metadata.name}')" \
  "reviews-v2" "reviews-v1 is gone, reviews-v2 stays"
expect_eq "$(kubectl -n shop get deploy reviews-v2 -o jsonpath='{.spec.replicas}')" "2" \
  "with the old version's replicas"
expect_eq "$(versions 20)" "v2=20" "every request goes to v2 afterwards"

step "mesh rollout reviews to the broken v3: it rolls back by itself and the stream recovers"
stream_start broken
sleep 2
t0=$SECONDS
"$MINIK8S_BIN" mesh rollout reviews -n shop --image shop/reviews:v3 --step 50 --interval 20s \
  2>&1 | tee "$WORK/rollout-v3.log"
rc=${PIPESTATUS[0]}
echo "the rollout ended after $((SECONDS - t0)) s"
expect_eq "$rc" "1" "the rollout fails"
out=$(cat "$WORK/rollout-v3.log")
expect_contains "$out" "RolledBack: error rate" "it rolled back because of the error rate"
expect_not_contains "$out" "step at 50% passed" "before its first step was over"
recovered() { [[ $(versions 20) == "v2=20" ]]; }
wait_for 10 recovered || fail "every request answered by v2 again (last: $(versions 20))"
sleep 2
stream_stop broken
echo "failed requests while v3 had weight: $(count_of broken error) of $(($(count_of broken v2) + $(count_of broken error)))"
((10#$(count_of broken error) > 0)) || fail "the stream saw v3's failures (the check can fail)"
(($(quiet_tail broken) >= 3)) || fail "the stream ran without a failure after the rollback ($(quiet_tail broken) s)"
expect_eq "$(kubectl -n shop get deploy -l app=reviews -o jsonpath='{.items[*].metadata.name}')" \
  "reviews-v2" "reviews-v3 is removed"
expect_eq "$(kubectl -n shop get deploy reviews-v2 -o jsonpath='{.spec.replicas}')" "2" \
  "reviews-v2 is back at 2 replicas"
expect_eq "$(kubectl -n shop get virtualservice reviews -o jsonpath='{.spec.http[0].route[*].destination.subset}')" \
  "v2" "the VirtualService routes everything to v2"

step "the control plane killed and started again mid-rollout: the rollout resumes and finishes"
stream_start restart
sleep 2
"$MINIK8S_BIN" mesh rollout reviews -n shop --image shop/reviews:v1 --step 50 --interval 8s \
  --no-wait >/dev/null || fail "create the MeshRollout reviews-v1"
phase() { kubectl -n shop get meshrollout reviews-v1 -o jsonpath='{.status.phase} {.status.weight}' 2>/dev/null; }
halfway() { [[ $(phase) == "Progressing 50" ]]; }
wait_for 60 halfway || fail "the rollout got to its first step ($(phase))"
uid=$(kubectl -n shop get deploy reviews-v1 -o jsonpath='{.metadata.uid}')
echo "server killed at: $(kubectl -n shop get meshrollout reviews-v1 -o jsonpath='{.status.stage} {.status.reason}')"
kill -9 "$(jq -r .serverPid "$CL_DIR/cluster.json")"
t0=$SECONDS
sleep 2
out=$(cluster_cmd up 2>&1) || { fail "cluster up after the kill"; echo "$out"; }
echo "the control plane was back after $((SECONDS - t0)) s"
finished() { [[ $(phase) == "Promoted 100" ]]; }
wait_for 90 finished || fail "the rollout resumed and was promoted ($(phase))"
echo "promoted $((SECONDS - t0)) s after the kill: $(kubectl -n shop get meshrollout reviews-v1 -o jsonpath='{.status.reason}')"
expect_eq "$(kubectl -n shop get deploy reviews-v1 -o jsonpath='{.metadata.uid}')" "$uid" \
  "the new Deployment is the one made before the kill (resumed, not started again)"
sleep 2
stream_stop restart
expect_eq "$(count_of restart error)" "0" "not one failed request across the restart"
expect_eq "$(kubectl -n shop get deploy -l app=reviews -o jsonpath='{.items[*].metadata.name}')" \
  "reviews-v1" "reviews-v2 is gone, the new reviews-v1 stays"
expect_eq "$(versions 10)" "v1=10" "every request to v1"

step "deleting a MeshRollout mid-way rolls back"
"$MINIK8S_BIN" mesh rollout reviews -n shop --image shop/reviews:v2 --step 50 --interval 30s \
  >"$WORK/rollout-deleted.log" 2>&1 &
pid=$!
halfway() { kubectl -n shop get meshrollout reviews-v2 -o jsonpath='{.status.weight}' 2>/dev/null | grep -qx 50; }
wait_for 60 halfway || fail "the rollout got to its first step: $(cat "$WORK/rollout-deleted.log")"
kubectl -n shop delete meshrollout reviews-v2 --timeout=30s >/dev/null || fail "delete the MeshRollout"
wait "$pid"
expect_eq "$?" "1" "the command following it exits 1"
expect_eq "$(kubectl -n shop get deploy -l app=reviews -o jsonpath='{.items[*].metadata.name}')" \
  "reviews-v1" "the new reviews-v2 is removed again"
expect_eq "$(kubectl -n shop get deploy reviews-v1 -o jsonpath='{.spec.replicas}')" "2" \
  "reviews-v1 is back at 2 replicas"
expect_eq "$(versions 10)" "v1=10" "every request to v1"

step "outlier detection: a failing endpoint among reviews v1's is ejected after 2 errors in a row"
kubectl -n shop patch destinationrule reviews --type merge -p \
  '{"spec":{"trafficPolicy":{"outlierDetection":{"consecutive5xxErrors":2,"baseEjectionTime":"60s"}}}}' \
  >/dev/null || fail "patch the DestinationRule"
kubectl apply -f - >/dev/null <<'YAML' || fail "apply the failing pod"
apiVersion: v1
kind: Pod
metadata: {name: reviews-bad, namespace: shop, labels: {app: reviews, version: v1}}
spec:
  containers:
  - name: reviews
    image: shop/reviews:v3
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1}
YAML
three() { [[ $(kubectl -n shop get endpoints reviews -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 3 ]]; }
wait_for 60 three || fail "the failing pod is the third endpoint of reviews"
sleep 1  # the frontend's sidecar sees it
out=$(versions 60)
echo "60 requests, one of reviews v1's three endpoints answering 500: $out"
errors=$(echo "$out" | grep -o 'error=[0-9]*' | cut -d= -f2)
((${errors:-0} >= 1 && ${errors:-0} <= 3)) ||
  fail "the failing endpoint got requests, then none after 2 failures (errors: ${errors:-0}; 20 without outlier detection)"

finish
