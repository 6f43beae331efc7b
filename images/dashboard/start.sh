#!/bin/sh
# Writes nginx's configuration from the pod's environment (cluster DNS server, service-account
# token and CA) and runs nginx; rewrites it and reloads every 5 minutes, because the projected
# token is rotated by the agent. Listens on 8080.
set -e
sa=/var/run/secrets/kubernetes.io/serviceaccount
domain=${CLUSTER_DOMAIN:-cluster.local}
prometheus=${PROMETHEUS_URL:-http://prometheus.monitoring.svc.$domain:9090}
write_config() {
  ns=$(awk '/^nameserver/ { print $2; exit }' /etc/resolv.conf)
  token=$(cat "$sa/token" 2>/dev/null || true)
  cat >/tmp/nginx.conf <<CONF
worker_processes 1;
error_log stderr warn;
pid /tmp/nginx.pid;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path /tmp/client;
  proxy_temp_path /tmp/proxy;
  resolver ${ns:-127.0.0.1} valid=10s;
  server {
    listen 8080;
    root /usr/share/dashboard;
    location = /healthz { return 200 "ok\n"; }
    location = /favicon.ico { log_not_found off; return 204; }
    # The dashboards: every *.json of the ConfigMap, listed as JSON for the page.
    location /dashboards/ {
      alias /etc/dashboards/;
      autoindex on;
      autoindex_format json;
    }
    # Prometheus' HTTP API, read-only.
    location /api/v1/ {
      limit_except GET { deny all; }
      set \$prometheus $prometheus;
      proxy_pass \$prometheus;
    }
    # The three lists the overview shows, with this pod's service account (view only), as
    # server-side Tables without the objects: only the printed columns leave the cluster.
    location ~ ^/k8s/(api/v1/(nodes|events)|apis/apps/v1/deployments)\$ {
      limit_except GET { deny all; }
      set \$api https://kubernetes.default.svc.$domain;
      rewrite ^/k8s/(.*)\$ /\$1?includeObject=None break;
      proxy_pass \$api;
      proxy_set_header Authorization "Bearer $token";
      proxy_set_header Accept "application/json;as=Table;v=v1;g=meta.k8s.io";
      proxy_ssl_trusted_certificate $sa/ca.crt;
      proxy_ssl_verify on;
      proxy_ssl_name kubernetes.default.svc;
    }
  }
}
CONF
}
write_config
nginx -c /tmp/nginx.conf -g 'daemon off;' &
pid=$!
trap 'kill $pid; wait $pid; exit 0' TERM INT
while kill -0 $pid 2>/dev/null; do
  sleep 300 &
  wait $! || true
  write_config && nginx -c /tmp/nginx.conf -s reload || true
done
wait $pid
