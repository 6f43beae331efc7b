#!/usr/bin/env bash
# The kubelet applies securityContext as Kubernetes' does, on a 1-node cluster with real
# containerd and the real kubectl, seen from inside the containers (/proc/self/status): a pod
# admitted as restricted runs as UID 1000 with no_new_privs, seccomp RuntimeDefault and no
# capabilities, its fsGroup owns its emptyDir, its read-only root cannot be written; a container
# adding NET_ADMIN has it (and may change a link); the default is unconfined with a masked
# /proc/timer_list; a privileged container has every capability and an unmasked /proc; a
# Localhost seccomp profile from the node's seccomp dir denies what it lists; pod sysctls reach
# the sandbox, an unsafe one gets the pod rejected (SysctlForbidden); a runAsNonRoot pod on an
# image that runs as root is CreateContainerConfigError with the kubelet's message and a Failed
# event, on an image with USER 1000 it runs, on one with a user name it waits.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 1 node"
start_cluster sctx 172.29.141 1 || exit 1

BUSYBOX=minik8s/busybox:1.35
# status_field POD FIELD [NS]: the value of FIELD in the container's /proc/self/status.
status_field() {
  kubectl -n "${3:-default}" exec "$1" -- cat /proc/self/status 2>&1 |
    awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print }'
}
running() { [[ $(kubectl -n "${2:-default}" get pod "$1" -o jsonpath='{.status.phase}') == Running ]]; }

step "a restricted pod starts and really runs restricted"
kubectl create namespace strict >/dev/null
kubectl label namespace strict pod-security.kubernetes.io/enforce=restricted >/dev/null
out=$(kubectl -n strict apply -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: restricted}
spec:
  terminationGracePeriodSeconds: 1
  securityContext:
    runAsNonRoot: true
    fsGroup: 2000
    supplementalGroups: [3000]
    seccompProfile: {type: RuntimeDefault}
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
  - name: c
    image: $BUSYBOX
    command: [sleep, "3600"]
    volumeMounts: [{name: scratch, mountPath: /scratch}]
    securityContext:
      runAsUser: 1000
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL]}
YAML
)
expect_eq "$out" "pod/restricted created" "the restricted pod is admitted"
wait_for 60 running restricted strict
expect_eq "$(status_field restricted NoNewPrivs strict)" "1" "allowPrivilegeEscalation: false is no_new_privs"
expect_eq "$(status_field restricted Seccomp strict)" "2" "seccompProfile RuntimeDefault is a seccomp filter"
expect_eq "$(status_field restricted CapEff strict)" "0000000000000000" "drop ALL leaves no capability"
expect_eq "$(status_field restricted CapBnd strict)" "0000000000000000" "drop ALL empties the bounding set"
expect_eq "$(status_field restricted Uid strict)" "1000 1000 1000 1000" "runs as UID 1000"
groups=$(status_field restricted Groups strict)
expect_contains " $groups " " 2000 " "fsGroup is a supplemental group"
expect_contains " $groups " " 3000 " "supplementalGroups are"
out=$(must_fail kubectl -n strict exec restricted -- touch /written)
expect_contains "$out" "Read-only file system" "readOnlyRootFilesystem: / cannot be written"
kubectl -n strict exec restricted -- touch /scratch/f >/dev/null 2>&1 || fail "the emptyDir is writable by UID 1000"
expect_eq "$(kubectl -n strict exec restricted -- stat -c %g /scratch/f 2>&1)" "2000" \
  "a file created in the emptyDir belongs to the fsGroup"

step "capabilities add: NET_ADMIN is effective; no securityContext is unconfined"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: netadmin}
spec:
  terminationGracePeriodSeconds: 1
  securityContext:
    sysctls: [{name: net.ipv4.ip_unprivileged_port_start, value: "100"}]
  containers:
  - {name: c, image: $BUSYBOX, command: [sleep, "3600"], securityContext: {capabilities: {add: [NET_ADMIN]}}}
  - {name: plain, image: $BUSYBOX, command: [sleep, "3600"]}
  - {name: priv, image: $BUSYBOX, command: [sleep, "3600"], securityContext: {privileged: true}}
YAML
wait_for 60 running netadmin
capeff=$(status_field netadmin CapEff)
(( (0x${capeff:-0} >> 12) & 1 )) || fail "CapEff $capeff lacks NET_ADMIN (bit 12)"
kubectl exec netadmin -c c -- ip link set lo mtu 1400 >/dev/null 2>&1 || fail "NET_ADMIN: ip link set lo mtu"
out=$(must_fail kubectl exec netadmin -c plain -- ip link set lo mtu 1300)
expect_contains "$out" "not permitted" "without NET_ADMIN the link cannot be changed"
expect_eq "$(kubectl exec netadmin -c plain -- cat /proc/self/status 2>&1 | awk '$1 == "Seccomp:" { print $2 }')" "0" \
  "no seccompProfile: Unconfined, as the kubelet's default"
expect_eq "$(kubectl exec netadmin -c plain -- cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2>&1)" "100" \
  "the pod's sysctl is set in its sandbox"
privcaps=$(kubectl exec netadmin -c priv -- cat /proc/self/status 2>&1 | awk '$1 == "CapEff:" { print $2 }')
expect_eq "$privcaps" "$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status)" \
  "a privileged container has every capability root has here"
# Masked files are /dev/null bound over them (/proc/kcore is absent from this kernel).
expect_eq "$(kubectl exec netadmin -c plain -- stat -c %F /proc/timer_list 2>&1)" "character special file" \
  "the Default procMount masks /proc/timer_list"
expect_eq "$(kubectl exec netadmin -c priv -- stat -c %F /proc/timer_list 2>&1)" "regular empty file" \
  "a privileged container's /proc is not masked"

step "an unsafe sysctl: the kubelet rejects the pod (SysctlForbidden)"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: unsafe-sysctl}
spec:
  securityContext: {sysctls: [{name: kernel.msgmax, value: "65536"}]}
  containers:
  - {name: c, image: $BUSYBOX, command: [sleep, "3600"]}
YAML
rejected() { [[ $(kubectl get pod unsafe-sysctl -o jsonpath='{.status.phase}') == Failed ]]; }
wait_for 30 rejected
expect_contains "$(kubectl get pod unsafe-sysctl)" "SysctlForbidden" "kubectl get pod shows the reason"
expect_eq "$(kubectl get pod unsafe-sysctl -o jsonpath='{.status.message}')" \
  'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted' "the kubelet's message"

step "a Localhost seccomp profile from the node's seccomp directory"
node=$(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')
mkdir -p "$CL_DIR/nodes/$node/seccomp/profiles"
cat >"$CL_DIR/nodes/$node/seccomp/profiles/no-mkdir.json" <<'JSON'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}
JSON
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: localhost}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: $BUSYBOX
    command: [sleep, "3600"]
    securityContext: {seccompProfile: {type: Localhost, localhostProfile: profiles/no-mkdir.json}}
YAML
wait_for 60 running localhost
expect_eq "$(status_field localhost Seccomp)" "2" "the Localhost profile is a seccomp filter"
out=$(must_fail kubectl exec localhost -- mkdir /tmp/d)
expect_contains "$out" "Operation not permitted" "the profile denies mkdir"

step "runAsNonRoot on an image that runs as root: CreateContainerConfigError"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: rootimage}
spec:
  terminationGracePeriodSeconds: 1
  securityContext: {runAsNonRoot: true}
  containers:
  - {name: c, image: $BUSYBOX, command: [sleep, "3600"]}
YAML
config_error() { [[ $(kubectl get pod rootimage) == *CreateContainerConfigError* ]]; }
wait_for 60 config_error
kubectl get pod rootimage
uid=$(kubectl get pod rootimage -o jsonpath='{.metadata.uid}')
expect_eq "$(kubectl get pod rootimage -o jsonpath='{.status.containerStatuses[0].state.waiting.message}')" \
  "container has runAsNonRoot and image will run as root (pod: \"rootimage_default($uid)\", container: c)" \
  "the waiting message is the kubelet's"
failed_event() {
  [[ $(kubectl describe pod rootimage) == *"Error: container has runAsNonRoot and image will run as root"* ]]
}
wait_for 30 failed_event
kubectl describe pod rootimage | sed -n '/^Events:/,$p' | grep -m1 Failed

step "runAsNonRoot with the image's own user (USER in a Dockerfile, as CRI ImageStatus reports it)"
for user in 1000 nobody; do
  mkdir -p "$E2E_DIR/img-$user"
  printf 'FROM busybox:1.35\nUSER %s\n' "$user" >"$E2E_DIR/img-$user/Dockerfile"
  out=$("$MINIK8S_BIN" image build -t "sctx/user-$user:v1" "$E2E_DIR/img-$user" \
    --registry "$CL_SUBNET.1:5000" 2>&1) || fail "image build USER $user: $out"
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: image-user-$user}
spec:
  terminationGracePeriodSeconds: 1
  securityContext: {runAsNonRoot: true}
  containers:
  - {name: c, image: sctx/user-$user:v1, command: [sleep, "3600"]}
YAML
done
wait_for 60 running image-user-1000
expect_eq "$(kubectl exec image-user-1000 -- id -u 2>&1)" "1000" "an image with USER 1000 passes runAsNonRoot and runs as 1000"
waiting_message() {
  kubectl get pod image-user-nobody -o jsonpath='{.status.containerStatuses[0].state.waiting.message}'
}
non_numeric() { [[ $(waiting_message) == *"non-numeric user"* ]]; }
wait_for 60 non_numeric
expect_contains "$(waiting_message)" \
  "container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root" \
  "an image with a user name cannot be verified"

kubectl delete pod --all --wait=false >/dev/null
kubectl -n strict delete pod --all --wait=false >/dev/null
finish
