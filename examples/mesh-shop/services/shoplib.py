"""What every service of the shop shares: a threaded HTTP/1.1 server with JSON answers, calls to
the other services that pass the request's tracing and user headers on (so the mesh can route a
whole request by them), and a graceful stop: on SIGTERM the server keeps answering for
DRAIN_SECONDS while the mesh takes the pod out of the endpoints, then exits."""
import http.server
import json
import os
import re
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

# Headers a service copies from the request it serves onto the requests it makes.
PROPAGATED = ("x-request-id", "end-user", "user-agent")


class Failure(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def call(incoming, url, timeout=3):
    """GET a JSON document from another service; Failure(502, ...) when it does not answer 2xx."""
    headers = {h: incoming[h] for h in PROPAGATED if incoming.get(h)}
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return json.load(res)
    except urllib.error.HTTPError as e:
        raise Failure(502, f"{url} answered {e.code}: {e.read().decode(errors='replace').strip()}")
    except (urllib.error.URLError, OSError) as e:
        raise Failure(502, f"{url}: {e}")


def serve(name, routes, port=8080):
    """routes: [(regex, handler(match, headers) -> (status, body, content_type?))]."""
    compiled = [(re.compile(p), h) for p, h in routes]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            status, body, ctype = 404, {"error": f"no route for {path}"}, "application/json"
            if path == "/healthz":
                status, body = 200, {"service": name, "ok": True}
            for pattern, handler in compiled:
                m = pattern.fullmatch(path)
                if m:
                    try:
                        answer = handler(m, self.headers)
                        status, body = answer[0], answer[1]
                        ctype = answer[2] if len(answer) > 2 else ctype
                    except Failure as e:
                        status, body = e.status, {"error": str(e)}
                    break
            data = body.encode() if isinstance(body, str) else (json.dumps(body) + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("", port), Handler)
    server.daemon_threads = True
    drain = float(os.environ.get("DRAIN_SECONDS", "3"))

    def stop(signum, frame):
        def later():
            time.sleep(drain)
            server.shutdown()
        threading.Thread(target=later, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    print(f"{name} listening on :{port}", file=sys.stderr, flush=True)
    server.serve_forever()
