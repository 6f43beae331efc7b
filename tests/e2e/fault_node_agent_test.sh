#!/usr/bin/env bash
# Faults on one node, with a prober asking a Service every 100 ms from node-1:
# 1. node-2's agent killed with SIGKILL and restarted by `cluster up`: no container restarts,
#    container IDs unchanged, status updates resume, node Ready.
# 2. node-2's containerd killed with SIGKILL: the agent restarts it, containers survive (shims),
#    the agent reconnects (a new pod runs there, exec works).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "a 2-node cluster, web on both nodes, a prober on node-1"
start_fault_cluster ha 172.29.106 2 || exit 1
web_app web 2 || fail "web endpoints"
start_prober node-1 "http://$WEB_CIP/"
before=$(pod_containers app=web)
echo "$before"
expect_contains "$before" " node-2 " "a web pod on node-2"

step "SIGKILL node-2's agent, then cluster up"
mark=$(probe_mark)
agent=$(agent_pid node-2)
kill -9 "$agent"
t_kill=$(date +%s.%N)
sleep 3
out=$(cluster_cmd up 2>&1)
echo "$out"
expect_contains "$out" "agent of node-2 restarted" "up restarts node-2's agent"
expect_not_contains "$out" "agent of node-1" "node-1's agent kept"
expect_not_contains "$out" "server on" "server kept"
echo "node-2 Ready again $(elapsed "$t_kill") s after the kill"
[[ $(agent_pid node-2) != "$agent" ]] || fail "a new agent PID"
sleep 5
expect_eq "$(pod_containers app=web)" "$before" "same containers, no restart"
probe_report "agent SIGKILL" "$mark"
expect_eq "$PROBE_FAILED" "0" "no failed probe around the agent restart"
step "node-2's cluster DNS follows Services created after the restart (one dnsmasq)"
kubectl create service clusterip late --tcp=80:80 >/dev/null
late_ip=$(kubectl get service late -o jsonpath='{.spec.clusterIP}')
node2_ip=$(cluster_state '.nodes[] | select(.name == "node-2") | .ip')
wait_for 20 bash -c "nsenter --net=/var/run/netns/$(node_ns node-2) busybox nslookup late.default.svc.cluster.local $node2_ip 2>&1 | grep -q '$late_ip'" ||
  fail "node-2's DNS does not resolve a Service created after the agent restart"
expect_eq "$(pgrep -f "$CL_DIR/nodes/node-2/dns" | wc -l)" "1" "one dnsmasq on node-2"
step "status updates resume: a new pod on node-2 runs and reports"
kubectl run after-agent --image=minik8s/busybox:1.35 --image-pull-policy=IfNotPresent \
  --overrides='{"spec":{"nodeName":"node-2"}}' --command -- sleep 3600 >/dev/null
wait_for 60 bash -c "[[ \$(kubectl get pod after-agent -o jsonpath='{.status.phase}') == Running ]]"

step "SIGKILL node-2's containerd: the agent restarts it, containers survive"
mark=$(probe_mark)
old=$(containerd_pid node-2)
kill -9 "$old"
t_kill=$(date +%s.%N)
wait_for 30 bash -c "p=\$(cat $CL_DIR/nodes/node-2/containerd/containerd.pid); [[ \$p != $old ]] && kill -0 \$p" ||
  fail "containerd not restarted"
echo "containerd of node-2 back $(elapsed "$t_kill") s after the kill"
sleep 3
expect_eq "$(pod_containers app=web)" "$before" "same containers after the containerd restart"
wait_for 20 bash -c "[[ \$(kubectl exec after-agent -- echo exec-after-containerd 2>&1) == exec-after-containerd ]]" ||
  fail "exec through the new containerd: $(kubectl exec after-agent -- echo exec-after-containerd 2>&1)"
kubectl run after-containerd --image=minik8s/busybox:1.35 --image-pull-policy=IfNotPresent \
  --overrides='{"spec":{"nodeName":"node-2"}}' --command -- sleep 3600 >/dev/null
wait_for 60 bash -c "[[ \$(kubectl get pod after-containerd -o jsonpath='{.status.phase}') == Running ]]" ||
  fail "a pod started after the containerd restart"
expect_contains "$(kubectl get node node-2)" " Ready " "node-2 Ready"
stop_prober
probe_report "containerd SIGKILL" "$mark"
expect_eq "$PROBE_FAILED" "0" "no failed probe around the containerd restart"
finish
