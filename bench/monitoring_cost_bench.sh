#!/usr/bin/env bash
# What monitoring costs, on a 1-node cluster with N pods (default 50) and the monitoring addon
# (Prometheus scraping every 5 s): the agent's CPU (share of one core) and RSS while Prometheus
# scrapes it (/metrics and /metrics/cadvisor through the API server, every 5 s) for WITH seconds
# (default 1800: the issue's 30 minutes), then Prometheus' own RSS, head series, samples per
# second and bytes on disk per sample appended (WAL and chunks in its volume); then the agent
# again with Prometheus scaled to 0 (nothing scrapes it) for WITHOUT seconds (default 120), in
# the same run. Reports figures, never fails on a value.
#
#   sudo MINIK8S_BIN=build/bin/minik8s bash bench/monitoring_cost_bench.sh [N] [WITH] [WITHOUT]
# Cluster "bmon" on the underlay 172.29.126.0/24 unless BENCH_CLUSTER / BENCH_SUBNET say
# otherwise. Cleans up on any exit.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
N=${1:-50}
WITH=${2:-1800}
WITHOUT=${3:-120}
bench_load start
bench_cluster bmon 172.29.126 1 --monitoring || exit 1
subnet=${BENCH_SUBNET:-172.29.126}
PROM=http://$subnet.2:30090
query() {
  curl -sf --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1" |
    jq -r '.data.result[0].value[1] // "n/a"'
}
agent=$(jq -r '.nodes[0].pid' "$CL_DIR/cluster.json")
ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_mib() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
# measure LABEL SECONDS: the agent's CPU and RSS over SECONDS.
measure() {
  local c0 c1 t0 t1
  c0=$(cpu_ticks "$agent"); t0=$(now_s)
  sleep "$2"
  c1=$(cpu_ticks "$agent"); t1=$(now_s)
  echo "agent $1: cpu $(awk -v c=$((c1 - c0)) -v hz="$ticks" -v a="$t0" -v b="$t1" \
    'BEGIN {printf "%.1f %% of a core", 100 * c / hz / (b - a)}'), rss $(rss_mib "$agent") MiB"
}

kubectl create deployment sleepers --image=minik8s/busybox --replicas="$N" -- sleep 100000 >/dev/null
wait_for 300 bash -c "[[ \$(kubectl get deploy sleepers -o jsonpath='{.status.readyReplicas}') == $N ]]" ||
  { echo "the $N pods did not start"; exit 1; }
wait_for 120 bash -c "[[ \$(kubectl get deploy -n monitoring prometheus -o jsonpath='{.status.readyReplicas}') == 1 ]]"
echo "$N pods running"
wait_for 60 bash -c "[[ \$(curl -sf $PROM/api/v1/targets | jq '[.data.activeTargets[] | select(.health == \"up\")] | length') -ge 4 ]]"
measure "scraped every 5 s (${WITH} s)" "$WITH"
echo "cadvisor samples per scrape of the agent: $(query 'scrape_samples_scraped{job="kubernetes-cadvisor"}')"
echo "agent /metrics/cadvisor scrape duration: $(query 'scrape_duration_seconds{job="kubernetes-cadvisor"}') s"
echo "prometheus uptime: $(query 'time() - process_start_time_seconds{job="prometheus"}') s"
echo "prometheus rss: $(query 'process_resident_memory_bytes{job="prometheus"} / 1048576') MiB"
echo "prometheus head series: $(query 'prometheus_tsdb_head_series')"
echo "samples appended per second: $(query 'rate(prometheus_tsdb_head_samples_appended_total[1m])')"
total=$(query 'prometheus_tsdb_head_samples_appended_total')
# Prometheus' claim is the only volume of this cluster.
bytes=$(du -sb "$CL_DIR/volumes" 2>/dev/null | cut -f1)
echo "on disk: ${bytes:-n/a} bytes for $total samples ($(awk -v b="${bytes:-0}" -v s="$total" \
  'BEGIN {if (s > 0) printf "%.2f", b / s; else print "n/a"}') bytes per sample, WAL included)"

kubectl scale deploy -n monitoring prometheus --replicas=0 >/dev/null
wait_for 60 bash -c "[[ -z \$(kubectl get pods -n monitoring -l app=prometheus -o name) ]]"
sleep 5
measure "without scraping (${WITHOUT} s)" "$WITHOUT"
bench_load end
