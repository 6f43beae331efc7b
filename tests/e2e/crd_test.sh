#!/usr/bin/env bash
# CustomResourceDefinitions with the real kubectl: the CronTab CRD of the Kubernetes
# documentation applies unchanged, its objects are served at once (discovery, short name,
# printer columns, explain, defaults, pruning, validation with field paths, status and scale
# subresources, watch), a second version is served by None conversion, and deleting the CRD
# deletes its objects.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
SOURCE_DIR=${SOURCE_DIR:-$(cd "$here/../.." && pwd)}
start_server sqlite
k() { kubectl "$@"; }

step "apply the CronTab CRD; it is established and discovered"
out=$(k apply -f "$SOURCE_DIR/examples/crd/crontab-crd.yaml")
expect_contains "$out" "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created" "create CRD"
k wait --for condition=established --timeout=20s crd/crontabs.stable.example.com >/dev/null ||
  fail "CRD not established"
out=$(k get crd)
expect_contains "$out" "crontabs.stable.example.com" "get crd"
out=$(k get crd crontabs.stable.example.com -o jsonpath='{.status.acceptedNames.kind} {.status.storedVersions} {.metadata.finalizers}')
expect_eq "$out" 'CronTab ["v1"] ["customresourcecleanup.apiextensions.k8s.io"]' "CRD status and finalizer"
out=$(k api-resources --api-group=stable.example.com)
expect_contains "$out" "crontabs" "api-resources"
expect_contains "$out" "ct" "short name"

step "create a CronTab; defaults and printer columns"
out=$(k apply -f "$SOURCE_DIR/examples/crd/my-crontab.yaml")
expect_contains "$out" "crontab.stable.example.com/my-new-cron-object created" "create CronTab"
out=$(k get crontab)
expect_contains "$out" "SPEC" "printer column header"
expect_contains "$out" "REPLICAS" "printer column header"
expect_contains "$out" "* * * * */5" "printer column value"
out=$(k get ct my-new-cron-object -o jsonpath='{.spec.replicas} {.metadata.generation}')
expect_eq "$out" "1 1" "default replicas and generation"
out=$(k get all)
expect_contains "$out" "crontab.stable.example.com/my-new-cron-object" "category all"
out=$(k apply -f "$SOURCE_DIR/examples/crd/my-crontab.yaml")
expect_contains "$out" "unchanged" "re-apply is unchanged"

step "unknown fields are pruned (and refused with strict validation)"
out=$(must_fail k apply -f - <<'EOF'
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: pruned}
spec: {cronSpec: "* * * * *", image: x, colour: blue}
EOF
)
expect_contains "$out" 'unknown field "spec.colour"' "strict decoding error"
k apply --validate=false -f - >/dev/null <<'EOF'
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: pruned}
spec: {cronSpec: "* * * * *", image: x, colour: blue}
EOF
out=$(k get ct pruned -o jsonpath='{.spec}')
expect_eq "$out" '{"cronSpec":"* * * * *","image":"x","replicas":1}' "unknown field pruned"

step "validation errors name the field"
out=$(must_fail k apply -f - <<'EOF'
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: bad}
spec: {cronSpec: "not a cron", image: x, replicas: 20}
EOF
)
expect_contains "$out" 'The CronTab "bad" is invalid' "invalid message"
expect_contains "$out" "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10" "maximum"
expect_contains "$out" "spec.cronSpec: Invalid value: \"not a cron\": spec.cronSpec in body should match" "pattern"
out=$(must_fail k patch ct my-new-cron-object --type=merge -p '{"spec":{"replicas":"three"}}')
expect_contains "$out" 'spec.replicas in body must be of type integer: "string"' "type error"

step "kubectl explain reads the CRD's schema"
out=$(k explain crontab.spec)
expect_contains "$out" "cronSpec" "explain field"
expect_contains "$out" "replicas" "explain field"

step "status and scale subresources"
k patch ct my-new-cron-object --subresource=status --type=merge \
  -p '{"status":{"replicas":2,"labelSelector":"app=cron"}}' >/dev/null
out=$(k get ct my-new-cron-object -o jsonpath='{.status.replicas} {.metadata.generation}')
expect_eq "$out" "2 1" "status written, generation unchanged"
k patch ct my-new-cron-object --type=merge -p '{"status":{"replicas":7}}' >/dev/null
out=$(k get ct my-new-cron-object -o jsonpath='{.status.replicas}')
expect_eq "$out" "2" "main resource update ignores status"
out=$(k scale ct my-new-cron-object --replicas=4)
expect_contains "$out" "scaled" "kubectl scale"
out=$(k get ct my-new-cron-object -o jsonpath='{.spec.replicas} {.metadata.generation}')
expect_eq "$out" "4 2" "scaled spec, generation bumped"
out=$(k get --raw /apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object/scale)
expect_contains "$out" '"selector":"app=cron"' "scale selector"

step "watch sees changes"
k get ct --watch-only -o name >"$E2E_DIR/watch.out" 2>&1 &
watch_pid=$!
E2E_PIDS+=($watch_pid)
sleep 1
k label ct my-new-cron-object tier=gold >/dev/null
wait_for 10 grep -q "my-new-cron-object" "$E2E_DIR/watch.out"
stop_children "$watch_pid"

step "a second version is served with None conversion"
sed -e 's/    - name: v1$/    - name: v1beta1\n      served: true\n      storage: false\n      schema:\n        openAPIV3Schema:\n          type: object\n          x-kubernetes-preserve-unknown-fields: true\n    - name: v1/' \
  "$SOURCE_DIR/examples/crd/crontab-crd.yaml" | k apply -f - >/dev/null
wait_for 10 k get crontabs.v1beta1.stable.example.com my-new-cron-object
out=$(k get --raw /apis/stable.example.com/v1beta1/namespaces/default/crontabs/my-new-cron-object)
expect_contains "$out" '"apiVersion":"stable.example.com/v1beta1"' "read through v1beta1"

step "cluster-scoped CRD and a name conflict"
k apply -f - >/dev/null <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusterthings.example.org}
spec:
  group: example.org
  scope: Cluster
  names: {plural: clusterthings, kind: ClusterThing}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
EOF
k apply -f - >/dev/null <<'EOF'
apiVersion: example.org/v1
kind: ClusterThing
metadata: {name: one}
data: {anything: [1, 2]}
EOF
out=$(k get clusterthings)
expect_contains "$out" "one" "cluster-scoped object"
expect_contains "$out" "AGE" "default Age column"
out=$(must_fail k apply -f - <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: wrong.example.org}
spec:
  group: example.org
  scope: Galaxy
  names: {plural: things, kind: Thing}
  versions: [{name: v1, served: true, storage: false}]
EOF
)
expect_contains "$out" 'metadata.name: Invalid value: "wrong.example.org"' "CRD name check"
expect_contains "$out" 'spec.scope: Unsupported value: "Galaxy"' "CRD scope check"
expect_contains "$out" "spec.versions[0].schema.openAPIV3Schema: Required value" "CRD schema required"
expect_contains "$out" "must have exactly one version marked as storage version" "CRD storage version"

step "deleting the CRD deletes its objects"
k delete crd crontabs.stable.example.com --timeout=30s >/dev/null
out=$(must_fail k get crontabs)
expect_contains "$out" "NotFound" "resource gone"
out=$(api_curl -s "$SERVER_URL/apis/stable.example.com/v1/crontabs")
expect_contains "$out" "NotFound" "no longer served"
k delete crd clusterthings.example.org >/dev/null
# Re-creating the CRD does not bring old objects back.
k apply -f "$SOURCE_DIR/examples/crd/crontab-crd.yaml" >/dev/null
k wait --for condition=established --timeout=20s crd/crontabs.stable.example.com >/dev/null
out=$(k get crontabs -A 2>&1)
expect_contains "$out" "No resources found" "objects deleted with their CRD"

finish
