#!/usr/bin/env bash
# Mutual TLS between sidecars on a 3-node cluster: every sidecar of a meshed namespace gets a
# SPIFFE certificate (spiffe://cluster.local/ns/NS/sa/SA) from the cluster CA through a
# CertificateSigningRequest the mesh controller signs; a meshed client reaches a meshed server
# with mTLS (the server's sidecar counts the connection as mutual_tls with the client's
# principal); a PeerAuthentication STRICT on the namespace makes the server refuse a plain-text
# client without a sidecar while the meshed client still works; PERMISSIVE lets the plain client
# in again. Also: a CSR for a mesh identity from a user who is not that service account is
# denied, a bad mode is a 422 naming the field, and the latency through two sidecars with and
# without mTLS is reported (DISABLE makes the client's sidecar send plain text). AuthorizationPolicies
# let only the client's identity GET web outside /admin, a DENY policy wins for /debug, plain text
# gets 403, the kubelet's probes still pass.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

SUBNET=172.29.142
WORK=$E2E_DIR/mesh-mtls
mkdir -p "$WORK"

step "a 3-node cluster; the mesh controller installs PeerAuthentication"
start_cluster mtls "$SUBNET" 3 || exit 1
wait_for 60 kubectl get crd peerauthentications.security.istio.io ||
  fail "the PeerAuthentication CRD is installed"

step "a meshed namespace: server web (service account web), a meshed client; a plain client"
kubectl create namespace sec >/dev/null
kubectl label namespace sec istio-injection=enabled >/dev/null
cat >"$WORK/apps.yaml" <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata: {name: web, namespace: sec}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: client, namespace: sec}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: sec}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers:
      - name: web
        image: minik8s/python:latest
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
        command:
        - python3
        - -c
        - |
          import http.server
          class H(http.server.BaseHTTPRequestHandler):
              protocol_version = "HTTP/1.1"
              disable_nagle_algorithm = True
              def do_GET(self):
                  self.send_response(200)
                  self.send_header("Content-Length", "4")
                  self.end_headers()
                  self.wfile.write(b"web\n")
              def log_message(self, *args):
                  pass
          http.server.ThreadingHTTPServer(("", 8080), H).serve_forever()
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: sec}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: sec}
spec:
  serviceAccountName: client
  containers:
  - {name: client, image: minik8s/python:latest, command: [python3, -c, "import time; time.sleep(1e9)"]}
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: default}
spec:
  containers:
  - {name: plain, image: minik8s/python:latest, command: [python3, -c, "import time; time.sleep(1e9)"]}
YAML
kubectl apply -f "$WORK/apps.yaml" >/dev/null || fail "apply the applications"
kubectl -n sec wait --for=condition=Ready pod -l app=web --timeout=180s >/dev/null ||
  fail "web is ready (its probes pass the inbound sidecar)"
kubectl -n sec wait --for=condition=Ready pod/client --timeout=120s >/dev/null || fail "client ready"
kubectl wait --for=condition=Ready pod/plain --timeout=120s >/dev/null || fail "plain ready"
web_ip=$(kubectl -n sec get pod -l app=web -o jsonpath='{.items[0].status.podIP}')

# get URL [POD NAMESPACE CONTAINER]: one GET from a pod, prints the body or the error's type.
get() {
  kubectl -n "${3:-sec}" exec "${2:-client}" -c "${4:-client}" -- python3 -c '
import sys, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().strip())
except Exception as e:
    print("error", type(e).__name__, e)' "$1" 2>&1
}
plain_get() { get "$1" plain default plain; }
# The server sidecar's metrics, read from the plain pod (port 15090 is not intercepted).
server_metrics() { plain_get "http://$web_ip:15090/metrics"; }

step "each sidecar holds a certificate for its service account, signed through a CSR"
has_cert() { [[ $(get "http://127.0.0.1:15090/certs") == *'"spiffeId":"spiffe://cluster.local/ns/sec/sa/client"'* ]]; }
wait_for 30 has_cert || fail "the client's sidecar has its SPIFFE certificate: $(get http://127.0.0.1:15090/certs)"
out=$(get "http://127.0.0.1:15090/certs")
echo "client sidecar /certs: $out"
not_after=$(echo "$out" | grep -o '"notAfter":[0-9]*' | cut -d: -f2)
life=$((not_after - $(date +%s)))
((life > 23 * 3600 && life <= 24 * 3600 + 60)) || fail "the certificate lives ~24 h (left: $life s)"
csrs=$(kubectl get csr -o jsonpath='{range .items[*]}{.spec.signerName} {.spec.username} {.status.conditions[0].type}{"\n"}{end}')
expect_contains "$csrs" "minik8s.io/mesh-workload system:serviceaccount:sec:web Approved" \
  "the server's CSR was approved"
expect_contains "$csrs" "minik8s.io/mesh-workload system:serviceaccount:sec:client Approved" \
  "the client's CSR was approved"

step "a meshed client reaches the meshed server with mutual TLS"
wait_for 30 bash -c "[[ \$(kubectl -n sec exec client -c client -- python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://web/\", timeout=5).read().decode().strip())' 2>&1) == web ]]" ||
  fail "client -> web answers (last: $(get http://web/))"
out=$(server_metrics)
expect_contains "$out" 'mesh_inbound_connections_total{security="mutual_tls",source_principal="spiffe://cluster.local/ns/sec/sa/client"}' \
  "the server's sidecar took the client's connection as mTLS from the client's identity"
# The bytes on the wire: a raw socket in the web pod's network namespace (the web container)
# sees the client's packets to port 8080 (before the nat rule sends them to the sidecar): TLS
# records (0x16/0x17 0x03), never an HTTP request line. The kubelet's plain probes come from
# another address and are left out.
web_pod=$(kubectl -n sec get pod -l app=web -o jsonpath='{.items[0].metadata.name}')
client_ip=$(kubectl -n sec get pod client -o jsonpath='{.status.podIP}')
kubectl -n sec exec "$web_pod" -c web -- python3 -c '
import socket, sys, time
try:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(3))
except OSError as e:
    print("skip", e)
    sys.exit(0)
peer = socket.inet_aton(sys.argv[1])
s.settimeout(0.2)
end, tls, plain = time.time() + 5, 0, 0
while time.time() < end:
    try:
        f = s.recv(65535)
    except socket.timeout:
        continue
    if len(f) < 34 or f[12:14] != b"\x08\x00":
        continue
    ip = f[14:]
    if ip[9] != 6 or peer not in (ip[12:16], ip[16:20]):
        continue
    tcp = ip[(ip[0] & 15) * 4:]
    if 8080 not in (int.from_bytes(tcp[0:2], "big"), int.from_bytes(tcp[2:4], "big")):
        continue
    payload = tcp[(tcp[12] >> 4) * 4:]
    if payload[:1] in (b"\x16", b"\x17") and payload[1:2] == b"\x03":
        tls += 1
    if b"HTTP/1." in payload:
        plain += 1
print("tls", tls, "plain", plain)' "$client_ip" >"$WORK/wire" 2>&1 &
sniffer=$!
sleep 1
for i in 1 2 3; do get "http://web/?wire=$i" >/dev/null; done
wait $sniffer
wire=$(cat "$WORK/wire")
echo "packets between client and web seen in web's network namespace: $wire"
if [[ $wire != skip* ]]; then
  [[ $wire =~ ^tls\ [1-9][0-9]*\ plain\ 0$ ]] || fail "the bytes between the sidecars are TLS only ($wire)"
fi

step "STRICT: the plain client is refused, the meshed client still works"
cat >"$WORK/strict.yaml" <<'YAML'
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: sec}
spec:
  mtls: {mode: STRICT}
YAML
expect_eq "$(plain_get http://web.sec/)" "web" "PERMISSIVE (the default): the plain client gets in"
kubectl apply -f "$WORK/strict.yaml" >/dev/null || fail "apply STRICT"
refused() { [[ $(plain_get http://web.sec/) == error* ]]; }
wait_for 10 refused || fail "STRICT refuses plain text (got: $(plain_get http://web.sec/))"
echo "plain client under STRICT: $(plain_get http://web.sec/)"
expect_eq "$(get http://web/)" "web" "the meshed client still reaches web under STRICT"
expect_contains "$(server_metrics)" 'mesh_inbound_refused_total{reason="plaintext"}' \
  "the server's sidecar counts the refused plain text"

step "PERMISSIVE again: the plain client gets in"
kubectl -n sec patch peerauthentication default --type merge \
  -p '{"spec":{"mtls":{"mode":"PERMISSIVE"}}}' >/dev/null || fail "patch to PERMISSIVE"
let_in() { [[ $(plain_get http://web.sec/) == web ]]; }
wait_for 10 let_in || fail "PERMISSIVE lets plain text in (got: $(plain_get http://web.sec/))"

step "AuthorizationPolicy: web only for the client's identity and GET outside /admin; DENY /debug"
cat >"$WORK/authz.yaml" <<'YAML'
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: web-viewers, namespace: sec}
spec:
  selector: {matchLabels: {app: web}}
  action: ALLOW
  rules:
  - from: [{source: {principals: [cluster.local/ns/sec/sa/client]}}]
    to: [{operation: {methods: [GET], notPaths: ["/admin*"]}}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: no-debug, namespace: sec}
spec:
  selector: {matchLabels: {app: web}}
  action: DENY
  rules:
  - to: [{operation: {paths: ["/debug*"]}}]
YAML
kubectl apply -f "$WORK/authz.yaml" >/dev/null || fail "apply the AuthorizationPolicies"
expect_contains "$(kubectl get authorizationpolicies -n sec)" "web-viewers   ALLOW" \
  "kubectl lists them with their action"
plain_denied() { [[ $(plain_get http://web.sec/) == *"HTTP Error 403"* ]]; }
wait_for 15 plain_denied || fail "a client without an identity gets 403 (got: $(plain_get http://web.sec/))"
expect_eq "$(get http://web/)" "web" "the client's identity gets GET /"
expect_contains "$(get http://web/admin)" "HTTP Error 403" "GET /admin is not allowed"
expect_contains "$(get http://web/debug/vars)" "HTTP Error 403" "the DENY policy wins for /debug"
expect_contains "$(plain_get http://web.sec/)" "HTTP Error 403" "plain text has no principal"
kubectl -n sec wait --for=condition=Ready pod -l app=web --timeout=5s >/dev/null ||
  fail "web stays Ready: the kubelet's probes are not subject to the policies"
out=$(server_metrics)
expect_contains "$out" 'mesh_authorization_denied_total{protocol="http",policy="sec/no-debug"} 1' \
  "the server's sidecar counts the DENY policy's denial"
expect_contains "$out" 'mesh_authorization_denied_total{protocol="http",policy=""}' \
  "and the requests no ALLOW rule matched"
out=$(kubectl apply -f - 2>&1 <<'YAML'
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: bad, namespace: sec}
spec: {action: CUSTOM}
YAML
)
expect_contains "$out" "spec.action" "an action the sidecars cannot enforce is refused naming the field"
kubectl delete -f "$WORK/authz.yaml" >/dev/null || fail "delete the AuthorizationPolicies"
wait_for 15 let_in || fail "without policies the plain client gets in again (got: $(plain_get http://web.sec/))"

step "bad input and forged identities are refused"
out=$(kubectl apply -f - 2>&1 <<'YAML'
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: bad, namespace: sec}
spec: {mtls: {mode: strict}}
YAML
)
expect_contains "$out" "spec.mtls.mode" "a bad mode is refused naming the field"
# The admin asks for the web service account's identity: denied (not that service account).
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/k.pem" \
  -subj "/" -addext "subjectAltName=URI:spiffe://cluster.local/ns/sec/sa/web" \
  -out "$WORK/r.pem" >/dev/null 2>&1
cat >"$WORK/csr.yaml" <<YAML
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: forged-web}
spec:
  signerName: minik8s.io/mesh-workload
  usages: [client auth, server auth]
  request: $(base64 -w0 "$WORK/r.pem")
YAML
kubectl apply -f "$WORK/csr.yaml" >/dev/null || fail "create the forged CSR"
denied() { [[ $(kubectl get csr forged-web -o jsonpath='{.status.conditions[0].type}') == Denied ]]; }
wait_for 10 denied || fail "the admin's CSR for a service account's identity is denied"
expect_eq "$(kubectl get csr forged-web -o jsonpath='{.status.certificate}')" "" "and not signed"

step "latency through two sidecars with and without mTLS (reported, not checked)"
latency() {
  kubectl -n sec exec client -c client -- python3 -c '
import http.client, time
n = 1000
c = http.client.HTTPConnection("web", 80, timeout=5)
lat = []
for _ in range(n):
    t = time.perf_counter()
    c.request("GET", "/")
    c.getresponse().read()
    lat.append((time.perf_counter() - t) * 1e3)
lat.sort()
print(f"p50 {lat[n // 2]:.3f} ms  p90 {lat[int(n * 0.9)]:.3f} ms  p99 {lat[int(n * 0.99)]:.3f} ms")'
}
# A fresh connection per run, so each run gets the mode in force when it starts.
echo "two sidecars, mTLS (PERMISSIVE):      $(latency)"
kubectl -n sec patch peerauthentication default --type merge \
  -p '{"spec":{"mtls":{"mode":"DISABLE"}}}' >/dev/null || fail "patch to DISABLE"
plain_count() {
  server_metrics | awk '/^mesh_inbound_connections_total\{security="plaintext"/ {print $2}'
}
before=$(plain_count)
plain_from_client() {
  get http://web/ >/dev/null
  [[ $(plain_count) != "$before" ]]
}
wait_for 10 plain_from_client || fail "DISABLE: the client's sidecar sends plain text"
echo "two sidecars, plain text (DISABLE):   $(latency)"
kubectl -n sec patch peerauthentication default --type merge \
  -p '{"spec":{"mtls":{"mode":"PERMISSIVE"}}}' >/dev/null
echo "two sidecars, mTLS again:             $(latency)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

finish
