"""Only the server's own page may talk to it: an ASGI layer in front of Streamlit.

Streamlit lets a WebSocket in from any origin whose host is `localhost`, `127.0.0.1`, `0.0.0.0` or one of the
machine's addresses, on any port (`server_util.is_url_from_allowed_origins` compares host names only), and
from any origin that names the request's own `Host`. So a page another local app serves
(`http://localhost:3000`) could open `/_stcore/stream` and read every run the dashboard shows, and a page
whose domain is rebound to 127.0.0.1 passes as same-origin. No option narrows that, so this layer refuses,
before Streamlit sees it, every WebSocket and HTTP request that carries an `Origin` other than the server's
own address, and, when the server listens on a loopback address, every request whose `Host` is not that
address (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def own_hosts(address: str, port: int) -> frozenset[str]:
    """The `host:port` values a browser that opened this server sends (as `Host`, and in `Origin`): the
    address it listens on, and for a loopback address the other loopback names of the same port."""
    names = {address if ":" not in address or address.startswith("[") else f"[{address}]"}
    if _is_loopback(address):
        names |= set(_LOOPBACK_NAMES)
    return frozenset(f"{n}:{port}" for n in names)


def refusal(headers: dict[str, str], address: str, port: int, extra_origins: frozenset[str],
            scheme: str = "http") -> str | None:
    """Why a request with these (lower-case) headers is refused, or None. `extra_origins`: origins allowed
    besides the server's own (`server.corsAllowedOrigins`, which grpo-dash sets to the server's own);
    `scheme`: the server's (https only with a certificate)."""
    own = own_hosts(address, port)
    host = headers.get("host")
    if _is_loopback(address) and host not in own:
        return f"Host {host!r} is not this server's address"
    origin = headers.get("origin")
    if origin is None:  # not a browser page's request (a browser sends Origin on every WebSocket)
        return None
    theirs, sep, rest = origin.partition("://")
    if origin in extra_origins or (sep and theirs == scheme and rest in own):
        return None
    if not _is_loopback(address) and sep and rest == host:  # same-origin, on an address that is not loopback
        return None
    return f"Origin {origin!r} is not this server's own page"


class OriginGuard:
    """ASGI middleware: a refused WebSocket is closed before its handshake completes (the client sees 403),
    a refused HTTP request gets 403 with a one-line text. The address and port are read from Streamlit's
    config at each request (grpo-dash sets them on the command line)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        from streamlit import config

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        address = config.get_option("server.address") or "localhost"
        port = int(config.get_option("server.port"))
        extra = frozenset(o.strip() for o in config.get_option("server.corsAllowedOrigins") or [])
        why = refusal(headers, address, port, extra, "https" if config.get_option("server.sslCertFile") else "http")
        if why is None:
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = f"refused: {why}\n".encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
