#!/usr/bin/env bash
# Fault: node-3 cut from the underlay (its veth on the bridge set down) while a prober asks a
# Service every 100 ms from node-1. With short grace and eviction times the node goes NotReady
# (Unknown), its endpoints leave the Service, its pods are recreated on the other nodes; when it
# comes back its stale pods and their containers are removed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
GRACE=${GRACE:-15s}  # above the 10 s node Lease renewal
EVICTION=${EVICTION:-3s}

step "a 3-node cluster (grace $GRACE, eviction $EVICTION), web on every node, a prober on node-1"
start_fault_cluster ha 172.29.106 3 --server-arg=--node-monitor-grace-period=$GRACE \
  --server-arg=--pod-eviction-timeout=$EVICTION || exit 1
web_app web 3 || fail "web endpoints"
before=$(pod_containers app=web)
echo "$before"
lost_pod=$(echo "$before" | awk '$2 == "node-3" { print $1; exit }')
[[ -n "$lost_pod" ]] || { fail "no web pod on node-3"; finish; }
lost_ip=$(kubectl get pod "$lost_pod" -o jsonpath='{.status.podIP}')
lost_cid=$(echo "$before" | awk -v p="$lost_pod" '$1 == p { sub("containerd://", "", $3); print $3 }')
start_prober node-1 "http://$WEB_CIP/"
sleep 1

step "cut node-3 from the underlay"
mark=$(probe_mark)
ip link set "$(node_ns node-3)" down
t_cut=$(date +%s.%N)
node_ready() { kubectl get node node-3 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'; }
wait_for 90 bash -c "[[ \$(kubectl get node node-3 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') != True ]]" ||
  fail "node-3 still Ready"
t_notready=$(elapsed "$t_cut")
echo "node-3 Ready=$(node_ready) after $t_notready s"
wait_for 90 bash -c "! kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | grep -qw '$lost_ip'" ||
  fail "node-3's endpoint still in the Service"
t_endpoint=$(elapsed "$t_cut")
echo "node-3's endpoint left the Service after $t_endpoint s"
wait_for 120 bash -c "[[ \$(kubectl get pods -l app=web -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.phase} {.metadata.deletionTimestamp}{\"\n\"}{end}' | awk '\$1 != \"node-3\" && \$2 == \"Running\" && NF == 2' | wc -l) -ge 3 ]]" ||
  fail "3 web pods Running on the other nodes"
t_moved=$(elapsed "$t_cut")
echo "3 web pods Running on node-1/node-2 after $t_moved s"
kubectl get pods -o wide
# What a user reads about it: the node controller's NodeNotReady on node-3 and its eviction of
# node-3's pod; `kubectl describe node` lists the node's Events.
wait_for 30 bash -c "kubectl get events -A | grep -Eq 'NodeNotReady +node/node-3 +Node node-3 status is now: NodeNotReady'" ||
  fail "NodeNotReady Event of node-3 in kubectl get events -A"
wait_for 30 bash -c "kubectl get events -A | grep -Eq 'TaintManagerEviction +pod/$lost_pod +Marking for deletion Pod default/$lost_pod'" ||
  fail "TaintManagerEviction Event of $lost_pod in kubectl get events -A"
kubectl get events -A | grep -E 'NodeNotReady|TaintManagerEviction|RegisteredNode'
expect_contains "$(kubectl describe node node-3)" "Node node-3 status is now: NodeNotReady" \
  "describe node node-3 shows its NodeNotReady Event"
wait_for 30 bash -c "[[ \$(kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 3 ]]" ||
  fail "3 endpoints again"
sleep 2
probe_report "node lost" "$mark"
lost_failed=$PROBE_FAILED lost_downtime=$PROBE_DOWNTIME
tail_mark=$(probe_mark)
sleep 3
probe_report "after the endpoint left" "$tail_mark"
expect_eq "$PROBE_FAILED" "0" "no failed probe once node-3's endpoint is gone"
if ((PROBE_FAILED > 0)); then
  kubectl get endpoints web -o wide
  ip netns exec "$(node_ns node-1)" iptables-save -t nat | grep -E 'KUBE-(SVC|SEP)-' | grep -E ' -j (DNAT|KUBE-SEP)' | head -n 20
  # The connections to the Service that got no answer, with the endpoint each was sent to (the
  # reply direction's src): a dead endpoint or a live one.
  echo "unanswered connections to $WEB_CIP on node-1:"
  ip netns exec "$(node_ns node-1)" grep -F "dst=$WEB_CIP " /proc/net/nf_conntrack | grep UNREPLIED | head -n 10
fi

step "node-3 comes back: Ready, its stale pod and container removed"
ip link set "$(node_ns node-3)" up
t_back=$(date +%s.%N)
wait_for 90 bash -c "[[ \$(kubectl get node node-3 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') == True ]]" ||
  fail "node-3 Ready again"
echo "node-3 Ready $(elapsed "$t_back") s after it came back"
# Its kubelet tells Ready again (once at registration, once now: one Event, count 2).
wait_for 30 bash -c "[[ \$(kubectl get events -A --field-selector reason=NodeReady,involvedObject.name=node-3 -o jsonpath='{.items[*].count}') -ge 2 ]]" ||
  fail "the kubelet's NodeReady Event of node-3 twice"
wait_for 60 bash -c "! kubectl get pod '$lost_pod' >/dev/null 2>&1" || fail "stale pod $lost_pod still there"
echo "stale pod gone $(elapsed "$t_back") s after node-3 came back"
sock="$CL_DIR/nodes/node-3/containerd/containerd.sock"
wait_for 30 bash -c "! ctr -a $sock -n k8s.io tasks ls -q | grep -q '$lost_cid'" ||
  fail "the stale container $lost_cid still runs on node-3"
expect_eq "$(kubectl get pods -l app=web --no-headers | wc -l)" "3" "3 web pods"
stop_prober
echo "SUMMARY node lost: NotReady ${t_notready} s, endpoint removed ${t_endpoint} s, pods elsewhere ${t_moved} s, probe failures ${lost_failed}, downtime ${lost_downtime} s"
finish
