#!/usr/bin/env bash
# The GPU examples' figures (examples/gpu/), on a machine with an NVIDIA GPU and nvcc:
#   - matmul GFLOP/s at 1024, 4096 and 8192 against cuBLAS SGEMM on the same inputs in the same
#     run (goal: >= 60% of cuBLAS at 4096);
#   - matadd GB/s at 2^28 floats (1 GiB per array) against a device-to-device cudaMemcpy
#     measured in the same run (goal: >= 80%).
# Every run is also checked against the CPU reference. Reports figures, never fails on a time.
#
#   bash bench/gpu_bench.sh            (ARCH=sm_90 by default; NVCC, CUDA, ARCH and MATADD_N override;
#                                       nvcc is looked up on PATH, then in /usr/local/cuda)
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../examples/gpu" && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA=${CUDA:-$(dirname "$(dirname "$(readlink -f "$NVCC")")")}
ARCH=${ARCH:-sm_90}
MATADD_N=${MATADD_N:-268435456}
[[ -x $NVCC ]] || { echo "needs nvcc ($NVCC not found)"; exit 1; }
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || { echo "needs an NVIDIA GPU (nvidia-smi finds none)"; exit 1; }

OUT=$(mktemp -d /tmp/minik8s-gpu-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
make -s -C "$SRC" O="$OUT" CUDA="$CUDA" NVCC="$NVCC" ARCH="$ARCH" gpu || exit 1

"$NVCC" --version | tail -2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
echo "load average (start): $(cut -d' ' -f1-3 /proc/loadavg)"
for n in 1024 4096 8192; do
  "$OUT/matmul" "$n" --check --bench --cublas
done
"$OUT/matadd" "$MATADD_N" --check --bench
echo "load average (end): $(cut -d' ' -f1-3 /proc/loadavg)"
