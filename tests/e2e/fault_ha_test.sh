#!/usr/bin/env bash
# HA control plane (`minik8s cluster up --ha --servers 3`: 3 etcd members, 3 API servers, a TCP
# balancer for kubectl; agents know every server). With a prober asking a Service every 100 ms
# from node-1 (docs/ha.md, section 4):
# 1. SIGKILL the server holding the scheduler and controller-manager Leases: kubectl keeps
#    working through the balancer, both Leases move to another server within ~15 s plus a
#    retry, a Deployment created after the kill runs, nodes stay Ready, the agents fail over.
# 2. SIGKILL the new leading server too (one server left): the Leases move again, a scale-up
#    runs, nodes stay Ready.
# 3. SIGKILL the etcd leader member: writes and scheduling go on after etcd's election.
# 4. `cluster up` restarts the killed member and servers.
# FAULT_HA_NAME / FAULT_HA_SUBNET / FAULT_HA_SERVERS override the cluster name, underlay and
# server count (with 2 servers step 2 is skipped).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

NAME=${FAULT_HA_NAME:-ha2}
SUBNET=${FAULT_HA_SUBNET:-172.29.107}
SERVERS=${FAULT_HA_SERVERS:-3}
step "cluster up --ha: 3 etcd members, $SERVERS servers, 2 nodes"
start_fault_cluster "$NAME" "$SUBNET" 2 --ha --servers "$SERVERS" || exit 1
out=$(cluster_cmd status)
echo "$out"
expect_contains "$out" "server $((SERVERS - 1))" "$SERVERS servers"
expect_contains "$out" "etcd m2" "a third etcd member"
expect_contains "$out" "api balancer" "the balancer"
expect_contains "$(cat "$KUBECONFIG")" "$SUBNET.1:6443" "kubeconfig names the balancer"
web_app web 2 || fail "web endpoints"
start_prober node-1 "http://$WEB_CIP/"

holder() { kubectl get lease -n kube-system "$1" -o jsonpath='{.spec.holderIdentity}'; }
# wait_lease_moves LEASE FROM: waits until LEASE has a holder other than FROM.
wait_lease_moves() {
  wait_for 60 bash -c "h=\$(kubectl get lease -n kube-system $1 -o jsonpath='{.spec.holderIdentity}'); [[ -n \$h && \$h != '$2' ]]"
}
killed_ports=()
replicas=1
# all_running N: true when the after-kill Deployment has N pods, all Running.
all_running() {
  [[ $(kubectl get pods -l app=after-kill -o jsonpath='{.items[*].status.phase}') == "$(printf 'Running %.0s' $(seq "$1") | sed 's/ $//')" ]]
}
wait_for 30 bash -c "[[ -n \$(kubectl get lease -n kube-system kube-controller-manager -o jsonpath='{.spec.holderIdentity}') ]]"
cm_holder=$(holder kube-controller-manager)
sched_holder=$(holder kube-scheduler)
echo "leaders: controller-manager $cm_holder, scheduler $sched_holder"
# The identity ends with the server's advertised address: server i listens on 6444+i.
port=${cm_holder##*:}
leader_index=$((port - 6444))
leader_pid=$(cluster_state ".servers[$leader_index]")
[[ "$leader_pid" =~ ^[0-9]+$ ]] || { fail "no leader server found ($cm_holder)"; finish; }

step "SIGKILL the leading server (server $leader_index, pid $leader_pid)"
mark=$(probe_mark)
kill -9 "$leader_pid"
t_kill=$(date +%s.%N)
killed_ports+=("$port")
kill_iso=$(date -u +%Y-%m-%dT%H:%M:%S)
out=$(kubectl get nodes --request-timeout=5s 2>&1)
expect_contains "$out" "node-1" "kubectl works through the balancer right after the kill"
echo "kubectl answered $(elapsed "$t_kill") s after the kill"
wait_lease_moves kube-controller-manager "$cm_holder" ||
  fail "controller-manager Lease did not move"
t_cm=$(elapsed "$t_kill")
t_sched="(not on that server)"
if [[ "$sched_holder" == "$cm_holder" ]]; then
  wait_lease_moves kube-scheduler "$sched_holder" ||
    fail "scheduler Lease did not move"
  t_sched=$(elapsed "$t_kill")
fi
echo "leadership moved: controller-manager after $t_cm s, scheduler after $t_sched s (to $(holder kube-controller-manager))"
kubectl create deployment after-kill --image=minik8s/busybox:1.35 -- sleep 3600 >/dev/null ||
  fail "create a deployment after the kill"
wait_for 90 bash -c "[[ \$(kubectl get pods -l app=after-kill -o jsonpath='{.items[*].status.phase}') == Running ]]" ||
  { fail "the deployment created after the kill runs"; kubectl get pods -o wide; }
echo "deployment created after the kill Running $(elapsed "$t_kill") s after the kill"
out=$(kubectl get nodes)
expect_not_contains "$out" "NotReady" "nodes stay Ready"
for n in node-1 node-2; do  # the agents moved to the other server: their Leases are renewed
  wait_for 30 bash -c "[[ \$(kubectl get lease -n kube-node-lease $n -o jsonpath='{.spec.renewTime}') > '$kill_iso' ]]" ||
    fail "$n's agent renewed its Lease after the kill"
done
probe_report "leader server SIGKILL" "$mark"
expect_eq "$PROBE_FAILED" "0" "no failed probe while the leader died"

if ((SERVERS >= 3)); then
  cm_holder=$(holder kube-controller-manager)
  sched_holder=$(holder kube-scheduler)
  port=${cm_holder##*:}
  leader_index=$((port - 6444))
  leader_pid=$(cluster_state ".servers[$leader_index]")
  step "SIGKILL the new leading server too (server $leader_index, pid $leader_pid): one left"
  mark=$(probe_mark)
  kill -9 "$leader_pid"
  t_kill=$(date +%s.%N)
  killed_ports+=("$port")
  out=$(kubectl get nodes --request-timeout=5s 2>&1)
  expect_contains "$out" "node-1" "kubectl works through the balancer with one server left"
  wait_lease_moves kube-controller-manager "$cm_holder" || fail "controller-manager Lease moved again"
  t_cm=$(elapsed "$t_kill")
  wait_lease_moves kube-scheduler "$sched_holder" || fail "scheduler Lease moved again"
  echo "leadership moved again: controller-manager after $t_cm s, scheduler after $(elapsed "$t_kill") s (to $(holder kube-controller-manager))"
  replicas=$((replicas + 1))
  kubectl scale deployment after-kill --replicas=$replicas >/dev/null || fail "scale on the last server"
  wait_for 90 all_running $replicas ||
    { fail "the scaled-up pod runs on the last server"; kubectl get pods -o wide; }
  echo "scale-up Running $(elapsed "$t_kill") s after the second kill"
  expect_not_contains "$(kubectl get nodes)" "NotReady" "nodes stay Ready with one server"
  probe_report "second server SIGKILL" "$mark"
  expect_eq "$PROBE_FAILED" "0" "no failed probe while the second server died"
fi

endpoints=http://$SUBNET.1:2379,http://$SUBNET.1:2381,http://$SUBNET.1:2383
etcd_leader=$(ETCDCTL_API=3 etcdctl --endpoints=$endpoints endpoint status -w json |
  jq -r '.[] | select(.Status.leader == .Status.header.member_id) | .Endpoint')
member=$(( (${etcd_leader##*:} - 2379) / 2 ))
[[ "$etcd_leader" == http* ]] || member=0
step "SIGKILL etcd member m$member (the etcd leader: $etcd_leader)"
mark=$(probe_mark)
kill -9 "$(cluster_state ".etcd[$member]")"
t_kill=$(date +%s.%N)
replicas=$((replicas + 1))
kubectl scale deployment after-kill --replicas=$replicas >/dev/null || fail "scale with an etcd member down"
wait_for 60 all_running $replicas ||
  fail "scaled pods run with an etcd member down"
echo "a write and a scale-up done $(elapsed "$t_kill") s after the etcd kill"
kubectl create configmap during-etcd-loss --from-literal=a=b >/dev/null || fail "create a configmap"
expect_not_contains "$(kubectl get nodes)" "NotReady" "nodes stay Ready"
probe_report "etcd member SIGKILL" "$mark"
expect_eq "$PROBE_FAILED" "0" "no failed probe while an etcd member was down"

step "cluster up restarts the member and the server"
out=$(cluster_cmd up 2>&1)
echo "$out"
expect_contains "$out" "etcd: 3 members healthy" "etcd member restarted"
for p in "${killed_ports[@]}"; do
  expect_contains "$out" "server on https://$SUBNET.1:$p ready" "killed server :$p restarted"
done
cluster_cmd status >/dev/null || fail "cluster status: everything running"
expect_eq "$(kubectl get configmap during-etcd-loss -o jsonpath='{.data.a}')" "b" "data written during the loss"
stop_prober
finish
