#!/usr/bin/env bash
# Builds the local images (images/*/image.yaml: pause, busybox, python) into OCI archives under
# build/images/, and pushes them to the cluster registry when one is given:
#   scripts/build-images.sh [--registry 127.0.0.1:5000]
# Deterministic: the same Debian files give the same digests.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MINIK8S_BIN:-$root/build/bin/minik8s}
out=${IMAGES_OUT:-$root/build/images}
if [[ "${1:-}" == --registry && -n "${2:-}" ]]; then
  exec "$bin" image build-defaults --recipes "$root/images" --output "$out" --registry "$2"
fi
exec "$bin" image build-defaults --recipes "$root/images" --output "$out" --no-push
