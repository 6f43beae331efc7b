"""The runtime of a minik8s serverless Function (docs/serverless.md).

Loads the code the Function's ConfigMap puts at /code (one .py file, or bundle.zip: extracted
to a temporary directory after checking every member's path and the total size), imports
$HANDLER ("module.function") and serves it on :8080:

  POST /  (GET without a body too)   JSON body (empty = null) -> handler(event) -> 200 JSON
  handler raises                      500 {"error", "type"}; the traceback goes to stderr (the
                                      pod's log); the process lives on
  body over 6 MB                      413
  GET /healthz                        200 once the handler imported; 500 with the import error
                                      when it cannot be imported (every request then answers
                                      500 with it); 503 while draining

SIGTERM drains: /healthz answers 503 and responses close their connections, new requests are
still served for DRAIN_DELAY_SECONDS (the gateway drops the pod from its endpoints meanwhile),
then the listener stops and the process exits once the requests in flight have answered.
"""

import http.server
import importlib
import json
import os
import signal
import stat
import sys
import tempfile
import threading
import time
import traceback
import zipfile

CODE_DIR = os.environ.get("FUNCTION_CODE_DIR", "/code")
PORT = int(os.environ.get("PORT", "8080"))
MAX_BODY_BYTES = 6 * 1024 * 1024
MAX_BUNDLE_BYTES = 64 * 1024 * 1024  # uncompressed
MAX_BUNDLE_FILES = 10000
DRAIN_DELAY_SECONDS = float(os.environ.get("DRAIN_DELAY_SECONDS", "2"))
TIMEOUT_SECONDS = float(os.environ.get("FUNCTION_TIMEOUT_SECONDS", "30"))
MARKER = "minik8s-function:"


class LoadError(Exception):
    pass


class State:
    handler = None
    error = None  # the import error, as the Function's status shows it
    draining = False
    in_flight = 0
    lock = threading.Condition()


def log(message):
    print(f"{MARKER} {message}", file=sys.stderr, flush=True)


def check_member(info, root):
    name = info.filename
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
        raise LoadError(f"bundle.zip: member {name!r} points outside the bundle")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise LoadError(f"bundle.zip: member {name!r} is a symbolic link")
    target = os.path.realpath(os.path.join(root, name))
    if target != root and not target.startswith(root + os.sep):
        raise LoadError(f"bundle.zip: member {name!r} points outside the bundle")


def extract_bundle(path, dest):
    root = os.path.realpath(dest)
    try:
        with zipfile.ZipFile(path) as bundle:
            members = bundle.infolist()
            if len(members) > MAX_BUNDLE_FILES:
                raise LoadError(f"bundle.zip: {len(members)} members, at most {MAX_BUNDLE_FILES}")
            total = sum(m.file_size for m in members)
            if total > MAX_BUNDLE_BYTES:
                raise LoadError(f"bundle.zip: {total} bytes uncompressed, at most {MAX_BUNDLE_BYTES}")
            for m in members:
                check_member(m, root)
            bundle.extractall(root)
    except zipfile.BadZipFile as e:
        raise LoadError(f"bundle.zip: {e}") from e


def load_handler(spec):
    module_name, _, function_name = spec.rpartition(".")
    if not module_name or not function_name:
        raise LoadError(f"HANDLER {spec!r}: want module.function")
    bundle = os.path.join(CODE_DIR, "bundle.zip")
    if os.path.exists(bundle):
        directory = tempfile.mkdtemp(prefix="function-")
        extract_bundle(bundle, directory)
        sys.path.insert(0, directory)
    else:
        sys.path.insert(0, CODE_DIR)
    module = importlib.import_module(module_name)
    handler = getattr(module, function_name, None)
    if handler is None or not callable(handler):
        raise LoadError(f"module {module_name} has no function {function_name}")
    return handler


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive with the gateway
    server_version = "minik8s-function"
    # Headers and body are two writes: without TCP_NODELAY the body waits for the delayed ACK of
    # the headers (40 ms per request on a keep-alive connection).
    disable_nagle_algorithm = True

    def log_message(self, format, *args):  # no access log: the pod's log is the function's
        pass

    def send_json(self, code, value):
        body = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if State.draining:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.split("?")[0] == "/healthz":
            if State.error:
                self.send_json(500, {"error": State.error, "type": "ImportError"})
            elif State.draining:
                self.send_json(503, {"error": "draining"})
            else:
                self.send_json(200, {"status": "ok"})
            return
        self.invoke()

    def do_POST(self):
        self.invoke()

    do_PUT = do_POST

    def invoke(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            self.send_json(411, {"error": "send the body with a Content-Length", "type": "LengthRequired"})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True  # the body is not read
            self.send_json(413, {"error": f"request body over {MAX_BODY_BYTES} bytes", "type": "PayloadTooLarge"})
            return
        body = self.rfile.read(length) if length else b""
        if State.error:
            self.send_json(500, {"error": State.error, "type": "ImportError"})
            return
        try:
            event = json.loads(body) if body.strip() else None
        except ValueError as e:
            self.send_json(400, {"error": f"request body is not JSON: {e}", "type": "BadRequest"})
            return
        with State.lock:
            State.in_flight += 1
        try:
            self.call(event)
        finally:
            with State.lock:
                State.in_flight -= 1
                State.lock.notify_all()

    def call(self, event):
        try:
            result = State.handler(event)
        except BaseException as e:  # noqa: B036 - a handler's sys.exit() must not end the runtime
            if isinstance(e, KeyboardInterrupt):
                raise
            print(f"{MARKER} handler {os.environ.get('HANDLER')} raised {type(e).__name__}: {e}",
                  file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            self.send_json(500, {"error": str(e), "type": type(e).__name__})
            return
        try:
            json.dumps(result)
        except (TypeError, ValueError) as e:
            log(f"the handler's result is not JSON: {e}")
            self.send_json(500, {"error": f"the handler's result is not JSON: {e}", "type": type(e).__name__})
            return
        self.send_json(200, result)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True  # idle keep-alive connections do not hold the exit
    request_queue_size = 128


def drain(server):
    State.draining = True
    log(f"SIGTERM: draining ({DRAIN_DELAY_SECONDS:g} s, then finishing the requests in flight)")
    time.sleep(DRAIN_DELAY_SECONDS)
    server.shutdown()


def main():
    spec = os.environ.get("HANDLER", "")
    try:
        State.handler = load_handler(spec)
    except BaseException as e:  # any failure of the user's module, SyntaxError included
        State.error = f"{type(e).__name__}: {e}"
        log(f"cannot import handler {spec}: {State.error}")
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
    server = Server(("", PORT), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=drain, args=(server,)).start())
    name = os.environ.get("FUNCTION_NAME", "")
    if not State.error:
        log(f"serving {name} (handler {spec}) on :{PORT}")
    server.serve_forever(poll_interval=0.2)
    deadline = time.monotonic() + TIMEOUT_SECONDS
    with State.lock:
        while State.in_flight > 0 and time.monotonic() < deadline:
            State.lock.wait(0.1)
    log(f"drained ({State.in_flight} requests left), exiting")
    server.server_close()


if __name__ == "__main__":
    main()
