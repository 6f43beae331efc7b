#!/usr/bin/env bash
# /metrics and health endpoints of each control-plane process, read the way a user reads them:
# `kubectl get --raw /metrics` on the API server (RBAC: a user without a grant of the
# non-resource URL is refused), and the standalone scheduler and controller manager on their
# --metrics-bind-address. (The agent's /metrics through nodes/{name}/proxy is in cluster_test.sh.)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
start_server sqlite

step "API server: /metrics for callers RBAC allows"
out=$(kubectl get --raw /metrics)
expect_contains "$out" "# TYPE apiserver_request_total counter" "apiserver_request_total"
expect_contains "$out" "apiserver_request_duration_seconds_bucket" "request histogram"
expect_contains "$out" "process_resident_memory_bytes" "process metrics"
out=$(kubectl get --raw /readyz); expect_eq "$out" "ok" "readyz"
kubectl create serviceaccount viewer >/dev/null
viewer=$(kubectl create token viewer)
# As the service account alone (kubectl would also send the admin's client certificate).
as_viewer() { curl -s --cacert "$SERVER_PKI/ca.crt" -H "Authorization: Bearer $viewer" "$SERVER_URL$1"; }
out=$(as_viewer /metrics)
expect_contains "$out" '"reason":"Forbidden"' "no grant, no metrics"
expect_contains "$out" 'cannot get path \"/metrics\"' "Kubernetes' wording"
kubectl create clusterrolebinding viewer-metrics --clusterrole=system:monitoring \
  --serviceaccount=default:viewer >/dev/null
# The authorizer sees the new binding through its watch, moments later.
for _ in $(seq 1 50); do
  out=$(as_viewer /metrics)
  [[ "$out" == *apiserver_request_total* ]] && break
  sleep 0.2
done
expect_contains "$out" "apiserver_request_total" "system:monitoring may read /metrics"

step "standalone scheduler and controller manager serve /metrics and /healthz"
SCHED_PORT=$(free_port); CM_PORT=$(free_port)
"$MINIK8S_BIN" scheduler --kubeconfig "$KUBECONFIG" --metrics-bind-address "127.0.0.1:$SCHED_PORT" \
  --leader-elect=false >"$E2E_DIR/scheduler.log" 2>&1 &
E2E_PIDS+=($!)
"$MINIK8S_BIN" controller-manager --kubeconfig "$KUBECONFIG" --controllers='*,-garbagecollector' \
  --metrics-bind-address "127.0.0.1:$CM_PORT" --leader-elect=false >"$E2E_DIR/cm.log" 2>&1 &
E2E_PIDS+=($!)
wait_for 20 curl -sf "http://127.0.0.1:$SCHED_PORT/healthz"
wait_for 20 curl -sf "http://127.0.0.1:$CM_PORT/healthz"
out=$(curl -s "http://127.0.0.1:$SCHED_PORT/metrics")
expect_contains "$out" "scheduler_pending_pods" "scheduler metrics"
wait_for 20 grep -q "running against" "$E2E_DIR/cm.log"
out=$(curl -s "http://127.0.0.1:$CM_PORT/metrics")
expect_contains "$out" 'workqueue_adds_total{name="replicaset"}' "controller work queue metrics"
expect_not_contains "$out" 'name="garbage-collector"' "--controllers left the garbage collector out"
out=$(cat "$E2E_DIR/cm.log")
expect_not_contains "$out" "garbagecollector" "not started"

finish
