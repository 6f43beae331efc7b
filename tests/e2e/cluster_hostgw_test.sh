#!/usr/bin/env bash
# The host-gw backend: no VXLAN device, plain routes via the peer node's underlay address; pods
# reach each other across nodes.
source "$(dirname "$0")/lib.sh"
set +e
start_cluster hgw 172.29.120 2 --network-backend host-gw || exit 1
for n in 1 2; do cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: w$n}
spec:
  nodeName: node-$n
  containers: [{name: w, image: minik8s/busybox:1.35, command: ["sh","-c","echo hi from w$n > /i.html; exec httpd -f -p 8080 -h /"]}]
YAML
done
kubectl wait --for=condition=Ready pod/w1 pod/w2 --timeout=90s
ip2=$(kubectl get pod w2 -o jsonpath='{.status.podIP}')
# Ready without a readiness probe means started: httpd may need a moment to listen.
wait_for 20 bash -c "kubectl exec w1 -- timeout 3 wget -q -O - http://$ip2:8080/i.html | grep -q 'hi from w2'"
expect_eq "$(kubectl exec w1 -- timeout 5 wget -q -O - http://$ip2:8080/i.html)" "hi from w2" "host-gw cross-node"
expect_contains "$(ip -n hgw-node-1 route show proto 107)" "via 172.29.120.3" "route via the peer"
must_fail ip -n hgw-node-1 link show vxlan0
finish
