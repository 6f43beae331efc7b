#!/usr/bin/env bash
# A user's admission webhooks with the real kubectl: a small HTTPS server (Python, its own CA)
# registered through a ValidatingWebhookConfiguration refuses ConfigMaps that carry a key named
# "forbidden", and through a MutatingWebhookConfiguration labels every ConfigMap it admits.
# failurePolicy Fail refuses writes while the webhook is down, Ignore lets them through, and the
# configurations themselves stay removable.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
start_server sqlite
k() { kubectl "$@"; }

step "a webhook server with its own CA"
WH="$E2E_DIR/webhook"
mkdir -p "$WH"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=webhook-ca" \
  -keyout "$WH/ca.key" -out "$WH/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$WH/tls.key" \
  -out "$WH/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$WH/san.ext"
openssl x509 -req -in "$WH/tls.csr" -CA "$WH/ca.crt" -CAkey "$WH/ca.key" -CAcreateserial \
  -days 1 -extfile "$WH/san.ext" -out "$WH/tls.crt" 2>/dev/null
cat >"$WH/server.py" <<'EOF'
import base64, http.server, json, ssl, sys

class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        req = review["request"]
        obj = req.get("object") or {}
        resp = {"uid": req["uid"], "allowed": True}
        if self.path == "/validate":
            if "forbidden" in (obj.get("data") or {}):
                resp = {"uid": req["uid"], "allowed": False,
                        "status": {"code": 403, "reason": "Forbidden",
                                   "message": "key 'forbidden' is not allowed (%s by %s)"
                                   % (req["operation"], req["userInfo"]["username"])}}
        elif self.path == "/mutate":
            labels = (obj.get("metadata") or {}).get("labels")
            ops = [] if labels else [{"op": "add", "path": "/metadata/labels", "value": {}}]
            ops.append({"op": "add", "path": "/metadata/labels/mutated-by", "value": "webhook"})
            resp["patchType"] = "JSONPatch"
            resp["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": resp}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
EOF
WH_PORT=$(free_port)
python3 "$WH/server.py" "$WH_PORT" "$WH/tls.crt" "$WH/tls.key" >"$WH/server.log" 2>&1 &
WH_PID=$!
E2E_PIDS+=($WH_PID)
wait_for 10 curl -sf --cacert "$WH/ca.crt" -X POST "https://127.0.0.1:$WH_PORT/none" -d '{"request":{"uid":"x"}}'
CA_BUNDLE=$(base64 -w0 "$WH/ca.crt")

# webhook_config KIND NAME PATH FAILURE_POLICY
webhook_config() {
  cat <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: $1
metadata: {name: $2}
webhooks:
- name: $2.example.com
  clientConfig:
    url: https://127.0.0.1:$WH_PORT$3
    caBundle: $CA_BUNDLE
  rules:
  - operations: ["CREATE", "UPDATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  namespaceSelector:
    matchExpressions: [{key: webhooks, operator: NotIn, values: ["off"]}]
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: $4
  timeoutSeconds: 5
EOF
}

step "a validating webhook refuses an object"
webhook_config ValidatingWebhookConfiguration deny-forbidden /validate Fail | k apply -f - >/dev/null
out=$(k get validatingwebhookconfigurations)
expect_contains "$out" "deny-forbidden" "get validatingwebhookconfigurations"
out=$(k get validatingwebhookconfiguration deny-forbidden -o jsonpath='{.webhooks[0].matchPolicy} {.webhooks[0].rules[0].scope}')
expect_eq "$out" "Equivalent *" "defaults"
out=$(must_fail k create configmap bad --from-literal=forbidden=1)
expect_contains "$out" 'admission webhook "deny-forbidden.example.com" denied the request: key '"'"'forbidden'"'"' is not allowed (CREATE by kubernetes-admin)' "denied with the webhook's message"
out=$(must_fail k apply -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: bad}
data: {forbidden: "1"}
EOF
)
expect_contains "$out" "Error from server (Forbidden)" "the webhook's code and reason"
k create configmap good --from-literal=fine=1 >/dev/null
out=$(must_fail k patch configmap good --type=merge -p '{"data":{"forbidden":"x"}}')
expect_contains "$out" "denied the request" "update refused too"

step "namespaceSelector leaves other namespaces alone"
k create namespace free >/dev/null
k label namespace free webhooks=off >/dev/null
k create configmap bad --from-literal=forbidden=1 -n free >/dev/null ||
  fail "namespace outside the selector was sent to the webhook"

step "a mutating webhook patches the object"
webhook_config MutatingWebhookConfiguration add-label /mutate Fail | k apply -f - >/dev/null
k create configmap labelled --from-literal=a=b >/dev/null
out=$(k get configmap labelled -o jsonpath='{.metadata.labels.mutated-by}')
expect_eq "$out" "webhook" "label added by the mutating webhook"

step "failurePolicy: Fail refuses while the webhook is down, Ignore does not"
stop_children "$WH_PID"; wait "$WH_PID" 2>/dev/null || true
out=$(must_fail k create configmap while-down --from-literal=a=b)
expect_contains "$out" 'failed calling webhook "add-label.example.com"' "Fail policy"
webhook_config MutatingWebhookConfiguration add-label /mutate Ignore | k apply -f - >/dev/null
webhook_config ValidatingWebhookConfiguration deny-forbidden /validate Ignore | k apply -f - >/dev/null
k create configmap while-down --from-literal=a=b >/dev/null || fail "Ignore policy let it through"
k delete validatingwebhookconfiguration deny-forbidden >/dev/null
k delete mutatingwebhookconfiguration add-label >/dev/null

step "bad configurations are refused with field paths"
out=$(must_fail k apply -f - <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: broken}
webhooks:
- name: short
  clientConfig: {url: "http://127.0.0.1:1/x"}
  rules: [{operations: ["PUNCH"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}]
  admissionReviewVersions: ["v2"]
  sideEffects: Some
  timeoutSeconds: 99
EOF
)
expect_contains "$out" "webhooks[0].name: Invalid value: \"short\": should be a domain with at least three segments separated by dots" "webhook name"
expect_contains "$out" "webhooks[0].clientConfig.url: Invalid value: \"http://127.0.0.1:1/x\": 'https' is the only allowed URL scheme" "url scheme"
expect_contains "$out" 'webhooks[0].rules[0].operations[0]: Unsupported value: "PUNCH"' "operation"
expect_contains "$out" "webhooks[0].sideEffects: Unsupported value: \"Some\"" "side effects"
expect_contains "$out" "webhooks[0].timeoutSeconds: Invalid value: 99" "timeout"

finish
