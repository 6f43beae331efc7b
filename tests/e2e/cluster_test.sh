#!/usr/bin/env bash
# `minik8s cluster up` with 3 nodes (network namespaces, own containerd each), pods pinned to
# every node reaching each other by pod IP across the VXLAN overlay, a 4th node added and
# removed (its routes leave the others), and `cluster down` leaving nothing behind.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 3 nodes Ready"
start_cluster mkt1 172.29.101 3 || exit 1
cluster() { cluster_cmd "$@"; }
out=$(kubectl get nodes -o wide)
echo "$out"
for n in 1 2 3; do expect_contains "$out" "node-$n   Ready" "node-$n Ready"; done
expect_contains "$out" "172.29.101.2" "internal IP of node-1"
cidrs=$(kubectl get nodes -o jsonpath='{range .items[*]}{.spec.podCIDR} {end}')
expect_eq "$(echo $cidrs | tr ' ' '\n' | sort -u | wc -l)" "3" "three distinct podCIDRs"
step "a node with a wrong join token is refused"
out=$("$MINIK8S_BIN" agent --server "https://172.29.101.1:6443" --node-name intruder --token wrong \
  --ca-file "$CL_DIR/server/pki/ca.crt" \
  --data-dir "$E2E_DIR/intruder" 2>&1); rc=$?
expect_eq "$rc" "1" "agent with a wrong token exits"
expect_contains "$out" "refused the join token" "why"
must_fail kubectl get node intruder
step "re-running up is harmless"
out=$(cluster up); expect_contains "$out" "already running" "second up"

# One web pod per node, pinned with nodeName / nodeSelector.
web_pod() {  # name node
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: web}}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  containers:
  - name: web
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo hello from $1 > /www/index.html && exec httpd -f -v -p 8080 -h /www"]
YAML
}
step "a pod on every node"
for n in 1 2 3; do web_pod "web-$n" "node-$n" | kubectl apply -f - >/dev/null; done
wait_for 120 bash -c "[[ \$(kubectl get pods -l app=web -o jsonpath='{.items[*].status.phase}') == 'Running Running Running' ]]" ||
  kubectl get pods -o wide
kubectl get pods -o wide
declare -A IP
for n in 1 2 3; do
  IP[$n]=$(kubectl get pod "web-$n" -o jsonpath='{.status.podIP}')
  node=$(kubectl get pod "web-$n" -o jsonpath='{.spec.nodeName}')
  expect_eq "$node" "node-$n" "web-$n placed on node-$n"
done

out=$(kubectl describe node node-2)
expect_contains "$out" "PodCIDR:" "describe node: podCIDR"
expect_contains "$out" "default                     web-2" "describe node: its pods"
expect_contains "$out" "Allocated resources" "describe node: requests"
step "metrics of the API server and of an agent (through the API server's node proxy)"
out=$(kubectl get --raw /metrics)
expect_contains "$out" 'apiserver_request_total{verb="LIST",group="",version="v1",resource="pods"' "apiserver metrics"
expect_contains "$out" "workqueue_adds_total" "in-process controller metrics"
expect_contains "$out" "scheduler_schedule_attempts_total" "in-process scheduler metrics"
out=$(kubectl get --raw /api/v1/nodes/node-2/proxy/metrics)
expect_contains "$out" "kubelet_running_pods 1" "agent metrics through nodes/proxy"
expect_contains "$out" "process_resident_memory_bytes" "agent process metrics"
step "every pod reaches the other two by pod IP (cross-node, VXLAN)"
# Ready without a readiness probe means started: give httpd a moment to listen.
for n in 1 2 3; do
  wait_for 20 bash -c "kubectl exec web-$n -- timeout 3 wget -q -O - http://127.0.0.1:8080/ | grep -q hello"
done
for a in 1 2 3; do for b in 1 2 3; do
  [[ $a == "$b" ]] && continue
  out=$(kubectl exec "web-$a" -- timeout 5 wget -q -O - "http://${IP[$b]}:8080/" 2>&1)
  expect_eq "$out" "hello from web-$b" "web-$a -> web-$b (${IP[$b]})"
done; done
step "the Kubernetes docs' nginx Deployment, unchanged (nginx:1.14.2 from the local image)"
examples=${SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/examples
kubectl apply -f "$examples/nginx-deployment.yaml" >/dev/null
kubectl rollout status deploy/nginx-deployment --timeout=90s >/dev/null || fail "nginx rollout"
nginx_ip=$(kubectl get pods -l app=nginx -o jsonpath='{.items[0].status.podIP}')
wait_for 20 bash -c "kubectl exec web-1 -- timeout 3 wget -q -O - http://$nginx_ip/ | grep -q 'Welcome to nginx!'"
out=$(kubectl logs -l app=nginx --tail=20)
expect_contains "$out" '"GET / HTTP/1.1" 200' "nginx's access log is the container's stdout"

step "kubectl port-forward (WebSocket tunnel and SPDY) and kubectl attach"
# forward_fetch WEBSOCKETS TARGET PORT: forwards a free local port to TARGET's PORT and fetches /
# through it twice (two connections over one forwarding session). kubectl's own output (the
# runtime's error for a connection it could not forward) is in $E2E_DIR/port-forward.log.
forward_fetch() {
  local log="$E2E_DIR/port-forward.log"
  # Gone first: the background kubectl's `>` truncates it only once its fork runs, and until then
  # the last session's "Forwarding from" (a port nobody listens on now) would be read.
  rm -f "$log"
  KUBECTL_PORT_FORWARD_WEBSOCKETS=$1 kubectl port-forward "$2" ":$3" >"$log" 2>&1 &
  local pid=$! lport i
  wait_for 20 grep -q "^Forwarding from 127.0.0.1:" "$log" || cat "$log" >&2
  lport=$(sed -n 's/^Forwarding from 127.0.0.1:\([0-9]*\) .*/\1/p' "$log" | head -n 1)
  for i in 1 2; do
    curl -s -m 15 "http://127.0.0.1:$lport/" || echo "(curl $i exited with $?)" >&2
  done
  stop_children "$pid"; wait "$pid" 2>/dev/null || true
}
# expect_forwarded OUTPUT NEEDLE COUNT WHAT: NEEDLE found COUNT times, or kubectl's log shown.
expect_forwarded() {
  local n
  n=$(grep -c -- "$2" <<<"$1")
  [[ $n == "$3" ]] && return 0
  fail "$4: '$2' $n times, expected $3, in:"; head -20 <<<"$1" >&2
  echo "--- kubectl port-forward's output" >&2; cat "$E2E_DIR/port-forward.log" >&2
}
out=$(forward_fetch true deploy/nginx-deployment 80)
expect_forwarded "$out" '<title>Welcome to nginx!</title>' 2 "port-forward over a WebSocket"
out=$(forward_fetch false deploy/nginx-deployment 80)
expect_forwarded "$out" '<title>Welcome to nginx!</title>' 2 "port-forward over SPDY"
# A server bound to the pod's loopback: only reachable from inside its network namespace.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: lo-only}
spec:
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo served-on-loopback >/www/index.html && exec httpd -f -p 127.0.0.1:8080 -h /www"]
    # Ready once httpd answers (started is not listening: a fetch could come first).
    readinessProbe:
      exec: {command: [wget, -q, -O, /dev/null, "http://127.0.0.1:8080/"]}
      periodSeconds: 1
---
apiVersion: v1
kind: Pod
metadata: {name: attach-me}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: minik8s/busybox:1.35
    stdin: true
    stdinOnce: true
    command: ["sh", "-c", "echo waiting; read line; echo got $line; exit 3"]
YAML
kubectl wait --for=condition=Ready pod/lo-only pod/attach-me --timeout=60s >/dev/null || fail "pods for port-forward and attach"
out=$(forward_fetch true pod/lo-only 8080)
expect_forwarded "$out" served-on-loopback 2 "port-forward reaches the pod's localhost"
out=$(echo from-stdin | timeout 20 kubectl attach -i attach-me 2>&1)
expect_contains "$out" "got from-stdin" "kubectl attach -i: stdin in, stdout out"
wait_for 30 bash -c "kubectl get pod attach-me -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}' | grep -qx 3"
# Attached to nginx (no stdin): its access log arrives as requests come.
attach_log="$E2E_DIR/attach.log"
timeout 60 kubectl attach "$(kubectl get pods -l app=nginx -o jsonpath='{.items[0].metadata.name}')" >"$attach_log" 2>&1 &
attach_pid=$!
wait_for 30 bash -c "kubectl exec web-1 -- timeout 2 wget -q -O /dev/null http://$nginx_ip/attached; grep -q 'GET /attached HTTP/1.1' $attach_log" ||
  { fail "kubectl attach follows the container's output"; cat "$attach_log"; }
stop_children "$attach_pid"; wait "$attach_pid" 2>/dev/null || true
out=$(echo typed | timeout 60 kubectl run attach-run -i --rm --restart=Never --image=minik8s/busybox:1.35 -- sh -c 'read x; echo you typed $x' 2>&1)
expect_contains "$out" "you typed typed" "kubectl run -i --rm"
kubectl delete pod lo-only attach-me --wait=false >/dev/null
kubectl delete -f "$examples/nginx-deployment.yaml" --timeout=60s >/dev/null
step "the source address is the pod's own (no masquerade between pods)"
out=$(kubectl logs web-2)
expect_contains "$out" "${IP[1]}" "web-2's httpd log shows web-1's pod IP as the client"
step "a node reaches pods on other nodes"
out=$(ip netns exec mkt1-node-1 timeout 5 wget -q -O - "http://${IP[3]}:8080/" 2>&1 ||
      nsenter --net=/var/run/netns/mkt1-node-1 timeout 5 curl -s "http://${IP[3]}:8080/")
expect_eq "$out" "hello from web-3" "node-1 namespace -> web-3"

step "add a 4th node and reach it"
cluster add-node --timeout 120 --label disk=ssd --capacity cpu=3 --capacity memory=2Gi \
  --taint dedicated=edge:PreferNoSchedule || tail -20 "$CL_DIR/logs/node-4.log"
out=$(kubectl get node node-4 -o jsonpath='{.metadata.labels.disk} {.status.capacity.cpu} {.status.allocatable.memory} {.spec.taints[0].key}={.spec.taints[0].value}:{.spec.taints[0].effect}')
expect_eq "$out" "ssd 3 2Gi dedicated=edge:PreferNoSchedule" "node-4's config: label, capacity, taint"
web_pod web-4 node-4 | kubectl apply -f - >/dev/null
wait_for 90 bash -c "[[ \$(kubectl get pod web-4 -o jsonpath='{.status.phase}') == Running ]]"
ip4=$(kubectl get pod web-4 -o jsonpath='{.status.podIP}')
cidr4=$(kubectl get node node-4 -o jsonpath='{.spec.podCIDR}')
out=$(kubectl exec web-1 -- timeout 5 wget -q -O - "http://$ip4:8080/" 2>&1)
expect_eq "$out" "hello from web-4" "web-1 -> web-4"
routes=$(ip -n mkt1-node-1 route show proto 107)
expect_contains "$routes" "$cidr4" "node-1 has a route to node-4's pods"

step "remove it: its routes leave the other nodes"
cluster remove-node node-4
# Each agent drops the route when it sees the Node go: wait for every one of them.
for n in 1 2 3; do
  wait_for 20 bash -c "! ip -n mkt1-node-$n route show proto 107 | grep -q '$cidr4'" ||
    fail "node-$n still routes $cidr4"
done
must_fail kubectl get node node-4
expect_not_contains "$(kubectl get pods)" "web-4" "web-4 gone with its node"
step "pod GC: pods bound to the removed node go after its 40 s quarantine; a ReplicaSet's return elsewhere"
# remove-node deleted the node's own pods; these are bound to node-4 after it is gone, so only the
# pod garbage collector removes them. The ReplicaSet adopts gc-rs-orphan by its labels.
for p in gc-orphan gc-rs-orphan; do
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $p, labels: {app: $p}}
spec:
  nodeName: node-4
  containers: [{name: c, image: minik8s/busybox:1.35, command: [sleep, "3600"]}]
YAML
done
kubectl apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: gc-rs}
spec:
  replicas: 1
  selector: {matchLabels: {app: gc-rs-orphan}}
  template:
    metadata: {labels: {app: gc-rs-orphan}}
    spec:
      containers: [{name: c, image: minik8s/busybox:1.35, command: [sleep, "3600"]}]
YAML
gc_start=$SECONDS
wait_for 20 bash -c "[[ \$(kubectl get pod gc-rs-orphan -o jsonpath='{.metadata.ownerReferences[0].name}') == gc-rs ]]" ||
  fail "the ReplicaSet did not adopt gc-rs-orphan"
expect_eq "$(kubectl get pods -l app=gc-rs-orphan --no-headers | wc -l)" "1" "the adopted pod counts: no second pod yet"
wait_for 60 bash -c "! kubectl get pods gc-orphan gc-rs-orphan --no-headers 2>/dev/null | grep -q gc-" ||
  fail "pods bound to the removed node-4 are still there"
echo "pods on node-4 garbage-collected after $((SECONDS - gc_start)) s"
((SECONDS - gc_start >= 35)) || fail "pods removed before the quarantine ended"
wait_for 90 bash -c "[[ \$(kubectl get pods -l app=gc-rs-orphan -o jsonpath='{.items[*].status.phase}') == Running ]]" ||
  kubectl get pods -l app=gc-rs-orphan -o wide
node=$(kubectl get pods -l app=gc-rs-orphan -o jsonpath='{.items[0].spec.nodeName}')
[[ $node =~ ^node-[123]$ ]] || fail "the ReplicaSet's new pod is on '$node', not a remaining node"
kubectl delete rs gc-rs --wait=false >/dev/null

step "cluster down leaves nothing behind"
# Its logs go with it: show them first when something failed.
((FAILURES == 0)) || dump_cluster_logs
cluster down --purge
expect_eq "$(ip netns list | grep -c '^mkt1-')" "0" "no node namespaces"
expect_eq "$(ip -o link show | grep -c 'mkt1')" "0" "no links"
expect_eq "$(iptables-save | grep -c 'minik8s mkt1')" "0" "no iptables rules"
expect_eq "$(grep -c "$CL_DIR" /proc/mounts)" "0" "no mounts"
expect_eq "$(pgrep -f "$CL_DIR" | wc -l)" "0" "no processes"
expect_eq "$(ls /sys/fs/cgroup/memory/minik8s 2>/dev/null | grep -c '^mkt1-')" "0" "no cgroups"
finish
