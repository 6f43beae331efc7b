#!/usr/bin/env bash
# Certificate rotation end to end on a 1-node `minik8s cluster up` whose CSR signer issues 60-s
# certificates (--cluster-signing-duration) and whose API server serving certificate lives 90 s
# (--serving-cert-duration): the agent renews its client and serving certificates while running
# (new serials, new keys) and the node stays Ready and keeps its Lease fresh past the original
# certificates' expiry; a `kubectl get pods -w` and a `kubectl exec -i` stream opened before the
# rotation keep working on their connections; new `kubectl logs`/`exec` reach the agent's new
# serving certificate; SIGHUP re-issues the server's serving certificate and a new TLS
# connection sees its serial, with the same server process.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 1 node, 60-s node certificates, 90-s API server certificate"
start_cluster crot 172.29.137 1 --server-arg=--cluster-signing-duration=60s \
  --server-arg=--serving-cert-duration=90s || exit 1
API_HOSTPORT=172.29.137.1:6443
PKI=$CL_DIR/server/pki
NODE_PKI=$CL_DIR/nodes/node-1/pki
serial() { openssl x509 -noout -serial -in "$1" 2>/dev/null | cut -d= -f2; }
not_after() { date -d "$(openssl x509 -noout -enddate -in "$1" | cut -d= -f2)" +%s; }
server_pid() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["serverPid"])' "$CL_DIR/cluster.json"
}
# The serial of the certificate a new TLS connection to the API server sees.
served_serial() {
  openssl s_client -connect "$API_HOSTPORT" -CAfile "$PKI/ca.crt" </dev/null 2>/dev/null |
    openssl x509 -noout -serial | cut -d= -f2
}

step "node certificates: short-lived, from the cluster CA"
# The serving certificate is asked for once the Node object has its addresses.
wait_for 60 test -s "$NODE_PKI/kubelet-serving.crt"
lifetime=$(( $(not_after "$NODE_PKI/kubelet-client.crt") - $(date +%s) ))
((lifetime <= 75)) || fail "node certificates live ${lifetime}s more, expected at most 75"
expect_contains "$(openssl verify -CAfile "$PKI/ca.crt" "$NODE_PKI/kubelet-client.crt")" "OK" \
  "client certificate of the cluster CA"

step "a pod, a watch and an exec stream"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: echo}
spec:
  containers:
  - name: echo
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "echo started; exec sleep 3600"]
YAML
wait_for 90 bash -c "kubectl get pod echo | grep -q Running"
kubectl get pods -w >"$E2E_DIR/watch.out" 2>&1 &
WATCH_PID=$!; E2E_PIDS+=($WATCH_PID)
mkfifo "$E2E_DIR/exec.in"
kubectl exec -i echo -- sh -c 'while read l; do echo "got $l"; done' \
  <"$E2E_DIR/exec.in" >"$E2E_DIR/exec.out" 2>&1 &
EXEC_PID=$!; E2E_PIDS+=($EXEC_PID)
exec 7>"$E2E_DIR/exec.in"   # keeps the stream's stdin open
echo before >&7
wait_for 20 grep -q "got before" "$E2E_DIR/exec.out" || cat "$E2E_DIR/exec.out"
wait_for 20 grep -q "^echo" "$E2E_DIR/watch.out"
# The certificates in use now: the next rotation replaces them under the open streams.
CLIENT1=$(serial "$NODE_PKI/kubelet-client.crt")
SERVING1=$(serial "$NODE_PKI/kubelet-serving.crt")
[[ -n "$CLIENT1" && -n "$SERVING1" ]] || fail "node certificates missing"
c=$(not_after "$NODE_PKI/kubelet-client.crt"); s=$(not_after "$NODE_PKI/kubelet-serving.crt")
EXPIRY1=$((c > s ? c : s))

step "the agent rotates both certificates while running"
wait_for 90 bash -c "[[ \$(openssl x509 -noout -serial -in $NODE_PKI/kubelet-client.crt | cut -d= -f2) != $CLIENT1 ]]"
wait_for 90 bash -c "[[ \$(openssl x509 -noout -serial -in $NODE_PKI/kubelet-serving.crt | cut -d= -f2) != $SERVING1 ]]"
grep -h "certificate rotation:.*rotated" "$CL_DIR"/logs/*node-1*.log 2>/dev/null | head -2
expect_contains "$(openssl verify -CAfile "$PKI/ca.crt" "$NODE_PKI/kubelet-serving.crt")" "OK" \
  "new serving certificate of the cluster CA"

step "past the original certificates' expiry: the node is Ready and renews its Lease"
wait_for 90 bash -c "(( \$(date +%s) > $EXPIRY1 + 2 ))"
wait_for 30 bash -c "[[ \$(date -d \$(kubectl -n kube-node-lease get lease node-1 -o jsonpath='{.spec.renewTime}') +%s) -gt $EXPIRY1 ]]"
expect_eq "$(kubectl get node node-1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" \
  "True" "node Ready"

step "the watch and the exec stream opened before the rotation still work"
echo after >&7
wait_for 20 grep -q "got after" "$E2E_DIR/exec.out" || { fail "exec stream"; cat "$E2E_DIR/exec.out"; }
kill -0 $EXEC_PID 2>/dev/null || fail "kubectl exec ended"
kubectl label pod echo rotated=yes >/dev/null
wait_for 20 bash -c "(( \$(grep -c '^echo' $E2E_DIR/watch.out) >= 2 ))" || cat "$E2E_DIR/watch.out"
kill -0 $WATCH_PID 2>/dev/null || fail "kubectl get pods -w ended"

step "new logs and exec reach the agent's new serving certificate"
expect_contains "$(kubectl logs echo)" "started" "kubectl logs"
expect_contains "$(kubectl exec echo -- echo fresh)" "fresh" "kubectl exec"

step "metrics: the time left on each certificate"
NODE_IP=$(kubectl get node node-1 -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
agent_metrics=$(curl -s --cacert "$PKI/ca.crt" --cert "$PKI/apiserver-kubelet-client.crt" \
  --key "$PKI/apiserver-kubelet-client.key" "https://$NODE_IP:10250/metrics")
expect_contains "$agent_metrics" "kubelet_certificate_manager_client_ttl_seconds" "agent client TTL"
expect_contains "$agent_metrics" "kubelet_certificate_manager_server_ttl_seconds" "agent serving TTL"
expect_contains "$(kubectl get --raw /metrics)" "apiserver_serving_certificate_ttl_seconds" \
  "server TTL"

step "the API server's serving certificate: SIGHUP re-issues it, no restart"
PID1=$(server_pid)
kill -0 "$PID1" || fail "server process"
wait_for 20 bash -c "[[ -n \$(openssl s_client -connect $API_HOSTPORT </dev/null 2>/dev/null | openssl x509 -noout -serial) ]]"
A1=$(serial "$PKI/apiserver.crt")
kill -HUP "$PID1"
wait_for 20 bash -c "[[ \$(openssl x509 -noout -serial -in $PKI/apiserver.crt | cut -d= -f2) != $A1 ]]"
A2=$(serial "$PKI/apiserver.crt")
wait_for 20 bash -c "[[ \$(openssl s_client -connect $API_HOSTPORT </dev/null 2>/dev/null | openssl x509 -noout -serial | cut -d= -f2) != $A1 ]]"
NEW=$(served_serial)
[[ "$NEW" != "$A1" ]] || fail "a new connection still sees serial $A1"
expect_contains "$(openssl s_client -connect "$API_HOSTPORT" -CAfile "$PKI/ca.crt" </dev/null 2>&1)" \
  "Verify return code: 0" "the re-issued certificate verifies against the cluster CA"
expect_eq "$(server_pid)" "$PID1" "same server process"
kill -0 "$PID1" || fail "server still running"
expect_contains "$(kubectl get node node-1)" "Ready" "kubectl over the new certificate"
kubectl label pod echo rotated=twice --overwrite >/dev/null
wait_for 20 bash -c "(( \$(grep -c '^echo' $E2E_DIR/watch.out) >= 3 ))" || cat "$E2E_DIR/watch.out"
echo last >&7
wait_for 20 grep -q "got last" "$E2E_DIR/exec.out" || fail "exec stream after the server's rotation"
echo "rotated: node client $CLIENT1 -> $(serial "$NODE_PKI/kubelet-client.crt"), serving $SERVING1 -> $(serial "$NODE_PKI/kubelet-serving.crt"), API server $A1 -> $A2 (served $NEW)"
exec 7>&-
finish
