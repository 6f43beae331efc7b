# Shared helpers for the e2e scenarios: start a real minik8s server (and etcd when asked) on free
# loopback ports in a private temp dir, run the real kubectl against it, clean up on any exit.
# Source it; then call start_server [sqlite|etcd].
set -euo pipefail

MINIK8S_BIN=${MINIK8S_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin/minik8s}
E2E_DIR=$(mktemp -d /tmp/minik8s-e2e.XXXXXX)
export KUBECACHEDIR="$E2E_DIR/kubecache"
export HOME="$E2E_DIR/home"   # kubectl's cache and config stay private to this run
mkdir -p "$HOME"
E2E_PIDS=()
FAILURES=0

# $(our_children PID...): those of the PIDs that are still children of the calling shell (running,
# or exited and not yet reaped; in a subshell, the subshell's own). A PID recorded long ago may
# name another test's process by now (pid_max is 32768 here and every thread takes a PID: the
# space wraps within minutes under a full test run), so nothing is signalled by a bare recorded
# PID. Call it in a command substitution: its parent is then the caller.
our_children() {
  local self=$BASHPID caller pid
  caller=$(ps -o ppid= -p "$self" | tr -d ' ')
  for pid in "$@"; do
    [[ "$(ps -o ppid= -p "$pid" 2>/dev/null | tr -d ' ')" == "$caller" ]] && echo "$pid"
  done
  return 0
}

# stop_children PID...: TERM to those of the PIDs that are still children of this shell.
stop_children() {
  local pid
  for pid in $(our_children "$@"); do kill "$pid" 2>/dev/null; done
  return 0
}

cleanup() {
  local rc=$?
  # TERM first so our processes stop what they started (a registry, a containerd), then KILL;
  # then anything still running from this run's private directory (grandchildren).
  for pid in $(our_children "${E2E_PIDS[@]}"); do kill "$pid" 2>/dev/null || true; done
  sleep 0.5
  for pid in $(our_children "${E2E_PIDS[@]}"); do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${E2E_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for pid in $(pgrep -f "$E2E_DIR" 2>/dev/null); do
    [[ "$pid" != "$$" ]] && kill -9 "$pid" 2>/dev/null || true
  done
  if ((rc != 0)); then
    echo "--- server log (tail)"; tail -n 40 "$E2E_DIR/server.log" 2>/dev/null || true
  fi
  rm -rf "$E2E_DIR"
  exit $rc
}
trap cleanup EXIT

# free_port: a free TCP port on 127.0.0.1 below the kernel's ephemeral range (32768-60999), so
# that no socket bound to port 0 meanwhile (containerd's streaming server, a client) can take it
# between this check and the server that binds it.
free_port() {
  /usr/bin/python3 -c '
import random, socket
for _ in range(200):
    p = random.randint(20000, 32000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break'
}

start_etcd() {
  local cport pport
  cport=$(free_port); pport=$(free_port)
  etcd --name e2e --data-dir "$E2E_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
    --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "e2e=http://127.0.0.1:$pport" >"$E2E_DIR/etcd.log" 2>&1 &
  E2E_PIDS+=($!)
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$cport/health" >/dev/null 2>&1 && break
    sleep 0.1
  done
  ETCD_URL="etcd://127.0.0.1:$cport"
}

# start_server [sqlite|etcd]: SERVER_URL, KUBECONFIG and SERVER_PID are set afterwards. Extra
# server flags come from SERVER_ARGS ("--max-requests-inflight 6").
start_server() {
  local backend=${1:-sqlite}
  local datastore=""
  if [[ "$backend" == etcd ]]; then
    [[ -n "${ETCD_URL:-}" ]] || start_etcd
    datastore="--datastore $ETCD_URL"
  fi
  SERVER_PORT=${SERVER_PORT:-$(free_port)}
  # shellcheck disable=SC2086
  "$MINIK8S_BIN" server --data-dir "$E2E_DIR/server" --listen "127.0.0.1:$SERVER_PORT" \
    $datastore ${SERVER_ARGS:-} >>"$E2E_DIR/server.log" 2>&1 &
  SERVER_PID=$!
  E2E_PIDS+=($SERVER_PID)
  SERVER_URL="https://127.0.0.1:$SERVER_PORT"
  SERVER_PKI="$E2E_DIR/server/pki"
  # The server writes its kubeconfig once it serves.
  for _ in $(seq 1 150); do
    [[ -s "$E2E_DIR/server/kubeconfig" ]] && api_curl -sf "$SERVER_URL/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  api_curl -sf "$SERVER_URL/readyz" >/dev/null || { echo "server did not start"; return 1; }
  export KUBECONFIG="$E2E_DIR/server/kubeconfig"
  JOIN_TOKEN=$(cat "$E2E_DIR/server/token")
}

# curl with the admin's client certificate of the server started by start_server.
api_curl() {
  curl --cacert "$SERVER_PKI/ca.crt" --cert "$SERVER_PKI/admin.crt" --key "$SERVER_PKI/admin.key" "$@"
}

# The flags an agent started by a test joins the start_server server with.
agent_join_flags() {
  echo --server "$SERVER_URL" --token "$JOIN_TOKEN" --ca-file "$SERVER_PKI/ca.crt"
}

step() { echo "=== $*"; }

fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }

# expect_contains "<haystack>" "<needle>" "<what>"
expect_contains() {
  if [[ "$1" != *"$2"* ]]; then
    fail "$3: expected to find '$2' in:"; echo "$1" | head -20 >&2
  fi
}

expect_not_contains() {
  if [[ "$1" == *"$2"* ]]; then
    fail "$3: did not expect '$2' in:"; echo "$1" | head -20 >&2
  fi
}

expect_eq() {
  if [[ "$1" != "$2" ]]; then fail "$3: expected '$2', got '$1'"; fi
}

# Runs a command that must fail; prints its combined output.
must_fail() {
  local out
  if out=$("$@" 2>&1); then fail "expected failure: $*"; fi
  echo "$out"
}

# wait_for <seconds> <command...>: retries until the command succeeds.
wait_for() {
  local t=$1; shift
  local end=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || { fail "timed out waiting for: $*"; return 1; }
    sleep 0.2
  done
}

finish() {
  if ((FAILURES > 0)); then echo "$FAILURES check(s) failed"; exit 1; fi
  echo "all checks passed"
}

# start_cluster NAME SUBNET [NODES] [extra `cluster up` flags...]: a whole cluster (`minik8s
# cluster up`) with its own names: NAME (1-6 chars) prefixes its namespaces and links, SUBNET is
# the underlay's first three octets (e.g. 172.29.102), the data dir is /tmp/minik8s-e2e-NAME, so a
# crashed earlier run is found and removed first. Sets CL_DIR, CL_PREFIX, KUBECONFIG and
# NODE_NS_<i>; the cluster is taken down (with --purge) on exit.
start_cluster() {
  CL_PREFIX=$1; CL_SUBNET=$2; local nodes=${3:-3}; shift 3 || shift $#
  CL_DIR=/tmp/minik8s-e2e-$CL_PREFIX
  CL_ARGS=(--data-dir "$CL_DIR" --prefix "$CL_PREFIX" --underlay "$CL_SUBNET.0/24")
  "$MINIK8S_BIN" cluster down --purge "${CL_ARGS[@]}" >/dev/null 2>&1 || true
  # Keep the script's exit status for cleanup (it reports failures by it).
  trap 'rc=$?; cluster_down_quiet; (exit $rc); cleanup' EXIT
  local start=$SECONDS
  # Prometheus and the node exporter only where a test asks for them (--monitoring).
  [[ " $* " == *" --monitoring "* ]] || set -- "$@" --no-monitoring
  # A host directory under the CSI volumes unless a test asks for GlusterFS (--storage gluster,
  # the default of `cluster up` where it is installed, costs ~10 s per up).
  [[ " $* " == *" --storage "* ]] || set -- "$@" --storage dir
  if ! "$MINIK8S_BIN" cluster up "${CL_ARGS[@]}" --nodes "$nodes" --timeout 240 "$@"; then
    tail -n 30 "$CL_DIR"/logs/*.log
    return 1
  fi
  echo "cluster up took $((SECONDS - start)) s"
  export KUBECONFIG="$CL_DIR/kubeconfig"
}
cluster_cmd() { "$MINIK8S_BIN" cluster "$1" "${CL_ARGS[@]}" "${@:2}"; }
# dump_cluster_logs: the tail of each log of the cluster's processes.
dump_cluster_logs() {
  local f
  for f in "$CL_DIR"/logs/*.log; do echo "--- $f (tail)"; tail -n 15 "$f"; done 2>/dev/null
}
cluster_down_quiet() {
  if [[ -n "${CL_DIR:-}" ]]; then
    if ((FAILURES > 0)); then
      dump_cluster_logs
      # E2E_KEEP_LOGS=DIR keeps the whole logs of a failed run (the tails above are often cut).
      if [[ -n "${E2E_KEEP_LOGS:-}" ]]; then
        mkdir -p "$E2E_KEEP_LOGS" && cp -r "$CL_DIR/logs" "$E2E_KEEP_LOGS/$CL_PREFIX-$$" 2>/dev/null
      fi
    fi
    "$MINIK8S_BIN" cluster down --purge "${CL_ARGS[@]}" >/dev/null 2>&1 || true
  fi
}
# node_ns NODE: the network namespace name of a cluster node (for ip -n / nsenter).
node_ns() { echo "$CL_PREFIX-$1"; }

# host_cni_cleanup: what an agent run in the host namespace left in the host's nat table: its
# network's masquerade chain (MINIK8S-POD-MASQ), per-pod masquerade rules and chains of our
# "minik8s" network (older agents), and portmap's CNI-HOSTPORT-* chains once no pod uses them.
host_cni_cleanup() {
  local c
  nat_delete_postrouting '-j MINIK8S-POD-MASQ'
  nat_drop_chain MINIK8S-POD-MASQ
  nat_delete_postrouting 'name: \\"minik8s\\"'
  for c in $(iptables-save -t nat | grep -o '^:CNI-[0-9a-f]\{24\}' | tr -d ':'); do
    nat_drop_chain "$c"
  done
  if [[ $(iptables-save -t nat) != *$'\n-A CNI-DN-'* ]]; then
    iptables -w -t nat -D PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT 2>/dev/null || true
    iptables -w -t nat -D OUTPUT -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT 2>/dev/null || true
    iptables -w -t nat -D POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j CNI-HOSTPORT-MASQ 2>/dev/null || true
    for c in CNI-HOSTPORT-DNAT CNI-HOSTPORT-MASQ CNI-HOSTPORT-SETMARK; do
      nat_drop_chain "$c"
    done
  fi
}

# nat_delete_postrouting PATTERN: deletes the nat POSTROUTING rules whose iptables-save line
# matches PATTERN (grep). None is not an error (cleanups run under set -e, in EXIT traps).
nat_delete_postrouting() {
  local line
  iptables-save -t nat | grep -- '-A POSTROUTING' | grep -- "$1" | sed 's/^-A /-D /' |
    while read -r line; do eval iptables -w -t nat "$line" 2>/dev/null || true; done || true
}

# nat_drop_chain CHAIN: flushes and deletes a nat chain, if there is one.
nat_drop_chain() {
  iptables -w -t nat -F "$1" 2>/dev/null || true
  iptables -w -t nat -X "$1" 2>/dev/null || true
}
