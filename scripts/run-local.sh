#!/usr/bin/env bash
# Starts (or resumes) a local 3-node minik8s cluster: the server and the cluster registry in this
# network namespace, three nodes each in its own network namespace with its own containerd and
# agent (`minik8s cluster up`). Data in $MINIK8S_DATA_DIR (default /var/lib/minik8s).
# `scripts/run-local.sh stop` removes it again (`minik8s cluster down`).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/build/bin/minik8s"
data=${MINIK8S_DATA_DIR:-/var/lib/minik8s}
nodes=${MINIK8S_NODES:-3}

if [[ "${1:-start}" == "stop" ]]; then
  exec "$bin" cluster down --data-dir "$data"
fi
exec "$bin" cluster up --data-dir "$data" --nodes "$nodes"
