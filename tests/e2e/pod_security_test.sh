#!/usr/bin/env bash
# Pod Security admission on a 1-node cluster with the real kubectl: a namespace labelled
# enforce=restricted refuses a privileged pod with Kubernetes' message and runs a compliant one
# (as UID 1000); warn=baseline prints a Warning for a hostPath pod and admits it; a Deployment
# whose template violates restricted is created with a warning while its ReplicaSet's pods are
# refused (FailedCreate events, the Deployment's ReplicaFailure condition); labelling a namespace
# warns about its existing pods; a bad level is refused; unlabelled namespaces stay privileged;
# the decisions are counted on /metrics; a namespace exempted by the server's
# --admission-control-config-file ignores its labels and says so.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 1 node, namespace \"exempt\" exempted by the admission configuration"
cat >"$E2E_DIR/admission.yaml" <<'YAML'
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    exemptions: {namespaces: [exempt]}
YAML
start_cluster psa 172.29.133 1 --server-arg="--admission-control-config-file=$E2E_DIR/admission.yaml" ||
  exit 1

BUSYBOX=minik8s/busybox:1.35

step "enforce=restricted refuses a privileged pod with Kubernetes' message"
kubectl create namespace strict >/dev/null
out=$(kubectl label namespace strict pod-security.kubernetes.io/enforce=restricted 2>&1)
expect_eq "$out" "namespace/strict labeled" "label an empty namespace: no warnings"
out=$(must_fail kubectl -n strict apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: priv}
spec:
  containers:
  - {name: c, image: $BUSYBOX, command: [sleep, "3600"], securityContext: {privileged: true}}
YAML
)
expect_contains "$out" 'Error from server (Forbidden): error when creating "STDIN": pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")' \
  "the refusal of a privileged pod"
expect_contains "$(kubectl -n strict get pod priv 2>&1)" 'pods "priv" not found' "the refused pod is not stored"

step "a compliant pod is admitted without warnings and runs as its non-root user"
out=$(kubectl -n strict apply -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: ok}
spec:
  terminationGracePeriodSeconds: 1
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: c
    image: $BUSYBOX
    command: [sleep, "3600"]
    securityContext:
      runAsUser: 1000
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
YAML
)
expect_eq "$out" "pod/ok created" "a compliant pod is created without warnings"
kubectl -n strict wait --for=condition=Ready pod/ok --timeout=90s >/dev/null || fail "pod ok not ready"
expect_eq "$(kubectl -n strict exec ok -- id -u 2>&1)" "1000" "the compliant pod runs as UID 1000"

step "a Deployment with a violating template: created with a warning, its pods refused"
out=$(kubectl -n strict apply -f - 2>&1 <<YAML
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
      - {name: web, image: $BUSYBOX, command: [sleep, "3600"]}
YAML
)
expect_contains "$out" 'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")' \
  "the Deployment's warning"
expect_contains "$out" "deployment.apps/web created" "the Deployment is created"
failed_create() {
  kubectl -n strict get events --field-selector reason=FailedCreate \
    -o jsonpath='{range .items[*]}{.involvedObject.kind} {.message}{"\n"}{end}' |
    grep -q '^ReplicaSet Error creating: pods "web-[a-z0-9]*-[a-z0-9]*" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "web" must set'
}
wait_for 60 failed_create
kubectl -n strict get events --field-selector reason=FailedCreate | head -3
expect_eq "$(kubectl -n strict get pods -l app=web -o name)" "" "no pod of the Deployment exists"
replica_failure() {
  [[ $(kubectl -n strict get deploy web -o jsonpath='{.status.conditions[?(@.type=="ReplicaFailure")].reason} {.status.conditions[?(@.type=="ReplicaFailure")].message}') == 'FailedCreate pods "web-'*'" is forbidden: violates PodSecurity "restricted:latest": '* ]]
}
wait_for 30 replica_failure

step "warn=baseline: a hostPath pod is admitted with a Warning"
kubectl create namespace lax >/dev/null
kubectl label namespace lax pod-security.kubernetes.io/warn=baseline >/dev/null
out=$(kubectl -n lax apply -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: hostpath}
spec:
  terminationGracePeriodSeconds: 1
  volumes: [{name: host, hostPath: {path: /tmp}}]
  containers:
  - {name: c, image: $BUSYBOX, command: [sleep, "3600"], volumeMounts: [{name: host, mountPath: /host}]}
YAML
)
expect_contains "$out" 'Warning: would violate PodSecurity "baseline:latest": hostPath volumes (volume "host")' \
  "the warning for a hostPath pod"
expect_contains "$out" "pod/hostpath created" "the hostPath pod is created"

step "labelling a namespace warns about its existing pods; bad levels are refused"
out=$(kubectl label namespace lax pod-security.kubernetes.io/enforce=baseline 2>&1)
expect_contains "$out" 'Warning: existing pods in namespace "lax" violate the new PodSecurity enforce level "baseline:latest"' \
  "the namespace warning"
expect_contains "$out" "Warning: hostpath: hostPath volumes" "the pod named in the namespace warning"
expect_contains "$out" "namespace/lax labeled" "the label is set"
out=$(must_fail kubectl label namespace lax pod-security.kubernetes.io/enforce=strict --overwrite)
expect_contains "$out" 'is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted' \
  "an unknown level is refused"
expect_eq "$(kubectl get ns lax -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" \
  "baseline" "the refused label is not stored"

step "unlabelled namespaces stay privileged"
out=$(kubectl -n default apply --dry-run=server -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: priv}
spec:
  hostNetwork: true
  containers:
  - {name: c, image: $BUSYBOX, securityContext: {privileged: true}}
YAML
)
expect_eq "$out" "pod/priv created (server dry run)" "a privileged pod in default: no refusal, no warning"

step "the server counts its decisions"
out=$(kubectl get --raw /metrics | grep '^pod_security_evaluations_total')
expect_contains "$out" 'pod_security_evaluations_total{decision="deny",policy_level="restricted",policy_version="latest",mode="enforce",request_operation="create",resource="pod",subresource=""}' \
  "the refusals are counted"

step "an exempt namespace ignores its labels and says so"
kubectl create namespace exempt >/dev/null
out=$(kubectl label namespace exempt pod-security.kubernetes.io/enforce=restricted 2>&1)
expect_contains "$out" 'Warning: namespace "exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored' \
  "the exemption warning"
out=$(kubectl -n exempt apply --dry-run=server -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: priv}
spec:
  containers:
  - {name: c, image: $BUSYBOX, securityContext: {privileged: true}}
YAML
)
expect_eq "$out" "pod/priv created (server dry run)" "a privileged pod in the exempt namespace"

finish
