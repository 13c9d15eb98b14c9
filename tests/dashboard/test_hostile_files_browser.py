"""Issue 38 in a real browser and on the wire: a root holding a loop of links and a sparse 4 GB log beside a
run, under `grpo-dash` (the installed command); and the server refusing every origin but its own.

Before: the Runs page showed "This app has encountered an error" and listed no run (Path.resolve() raising
RuntimeError on the loop); a sparse file took all memory; a WebSocket from http://localhost:3000 was accepted.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket

import pytest
from helpers.browser_fixtures import (  # noqa: F401 - the fixtures are used by name
    RENDER_TIMEOUT_MS,
    browser,
    dash_server,
    page,
    screenshot,
    wait_rendered,
)
from helpers.paths import REPO

from dashboard.origin_guard import refusal


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    t = tmp_path_factory.mktemp("hostile") / "hostile"
    t.mkdir()
    shutil.copytree(REPO / "sample_runs" / "healthy", t / "healthy")
    os.symlink("b.jsonl", t / "a.jsonl")
    os.symlink("a.jsonl", t / "b.jsonl")
    (t / "sparse").mkdir()
    big = t / "sparse" / "big.jsonl"
    big.write_bytes(b'{"step": 1, "reward": 0.5}\n')
    with big.open("r+b") as f:
        f.truncate(4 << 30)  # a hole: nothing on disk
    os.utime(big, (0, 0))
    return t


@pytest.fixture(scope="module")
def server(root):
    with dash_server([str(root)], REPO) as url:
        yield url


def handshake(url: str, origin: str | None, host: str | None = None) -> int:
    """The HTTP status of a WebSocket upgrade of the app's stream from a page at `origin`, sent to `host`."""
    addr, port = url.removeprefix("http://").split(":")
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET /_stcore/stream HTTP/1.1\r\nHost: {host or f'{addr}:{port}'}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
               f"Sec-WebSocket-Protocol: streamlit\r\n" + (f"Origin: {origin}\r\n" if origin else "") + "\r\n")
    with socket.create_connection((addr, int(port)), timeout=10) as s:
        s.sendall(request.encode())
        return int(s.recv(4096).decode("latin-1").split()[1])


def test_only_the_servers_own_page_opens_its_websocket(server):
    port = server.rsplit(":", 1)[1]
    assert handshake(server, server) == 101
    assert handshake(server, f"http://localhost:{port}") == 101  # the same server, by its name
    for other in ("http://127.0.0.1:9999", "http://localhost:3000", "http://0.0.0.0:1234", "https://127.0.0.1:"
                  + port, "null", "http://evil.example"):
        assert handshake(server, other) == 403, other  # the first three were 101: Streamlit checks hosts only
    assert handshake(server, f"http://evil.test:{port}", host=f"evil.test:{port}") == 403  # DNS rebinding


def test_a_request_from_another_origin_gets_403_over_http(server):
    import urllib.error
    import urllib.request

    req = urllib.request.Request(f"{server}/_stcore/health", headers={"Origin": "http://localhost:3000"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 403
    with urllib.request.urlopen(f"{server}/_stcore/health", timeout=10) as ok:  # no Origin: a user's own tools
        assert ok.status == 200


@pytest.mark.parametrize(("headers", "why"), [
    ({"host": "127.0.0.1:8501", "origin": "http://127.0.0.1:8501"}, None),
    ({"host": "localhost:8501", "origin": "http://localhost:8501"}, None),
    ({"host": "127.0.0.1:8501"}, None),
    ({"host": "127.0.0.1:8501", "origin": "http://localhost:3000"}, "Origin 'http://localhost:3000' is not this server's own page"),
    ({"host": "evil.test:8501", "origin": "http://evil.test:8501"}, "Host 'evil.test:8501' is not this server's address"),
])
def test_the_guard_by_its_headers(headers, why):
    assert refusal(headers, "127.0.0.1", 8501, frozenset({"http://127.0.0.1:8501"})) == why


def test_a_loop_and_a_sparse_file_leave_the_runs_page_whole(server, page, root):
    page.goto(server)
    wait_rendered(page, "Runs")
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    screenshot(page, "hostile_loop_sparse_runs")
    body = page.inner_text("body")
    assert "encountered an error" not in body and "Traceback" not in body
    page.goto(f"{server}/diagnosis?run=hostile/a.jsonl")
    wait_rendered(page, "Diagnosis")
    alert = page.get_by_test_id("stAlert").filter(has_text="loop of symbolic links").first
    alert.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.goto(f"{server}/diagnosis?run=hostile/sparse/big.jsonl")
    wait_rendered(page, "Diagnosis")
    # the run read: its note (in the notes expander, folded) says why the rest of the file was not
    page.get_by_text("big.jsonl: line 2 is longer than 16 MiB").first.wait_for(state="attached", timeout=RENDER_TIMEOUT_MS)
    assert "encountered an error" not in page.inner_text("body")
