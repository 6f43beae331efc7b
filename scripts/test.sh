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
cd build
mkdir -p Testing
set +e
ctest --output-on-failure -j 2 --timeout 900 | tee Testing/ctest-output.txt
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
  # The tail of a long log is all some readers keep: repeat each failed test's own failure lines
  # (a gtest assertion, an e2e FAIL:) and then the summary line.
  echo "=== failure digest"
  awk '/^[[:space:]]*[0-9]+ - .*\((Failed|Timeout|Not Run|SEGFAULT|Exception)\)/' Testing/ctest-output.txt |
    sed -E 's/^[[:space:]]*[0-9]+ - ([^ ]+).*/\1/' | while read -r t; do
      echo "--- $t"
      awk -v t="$t" '$0 ~ "^[0-9]+/[0-9]+ Test +#[0-9]+: " t " " {on=1; next}
        on && /^[0-9]+\/[0-9]+ Test +#/ {on=0} on' Testing/ctest-output.txt |
        grep -E 'FAIL|Failure|Expected|Which is|Value of|error|Error|timed out' | head -25
    done
  grep -E '^[0-9]+% tests passed' Testing/ctest-output.txt
fi
exit $rc
