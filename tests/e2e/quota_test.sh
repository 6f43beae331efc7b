#!/usr/bin/env bash
# ResourceQuota and LimitRange on a 1-node cluster with the real kubectl: a LimitRange gives a
# pod default requests and limits and refuses one over its max; a ResourceQuota of pods=2 and
# requests.cpu=1 refuses the third pod with Kubernetes' message, `kubectl describe quota` shows
# Used/Hard, a namespace admin may read but not change it, deleting a pod frees the quota, and a
# Deployment beyond the quota shows FailedCreate events on its ReplicaSet.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 1 node"
start_cluster quota 172.29.136 1 || exit 1

BUSYBOX=minik8s/busybox:1.35
# pod NAME [CPU]: a pod of busybox in namespace team, requesting CPU when given.
pod() {
  local resources=""
  [[ -n "${2:-}" ]] && resources=", resources: {requests: {cpu: $2}}"
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: $BUSYBOX, command: [sleep, "3600"]$resources}
YAML
}

step "a LimitRange gives a pod its default requests and limits"
kubectl create namespace limited >/dev/null
kubectl -n limited apply -f - >/dev/null <<YAML
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - type: Container
    default: {cpu: 200m, memory: 64Mi}
    defaultRequest: {cpu: 100m, memory: 32Mi}
    max: {cpu: 500m}
YAML
expect_contains "$(kubectl -n limited get limits)" "CREATED AT" "kubectl get limits columns"
grep -Eq '^ *Container +cpu +- +500m +100m +200m +-' <<<"$(kubectl -n limited describe limits limits)" ||
  fail "kubectl describe limits: the Container cpu row"
expect_contains "$(kubectl explain limitrange.spec.limits.type 2>&1)" "The type of resource that this limit applies to" \
  "kubectl explain limitrange"
pod defaulted | kubectl -n limited apply -f - >/dev/null || fail "create pod defaulted"
expect_eq "$(kubectl -n limited get pod defaulted -o jsonpath='{.metadata.annotations.kubernetes\.io/limit-ranger}')" \
  "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c" \
  "the limit-ranger annotation"
expect_eq "$(kubectl -n limited get pod defaulted -o jsonpath='{.spec.containers[0].resources}')" \
  '{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"100m","memory":"32Mi"}}' \
  "the defaulted resources"
out=$(must_fail kubectl -n limited apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers:
  - {name: c, image: $BUSYBOX, resources: {limits: {cpu: "1"}}}
YAML
)
expect_contains "$out" 'Error from server (Forbidden): error when creating "STDIN": pods "big" is forbidden: maximum cpu usage per Container is 500m, but limit is 1' \
  "the refusal of a pod over the LimitRange's max"

step "a ResourceQuota of pods=2 and requests.cpu=1 refuses the third pod"
kubectl create namespace team >/dev/null
kubectl -n team create quota compute --hard=pods=2,requests.cpu=1 >/dev/null || fail "create quota"
quota_used() { kubectl -n team get quota compute -o jsonpath='{.status.used.pods}/{.status.used.requests\.cpu}'; }
quota_is() { [[ $(quota_used) == "$1" ]]; }
wait_for 30 quota_is 0/0
pod p1 500m | kubectl -n team apply -f - >/dev/null || fail "create p1"
pod p2 400m | kubectl -n team apply -f - >/dev/null || fail "create p2"
expect_eq "$(quota_used)" "2/900m" "status.used after two pods"
out=$(pod p3 500m | must_fail kubectl -n team apply -f -)
expect_contains "$out" 'Error from server (Forbidden): error when creating "STDIN": pods "p3" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=500m, used: pods=2,requests.cpu=900m, limited: pods=2,requests.cpu=1' \
  "the refusal of the third pod"
out=$(pod norequest | must_fail kubectl -n team apply -f -)
expect_contains "$out" 'pods "norequest" is forbidden: failed quota: compute: must specify requests.cpu for: c' \
  "a pod without the request the quota tracks"
out=$(kubectl -n team describe quota compute)
echo "$out"
grep -Eq '^pods +2 +2$' <<<"$out" || fail "describe quota: pods 2/2"
grep -Eq '^requests.cpu +900m +1$' <<<"$out" || fail "describe quota: requests.cpu 900m/1"
expect_contains "$(kubectl -n team get quota)" "pods: 2/2, requests.cpu: 900m/1" "kubectl get quota"
out=$(kubectl describe namespace team)
expect_contains "$out" "Resource Quotas" "describe namespace: its quotas"
grep -Eq '^ +requests.cpu +900m +1$' <<<"$out" || fail "describe namespace: requests.cpu 900m/1"

step "a namespace's admin reads its quota but cannot change it"
kubectl -n team create rolebinding alice-admin --clusterrole=admin --user=alice >/dev/null
# The binding applies within a second.
admin_reads() { [[ $(kubectl -n team auth can-i get resourcequotas --as=alice) == yes ]]; }
wait_for 10 admin_reads
expect_eq "$(kubectl -n team auth can-i update resourcequotas --as=alice 2>/dev/null)" "no" \
  "admin cannot raise its quota"
expect_eq "$(kubectl -n team auth can-i create limitranges --as=alice 2>/dev/null)" "no" \
  "admin cannot create limit ranges"

step "deleting a pod frees the quota"
kubectl -n team delete pod p1 --wait=true >/dev/null || fail "delete p1"
create_p3() { pod p3 500m | kubectl -n team apply -f -; }
wait_for 30 create_p3
wait_for 30 quota_is 2/900m

step "a Deployment beyond the quota: FailedCreate events on its ReplicaSet"
kubectl -n team apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: $BUSYBOX, command: [sleep, "3600"], resources: {requests: {cpu: 100m}}}
YAML
failed_create() {
  kubectl -n team get events --field-selector reason=FailedCreate \
    -o jsonpath='{range .items[*]}{.involvedObject.kind} {.message}{"\n"}{end}' |
    grep -q '^ReplicaSet Error creating: pods "web-[a-z0-9]*-[a-z0-9]*" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2$'
}
wait_for 60 failed_create
kubectl -n team get events --field-selector reason=FailedCreate | head -3
expect_eq "$(kubectl -n team get pods -l app=web -o name)" "" "no pod of the Deployment exists"

finish
