"""The loopback target the vegeta and hey fixtures (tests/fixtures/loadtools/) were recorded
against.

    python3 bench/loadtools_target.py PORT

Every path answers after a short sleep (1 to 7 ms, cycling with the request count), except that
every 17th request answers 500 and every 97th sleeps 1.5 s: past the 1 s timeout the tools were
run with, so each file holds successes, server errors and client timeouts from one URL (hey can
only aim at one). /ok, /err and /slow force one behaviour.
"""
import itertools
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_counter = itertools.count(1)
_lock = threading.Lock()


def _behaviour(path: str) -> tuple[int, float]:
    with _lock:
        n = next(_counter)
    if path == "/slow" or (path != "/ok" and n % 97 == 0):
        return 200, 1.5
    if path == "/err" or (path != "/ok" and n % 17 == 0):
        return 500, 0.001
    return 200, (1 + n % 7) / 1000


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # headers and body go out as two writes: without this, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every keep-alive response
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        status, sleep_s = _behaviour(self.path)
        time.sleep(sleep_s)
        body = b"ok\n" if status == 200 else b"error\n"
        try:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client gave up (its timeout): nothing to answer

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
