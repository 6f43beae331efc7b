# Fake API server on 127.0.0.1 that records the bodies kubectl POSTs, to capture protobuf
# fixtures for tests/unit/api_protobuf_test.cc. Usage:
#   python3 capture_server.py 18763 OUTDIR &
#   KUBECACHEDIR=$(mktemp -d) kubectl --server http://127.0.0.1:18763 create namespace foo
# Each POST is saved as OUTDIR/NN_<path>.bin (+ .meta: URL and Content-Type). Discovery covers the
# groups kubectl's generators write to; GET of a deployment / cronjob / pod / serviceaccount
# returns a small canned object (needed by autoscale, create job --from, create token).
import json, os, sys, http.server, socketserver
OUT = sys.argv[2]
counter = [len([f for f in os.listdir(OUT) if f.endswith(".bin")])]
def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def fields(b):
    i = 0; out = {}
    while i < len(b):
        k, i = varint(b, i); f, w = k >> 3, k & 7
        if w == 0: v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i); v = b[i:i+n]; i += n
        elif w == 1: v = b[i:i+8]; i += 8
        elif w == 5: v = b[i:i+4]; i += 4
        out.setdefault(f, v)
    return out
CORE = ["namespaces","configmaps","secrets","services","serviceaccounts","pods","resourcequotas","serviceaccounts/token"]
KIND = {"namespaces":"Namespace","configmaps":"ConfigMap","secrets":"Secret","services":"Service","serviceaccounts":"ServiceAccount","pods":"Pod","resourcequotas":"ResourceQuota","serviceaccounts/token":"TokenRequest",
 "deployments":"Deployment","jobs":"Job","cronjobs":"CronJob","horizontalpodautoscalers":"HorizontalPodAutoscaler","selfsubjectaccessreviews":"SelfSubjectAccessReview",
 "roles":"Role","clusterroles":"ClusterRole","rolebindings":"RoleBinding","clusterrolebindings":"ClusterRoleBinding","ingresses":"Ingress","poddisruptionbudgets":"PodDisruptionBudget","priorityclasses":"PriorityClass"}
GROUPS = {"apps/v1":["deployments"],"batch/v1":["jobs","cronjobs"],"autoscaling/v2":["horizontalpodautoscalers"],"autoscaling/v1":["horizontalpodautoscalers"],
 "authorization.k8s.io/v1":["selfsubjectaccessreviews"],"rbac.authorization.k8s.io/v1":["roles","clusterroles","rolebindings","clusterrolebindings"],
 "networking.k8s.io/v1":["ingresses"],"policy/v1":["poddisruptionbudgets"],"scheduling.k8s.io/v1":["priorityclasses"]}
CLUSTER = {"namespaces","selfsubjectaccessreviews","clusterroles","clusterrolebindings","priorityclasses"}
def rl(gv, names):
    res = []
    for n in names:
        res.append({"name":n,"singularName":n[:-1],"namespaced":n not in CLUSTER,"kind":KIND[n],"verbs":["create","get","list","delete","patch","update","watch"]})
        if n == "deployments":
            res.append({"name":"deployments/scale","group":"autoscaling","version":"v1","kind":"Scale","namespaced":True,"verbs":["get","patch","update"]})
        if n == "serviceaccounts":
            res.append({"name":"serviceaccounts/token","group":"authentication.k8s.io","version":"v1","kind":"TokenRequest","namespaced":True,"verbs":["create"]})
    return {"kind":"APIResourceList","apiVersion":"v1","groupVersion":gv,"resources":res}
class H(http.server.BaseHTTPRequestHandler):
    def send(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code); self.send_header("Content-Type","application/json"); self.send_header("Content-Length",str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
    def do_GET(self):
        p = self.path.split("?")[0]
        if p == "/version": return self.send(200, {"major":"1","minor":"32","gitVersion":"v1.32.0","gitCommit":"x","gitTreeState":"clean","buildDate":"2024-12-01T00:00:00Z","goVersion":"go1.23","compiler":"gc","platform":"linux/amd64"})
        if p == "/api": return self.send(200, {"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:1"}]})
        if p == "/apis":
            gs = {}
            for gv in GROUPS:
                g, v = gv.split("/"); gs.setdefault(g, []).append({"groupVersion":gv,"version":v})
            return self.send(200, {"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":g,"versions":vs,"preferredVersion":vs[0]} for g, vs in gs.items()]})
        if p == "/api/v1": return self.send(200, rl("v1", [c for c in CORE if "/" not in c]))
        if p.startswith("/apis/"):
            gv = p[len("/apis/"):]
            if gv in GROUPS: return self.send(200, rl(gv, GROUPS[gv]))
        if "/deployments/" in p:
            return self.send(200, {"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":p.rsplit("/",1)[1],"namespace":"default"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}})
        if "/cronjobs/" in p:
            return self.send(200, {"kind":"CronJob","apiVersion":"batch/v1","metadata":{"name":p.rsplit("/",1)[1],"namespace":"default","uid":"cj-uid-1"},"spec":{"schedule":"* * * * *","jobTemplate":{"metadata":{"labels":{"team":"a"}},"spec":{"backoffLimit":2,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox","args":["date"],"env":[{"name":"A","value":"1"}],"resources":{"limits":{"memory":"64Mi"},"requests":{"cpu":"100m"}}}]}}}}}})
        if "/pods/" in p:
            return self.send(200, {"kind":"Pod","apiVersion":"v1","metadata":{"name":p.rsplit("/",1)[1],"namespace":"default","uid":"pod-uid-1"},"spec":{"containers":[{"name":"c","image":"busybox"}]}})
        if "/serviceaccounts/" in p:
            return self.send(200, {"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":p.rsplit("/",1)[1],"namespace":"default"}})
        self.send(404, {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"})
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0")); body = self.rfile.read(n)
        counter[0] += 1
        name = "%02d%s" % (counter[0], self.path.split("?")[0].replace("/", "_"))
        with open(os.path.join(OUT, name + ".bin"), "wb") as f: f.write(body)
        with open(os.path.join(OUT, name + ".meta"), "w") as f: f.write(self.path + "\n" + self.headers.get("Content-Type","") + "\n")
        obj = {"metadata":{"name":"x","namespace":"default"}}
        if body.startswith(b"k8s\0"):
            u = fields(body[4:]); tm = fields(u.get(1, b""))
            obj["apiVersion"] = tm.get(1, b"").decode(); obj["kind"] = tm.get(2, b"").decode()
            md = fields(fields(u.get(2, b"")).get(1, b""))
            if 1 in md: obj["metadata"]["name"] = md[1].decode()
        else:
            try: obj = json.loads(body)
            except Exception: pass
        obj.setdefault("status", {})
        if obj.get("kind") == "TokenRequest": obj["status"] = {"token":"abc","expirationTimestamp":"2030-01-01T00:00:00Z"}
        if obj.get("kind") == "SelfSubjectAccessReview": obj["status"] = {"allowed": True}
        self.send(201, obj)
class S(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
