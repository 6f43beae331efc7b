# The kubectl session of a user against a fresh server: run by kubectl_sqlite_test.sh and
# kubectl_etcd_test.sh with BACKEND set.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
SOURCE_DIR=${SOURCE_DIR:-$(cd "$here/../.." && pwd)}
start_server "$BACKEND"
k() { kubectl "$@"; }

step "version and discovery"
out=$(k version 2>&1); expect_contains "$out" "Server Version: v1.32" "kubectl version"
out=$(k api-resources); expect_contains "$out" "deployments" "api-resources"
expect_contains "$out" "horizontalpodautoscalers" "api-resources hpa"
expect_contains "$out" "dnses" "api-resources dns"
out=$(k get namespaces); expect_contains "$out" "kube-system" "default namespaces"

step "create namespace (protobuf body) and apply a manifest"
k create namespace shop >/dev/null
out=$(k get ns shop); expect_contains "$out" "Active" "namespace status"
out=$(k apply -n shop -f "$SOURCE_DIR/examples/web-app.yaml")
expect_contains "$out" "deployment.apps/web created" "apply deployment"
expect_contains "$out" "dns.minik8s.io/web-dns created" "apply dns"
out=$(k apply -n shop -f "$SOURCE_DIR/examples/web-app.yaml")
expect_contains "$out" "deployment.apps/web unchanged" "re-apply unchanged"

step "kubectl create deployment (protobuf body)"
k create deployment nginx --image=nginx:1.25 --replicas=3 -n shop >/dev/null
out=$(k get deploy nginx -n shop -o jsonpath='{.spec.replicas} {.spec.template.spec.containers[0].image}')
expect_eq "$out" "3 nginx:1.25" "created deployment fields"

step "get in every form"
out=$(k get pods -n shop); expect_contains "$out" "toolbox" "get pods"
expect_contains "$out" "Pending" "pod status column"
out=$(k get pods -n shop -o wide); expect_contains "$out" "NOMINATED NODE" "pods -o wide"
out=$(k get deploy -n shop); expect_contains "$out" "UP-TO-DATE" "deployment columns"
out=$(k get svc -n shop); expect_contains "$out" "CLUSTER-IP" "service columns"
expect_contains "$out" "80/TCP" "service ports"
out=$(k get hpa -n shop); expect_contains "$out" "Deployment/web" "hpa reference"
out=$(k get dns -n shop); expect_contains "$out" "example.com" "dns host column"
out=$(k get deploy web -n shop -o yaml); expect_contains "$out" "maxSurge: 25%" "defaults in yaml"
out=$(k get deploy web -n shop -o json | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["metadata"]["generation"], d["spec"]["revisionHistoryLimit"])')
expect_eq "$out" "1 10" "json output"
out=$(k get pods -A); expect_contains "$out" "NAMESPACE" "get -A header"
expect_contains "$out" "shop" "get -A namespace column"
out=$(k get pods -n shop --show-labels); expect_contains "$out" "app=toolbox" "show-labels"
out=$(k get deploy -n shop -l app=web -o name); expect_eq "$out" "deployment.apps/web" "label selector"
out=$(k get pods -n shop --field-selector metadata.name=toolbox -o name)
expect_eq "$out" "pod/toolbox" "field selector"
out=$(k get pods -n shop --field-selector status.phase=Running -o name); expect_eq "$out" "" "field selector phase"
out=$(k get cm,svc -n shop -o name); expect_contains "$out" "configmap/web-config" "multi-kind get"

step "describe"
out=$(k describe deploy web -n shop); expect_contains "$out" "RollingUpdate" "describe deployment"
out=$(k describe pod toolbox -n shop); expect_contains "$out" "minik8s/busybox:1.35" "describe pod"

step "apply an edited manifest: strategic merge keeps unrelated fields"
sed -e 's/replicas: 2/replicas: 4/' -e 's/cpu: 500m/cpu: 750m/' "$SOURCE_DIR/examples/web-app.yaml" >"$E2E_DIR/edited.yaml"
k apply -n shop -f "$E2E_DIR/edited.yaml" >/dev/null
out=$(k get deploy web -n shop -o jsonpath='{.spec.replicas} {.spec.template.spec.containers[0].resources.limits.cpu} {.spec.template.spec.containers[0].ports[0].containerPort} {.metadata.generation}')
expect_eq "$out" "4 750m 8080 2" "apply edit"
k set image deploy/web httpd=minik8s/busybox:1.36 -n shop >/dev/null
out=$(k get deploy web -n shop -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[0].name}')
expect_eq "$out" "minik8s/busybox:1.36 GREETING" "set image keeps env"

step "patch, label, annotate, scale"
k patch deploy web -n shop -p '{"spec":{"minReadySeconds":5}}' >/dev/null
k patch deploy web -n shop --type=merge -p '{"metadata":{"labels":{"tier":"front"}}}' >/dev/null
k patch deploy web -n shop --type=json -p '[{"op":"replace","path":"/spec/revisionHistoryLimit","value":3}]' >/dev/null
out=$(k get deploy web -n shop -o jsonpath='{.spec.minReadySeconds} {.metadata.labels.tier} {.spec.revisionHistoryLimit}')
expect_eq "$out" "5 front 3" "patch types"
k label pod toolbox -n shop env=dev >/dev/null
k annotate pod toolbox -n shop owner=alice >/dev/null
out=$(k get pod toolbox -n shop -o jsonpath='{.metadata.labels.env} {.metadata.annotations.owner}')
expect_eq "$out" "dev alice" "label and annotate"
k label pod toolbox -n shop env- >/dev/null
out=$(k get pod toolbox -n shop -o jsonpath='{.metadata.labels.env}'); expect_eq "$out" "" "label removal"
k scale deploy web -n shop --replicas=1 >/dev/null
out=$(k get deploy web -n shop -o jsonpath='{.spec.replicas}'); expect_eq "$out" "1" "scale"

step "replace with a stale resourceVersion conflicts"
k get cm web-config -n shop -o json >"$E2E_DIR/cm.json"
k label cm web-config -n shop touched=yes >/dev/null
out=$(must_fail k replace -f "$E2E_DIR/cm.json")
expect_contains "$out" "the object has been modified" "409 on stale replace"

step "watch sees changes"
k get pods -n shop -w --request-timeout=6s >"$E2E_DIR/watch.out" 2>&1 &
wpid=$!
sleep 1.5
k label pod toolbox -n shop watched=yes >/dev/null
sleep 1
kill $wpid 2>/dev/null || true; wait $wpid 2>/dev/null || true
out=$(cat "$E2E_DIR/watch.out"); expect_contains "$out" "toolbox" "watch output"
n=$(grep -c toolbox "$E2E_DIR/watch.out" || true)
((n >= 2)) || fail "watch should show the initial row and the change (got $n rows)"

step "explain"
out=$(k explain pod.spec.containers); expect_contains "$out" "image" "explain containers"

step "bad input gives the errors kubectl users expect"
cat >"$E2E_DIR/bad-unknown.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: 1
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers: [{name: c, image: busybox, imagePullPolcy: Always}]
YAML
out=$(must_fail k apply -n shop -f "$E2E_DIR/bad-unknown.yaml")
expect_contains "$out" 'unknown field "spec.template.spec.containers[0].imagePullPolcy"' "strict unknown field"
cat >"$E2E_DIR/bad-invalid.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: -1
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: other}}
    spec:
      containers: [{name: c, image: busybox}]
YAML
out=$(must_fail k apply -n shop -f "$E2E_DIR/bad-invalid.yaml")
expect_contains "$out" 'The Deployment "bad" is invalid' "422 invalid"
expect_contains "$out" "spec.replicas" "invalid field path"
out=$(must_fail k get pod nosuch -n shop); expect_contains "$out" 'pods "nosuch" not found' "404"
out=$(must_fail k create namespace shop); expect_contains "$out" "AlreadyExists" "409 exists"
out=$(must_fail k get frobnicators); expect_contains "$out" "the server doesn't have a resource type" "unknown resource"

step "delete by file and by name"
k delete -n shop -f "$SOURCE_DIR/examples/web-app.yaml" --wait=false >/dev/null
out=$(k get deploy,svc,cm,hpa -n shop -o name 2>&1)
expect_not_contains "$out" "deployment.apps/web" "deleted by file"
k delete deploy nginx -n shop >/dev/null
out=$(k get deploy -n shop -o name); expect_eq "$out" "" "deleted by name"
k delete namespace shop --timeout=30s >/dev/null
out=$(k get ns -o name); expect_not_contains "$out" "namespace/shop" "namespace deleted"

step "a Terminating namespace refuses new content"
k create namespace closing >/dev/null
k create configmap held -n closing --from-literal=a=b >/dev/null
k patch configmap held -n closing --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
k delete namespace closing --wait=false >/dev/null
wait_for 30 bash -c "[[ \$(kubectl get ns closing -o jsonpath='{.status.phase}') == Terminating ]]" ||
  fail "namespace closing Terminating while held by a finalizer"
out=$(must_fail k create configmap late -n closing --from-literal=a=b)
expect_contains "$out" "unable to create new content in namespace closing because it is being terminated" \
  "create in a Terminating namespace is 403"
k patch configmap held -n closing --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
wait_for 60 bash -c "! kubectl get ns closing >/dev/null 2>&1" || fail "namespace closing goes once released"
finish
