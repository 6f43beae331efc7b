#!/usr/bin/env bash
# The GPU examples (examples/gpu/): builds them out of the source tree with their Makefile and
# checks their results against the CPU reference at ragged sizes.
#
#   - the CPU builds (matmul_cpu, matadd_cpu: what a SlurmJob runs where there is no GPU), always;
#   - the CUDA programs with nvcc -arch=sm_90 when /usr/local/cuda/bin/nvcc exists (NVCC
#     overrides), then their kernels' thread code run on the CPU (--emulate), so the tiling and
#     bounds logic is checked without a GPU;
#   - the CUDA programs on the GPU when nvidia-smi finds one.
#
# Without nvcc it says SKIPPED and passes, except under CI (CI set), where it fails.
#
#   bash tests/gpu_examples_test.sh
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../examples/gpu" && pwd)
OUT=$(mktemp -d /tmp/minik8s-gpu-examples.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
FAILURES=0

# expect_ok CMD...: runs CMD; its result line must say check=ok.
expect_ok() {
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  if ((rc == 0)) && grep -Eq '^(matmul|matadd) .*check=ok' <<<"$out"; then
    echo "ok    $(basename "$1") ${*:2}: $(grep -E '^(matmul|matadd) ' <<<"$out")"
  else
    echo "FAIL  $(basename "$1") ${*:2} (exit $rc):"
    while IFS= read -r l; do echo "      $l"; done <<<"$out"
    FAILURES=$((FAILURES + 1))
  fi
}

echo "--- CPU builds"
nice -n 19 make -s -C "$SRC" O="$OUT" cpu
for n in 1 7 64 129 256; do expect_ok "$OUT/matmul_cpu" "$n" --check; done
expect_ok "$OUT/matmul_cpu" 129 31 200 --check  # M N K all different, none a multiple of 4
expect_ok "$OUT/matmul_cpu" 256 --check --bench --cublas  # the GPU job's flags are accepted
for n in 1 7 1001 1048576; do expect_ok "$OUT/matadd_cpu" "$n" --check; done

# The CUDA programs' thread code on the CPU: every size below has ragged tiles in some
# dimension, or too few elements to fill one tile, or K / N not a multiple of 4 (scalar loads).
emulated_checks() {
  local tile size
  for tile in 128 64; do
    for size in 1 7 64 129 256 "1 300 5" "300 1 17" "129 200 13" "200 129 20" "257 130 255" \
      "64 64 3"; do
      # shellcheck disable=SC2086  # "M N K" splits on purpose
      expect_ok "$OUT/matmul" $size --check --emulate --tile=$tile
    done
  done
  for size in 1 3 4 5 191 192 193 768 769 100003; do
    expect_ok "$OUT/matadd" "$size" --check --emulate
  done
}

gpu_checks() {
  local size
  for size in 1000 1024 1 7 129 "1000 999 37" "4096 130 1024"; do
    # shellcheck disable=SC2086
    expect_ok "$OUT/matmul" $size --check --cublas
  done
  expect_ok "$OUT/matmul" 1000 --check --tile=128
  expect_ok "$OUT/matmul" 1024 --check --tile=64
  for size in 1000 1024 1000003 16777216; do expect_ok "$OUT/matadd" "$size" --check; done
}

echo "--- CUDA programs"
if [[ -x $NVCC ]]; then
  nice -n 19 make -s -C "$SRC" O="$OUT" NVCC="$NVCC" ARCH=sm_90 gpu
  for p in matmul matadd; do
    if [[ -x $OUT/$p ]]; then echo "ok    $p built with $NVCC -arch=sm_90"; else
      echo "FAIL  $p: not built"
      FAILURES=$((FAILURES + 1))
    fi
  done
  emulated_checks
  if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    nvidia-smi -L
    gpu_checks
  else
    echo "no GPU (nvidia-smi finds none): the CUDA programs were built and emulated, not run"
  fi
else
  echo "############################################################"
  echo "SKIPPED: nvcc not found ($NVCC): the CUDA programs were neither built nor checked"
  echo "############################################################"
  if [[ -n ${CI:-} && ${CI} != false && ${CI} != 0 ]]; then
    echo "CI=$CI: a CI machine must have nvcc"
    exit 1
  fi
fi

if ((FAILURES > 0)); then
  echo "$FAILURES check(s) failed"
  exit 1
fi
echo "all checks passed"
