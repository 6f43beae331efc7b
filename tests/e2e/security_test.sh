#!/usr/bin/env bash
# Security end to end on a 2-node `minik8s cluster up` (TLS by default), with the real kubectl:
# the admin kubeconfig works over TLS (and kubectl exec/logs through the agents' TLS port 10250);
# no credential, a wrong token and a certificate of another CA get 401; the agents' port 10250
# refuses clients without the API server's certificate; a service-account token from a pod reads
# what its Role allows and gets 403 beyond; the official Python client works in a pod with
# load_incluster_config(); `kubectl auth can-i` and `kubectl create token`; a node credential
# cannot modify another node; who may write Roles grants only what they hold, unless they may
# escalate.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 2 nodes"
start_cluster sec 172.29.108 2 || exit 1
API=https://172.29.108.1:6443
PKI=$CL_DIR/server/pki
TMP=$E2E_DIR/sec; mkdir -p "$TMP"

step "admin kubeconfig: TLS with the cluster CA and a client certificate"
expect_contains "$(grep -c certificate-authority-data "$KUBECONFIG")" "1" "kubeconfig carries the CA"
expect_contains "$(kubectl get nodes)" "node-2" "kubectl get nodes over TLS"
expect_contains "$(kubectl auth whoami 2>&1)" "kubernetes-admin" "whoami"
expect_not_contains "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://172.29.108.1:6443/version")" \
  "200" "plain HTTP on the TLS port is refused"

step "401 without a credential, with a wrong token, with another CA's certificate"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' --cacert "$PKI/ca.crt" "$API/api/v1/pods")
expect_eq "$code" "401" "anonymous"
expect_contains "$(cat "$TMP/body")" '"reason":"Unauthorized"' "401 Status"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$PKI/ca.crt" \
  -H "Authorization: Bearer not-a-token" "$API/api/v1/pods")
expect_eq "$code" "401" "wrong token"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
  -subj "/CN=intruder/O=system:masters" -keyout "$TMP/evil.key" -out "$TMP/evil.crt" 2>/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$PKI/ca.crt" --cert "$TMP/evil.crt" \
  --key "$TMP/evil.key" "$API/api/v1/pods")
expect_eq "$code" "401" "self-signed system:masters certificate"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$PKI/ca.crt" "$API/healthz")" "200" \
  "health checks stay open"

step "pods, logs and exec through the agents' TLS port"
kubectl create namespace team >/dev/null
kubectl -n team apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader}
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader-reads-pods}
subjects: [{kind: ServiceAccount, name: reader, namespace: team}]
roleRef: {kind: Role, name: pod-reader, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: v1
kind: Pod
metadata: {name: py}
spec:
  serviceAccountName: reader
  containers:
  - name: py
    image: minik8s/python
    command: ["sh", "-c", "echo started; exec sleep 3600"]
YAML
wait_for 120 bash -c "kubectl -n team get pod py | grep -q Running"
expect_contains "$(kubectl -n team logs py)" "started" "kubectl logs over TLS"
SA_DIR=/var/run/secrets/kubernetes.io/serviceaccount
expect_contains "$(kubectl -n team exec py -- cat $SA_DIR/namespace)" "team" "namespace file"
expect_contains "$(kubectl -n team exec py -- cat $SA_DIR/ca.crt)" "BEGIN CERTIFICATE" "ca.crt"
expect_contains "$(kubectl -n team exec py -- env)" "KUBERNETES_SERVICE_HOST=10.96.0.1" "env"
NODE_IP=$(kubectl -n team get pod py -o jsonpath='{.status.hostIP}')
out=$(curl -s -o /dev/null -w '%{http_code}' -k "https://$NODE_IP:10250/containerLogs/team/py/py" \
  --max-time 5 2>&1)
expect_not_contains "$out" "200" "agent API without a client certificate"
out=$(curl -s -o /dev/null -w '%{http_code}' -k --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
  "https://$NODE_IP:10250/containerLogs/team/py/py" --max-time 5)
expect_eq "$out" "200" "agent API with a cluster certificate of system:masters"

step "a service-account token from a pod: its Role allows reading pods, nothing else"
out=$(kubectl -n team exec -i py -- python3 - <<'PY' 2>&1
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_incluster_config()
v1 = client.CoreV1Api()
print("pods", [p.metadata.name for p in v1.list_namespaced_pod("team").items])
for what, call in [("secrets", lambda: v1.list_namespaced_secret("team")),
                   ("other-ns", lambda: v1.list_namespaced_pod("default")),
                   ("create", lambda: v1.create_namespaced_config_map("team", {"metadata": {"name": "x"}}))]:
    try:
        call(); print(what, "allowed")
    except ApiException as e:
        print(what, e.status, e.reason)
PY
)
echo "$out"
expect_contains "$out" "pods ['py']" "in-cluster python client lists pods"
expect_contains "$out" "secrets 403" "secrets forbidden"
expect_contains "$out" "other-ns 403" "other namespace forbidden"
expect_contains "$out" "create 403" "create forbidden"
TOKEN=$(kubectl -n team exec py -- cat $SA_DIR/token)
body=$(curl -s --cacert "$PKI/ca.crt" -H "Authorization: Bearer $TOKEN" "$API/api/v1/namespaces/team/secrets")
expect_contains "$body" 'User \"system:serviceaccount:team:reader\" cannot list resource \"secrets\" in API group \"\" in the namespace \"team\"' "403 names user, verb and resource"

step "kubectl auth can-i and create token"
expect_eq "$(kubectl auth can-i list pods -n team --as system:serviceaccount:team:reader)" "yes" "can-i as reader"
expect_eq "$(kubectl auth can-i delete pods -n team --as system:serviceaccount:team:reader 2>/dev/null)" "no" "can-i delete as reader"
expect_eq "$(kubectl auth can-i '*' '*')" "yes" "admin can do everything"
T2=$(kubectl -n team create token reader --duration 10m)
expect_eq "$(kubectl --token "$T2" --kubeconfig /dev/null --server "$API" --certificate-authority "$PKI/ca.crt" auth can-i list pods -n team)" "yes" "can-i with a created token"
expect_eq "$(kubectl --token "$T2" --kubeconfig /dev/null --server "$API" --certificate-authority "$PKI/ca.crt" auth can-i list secrets -n team 2>/dev/null)" "no" "can-i secrets with a created token"
out=$(kubectl --token "$T2" --kubeconfig /dev/null --server "$API" --certificate-authority "$PKI/ca.crt" get pods -n team 2>&1)
expect_contains "$out" "py" "created token reads pods"

step "a node credential cannot modify another node"
NODE_PKI=$CL_DIR/nodes/node-1/pki
out=$(curl -s -o "$TMP/body" -w '%{http_code}' --cacert "$PKI/ca.crt" \
  --cert "$NODE_PKI/kubelet-client.crt" --key "$NODE_PKI/kubelet-client.key" \
  -X PATCH -H 'Content-Type: application/merge-patch+json' \
  -d '{"metadata":{"labels":{"hijacked":"yes"}}}' "$API/api/v1/nodes/node-2")
expect_eq "$out" "403" "node-1 patching node-2"
out=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$PKI/ca.crt" \
  --cert "$NODE_PKI/kubelet-client.crt" --key "$NODE_PKI/kubelet-client.key" \
  -X PATCH -H 'Content-Type: application/merge-patch+json' \
  -d '{"metadata":{"annotations":{"checked":"yes"}}}' "$API/api/v1/nodes/node-1")
expect_eq "$out" "200" "node-1 patching itself"
expect_contains "$(kubectl get csr)" "Approved,Issued" "node CSRs approved and issued"

step "a node reads only the Secrets and ConfigMaps its pods use (node authorizer graph)"
kubectl create secret generic only-on-2 -n team --from-literal=k=v >/dev/null
kubectl create configmap cm-on-2 -n team --from-literal=k=v >/dev/null
kubectl apply -n team -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: uses-secret}
spec:
  nodeName: node-2
  terminationGracePeriodSeconds: 0
  volumes: [{name: s, secret: {secretName: only-on-2}}]
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: [sh, -c, "echo \"$(cat /s/k)\"; exec sleep 3600"]
    envFrom: [{configMapRef: {name: cm-on-2}}]
    volumeMounts: [{name: s, mountPath: /s}]
YAML
wait_for 60 bash -c "kubectl logs -n team uses-secret 2>/dev/null | grep -qx v" ||
  fail "the pod on node-2 did not read its secret"
node_get() {  # NODE PATH: HTTP code of a GET with NODE's client certificate
  curl -s -o "$TMP/body" -w '%{http_code}' --cacert "$PKI/ca.crt" \
    --cert "$CL_DIR/nodes/$1/pki/kubelet-client.crt" --key "$CL_DIR/nodes/$1/pki/kubelet-client.key" \
    "$API$2"
}
expect_eq "$(node_get node-2 /api/v1/namespaces/team/secrets/only-on-2)" "200" "node-2 reads the secret its pod mounts"
expect_eq "$(node_get node-1 /api/v1/namespaces/team/secrets/only-on-2)" "403" "node-1 cannot read it"
expect_contains "$(cat "$TMP/body")" "no relationship found between node 'node-1' and this object" \
  "with the node authorizer's reason"
expect_eq "$(node_get node-2 /api/v1/namespaces/team/configmaps/cm-on-2)" "200" "node-2 reads its pod's configmap"
expect_eq "$(node_get node-1 /api/v1/namespaces/team/configmaps/cm-on-2)" "403" "node-1 cannot"
expect_eq "$(node_get node-2 /api/v1/namespaces/team/secrets)" "403" "no node lists secrets"
kubectl delete pod -n team uses-secret --grace-period=0 --force >/dev/null 2>&1
wait_for 30 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' --cacert $PKI/ca.crt --cert $CL_DIR/nodes/node-2/pki/kubelet-client.crt --key $CL_DIR/nodes/node-2/pki/kubelet-client.key $API/api/v1/namespaces/team/secrets/only-on-2) == 403 ]]" ||
  fail "node-2 still reads the secret after its pod is gone"

step "RBAC escalation: a role writer grants only what it holds, unless it may escalate"
kubectl -n team apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata: {name: role-writer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: role-writer}
rules:
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, create, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: role-writer}
subjects: [{kind: ServiceAccount, name: role-writer, namespace: team}]
roleRef: {kind: Role, name: role-writer, apiGroup: rbac.authorization.k8s.io}
YAML
WT=$(kubectl -n team create token role-writer --duration 10m)
as_writer() {
  kubectl --token "$WT" --kubeconfig /dev/null --server "$API" \
    --certificate-authority "$PKI/ca.crt" -n team "$@"
}
# The role writer creates Role $1 granting verb $2 on resource $3 of API group $4.
writer_creates_role() {
  as_writer create -f - <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: $1}
rules: [{apiGroups: ["$4"], resources: [$3], verbs: [$2]}]
YAML
}
wait_for 10 as_writer get roles
out=$(writer_creates_role deployment-deleter delete deployments apps 2>&1)
expect_contains "$out" "attempting to grant RBAC permissions not currently held" \
  "a role granting more than the writer holds is refused"
expect_contains "$out" '{APIGroups:["apps"], Resources:["deployments"], Verbs:["delete"]}' \
  "the refusal names the missing permission"
expect_contains "$(writer_creates_role role-lister list roles rbac.authorization.k8s.io 2>&1)" \
  "created" "a role within what the writer holds"
kubectl -n team apply -f - >/dev/null <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: role-escalator}
rules: [{apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: role-escalator}
subjects: [{kind: ServiceAccount, name: role-writer, namespace: team}]
roleRef: {kind: Role, name: role-escalator, apiGroup: rbac.authorization.k8s.io}
YAML
wait_for 10 writer_creates_role deployment-deleter delete deployments apps
expect_eq "$(kubectl -n team get role deployment-deleter -o jsonpath='{.rules[0].verbs[0]}')" \
  "delete" "with escalate the writer creates it"
out=$(as_writer create -f - 2>&1 <<'YAML'
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-deletes}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: Role, name: deployment-deleter, apiGroup: rbac.authorization.k8s.io}
YAML
)
expect_contains "$out" 'rolebindings.rbac.authorization.k8s.io "bob-deletes" is forbidden' \
  "escalate does not let the writer bind it: binding needs the permissions or bind"
finish
