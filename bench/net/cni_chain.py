"""CNI ADD and DEL of N pod sandboxes through a plugin list, timed per pod (wall and CPU of the
plugins and what they run, such as iptables). Run inside the node's network namespace by
network_cni_chain_bench.sh: python3 cni_chain.py NODE_NETNS PLUGINS_JSON N DATA_DIR LABEL"""
import json
import os
import resource
import subprocess
import sys
import time

node, plugins, n, data, label = (sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]),
                                 sys.argv[4], sys.argv[5])
CNI_PATH = "/usr/lib/cni"


def run_list(command, container, netns):
    """One CNI command through the whole list, as libcni chains it (DEL in reverse order)."""
    prev = None
    for plugin in plugins if command == "ADD" else list(reversed(plugins)):
        conf = dict(plugin, cniVersion="0.4.0", name="bench")
        if command == "ADD" and prev is not None:
            conf["prevResult"] = prev
        if plugin["type"] == "portmap":
            conf["runtimeConfig"] = {"portMappings": []}
        if plugin["type"] == "bridge":
            conf["ipam"] = dict(conf["ipam"], dataDir=data + "/ipam")
        env = dict(os.environ, CNI_COMMAND=command, CNI_CONTAINERID=container,
                   CNI_NETNS="/var/run/netns/" + netns, CNI_PATH=CNI_PATH,
                   CNI_IFNAME="lo" if plugin["type"] == "loopback" else "eth0")
        out = subprocess.run(["ip", "netns", "exec", node, CNI_PATH + "/" + plugin["type"]],
                             input=json.dumps(conf).encode(), env=env, capture_output=True)
        if out.returncode != 0:
            sys.exit(f"{plugin['type']} {command} failed: {out.stdout!r} {out.stderr!r}")
        if command == "ADD" and plugin["type"] != "loopback" and out.stdout.strip():
            prev = json.loads(out.stdout)


def cpu_ms(a, b):
    return (b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime) * 1000


pods = [f"{node}-p{i}" for i in range(n)]
for p in pods:
    subprocess.run(["ip", "netns", "add", p], check=True)
try:
    marks = [(time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN))]
    for i, p in enumerate(pods):
        run_list("ADD", f"c{i}", p)
    marks.append((time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)))
    for i, p in enumerate(pods):
        run_list("DEL", f"c{i}", p)
    marks.append((time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)))
finally:
    for p in pods:
        subprocess.run(["ip", "netns", "del", p])
(t0, r0), (t1, r1), (t2, r2) = marks
print(f"{label:<40} ADD {1000 * (t1 - t0) / n:6.1f} ms wall {cpu_ms(r0, r1) / n:5.1f} ms CPU"
      f"   DEL {1000 * (t2 - t1) / n:6.1f} ms wall {cpu_ms(r1, r2) / n:5.1f} ms CPU  (per pod)")
