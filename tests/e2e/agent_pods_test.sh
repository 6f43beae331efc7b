#!/usr/bin/env bash
# One node with real containers: a server (scheduler and controllers in it), the cluster registry
# with the local images, and `minik8s agent` with its own containerd. The user's session: a
# two-container pod talking over localhost with a shared emptyDir and env from the downward API,
# a crashing container restarted with back-off, an OOM kill, logs, exec, top, and an agent killed
# with SIGKILL and restarted without touching running containers.
source "$(dirname "$0")/lib.sh"
set +e  # count every failed check (fail) and go on; finish decides
[[ $(id -u) == 0 ]] || { echo "needs root (containerd)"; exit 1; }

AGENT_DIR="$E2E_DIR/agent"
REG_PORT=$(free_port); AGENT_PORT=$(free_port)
agent_cleanup() {
  # Pods first (the agent stops their containers), then the agent, its containerd, leftovers.
  if [[ -n "${AGENT_PID:-}" ]] && kill -0 "$AGENT_PID" 2>/dev/null; then
    kubectl delete pods --all --grace-period=1 --wait=true --timeout=30s >/dev/null 2>&1 || true
    stop_children "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true
  fi
  local cpid; cpid=$(cat "$AGENT_DIR/containerd/containerd.pid" 2>/dev/null || true)
  [[ -n "$cpid" ]] && kill "$cpid" 2>/dev/null && sleep 1 && kill -9 "$cpid" 2>/dev/null
  for p in $(pgrep -f "containerd-shim.*$AGENT_DIR" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  grep " $AGENT_DIR" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  [[ -n "${MADE_CNI0:-}" ]] && ip link del cni0 2>/dev/null || true
  host_cni_cleanup
  # The node's cgroup tree (rmdir removes only empty cgroups: nothing that still runs).
  find /sys/fs/cgroup/*/minik8s/node-1 -depth -type d -exec rmdir {} + 2>/dev/null || true
}
trap 'rc=$?; agent_cleanup; (exit $rc); cleanup' EXIT  # keep the script's exit status
ip link show cni0 >/dev/null 2>&1 || MADE_CNI0=1

start_server sqlite
step "cluster registry with the local images"
"$MINIK8S_BIN" image registry --data-dir "$E2E_DIR/registry" --listen "127.0.0.1:$REG_PORT" \
  --push-defaults >"$E2E_DIR/registry.log" 2>&1 &
E2E_PIDS+=($!)
wait_for 120 grep -q "registry ready" "$E2E_DIR/registry.log"

start_agent() {
  "$MINIK8S_BIN" agent $(agent_join_flags) --node-name node-1 --data-dir "$AGENT_DIR" \
    --config "$E2E_DIR/node.yaml" --registry "127.0.0.1:$REG_PORT" --network-backend none --disable-proxy --disable-dns \
    --listen "127.0.0.1:$AGENT_PORT" >>"$E2E_DIR/agent.log" 2>&1 &
  AGENT_PID=$!
}
cat >"$E2E_DIR/node.yaml" <<YAML
address: 127.0.0.1
labels: {disk: ssd}
YAML
step "the agent registers its node"
start_agent
wait_for 60 bash -c "kubectl get node node-1 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -q True" || exit 1
out=$(kubectl get nodes -o wide); expect_contains "$out" "Ready" "node ready"
expect_contains "$out" "containerd://" "runtime version"

step "the server runs with glibc's larger per-thread malloc cache; the agent and its containerd do not"
expect_contains "$(tr '\0' '\n' </proc/"$SERVER_PID"/environ)" "GLIBC_TUNABLES=glibc.malloc.tcache_count=128" \
  "the server started with the malloc tunables"
for pid in "$AGENT_PID" "$(cat "$AGENT_DIR/containerd/containerd.pid")"; do
  expect_eq "$(tr '\0' '\n' </proc/"$pid"/environ | grep -c '^GLIBC_TUNABLES=\|^MINIK8S_MALLOC_TUNED=')" "0" \
    "$(tr '\0' ' ' </proc/"$pid"/cmdline | cut -c1-40) without the server's malloc tunables"
done

step "a two-container pod: localhost, shared emptyDir, downward API env"
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: duo}
spec:
  containers:
  - name: web
    image: minik8s/busybox:1.35
    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]
    volumeMounts: [{name: www, mountPath: /www}]
  - name: client
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "echo \"hello from $MY_POD\" > /www/index.html; while true; do timeout 2 wget -q -O - http://localhost:8080/; sleep 1; done"]
    env: [{name: MY_POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
    volumeMounts: [{name: www, mountPath: /www}]
  volumes: [{name: www, emptyDir: {}}]
YAML
wait_for 90 bash -c "kubectl get pod duo -o jsonpath='{.status.containerStatuses[*].ready}' | grep -q 'true true'"
out=$(kubectl get pod duo -o wide); expect_contains "$out" "2/2" "both containers ready"
expect_contains "$out" "node-1" "scheduled on the node"
ip=$(kubectl get pod duo -o jsonpath='{.status.podIP}'); [[ "$ip" == 10.244.* ]] || fail "pod IP from the pod CIDR, got '$ip'"
wait_for 20 bash -c "kubectl logs duo -c client --tail=5 | grep -q 'hello from duo'" ||
  kubectl logs duo -c client --tail=5

step "exec and its exit code"
out=$(kubectl exec duo -c web -- cat /www/index.html); expect_eq "$out" "hello from duo" "exec output"
kubectl exec duo -c web -- sh -c 'exit 3' >/dev/null 2>&1; expect_eq "$?" "3" "exec exit code"

step "crash loop and OOM kill"
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers:
  - {name: c, image: minik8s/busybox:1.35, command: ["sh", "-c", "echo dying; exit 1"]}
---
apiVersion: v1
kind: Pod
metadata: {name: oom}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "x=a; while true; do x=$x$x; done"]
    resources: {limits: {memory: 32Mi}}
YAML
wait_for 60 bash -c "[[ \$(kubectl get pod crash -o jsonpath='{.status.containerStatuses[0].restartCount}') -ge 2 ]]"
wait_for 30 bash -c "kubectl get pod crash | grep -q CrashLoopBackOff"
out=$(kubectl logs crash --previous); expect_contains "$out" "dying" "logs --previous"
out=$(kubectl describe pod crash)
expect_contains "$out" "Back-off restarting failed container c in pod crash_default" "BackOff event"
expect_contains "$out" "Started container c" "Started event"
if ! wait_for 60 bash -c "kubectl get pod oom -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}' | grep -q OOMKilled"; then
  # A rare CI failure here is not understood yet: keep what explains it.
  kubectl get pod oom -o yaml || true
  grep -i -E "oom|containerd" "$E2E_DIR/agent.log" | tail -n 30 || true
  grep -i -E "TaskOOM|TaskExit" "$AGENT_DIR/containerd/containerd.log" | tail -n 20 || true
  dmesg 2>/dev/null | grep -i -E "memory cgroup|oom" | tail -n 10 || true
fi
out=$(kubectl get pod oom -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')
expect_eq "$out" "137" "OOM exit code"

step "kubectl top"
wait_for 30 bash -c "kubectl top node | grep -q node-1"
wait_for 30 bash -c "kubectl top pod | grep -q duo"

step "agent killed with SIGKILL and restarted: containers untouched"
before=$(kubectl get pod duo -o jsonpath='{.status.containerStatuses[*].containerID}')
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true
start_agent
sleep 5
wait_for 60 bash -c "kubectl get pod duo -o jsonpath='{.status.containerStatuses[*].ready}' | grep -q 'true true'"
after=$(kubectl get pod duo -o jsonpath='{.status.containerStatuses[*].containerID}')
expect_eq "$after" "$before" "container IDs after agent restart"
out=$(kubectl get pod duo -o jsonpath='{.status.containerStatuses[*].restartCount}'); expect_eq "$out" "0 0" "no restarts"

step "deleting a pod stops its containers"
kubectl delete pod duo --timeout=60s >/dev/null
out=$(kubectl get pods -o name); expect_not_contains "$out" "pod/duo" "pod gone"
finish
