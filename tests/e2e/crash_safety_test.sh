#!/usr/bin/env bash
# SIGKILL the server in the middle of a stream of creates: after restart every create that was
# acknowledged (HTTP 201) is there.
source "$(dirname "$0")/lib.sh"
start_server sqlite

step "stream of creates, then SIGKILL"
acked="$E2E_DIR/acked"
: >"$acked"
(
  for i in $(seq 1 100000); do
    code=$(api_curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      --data "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-$i\"},\"data\":{\"i\":\"$i\"}}" \
      "$SERVER_URL/api/v1/namespaces/default/configmaps") || break
    [[ "$code" == 201 ]] && echo "cm-$i" >>"$acked"
  done
) &
writer=$!
sleep 2
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
wait "$writer" 2>/dev/null || true
n=$(wc -l <"$acked")
echo "acknowledged creates before the kill: $n"
((n > 0)) || fail "no create was acknowledged before the kill"

step "restart and check every acknowledged create"
start_server sqlite
names=$(kubectl get configmaps -n default -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
missing=0
while read -r name; do
  grep -qx "$name" <<<"$names" || { missing=$((missing + 1)); echo "missing: $name"; }
done <"$acked"
expect_eq "$missing" "0" "acknowledged creates lost"
finish
