#!/usr/bin/env bash
# The longer fuzz run: every libFuzzer target of tests/fuzz for SECONDS each (default 600), in the
# clang tree BUILD_DIR (default /work/build-fuzz-clang or $MINIK8S_FUZZ_BUILD). A crash input is
# left in BUILD_DIR/artifacts/<target>/: fix the bug, then keep the input in
# tests/fuzz/regressions/<target>/ so the short run (ctest -L fuzz) replays it.
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
shift || true
exec bash "$here/tests/fuzz/run_fuzz.sh" "$here" "${MINIK8S_FUZZ_BUILD:-/work/build-fuzz-clang}" \
  "$seconds" "$@"
