#!/usr/bin/env python3
"""Symbol order: the functions cmake/symbol-order.txt lists (the order the binary's code is laid
out in, src/CMakeLists.txt) must mostly still exist in the binary. Renames and new code make the
list stale, and a stale list fails silently: the code processes run spreads over .text again and
every server and agent holds megabytes more (docs/performance.md, Memory). Below 80% of the names
found, this fails and says how to write the list again.

  tests/lint/symbol_order.py SOURCE_DIR BINARY     exit 1 when the list is stale
"""
import subprocess
import sys

root, binary = sys.argv[1], sys.argv[2]
listed = [line.strip() for line in open(f"{root}/cmake/symbol-order.txt") if line.strip()]
nm = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True)
defined = {parts[2] for parts in (line.split() for line in nm.stdout.splitlines()) if len(parts) == 3}
found = sum(1 for name in listed if name in defined)
share = found / len(listed) if listed else 0.0
print(f"symbol order: {found} of {len(listed)} listed functions in {binary} ({share:.0%})")
if share < 0.8:
    print("the list is stale: run `scripts/symbol-order.sh build` (root, valgrind) and commit "
          "cmake/symbol-order.txt")
    sys.exit(1)
