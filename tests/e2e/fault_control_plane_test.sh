#!/usr/bin/env bash
# Fault: the control plane (minik8s server: API, scheduler, controllers) killed with SIGKILL
# while a prober asks a Service every 100 ms from node-1. Pods keep serving through the rules
# already on the nodes (no failed probe); `cluster up` restarts only the server; every object is
# intact, controllers create no duplicate pods, agents resume their watches, nodes stay Ready.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
DOWN_SECONDS=${DOWN_SECONDS:-8}

step "a 2-node cluster, a 2-replica web Deployment behind a Service, a prober on node-1"
start_fault_cluster ha 172.29.106 2 || exit 1
web_app web 2 || fail "web endpoints"
start_prober node-1 "http://$WEB_CIP/"
sleep 2
before_pods=$(pod_containers app=web)
before_objects=$(kubectl get deployments,replicasets,services,endpoints -o name | sort)
echo "$before_pods"

step "SIGKILL the server; the Service keeps answering for $DOWN_SECONDS s without it"
mark=$(probe_mark)
server_pid=$(cluster_state .serverPid)
agents=$(cluster_state '[.nodes[].pid | tostring] | join(" ")')
kill -9 "$server_pid"
t_kill=$(date +%s.%N)
sleep 1
must_fail kubectl get nodes --request-timeout=2s >/dev/null
sleep "$DOWN_SECONDS"

step "cluster up restarts only the server"
out=$(cluster_cmd up 2>&1)
echo "$out"
expect_contains "$out" "resuming" "up resumes"
expect_not_contains "$out" "restarted" "no agent restarted"
expect_not_contains "$out" "registry on" "registry kept"
echo "control plane back $(elapsed "$t_kill") s after the kill"
expect_eq "$(cluster_state '[.nodes[].pid | tostring] | join(" ")')" "$agents" "the same agents"
[[ $(cluster_state .serverPid) != "$server_pid" ]] || fail "a new server PID"

step "objects intact, no duplicate pods, nodes Ready"
sleep 6  # controllers resync; a duplicate would appear now
expect_eq "$(kubectl get deployments,replicasets,services,endpoints -o name | sort)" "$before_objects" \
  "the same objects after the restart"
expect_eq "$(pod_containers app=web)" "$before_pods" "the same pods, containers and restart counts"
out=$(kubectl get nodes)
echo "$out"
for n in 1 2; do expect_contains "$out" "node-$n   Ready" "node-$n Ready"; done
expect_not_contains "$out" "NotReady" "no node NotReady"

step "the cluster works: scale to 3 (controllers, scheduler, an agent's watch)"
kubectl scale deployment web --replicas=3 >/dev/null
wait_for 60 bash -c "[[ \$(kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 3 ]]" ||
  kubectl get pods -o wide
sleep 1
stop_prober
probe_report "control plane SIGKILL, down ${DOWN_SECONDS} s" "$mark"
expect_eq "$PROBE_FAILED" "0" "no failed probe while the control plane was down"
finish
