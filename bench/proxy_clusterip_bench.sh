#!/usr/bin/env bash
# Requests/s and latency through a ClusterIP versus straight to the pod IP, on a 3-node
# `minik8s cluster up`: one busybox httpd pod on node-2 behind a Service; the load
# (bench/proxy_clusterip_bench.cc: 2,000 requests, concurrency 8, a new connection per request)
# runs in node-1's namespace, so both paths cross the VXLAN overlay and only the service proxy's
# DNAT differs. Reports only. Cluster "bsvc" on 172.29.112.0/24 unless BENCH_CLUSTER /
# BENCH_SUBNET say otherwise; cleans up (cluster, namespaces, links, rules, processes) on any exit.
#   MINIK8S_BIN=build/bin/minik8s [BENCH_BIN=build/bin/proxy_clusterip_bench] \
#     bash bench/proxy_clusterip_bench.sh
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
BENCH_BIN=${BENCH_BIN:-$(dirname "$MINIK8S_BIN")/proxy_clusterip_bench}
[[ -x "$BENCH_BIN" ]] || { echo "no $BENCH_BIN (ninja proxy_clusterip_bench)"; exit 1; }
REQUESTS=${REQUESTS:-2000}
CONCURRENCY=${CONCURRENCY:-8}
bench_load start

bench_cluster bsvc 172.29.112 3 || exit 1
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: bench-web, labels: {app: bench-web}}
spec:
  nodeSelector: {kubernetes.io/hostname: node-2}
  containers:
  - name: web
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 8080 -h /www"]
---
apiVersion: v1
kind: Service
metadata: {name: bench-web}
spec:
  selector: {app: bench-web}
  ports: [{port: 80, targetPort: 8080}]
YAML
wait_for 90 bash -c "[[ \$(kubectl get endpoints bench-web -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 1 ]]" ||
  { kubectl get pods -o wide; exit 1; }
POD_IP=$(kubectl get pod bench-web -o jsonpath='{.status.podIP}')
CIP=$(kubectl get svc bench-web -o jsonpath='{.spec.clusterIP}')
sleep 1
echo "client: node-1 namespace; server: pod $POD_IP on node-2 (service $CIP)"
ip netns exec "$(node_ns node-1)" "$BENCH_BIN" --requests "$REQUESTS" --concurrency "$CONCURRENCY" \
  "clusterip=http://$CIP/" "pod=http://$POD_IP:8080/"
bench_load end
