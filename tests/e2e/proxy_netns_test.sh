#!/usr/bin/env bash
# The service proxy and cluster DNS on a node, for real: a scratch "node" network namespace with
# two veth-connected "pod" namespaces serving HTTP (busybox httpd), an API server, the proxy and
# dnsmasq all inside the node namespace (`minik8s proxy`), a Service with a hand-written
# EndpointSlice. Checks balancing through the ClusterIP, an endpoint removal within a second,
# NodePort, a port without endpoints refused, DNS names (ClusterIP, headless, NXDOMAIN) through
# 10.96.0.10, a restart and cleanup: in iptables mode, then in nftables mode.
# Needs root. Everything it creates is named mkpx-<pid>-*; leftovers of a crashed run are removed.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ $(id -u) != 0 ]]; then echo "SKIP: needs root"; exit 0; fi
if ! "$MINIK8S_BIN" proxy --help >/dev/null 2>&1; then
  echo "SKIP: $MINIK8S_BIN has no proxy subcommand"; exit 0
fi
command -v dnsmasq >/dev/null || [[ -x /usr/sbin/dnsmasq ]] || { echo "SKIP: no dnsmasq"; exit 0; }
command -v nft >/dev/null || { echo "SKIP: no nft (nftables; scripts/setup.sh installs it)"; exit 0; }

P="mkpx-$$"
NODE="$P-node"; POD1="$P-pod1"; POD2="$P-pod2"
NODE_IP=192.168.77.2
POD1_IP=10.244.77.11; POD2_IP=10.244.77.12
WEB_IP=10.96.77.10

remove_namespaces() {  # $1: a name prefix; kills what still runs inside, then deletes
  local ns
  for ns in $(ip netns list | awk '{print $1}' | grep "^$1" || true); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
}
teardown() {
  local rc=$?
  for pid in $(our_children "${E2E_PIDS[@]}"); do kill "$pid" 2>/dev/null || true; done
  for pid in "${E2E_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  remove_namespaces "$P-"
  (exit $rc)
  cleanup
}
trap teardown EXIT
remove_namespaces "mkpx-"  # an earlier crashed run

in_node() { nsenter --net="/var/run/netns/$NODE" "$@"; }
in_pod1() { nsenter --net="/var/run/netns/$POD1" "$@"; }
kc() { in_node kubectl "$@"; }

step "network namespaces: node $NODE with a bridge, pods $POD1 and $POD2"
ip netns add "$NODE"; ip netns add "$POD1"; ip netns add "$POD2"
ip -n "$NODE" link set lo up
ip -n "$NODE" link add br0 type bridge
ip -n "$NODE" addr add 10.244.77.1/24 dev br0
ip -n "$NODE" link set br0 up
# The node's own address on a veth pair kept inside the namespace (no dummy module here).
ip -n "$NODE" link add nodeip type veth peer name nodeip-peer
ip -n "$NODE" addr add "$NODE_IP/24" dev nodeip
ip -n "$NODE" link set nodeip-peer up
ip -n "$NODE" link set nodeip up
# The node itself must have a route for the service range, or OUTPUT DNAT never runs.
ip -n "$NODE" route add 10.96.0.0/12 dev nodeip
in_node sysctl -qw net.ipv4.ip_forward=1
i=0
for pod in "$POD1:$POD1_IP" "$POD2:$POD2_IP"; do
  i=$((i + 1)); ns=${pod%%:*}; ip=${pod##*:}
  ip -n "$NODE" link add "veth$i" type veth peer name eth0 netns "$ns"
  ip -n "$NODE" link set "veth$i" master br0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via 10.244.77.1
  mkdir -p "$E2E_DIR/www$i"
  echo "pod$i" >"$E2E_DIR/www$i/index.html"
  nsenter --net="/var/run/netns/$ns" busybox httpd -f -p 8080 -h "$E2E_DIR/www$i" &
  E2E_PIDS+=($!)
done

step "API server inside the node namespace"
SERVER_PORT=$(free_port)
nsenter --net="/var/run/netns/$NODE" "$MINIK8S_BIN" server --data-dir "$E2E_DIR/server" --listen "127.0.0.1:$SERVER_PORT" \
  >>"$E2E_DIR/server.log" 2>&1 &
E2E_PIDS+=($!)
SERVER_URL="https://127.0.0.1:$SERVER_PORT"
export KUBECONFIG="$E2E_DIR/server/kubeconfig"
wait_for 15 test -s "$KUBECONFIG"
wait_for 15 in_node curl -sf --cacert "$E2E_DIR/server/pki/ca.crt" "$SERVER_URL/readyz"

step "a Service and a hand-written EndpointSlice with both pods"
endpoint_slice() {  # IPs of the ready endpoints
  local eps=""
  [[ $# -gt 0 ]] || eps=" []"
  for ip in "$@"; do eps+="
  - addresses: [\"$ip\"]
    conditions: {ready: true}"; done
  cat <<YAML
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  namespace: default
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports:
- {name: http, port: 8080, protocol: TCP}
endpoints:$eps
YAML
}
web_service() {
  cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: NodePort
  clusterIP: $WEB_IP
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30777}]
YAML
}
web_service | kc apply -f - >/dev/null
kc apply -f - <<YAML >/dev/null
apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec:
  clusterIP: None
  ports: [{name: pg, port: 5432}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: db-1
  namespace: default
  labels: {kubernetes.io/service-name: db}
addressType: IPv4
ports: [{name: pg, port: 5432, protocol: TCP}]
endpoints:
- addresses: ["$POD1_IP"]
- addresses: ["$POD2_IP"]
YAML
endpoint_slice "$POD1_IP" "$POD2_IP" | kc apply -f - >/dev/null

# Both modes of the proxy in turn, against the same namespaces, API server and objects: each
# starts where the other left off (the mode switch removes the other mode's rules).
MODE=iptables
rules() {  # the node's service rules in the current mode's form
  if [[ $MODE == nftables ]]; then in_node nft list table ip kube-proxy 2>/dev/null; else in_node iptables-save -t nat; fi
}
has_endpoint() { grep -qF "$1:$2" <<<"$(rules)"; }
export -f rules has_endpoint in_node
export NODE MODE

# nsenter execs the proxy: $! is the proxy itself, so stop_children ends it (a function run in
# the background would leave it running as an orphan of the subshell).
start_proxy() {
  nsenter --net="/var/run/netns/$NODE" "$MINIK8S_BIN" proxy --kubeconfig "$KUBECONFIG" \
    --node-name "$P" --node-ip "$NODE_IP" --proxy-mode "$MODE" "$@" >>"$E2E_DIR/proxy.log" 2>&1 &
  PROXY_PID=$!
  E2E_PIDS+=($PROXY_PID)
}

for MODE in iptables nftables; do
export MODE
step "$MODE: the proxy and cluster DNS inside the node namespace"
endpoint_slice "$POD1_IP" "$POD2_IP" | kc apply -f - >/dev/null
kc get service web >/dev/null 2>&1 || web_service | kc apply -f - >/dev/null
start_proxy --dns-listen "$NODE_IP" --dns-data-dir "$E2E_DIR/dns"
wait_for 10 has_endpoint "$POD2_IP" 8080
wait_for 10 has_endpoint "$NODE_IP" 53
if [[ $MODE == nftables ]]; then
  expect_not_contains "$(in_node iptables-save -t nat)" "KUBE-" "no iptables-mode rules beside the table"
fi

step "$MODE: requests to the ClusterIP reach both pods"
hits1=0; hits2=0
for _ in $(seq 1 40); do
  case $(in_node curl -s --max-time 2 "http://$WEB_IP/") in
    pod1) hits1=$((hits1 + 1)) ;;
    pod2) hits2=$((hits2 + 1)) ;;
  esac
done
echo "pod1: $hits1, pod2: $hits2 of 40"
expect_eq "$((hits1 + hits2))" 40 "every request answered"
((hits1 >= 5 && hits2 >= 5)) || fail "balancing: pod1 $hits1, pod2 $hits2"

step "$MODE: NodePort on the node's address"
expect_contains "$(in_node curl -s --max-time 2 "http://$NODE_IP:30777/")" pod "nodePort answer"

step "$MODE: an endpoint removal takes effect within a second"
endpoint_slice "$POD1_IP" | kc apply -f - >/dev/null
start=$(date +%s%N)
while has_endpoint "$POD2_IP" 8080; do
  (( ($(date +%s%N) - start) < 3000000000 )) || break
  sleep 0.02
done
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "rules updated ${elapsed_ms} ms after kubectl returned"
((elapsed_ms < 1000)) || fail "endpoint removal took ${elapsed_ms} ms"
for _ in $(seq 1 20); do
  expect_eq "$(in_node curl -s --max-time 2 "http://$WEB_IP/")" pod1 "after removal"
done

step "$MODE: a port without endpoints is refused, not left to time out"
endpoint_slice | kc apply -f - >/dev/null
wait_for 10 bash -c '! has_endpoint "$0" 8080' "$POD1_IP"
t0=$(date +%s%N)
rc=0; in_node curl -s --max-time 5 "http://$WEB_IP/" >/dev/null || rc=$?
expect_eq "$rc" 7 "curl to a ClusterIP without endpoints: connection refused"
(( ($(date +%s%N) - t0) < 2000000000 )) || fail "the refusal took more than 2 s"

if [[ $MODE == iptables ]]; then
step "cluster DNS through 10.96.0.10 from a pod"
wait_for 10 bash -c "nsenter --net=/var/run/netns/$POD1 busybox nslookup web.default.svc.cluster.local 10.96.0.10"
out=$(in_pod1 busybox nslookup web.default.svc.cluster.local 10.96.0.10 2>&1 || true)
expect_contains "$out" "$WEB_IP" "web.default.svc.cluster.local"
out=$(in_pod1 busybox nslookup -type=a db.default.svc.cluster.local 10.96.0.10 2>&1 || true)
expect_contains "$out" "$POD1_IP" "headless db (pod1)"
expect_contains "$out" "$POD2_IP" "headless db (pod2)"
out=$(in_pod1 busybox nslookup nope.default.svc.cluster.local 10.96.0.10 2>&1 || true)
expect_contains "$out" "NXDOMAIN" "unknown name"
out=$(in_pod1 busybox nslookup web.default "$NODE_IP" 2>&1 || true)
expect_contains "$out" "$WEB_IP" "short form web.default"
kc get endpointslices -n kube-system -o name | grep -q "kube-dns-$P" ||
  fail "the node's kube-dns EndpointSlice"
fi

step "$MODE: the proxy restores its rules after a restart and cleans them up"
endpoint_slice "$POD1_IP" | kc apply -f - >/dev/null
wait_for 10 has_endpoint "$POD1_IP" 8080
stop_children "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true
kc delete service web >/dev/null
start_proxy
wait_for 10 bash -c '! has_endpoint "$0" 8080' "$POD1_IP"
expect_contains "$(rules)" "$NODE_IP" "kube-dns rules after restart"
stop_children "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true
in_node "$MINIK8S_BIN" proxy --cleanup
expect_not_contains "$(in_node iptables-save)" "KUBE-" "iptables rules after cleanup"
expect_not_contains "$(in_node nft list ruleset)" "kube-proxy" "nftables table after cleanup"
done

finish
