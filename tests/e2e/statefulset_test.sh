#!/usr/bin/env bash
# StatefulSets on a real 3-node cluster with the real kubectl: the example of the Kubernetes
# documentation (headless Service "nginx", StatefulSet "web" of 3) starts web-0, web-1, web-2 in
# order, each only after its predecessor is Ready; each pod resolves its peers by their stable DNS
# names; a deleted pod comes back with its name; scale down removes the highest ordinal; `kubectl
# set image` rolls from the highest ordinal down and `rollout status|history|undo sts/web` work;
# volumeClaimTemplates create one claim per pod, Pending until a volume exists, kept after the set.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 3 nodes"
start_cluster sset 172.29.117 3 || exit 1

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: nginx, labels: {app: nginx}}
spec:
  ports: [{port: 80, name: web}]
  clusterIP: None
  selector: {app: nginx}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  selector: {matchLabels: {app: nginx}}
  serviceName: nginx
  replicas: 3
  template:
    metadata: {labels: {app: nginx}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: nginx
        image: minik8s/busybox:1.35
        command: ["sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 80 -h /www"]
        ports: [{containerPort: 80, name: web}]
        readinessProbe:
          httpGet: {path: /index.html, port: 80}
          initialDelaySeconds: 1
          periodSeconds: 1
YAML

step "web-0, web-1, web-2 start in order"
out=$(kubectl rollout status sts/web --timeout=180s 2>&1) || fail "rollout status: $out"
expect_contains "$out" "partitioned roll out complete" "rollout status of the new StatefulSet"
kubectl get pods -l app=nginx -o wide
expect_eq "$(kubectl get pods -l app=nginx -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | tr '\n' ' ')" \
  "web-0 web-1 web-2 " "stable names"
ready_at() {
  kubectl get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].lastTransitionTime}'
}
created_at() { kubectl get pod "$1" -o jsonpath='{.metadata.creationTimestamp}'; }
for pair in "web-0 web-1" "web-1 web-2"; do
  read -r a b <<<"$pair"
  (($(date -d "$(created_at "$b")" +%s) >= $(date -d "$(ready_at "$a")" +%s))) ||
    fail "$b was created ($(created_at "$b")) before $a was Ready ($(ready_at "$a"))"
done
expect_contains "$(kubectl get sts web)" "web    3/3" "get sts shows 3/3"

step "control plane SIGKILL: the same pods afterwards, none duplicated"
before=$(kubectl get pods -l app=nginx -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}')
kill -9 "$(cluster_state .serverPid)"
sleep 2
out=$(cluster_cmd up 2>&1) || { fail "cluster up after the kill"; echo "$out"; }
out=$(kubectl rollout status sts/web --timeout=60s 2>&1) || fail "rollout status after the restart: $out"
sleep 3  # the controllers resync; a duplicate or a replacement would show now
expect_eq "$(kubectl get pods -l app=nginx -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}')" \
  "$before" "the same pods after the control plane restart"

step "each pod resolves its peers by their stable names"
for i in 0 1 2; do
  ip=$(kubectl get pod "web-$i" -o jsonpath='{.status.podIP}')
  out=$(kubectl exec web-0 -- nslookup "web-$i.nginx.default.svc.cluster.local" 2>&1)
  expect_contains "$out" "Address: $ip" "web-$i.nginx resolves to its pod IP from web-0"
done
expect_eq "$(kubectl exec web-2 -- wget -q -O - http://web-1.nginx/index.html)" "web-1" \
  "web-2 reaches web-1 by name (hostname web-1)"

step "a deleted pod comes back with its name"
uid=$(kubectl get pod web-1 -o jsonpath='{.metadata.uid}')
kubectl delete pod web-1 --wait=false >/dev/null
wait_for 60 bash -c "[[ \$(kubectl get pod web-1 -o jsonpath='{.metadata.uid}') != '$uid' && \$(kubectl get pod web-1 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') == True ]]" ||
  kubectl get pods -o wide
expect_eq "$(kubectl exec web-1 -- hostname)" "web-1" "the new web-1 is web-1"

step "scale down removes the highest ordinal, scale up brings it back"
kubectl scale sts web --replicas=2 >/dev/null || fail "kubectl scale"
wait_for 60 bash -c "! kubectl get pod web-2 2>/dev/null"
expect_eq "$(kubectl get pods -l app=nginx -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | tr '\n' ' ')" \
  "web-0 web-1 " "web-2 went"
kubectl scale sts web --replicas=3 >/dev/null
out=$(kubectl rollout status sts/web --timeout=120s 2>&1) || fail "rollout status after scale up: $out"

step "set image rolls from the highest ordinal down"
kubectl set image sts/web nginx=minik8s/busybox:latest >/dev/null
out=$(kubectl rollout status sts/web --timeout=180s 2>&1) || fail "rollout status after set image: $out"
echo "$out" | tail -3
images=$(kubectl get pods -l app=nginx -o jsonpath='{range .items[*]}{.metadata.name}={.spec.containers[0].image} {end}')
for i in 0 1 2; do expect_contains "$images" "web-$i=minik8s/busybox:latest" "web-$i updated"; done
order=$(kubectl get pods -l app=nginx --sort-by=.metadata.creationTimestamp -o jsonpath='{.items[*].metadata.name}')
expect_eq "$order" "web-2 web-1 web-0" "pods were replaced from web-2 down to web-0"
history=$(kubectl rollout history sts/web)
expect_eq "$(awk '$1 ~ /^[0-9]+$/ {print $1}' <<<"$history" | tr '\n' ' ')" "1 2 " "revisions"
out=$(kubectl rollout undo sts/web 2>&1)
expect_contains "$out" "rolled back" "rollout undo"
out=$(kubectl rollout status sts/web --timeout=180s 2>&1) || fail "rollout status after undo: $out"
wait_for 30 bash -c "[[ \$(kubectl get pods -l app=nginx -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u) == minik8s/busybox:1.35 ]]" ||
  fail "every pod back on the old image"

step "volumeClaimTemplates: one claim per pod, Pending until a volume exists, kept after the set"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  selector: {matchLabels: {app: db}}
  serviceName: db
  replicas: 1
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: db, image: minik8s/busybox:1.35, command: [sh, -c, "echo kept > /data/f; exec sleep 3600"], volumeMounts: [{name: data, mountPath: /data}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    # No class: not the cluster's default one, so the claim waits for an administrator's volume.
    spec: {storageClassName: "", accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
YAML
# The first attempt may still find no claim (the scheduler's informer has not seen it yet); the
# retry names the unbound claim.
wait_for 30 bash -c "kubectl describe pod db-0 | grep -q 'unbound immediate PersistentVolumeClaims'"
expect_contains "$(kubectl describe pod db-0)" 'pod has unbound immediate PersistentVolumeClaims'   "the pod waits for its claim"
expect_eq "$(kubectl get pvc data-db-0 -o jsonpath='{.status.phase}')" "Pending" "claim data-db-0 created, Pending"
expect_eq "$(kubectl get pod db-0 -o jsonpath='{.status.phase}')" "Pending" "db-0 stays Pending"
pvdir=/tmp/minik8s-e2e-sset-pv
rm -rf "$pvdir"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: db-pv}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: $pvdir, type: DirectoryOrCreate}
YAML
wait_for 60 bash -c "kubectl get pod db-0 -o jsonpath='{.status.phase}' | grep -qx Running" ||
  kubectl describe pod db-0
expect_eq "$(kubectl get pvc data-db-0 -o jsonpath='{.spec.volumeName}')" "db-pv" "the claim bound the new volume"
kubectl delete sts db --wait=false >/dev/null
wait_for 60 bash -c "! kubectl get pod db-0 >/dev/null 2>&1"
expect_eq "$(kubectl get pvc data-db-0 -o jsonpath='{.status.phase}')" "Bound" "the claim outlives the set"
expect_eq "$(cat $pvdir/f 2>/dev/null)" "kept" "the pod wrote into the volume"
kubectl delete pvc data-db-0 >/dev/null
kubectl delete pv db-pv >/dev/null
rm -rf "$pvdir"

step "deleting the StatefulSet takes its pods"
kubectl delete sts web >/dev/null || fail "delete sts"
wait_for 60 bash -c "[[ \$(kubectl get pods -l app=nginx -o name | wc -l) == 0 ]]" || kubectl get pods

finish
