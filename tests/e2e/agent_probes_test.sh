#!/usr/bin/env bash
# One node with real containers, the second session: probes (httpGet readiness flipped through
# kubectl exec, exec liveness restarting a container, tcpSocket startup, a startup probe that
# never passes), a cpu limit measured from the cgroup, configMap and secret volumes and env,
# hostPort, init containers, the Python client's exec, `kubectl top` memory and the kubelet's
# Events in `kubectl describe`. One agent for the whole script; all pods are created at once.
source "$(dirname "$0")/lib.sh"
set +e  # count every failed check (fail) and go on; finish decides
[[ $(id -u) == 0 ]] || { echo "needs root (containerd)"; exit 1; }

AGENT_DIR="$E2E_DIR/agent"
REG_PORT=$(free_port); AGENT_PORT=$(free_port); HOST_PORT=$(free_port)
agent_cleanup() {
  # Pods first (the agent stops their containers and frees the hostPort rules), then the
  # agent, its containerd and leftovers.
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
"$MINIK8S_BIN" image registry --data-dir "$E2E_DIR/registry" --listen "127.0.0.1:$REG_PORT" \
  --push-defaults >"$E2E_DIR/registry.log" 2>&1 &
E2E_PIDS+=($!)
wait_for 120 grep -q "registry ready" "$E2E_DIR/registry.log"
printf 'address: 127.0.0.1\n' >"$E2E_DIR/node.yaml"
"$MINIK8S_BIN" agent $(agent_join_flags) --node-name node-1 --data-dir "$AGENT_DIR" \
  --config "$E2E_DIR/node.yaml" --registry "127.0.0.1:$REG_PORT" --network-backend none --disable-proxy --disable-dns \
  --listen "127.0.0.1:$AGENT_PORT" >>"$E2E_DIR/agent.log" 2>&1 &
AGENT_PID=$!
wait_for 60 bash -c "kubectl get node node-1 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -q True" || exit 1

step "all pods at once"
kubectl create configmap app-config --from-literal=greeting=hello --from-literal=app.conf='port=8080' >/dev/null
kubectl create secret generic app-secret --from-literal=user=admin --from-literal=password=s3cret >/dev/null
sed "s/HOST_PORT/$HOST_PORT/" <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: probes}
spec:
  terminationGracePeriodSeconds: 2  # httpd as PID 1 ignores SIGTERM: the liveness kill waits this long
  containers:
  - name: web
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo ok > /www/ready.html && touch /tmp/alive && sleep 3 && exec httpd -f -p 8080 -h /www"]
    startupProbe: {tcpSocket: {port: 8080}, periodSeconds: 1, failureThreshold: 30}
    readinessProbe: {httpGet: {path: /ready.html, port: 8080}, periodSeconds: 1, failureThreshold: 1}
    livenessProbe: {exec: {command: ["test", "-f", "/tmp/alive"]}, periodSeconds: 1, failureThreshold: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: never-starts}
spec:
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sleep", "3600"]
    startupProbe: {exec: {command: ["false"]}, periodSeconds: 1, failureThreshold: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: busy}
spec:
  containers:
  - name: loop
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "while :; do :; done"]
    resources: {limits: {cpu: 200m, memory: 64Mi}}
  - name: hog  # holds ~24MiB in a shell variable, for kubectl top
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "x=$(head -c 25000000 /dev/zero | tr '\\0' a); while :; do sleep 3600; done"]
---
apiVersion: v1
kind: Pod
metadata: {name: config}
spec:
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "echo \"$GREETING $DB_USER\"; sleep 3600"]
    env:
    - {name: GREETING, valueFrom: {configMapKeyRef: {name: app-config, key: greeting}}}
    - {name: DB_USER, valueFrom: {secretKeyRef: {name: app-secret, key: user}}}
    volumeMounts:
    - {name: cfg, mountPath: /cfg, readOnly: true}
    - {name: cfg-all, mountPath: /etc/app.conf, subPath: app.conf}
    - {name: sec, mountPath: /sec, readOnly: true}
  volumes:
  - name: cfg
    configMap: {name: app-config, items: [{key: greeting, path: nested/greeting.txt}]}
  - name: cfg-all
    configMap: {name: app-config}
  - name: sec
    secret: {secretName: app-secret}
---
apiVersion: v1
kind: Pod
metadata: {name: hostport}
spec:
  containers:
  - name: web
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo via-hostport > /www/index.html && exec httpd -f -p 80 -h /www"]
    ports: [{containerPort: 80, hostPort: HOST_PORT}]
---
apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  initContainers:
  - {name: first, image: minik8s/busybox:1.35, command: ["sh", "-c", "echo one > /work/log"], volumeMounts: [{name: w, mountPath: /work}]}
  - {name: second, image: minik8s/busybox:1.35, command: ["sh", "-c", "sleep 1; echo two >> /work/log"], volumeMounts: [{name: w, mountPath: /work}]}
  containers:
  - {name: main, image: minik8s/busybox:1.35, command: ["sh", "-c", "cat /work/log; sleep 3600"], volumeMounts: [{name: w, mountPath: /work}]}
  volumes: [{name: w, emptyDir: {}}]
YAML

ready() { kubectl get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'; }

step "startup probe (tcpSocket): not started until the server listens"
wait_for 60 bash -c "kubectl get pod probes -o jsonpath='{.status.containerStatuses[0].state.running}' | grep -q startedAt"
out=$(kubectl get pod probes -o jsonpath='{.status.containerStatuses[0].started} {.status.containerStatuses[0].ready}')
expect_eq "$out" "false false" "not started while the startup probe fails"
wait_for 30 bash -c "[[ \$(kubectl get pod probes -o jsonpath='{.status.containerStatuses[0].started}') == true ]]"

step "readiness probe (httpGet) flips Ready"
wait_for 20 bash -c "[[ \$(kubectl get pod probes -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') == True ]]"
kubectl exec probes -- rm /www/ready.html
wait_for 20 bash -c "[[ \$(kubectl get pod probes -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') == False ]]"
expect_eq "$(kubectl get pod probes -o jsonpath='{.status.containerStatuses[0].ready}')" "false" "container not ready"
kubectl exec probes -- sh -c 'echo ok > /www/ready.html'
wait_for 20 bash -c "[[ \$(kubectl get pod probes -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') == True ]]"
expect_eq "$(kubectl get pod probes -o jsonpath='{.status.containerStatuses[0].restartCount}')" "0" "readiness does not restart"

step "liveness probe (exec) restarts the container"
before=$(kubectl get pod probes -o jsonpath='{.status.containerStatuses[0].containerID}')
kubectl exec probes -- rm /tmp/alive
wait_for 30 bash -c "[[ \$(kubectl get pod probes -o jsonpath='{.status.containerStatuses[0].restartCount}') -ge 1 ]]"
after=$(kubectl get pod probes -o jsonpath='{.status.containerStatuses[0].containerID}')
[[ "$after" != "$before" && -n "$after" ]] || fail "a new container after the liveness kill ($before -> $after)"
wait_for 30 bash -c "[[ \$(kubectl get pod probes -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') == True ]]"

step "a startup probe that never passes restarts the container"
wait_for 40 bash -c "[[ \$(kubectl get pod never-starts -o jsonpath='{.status.containerStatuses[0].restartCount}') -ge 1 ]]"
expect_eq "$(kubectl get pod never-starts -o jsonpath='{.status.containerStatuses[0].started}')" "false" "never started"

step "events in kubectl describe"
wait_for 20 bash -c "kubectl describe pod probes | grep -q 'Liveness probe failed'"
out=$(kubectl describe pod probes)
for want in "Pulled" "Created" "Started" "Killing" "Unhealthy" "Readiness probe failed" \
  "Startup probe failed" "failed liveness probe, will be restarted" "kubelet"; do
  expect_contains "$out" "$want" "describe probes: $want"
done
out=$(kubectl get events --field-selector involvedObject.name=never-starts,reason=Unhealthy -o jsonpath='{.items[0].source.component}/{.items[0].source.host}/{.items[0].reportingComponent}/{.items[0].involvedObject.fieldPath}')
expect_eq "$out" "kubelet/node-1/kubelet/spec.containers{c}" "event source and fieldPath"

step "cpu limit 200m caps a busy loop"
wait_for 60 bash -c "[[ \$(kubectl get pod busy -o jsonpath='{.status.phase}') == Running ]]"
uid=$(kubectl get pod busy -o jsonpath='{.metadata.uid}')
cid=$(kubectl get pod busy -o jsonpath='{.status.containerStatuses[?(@.name=="loop")].containerID}')
cg=/sys/fs/cgroup/cpuacct/minik8s/node-1/kubepods/pod$uid/${cid#containerd://}
[[ -f $cg/cpuacct.usage ]] || fail "no cgroup $cg"
u0=$(cat "$cg/cpuacct.usage"); t0=$(date +%s%N); sleep 4
u1=$(cat "$cg/cpuacct.usage"); t1=$(date +%s%N)
pct=$(( (u1 - u0) * 100 / (t1 - t0) ))
echo "busy loop with a 200m limit used ${pct}% of a core"
((pct >= 10 && pct <= 35)) || fail "cpu of a 200m busy loop: ${pct}% of a core, expected 10-35"

step "configMap and secret volumes and env"
wait_for 60 bash -c "[[ \$(kubectl get pod config -o jsonpath='{.status.phase}') == Running ]]"
expect_eq "$(kubectl logs config)" "hello admin" "env from configMapKeyRef and secretKeyRef"
expect_eq "$(kubectl exec config -- cat /cfg/nested/greeting.txt)" "hello" "configMap item path"
expect_eq "$(kubectl exec config -- ls /cfg)" "nested" "only the listed items"
expect_eq "$(kubectl exec config -- cat /etc/app.conf)" "port=8080" "subPath file"
expect_eq "$(kubectl exec config -- cat /sec/password)" "s3cret" "secret file"
expect_eq "$(kubectl exec config -- ls /sec | tr '\n' ' ')" "password user " "secret keys"
out=$(kubectl exec config -- sh -c 'touch /cfg/x 2>&1; echo rc=$?')
expect_contains "$out" "Read-only file system" "readOnly configMap mount"
out=$(kubectl exec config -- sh -c 'touch /sec/x 2>&1; echo rc=$?')
expect_contains "$out" "rc=1" "readOnly secret mount"

step "hostPort: the pod on the node address"
wait_for 60 bash -c "[[ \$(kubectl get pod hostport -o jsonpath='{.status.phase}') == Running ]]"
wait_for 20 bash -c "curl -sf --max-time 2 http://127.0.0.1:$HOST_PORT/ | grep -q via-hostport" ||
  curl -sv --max-time 2 "http://127.0.0.1:$HOST_PORT/"

step "init containers run in order before the main one"
wait_for 60 bash -c "[[ \$(kubectl get pod init -o jsonpath='{.status.phase}') == Running ]]"
expect_eq "$(kubectl logs init -c main | tr '\n' ' ')" "one two " "init containers' output in order"
out=$(kubectl get pod init -o jsonpath='{.status.initContainerStatuses[*].state.terminated.reason}')
expect_eq "$out" "Completed Completed" "init container statuses"
expect_eq "$(ready init)" "True" "ready after init"
expect_contains "$(kubectl get pod init)" "1/1" "kubectl get"

step "Python client exec (v4.channel.k8s.io)"
out=$(/usr/bin/python3 - <<'PY' 2>&1
from kubernetes import client, config
from kubernetes.stream import stream
config.load_kube_config()
v1 = client.CoreV1Api()
print(stream(v1.connect_get_namespaced_pod_exec, "config", "default",
             command=["sh", "-c", "echo out-$((6*7)); echo err >&2"],
             stderr=True, stdin=False, stdout=True, tty=False))
PY
)
expect_contains "$out" "out-42" "python exec output"

step "kubectl top pod shows memory"
# A busybox shell or sleep has a working set of ~200KiB, which kubectl prints as 0Mi (integer
# MiB, as with Kubernetes); the metrics API must still carry it, and the hog's ~24MiB shows.
wait_for 40 bash -c "kubectl top pod busy --no-headers | grep -q busy"
wait_for 20 bash -c "[[ \$(kubectl top pod busy --no-headers | awk '{print \$3}') != 0Mi ]]"
out=$(kubectl top pod busy --no-headers); echo "$out"
mem=$(awk '{print $3}' <<<"$out")
[[ "$mem" =~ ^[0-9]+Mi$ && "${mem%Mi}" -ge 20 ]] || fail "memory of busy in kubectl top: '$mem'"
out=$(kubectl top pod busy --containers --no-headers); echo "$out"
expect_contains "$out" "loop" "top --containers"
out=$(kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/default/pods/config)
mem=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["containers"][0]["usage"]["memory"])' <<<"$out")
[[ "$mem" =~ ^[1-9][0-9]*(Ki)?$ ]] || fail "small working set in the metrics API: '$mem'"
finish
