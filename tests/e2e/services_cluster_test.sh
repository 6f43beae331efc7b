#!/usr/bin/env bash
# Services end to end on a 3-node `minik8s cluster up`, with the real kubectl: a 3-replica
# Deployment spread over the nodes behind a ClusterIP Service (60 requests from a pod reach all
# 3 backends; a deleted pod leaves the endpoints and no request fails afterwards; scaling up adds
# backends), NodePort on every node's address from the host, cluster DNS from pods (resolv.conf,
# <svc>, <svc>.<ns>, the full name, headless -> pod IPs, NXDOMAIN), and Dns host/path forwarding
# through the gateway (from a pod and from a node namespace, edits within seconds, unknown
# services in status and events). The nodes' proxies run in nftables mode (`cluster up
# --proxy-mode nftables`); every other cluster test uses the default, iptables.
source "$(dirname "$0")/lib.sh"
set +e
[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces, containerd)"; exit 1; }

step "cluster up: 3 nodes, the service proxy in nftables mode"
start_cluster svc 172.29.103 3 --proxy-mode nftables || exit 1
NODE_IPS=(172.29.103.2 172.29.103.3 172.29.103.4)

step "a 3-replica Deployment spread over the nodes, a ClusterIP and a NodePort Service, a client"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: web}}
      containers:
      - name: web
        image: minik8s/busybox:1.35
        command: ["sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe:
          tcpSocket: {port: 8080}
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata: {name: web-np}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web-headless}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{port: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  containers:
  - name: c
    image: minik8s/busybox:1.35
    command: ["sleep", "3600"]
YAML
ready_count() { kubectl get deploy web -o jsonpath='{.status.readyReplicas}'; }
wait_for 120 bash -c "[[ \$(kubectl get deploy web -o jsonpath='{.status.readyReplicas}') == 3 ]]" ||
  kubectl get pods -o wide
wait_for 60 bash -c "[[ \$(kubectl get pod client -o jsonpath='{.status.phase}') == Running ]]"
kubectl get pods -o wide
nodes=$(kubectl get pods -l app=web -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | wc -l)
expect_eq "$nodes" "3" "the 3 replicas run on 3 different nodes"
CIP=$(kubectl get svc web -o jsonpath='{.spec.clusterIP}')
NP=$(kubectl get svc web-np -o jsonpath='{.spec.ports[0].nodePort}')
pod_ips() { kubectl get pods -l app=web -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}' | sort; }
ep_ips() { kubectl get endpoints web -o jsonpath='{range .subsets[*].addresses[*]}{.ip}{"\n"}{end}' | sort; }
wait_for 20 bash -c "[[ \$(kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 3 ]]"
expect_eq "$(ep_ips)" "$(pod_ips)" "endpoints of web are the 3 pod IPs"

# requests N URL: N requests from the client pod in one exec, one answer (or FAILED) a line.
requests() {
  kubectl exec client -- sh -c "for i in \$(seq $1); do timeout 3 wget -q -O - $2 2>/dev/null || echo FAILED; done"
}

step "the nodes' service rules are an nftables table, not iptables chains"
n1=$(node_ns node-1)
wait_for 20 bash -c "ip netns exec $n1 nft list table ip kube-proxy | grep -q '$CIP . tcp . 80 : goto service-'" ||
  ip netns exec "$n1" nft list table ip kube-proxy | head -40
expect_not_contains "$(ip netns exec "$n1" iptables-save -t nat)" "KUBE-SERVICES" "no iptables-mode chains"

step "60 requests to the ClusterIP $CIP from a pod reach all 3 backends"
out=$(requests 60 "http://$CIP/")
expect_eq "$(echo "$out" | grep -c .)" "60" "60 answers"
expect_eq "$(echo "$out" | grep -c FAILED)" "0" "no failed request"
backends=$(echo "$out" | grep -v FAILED | sort -u)
expect_eq "$(echo "$backends" | wc -l)" "3" "3 distinct backends answered"
expect_eq "$backends" "$(kubectl get pods -l app=web -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)" \
  "the backends are the 3 pods"

step "deleting a pod drops it from the endpoints; no request fails afterwards"
victim=$(kubectl get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
victim_ip=$(kubectl get pod "$victim" -o jsonpath='{.status.podIP}')
kubectl delete pod "$victim" --wait=false >/dev/null
wait_for 20 bash -c "! kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | grep -qw '$victim_ip'" ||
  fail "$victim_ip still in the endpoints"
sleep 1  # the proxies follow the endpoints within a second
out=$(requests 30 "http://$CIP/")
expect_eq "$(echo "$out" | grep -c FAILED)" "0" "no failed request after the endpoint update"
expect_not_contains "$out" "$victim" "the deleted pod does not answer"
wait_for 60 bash -c "[[ \$(kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 3 ]]"

step "scaling up to 5 adds backends"
kubectl scale deploy web --replicas 5 >/dev/null
wait_for 90 bash -c "[[ \$(kubectl get endpoints web -o jsonpath='{.subsets[*].addresses[*].ip}' | wc -w) == 5 ]]" ||
  kubectl get pods -o wide
sleep 1
out=$(requests 100 "http://$CIP/")
expect_eq "$(echo "$out" | grep -c FAILED)" "0" "no failed request with 5 backends"
expect_eq "$(echo "$out" | sort -u | wc -l)" "5" "5 distinct backends answered"

step "NodePort $NP answers on every node's address (from the host)"
for ip in "${NODE_IPS[@]}"; do
  out=$(curl -s --max-time 5 "http://$ip:$NP/")
  expect_contains "$out" "web-" "NodePort on $ip"
done

step "cluster DNS from a pod"
resolv=$(kubectl exec client -- cat /etc/resolv.conf)
expect_contains "$resolv" "nameserver 10.96.0.10" "the pod's nameserver is kube-dns"
expect_contains "$resolv" "search default.svc.cluster.local svc.cluster.local cluster.local" "the search path"
for name in web web.default web.default.svc.cluster.local; do
  out=$(kubectl exec client -- nslookup "$name" 2>&1)
  expect_contains "$out" "Address: $CIP" "$name resolves to the ClusterIP"
done
out=$(kubectl exec client -- timeout 3 wget -q -O - http://web/ 2>&1)
expect_contains "$out" "web-" "http://web/ from a pod"
out=$(kubectl exec client -- nslookup web-headless.default.svc.cluster.local 2>&1)
for ip in $(ep_ips); do expect_contains "$out" "Address: $ip" "headless service lists $ip"; done
expect_not_contains "$out" "Address: 10.96." "headless service has no ClusterIP"
out=$(kubectl exec client -- nslookup nope.default.svc.cluster.local 2>&1)
expect_contains "$out" "NXDOMAIN" "an unknown name is NXDOMAIN"

step "Dns host/path forwarding through the gateway"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: echo-a, labels: {app: echo-a}}
spec:
  containers:
  - name: web
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo A-root > /www/index.html && echo A-x > /www/x && exec httpd -f -p 8080 -h /www"]
---
apiVersion: v1
kind: Pod
metadata: {name: echo-b, labels: {app: echo-b}}
spec:
  containers:
  - name: web
    image: minik8s/busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo B-root > /www/index.html && echo B-x > /www/x && exec httpd -f -p 8080 -h /www"]
---
apiVersion: v1
kind: Service
metadata: {name: svc-a}
spec:
  selector: {app: echo-a}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: svc-b}
spec:
  selector: {app: echo-b}
  ports: [{port: 8081, targetPort: 8080}]
---
apiVersion: minik8s.io/v1
kind: Dns
metadata: {name: example}
spec:
  host: example.com
  paths:
  - {path: /a, serviceName: svc-a, servicePort: 80}
  - {path: /b, serviceName: svc-b, servicePort: 8081}
YAML
wait_for 60 bash -c "[[ \$(kubectl get pods echo-a echo-b -o jsonpath='{.items[*].status.phase}') == 'Running Running' ]]"
out=$(kubectl get dns)
expect_contains "$out" "example.com" "kubectl get dns shows the host"
wait_for 20 bash -c "[[ \$(kubectl get dns example -o jsonpath='{.status.conditions[0].status}') == True ]]"
expect_eq "$(kubectl get svc -n kube-system minik8s-gateway -o jsonpath='{.spec.clusterIP}')" "10.96.0.80" "gateway ClusterIP"
out=$(kubectl exec client -- nslookup example.com 2>&1)
expect_contains "$out" "Address: 10.96.0.80" "example.com resolves to the gateway from a pod"
get_from_pod() { kubectl exec client -- timeout 5 wget -q -O - "$1" 2>&1; }
wait_for 20 bash -c "[[ \$(kubectl exec client -- timeout 5 wget -q -O - http://example.com/a/x 2>&1) == A-x ]]"
expect_eq "$(get_from_pod http://example.com/a/x)" "A-x" "pod: example.com/a/x -> svc-a /x"
expect_eq "$(get_from_pod http://example.com/a/)" "A-root" "pod: example.com/a/ -> svc-a /"
expect_eq "$(get_from_pod http://example.com/b/x)" "B-x" "pod: example.com/b/x -> svc-b /x"
out=$(kubectl exec client -- sh -c 'timeout 5 wget -S -O - http://example.com/c/x 2>&1' 2>&1)
expect_contains "$out" "404" "pod: example.com/c/x is not forwarded"
for n in 1 2 3; do
  out=$(ip netns exec "$(node_ns node-$n)" curl -s --max-time 5 http://example.com/a/x)
  expect_eq "$out" "A-x" "node-$n: example.com/a/x -> svc-a"
done
out=$(ip netns exec "$(node_ns node-2)" curl -s --max-time 5 http://example.com/b/x)
expect_eq "$out" "B-x" "node-2: example.com/b/x -> svc-b"

step "an edit takes effect within seconds"
kubectl patch dns example --type merge -p '{"spec":{"paths":[{"path":"/a","serviceName":"svc-b","servicePort":8081},{"path":"/b","serviceName":"svc-a","servicePort":80}]}}' >/dev/null
start=$SECONDS
wait_for 10 bash -c "[[ \$(kubectl exec client -- timeout 5 wget -q -O - http://example.com/a/x 2>&1) == B-x ]]" &&
  echo "edit visible from the pod after $((SECONDS - start)) s"
wait_for 10 bash -c "[[ \$(ip netns exec $(node_ns node-3) curl -s --max-time 5 http://example.com/b/x) == A-x ]]"

step "a Dns naming an unknown service says so in its status and events"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: minik8s.io/v1
kind: Dns
metadata: {name: broken}
spec:
  host: broken.example.com
  paths:
  - {path: /, serviceName: no-such-service, servicePort: 80}
YAML
wait_for 20 bash -c "[[ \$(kubectl get dns broken -o jsonpath='{.status.conditions[0].reason}') == ServiceNotFound ]]"
out=$(kubectl describe dns broken)
expect_contains "$out" "ServiceNotFound" "describe dns shows the reason"
expect_contains "$out" "service default/no-such-service not found" "describe dns shows the message"
out=$(kubectl get events 2>&1 | grep -i 'dns/broken')
expect_contains "$out" "ServiceNotFound" "an Event for the unknown service"
kubectl delete dns broken example >/dev/null
wait_for 20 bash -c "! kubectl exec client -- nslookup example.com 2>&1 | grep -q 'Address: 10.96.0.80'" ||
  fail "example.com still resolves after the Dns was deleted"

finish
