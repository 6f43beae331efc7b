#!/usr/bin/python3
"""The Python side of the chaos soak (tests/soak/soak.sh): API clients and the invariant checks.

  soak_tool.py counter KUBECONFIG NS ID LOG   a compare-and-swap client of ConfigMap NS/counter
  soak_tool.py check-counter KUBECONFIG NS LOG...   the counter's history is consistent
  soak_tool.py monitor KUBECONFIG NS LOG      samples Deployments, ReplicaSets and pods
  soak_tool.py check-surge LOG                no ReplicaSet/Deployment above replicas + surge
  soak_tool.py probes PROBE_LOG FAULTS_LOG BOUND_S   probe failures and recovery per fault

Every client talks to the API server with plain urllib and the admin kubeconfig's certificates,
one new connection per request (through the HA balancer, a request may reach any server).
Clients run until SIGTERM; every line they write is flushed at once, so a killed client loses
nothing it acknowledged.
"""
import base64
import json
import math
import os
import signal
import ssl
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml


class Api:
    """The API server of a kubeconfig (its first cluster and user), with the client certificate."""

    def __init__(self, kubeconfig, timeout=5.0):
        with open(kubeconfig) as f:
            cfg = yaml.safe_load(f)
        self.server = cfg["clusters"][0]["cluster"]["server"].rstrip("/")
        user = cfg["users"][0]["user"]
        self.ctx = ssl.create_default_context(
            cadata=base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]).decode())
        # ssl wants files for the client certificate: a private temp file, removed at once.
        with tempfile.NamedTemporaryFile("wb", delete=False) as f:
            f.write(base64.b64decode(user["client-certificate-data"]))
            f.write(b"\n")
            f.write(base64.b64decode(user["client-key-data"]))
            pem = f.name
        try:
            self.ctx.load_cert_chain(pem)
        finally:
            os.unlink(pem)
        self.timeout = timeout

    def call(self, method, path, body=None):
        """(status, decoded JSON or None); raises on transport errors (no answer)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=self.timeout) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            try:
                payload = json.loads(e.read() or b"null")
            except ValueError:
                payload = None
            return e.code, payload


def stop_on_sigterm():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))


# ---- counter ----------------------------------------------------------------------------------

def counter(kubeconfig, ns, cid, log):
    """Reads ConfigMap counter, writes value+1 with the read resourceVersion as precondition.

    Log lines (time first): `ack OLD NEW RV_READ RV_WRITTEN ATTEMPT` for a 200, `unknown OLD NEW
    RV_READ ATTEMPT WHY` when the outcome cannot be known (no answer, 5xx), `conflict` (409),
    `rejected STATUS`, `readfail WHY`. ATTEMPT (CID-n) is also stored in data.writer."""
    # SIGTERM ends the loop between requests, so the outcome of the last write is logged.
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    api = Api(kubeconfig)
    path = f"/api/v1/namespaces/{ns}/configmaps/counter"
    n = 0
    with open(log, "a", buffering=1) as out:
        while not stop:
            t = time.time()
            try:
                st, obj = api.call("GET", path)
            except Exception as e:  # noqa: BLE001 (any transport error: the server is down)
                out.write(f"{t:.3f} readfail {type(e).__name__}\n")
                time.sleep(0.3)
                continue
            if st != 200:
                out.write(f"{t:.3f} readfail {st}\n")
                time.sleep(0.3)
                continue
            old = int(obj["data"]["value"])
            rv = obj["metadata"]["resourceVersion"]
            n += 1
            attempt = f"{cid}-{n}"
            obj["data"]["value"] = str(old + 1)
            obj["data"]["writer"] = attempt
            t = time.time()
            try:
                st, res = api.call("PUT", path, obj)
            except Exception as e:  # noqa: BLE001
                out.write(f"{t:.3f} unknown {old} {old + 1} {rv} {attempt} {type(e).__name__}\n")
                time.sleep(0.3)
                continue
            if st == 200:
                out.write(f"{t:.3f} ack {old} {old + 1} {rv} {res['metadata']['resourceVersion']} {attempt}\n")
            elif st == 409:
                out.write(f"{t:.3f} conflict\n")
            elif st >= 500:
                out.write(f"{t:.3f} unknown {old} {old + 1} {rv} {attempt} http{st}\n")
                time.sleep(0.3)
            else:
                out.write(f"{t:.3f} rejected {st}\n")
                time.sleep(0.3)
            time.sleep(0.05)


def check_counter(kubeconfig, ns, logs):
    """Prints one JSON object: figures and the list of violations (empty when the history holds).

    Holds when: every acknowledged write is an increment (new = old + 1); no two acknowledged
    writes wrote the same value or started from the same value; each acknowledged write read the
    resourceVersion the acknowledged write of its old value returned; the final value F is at
    least every acknowledged value, and each value in 1..F nobody acknowledged was the target of
    a write whose outcome is unknown (so F = acknowledged + unknown writes that landed); the
    final object's writer is the attempt that acknowledged F."""
    acks, unknown, conflicts, readfails, rejected = [], [], 0, 0, 0
    for log in logs:
        with open(log) as f:
            for line in f:
                p = line.split()
                if len(p) < 2:
                    continue
                if p[1] == "ack" and len(p) == 7:
                    acks.append({"t": float(p[0]), "old": int(p[2]), "new": int(p[3]),
                                 "rv_read": p[4], "rv": p[5], "attempt": p[6]})
                elif p[1] == "unknown" and len(p) >= 6:
                    unknown.append({"old": int(p[2]), "new": int(p[3]), "attempt": p[5]})
                elif p[1] == "conflict":
                    conflicts += 1
                elif p[1] == "readfail":
                    readfails += 1
                elif p[1] == "rejected":
                    rejected += 1
    violations = []
    final = None
    for _ in range(30):  # the API may still be settling after the last fault
        try:
            st, obj = Api(kubeconfig).call("GET", f"/api/v1/namespaces/{ns}/configmaps/counter")
            if st == 200:
                final = obj
                break
        except Exception:  # noqa: BLE001
            pass
        time.sleep(1)
    if final is None:
        violations.append("cannot read the final counter")
        final_value, final_writer, initial_rv = -1, "", ""
    else:
        final_value = int(final["data"]["value"])
        final_writer = final["data"].get("writer", "")
        initial_rv = final["metadata"].get("annotations", {}).get("soak/initial-rv", "")
    by_new, by_old = {}, {}
    for a in acks:
        if a["new"] != a["old"] + 1:
            violations.append(f"acknowledged write {a['attempt']} is not an increment: {a['old']} -> {a['new']}")
        if a["new"] in by_new:
            violations.append(f"value {a['new']} acknowledged twice: {by_new[a['new']]['attempt']} and {a['attempt']} (a lost write)")
        by_new.setdefault(a["new"], a)
        if a["old"] in by_old:
            violations.append(f"two acknowledged writes from value {a['old']}: {by_old[a['old']]['attempt']} and {a['attempt']}")
        by_old.setdefault(a["old"], a)
    for a in acks:
        prev = by_new.get(a["old"])
        if prev is not None and prev["rv"] != a["rv_read"]:
            violations.append(f"{a['attempt']} read value {a['old']} at resourceVersion {a['rv_read']}, "
                              f"but {prev['attempt']} wrote it at {prev['rv']}")
        if a["new"] > final_value >= 0:
            violations.append(f"acknowledged value {a['new']} ({a['attempt']}) above the final value {final_value}: lost")
    unknown_targets = {}
    for u in unknown:
        unknown_targets.setdefault(u["new"], []).append(u["attempt"])
    landed = 0
    for v in range(1, final_value + 1):
        if v in by_new:
            continue
        if v in unknown_targets:
            landed += 1
        else:
            violations.append(f"value {v} was written by nobody (neither acknowledged nor attempted)")
    if final_value > 0 and final_value in by_new and by_new[final_value]["attempt"] != final_writer:
        violations.append(f"the final value {final_value} was acknowledged to {by_new[final_value]['attempt']} "
                          f"but the object says {final_writer}")
    if final_value >= 0 and final_value != len(by_new) + landed:
        violations.append(f"final value {final_value} != {len(by_new)} acknowledged + {landed} unknown that landed")
    print(json.dumps({"final": final_value, "acknowledged": len(acks), "unknown": len(unknown),
                      "unknown_landed": landed, "conflicts": conflicts, "read_failures": readfails,
                      "rejected": rejected, "initial_rv": initial_rv,
                      "violations": violations}))


# ---- surge monitor ----------------------------------------------------------------------------

def monitor(kubeconfig, ns, log):
    """Every 0.5 s: pods first, then ReplicaSets and Deployments (consistent lists from the
    store), one JSON line per sample: {t, deploy: {name: [replicas, maxSurge]}, rs: {name:
    [replicas, owner]}, pods: {rs: [active, running]}}. A pod is active when it is not being
    deleted and not Succeeded/Failed (what the ReplicaSet controller counts); running when also
    phase Running."""
    stop_on_sigterm()
    api = Api(kubeconfig, timeout=3.0)
    with open(log, "a", buffering=1) as out:
        while True:
            t = time.time()
            try:
                sp, pods = api.call("GET", f"/api/v1/namespaces/{ns}/pods")
                sr, rss = api.call("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets")
                sd, deps = api.call("GET", f"/apis/apps/v1/namespaces/{ns}/deployments")
            except Exception:  # noqa: BLE001
                time.sleep(0.5)
                continue
            if (sp, sr, sd) != (200, 200, 200):
                time.sleep(0.5)
                continue
            sample = {"t": round(t, 3), "deploy": {}, "rs": {}, "pods": {}}
            for d in deps["items"]:
                replicas = d["spec"].get("replicas", 1)
                surge = d["spec"].get("strategy", {}).get("rollingUpdate", {}).get("maxSurge", "25%")
                if isinstance(surge, str) and surge.endswith("%"):
                    surge = math.ceil(replicas * int(surge[:-1]) / 100)
                sample["deploy"][d["metadata"]["name"]] = [replicas, int(surge)]
            for r in rss["items"]:
                owner = next((o["name"] for o in r["metadata"].get("ownerReferences", [])
                              if o.get("kind") == "Deployment"), "")
                sample["rs"][r["metadata"]["name"]] = [r["spec"].get("replicas", 1), owner]
            for p in pods["items"]:
                owner = next((o["name"] for o in p["metadata"].get("ownerReferences", [])
                              if o.get("kind") == "ReplicaSet"), None)
                if owner is None or p["metadata"].get("deletionTimestamp"):
                    continue
                phase = p.get("status", {}).get("phase", "Pending")
                if phase in ("Succeeded", "Failed"):
                    continue
                c = sample["pods"].setdefault(owner, [0, 0])
                c[0] += 1
                c[1] += phase == "Running"
            out.write(json.dumps(sample, separators=(",", ":")) + "\n")
            time.sleep(max(0.0, 0.5 - (time.time() - t)))


def check_surge(log, lag_s=90.0):
    """No ReplicaSet (and no Deployment, all its ReplicaSets together) with more active pods than
    its replicas plus the Deployment's maxSurge. Lowering replicas is not instant: the excess must
    not grow (a pod created while over the limit is a violation) and must be gone within lag_s of
    the last decrease of replicas (the controller may be down for a while: a killed leader's
    Lease takes 15 s to move)."""
    samples = []
    with open(log) as f:
        for line in f:
            try:
                samples.append(json.loads(line))
            except ValueError:
                pass  # the last line of a killed monitor
    violations = []
    last = {}  # key -> (active, limit, time replicas last decreased)
    worst = {"excess": -999, "what": ""}
    for s in samples:
        groups = {}
        for rs, (replicas, owner) in s["rs"].items():
            surge = s["deploy"].get(owner, [0, 0])[1]
            active, _ = s["pods"].get(rs, [0, 0])
            groups["rs/" + rs] = (active, replicas + surge)
            if owner in s["deploy"]:
                d = groups.setdefault("deploy/" + owner, [0, sum(s["deploy"][owner])])
                if isinstance(d, list):
                    d[0] += active
        for key, (active, limit) in groups.items():
            prev_active, prev_limit, decreased = last.get(key, (active, limit, -1e18))
            if limit < prev_limit:
                decreased = s["t"]
            # The pods were listed before the ReplicaSets: a scale-down between the two lists
            # shows the pods of the old replicas against the new ones; the previous sample's
            # replicas held when the pods were listed, or the current ones did.
            excess = active - max(limit, prev_limit)
            if excess > worst["excess"]:
                worst = {"excess": excess, "what": f"{key}: {active} active, limit {max(limit, prev_limit)} at {s['t']}"}
            if excess > 0:
                if active > prev_active:
                    violations.append(f"{key}: {active} active pods (was {prev_active}), limit {max(limit, prev_limit)}, at {s['t']}")
                elif s["t"] - decreased > lag_s:
                    violations.append(f"{key}: {active} active pods, limit {limit}, {s['t'] - decreased:.0f} s after replicas were lowered, at {s['t']}")
            last[key] = (active, limit, decreased)
    # One line per key is enough to read; the count says how long it lasted.
    seen, short = set(), []
    for v in violations:
        k = v.split(":")[0]
        if k not in seen:
            seen.add(k)
            short.append(v)
    print(json.dumps({"samples": len(samples), "violating_samples": len(violations),
                      "worst": worst, "violations": short}))


# ---- probes per fault -------------------------------------------------------------------------

def probes(probe_log, faults_log, bound_s):
    """Per fault (a line `START END TYPE TARGET` of FAULTS_LOG: injected at START, repaired at END),
    over the probes from START to the next fault's START: attempts, failures, and the recovery
    time (from START to the first good probe after the last failed one; 0 without failures).
    A violation when the Service still failed more than bound_s after END, or never answered
    again. Prints one JSON object."""
    pr = []
    with open(probe_log) as f:
        for line in f:
            p = line.split()
            if len(p) >= 2:
                try:
                    pr.append((float(p[0]), p[1] == "ok"))
                except ValueError:
                    pass
    faults = []
    with open(faults_log) as f:
        for line in f:
            p = line.split()
            if len(p) >= 4:
                faults.append((float(p[0]), float(p[1]), p[2], p[3]))
    out, violations = [], []
    for i, (start, end, kind, target) in enumerate(faults):
        stop = faults[i + 1][0] if i + 1 < len(faults) else math.inf
        # A probe belongs to the fault under way when it ended: a failed one ended up to its 1 s
        # timeout after it started (it may have been cut by the next fault).
        window = [(t, ok) for t, ok in pr if start <= t + (0.0 if ok else 1.0) < stop]
        failed = [t for t, ok in window if not ok]
        recovery, answered = 0.0, True
        if failed:
            after = [t for t, ok in pr if ok and t > failed[-1]][:1]
            answered = bool(after)
            recovery = (after[0] if after else failed[-1]) - start
            if not answered or (after[0] - end) > bound_s:
                violations.append(f"{kind} {target} at {start:.0f}: the Service answered "
                                  + (f"{after[0] - end:.1f} s after the repair" if answered else "never again"))
        out.append({"type": kind, "target": target, "start": start, "end": end,
                    "attempts": len(window), "failed": len(failed), "recovery_s": round(recovery, 1),
                    "answered": answered})
    print(json.dumps({"faults": out, "violations": violations}))


# ---- report -----------------------------------------------------------------------------------

def report(soak_dir, header):
    """The summary table of a soak run from the files in SOAK_DIR; also writes report.json."""
    def load(name, default):
        try:
            with open(os.path.join(soak_dir, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return default
    services = {s: load(f"probes-{s}.json", {"faults": [], "violations": []}) for s in ("web", "churn")}
    healthy = []
    try:
        with open(os.path.join(soak_dir, "healthy.log")) as f:
            healthy = [line.split() for line in f if line.strip()]
    except OSError:
        pass
    counter_ = load("counter.json", {})
    surge = load("surge.json", {})
    try:
        with open(os.path.join(soak_dir, "violations.log")) as f:
            violations = [line.strip() for line in f if line.strip()]
    except OSError:
        violations = []
    types = {}
    for i, f in enumerate(services["web"]["faults"]):
        t = types.setdefault(f["type"], {"count": 0, "web_failed": 0, "web_attempts": 0, "churn_failed": 0,
                                         "worst_web_recovery_s": 0.0, "worst_churn_recovery_s": 0.0,
                                         "worst_healthy_s": 0, "held_s": 0.0, "replaced": 0, "restarted": 0})
        t["count"] += 1
        t["held_s"] = max(t["held_s"], round(f["end"] - f["start"], 1))
        t["web_failed"] += f["failed"]
        t["web_attempts"] += f["attempts"]
        t["worst_web_recovery_s"] = max(t["worst_web_recovery_s"], f["recovery_s"])
        if i < len(services["churn"]["faults"]):
            c = services["churn"]["faults"][i]
            t["churn_failed"] += c["failed"]
            t["worst_churn_recovery_s"] = max(t["worst_churn_recovery_s"], c["recovery_s"])
        if i < len(healthy) and healthy[i][2].isdigit():
            t["worst_healthy_s"] = max(t["worst_healthy_s"], int(healthy[i][2]))
            if len(healthy[i]) >= 5:
                t["replaced"] += int(healthy[i][3])
                t["restarted"] += int(healthy[i][4])
        elif i < len(healthy):
            t["worst_healthy_s"] = -1  # not healthy within the bound
    lines = [f"SOAK REPORT ({header})", ""]
    lines.append(f"{'fault':<12} {'count':>5} {'longest':>8} {'web failed/probes':>18} {'churn failed':>12} "
                 f"{'worst web recovery':>19} {'worst healthy':>14} {'web pods replaced/restarted':>28}")
    for k in sorted(types):
        t = types[k]
        lines.append(f"{k:<12} {t['count']:>5} {t['held_s']:>7.1f}s {str(t['web_failed']) + '/' + str(t['web_attempts']):>18} "
                     f"{t['churn_failed']:>12} {t['worst_web_recovery_s']:>18.1f}s {str(t['worst_healthy_s']) + 's':>14} "
                     f"{str(t['replaced']) + '/' + str(t['restarted']):>28}")
    total = sum(t["count"] for t in types.values())
    worst = max([f["recovery_s"] for s in services.values() for f in s["faults"]] + [0.0])
    lines.append(f"{'total':<12} {total:>5}   (failed probes per fault: web "
                 f"{sum(t['web_failed'] for t in types.values()) / max(total, 1):.1f}, churn "
                 f"{sum(t['churn_failed'] for t in types.values()) / max(total, 1):.1f}; worst Service recovery {worst:.1f} s)")
    lines.append("")

    def held(prefix):
        return "HELD" if not any(v.startswith(prefix) for v in violations) else "VIOLATED"
    lines.append(f"counter (CAS, 3 clients): {held('VIOLATION: counter')}: final {counter_.get('final')} = "
                 f"{counter_.get('acknowledged')} acknowledged + {counter_.get('unknown_landed')} of "
                 f"{counter_.get('unknown')} unknown outcomes that landed; {counter_.get('conflicts')} conflicts, "
                 f"{counter_.get('read_failures')} failed reads")
    lines.append(f"replicas + surge: {held('VIOLATION: surge')}: {surge.get('samples')} samples, worst excess "
                 f"{surge.get('worst', {}).get('excess')} ({surge.get('worst', {}).get('what')})")
    lines.append(f"services answer again within the bound: {held('VIOLATION: service')}")
    lines.append(f"cluster healthy again after each fault: "
                 f"{'VIOLATED' if any('not healthy' in v for v in violations) else 'HELD'}")
    lines.append(f"pods undisturbed by control-plane, etcd and containerd faults: {held('VIOLATION: pods')}")
    lines.append(f"no leaked process, mount, sandbox, cgroup, rule, namespace: {held('VIOLATION: leak')}")
    lines.append(f"violations: {len(violations)}")
    lines.extend("  " + v for v in violations[:20])
    with open(os.path.join(soak_dir, "report.json"), "w") as f:
        json.dump({"header": header, "faults": types, "worst_service_recovery_s": worst,
                   "counter": counter_, "surge": surge, "violations": violations}, f, indent=1)
    print("\n".join(lines))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "counter":
        counter(*args)
    elif cmd == "check-counter":
        check_counter(args[0], args[1], args[2:])
    elif cmd == "monitor":
        monitor(*args)
    elif cmd == "check-surge":
        check_surge(args[0])
    elif cmd == "report":
        report(args[0], args[1])
    elif cmd == "probes":
        probes(args[0], args[1], float(args[2]))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
