#!/usr/bin/env bash
# The Debian package as an administrator uses it: scripts/build-deb.sh packs the stripped binary
# (debug information in minik8s-dbgsym), the systemd units and /etc/minik8s configs; `apt-get
# install ./minik8s_*.deb` installs it into a fresh root (an overlay of this machine's / with an
# empty upper layer, so the host is untouched), where `minik8s --version` answers and the server
# starts exactly as minik8s-server.service starts it, from /etc/minik8s/server.yaml.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
SOURCE_DIR=${SOURCE_DIR:-$(cd "$here/../.." && pwd)}
BASE=/tmp/minik8s-e2e-deb  # fixed, so that a crashed earlier run's mounts are found
ROOT=$BASE/root
CHROOT_PID=""

deb_cleanup() {
  if [[ -n "$CHROOT_PID" ]]; then
    for p in $(our_children "$CHROOT_PID"); do kill "$p" 2>/dev/null || true; done
    wait "$CHROOT_PID" 2>/dev/null || true
  fi
  # Processes still running inside the root (a crashed earlier run) hold its mounts.
  for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/root" 2>/dev/null)" == "$ROOT" ]] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  awk -v b="$BASE" 'index($2, b) == 1 {print $2}' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$BASE"
}
trap 'rc=$?; deb_cleanup; (exit $rc); cleanup' EXIT
deb_cleanup

step "build the packages"
# Relative paths, as `make deb` passes them.
(cd "$E2E_DIR" && bash "$SOURCE_DIR/scripts/build-deb.sh" --binary "$MINIK8S_BIN" --output deb)
deb=$(ls "$E2E_DIR"/deb/minik8s_*.deb)
dbgsym=$(ls "$E2E_DIR"/deb/minik8s-dbgsym_*.deb)
info=$(dpkg-deb --info "$deb")
expect_contains "$info" "Package: minik8s" "package name"
expect_contains "$info" "libc6 (>=" "shared-library dependencies from dpkg-shlibdeps"
expect_contains "$info" "containerd, runc, containernetworking-plugins" "runtime dependencies"
files=$(dpkg-deb --contents "$deb")
for f in ./usr/bin/minik8s ./usr/bin/minik8s-mesh-proxy ./lib/systemd/system/minik8s-server.service \
  ./lib/systemd/system/minik8s-agent.service ./lib/systemd/system/minik8s-registry.service \
  ./etc/minik8s/server.yaml ./etc/minik8s/agent.yaml ./usr/share/minik8s/images/pause/image.yaml \
  ./usr/share/minik8s/images/nginx/nginx.conf ./usr/share/minik8s/images/dashboard/dashboard.js \
  ./usr/share/minik8s/addons/monitoring/prometheus.yaml; do
  expect_contains "$files" "$f" "packaged $f"
done
expect_contains "$(grep ' ./usr/share/minik8s/images/dashboard/start.sh$' <<<"$files")" "-rwxr-xr-x" \
  "an image's entrypoint script stays executable"
expect_contains "$(grep ' ./usr/share/minik8s/images/nginx/nginx.conf$' <<<"$files")" "-rw-r--r--" \
  "other recipe files are 0644"
expect_contains "$(dpkg-deb --contents "$dbgsym")" "./usr/lib/debug/.build-id/" "debug info by build id"
mkdir -p "$E2E_DIR/x"
dpkg-deb -x "$deb" "$E2E_DIR/x"
sections=$(readelf -S "$E2E_DIR/x/usr/bin/minik8s")
expect_not_contains "$sections" ".debug_info" "the packaged binary is stripped"
expect_contains "$sections" ".gnu_debuglink" "and points at its debug file"
expect_not_contains "$(readelf -S "$E2E_DIR/x/usr/bin/minik8s-mesh-proxy")" ".debug_info" \
  "the mesh sidecar's binary is stripped too"
echo "package: $(du -h "$deb" | cut -f1), binary $(du -h "$E2E_DIR/x/usr/bin/minik8s" | cut -f1)" \
  "(unstripped $(du -h "$MINIK8S_BIN" | cut -f1)), dbgsym $(du -h "$dbgsym" | cut -f1)"

step "apt-get install into a fresh root"
mkdir -p "$BASE"
mount -t tmpfs minik8s-e2e-deb "$BASE"
mkdir -p "$BASE/upper" "$BASE/work" "$ROOT"
mount -t overlay overlay -o "lowerdir=/,upperdir=$BASE/upper,workdir=$BASE/work" "$ROOT"
mount -t proc proc "$ROOT/proc"
mount --rbind /dev "$ROOT/dev"  # with /dev/pts, for apt
mount -t tmpfs tmpfs "$ROOT/tmp"
mount -t tmpfs tmpfs "$ROOT/run"  # no /run/systemd/system: the maintainer scripts leave systemd be
[[ ! -e "$ROOT/usr/bin/minik8s" ]] || fail "the fresh root already has /usr/bin/minik8s"
cp "$deb" "$ROOT/tmp/"
out=$(chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
  "/tmp/$(basename "$deb")" 2>&1) || { echo "$out"; fail "apt-get install"; }
expect_contains "$(chroot "$ROOT" dpkg-query -W -f='${Status}' minik8s)" "install ok installed" \
  "dpkg knows the package"
expect_eq "$(chroot "$ROOT" minik8s addons list | tr '\n' ' ')" "monitoring serverless " \
  "the packaged addons are found"
expect_eq "$(chroot "$ROOT" minik8s --version)" "minik8s $("$MINIK8S_BIN" --version | cut -d' ' -f2)" \
  "minik8s --version"
expect_eq "$(chroot "$ROOT" minik8s-mesh-proxy --version | cut -d' ' -f1)" "minik8s-mesh-proxy" \
  "the mesh sidecar's binary runs (its shared libraries are the package's dependencies)"
out=$(chroot "$ROOT" systemd-analyze verify /lib/systemd/system/minik8s-server.service \
  /lib/systemd/system/minik8s-agent.service /lib/systemd/system/minik8s-registry.service 2>&1) ||
  fail "systemd-analyze verify: $out"

step "the server starts as its unit starts it, from /etc/minik8s/server.yaml"
exec_start=$(sed -n 's/^ExecStart=//p' "$ROOT/lib/systemd/system/minik8s-server.service")
expect_eq "$exec_start" "/usr/bin/minik8s server --config /etc/minik8s/server.yaml" "unit command"
port=$(free_port)
sed -i "s/^listen: .*/listen: 127.0.0.1:$port/" "$ROOT/etc/minik8s/server.yaml"
# shellcheck disable=SC2086
chroot "$ROOT" $exec_start >"$E2E_DIR/server.log" 2>&1 &
CHROOT_PID=$!
kc=/var/lib/minik8s/server/kubeconfig  # the data dir the packaged config names
in_root_kubectl() { chroot "$ROOT" env HOME=/tmp kubectl --kubeconfig "$kc" "$@"; }
wait_for 30 in_root_kubectl get --raw /readyz
expect_eq "$(in_root_kubectl get --raw /readyz 2>&1)" "ok" "server ready on the configured port"
expect_contains "$(in_root_kubectl get namespaces 2>&1)" "kube-system" "kubectl against it"
# The server logs its address just after writing the kubeconfig kubectl used: wait for the line.
wait_for 10 grep -q "127.0.0.1:$port" "$E2E_DIR/server.log"
expect_contains "$(cat "$E2E_DIR/server.log")" "127.0.0.1:$port" "listen came from the file"

step "a bad key in the config file is a clear error"
printf 'data-dir: /tmp/x\nno-such-flag: 1\n' >"$ROOT/tmp/bad.yaml"
out=$(chroot "$ROOT" minik8s server --config /tmp/bad.yaml 2>&1) && fail "bad config accepted"
expect_contains "$out" "unknown flag --no-such-flag" "names the key"
printf 'listen: [1, 2]\n' >"$ROOT/tmp/bad2.yaml"
out=$(chroot "$ROOT" minik8s server --config /tmp/bad2.yaml 2>&1) && fail "two listen values accepted"
expect_contains "$out" "bad2.yaml: listen" "names the file and key"

finish
