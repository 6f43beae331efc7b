#!/usr/bin/env bash
# Monitoring end to end on a 2-node `minik8s cluster up --monitoring`, with the real kubectl and
# curl against the real Prometheus (Debian's 2.42, in the cluster):
# 1. Prometheus runs as a Deployment in namespace monitoring with its data on a claim, and
#    answers on NodePort 30090; `cluster status` prints its URL.
# 2. Service discovery: the API servers, each node's agent (/metrics and /metrics/cadvisor through
#    the API server's node proxy) and the node exporter DaemonSet are healthy targets; the SD
#    endpoint needs credentials and RBAC like /metrics.
# 3. An application's own metrics (examples/monitoring): its series are queryable without touching
#    Prometheus' configuration; a pod with a wrong metrics port is a down target with the error;
#    deleting the app removes its targets.
# 4. A node that joins is scraped; a node that leaves is no longer a target.
# Prints: pod Ready -> first sample, delete -> target gone, node join -> first sample.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up --monitoring: 2 nodes"
start_cluster mon 172.29.125 2 --monitoring || exit 1
PROM=http://172.29.125.2:30090
query() { curl -sf --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1"; }
# Number of samples a PromQL expression returns now.
series() { query "$1" | jq -r '.data.result | length' 2>/dev/null || echo 0; }
# "job health node pod url error" per active target.
targets() {
  curl -sf --max-time 5 "$PROM/api/v1/targets?state=active" | jq -r '.data.activeTargets[] |
    "\(.labels.job) \(.health) \(.labels.node // "-") \(.labels.pod // "-") \(.scrapeUrl) \(.lastError)"'
}
up_count() { targets | awk -v j="$1" '$1 == j && $2 == "up"' | wc -l; }
value() { query "$1" | jq -r '.data.result[0].value[1] // 0' 2>/dev/null || echo 0; }
export PROM
export -f query series targets up_count value  # for wait_for's bash -c
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

wait_for 120 bash -c "[[ \$(kubectl get deploy -n monitoring prometheus -o jsonpath='{.status.readyReplicas}') == 1 ]]" ||
  { kubectl get pods -n monitoring -o wide; kubectl describe pods -n monitoring -l app=prometheus | tail -20; }
expect_eq "$(kubectl get pvc -n monitoring prometheus-data -o jsonpath='{.status.phase}')" "Bound" \
  "Prometheus' data on a bound claim"
expect_contains "$(cluster_cmd status)" "prometheus       ready    $PROM" "cluster status prints the URL"
expect_eq "$(curl -sf --max-time 5 "$PROM/-/ready")" "Prometheus Server is Ready." "reachable on the NodePort"

step "targets: API server, agents, cAdvisor, node exporters"
wait_for 60 bash -c '[[ $(up_count kubernetes-nodes) == 2 ]]'
wait_for 30 bash -c '[[ $(up_count kubernetes-cadvisor) == 2 && $(up_count kubernetes-apiservers) == 1 &&
  $(up_count kubernetes-pods) == 2 ]]' || targets
wait_for 30 bash -c '[[ $(series node_memory_MemAvailable_bytes) == 2 ]]'
expect_eq "$(query 'node_memory_MemAvailable_bytes{node="node-2",namespace="monitoring"}' |
  jq -r '.data.result[0].metric.pod' | cut -d- -f1-2)" "node-exporter" "node-2's exporter, with node/namespace/pod labels"
expect_eq "$(series 'apiserver_request_total{job="kubernetes-apiservers"}' | awk '{print ($1 > 0)}')" "1" \
  "the API server's request counters"
expect_eq "$(series 'kubelet_running_pods{job="kubernetes-nodes"}')" "2" "each agent's own metrics"
wait_for 30 bash -c '[[ $(series "container_cpu_usage_seconds_total{namespace=\"monitoring\",container=\"prometheus\"}") -ge 1 ]]' ||
  fail "cAdvisor series of the prometheus container"

step "service discovery needs credentials and the non-resource grant"
sd=https://172.29.125.1:6443/monitoring/sd/node
expect_eq "$(curl -sk -o /dev/null -w '%{http_code}' "$sd")" "401" "anonymous: 401"
kubectl create serviceaccount nobody >/dev/null
expect_eq "$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(kubectl create token nobody)" "$sd")" \
  "403" "a service account without the grant: 403"
doc=$(curl -sk -H "Authorization: Bearer $(kubectl create token prometheus -n monitoring)" "$sd")
expect_eq "$(jq -r '[.[].labels.__meta_kubernetes_node_name] | sort | join(",")' <<<"$doc")" "node-1,node-2" \
  "Prometheus' service account reads the node targets"
expect_eq "$(curl -sk -H "Authorization: Bearer $(kubectl create token prometheus -n monitoring)" \
  https://172.29.125.1:6443/monitoring/sd/ingress | jq -r .reason)" "NotFound" "an unknown role: NotFound"

step "an application's own metrics, found by its annotations"
t0=$(now)
kubectl apply -f "$SOURCE_DIR/examples/monitoring/metrics-app.yaml" >/dev/null || fail "apply the example app"
wait_for 90 bash -c "[[ \$(kubectl get deploy metrics-app -o jsonpath='{.status.readyReplicas}') == 2 ]]" ||
  kubectl get pods -o wide
t_ready=$(now)
echo "metrics-app Ready $(elapsed "$t0") s after apply"
for i in $(seq 1 20); do curl -sf --max-time 2 http://172.29.125.2:30900/hello >/dev/null; done
wait_for 60 bash -c '[[ $(series "app_requests_total{path=\"/hello\"}") -ge 1 ]]' ||
  { fail "the app's counter in Prometheus"; targets; }
echo "FIGURE pod Ready -> first sample: $(elapsed "$t_ready") s"
wait_for 30 bash -c '[[ $(value "sum(app_requests_total{path=\"/hello\"})") -ge 20 ]]' ||
  fail "the 20 requests (and the readiness probes) counted"
expect_eq "$(query 'app_requests_total{path="/hello"}' | jq -r '.data.result[0].metric | [.namespace, .app, (.node | startswith("node-"))] | join(" ")')" \
  "default metrics-app true" "namespace, app and node labels"
expect_eq "$(series 'app_request_duration_seconds_bucket{path="/hello",le="+Inf"}')" "2" "the histogram, per pod"

step "a pod with a wrong metrics port is a down target with its error; discovery goes on"
kubectl run wrong-port --image=minik8s/busybox --annotations=prometheus.io/scrape=true \
  --annotations=prometheus.io/port=9999 -- sleep 3600 >/dev/null
wait_for 60 bash -c 'targets | grep -Eq "^kubernetes-pods down node-[0-9] wrong-port .*connection refused"' ||
  { fail "wrong-port down with 'connection refused'"; targets; }
expect_eq "$(up_count kubernetes-pods)" "4" "the exporters and the app are still up"

step "deleting the app removes its targets"
t_del=$(now)
kubectl delete -f "$SOURCE_DIR/examples/monitoring/metrics-app.yaml" --wait=false >/dev/null
wait_for 60 bash -c '! targets | grep -q " metrics-app-"' ||
  fail "metrics-app targets gone"
echo "FIGURE delete -> target gone: $(elapsed "$t_del") s"
kubectl delete pod wrong-port --wait=false >/dev/null

step "a node that joins is scraped; one that leaves is not a target"
t_join=$(now)
cluster_cmd add-node >/dev/null || fail "add-node"
wait_for 90 bash -c '[[ $(series "up{job=\"kubernetes-nodes\",node=\"node-3\"} == 1") == 1 ]]' ||
  { fail "node-3's agent scraped"; targets; }
echo "FIGURE node join -> first sample: $(elapsed "$t_join") s"
wait_for 60 bash -c '[[ $(series "node_memory_MemAvailable_bytes{node=\"node-3\"}") == 1 ]]' ||
  fail "node-3's exporter scraped"
t_leave=$(now)
cluster_cmd remove-node node-3 >/dev/null || fail "remove-node"
wait_for 60 bash -c '! targets | grep -q " node-3 "' ||
  { fail "node-3's targets gone"; targets; }
echo "FIGURE node leave -> targets gone: $(elapsed "$t_leave") s"
finish
