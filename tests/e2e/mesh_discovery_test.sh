#!/usr/bin/env bash
# The mesh control plane end to end: `minik8s mesh install-discovery` runs istiod (one
# `minik8s mesh-discovery` in istio-system); the sidecars of a meshed namespace get their
# configuration streamed from it and hold no watch on the API server (nor may they read the
# cluster's pods any more) (the server's watch gauge
# for virtualservices does not grow with them); istiod's registry answers a pod's service-account
# token and refuses a request without one; after a scale-down no request reaches a removed pod
# once it is gone; with istiod down the traffic keeps flowing.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

SUBNET=172.29.148
WORK=$E2E_DIR/mesh-discovery
mkdir -p "$WORK"

step "a 3-node cluster with the mesh's control plane"
start_cluster mdisc "$SUBNET" 3 || exit 1
wait_for 60 kubectl get crd virtualservices.networking.istio.io || fail "the mesh's CRDs"
"$MINIK8S_BIN" mesh install-discovery --pki-dir "$CL_DIR/server/pki" --kubeconfig "$KUBECONFIG" ||
  fail "mesh install-discovery: istiod ready"

# vs_watches: the API server's open WATCH requests on virtualservices (sidecars watched them
# before; now only istiod and the controllers do).
vs_watches() {
  kubectl get --raw /metrics | awk '/^apiserver_longrunning_requests\{/ && /resource="virtualservices"/ &&
    /verb="WATCH"/ {n += $NF} END {print n + 0}'
}
wait_for 30 bash -c "(( \$(kubectl get --raw /metrics | grep -c 'resource=\"virtualservices\"') > 0 ))"
before=$(vs_watches)

step "a meshed namespace: web (3 replicas answering their pod name) and a client"
kubectl create namespace shop >/dev/null
kubectl label namespace shop istio-injection=enabled >/dev/null
cat >"$WORK/shop.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: web
        image: minik8s/python:latest
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
        command:
        - python3
        - -c
        - |
          import http.server, os
          class H(http.server.BaseHTTPRequestHandler):
              protocol_version = "HTTP/1.1"
              disable_nagle_algorithm = True
              def do_GET(self):
                  body = (os.environ["HOSTNAME"] + "\n").encode()
                  self.send_response(200)
                  self.send_header("Content-Length", str(len(body)))
                  self.end_headers()
                  self.wfile.write(body)
              def log_message(self, *args):
                  pass
          http.server.ThreadingHTTPServer(("", 8080), H).serve_forever()
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: shop}
spec:
  containers:
  - {name: client, image: minik8s/python:latest, command: [python3, -c, "import time; time.sleep(1e9)"]}
YAML
kubectl apply -f "$WORK/shop.yaml" >/dev/null || fail "apply the shop"
kubectl -n shop wait --for=condition=Ready pod -l app=web --timeout=180s >/dev/null || fail "web ready"
kubectl -n shop wait --for=condition=Ready pod/client --timeout=120s >/dev/null || fail "client ready"

step "the sidecars take their configuration from istiod, not from the API server"
expect_contains "$(kubectl -n shop logs client -c istio-proxy 2>&1)" \
  "mesh config from discovery at https://istiod.istio-system.svc.cluster.local:15012" \
  "the client's sidecar uses istiod"
connected() {
  (( $(kubectl -n istio-system logs deploy/istiod 2>&1 | grep -c "shop/.* connected from") >= 4 ))
}
wait_for 30 connected || fail "istiod streams to the 4 sidecars ($(kubectl -n istio-system logs deploy/istiod | tail -5))"
expect_eq "$(kubectl auth can-i list pods --as=system:serviceaccount:shop:default 2>/dev/null)" "no" \
  "with istiod the sidecars' service accounts may not read the cluster's pods"
expect_eq "$(kubectl auth can-i create certificatesigningrequests --as=system:serviceaccount:shop:default 2>/dev/null)" \
  "yes" "... but may still ask for their workload certificate"
after=$(vs_watches)
expect_eq "$after" "$before" "no new watch on virtualservices with 4 sidecars (before $before)"

# in_client PYTHON...: runs python3 in the client container.
in_client() { kubectl -n shop exec client -c client -- python3 -c "$@"; }
names() {
  in_client '
import collections, urllib.request
seen = collections.Counter()
for _ in range(12):
    try:
        seen[urllib.request.urlopen("http://web/", timeout=5).read().decode().strip()] += 1
    except Exception:
        seen["error"] += 1
print(len([k for k in seen if k != "error"]), seen["error"])'
}
wait_for 60 bash -c "[[ \"\$($(declare -f in_client names); names)\" == '3 0' ]]" ||
  fail "requests reach the 3 web pods through the sidecars (last: $(names))"

step "istiod's registry: a pod's service-account token reads it, no token is refused"
registry() {
  in_client '
import json, ssl, sys, urllib.request
sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
ctx = ssl.create_default_context(cafile=sa + "ca.crt")
req = urllib.request.Request("https://istiod.istio-system.svc.cluster.local:15012/debug/registryz")
if sys.argv[1] == "token":
    req.add_header("Authorization", "Bearer " + open(sa + "token").read().strip())
try:
    body = json.load(urllib.request.urlopen(req, context=ctx, timeout=5))
    web = [s for s in body["services"] if s["namespace"] == "shop" and s["name"] == "web"]
    print(200, len(web[0]["ports"][0]["endpoints"]) if web else -1)
except urllib.error.HTTPError as e:
    print(e.code)' "$1"
}
expect_eq "$(registry token)" "200 3" "the registry lists shop/web with its 3 endpoints (TLS checked with ca.crt)"
expect_eq "$(registry none)" "401" "no token: 401"

step "scale web to 1: no request reaches a removed pod once it is gone"
in_client '
import time, urllib.request
end = time.time() + 40
with open("/tmp/answers", "w") as out:
    while time.time() < end:
        try:
            name = urllib.request.urlopen("http://web/", timeout=5).read().decode().strip()
        except Exception:
            name = "error"
        out.write(f"{time.time():.3f} {name}\n")
        out.flush()
        time.sleep(0.02)
' >/dev/null 2>&1 &
loop=$!
sleep 2
pods=$(kubectl -n shop get pods -l app=web -o jsonpath='{.items[*].metadata.name}')
kubectl -n shop scale deployment web --replicas=1 >/dev/null
wait_for 60 bash -c "(( \$(kubectl -n shop get pods -l app=web --no-headers | wc -l) == 1 ))" ||
  fail "web scaled down to 1"
kept=$(kubectl -n shop get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
# Each removed pod, and when the API server had it gone (this machine's clock: the pods share it).
removed=()
goneAt=()
for p in $pods; do
  [[ $p == "$kept" ]] && continue
  removed+=("$p")
  kubectl -n shop wait --for=delete "pod/$p" --timeout=60s >/dev/null 2>&1 || fail "$p deleted"
  goneAt[${#removed[@]}]=$(date +%s.%N)
done
sleep 3  # answers after the pods are gone
kill "$loop" 2>/dev/null; wait "$loop" 2>/dev/null
kubectl -n shop exec client -c client -- cat /tmp/answers >"$WORK/answers"
echo "$(wc -l <"$WORK/answers") requests during the scale-down, $(grep -c ' error$' "$WORK/answers") errors"
i=0
for p in "${removed[@]}"; do
  i=$((i + 1))
  last=$(awk -v p="$p" '$2 == p {t = $1} END {printf "%.3f", t}' "$WORK/answers")
  late=$(awk -v g="${goneAt[$i]}" -v p="$p" '$2 == p && $1 > g + 1 {n++} END {print n + 0}' "$WORK/answers")
  echo "$p: last answer at $last, gone by $(printf %.3f "${goneAt[$i]}")"
  expect_eq "$late" "0" "no request to $p more than 1 s after it was gone"
done
after_gone=$(awk -v g="${goneAt[$i]}" '$1 > g + 1 && $2 != "error" {n++} END {print n + 0}' "$WORK/answers")
((after_gone > 0)) || fail "requests kept being answered after the scale-down ($after_gone)"
expect_eq "$(awk -v g="${goneAt[$i]}" -v k="$kept" '$1 > g + 1 && $2 != k {n++} END {print n + 0}' "$WORK/answers")" \
  "0" "afterwards every answer comes from $kept"

step "istiod down: the sidecars keep their configuration and the traffic flows"
kubectl -n istio-system scale deployment istiod --replicas=0 >/dev/null
wait_for 60 bash -c "(( \$(kubectl -n istio-system get pods -l app=istiod --no-headers 2>/dev/null | wc -l) == 0 ))" ||
  fail "istiod stopped"
expect_eq "$(names)" "1 0" "with istiod down, 12 requests answered by the one web pod"
kubectl -n istio-system scale deployment istiod --replicas=1 >/dev/null
kubectl -n istio-system wait --for=condition=Available deployment/istiod --timeout=120s >/dev/null ||
  fail "istiod back"
kubectl -n shop scale deployment web --replicas=2 >/dev/null
kubectl -n shop wait --for=condition=Ready pod -l app=web --timeout=120s >/dev/null || fail "web x2"
wait_for 30 bash -c "[[ \"\$($(declare -f in_client names); names)\" == '2 0' ]]" ||
  fail "after istiod's restart the sidecars reconnect and route to the new pod (last: $(names))"

finish
