# TCP figures between two endpoints, measured by the client: round-trip latency of 64-byte
# messages on one connection, then bulk throughput. Bounded: ROUNDS round trips, MB megabytes.
# Server:  python3 pingpong.py serve PORT
# Client:  python3 pingpong.py run HOST PORT ROUNDS MB   -> "rtt_p50_us rtt_p99_us mbit_s"
import socket, sys, time

def serve(port):
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port)); ls.listen(8)
    while True:
        c, _ = ls.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        mode = c.recv(1)
        if mode == b"p":          # ping-pong: echo 64-byte messages
            while True:
                m = b""
                while len(m) < 64:
                    d = c.recv(64 - len(m))
                    if not d: break
                    m += d
                if len(m) < 64: break
                c.sendall(m)
        elif mode == b"b":        # bulk: swallow, then acknowledge with one byte
            while True:
                d = c.recv(1 << 16)
                if not d or d.endswith(b"\xff"): break
            c.sendall(b"k")
        c.close()

def run(host, port, rounds, mb):
    s = socket.create_connection((host, port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"p"); msg = b"x" * 64; rtts = []
    for _ in range(rounds):
        t = time.perf_counter(); s.sendall(msg); got = 0
        while got < 64: got += len(s.recv(64 - got))
        rtts.append((time.perf_counter() - t) * 1e6)
    s.close(); rtts.sort()
    b = socket.create_connection((host, port)); b.sendall(b"b"); chunk = b"\0" * (1 << 16)
    t = time.perf_counter()
    for _ in range(mb * 16): b.sendall(chunk)
    b.sendall(b"\xff"); b.recv(1); dt = time.perf_counter() - t; b.close()
    print("%.0f %.0f %.0f" % (rtts[len(rtts) // 2], rtts[int(len(rtts) * 0.99)], mb * 8 / dt))

if sys.argv[1] == "serve": serve(int(sys.argv[2]))
else: run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
