#!/bin/bash
# Writes cmake/symbol-order.txt: the functions of `minik8s` that a server and an agent run, as
# callgrind sees them in the two benches that measure their memory, for the link to lay out
# together at the front of .text (src/CMakeLists.txt). Functions both run come first, then the
# server's, then the agent's; each group hottest first.
#
# usage: scripts/symbol-order.sh [build-dir]     (root: the agent bench runs containerd)
# Needs valgrind and the benches built (ninja minik8s apiserver_api_bench kubelet_pod_start_bench).
# A stale list only lays the code out less well: names the binary no longer has are skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
command -v valgrind >/dev/null || { echo "symbol-order: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d /tmp/minik8s-symbol-order.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The agent bench runs the `minik8s` beside it, the API bench the one it is given: a wrapper that
# runs servers and agents under callgrind. Dumps every 50 M basic blocks, so that a process the
# bench kills when it is slow to stop still leaves what it ran.
cp "$build/bin/kubelet_pod_start_bench" "$build/bin/apiserver_api_bench" "$work/"
cat >"$work/minik8s" <<EOF
#!/bin/bash
case "\$1" in
  server|agent)
    exec valgrind --tool=callgrind --demangle=no --dump-every-bb=50000000 \\
      --callgrind-out-file=$work/cg-\$1.%p.out "$build/bin/minik8s" "\$@" ;;
  *) exec "$build/bin/minik8s" "\$@" ;;
esac
EOF
chmod +x "$work/minik8s"

(cd "$root" && "$work/kubelet_pod_start_bench" --pods 4) >"$work/kubelet.log" 2>&1 ||
  { cat "$work/kubelet.log" >&2; exit 1; }
"$work/apiserver_api_bench" --pods 300 --backend all --server "$work/minik8s" >"$work/api.log" 2>&1 ||
  { cat "$work/api.log" >&2; exit 1; }

# Each dump's functions in minik8s itself, by the kind of process that ran them.
for f in "$work"/cg-*.out*; do
  [ -s "$f" ] || continue
  kind=$(basename "$f" | cut -d- -f2 | cut -d. -f1)
  callgrind_annotate --threshold=100 --show-percs=no --auto=no "$f" 2>/dev/null |
    sed -nE "s|^ *[0-9,]+ +[^ ]*:([^ :]+) \[$build/bin/minik8s\]\$|$kind \1|p"
done >"$work/functions"

python3 - "$work/functions" "$root/cmake/symbol-order.txt" <<'EOF'
import sys
seen = {"server": {}, "agent": {}}
for line in open(sys.argv[1]):
    kind, name = line.split()
    seen[kind].setdefault(name, len(seen[kind]))
server, agent = seen["server"], seen["agent"]
both = [n for n in server if n in agent]
order = both + [n for n in server if n not in agent] + [n for n in agent if n not in server]
with open(sys.argv[2], "w") as out:
    out.write("".join(n + "\n" for n in order))
print(f"symbol-order: {len(both)} functions both run, {len(server) - len(both)} the server's, "
      f"{len(agent) - len(both)} the agent's -> {sys.argv[2]}")
EOF
