#!/usr/bin/env bash
# Local images and the cluster registry, the way a node uses them: build the default images, run
# the registry and a node's supervised containerd with the minik8s CLI, then pull through the
# docker.io / registry.k8s.io mirror with ctr and run containers from the pulled images.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ $(id -u) != 0 ]] || ! command -v containerd >/dev/null || ! command -v docker-registry >/dev/null; then
  echo "SKIP: needs root, containerd and docker-registry"; exit 0
fi

REG_PID="" CTD_PID="" CONTAINERD_PID=""
images_cleanup() {
  local rc=$?
  # SIGTERM first: the supervisor then stops its containerd and the registry process by PID.
  for pid in $CTD_PID $REG_PID; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $CTD_PID $REG_PID; do wait "$pid" 2>/dev/null || true; done
  [[ -n "$CONTAINERD_PID" ]] && kill -9 "$CONTAINERD_PID" 2>/dev/null || true
  if ((rc != 0)); then
    echo "--- containerd log (tail)"; tail -n 20 "$E2E_DIR/node/containerd/containerd.log" 2>/dev/null || true
    echo "--- registry log (tail)"; tail -n 20 "$E2E_DIR/reg/registry/registry.log" 2>/dev/null || true
  fi
  set +e; (exit $rc)
  cleanup
}
trap images_cleanup EXIT

PORT=$(free_port)
REGISTRY=127.0.0.1:$PORT
SOCK=$E2E_DIR/node/containerd/containerd.sock
HOSTS=$E2E_DIR/node/containerd/certs.d
CTR=(ctr -a "$SOCK" -n k8s.io)

step "build the default images twice: same bytes"
out=$("$MINIK8S_BIN" image build-defaults --recipes "$SOURCE_DIR/images" --output "$E2E_DIR/a" --no-push)
expect_contains "$out" "registry.k8s.io/pause:3.9" "pause names"
expect_contains "$out" "docker.io/library/busybox:1.35" "busybox names"
"$MINIK8S_BIN" image build-defaults --recipes "$SOURCE_DIR/images" --output "$E2E_DIR/b" --no-push >/dev/null
for img in pause busybox python nginx; do
  [[ -s "$E2E_DIR/a/$img.tar" ]] || fail "$img.tar missing"
  expect_eq "$(sha256sum <"$E2E_DIR/a/$img.tar")" "$(sha256sum <"$E2E_DIR/b/$img.tar")" "$img is reproducible"
done
size=$(stat -c %s "$E2E_DIR/a/python.tar")
((size < 80 * 1024 * 1024)) || fail "python image too large: $size bytes"

step "start the cluster registry and push the images"
"$MINIK8S_BIN" image registry --data-dir "$E2E_DIR/reg" --listen "$REGISTRY" >"$E2E_DIR/reg.log" 2>&1 &
REG_PID=$!
wait_for 20 curl -sf "http://$REGISTRY/v2/"
out=$("$MINIK8S_BIN" image push "$E2E_DIR/a/pause.tar" "$E2E_DIR/a/busybox.tar" "$E2E_DIR/a/python.tar" --registry "$REGISTRY")
expect_contains "$out" "pushed $REGISTRY/library/busybox:1.35" "busybox pushed under the docker.io library path"
expect_contains "$out" "pushed $REGISTRY/pause:3.9" "pause pushed under the registry.k8s.io path"
expect_contains "$(curl -s "http://$REGISTRY/v2/library/busybox/tags/list")" '"1.35"' "busybox tags"
expect_contains "$(curl -s "http://$REGISTRY/v2/_catalog")" '"minik8s/python"' "catalog"

step "a user's image archive, pushed as an OCI layout directory"
mkdir -p "$E2E_DIR/user/rootfs"
echo "hello from a user image" >"$E2E_DIR/user/greeting.txt"
cat >"$E2E_DIR/user/image.yaml" <<YAML
names: [team/greeter:v1]
busybox: /usr/bin/busybox
files: [{from: $E2E_DIR/user/greeting.txt, to: /greeting.txt}]
cmd: [cat, /greeting.txt]
YAML
"$MINIK8S_BIN" image build "$E2E_DIR/user/image.yaml" --output "$E2E_DIR/user" >/dev/null
mkdir -p "$E2E_DIR/user/layout" && tar -xf "$E2E_DIR/user/user.tar" -C "$E2E_DIR/user/layout"
out=$("$MINIK8S_BIN" image push "$E2E_DIR/user/layout" --registry "$REGISTRY")
expect_contains "$out" "pushed $REGISTRY/team/greeter:v1" "user image pushed"
out=$(must_fail "$MINIK8S_BIN" image push "$E2E_DIR/user/greeting.txt" --registry "$REGISTRY")
expect_contains "$out" "greeting.txt" "a file that is no archive is refused with its name"

step "a user's image from a Dockerfile (buildah), FROM an image of the cluster registry"
mkdir -p "$E2E_DIR/df"
echo "hello from a Dockerfile" >"$E2E_DIR/df/greeting.txt"
cat >"$E2E_DIR/df/Containerfile" <<'DOCKERFILE'
FROM busybox:1.35
COPY greeting.txt /greeting.txt
RUN echo "and from its RUN step" >> /greeting.txt
CMD ["cat", "/greeting.txt"]
DOCKERFILE
out=$("$MINIK8S_BIN" image build -t team/hello:v2 -f "$E2E_DIR/df/Containerfile" "$E2E_DIR/df" \
  --registry "$REGISTRY" 2>&1) || fail "image build -t: $out"
expect_contains "$out" "pushed $REGISTRY/team/hello:v2" "built and pushed under its name"
expect_contains "$(curl -s "http://$REGISTRY/v2/team/hello/tags/list")" '"v2"' "tag in the registry"
out=$(must_fail "$MINIK8S_BIN" image build -t team/bad:v1 "$E2E_DIR/user" --registry "$REGISTRY")
expect_contains "$out" "no Dockerfile at $E2E_DIR/user/Dockerfile" "a context without a Dockerfile"
printf 'FROM nginx:1.25\n' >"$E2E_DIR/df/Dockerfile.missing"
out=$(must_fail "$MINIK8S_BIN" image build -t team/bad:v1 -f "$E2E_DIR/df/Dockerfile.missing" \
  "$E2E_DIR/df" --registry "$REGISTRY")
expect_contains "$out" "buildah bud failed" "a FROM no registry has fails with buildah's reason"

step "start a node's containerd under the supervisor"
"$MINIK8S_BIN" containerd --data-dir "$E2E_DIR/node" --node-name e2e --registry "$REGISTRY" \
  --pod-cidr 10.244.250.0/24 >"$E2E_DIR/containerd.out" 2>&1 &
CTD_PID=$!
wait_for 30 grep -q "containerd ready" "$E2E_DIR/containerd.out"
CONTAINERD_PID=$(pgrep -P "$CTD_PID" containerd || true)
[[ -n "$CONTAINERD_PID" ]] || fail "containerd is not a child of the supervisor"
expect_contains "$("${CTR[@]}" plugins ls | awk '$1 == "io.containerd.grpc.v1" && $2 == "cri" {print $2, $NF}')" "cri ok" "CRI plugin loaded"
expect_contains "$(cat "$E2E_DIR/node/containerd/cni/net.d/10-minik8s.conflist")" '"10.244.250.0/24"' "CNI config"

step "pull through the mirror: docker.io/library/busybox:1.35, registry.k8s.io/pause:3.9"
"${CTR[@]}" images pull --hosts-dir "$HOSTS" docker.io/library/busybox:1.35 >/dev/null || fail "pull busybox"
"${CTR[@]}" images pull --hosts-dir "$HOSTS" registry.k8s.io/busybox:latest >/dev/null ||
  fail "pull registry.k8s.io/busybox (the name of the Kubernetes docs' examples)"
"${CTR[@]}" images pull --hosts-dir "$HOSTS" registry.k8s.io/pause:3.9 >/dev/null || fail "pull pause"
"${CTR[@]}" images pull --hosts-dir "$HOSTS" docker.io/minik8s/python:latest >/dev/null || fail "pull python"
"${CTR[@]}" images pull --hosts-dir "$HOSTS" docker.io/team/greeter:v1 >/dev/null || fail "pull user image"
"${CTR[@]}" images pull --hosts-dir "$HOSTS" docker.io/team/hello:v2 >/dev/null || fail "pull Dockerfile image"
out=$(must_fail "${CTR[@]}" images pull --hosts-dir "$HOSTS" docker.io/library/nginx:1.25)
expect_contains "$out" "not found" "a missing image is not found (and nothing outside is asked)"
images=$("${CTR[@]}" images ls -q)
expect_contains "$images" "docker.io/library/busybox:1.35" "busybox present"
expect_contains "$images" "registry.k8s.io/pause:3.9" "pause present"

step "run containers from the pulled images"
expect_eq "$("${CTR[@]}" run --rm docker.io/library/busybox:1.35 e2e-hello echo hello)" "hello" "busybox echo"
out=$("${CTR[@]}" run --rm docker.io/library/busybox:1.35 e2e-applets sh -c 'for a in httpd wget nc timeout sleep; do command -v $a; done')
expect_eq "$(echo "$out" | wc -l)" "5" "busybox applets linked"
out=$("${CTR[@]}" run --rm docker.io/minik8s/python:latest e2e-py python3 -c 'import http.server, json, sqlite3, ssl; print("py", 6*7)')
expect_eq "$out" "py 42" "python runs with its stdlib"
expect_eq "$("${CTR[@]}" run --rm docker.io/team/greeter:v1 e2e-user)" "hello from a user image" "user image"
expect_eq "$("${CTR[@]}" run --rm docker.io/team/hello:v2 e2e-dockerfile)" \
  "$(printf 'hello from a Dockerfile\nand from its RUN step')" "Dockerfile image: COPY, RUN and CMD"

step "containerd is restarted when it dies"
kill -9 "$CONTAINERD_PID"
wait_for 15 bash -c "pgrep -P $CTD_PID containerd | grep -vx $CONTAINERD_PID"
NEW_PID=$(pgrep -P "$CTD_PID" containerd || true)
[[ -n "$NEW_PID" && "$NEW_PID" != "$CONTAINERD_PID" ]] || fail "containerd not restarted"
CONTAINERD_PID=$NEW_PID
wait_for 15 "${CTR[@]}" version
expect_contains "$("${CTR[@]}" images ls -q)" "registry.k8s.io/pause:3.9" "images kept across the restart"

step "stopping the supervisor stops containerd"
kill -TERM "$CTD_PID"; wait "$CTD_PID" 2>/dev/null || true; CTD_PID=""
kill -0 "$CONTAINERD_PID" 2>/dev/null && fail "containerd still running after the supervisor stopped"
CONTAINERD_PID=""

finish
