#!/usr/bin/env bash
# The MariaDB StatefulSet demo (examples/mariadb, applied unchanged) on 3 nodes whose volumes are
# on GlusterFS (`cluster up --storage gluster`), so the data really moves between nodes. Rows
# inserted with `kubectl exec ... mariadb` survive: (a) mariadbd killed with SIGKILL from the
# host (the kubelet restarts it in place: InnoDB crash recovery) and its node cordoned, then the
# pod deleted as one does for a node that is gone: it comes back on another node; (b) `kubectl
# delete pod`; (c) the control plane killed with SIGKILL and resumed with `cluster up` (then the
# pod deleted once more: the restarted controllers bring it back with its claim). Each time
# `SELECT COUNT(*)` and `CHECKSUM TABLE` show every row and new inserts work; a client pod on
# another node logs in as root over TCP (mariadb-0.mariadb) with the Secret's password.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fault_lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }
command -v glusterd >/dev/null || { echo "needs glusterfs-server (scripts/setup.sh)"; exit 1; }
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# The image is optional (clusters start without it); this scenario is not, in CI.
if [[ ! -x /usr/sbin/mariadbd || ! -x /usr/bin/mariadb ]]; then
  echo "SKIPPED: mariadb-server or mariadb-client not installed (scripts/setup.sh installs them)"
  [[ -n "${CI:-}" ]] && { echo "FAIL: CI must run the MariaDB scenario"; exit 1; }
  exit 0
fi

step "cluster up --storage gluster: 3 nodes"
start_cluster maria 172.29.132 3 --storage gluster || exit 1
if grep -q "skipped the optional image of .*mariadb" "$CL_DIR/logs/registry.log"; then
  grep "skipped the optional image" "$CL_DIR/logs/registry.log"
  fail "the mariadb image was not built"; finish
fi

# sql STATEMENTS: run in mariadb-0 through `kubectl exec` (root over the socket), tab-separated.
sql() { kubectl exec mariadb-0 -c mariadb -- mariadb -N -B -e "$1"; }
# The pod mariadb-0 as "uid node ready".
pod_state() {
  kubectl get pod mariadb-0 -o jsonpath='{.metadata.uid} {.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null
}
# wait_new_pod OLD_UID SECONDS: until mariadb-0 is a pod other than OLD_UID and Ready.
wait_new_pod() {
  wait_for "$2" bash -c "read -r u n r <<<\"\$(kubectl get pod mariadb-0 -o jsonpath='{.metadata.uid} {.spec.nodeName} {.status.conditions[?(@.type==\"Ready\")].status}')\"; [[ \$u != $1 && \$r == True ]]"
}
# check_rows WHAT: every row is there, with the same content.
check_rows() {
  expect_eq "$(sql 'SELECT COUNT(*) FROM demo.items')" "$ROWS" "$1: SELECT COUNT(*)"
  expect_eq "$(sql 'CHECKSUM TABLE demo.items' | cut -f2)" "$SUM" "$1: CHECKSUM TABLE"
}
# insert_row WHAT: one more row, written where the pod runs now.
insert_row() {
  sql "INSERT INTO demo.items (name) VALUES ('$1 on $(pod_state | cut -d' ' -f2)')" ||
    fail "$1: INSERT"
  ROWS=$((ROWS + 1))
  SUM=$(sql 'CHECKSUM TABLE demo.items' | cut -f2)
}

step "the example unchanged: Secret, headless Service, StatefulSet mariadb with a 1Gi claim"
t0=$(date +%s.%N)
kubectl apply -f "$SOURCE_DIR/examples/mariadb/mariadb.yaml" || fail "kubectl apply"
out=$(kubectl rollout status sts/mariadb --timeout=180s 2>&1) ||
  { fail "rollout status: $out"; kubectl describe pod mariadb-0 | tail -20; kubectl logs mariadb-0 | tail; finish; }
echo "mariadb-0 Ready $(elapsed "$t0") s after apply (first start: data directory initialised)"
kubectl get pods,pvc -o wide
expect_eq "$(kubectl get pvc data-mariadb-0 -o jsonpath='{.status.phase}')" "Bound" "claim data-mariadb-0"
pv=$(kubectl get pvc data-mariadb-0 -o jsonpath='{.spec.volumeName}')
expect_eq "$(kubectl get pv "$pv" -o jsonpath='{.spec.csi.driver}')" "dir.csi.minik8s.io" \
  "the claim's volume is the CSI directory driver's (on GlusterFS)"
expect_contains "$(kubectl logs mariadb-0)" "initialised /var/lib/mysql" "the first start initialised"
expect_eq "$(sql 'SELECT VERSION()' | cut -d- -f1)" "$(mariadbd --version | sed -n 's/.*Ver \([0-9.]*\).*/\1/p')" \
  "Debian's MariaDB"

step "create a table and insert 1000 rows"
sql "CREATE DATABASE demo;
     CREATE TABLE demo.items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL);
     INSERT INTO demo.items (name)
       WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000)
       SELECT CONCAT('row-', n) FROM s;" || fail "CREATE and INSERT"
ROWS=1000
SUM=$(sql 'CHECKSUM TABLE demo.items' | cut -f2)
check_rows "after the insert"

step "(a) mariadbd killed from the host and its node cordoned; the pod deleted: back on another node"
read -r uid_a node_a _ <<<"$(pod_state)"
cid=$(kubectl get pod mariadb-0 -o jsonpath='{.status.containerStatuses[0].containerID}')
pid=$(cat "$CL_DIR/nodes/$node_a/containerd/state/io.containerd.runtime.v2.task/k8s.io/${cid#containerd://}/init.pid")
expect_eq "$(cat /proc/"$pid"/comm 2>&1)" "mariadbd" "the container's main process (pid $pid on $node_a)"
kubectl cordon "$node_a" >/dev/null || fail "cordon $node_a"
insert_row "(a) committed just before the kill"
t_kill=$(date +%s.%N)
[[ $(cat /proc/"$pid"/comm 2>/dev/null) == mariadbd ]] && kill -9 "$pid"
# The kubelet restarts it in place at once; InnoDB recovers from the crash.
wait_for 60 bash -c "[[ \$(kubectl get pod mariadb-0 -o jsonpath='{.status.containerStatuses[0].restartCount} {.status.conditions[?(@.type==\"Ready\")].status}') == '1 True' ]]" ||
  kubectl describe pod mariadb-0 | tail -20
echo "restarted in place on $node_a and Ready $(elapsed "$t_kill") s after the kill"
kubectl logs mariadb-0 | grep -E "InnoDB: (Starting crash recovery|To recover|Crash recovery)" | head -3
check_rows "(a) after the kill, on $node_a"
t_delete=$(date +%s.%N)
kubectl delete pod mariadb-0 --wait=false >/dev/null || fail "delete pod"
wait_new_pod "$uid_a" 120 || { kubectl get pods -o wide; kubectl describe pod mariadb-0 | tail -20; }
read -r _ node_b _ <<<"$(pod_state)"
echo "mariadb-0 Ready on $node_b $(elapsed "$t_delete") s after the delete ($(elapsed "$t_kill") s after the kill)"
[[ -n "$node_b" && "$node_b" != "$node_a" ]] || fail "(a) back on another node than $node_a, got '$node_b'"
check_rows "(a) on $node_b"
insert_row "(a)"
kubectl uncordon "$node_a" >/dev/null || fail "uncordon $node_a"

step "(b) kubectl delete pod: back with every row"
read -r uid_b _ <<<"$(pod_state)"
t_delete=$(date +%s.%N)
kubectl delete pod mariadb-0 >/dev/null || fail "delete pod"
wait_new_pod "$uid_b" 120 || { kubectl get pods -o wide; kubectl describe pod mariadb-0 | tail -20; }
echo "mariadb-0 Ready on $(pod_state | cut -d' ' -f2) $(elapsed "$t_delete") s after the delete"
check_rows "(b)"
insert_row "(b)"

step "(c) the control plane killed (SIGKILL) and resumed with cluster up"
read -r uid_c _ <<<"$(pod_state)"
kill -9 "$(cluster_state .serverPid)"
t_kill=$(date +%s.%N)
wait_for 10 bash -c "! kubectl get --raw /readyz --request-timeout=1s" || fail "the API server still answers"
out=$(cluster_cmd up 2>&1) || { fail "cluster up after the kill"; echo "$out"; }
expect_contains "$out" "resuming" "up resumes"
wait_for 60 bash -c "[[ \$(kubectl get pod mariadb-0 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') == True ]]" ||
  kubectl get pods -o wide
echo "control plane back and mariadb-0 Ready $(elapsed "$t_kill") s after the kill"
expect_eq "$(pod_state | cut -d' ' -f1)" "$uid_c" "the same pod after the control plane restart"
check_rows "(c)"
insert_row "(c)"
check_rows "(c) after a new insert"
# The restarted controllers and scheduler bring the pod back with its claim too.
t_delete=$(date +%s.%N)
kubectl delete pod mariadb-0 >/dev/null || fail "delete pod"
wait_new_pod "$uid_c" 120 || { kubectl get pods -o wide; kubectl describe pod mariadb-0 | tail -20; }
echo "mariadb-0 Ready on $(pod_state | cut -d' ' -f2) $(elapsed "$t_delete") s after a delete with the restarted control plane"
check_rows "(c) after a delete with the restarted control plane"
sql "SELECT id, name FROM demo.items WHERE id > 1000"

step "a client pod on another node logs in as root over TCP with the Secret's password"
other=$(kubectl get nodes -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | grep -vx "$(pod_state | cut -d' ' -f2)" | head -1)
client_pod() {  # NAME PASSWORD (YAML: an env var's value or valueFrom)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $other
  restartPolicy: Never
  containers:
  - name: client
    image: mariadb:10.11
    command: [mariadb, -h, mariadb-0.mariadb, -u, root, -N, -B, -e, "SELECT COUNT(*) FROM demo.items"]
    env:
    - {name: MYSQL_PWD, $2}
YAML
}
client_pod client "valueFrom: {secretKeyRef: {name: mariadb, key: root-password}}"
client_pod intruder "value: not-the-password"
wait_for 60 bash -c "[[ \$(kubectl get pod client -o jsonpath='{.status.phase}') == Succeeded ]]" ||
  { kubectl describe pod client | tail -20; kubectl logs client; }
expect_eq "$(kubectl logs client)" "$ROWS" "root over TCP from $other reads every row"
wait_for 60 bash -c "[[ \$(kubectl get pod intruder -o jsonpath='{.status.phase}') == Failed ]]" ||
  kubectl describe pod intruder | tail -20
expect_contains "$(kubectl logs intruder)" "Access denied for user 'root'" "a wrong password is refused"

kubectl get pods,pvc -o wide
finish
