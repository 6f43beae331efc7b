#!/usr/bin/env bash
# Builds the libFuzzer targets in a clang tree and runs each one: first on its kept crash inputs
# (tests/fuzz/regressions/<target>/, each must now pass), then from its seed corpus
# (tests/fuzz/corpus/<target>/) for SECONDS_PER_TARGET seconds. Exit status 0 only when nothing
# crashed; a new crash input is left in <build>/artifacts/<target>/ (copy it into regressions/).
#
# usage: run_fuzz.sh SOURCE_DIR BUILD_DIR SECONDS_PER_TARGET [TARGET...]
set -euo pipefail
src=${1:?source dir}
build=${2:?build dir}
seconds=${3:?seconds per target}
shift 3
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(json_pod yaml quantity selector patch watch_events)
fi

if ! command -v clang++ >/dev/null; then
  echo "SKIP: clang++ is not installed (apt-get install clang)"
  exit 77
fi
export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DMINIK8S_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
ninja -C "$build" -j2 "${targets[@]/%/_fuzz}"

failed=0
for t in "${targets[@]}"; do
  bin=$build/bin/${t}_fuzz
  regressions=$src/tests/fuzz/regressions/$t
  if compgen -G "$regressions/*" >/dev/null; then
    echo "== $t: regression inputs"
    if ! "$bin" "$regressions"/* >"$build/$t.regressions.log" 2>&1; then
      tail -30 "$build/$t.regressions.log"
      echo "FAIL: $t crashes on a kept regression input"
      failed=1
      continue
    fi
  fi
  # libFuzzer adds what it finds to the first corpus directory: keep the source tree clean.
  corpus=$build/corpus/$t
  artifacts=$build/artifacts/$t/
  mkdir -p "$corpus" "$artifacts"
  echo "== $t: fuzzing for ${seconds}s"
  # MINIK8S_FUZZ_RUNS (the test command sets it): a fixed number of runs from a fixed seed, so the
  # short run explores the same inputs every time and cannot turn red at random; scripts/fuzz.sh
  # runs by time and finds new inputs.
  limit=(-max_total_time="$seconds")
  if [ -n "${MINIK8S_FUZZ_RUNS:-}" ]; then limit=(-runs="$MINIK8S_FUZZ_RUNS" -seed=1); fi
  if ! "$bin" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
      -print_final_stats=1 -artifact_prefix="$artifacts" \
      "$corpus" "$src/tests/fuzz/corpus/$t" >"$build/$t.fuzz.log" 2>&1; then
    tail -40 "$build/$t.fuzz.log"
    echo "FAIL: $t found a crash: $(ls -t "$artifacts" | head -1)"
    failed=1
    continue
  fi
  grep -E "stat::number_of_executed_units|cov:" "$build/$t.fuzz.log" | tail -2 || true
done
exit $failed
