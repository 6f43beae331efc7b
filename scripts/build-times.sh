#!/usr/bin/env bash
# Where the build's time goes: a cold build (fresh build directory, ccache off) of the minik8s
# binary, then of everything the test command builds, then a warm rebuild after touching one
# controller's .cc, and the slowest translation units and links of the cold build from ninja's
# log. Usage: scripts/build-times.sh [BUILD_DIR]   (default /tmp/minik8s-build-times; removed
# first). Takes as long as a cold build: about 20 minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-/tmp/minik8s-build-times}
jobs=${JOBS:-$(nproc)}
export CCACHE_DISABLE=1
rm -rf "$dir"
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc | xargs printf '%.0f'; }

t0=$(now)
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
t1=$(now)
ninja -C "$dir" -j "$jobs" minik8s >/dev/null
t2=$(now)
cp "$dir/.ninja_log" "$dir/ninja_log.binary"
ninja -C "$dir" -j "$jobs" >/dev/null
t3=$(now)
touch "$root/src/controllers/job/job_controller.cc"
ninja -C "$dir" -j "$jobs" minik8s >/dev/null
t4=$(now)

echo "cold build with $jobs jobs, ccache off ($(nproc) cores):"
echo "  configure:                 $(secs "$t0" "$t1") s"
echo "  minik8s binary:            $(secs "$t1" "$t2") s"
echo "  everything (tests, bench): $(secs "$t1" "$t3") s"
echo "warm: touch job_controller.cc, rebuild minik8s: $(secs "$t3" "$t4") s"
echo "slowest 15 steps of the cold build (seconds; links and compiles):"
# .ninja_log v5: start_ms end_ms mtime output hash; the last entry of an output wins.
awk 'NR > 1 {t[$4] = ($2 - $1) / 1000} END {for (o in t) printf "%8.1f  %s\n", t[o], o}' \
  "$dir/.ninja_log" | sort -rn | head -15 || true  # head closes the pipe early
awk 'NR > 1 {t[$4] = ($2 - $1) / 1000} END {for (o in t) {
       if (o ~ /\.o$/) c += t[o]; else l += t[o] }
     printf "sum of steps: compiles %.0f s, links and archives %.0f s\n", c, l}' "$dir/.ninja_log"
