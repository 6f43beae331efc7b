#!/usr/bin/env bash
# Installs what minik8s needs to build, test and run, from Debian's packages. Idempotent,
# non-interactive; run as root on Debian 12.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake ninja-build ccache pkg-config git lld lld-16  # lld: links several times faster; 16: DT_RELR
  libboost-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev
  zlib1g-dev libsqlite3-dev libssl-dev libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  libgtest-dev libgmock-dev libbenchmark-dev clang-format
  clang libclang-rt-14-dev  # libFuzzer targets (tests/fuzz)
  # run and test
  etcd-server etcd-client python3 python3-kubernetes curl jq iproute2 procps bc
  containerd runc containernetworking-plugins docker-registry busybox-static iptables
  nftables  # the service proxy's nftables mode (agent --proxy-mode nftables)
  buildah  # minik8s image build -t NAME DIR (Dockerfiles)
  dnsmasq-base  # cluster DNS: the binary only, no system service holding port 53
  nginx  # the Dns gateway (host/path forwarding), run by each agent in its node namespace
  glusterfs-server glusterfs-client  # cluster up --storage gluster: one glusterd per node, FUSE mounts
  prometheus prometheus-node-exporter python3-prometheus-client  # the monitoring addon's images
  libjs-chart.js chromium  # the monitoring dashboard (Chart.js) and its headless-browser test
  slurmctld slurmd slurm-client munge  # scripts/slurm.sh: a local Slurm cluster for SlurmJob
  fio  # bench/storage_volumes_bench.sh: IOPS inside a pod (image minik8s/fio, built by the bench)
  wrk  # load on serverless Functions (tests/e2e/serverless_test.sh, bench/serverless_bench.sh)
  mariadb-server mariadb-client  # the minik8s/mariadb image (examples/mariadb, tests/e2e/mariadb_test.sh)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's etcd-server package starts a system etcd on 2379; minik8s starts its own etcd when it
# needs one, so keep the packaged service out of the way.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  systemctl disable --now etcd >/dev/null 2>&1 || true
fi
# Likewise the packaged containerd and registry services: every minik8s node runs its own
# containerd, and the cluster registry is started by minik8s; with --storage gluster each node
# runs its own glusterd; Prometheus and the node exporter run in the cluster (addons/monitoring);
# MariaDB runs in pods of the minik8s/mariadb image.
for svc in containerd docker-registry nginx glusterd prometheus prometheus-node-exporter mariadb; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl disable --now "$svc" >/dev/null 2>&1 || true
  fi
done
if ! command -v kubectl >/dev/null 2>&1; then
  echo "setup: warning: kubectl is not on PATH; the e2e tests need the real kubectl (v1.32)" >&2
fi
echo "setup: all dependencies present"
