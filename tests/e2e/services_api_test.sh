#!/usr/bin/env bash
# Services on the control plane with the real kubectl, no node agent: ClusterIP and nodePort
# allocation (conflicts refused, allocation kept across a server restart), the kubernetes
# service, and Endpoints/EndpointSlices following pods whose status we patch as a kubelet would
# (IP, Ready).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_server
k() { kubectl "$@"; }

# make_pod <name> <ip> <ready True|False>: a pod of app=web with container port "http" 8080.
make_pod() {
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: web}}
spec:
  containers:
  - name: c
    image: busybox
    ports: [{name: http, containerPort: 8080}]
YAML
  set_status "$1" "$2" "$3"
}
set_status() {
  k patch pod "$1" --subresource=status --type=merge -p \
    "{\"status\":{\"phase\":\"Running\",\"podIP\":\"$2\",\"podIPs\":[{\"ip\":\"$2\"}],\"conditions\":[{\"type\":\"Ready\",\"status\":\"$3\"}]}}" >/dev/null
}
ep_ips() { k get endpoints "$1" -o jsonpath="{.subsets[*].$2[*].ip}" 2>/dev/null; }
ep_is() { [[ "$(ep_ips "$1" "$2")" == "$3" ]]; }

step "the kubernetes service points at the API server"
expect_eq "$(k get svc kubernetes -o jsonpath='{.spec.clusterIP}')" "10.96.0.1" "kubernetes clusterIP"
expect_eq "$(k get svc kubernetes -o jsonpath='{.spec.ports[0].name}:{.spec.ports[0].port}:{.spec.ports[0].targetPort}')" \
  "https:443:$SERVER_PORT" "kubernetes ports"

step "kubectl create service: a ClusterIP from 10.96.0.0/16, endpoints from ready pods"
make_pod web-1 10.244.1.11 True
make_pod web-2 10.244.1.12 False
k create service clusterip web --tcp=80:http >/dev/null
web_ip=$(k get svc web -o jsonpath='{.spec.clusterIP}')
[[ "$web_ip" == 10.96.* && "$web_ip" != 10.96.0.1 && "$web_ip" != 10.96.0.10 ]] || fail "web clusterIP $web_ip"
expect_eq "$(k get svc web -o jsonpath='{.spec.clusterIPs[0]}/{.spec.ipFamilies[0]}/{.spec.ipFamilyPolicy}/{.spec.internalTrafficPolicy}')" \
  "$web_ip/IPv4/SingleStack/Cluster" "allocated fields and defaults"
wait_for 5 ep_is web addresses 10.244.1.11
wait_for 5 ep_is web notReadyAddresses 10.244.1.12
out=$(k get endpoints web)
expect_contains "$out" "10.244.1.11:8080" "kubectl get endpoints (named targetPort resolved)"
out=$(k get endpointslices -l kubernetes.io/service-name=web)
expect_contains "$out" "IPv4" "kubectl get endpointslices: address type"
expect_contains "$out" "8080" "kubectl get endpointslices: port"
expect_contains "$out" "10.244.1.11" "kubectl get endpointslices: endpoints"
expect_eq "$(k get endpointslices -l kubernetes.io/service-name=web -o jsonpath='{.items[0].metadata.labels.endpointslice\.kubernetes\.io/managed-by}')" \
  "endpointslice-controller.k8s.io" "slice managed-by label"
out=$(k describe svc web)
expect_contains "$out" "$web_ip" "describe svc: IP"
expect_contains "$out" "10.244.1.11:8080" "describe svc: endpoints"

step "endpoints follow pods: ready, new, deleted"
set_status web-2 10.244.1.12 True
wait_for 5 ep_is web addresses "10.244.1.11 10.244.1.12"
make_pod web-3 10.244.1.13 True
wait_for 5 ep_is web addresses "10.244.1.11 10.244.1.12 10.244.1.13"
k delete pod web-1 --wait=false >/dev/null
wait_for 5 ep_is web addresses "10.244.1.12 10.244.1.13"
slice_ips() {
  [[ "$(k get endpointslices -l kubernetes.io/service-name=web -o jsonpath='{.items[*].endpoints[*].addresses[0]}')" == "$1" ]]
}
wait_for 5 slice_ips "10.244.1.12 10.244.1.13"

step "kubectl expose and a headless service"
k expose pod web-2 --name=one --port=81 --target-port=8080 >/dev/null  # selector app=web
wait_for 5 ep_is one addresses "10.244.1.12 10.244.1.13"
k create service clusterip hl --clusterip=None --tcp=80:8080 >/dev/null
expect_eq "$(k get svc hl -o jsonpath='{.spec.clusterIP}')" "None" "headless clusterIP"
k label pod web-3 app=hl --overwrite >/dev/null
wait_for 5 ep_is hl addresses 10.244.1.13
wait_for 5 ep_is web addresses 10.244.1.12
wait_for 5 ep_is one addresses 10.244.1.12

step "a requested ClusterIP is honoured once; a taken or foreign one is refused"
k create service clusterip fixed --tcp=80 --clusterip=10.96.7.7 >/dev/null
expect_eq "$(k get svc fixed -o jsonpath='{.spec.clusterIP}')" "10.96.7.7" "requested clusterIP"
out=$(must_fail k create service clusterip dup --tcp=80 --clusterip=10.96.7.7)
expect_contains "$out" 'spec.clusterIPs: Invalid value: []string{"10.96.7.7"}: failed to allocate IP 10.96.7.7: provided IP is already allocated' "taken clusterIP"
out=$(must_fail k create service clusterip dup --tcp=80 --clusterip=10.0.0.7)
expect_contains "$out" "The range of valid IPs is 10.96.0.0/16" "foreign clusterIP"
out=$(must_fail k patch svc fixed --type=merge -p '{"spec":{"clusterIP":"10.96.7.8","clusterIPs":["10.96.7.8"]}}')
expect_contains "$out" "may not change once set" "clusterIP immutable"

step "nodePorts: allocated in 30000-32767, a taken one refused, given back on delete"
k create service nodeport np --tcp=80:8080 --node-port=30080 >/dev/null
out=$(must_fail k create service nodeport np2 --tcp=80:8080 --node-port=30080)
expect_contains "$out" "spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated" "taken nodePort"
k create service nodeport np3 --tcp=80:8080 >/dev/null
np3=$(k get svc np3 -o jsonpath='{.spec.ports[0].nodePort}')
((np3 >= 30000 && np3 <= 32767)) || fail "allocated nodePort $np3"
k delete svc np >/dev/null
k create service nodeport np2 --tcp=80:8080 --node-port=30080 >/dev/null || fail "nodePort not given back"

step "deleting a service gives its IP back and removes its endpoints"
k delete svc fixed >/dev/null
k create service clusterip fixed2 --tcp=80 --clusterip=10.96.7.7 >/dev/null || fail "IP not given back"
k delete svc one >/dev/null
no_ep() { ! k get endpoints one >/dev/null 2>&1; }
wait_for 5 no_ep

step "allocations survive a server restart"
stop_children "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
start_server
expect_eq "$(k get svc web -o jsonpath='{.spec.clusterIP}')" "$web_ip" "web keeps its IP"
out=$(must_fail k create service clusterip again --tcp=80 --clusterip="$web_ip")
expect_contains "$out" "provided IP is already allocated" "web's IP still taken after restart"
out=$(must_fail k create service nodeport np4 --tcp=80:8080 --node-port=30080)
expect_contains "$out" "provided port is already allocated" "nodePort still taken after restart"
k create service clusterip after --tcp=80 >/dev/null
after_ip=$(k get svc after -o jsonpath='{.spec.clusterIP}')
[[ "$after_ip" != "$web_ip" && "$after_ip" != 10.96.7.7 ]] || fail "new IP $after_ip collides"
expect_eq "$(k get svc kubernetes -o jsonpath='{.spec.clusterIP}')" "10.96.0.1" "kubernetes service kept"
make_pod web-4 10.244.1.14 True
wait_for 10 ep_is web addresses "10.244.1.12 10.244.1.14"

finish
