#!/usr/bin/env bash
# The CNI work of one pod start and stop on a node: ADD and DEL of N sandboxes (one after
# another) through the plugin list the agent writes (bridge without ipMasq + portmap + loopback;
# the node's pods are masqueraded by one chain the network agent makes once), against the list it
# wrote before (the same with the bridge's ipMasq: a chain and rules per pod), alternated twice in
# the same run, in a private node namespace. Per pod:
# wall time and the CPU of the plugins and of what they run (iptables). Needs root and the CNI
# plugins in /usr/lib/cni; cleans up its namespaces and files on any exit.
# Usage: bench/network_cni_chain_bench.sh [N]   (default 30)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces)"; exit 1; }
[[ -x /usr/lib/cni/bridge ]] || { echo "needs the CNI plugins (containernetworking-plugins)"; exit 1; }
N=${1:-30}
NODE=cnibench-node
DATA=$(mktemp -d /tmp/minik8s-cnibench.XXXXXX)
cleanup() {
  for ns in $(ip netns list | awk '{print $1}' | grep "^$NODE"); do ip netns del "$ns"; done
  rm -rf "$DATA"
}
trap cleanup EXIT
cleanup
bridge() {  # ipMasq
  echo '{"type":"bridge","bridge":"cni0","isGateway":true,"ipMasq":'"$1"',"hairpinMode":true,'\
'"mtu":1450,"ipam":{"type":"host-local","ranges":[[{"subnet":"10.250.0.0/24"}]],'\
'"routes":[{"dst":"0.0.0.0/0"}]}}'
}
PORTMAP='{"type":"portmap","capabilities":{"portMappings":true}}'
LOOPBACK='{"type":"loopback"}'
NOW="[$(bridge false),$PORTMAP,$LOOPBACK]"
BEFORE="[$(bridge true),$PORTMAP,$LOOPBACK]"
bench_load start
for round in 1 2; do
  for which in before now; do
    ip netns add "$NODE"
    if [[ $which == now ]]; then
      python3 "$here/net/cni_chain.py" "$NODE" "$NOW" "$N" "$DATA" \
        "no ipMasq, one chain per node (now)" || exit 1
    else
      python3 "$here/net/cni_chain.py" "$NODE" "$BEFORE" "$N" "$DATA" \
        "bridge ipMasq, a chain per pod [baseline]" || exit 1
    fi
    ip netns del "$NODE"
    rm -rf "${DATA:?}"/ipam
  done
done
bench_load end
