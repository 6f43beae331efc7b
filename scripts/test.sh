#!/usr/bin/env bash
# The test command: install what is missing, build, and run every unit and end-to-end test with
# ctest (its summary line gives the real counts). Run as root from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Share compiler cache hits between clones at different paths (CI clones afresh).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
cd build && ctest --output-on-failure -j 2 --timeout 900
