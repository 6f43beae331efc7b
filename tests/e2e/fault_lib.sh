# Helpers of the fault-injection scenarios (tests/e2e/fault_*_test.sh), sourced after lib.sh and
# start_cluster: a web Deployment behind a ClusterIP Service, a prober that asks the Service
# every 100 ms from a node's network namespace and writes one line per attempt, and its report.

# web_app NAME REPLICAS: Deployment NAME (busybox httpd answering its pod name on 8080) and
# Service NAME (port 80); waits until REPLICAS endpoints are ready. Sets WEB_CIP.
web_app() {
  local name=$1 replicas=$2
  kubectl apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $name}
spec:
  replicas: $replicas
  selector: {matchLabels: {app: $name}}
  template:
    metadata: {labels: {app: $name}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: minik8s/busybox:1.35
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: $name}
spec:
  selector: {app: $name}
  ports: [{port: 80, targetPort: 8080}]
YAML
  wait_for 120 bash -c "[[ \$(kubectl get endpoints $name -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == $replicas ]]" ||
    { kubectl get pods -o wide; return 1; }
  WEB_CIP=$(kubectl get service "$name" -o jsonpath='{.spec.clusterIP}')
}

# start_prober NODE URL [LOG]: probes URL every 100 ms (1 s timeout, a new connection each time)
# from NODE's network namespace into LOG, by default $E2E_DIR/probe.log ("<unix time> ok <answer>"
# or "... fail <why>"). Sets PROBE_LOG and PROBER_PID (of the latest prober).
start_prober() {
  cat >"$E2E_DIR/prober.py" <<'PY'
import sys, time, urllib.request
url, out = sys.argv[1], sys.argv[2]
with open(out, "a", buffering=1) as f:
    while True:
        t = time.time()
        try:
            body = urllib.request.urlopen(url, timeout=1).read().decode().strip()
            f.write(f"{t:.3f} ok {body}\n")
        except Exception as e:  # "URLError:timed_out", "URLError:[Errno_111]_Connection_refused"
            why = str(getattr(e, "reason", e)).replace(" ", "_")
            f.write(f"{t:.3f} fail {type(e).__name__}:{why}\n")
        time.sleep(max(0.0, 0.1 - (time.time() - t)))
PY
  PROBE_LOG=${3:-$E2E_DIR/probe.log}
  : >"$PROBE_LOG"
  nsenter --net="/var/run/netns/$(node_ns "$1")" /usr/bin/python3 "$E2E_DIR/prober.py" "$2" "$PROBE_LOG" &
  PROBER_PID=$!
  E2E_PIDS+=("$PROBER_PID")
  wait_for 10 grep -q ' ok ' "$PROBE_LOG" || fail "the prober never got an answer from $2"
}

# probe_mark: the number of probe lines so far (report only what follows with probe_report FROM).
probe_mark() { wc -l <"$PROBE_LOG"; }

# probe_report LABEL [FROM_LINE]: prints attempts, failures and downtime (the sum of the windows
# from a first failed attempt to the next good one) of the probes after FROM_LINE; sets
# PROBE_FAILED and PROBE_DOWNTIME.
probe_report() {
  local label=$1 from=${2:-0} summary
  summary=$(tail -n +"$((from + 1))" "$PROBE_LOG" | awk '
    { n++; if ($2 == "ok") { if (down != "") { total += $1 - down; down = "" } }
      else { failed++; if (down == "") down = $1 } last = $1 }
    END { if (down != "") total += last - down + 0.1; printf "%d %d %.1f\n", n, failed, total }')
  read -r n PROBE_FAILED PROBE_DOWNTIME <<<"$summary"
  echo "PROBES [$label]: $n attempts, $PROBE_FAILED failed, downtime ${PROBE_DOWNTIME} s"
  # Which pods answered, and the first failures with the answers around them: what a failure
  # left behind to explain it.
  tail -n +"$((from + 1))" "$PROBE_LOG" | awk '$2 == "ok" { n[$3]++ } END { for (h in n) printf "  answered by %s: %d\n", h, n[h] }'
  if ((PROBE_FAILED > 0)); then
    tail -n +"$((from + 1))" "$PROBE_LOG" | grep -n -B2 -A1 ' fail ' | head -n 20 | sed 's/^/  /'
  fi
}

stop_prober() { stop_children "$PROBER_PID"; wait "$PROBER_PID" 2>/dev/null || true; }

# cluster_state KEY: a value of $CL_DIR/cluster.json (jq syntax, e.g. .serverPid).
cluster_state() { jq -r "$1" "$CL_DIR/cluster.json"; }
agent_pid() { cluster_state ".nodes[] | select(.name == \"$1\") | .pid"; }
containerd_pid() { cat "$CL_DIR/nodes/$1/containerd/containerd.pid"; }

# pod_containers SELECTOR: "pod node containerID restartCount" per pod, sorted.
pod_containers() {
  kubectl get pods -l "$1" -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}{"\n"}{end}' | sort
}

# elapsed SINCE: seconds (one decimal) since SINCE (a `date +%s.%N` value).
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# start_cluster with an EXIT trap that keeps the script's exit status: lib.sh's trap runs
# cluster_down_quiet before cleanup, whose `$?` is then cluster_down_quiet's (0), not ours.
start_fault_cluster() {
  local rc=0
  start_cluster "$@" || rc=1
  trap 'fault_rc=$?; cluster_down_quiet; (exit $fault_rc); cleanup' EXIT
  return $rc
}
