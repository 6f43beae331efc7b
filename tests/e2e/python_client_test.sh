#!/usr/bin/env bash
# The official Python client (Debian's python3-kubernetes) lists, creates and watches pods.
source "$(dirname "$0")/lib.sh"
start_server sqlite

step "python client: list, create, watch"
out=$(/usr/bin/python3 - <<'PY'
import threading, time
from kubernetes import client, config, watch
config.load_kube_config()
v1 = client.CoreV1Api()
pods = v1.list_namespaced_pod("default")
assert pods.items == [], pods.items
seen = []
def watcher():
    w = watch.Watch()
    for ev in w.stream(v1.list_namespaced_pod, "default", timeout_seconds=5):
        seen.append((ev["type"], ev["object"].metadata.name))
        if len(seen) >= 2:
            w.stop()
t = threading.Thread(target=watcher); t.start()
time.sleep(1)
body = {"metadata": {"name": "py-pod", "labels": {"by": "python"}},
        "spec": {"containers": [{"name": "c", "image": "minik8s/busybox:1.35"}]}}
v1.create_namespaced_pod("default", body)
v1.patch_namespaced_pod("py-pod", "default", {"metadata": {"labels": {"step": "two"}}})
t.join(10)
pods = v1.list_namespaced_pod("default", label_selector="by=python")
print("listed", [p.metadata.name for p in pods.items])
print("phase", pods.items[0].status.phase)
print("seen", seen)
ns = client.CoreV1Api().list_namespace()
print("namespaces", sorted(n.metadata.name for n in ns.items))
apps = client.AppsV1Api()
print("deployments", apps.list_deployment_for_all_namespaces().items)
PY
)
echo "$out"
expect_contains "$out" "listed ['py-pod']" "python list"
expect_contains "$out" "phase Pending" "python status"
expect_contains "$out" "('ADDED', 'py-pod')" "python watch added"
expect_contains "$out" "('MODIFIED', 'py-pod')" "python watch modified"
expect_contains "$out" "'kube-system'" "python namespaces"
expect_contains "$out" "deployments []" "python empty list"
finish
