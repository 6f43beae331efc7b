#!/usr/bin/env bash
# A GPU SlurmJob on a real Slurm cluster with a real GPU (issue 20), for a GPU machine that has
# CUDA but neither Slurm nor minik8s (such as the device machines lent to sessions: Ubuntu 24.04, nothing
# to install from). Two steps:
#
#   bash bench/gpu_slurmjob.sh bundle [DIR]   here (Debian 12, Slurm installed, minik8s built):
#       packs into DIR (default .devbundle) a root tree of what the other machine lacks: Slurm
#       22.05 (slurmctld, slurmd, the client commands, the plugins), munge, ip/ss/bc for
#       scripts/slurm.sh, the minik8s binary (stripped) and the shared libraries of all of them.
#   bash bench/gpu_slurmjob.sh run [DIR]      there, as root, in the repository:
#       unpacks the tree into / without replacing any file that exists (tar --skip-old-files:
#       that machine's own libraries win), starts a private Slurm with scripts/slurm.sh (its GPUs
#       from nvidia-smi as gres), and runs `minik8s slurm-submitter --file` for
#       examples/gpu/slurmjob-gpu.yaml: the same submitter a SlurmJob's pod runs, staging the
#       sources, sbatch --gres=gpu:1, following the job, the status written to $OUT (or DIR).
#       Prints the job's output (nvcc build, the matmul line against cuBLAS) and its status, the
#       Slurm job record (gres, CUDA_VISIBLE_DEVICES), and the times of each step.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODE=${1:-}
BUNDLE=${2:-$ROOT/.devbundle}

bundle() {
  local bin=${MINIK8S_BIN:-$ROOT/build/bin/minik8s} files=() f
  [[ -x $bin ]] || { echo "no minik8s binary at $bin (build it, or set MINIK8S_BIN)" >&2; exit 1; }
  stage=$(mktemp -d /tmp/gpu-slurm-bundle.XXXXXX)
  trap 'rm -rf "$stage"' EXIT
  for p in slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libmunge2; do
    while read -r f; do
      [[ -f $f && $f == /usr/* && $f != /usr/share/* ]] && files+=("$f")
    done < <(dpkg -L "$p")
  done
  # The daemons' names are update-alternatives links (slurmd -> slurmd-wlm): copies of the
  # targets (tar -h), like every library link.
  files+=(/usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/slurmstepd /usr/bin/ip /usr/bin/ss /usr/bin/bc)
  mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u)
  mkdir -p "$stage/usr/local/bin"
  strip -o "$stage/usr/local/bin/minik8s" "$bin"
  # The shared libraries of every ELF file (binaries and dlopen'ed plugins), by their soname
  # path, under /usr (merged /usr: /lib is a link there). glibc's and the compiler's own are the
  # other machine's.
  local elves=("${files[@]}" "$stage/usr/local/bin/minik8s") libs
  libs=$(for f in "${elves[@]}"; do
    file -b "$f" | grep -q '^ELF' && ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
  done | sed 's|^/lib/|/usr/lib/|' | sort -u |
    grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libgcc_s|libstdc\+\+|libresolv|libutil)\.so')
  mkdir -p "$BUNDLE"
  tar -C / -czhf "$BUNDLE/root.tar.gz" "${files[@]#/}" $(sed 's|^/||' <<<"$libs")
  tar -C "$stage" -czf "$BUNDLE/minik8s.tar.gz" usr/local/bin/minik8s
  echo "$BUNDLE: root.tar.gz $(du -h "$BUNDLE/root.tar.gz" | cut -f1) (${#files[@]} files," \
    "$(wc -l <<<"$libs") libraries), minik8s.tar.gz $(du -h "$BUNDLE/minik8s.tar.gz" | cut -f1)"
}

run() {
  local out=${OUT:-$BUNDLE} d=/tmp/gpu-slurmjob t0 rc
  [[ $(id -u) == 0 ]] || { echo "run as root" >&2; exit 1; }
  t0=$(date +%s.%N)
  since() { printf '%6.2fs' "$(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null || echo 0)"; }
  tar --skip-old-files -xzf "$BUNDLE/root.tar.gz" -C / && tar --skip-old-files -xzf \
    "$BUNDLE/minik8s.tar.gz" -C / && ldconfig || { echo "cannot unpack $BUNDLE" >&2; exit 1; }
  echo "== unpacked $(since)"
  for b in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/local/bin/minik8s; do
    ldd "$b" | grep 'not found' && { echo "$b: libraries missing" >&2; exit 1; }
  done
  nvidia-smi -L
  rm -rf "$d" && mkdir -p "$d/src"
  cp "$ROOT"/examples/gpu/* "$ROOT"/examples/gpu/cpu/* "$d/src/" 2>/dev/null
  "$ROOT/scripts/slurm.sh" up "$d/cluster" --address 127.0.0.1 || exit 1
  echo "== slurm up $(since)"
  export SLURM_CONF=$d/cluster/slurm.conf
  sinfo -o '%P %D %t %G'
  minik8s slurm-submitter --file "$ROOT/examples/gpu/slurmjob-gpu.yaml" \
    --shared-dir "$d/cluster/shared" --source-dir "$d/src" --status-file "$out/status.json"
  rc=$?
  echo "== submitter exit $rc $(since)"
  scontrol show job -d "$(python3 -c "import json,sys; print(json.load(open('$out/status.json'))['status']['jobId'])")" |
    grep -E 'JobState|TRES|GRES|ExitCode|RunTime|NodeList' || true
  "$ROOT/scripts/slurm.sh" down "$d/cluster" >/dev/null
  return $rc
}

case $MODE in
  bundle) bundle ;;
  run) run ;;
  *) sed -n '2,17p' "$0"; exit 2 ;;
esac
