#!/usr/bin/env bash
# Starts a local minik8s control plane in the background (data in $MINIK8S_DATA_DIR, default
# /var/lib/minik8s) and waits until it answers. `scripts/run-local.sh stop` stops it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/build/bin/minik8s"
data=${MINIK8S_DATA_DIR:-/var/lib/minik8s}
port=${MINIK8S_PORT:-6443}
pidfile="$data/server.pid"
mkdir -p "$data"

running() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

if [[ "${1:-start}" == "stop" ]]; then
  if running; then kill "$(cat "$pidfile")"; echo "minik8s server stopped"; fi
  rm -f "$pidfile"
  exit 0
fi

if running; then
  echo "minik8s server already running (pid $(cat "$pidfile"))"
else
  nohup "$bin" server --data-dir "$data" --listen "127.0.0.1:$port" >"$data/server.log" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    running || { echo "minik8s server failed to start; see $data/server.log" >&2; exit 1; }
    sleep 0.1
  done
fi
echo "minik8s is up. Use it with:"
echo "  export KUBECONFIG=$data/kubeconfig"
echo "  kubectl get namespaces"
