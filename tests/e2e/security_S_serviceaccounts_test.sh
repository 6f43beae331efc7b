#!/usr/bin/env bash
# Service accounts against a real server with the real kubectl: default accounts and the root
# CA ConfigMap per namespace, `kubectl create token`, tokens as credentials (authenticated, then
# authorized by RBAC), revocation by deleting the account, and the admission plugin on pods.
# Server only (no agent): pods stay Pending.
source "$(dirname "$0")/lib.sh"

start_server

step "every namespace gets a default ServiceAccount and kube-root-ca.crt"
kubectl create namespace team >/dev/null
wait_for 10 kubectl -n team get serviceaccount default
wait_for 10 kubectl -n team get configmap kube-root-ca.crt
ca=$(kubectl -n team get configmap kube-root-ca.crt -o jsonpath='{.data.ca\.crt}')
expect_eq "$ca" "$(cat "$SERVER_PKI/ca.crt")" "kube-root-ca.crt holds the cluster CA"

step "the default account comes back when deleted; the CA ConfigMap is repaired when edited"
kubectl -n team delete serviceaccount default >/dev/null
wait_for 10 kubectl -n team get serviceaccount default
kubectl -n team patch configmap kube-root-ca.crt --type merge -p '{"data":{"ca.crt":"forged"}}' \
  >/dev/null
repaired() {
  [[ "$(kubectl -n team get configmap kube-root-ca.crt -o jsonpath='{.data.ca\.crt}')" \
    == "$(cat "$SERVER_PKI/ca.crt")" ]]
}
wait_for 10 repaired

step "kubectl create token"
kubectl -n team create serviceaccount builder >/dev/null
token=$(kubectl -n team create token builder)
expect_contains "$token" "eyJ" "a JWT"
out=$(kubectl -n team create token builder --duration 20m --audience vault -o jsonpath='{.spec}')
expect_contains "$out" '"expirationSeconds":1200' "duration"
expect_contains "$out" '"audiences":["vault"]' "audience"
out=$(must_fail kubectl -n team create token builder --duration 5m)
expect_contains "$out" "may not specify a duration less than 10 minutes" "minimum duration"
out=$(must_fail kubectl -n team create token ghost)
expect_contains "$out" 'serviceaccounts "ghost" not found' "missing account"

step "the token authenticates as the account; RBAC decides"
as_sa() { kubectl --token "$token" --kubeconfig /dev/null -s "$SERVER_URL" \
  --certificate-authority "$SERVER_PKI/ca.crt" "$@"; }
out=$(must_fail as_sa -n team get pods)
expect_contains "$out" 'User "system:serviceaccount:team:builder" cannot list resource "pods"' \
  "authenticated as the service account"
kubectl -n team create rolebinding builder-view --clusterrole view \
  --serviceaccount team:builder >/dev/null
wait_for 10 as_sa -n team get pods
out=$(must_fail as_sa -n team get pods --token "${token%?}x")
expect_contains "$out" "Unauthorized" "a forged signature"

step "deleting the account revokes its tokens"
kubectl -n team delete serviceaccount builder >/dev/null
out=$(must_fail as_sa -n team get pods)
expect_contains "$out" "Unauthorized" "revoked"

step "pods get their account and the kube-api-access volume"
kubectl -n team run web --image busybox --restart Never -- sleep 3600 >/dev/null
sa=$(kubectl -n team get pod web -o jsonpath='{.spec.serviceAccountName}')
expect_eq "$sa" "default" "default service account"
vol=$(kubectl -n team get pod web -o jsonpath='{.spec.volumes[0].name}')
expect_contains "$vol" "kube-api-access-" "api-access volume"
mount=$(kubectl -n team get pod web -o jsonpath='{.spec.containers[0].volumeMounts[0].mountPath}')
expect_eq "$mount" "/var/run/secrets/kubernetes.io/serviceaccount" "mount path"
out=$(kubectl -n team run quiet --image busybox --restart Never \
  --overrides '{"spec":{"automountServiceAccountToken":false}}' -o jsonpath='{.spec.volumes}' \
  -- sleep 1)
expect_eq "$out" "" "automountServiceAccountToken false: no volume"
out=$(must_fail kubectl -n team run stranger --image busybox --restart Never \
  --overrides '{"spec":{"serviceAccountName":"ghost"}}' -- sleep 1)
expect_contains "$out" 'error looking up service account team/ghost: serviceaccount "ghost" not found' \
  "missing account refused"

step "a token bound to the pod"
bound=$(kubectl -n team create token default --bound-object-kind Pod --bound-object-name web)
expect_contains "$bound" "eyJ" "pod-bound token"
kubectl -n team delete pod web --grace-period 0 --force >/dev/null 2>&1
gone() { ! kubectl -n team get pod web >/dev/null 2>&1; }
wait_for 10 gone
out=$(must_fail kubectl --token "$bound" --kubeconfig /dev/null -s "$SERVER_URL" \
  --certificate-authority "$SERVER_PKI/ca.crt" -n team get pods)
expect_contains "$out" "Unauthorized" "token of a deleted pod"

finish
