#!/usr/bin/env bash
# NetworkPolicy on a 2-node cluster with the real kubectl: traffic to a server pod on node-1 from
# clients on both nodes and in two namespaces, to the pod IP and through its Service's ClusterIP.
# Default allow; the documentation's default-deny-ingress blocks everyone; a podSelector rule on
# a named port lets only the clients in; a combined namespaceSelector+podSelector peer on a port
# range; a pod label change opens and closes the way within a second (measured on the node's
# rules and by traffic); ipBlock with except; deny-all egress blocks DNS until the docs' "allow
# DNS to kube-system" policy; an egress rule to a named port of the peer works through the
# ClusterIP. The kubelet's readiness probes pass throughout. kubectl get/describe/explain and the
# API's 422 for a bad policy; the agent's chains go when the policies go.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 2 nodes"
start_cluster np 172.29.138 2 || exit 1
T0=$SECONDS

step "a server on node-1 (8080 'http', 9090 'alt') behind a Service; clients on both nodes"
kubectl create namespace prod >/dev/null && kubectl label namespace prod team=prod >/dev/null
kubectl create namespace dev >/dev/null && kubectl label namespace dev team=dev >/dev/null
# client NS NAME NODE ROLE
client() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, labels: {role: $4}}
spec:
  nodeName: $3
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: minik8s/busybox:1.35, command: [sleep, "3600"]}
YAML
}
{
  cat <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: server, namespace: prod, labels: {app: server}}
spec:
  nodeName: node-1
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && hostname > /www/index.html && httpd -p 9090 -h /www && exec httpd -f -p 8080 -h /www"]
    ports: [{name: http, containerPort: 8080}, {name: alt, containerPort: 9090}]
    readinessProbe:
      httpGet: {port: http, path: /}
      periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata: {name: server, namespace: prod}
spec:
  selector: {app: server}
  ports: [{port: 80, targetPort: http}]
YAML
  client prod client-a node-2 client
  client prod client-b node-1 other
  client dev client-d node-2 client
} | kubectl apply -f - >/dev/null || fail "create the pods"
all_running() {
  [[ $(kubectl get pods -A -o jsonpath='{range .items[*]}{.metadata.namespace}{"/"}{.status.phase}{"\n"}{end}' |
    grep -cE '^(prod|dev)/Running') == 4 ]]
}
wait_for 90 all_running || kubectl get pods -A -o wide
wait_for 30 bash -c "[[ \$(kubectl -n prod get endpoints server -o jsonpath='{.subsets[*].addresses[*].ip}') != '' ]]"
SERVER=$(kubectl -n prod get pod server -o jsonpath='{.status.podIP}')
CIP=$(kubectl -n prod get svc server -o jsonpath='{.spec.clusterIP}')
A_IP=$(kubectl -n prod get pod client-a -o jsonpath='{.status.podIP}')
D_IP=$(kubectl -n dev get pod client-d -o jsonpath='{.status.podIP}')
NODE2_CIDR=$(kubectl get node node-2 -o jsonpath='{.spec.podCIDR}')
echo "server $SERVER (ClusterIP $CIP), client-a $A_IP, client-d $D_IP, node-2 pods $NODE2_CIDR"

# can NS POD URL: a request from that pod is answered within 2 s (busybox's wget -T crashes).
can() { kubectl -n "$1" exec "$2" -- timeout 2 wget -q -O /dev/null "$3" >/dev/null 2>&1; }
cannot() { ! can "$@"; }
allowed() { can "$@" || fail "$1/$2 cannot reach $3"; }
blocked() { ! can "$@" || fail "$1/$2 reaches $3"; }
policy() { kubectl apply -f - >/dev/null || fail "apply a policy"; }
# node_rules NODE: the agent's filter rules in that node's namespace.
node_rules() { ip netns exec "$(node_ns "$1")" iptables-save -t filter | grep -E '^-A MINIK8S-N(ETPOL|P)'; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
# until_ms CMD...: runs CMD every 20 ms until it succeeds (10 s at most); prints the milliseconds.
until_ms() {
  local start; start=$(ms)
  for _ in $(seq 500); do "$@" >/dev/null 2>&1 && { echo $(( $(ms) - start )); return 0; }; sleep 0.02; done
  echo "timeout"; return 1
}

step "default allow: every client reaches the pod and the ClusterIP"
allowed prod client-a "http://$SERVER:8080/"
allowed prod client-b "http://$SERVER:9090/"
allowed dev client-d "http://$CIP/"

step "default-deny-ingress (the documentation's) isolates prod's pods"
start=$(ms)
policy <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny-ingress, namespace: prod}
spec:
  podSelector: {}
  policyTypes: [Ingress]
YAML
server_isolated() { node_rules node-1 | grep -q -- "-d $SERVER/32 .*ingress"; }
t=$(until_ms server_isolated); echo "policy create -> server isolated on node-1: $(( $(ms) - start )) ms (rules seen after ${t} ms of polling)"
blocked prod client-a "http://$SERVER:8080/"
blocked prod client-b "http://$SERVER:8080/"
blocked dev client-d "http://$CIP/"
expect_eq "$(node_rules node-2 | grep -c 'ingress')" "1" "node-2 isolates its own prod pod (client-a) and only that"

step "allow role=client of prod on the named port 'http' only"
policy <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-clients, namespace: prod}
spec:
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from: [{podSelector: {matchLabels: {role: client}}}]
    ports: [{port: http}]
YAML
wait_for 5 can prod client-a "http://$SERVER:8080/"
allowed prod client-a "http://$CIP/"
blocked prod client-a "http://$SERVER:9090/"
blocked prod client-b "http://$SERVER:8080/"
blocked dev client-d "http://$SERVER:8080/"

step "allow clients of namespaces team=dev (namespaceSelector and podSelector in one peer) on 9000-9100"
policy <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-dev-clients, namespace: prod}
spec:
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from:
    - namespaceSelector: {matchLabels: {team: dev}}
      podSelector: {matchLabels: {role: client}}
    ports: [{protocol: TCP, port: 9000, endPort: 9100}]
YAML
wait_for 5 can dev client-d "http://$SERVER:9090/"
blocked dev client-d "http://$SERVER:8080/"
blocked prod client-b "http://$SERVER:9090/"

step "a pod label change opens and closes the way within a second"
B_IP=$(kubectl -n prod get pod client-b -o jsonpath='{.status.podIP}')
b_allowed() { node_rules node-1 | grep -q -- "-s $B_IP/32 -p tcp -m tcp --dport 8080 -j RETURN"; }
start=$(ms)
kubectl -n prod label pod client-b role=client --overwrite >/dev/null
t=$(until_ms b_allowed); label_ms=$(( $(ms) - start ))
echo "label role=client -> rule on node-1: ${label_ms} ms"
[[ $t != timeout && $label_ms -lt 1500 ]] || fail "rules followed the label in ${label_ms} ms"
allowed prod client-b "http://$SERVER:8080/"
start=$(ms)
kubectl -n prod label pod client-b role=other --overwrite >/dev/null
b_closed() { ! b_allowed; }
t=$(until_ms b_closed)
unlabel_ms=$(( $(ms) - start ))
echo "label role=other -> rule gone on node-1: ${unlabel_ms} ms"
[[ $t != timeout && $unlabel_ms -lt 1500 ]] || fail "rules followed the label back in ${unlabel_ms} ms"
blocked prod client-b "http://$SERVER:8080/"

step "ipBlock: node-2's pod range except client-d, on 9090"
kubectl -n prod delete netpol allow-dev-clients >/dev/null
policy <<YAML
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-node2-block, namespace: prod}
spec:
  podSelector: {matchLabels: {app: server}}
  ingress:
  - from: [{ipBlock: {cidr: "$NODE2_CIDR", except: ["$D_IP/32"]}}]
    ports: [{port: 9090}]
YAML
wait_for 5 can prod client-a "http://$SERVER:9090/"
blocked dev client-d "http://$SERVER:9090/"
blocked prod client-b "http://$SERVER:9090/"

step "deny-all egress in dev blocks DNS too; the documentation's DNS allow brings it back"
kubectl -n prod delete netpol --all >/dev/null
dns_ok() { kubectl -n dev exec client-d -- timeout 2 nslookup server.prod.svc.cluster.local >/dev/null 2>&1; }
wait_for 10 dns_ok || fail "DNS from client-d before any egress policy"
policy <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny-egress, namespace: dev}
spec:
  podSelector: {}
  policyTypes: [Egress]
YAML
wait_for 5 cannot dev client-d "http://$SERVER:8080/"
! dns_ok || fail "DNS answers despite deny-all egress"
policy <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-dns, namespace: dev}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to:
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}
    ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
YAML
wait_for 5 dns_ok || fail "DNS with the allow-dns policy"
blocked dev client-d "http://$SERVER:8080/"
blocked dev client-d "http://$CIP/"

step "egress to the server's named port 'http' (resolved on the peer) works through the ClusterIP"
policy <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: to-server-http, namespace: dev}
spec:
  podSelector: {matchLabels: {role: client}}
  egress:
  - to: [{namespaceSelector: {matchLabels: {team: prod}}, podSelector: {matchLabels: {app: server}}}]
    ports: [{port: http}]
YAML
wait_for 5 can dev client-d "http://$CIP/"
allowed dev client-d "http://server.prod/"
blocked dev client-d "http://$SERVER:9090/"
expect_eq "$(kubectl -n prod get pod server -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" "True" \
  "the server stayed Ready (the kubelet's probes come from its node)"

step "kubectl get, describe, explain; a bad policy is refused with 422"
out=$(kubectl -n dev get netpol)
expect_contains "$out" "POD-SELECTOR" "kubectl get netpol columns"
expect_contains "$out" "role=client" "the pod selector column"
out=$(kubectl -n dev describe networkpolicy to-server-http)
expect_contains "$out" "PodSelector:" "describe: the pod selector"
expect_contains "$out" "Allowing egress traffic:" "describe: the egress section"
expect_contains "$(kubectl explain networkpolicy.spec.ingress.from.ipBlock 2>&1)" "cidr" "kubectl explain"
out=$(must_fail kubectl apply -f - <<'YAML'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: bad, namespace: dev}
spec:
  podSelector: {}
  ingress:
  - from: [{}]
    ports: [{port: 80, endPort: 70}]
YAML
)
expect_contains "$out" 'The NetworkPolicy "bad" is invalid' "the 422"
expect_contains "$out" 'spec.ingress[0].from[0]: Required value: must specify a peer' "the peer error"
expect_contains "$out" 'spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`' \
  "the endPort error"

step "no policies: the pod chains go, traffic flows again"
kubectl -n dev delete netpol --all >/dev/null
no_pod_chains() { ! node_rules node-2 | grep -q 'MINIK8S-NP[IE]-'; }
wait_for 5 no_pod_chains
allowed dev client-d "http://$SERVER:9090/"
echo "checks took $((SECONDS - T0)) s after cluster up"
finish
