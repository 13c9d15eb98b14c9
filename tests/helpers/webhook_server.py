"""Real HTTP servers on 127.0.0.1 for the alert tests: one records every body it gets, one never answers
(hangs until the test ends), one answers 500. Each runs in a thread and is closed by the context manager."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Endpoint:
    """What a server got: (path, headers, parsed JSON body) per request, in order."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour, self.requests, self.release = behaviour, [], threading.Event()
        self.url = ""

    @property
    def bodies(self) -> list:
        return [body for _, _, body in self.requests]


def _handler(endpoint: Endpoint):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            endpoint.requests.append((self.path, dict(self.headers), json.loads(raw.decode("utf-8"))))
            if endpoint.behaviour == "hang":
                endpoint.release.wait(30)
                return
            code = {"fail": 500, "refuse": 404}.get(endpoint.behaviour, 200)
            self.send_response(code)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass
    return Handler


@contextmanager
def endpoint(behaviour: str = "record"):
    """behaviour: "record" (200), "hang" (reads the body, never answers), "fail" (500), "refuse" (404)."""
    ep = Endpoint(behaviour)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(ep))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    ep.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield ep
    finally:
        ep.release.set()
        server.shutdown()
        server.server_close()
