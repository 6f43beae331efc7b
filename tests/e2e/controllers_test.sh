#!/usr/bin/env bash
# Deployments as a user drives them with the real kubectl, against a real server and the
# controller-manager, without any node agent: pods becoming Running/Ready is simulated by
# patching their status, as a kubelet would.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_server
# The server may already run the controllers in-process; never run two sets at once.
sleep 2
if ! grep -q "controller-manager: replicaset" "$E2E_DIR/server.log"; then
  "${CONTROLLER_MANAGER_BIN:-$MINIK8S_BIN}" controller-manager --kubeconfig "$KUBECONFIG" >"$E2E_DIR/cm.log" 2>&1 &
  E2E_PIDS+=($!)
fi

k() { kubectl "$@"; }

# Marks every pod of the app that is not Ready yet as Running and Ready.
mark_ready() {
  local p
  for p in $(k get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.phase}{"\n"}{end}' |
             awk '$2 != "Running" {print $1}'); do
    k patch pod "$p" --subresource=status --type=merge \
      -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null 2>&1 || true
  done
}

pod_count() { k get pods -l "app=$1" --no-headers 2>/dev/null | wc -l; }
has_pods() { [[ $(pod_count "$1") -eq $2 ]]; }

# rollout_with_ready <deployment>: keeps marking pods ready until `rollout status` returns.
rollout_with_ready() {
  k rollout status "deployment/$1" --timeout=60s >"$E2E_DIR/rollout.out" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do mark_ready "$1"; sleep 0.3; done
  wait "$pid" || fail "rollout status for $1 failed: $(cat "$E2E_DIR/rollout.out")"
  cat "$E2E_DIR/rollout.out"
}

step "a Deployment creates a ReplicaSet and its pods"
k create deployment web --image=nginx:1 --replicas=3 >/dev/null
wait_for 20 has_pods web 3
rs=$(k get rs -l app=web -o jsonpath='{.items[*].metadata.name}')
hash=$(k get rs "$rs" -o jsonpath='{.metadata.labels.pod-template-hash}')
expect_eq "$rs" "web-$hash" "ReplicaSet named after the template hash"
expect_eq "$(k get rs "$rs" -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" "1" "RS revision"
expect_eq "$(k get rs "$rs" -o jsonpath='{.metadata.ownerReferences[0].kind}')" "Deployment" "RS owner"
out=$(rollout_with_ready web)
expect_contains "$out" "successfully rolled out" "first rollout"
expect_eq "$(k get deploy web -o jsonpath='{.status.availableReplicas}')" "3" "available replicas"

step "scaling up and down"
k scale deployment web --replicas=5 >/dev/null
wait_for 20 has_pods web 5
k scale deployment web --replicas=3 >/dev/null
wait_for 20 has_pods web 3
out=$(rollout_with_ready web)
expect_contains "$out" "successfully rolled out" "rollout after scaling"

step "a deleted pod is replaced"
victim=$(k get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
k delete pod "$victim" >/dev/null
wait_for 20 has_pods web 3
expect_not_contains "$(k get pods -l app=web --no-headers)" "$victim " "deleted pod is gone"

step "kubectl set image rolls out a new ReplicaSet"
k set image deployment/web nginx=nginx:2 >/dev/null
out=$(rollout_with_ready web)
expect_contains "$out" "successfully rolled out" "rollout of nginx:2"
expect_eq "$(k get rs -l app=web --no-headers | wc -l)" "2" "two ReplicaSets"
images=$(k get pods -l app=web -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | sort -u)
expect_eq "$images" "nginx:2" "all pods run the new image"
expect_eq "$(k get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" "2" "deployment revision"
history=$(k rollout history deployment/web)
expect_contains "$history" "1 " "history lists revision 1"
expect_contains "$history" "2 " "history lists revision 2"

step "kubectl rollout undo returns to the old template"
k rollout undo deployment/web >/dev/null
out=$(rollout_with_ready web)
expect_contains "$out" "successfully rolled out" "rollout of the undo"
expect_eq "$(k get deploy web -o jsonpath='{.spec.template.spec.containers[0].image}')" "nginx:1" "template image after undo"
images=$(k get pods -l app=web -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | sort -u)
expect_eq "$images" "nginx:1" "pods back on nginx:1"
expect_eq "$(k get rs -l app=web --no-headers | wc -l)" "2" "the old ReplicaSet was reused"
expect_eq "$(k get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" "3" "revision after undo"

step "deleting the Deployment removes its ReplicaSets and pods"
k delete deployment web >/dev/null
no_rs() { [[ -z $(k get rs -l app=web --no-headers 2>/dev/null) ]]; }
wait_for 30 no_rs
wait_for 30 has_pods web 0

finish
