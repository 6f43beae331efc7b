# Helpers of the scenario benchmarks (bench/*_bench.sh), on top of tests/e2e/lib.sh (private temp
# dir, TLS kubeconfig, cleanup on any exit, start_cluster). Source it from a bench script.
#
# Every scenario benchmark runs its cluster under a name and underlay subnet of its own (default
# given by the script, never one of an e2e test); BENCH_CLUSTER and BENCH_SUBNET override them so
# that two people on one machine do not collide. The cluster, its namespaces, links, rules and
# processes are removed on exit, failure and Ctrl-C included (start_cluster's EXIT trap).
source "$(dirname "${BASH_SOURCE[0]}")/../tests/e2e/lib.sh"
set +e

# bench_load WHEN: the machine's load average, printed with every result (the machine is shared).
bench_load() { echo "load average ($1): $(cut -d' ' -f1-3 /proc/loadavg)"; }

now_s() { date +%s.%N; }

# bench_cluster DEFAULT_NAME DEFAULT_SUBNET NODES [FLAGS...]: `cluster up` with NODES nodes (and
# FLAGS, e.g. --monitoring), then waits for
# the default ServiceAccount (pods are refused without it). Sets UP_TOTAL_S (from the command to
# all nodes Ready) and UP_AFTER_REGISTRY_S (from the cluster registry being ready, i.e. after
# the local images are built and pushed, to all nodes Ready). Returns non-zero on failure.
bench_cluster() {
  local name=${BENCH_CLUSTER:-$1} subnet=${BENCH_SUBNET:-$2} nodes=$3
  local dir=/tmp/minik8s-e2e-$name
  # A crashed earlier run's cluster goes first, so that its registry log cannot be taken for ours.
  "$MINIK8S_BIN" cluster down --purge --data-dir "$dir" --prefix "$name" \
    --underlay "$subnet.0/24" >/dev/null 2>&1
  local marks="$E2E_DIR/registry-ready-at"
  (
    until grep -qs "registry ready" "$dir/logs/registry.log"; do sleep 0.05; done
    now_s >"$marks"
  ) &
  local watcher=$!
  E2E_PIDS+=("$watcher")
  local t0 t1
  t0=$(now_s)
  start_cluster "$name" "$subnet" "$nodes" "${@:4}" >"$E2E_DIR/cluster-up.log" 2>&1 ||
    { cat "$E2E_DIR/cluster-up.log"; return 1; }
  t1=$(now_s)
  kill "$watcher" 2>/dev/null
  UP_TOTAL_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
  if [[ -s "$marks" ]]; then
    UP_AFTER_REGISTRY_S=$(awk -v a="$(cat "$marks")" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
  else
    UP_AFTER_REGISTRY_S=n/a
  fi
  wait_for 60 kubectl get serviceaccount default -n default || return 1
}
