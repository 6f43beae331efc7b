#!/usr/bin/env bash
# Overload protection, as a user sees it: a server started with small in-flight limits answers
# one user's flood of LISTs (~400 KiB of ConfigMaps each, from a client that ignores
# Retry-After) with 429 TooManyRequests and Retry-After: 1, while the controllers (a ReplicaSet
# scaling up) and another user's kubectl keep being served. Prints the figures: requests/s
# served and 429s/s during the flood, and the ReplicaSet's time to scale up with and without it.
# Bounded: the flood lasts while the checks run (at most 30 s), over 48 connections.
# INFLIGHT_ARGS="--max-requests-inflight 0 --max-mutating-requests-inflight 0" runs the same flood
# without limits, for comparison (the 429 checks then fail).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
# Read-only: 3 seats for users, 3 more reserved for the control plane; mutating: 2 and 2.
SERVER_ARGS=${INFLIGHT_ARGS:-"--max-requests-inflight 6 --max-mutating-requests-inflight 4"} \
  start_server sqlite

REPLICAS=${REPLICAS:-30}
FLOOD_CONNECTIONS=${FLOOD_CONNECTIONS:-48}
# What the flooder lists: 100 ConfigMaps of 4 KiB, a LIST of ~400 KiB (an expensive read, as a
# careless dashboard or script makes).
FLOOD_OBJECTS=${FLOOD_OBJECTS:-100}

step "two users: flooder and viewer (service accounts that may read)"
for sa in flooder viewer; do
  kubectl create serviceaccount "$sa" >/dev/null
  kubectl create clusterrolebinding "$sa-view" --clusterrole=view \
    --serviceaccount="default:$sa" >/dev/null
done
FLOODER_TOKEN=$(kubectl create token flooder)
VIEWER_TOKEN=$(kubectl create token viewer)
# As the viewer alone: kubectl would also send the admin's client certificate of KUBECONFIG.
as_viewer() {
  KUBECONFIG=/dev/null kubectl --server "$SERVER_URL" --certificate-authority "$SERVER_PKI/ca.crt" \
    --token "$VIEWER_TOKEN" "$@"
}
wait_for 10 as_viewer get pods
python3 - "$FLOOD_OBJECTS" >"$E2E_DIR/bulk.json" <<'PY'
import json, sys
items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"bulk-{i}"},
          "data": {"blob": "x" * 4096}} for i in range(int(sys.argv[1]))]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
kubectl create --validate=false -f "$E2E_DIR/bulk.json" >/dev/null

kubectl apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
EOF

# scale_up_seconds: scales web from 0 to REPLICAS and prints how long until status.replicas
# says so (the ReplicaSet controller created them all), at most 60 s.
scale_up_seconds() {
  kubectl scale rs web --replicas=0 >/dev/null
  wait_for 60 bash -c '[[ "$(kubectl get rs web -o jsonpath="{.status.replicas}")" == 0 ]]'
  local start end
  start=$(date +%s.%N)
  kubectl scale rs web --replicas="$REPLICAS" >/dev/null
  for _ in $(seq 1 600); do
    [[ "$(kubectl get rs web -o jsonpath='{.status.replicas}')" == "$REPLICAS" ]] && break
    sleep 0.1
  done
  end=$(date +%s.%N)
  [[ "$(kubectl get rs web -o jsonpath='{.status.replicas}')" == "$REPLICAS" ]] ||
    fail "the ReplicaSet did not reach $REPLICAS replicas"
  python3 -c "print(f'{$end - $start:.2f}')"
}

step "baseline: the ReplicaSet scales 0 -> $REPLICAS without a flood"
baseline=$(scale_up_seconds)
echo "scale-up without flood: ${baseline}s"
kubectl scale rs web --replicas=0 >/dev/null
wait_for 60 bash -c '[[ "$(kubectl get rs web -o jsonpath="{.status.replicas}")" == 0 ]]'

step "flood: $FLOOD_CONNECTIONS connections of the flooder LIST configmaps until told to stop"
# A misbehaving client: keep-alive connections that send the next LIST as soon as an answer
# (200 or 429) arrives, never waiting for Retry-After.
python3 - "$SERVER_URL" "$SERVER_PKI/ca.crt" "$FLOODER_TOKEN" "$E2E_DIR/flood.stop" \
  "$FLOOD_CONNECTIONS" >"$E2E_DIR/flood.out" 2>&1 <<'PY' &
import http.client, json, os, ssl, sys, threading, time
url, ca, token, stop, conns = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
host, port = url.split("://")[1].split(":")
ctx = ssl.create_default_context(cafile=ca)
counts, retry_after, bodies = {}, set(), []
lock = threading.Lock()
deadline = time.time() + 30
def flood():
    c = None
    while time.time() < deadline and not os.path.exists(stop):
        try:
            if c is None:
                c = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=30)
            c.request("GET", "/api/v1/namespaces/default/configmaps",
                      headers={"Authorization": "Bearer " + token})
            r = c.getresponse()
            body = r.read()
            with lock:
                counts[r.status] = counts.get(r.status, 0) + 1
                if r.status == 429:
                    retry_after.add(r.getheader("Retry-After"))
                    if not bodies:
                        bodies.append(json.loads(body))
            if r.getheader("Connection", "").lower() == "close":
                c.close(); c = None
        except Exception as e:
            with lock:
                counts["error"] = counts.get("error", 0) + 1
            c = None
threads = [threading.Thread(target=flood) for _ in range(conns)]
start = time.time()
for t in threads: t.start()
for t in threads: t.join()
took = time.time() - start
print(json.dumps({"seconds": round(took, 2), "counts": {str(k): v for k, v in counts.items()},
                  "retryAfter": sorted(x for x in retry_after if x),
                  "body": bodies[0] if bodies else None}))
PY
flood_pid=$!
E2E_PIDS+=("$flood_pid")
sleep 1  # let the flood fill the flooder's seats and queue

step "during the flood: the ReplicaSet still scales up, the viewer's kubectl get still works"
flooded=$(scale_up_seconds)
echo "scale-up during flood: ${flooded}s"
viewer_ok=0
viewer_start=$(date +%s.%N)
for _ in $(seq 1 5); do
  if as_viewer get pods -o name -v=6 >/dev/null 2>>"$E2E_DIR/viewer.log"; then
    viewer_ok=$((viewer_ok + 1))
  fi
done
viewer_end=$(date +%s.%N)
expect_eq "$viewer_ok" 5 "the viewer's kubectl get pods during the flood"
# kubectl -v=6 logs each response: the viewer's requests got seats, not 429s to retry.
viewer_requests=$(grep -c ' in [0-9]* milliseconds' "$E2E_DIR/viewer.log" || true)
viewer_429=$(grep -c ' 429 Too Many Requests' "$E2E_DIR/viewer.log" || true)
expect_eq "$viewer_429" 0 "429s answered to the viewer"
viewer_ms=$(grep -o ' in [0-9]* milliseconds' "$E2E_DIR/viewer.log" | grep -o '[0-9]*' |
  paste -sd, -)
flood_running=no
kill -0 "$flood_pid" 2>/dev/null && flood_running=yes
expect_eq "$flood_running" yes "the flood still ran while the viewer and the controllers worked"
touch "$E2E_DIR/flood.stop"
wait "$flood_pid" || true
cat "$E2E_DIR/flood.out"
result=$(tail -n 1 "$E2E_DIR/flood.out")
count() {
  python3 -c 'import json,sys; print(json.loads(sys.argv[1])["counts"].get(sys.argv[2], 0))' "$@"
}
served=$(count "$result" 200)
rejected=$(count "$result" 429)
secs=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["seconds"])' "$result")
((rejected > 0)) || fail "the flooder got no 429"
((served > 0)) || fail "the flooder got nothing served (it should get its fair share)"
expect_contains "$result" '"retryAfter": ["1"]' "Retry-After: 1 on the 429s"
expect_contains "$result" '"reason": "TooManyRequests"' "a TooManyRequests Status"
expect_contains "$result" '"retryAfterSeconds": 1' "details.retryAfterSeconds"
expect_contains "$result" '"message": "Too many requests, please try again later."' "kube's message"

python3 - "$served" "$rejected" "$secs" "$baseline" "$flooded" "$viewer_start" "$viewer_end" \
  "$REPLICAS" "$viewer_requests" "$viewer_ms" "$viewer_429" <<'PY'
import sys
served, rejected, secs, base, flooded, v0, v1, replicas, vreq = map(float, sys.argv[1:10])
print(f"FIGURES flood: {served / secs:.0f} requests/s served, {rejected / secs:.0f} 429s/s "
      f"({rejected / (served + rejected):.0%} rejected) over {secs:.1f}s; ReplicaSet "
      f"0->{replicas:.0f} scale-up {base:.2f}s without flood, {flooded:.2f}s during it; "
      f"the viewer's 5 kubectl gets took {v1 - v0:.2f}s ({vreq:.0f} requests answered in "
      f"{sys.argv[10]} ms, {sys.argv[11]} of them 429)")
PY

step "metrics: the flooder's rejections, none for the control plane"
metrics=$(kubectl get --raw /metrics)
rejections='apiserver_flowcontrol_rejected_requests_total{flow_schema="service-accounts",'
rejections+='priority_level="workload",reason="queue-full"}'
expect_contains "$metrics" "$rejections" \
  "rejections of the flooder's flow"
expect_contains "$metrics" 'apiserver_dropped_requests_total{request_kind="readOnly"}' \
  "kube-apiserver's dropped requests counter"
expect_not_contains "$metrics" 'rejected_requests_total{flow_schema="kube-controller-manager"' \
  "no rejection of the controllers"
expect_contains "$metrics" 'code="429"' "429s in apiserver_request_total"
# The in-process controllers' and scheduler's own client never got a 429 to wait out.
expect_not_contains "$metrics" 'rest_client_requests_total{code="429"' "429s to the controllers"

finish
