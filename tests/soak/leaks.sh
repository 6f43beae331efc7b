# Leak checks of the chaos soak, sourced by soak.sh (CL_DIR, CL_PREFIX, NODES, SUBNET, SOAK_DIR,
# violation() set). record_netns after each fault keeps the network namespaces of the pod
# sandboxes seen; node_leaks runs on the settled cluster, host_leaks after `cluster down`.

node_sock() { echo "$CL_DIR/nodes/$1/containerd/containerd.sock"; }

# running_sandboxes NODE: "id pod-uid netns-path" of each sandbox whose task runs.
running_sandboxes() {
  local sock id
  sock=$(node_sock "$1")
  local running
  running=$(ctr -a "$sock" -n k8s.io tasks ls 2>/dev/null | awk '$3 == "RUNNING" { print $1 }')
  for id in $(ctr -a "$sock" -n k8s.io containers ls -q 'labels."io.cri-containerd.kind"==sandbox' 2>/dev/null); do
    grep -qx "$id" <<<"$running" || continue
    ctr -a "$sock" -n k8s.io containers info "$id" 2>/dev/null |
      jq -r --arg id "$id" '"\($id) \(.Labels["io.kubernetes.pod.uid"]) \((.Spec.linux.namespaces[] | select(.type == "network") | .path) // "-")"'
  done
}

record_netns() {
  local n
  for n in $(seq 1 "$NODES"); do
    running_sandboxes "node-$n" | awk '$3 != "-" { print $3 }' >>"$SOAK_DIR/netns.seen"
  done
  sort -u -o "$SOAK_DIR/netns.seen" "$SOAK_DIR/netns.seen"
}

# api_pod_uids NODE: the UIDs of the pods bound to NODE that are not being deleted and not done.
api_pod_uids() {
  kubectl get pods -A --field-selector "spec.nodeName=$1" -o json |
    jq -r '.items[] | select(.metadata.deletionTimestamp == null and .status.phase != "Succeeded" and .status.phase != "Failed") | .metadata.uid' | sort
}

# The node's pods and its containerd agree: one running sandbox per pod, none other.
sandboxes_match() {
  [[ $(running_sandboxes "$1" | awk '{ print $2 }' | sort) == "$(api_pod_uids "$1")" ]]
}

count_procs() { pgrep -f "$1" | wc -l; }

# shim_ids NODE: the sandbox id of each shim of the node's containerd (one shim per sandbox).
shim_ids() {
  pgrep -af "containerd-shim-runc-v2 .*-address $(node_sock "$1")" | grep -oE -- '-id [0-9a-f]{64}' | awk '{ print $2 }' | sort
}
shims_match() { [[ $(shim_ids "$1") == "$(running_sandboxes "$1" | awk '{ print $1 }' | sort)" ]]; }

node_leaks() {
  local n node dir sock pods sandboxes ids uid m endpoints ip
  record_netns
  endpoints=$(kubectl get endpoints -A -o jsonpath='{.items[*].subsets[*].addresses[*].ip}' | tr ' ' '\n')
  for n in $(seq 1 "$NODES"); do
    node=node-$n dir=$CL_DIR/nodes/node-$n sock=$(node_sock "node-$n")
    # Processes: one agent, one containerd, one dnsmasq, one gateway nginx; a shim per sandbox.
    [[ $(count_procs " agent .*--data-dir $dir ") == 1 ]] || violation "leak: $node runs $(count_procs " agent .*--data-dir $dir ") agents"
    [[ $(count_procs "^containerd --config $dir/containerd/config.toml") == 1 ]] ||
      violation "leak: $node runs $(count_procs "^containerd --config $dir/containerd/config.toml") containerd"
    [[ $(count_procs "^dnsmasq .*$dir/dns/") == 1 ]] || violation "leak: $node runs $(count_procs "^dnsmasq .*$dir/dns/") dnsmasq"
    [[ $(count_procs "^nginx: master process nginx -p $dir/gateway/") -le 1 ]] ||
      violation "leak: $node runs several gateway nginx"
    # Sandboxes: the pods of the API and nothing else (the agent may still be finishing).
    wait_for 60 sandboxes_match "$node" ||
      violation "leak: $node's running sandboxes ($(running_sandboxes "$node" | awk '{ print $2 }' | xargs)) are not its pods ($(api_pod_uids "$node" | xargs))"
    pods=$(api_pod_uids "$node")
    # A shim exits shortly after its sandbox's last container is removed.
    wait_for 30 shims_match "$node" || violation "leak: $node has shims of ids that are no running sandbox: $(shim_ids "$node" | grep -vxF -f <(running_sandboxes "$node" | awk '{ print $1 }') | xargs)"
    # Mounts under the node's directory: those of live containers (rootfs, shm) and pods only.
    ids=$(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null)
    while read -r m; do
      [[ -z $m ]] && continue
      id=$(grep -oE '[0-9a-f]{64}' <<<"$m" | head -1)
      uid=$(grep -oE '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}' <<<"$m" | head -1)
      if [[ -n $id ]] && ! grep -qx "$id" <<<"$ids"; then violation "leak: mount $m of a container no longer running"; fi
      if [[ -n $uid ]] && ! grep -qx "$uid" <<<"$pods"; then violation "leak: mount $m of a pod no longer on $node"; fi
    done < <(awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts)
    # Pod cgroups: only the node's pods.
    for m in /sys/fs/cgroup/*/minik8s/"$CL_PREFIX-$node"/kubepods/pod*; do
      [[ -d $m ]] || continue
      uid=${m##*/pod}
      grep -qx "$uid" <<<"$pods" || violation "leak: cgroup $m of a pod no longer on $node"
    done
    # Service rules: every DNAT to a pod address goes to a current endpoint.
    for ip in $(nsenter --net="/var/run/netns/$(node_ns "$node")" iptables-save -t nat | grep -oE 'to-destination 10\.244\.[0-9.]+' | awk '{ print $2 }' | sort -u); do
      grep -qx "$ip" <<<"$endpoints" || violation "leak: $node's nat table still DNATs to $ip, no endpoint"
    done
  done
  # Network namespaces of sandboxes seen during the run: only the live ones remain.
  local live
  live=$(for n in $(seq 1 "$NODES"); do running_sandboxes "node-$n"; done | awk '{ print $3 }')
  while read -r m; do
    [[ -z $m ]] && continue
    grep -qx "$m" <<<"$live" || [[ ! -e $m ]] || violation "leak: network namespace $m of a removed sandbox"
  done <"$SOAK_DIR/netns.seen"
}

host_leaks() {
  local out
  out=$(pgrep -af "$CL_DIR(/| |$)" | grep -v "^$$ ")
  [[ -z $out ]] || violation "leak after down: processes $(echo "$out" | cut -c1-120 | head -5)"
  out=$(pgrep -af "$SOAK_DIR/" | grep -v "^$$ ")
  [[ -z $out ]] || violation "leak after down: soak processes $(echo "$out" | cut -c1-120 | head -5)"
  out=$(grep -e "$CL_DIR/" -e "/netns/$CL_PREFIX-" /proc/mounts)
  [[ -z $out ]] || violation "leak after down: mounts $(echo "$out" | head -5)"
  out=$(ip netns list | grep "^$CL_PREFIX-")
  [[ -z $out ]] || violation "leak after down: network namespaces $out"
  out=$(ip -o link show | grep -E "[0-9]+: $CL_PREFIX[-@:]")
  [[ -z $out ]] || violation "leak after down: links $(echo "$out" | cut -c1-80)"
  out=$(ip route show | grep -F "$SUBNET.")
  [[ -z $out ]] || violation "leak after down: routes $out"
  out=$( (iptables-save; iptables-save -t nat) 2>/dev/null | grep -e "$CL_PREFIX-" -e "minik8s $CL_PREFIX:" -e "$SUBNET\.")
  [[ -z $out ]] || violation "leak after down: iptables rules $(echo "$out" | head -5)"
  out=$(ls -d /sys/fs/cgroup/*/minik8s/"$CL_PREFIX"-* 2>/dev/null)
  [[ -z $out ]] || violation "leak after down: cgroups $(echo "$out" | head -3)"
  while read -r m; do
    [[ -z $m || ! -e $m ]] || violation "leak after down: network namespace $m"
  done <"$SOAK_DIR/netns.seen"
}
