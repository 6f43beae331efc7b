#!/usr/bin/env bash
# Builds the Debian packages of minik8s:
#   build/deb/minik8s_<version>_<arch>.deb         the stripped binaries (minik8s and the mesh
#                                                  sidecar's minik8s-mesh-proxy), systemd units,
#                                                  configs, image recipes, docs
#   build/deb/minik8s-dbgsym_<version>_<arch>.deb  their debug information by build id
# Usage: scripts/build-deb.sh [--binary PATH] [--output DIR]
# Without --binary it builds the minik8s target first (make deb); minik8s-mesh-proxy is taken
# from beside the binary (the minik8s target builds it too).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
binary=""
out=""
while (($#)); do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --output) out=$2; shift 2 ;;
    *) echo "usage: $0 [--binary PATH] [--output DIR]" >&2; exit 2 ;;
  esac
done
if [[ -z "$binary" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target minik8s
  binary=$build/bin/minik8s
fi
out=$(realpath -m "${out:-$build/deb}")  # absolute: dpkg-shlibdeps runs in another directory
binary=$(realpath "$binary")
version=$("$binary" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
pkg=$out/stage/minik8s
dbg=$out/stage/minik8s-dbgsym
rm -rf "$out/stage"
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/lib/systemd/system" "$pkg/etc/minik8s" \
  "$pkg/usr/share/minik8s/images" "$pkg/usr/share/doc/minik8s" "$dbg/DEBIAN"

# The binaries without their debug information, which goes into the -dbgsym package under
# /usr/lib/debug/.build-id/ where gdb, perf and eu-stack look for it (Debian's layout):
# minik8s and, built beside it, minik8s-mesh-proxy (the mesh-proxy image's binary: `image build`
# copies it from beside /usr/bin/minik8s).
sidecar=$(dirname "$binary")/minik8s-mesh-proxy
if [[ ! -x "$sidecar" ]]; then
  echo "build-deb: no $sidecar beside $binary (build the minik8s-mesh-proxy target)" >&2
  exit 1
fi
build_ids=""
ship() {  # BINARY NAME: stripped into /usr/bin/NAME, its debug file into the -dbgsym package
  local id debug_file
  id=$(readelf -n "$1" | awk '/Build ID:/ {print $3}')
  if [[ -z "$id" ]]; then echo "build-deb: $1 has no build id" >&2; exit 1; fi
  debug_file=$dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
  mkdir -p "$(dirname "$debug_file")"
  objcopy --only-keep-debug --compress-debug-sections "$1" "$debug_file"
  chmod 0644 "$debug_file"
  objcopy --strip-debug --strip-unneeded --add-gnu-debuglink="$debug_file" "$1" "$pkg/usr/bin/$2"
  chmod 0755 "$pkg/usr/bin/$2"
  build_ids="${build_ids:+$build_ids }$id"
}
ship "$binary" minik8s
ship "$sidecar" minik8s-mesh-proxy

install -m 0644 "$root"/packaging/deb/*.service "$pkg/lib/systemd/system/"
for f in server agent registry; do
  install -m 0644 "$root/packaging/deb/$f.yaml" "$pkg/etc/minik8s/$f.yaml"
  echo "/etc/minik8s/$f.yaml" >>"$pkg/DEBIAN/conffiles"
done
for recipe in "$root"/images/*/image.yaml; do  # each recipe with the files kept beside it
  name=$(basename "$(dirname "$recipe")")
  mkdir -p "$pkg/usr/share/minik8s/images/$name"
  for f in "$(dirname "$recipe")"/*; do  # scripts stay executable (an image's entrypoint)
    if [[ -x $f ]]; then mode=0755; else mode=0644; fi
    install -m "$mode" "$f" "$pkg/usr/share/minik8s/images/$name/"
  done
done
for dir in "$root"/addons/*/; do  # manifests `cluster up` applies (addons/<name>/*.yaml)
  name=$(basename "$dir")
  mkdir -p "$pkg/usr/share/minik8s/addons/$name"
  install -m 0644 "$dir"*.yaml "$pkg/usr/share/minik8s/addons/$name/"
done
install -m 0644 "$root/README.md" "$root/docs/multi-machine.md" "$pkg/usr/share/doc/minik8s/"
install -m 0755 "$root"/packaging/deb/{postinst,prerm,postrm} "$pkg/DEBIAN/"
printf 'minik8s\n\nFiles: *\nLicense: see the source repository\n' \
  >"$pkg/usr/share/doc/minik8s/copyright"

# Shared-library dependencies as dh_shlibdeps finds them (dpkg-shlibdeps wants debian/control).
shlib_dir=$(mktemp -d)
trap 'rm -rf "$shlib_dir"' EXIT
mkdir -p "$shlib_dir/debian"
printf 'Source: minik8s\n\nPackage: minik8s\nArchitecture: any\n' >"$shlib_dir/debian/control"
shlibs=$(cd "$shlib_dir" &&
  dpkg-shlibdeps -O "$pkg/usr/bin/minik8s" "$pkg/usr/bin/minik8s-mesh-proxy" 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
if [[ -z "$shlibs" ]]; then echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; fi

fill() {  # control template, directory -> DEBIAN/control
  sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SHLIBS@/$shlibs/" \
    -e "s/@BUILDID@/$build_ids/" -e "s/@SIZE@/$(du -sk --exclude=DEBIAN "$2" | cut -f1)/" \
    "$1" >"$2/DEBIAN/control"
}
fill "$root/packaging/deb/control.in" "$pkg"
fill "$root/packaging/deb/control-dbgsym.in" "$dbg"
mkdir -p "$out"
rm -f "$out"/minik8s_*.deb "$out"/minik8s-dbgsym_*.deb
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$out/minik8s_${version}_${arch}.deb" >/dev/null
dpkg-deb --root-owner-group -Zxz --build "$dbg" "$out/minik8s-dbgsym_${version}_${arch}.deb" \
  >/dev/null
rm -rf "$out/stage"
ls -l "$out"/*.deb | awk '{printf "build-deb: %s (%.1f MiB)\n", $NF, $5 / 1048576}'
