#!/usr/bin/env bash
# Chaos soak (tests/soak/README.md): a steady workload on a `minik8s cluster up` cluster while a
# seeded random driver injects one fault at a time, then the invariants and a report.
#
#   soak.sh [--duration S | --rounds N] [--seed N] [--mode ha|single] [--nodes N] [--servers N]
#           [--name NAME] [--subnet A.B.C] [--bound S]
#
# Workload: Deployment web (3 replicas) and Deployment churn (scaled between 1 and 4 and rolled
# out now and then), each behind a Service probed every 100 ms from node-1; three clients
# incrementing ConfigMap counter by compare-and-swap; a monitor sampling ReplicaSets and pods.
# Faults, in rounds of every type in a seeded random order, each repaired before the next:
# api-server (SIGKILL one server; with --mode ha one of --servers), api-all (every server at
# once, ha only), etcd (SIGKILL one of 3 members, ha only), agent (SIGKILL a node's agent),
# containerd (SIGKILL a node's containerd; its agent restarts it), partition (a node's underlay
# link down for a while). What `cluster up` restarts (a server, an etcd member, an agent) is
# restarted by it after a random hold, as a supervisor would.
# Invariants: the counter's history (no acknowledged write lost), no ReplicaSet above replicas +
# surge, every Service answers again within --bound s after each repair, the cluster is healthy
# again within 180 s after each fault, and no leaked process, mount, sandbox, cgroup, iptables
# rule or namespace, on the nodes before `cluster down` and on the host after it.
# Logs and the report (report.txt, report.json) stay in /tmp/minik8s-soak-NAME.
source "$(dirname "$0")/../e2e/lib.sh"
source "$(dirname "$0")/../e2e/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
SOAK_SRC=$(cd "$(dirname "$0")" && pwd)
TOOL=(/usr/bin/python3 "$SOAK_SRC/soak_tool.py")

DURATION=120 ROUNDS=0 SEED=$(( $(date +%s%N) % 1000000 )) MODE=ha NODES=3 SERVERS=2
NAME=soak SUBNET=172.29.139 BOUND=45 HEALTHY_BOUND=180
while (($#)); do
  case $1 in
    --duration) DURATION=$2 ;; --rounds) ROUNDS=$2 ;; --seed) SEED=$2 ;; --mode) MODE=$2 ;; --nodes) NODES=$2 ;;
    --servers) SERVERS=$2 ;; --name) NAME=$2 ;; --subnet) SUBNET=$2 ;; --bound) BOUND=$2 ;;
    *) echo "usage: $0 [--duration S | --rounds N] [--seed N] [--mode ha|single] [--nodes N] [--servers N] [--name NAME] [--subnet A.B.C] [--bound S]"; exit 2 ;;
  esac
  shift 2
done
[[ $MODE == ha || $MODE == single ]] || { echo "--mode ha or single"; exit 2; }
((NODES >= 2)) || { echo "--nodes 2 at least (node-1 probes, another is partitioned)"; exit 2; }
RANDOM=$SEED
# time_left: --duration s of faults not over yet (always with --rounds N: whole rounds).
time_left() { ((ROUNDS > 0 || SECONDS - t_faults < DURATION)); }
((ROUNDS > 0)) && what="$ROUNDS round(s) of faults" || what="${DURATION} s of faults"
echo "soak: seed $SEED (replay with --seed $SEED), mode $MODE, $NODES nodes, $what"

# Our own leftovers of a crashed earlier run (clients, probers), then the directory.
SOAK_DIR=/tmp/minik8s-soak-$NAME
for pid in $(pgrep -f "$SOAK_DIR/" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
rm -rf "$SOAK_DIR"; mkdir -p "$SOAK_DIR"
# A Ctrl-C or TERM goes through the EXIT trap (cluster down, our processes stopped).
trap 'exit 130' INT TERM
cp "$SOAK_SRC/soak_tool.py" "$SOAK_DIR/"  # our processes then mention SOAK_DIR
TOOL=(/usr/bin/python3 "$SOAK_DIR/soak_tool.py")
VIOLATIONS=()
violation() { echo "VIOLATION: $*" | tee -a "$SOAK_DIR/violations.log" >&2; VIOLATIONS+=("$*"); }
now() { date +%s.%N | cut -c1-14; }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

# ---- cluster and workload ----------------------------------------------------------------------
flags=(--server-arg=--node-monitor-grace-period=15s --server-arg=--pod-eviction-timeout=5s)
[[ $MODE == ha ]] && flags+=(--ha --servers "$SERVERS")
step "cluster up ($MODE, $NODES nodes)"
start_fault_cluster "$NAME" "$SUBNET" "$NODES" "${flags[@]}" || exit 1
t_up=$SECONDS

# deploy NAME REPLICAS: busybox httpd answering its pod name; on SIGTERM it keeps serving 2 s
# (the Service stops sending to it meanwhile), as a graceful server does.
deploy() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: web
        image: minik8s/busybox:1.35
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "mkdir -p /www && hostname > /www/index.html && httpd -f -p 8080 -h /www & pid=\$!; trap 'sleep 2; kill \$pid' TERM; wait \$pid; wait \$pid"]
        readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: $1}
spec:
  selector: {app: $1}
  ports: [{port: 80, targetPort: 8080}]
YAML
}
endpoint_count() { kubectl get endpoints "$1" -o jsonpath='{.subsets[*].addresses[*].ip}' 2>/dev/null | wc -w; }
WEB_REPLICAS=3
deploy web $WEB_REPLICAS
deploy churn 2
wait_for 120 bash -c "[[ \$(kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == $WEB_REPLICAS && \$(kubectl get endpoints churn -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 2 ]]" ||
  { kubectl get pods -o wide; exit 1; }
kubectl get pods -o wide
start_prober node-1 "http://$(kubectl get service web -o jsonpath='{.spec.clusterIP}')/" "$SOAK_DIR/probe-web.log"
start_prober node-1 "http://$(kubectl get service churn -o jsonpath='{.spec.clusterIP}')/" "$SOAK_DIR/probe-churn.log"
cp "$E2E_DIR/prober.py" "$SOAK_DIR/"

kubectl create configmap counter --from-literal=value=0 >/dev/null || exit 1
CLIENTS=()
for c in c1 c2 c3; do
  "${TOOL[@]}" counter "$KUBECONFIG" default "$c" "$SOAK_DIR/counter-$c.log" &
  CLIENTS+=($!); E2E_PIDS+=($!)
done
"${TOOL[@]}" monitor "$KUBECONFIG" default "$SOAK_DIR/monitor.log" &
MONITOR_PID=$!; E2E_PIDS+=($!)

# The workload driver: every 4-8 s churn is scaled to 1-4 replicas, one time in four rolled out.
# Its own random sequence from the seed; kubectl errors (a control plane down) are logged.
workload() {
  RANDOM=$((SEED + 1))
  local n=0
  while :; do
    sleep $((4 + RANDOM % 5))
    n=$((n + 1))
    if ((RANDOM % 4 == 0)); then
      out=$(kubectl patch deployment churn --request-timeout=10s -p \
        "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"soak/rollout\":\"$n\"}}}}}" 2>&1)
      echo "$(now) rollout $n $? ${out//$'\n'/ }"
    else
      r=$((1 + RANDOM % 4))
      out=$(kubectl scale deployment churn --replicas=$r --request-timeout=10s 2>&1)
      echo "$(now) scale $r $? ${out//$'\n'/ }"
    fi
  done
}
workload >"$SOAK_DIR/workload.log" 2>&1 &
WORKLOAD_PID=$!; E2E_PIDS+=($!)

# ---- faults ------------------------------------------------------------------------------------
# pick LO HI: PICK = a random integer in [LO, HI] (no subshell: the seeded sequence goes on).
pick() { PICK=$(($1 + RANDOM % ($2 - $1 + 1))); }
up() { cluster_cmd up >>"$SOAK_DIR/up.log" 2>&1; }
server_pids() {
  if [[ $MODE == ha ]]; then cluster_state '.servers[]'; else cluster_state .serverPid; fi
}

# Every fault sets TARGET, kills or cuts, holds, repairs; T_START/T_END bracket it.
fault_api_server() {
  local pids=($(server_pids))
  pick 0 $((${#pids[@]} - 1)); TARGET=server-$PICK
  T_START=$(now); kill -9 "${pids[$PICK]}"
  pick 3 10; sleep "$PICK"; up; T_END=$(now)
}
fault_api_all() {
  TARGET=all-servers
  T_START=$(now); for p in $(server_pids); do kill -9 "$p"; done
  pick 3 8; sleep "$PICK"; up; T_END=$(now)
}
fault_etcd() {
  pick 0 2; TARGET=etcd-m$PICK
  T_START=$(now); kill -9 "$(cluster_state ".etcd[$PICK]")"
  pick 3 10; sleep "$PICK"; up; T_END=$(now)
}
fault_agent() {
  pick 1 "$NODES"; TARGET=node-$PICK
  T_START=$(now); kill -9 "$(agent_pid "$TARGET")"
  pick 3 12; sleep "$PICK"; up; T_END=$(now)
}
fault_containerd() {
  local n old
  pick 1 "$NODES"; n=node-$PICK; TARGET=$n
  old=$(containerd_pid "$n")
  T_START=$(now); kill -9 "$old"
  # The agent restarts it; the fault ends when the new one runs.
  local end=$((SECONDS + 60))
  until p=$(containerd_pid "$n" 2>/dev/null) && [[ $p != "$old" ]] && kill -0 "$p" 2>/dev/null; do
    ((SECONDS < end)) || { violation "containerd of $n not restarted by its agent within 60 s"; break; }
    sleep 0.2
  done
  T_END=$(now)
}
fault_partition() {
  pick 2 "$NODES"; TARGET=node-$PICK  # node-1 runs the probers
  PARTITIONED=$(node_ns "$TARGET")
  T_START=$(now); ip link set "$PARTITIONED" down
  # Shorter than the node grace period (15 s) or long enough for its pods to be evicted.
  pick 5 30; sleep "$PICK"; ip link set "$PARTITIONED" up; PARTITIONED=""; T_END=$(now)
}

# healthy: every component running, every node Ready, web and churn at their replicas and
# ready, both probers answering in their last 10 attempts.
healthy() {
  cluster_cmd status >/dev/null 2>&1 || return 1
  local nodes
  nodes=$(kubectl get nodes --no-headers --request-timeout=5s 2>/dev/null) || return 1
  [[ $(grep -cw Ready <<<"$nodes") == "$NODES" ]] || return 1
  [[ $(endpoint_count web) == "$WEB_REPLICAS" ]] || return 1
  local want have
  read -r want have < <(kubectl get deployment churn --request-timeout=5s \
    -o jsonpath='{.spec.replicas} {.status.readyReplicas}' 2>/dev/null)
  [[ -n $want && $want == "$have" ]] || return 1
  for f in "$SOAK_DIR"/probe-*.log; do
    [[ $(tail -n 10 "$f" | grep -c ' ok ') == 10 ]] || return 1
  done
}
wait_healthy() {  # wait_healthy SECONDS: the seconds it took, or fails
  local t0=$SECONDS
  until healthy; do
    ((SECONDS - t0 < $1)) || return 1
    sleep 0.5
  done
  echo $((SECONDS - t0))
}

# web_pods: "pod node containerID restartCount" of the web pods not being deleted (a pod evicted
# by the previous fault may still be terminating when the next one starts).
web_pods() {
  kubectl get pods -l app=web -o json |
    jq -r '.items[] | select(.metadata.deletionTimestamp == null) | "\(.metadata.name) \(.spec.nodeName) \(.status.containerStatuses[0].containerID) \(.status.containerStatuses[0].restartCount)"' | sort
}
# disturbed BEFORE AFTER (web_pods lines): REPLACED = pods of BEFORE gone in AFTER,
# RESTARTED = pods of both whose container changed or restarted.
disturbed() {
  REPLACED=$(join -v 1 <(sort <<<"$1") <(sort <<<"$2") | grep -c .)
  RESTARTED=$(join <(sort <<<"$1") <(sort <<<"$2") | awk '$3 != $6 || $4 != $7' | grep -c .)
}

source "$SOAK_SRC/leaks.sh"
TYPES=(api-server agent containerd partition)
[[ $MODE == ha ]] && TYPES+=(api-all etcd)
: >"$SOAK_DIR/faults.log"
step "$what (types: ${TYPES[*]})"
wait_healthy 120 >/dev/null || { violation "not healthy before the first fault"; }
t_faults=$SECONDS
round=0
while time_left && ((ROUNDS == 0 || round < ROUNDS)); do
  order=("${TYPES[@]}")
  for ((i = ${#order[@]} - 1; i > 0; i--)); do  # Fisher-Yates with the seeded RANDOM
    j=$((RANDOM % (i + 1))); tmp=${order[i]}; order[i]=${order[j]}; order[j]=$tmp
  done
  round=$((round + 1))
  for type in "${order[@]}"; do
    time_left || break
    before=$(web_pods)
    "fault_${type//-/_}"
    echo "$T_START $T_END $type $TARGET" >>"$SOAK_DIR/faults.log"
    if took=$(wait_healthy "$HEALTHY_BOUND"); then
      disturbed "$before" "$(web_pods)"
      log "round $round: $type $TARGET: injected for $(awk -v a="$T_START" -v b="$T_END" 'BEGIN{printf "%.1f", b-a}') s, healthy ${took} s after the repair; web pods replaced $REPLACED, containers restarted $RESTARTED"
      echo "$type $TARGET $took $REPLACED $RESTARTED" >>"$SOAK_DIR/healthy.log"
      # Only a node that lost its agent or its network long enough may lose its pods; the
      # control plane, etcd and containerd come and go under running containers.
      if [[ $type != agent && $type != partition ]] && ((REPLACED + RESTARTED > 0)); then
        violation "pods: $type $TARGET replaced $REPLACED web pod(s) and restarted $RESTARTED container(s)"
      fi
      record_netns
    else
      violation "$type $TARGET: cluster not healthy ${HEALTHY_BOUND} s after the repair"
      echo "$type $TARGET timeout" >>"$SOAK_DIR/healthy.log"
      cluster_cmd status; kubectl get nodes,pods -o wide
      up
    fi
    pick 1 4; sleep "$PICK"
  done
done
fault_seconds=$((SECONDS - t_faults))

# ---- stop the workload, check ------------------------------------------------------------------
step "faults over: settle, stop the clients"
for p in $(our_children "$WORKLOAD_PID"); do kill "$p" 2>/dev/null; done; wait "$WORKLOAD_PID" 2>/dev/null
wait_healthy 120 >/dev/null || violation "not healthy after the last fault"
sleep 3
for p in $(our_children "${CLIENTS[@]}"); do kill -TERM "$p" 2>/dev/null; done
for p in "${CLIENTS[@]}"; do wait "$p" 2>/dev/null; done
for p in $(our_children "$MONITOR_PID"); do kill "$p" 2>/dev/null; done; wait "$MONITOR_PID" 2>/dev/null
for f in "$SOAK_DIR"/probe-*.log; do  # the probers: by the PIDs in E2E_PIDS (lib's cleanup)
  pid=$(pgrep -f "prober.py .* $f" | head -1); [[ -n $pid ]] && kill "$pid" 2>/dev/null
done

step "invariants"
counter=$("${TOOL[@]}" check-counter "$KUBECONFIG" default "$SOAK_DIR"/counter-*.log)
echo "$counter" >"$SOAK_DIR/counter.json"
while read -r v; do [[ -n $v ]] && violation "counter: $v"; done < <(jq -r '.violations[]' <<<"$counter")
surge=$("${TOOL[@]}" check-surge "$SOAK_DIR/monitor.log")
echo "$surge" >"$SOAK_DIR/surge.json"
while read -r v; do [[ -n $v ]] && violation "surge: $v"; done < <(jq -r '.violations[]' <<<"$surge")
for svc in web churn; do
  p=$("${TOOL[@]}" probes "$SOAK_DIR/probe-$svc.log" "$SOAK_DIR/faults.log" "$BOUND")
  echo "$p" >"$SOAK_DIR/probes-$svc.json"
  while read -r v; do [[ -n $v ]] && violation "service $svc: $v"; done < <(jq -r '.violations[]' <<<"$p")
done

node_leaks
# What to read after the run: the components' logs, the events, the last pods.
kubectl get events -A --sort-by=.lastTimestamp >"$SOAK_DIR/events.txt" 2>&1
kubectl get pods -A -o wide >"$SOAK_DIR/pods.txt" 2>&1
cp -r "$CL_DIR/logs" "$SOAK_DIR/cluster-logs" 2>/dev/null
cluster_cmd down --purge >"$SOAK_DIR/down.log" 2>&1 || violation "cluster down failed"
host_leaks

# ---- report ------------------------------------------------------------------------------------
"${TOOL[@]}" report "$SOAK_DIR" "seed $SEED, mode $MODE, $NODES nodes, $fault_seconds s of faults in $round round(s), service bound $BOUND s, healthy bound $HEALTHY_BOUND s" |
  tee "$SOAK_DIR/report.txt"
echo "soak took $SECONDS s (cluster up $t_up s, faults $fault_seconds s)"
if ((${#VIOLATIONS[@]} > 0)); then
  FAILURES=${#VIOLATIONS[@]}
  echo "soak: ${#VIOLATIONS[@]} invariant violation(s); replay with --seed $SEED; logs in $SOAK_DIR"
fi
finish
