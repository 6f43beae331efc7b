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
#    An HPA on the app's own request rate (custom.metrics.k8s.io served from Prometheus) scales it.
# 4. The dashboard (minik8s/dashboard on NodePort 30091): every page renders with data in headless
#    Chromium, a broken query shows its error on the chart; screenshots in tests/artifacts.
# 5. A node that joins is scraped; a node that leaves is no longer a target.
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
expect_eq "$(series 'node_filesystem_avail_bytes{mountpoint="/",node="node-1"}')" "1" \
  "node-1's root filesystem (the host's / seen through --path.rootfs)"
expect_eq "$(series 'node_network_receive_bytes_total{node="node-1",device!="lo"}' | awk '{print ($1 > 0)}')" "1" \
  "node-1's interfaces"
expect_eq "$(series 'apiserver_request_total{job="kubernetes-apiservers"}' | awk '{print ($1 > 0)}')" "1" \
  "the API server's request counters"
expect_eq "$(series 'kubelet_running_pods{job="kubernetes-nodes"}')" "2" "each agent's own metrics"
expect_eq "$(series 'sum by (node) (rest_client_requests_total{job="kubernetes-nodes"})')" "2" \
  "each agent's API client requests (client-go's rest_client_requests_total)"
wait_for 30 bash -c '[[ $(series "container_cpu_usage_seconds_total{namespace=\"monitoring\",container=\"prometheus\"}") -ge 1 ]]' ||
  fail "cAdvisor series of the prometheus container"

rules() { curl -sf --max-time 5 "$PROM/api/v1/rules" | jq -r '.data.groups[].rules[] | "\(.name) \(.health)"'; }
export -f rules
wait_for 30 bash -c '[[ $(rules | grep -c " ok$") == 4 ]]' || { fail "the 4 default alert rules evaluate"; rules; }

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

step "the dashboard: every page renders with data in headless Chromium (screenshots kept)"
DASH=http://172.29.125.2:30091
ART=${E2E_ARTIFACTS:-$PWD/artifacts}/monitoring
mkdir -p "$ART" && rm -f "$ART"/*.png
wait_for 60 curl -sf "$DASH/healthz" || kubectl get pods -n monitoring
expect_contains "$(cluster_cmd status)" "dashboard        ready    $DASH" "cluster status prints the dashboard's URL"
browse() {
  timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --virtual-time-budget=20000 "$@" 2>/dev/null
}
# One "state points" line per panel, in the dashboard's order.
panels() { grep -o 'data-state="[a-z]*" data-points="[0-9]*"' | sed -E 's/data-state="([a-z]*)" data-points="([0-9]*)"/\1 \2/'; }
for d in cluster nodes pods application control-plane; do
  dom=$(browse --dump-dom "$DASH/#$d")
  states=$(panels <<<"$dom")
  expect_eq "$(grep -vc '^ok ' <<<"$states")" "0" \
    "dashboard $d: no panel failed ($(tr '\n' ',' <<<"$states") $(grep -o 'class="error">[^<]*' <<<"$dom" | tr '\n' ' '))"
  expect_eq "$(awk '$2 > 0' <<<"$states" | wc -l | awk '{print ($1 > 0)}')" "1" "dashboard $d has data"
  browse --window-size=1400,1200 --screenshot="$ART/$d.png" "$DASH/#$d"
  [[ -s "$ART/$d.png" ]] || fail "screenshot of dashboard $d"
done
app=$(browse --dump-dom "$DASH/#application" | panels)
expect_eq "$(head -n 2 <<<"$app" | awk '$1 == "ok" && $2 > 0' | wc -l)" "2" \
  "the app's request rate and latency charts have points"
expect_eq "$(browse --dump-dom "$DASH/#cluster" | panels | sed -n 5p | cut -d' ' -f2)" "2" "the nodes table: 2 nodes"
bad=$(browse --dump-dom "$DASH/#query=rate(app_requests_total")
expect_contains "$(panels <<<"$bad")" "error 0" "a broken query: the panel says error"
expect_contains "$bad" "parse error" "and shows Prometheus' message"
expect_contains "$bad" 'id="title">Query<' "the page itself renders"
echo "screenshots: $(ls "$ART"/*.png | tr '\n' ' ')"

step "an HPA scales the app on its own request rate (custom.metrics.k8s.io from Prometheus)"
cm=/apis/custom.metrics.k8s.io/v1beta2/namespaces/default
expect_eq "$(kubectl get --raw "$cm/pods/*/app_requests?labelSelector=app%3Dmetrics-app" |
  jq -r '.items | map(.describedObject.name) | length')" "2" "the rate of each of the 2 pods"
expect_eq "$(kubectl get --raw "$cm/deployments/metrics-app/app_requests" | jq -r .describedObject.kind)" \
  "Deployment" "an Object metric: the deployment's pods summed"
expect_contains "$(kubectl get --raw "$cm/pods/*/no_such_metric" 2>&1)" "NotFound" "an unknown metric: NotFound"
kubectl apply -f - >/dev/null <<'YAML' || fail "create the HPA"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: metrics-app}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: metrics-app}
  minReplicas: 2
  maxReplicas: 4
  metrics:
    - type: Pods
      pods:
        metric: {name: app_requests}
        target: {type: AverageValue, averageValue: "2"}
YAML
t_load=$(now)
( end=$((SECONDS + 120)); while ((SECONDS < end)); do
    curl -sf --max-time 1 http://172.29.125.2:30900/hello >/dev/null; sleep 0.03; done ) &
load_pid=$!
wait_for 120 bash -c '[[ $(kubectl get deploy metrics-app -o jsonpath="{.spec.replicas}") == 4 ]]' ||
  { fail "scaled to 4 on app_requests"; kubectl describe hpa metrics-app | tail -15; }
echo "FIGURE load start -> HPA at 4 replicas: $(elapsed "$t_load") s"
expect_contains "$(kubectl get hpa metrics-app)" "/2" "kubectl get hpa shows current/target"
stop_children "$load_pid"; wait "$load_pid" 2>/dev/null
kubectl delete hpa metrics-app >/dev/null

step "a pod with a wrong metrics port is a down target with its error; discovery goes on"
kubectl run wrong-port --image=minik8s/busybox --annotations=prometheus.io/scrape=true \
  --annotations=prometheus.io/port=9999 -- sleep 3600 >/dev/null
wait_for 60 bash -c 'targets | grep -Eq "^kubernetes-pods down node-[0-9] wrong-port .*connection refused"' ||
  { fail "wrong-port down with 'connection refused'"; targets; }
want=$((2 + $(kubectl get deploy metrics-app -o jsonpath='{.status.readyReplicas}')))
wait_for 30 bash -c "[[ \$(up_count kubernetes-pods) == $want ]]" ||
  { fail "the exporters and the app's $((want - 2)) pods are up beside it"; targets; }

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
