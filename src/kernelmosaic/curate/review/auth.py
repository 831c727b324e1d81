"""Who may talk to the review server.

Protects against: other users of this machine and other machines (every request, reads and writes alike, needs
the server's token, compared in constant time: from the `?token=` link `review serve` prints, which sets an
HttpOnly SameSite=Strict cookie for that port, or an `Authorization: Bearer` header); other web pages the
reviewer has open posting decisions (an Origin that is not the server's is refused) and DNS rebinding on a
loopback server (a Host header that is not a loopback name is refused). Does not protect against anyone who can
read the token (the terminal, the settings file, the reviewer's cookies), nor vouch for the reviewer's name: a
token holder types it. No TLS: beyond loopback, put it behind a TLS proxy.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from urllib.parse import urlsplit

from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp

__all__ = ["cookie_name", "is_loopback", "serving_token", "AccessMiddleware"]

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
_MIN_TOKEN = 16
"""Shortest token accepted (characters): a generated one has 32."""


def cookie_name(port: int) -> str:
    """The cookie holding the token; one per port, as browsers share cookies across the ports of a host."""
    return f"km_review_token_{port}"


def is_loopback(host: str) -> bool:
    """True for `localhost`, 127.0.0.0/8 and ::1 (with or without brackets)."""
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serving_token(token: str = "") -> str:
    """The token to serve with: the one given (at least 16 characters), else a fresh random one."""
    token = token.strip()
    if token and len(token) < _MIN_TOKEN:
        raise ValueError(f"the review token must be at least {_MIN_TOKEN} characters (got {len(token)}); "
                         "leave it unset and `review serve` makes one")
    return token or secrets.token_urlsafe(24)


def _host_name(netloc: str) -> str:
    return urlsplit(f"//{netloc}").hostname or ""


class AccessMiddleware(BaseHTTPMiddleware):
    def __init__(self, app: ASGIApp, token: str, loopback_only: bool, cookie: str) -> None:
        super().__init__(app)
        if not token:
            raise ValueError("the review server needs a token (`serving_token()` makes one)")
        self.token = token.encode()
        self.loopback_only = loopback_only
        self.cookie = cookie

    def _token_ok(self, request: Request) -> bool:
        header = request.headers.get("authorization", "")
        offered = [header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else "",
                   request.cookies.get(self.cookie, "")]
        if request.method in ("GET", "HEAD"):  # the printed link; a form post never carries the token in its URL
            offered.append(request.query_params.get("token", ""))
        return any(o and hmac.compare_digest(o.encode(), self.token) for o in offered)

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        host = request.headers.get("host", "")
        if self.loopback_only and not is_loopback(_host_name(host)):
            return PlainTextResponse(f"host {host!r} refused: this server only answers loopback names", 403)
        if not self._token_ok(request):
            return PlainTextResponse("a token is required: open the link `kernelmosaic review serve` printed "
                                     "(or send Authorization: Bearer TOKEN)", 401)
        origin = request.headers.get("origin")
        if request.method not in ("GET", "HEAD") and origin and urlsplit(origin).netloc != host:
            return PlainTextResponse(f"cross-origin request from {origin} refused", 403)
        if request.method in ("GET", "HEAD") and request.query_params.get("token"):
            # Move the token from the URL into a cookie, so it leaves the address bar and the history.
            response: Response = RedirectResponse(request.url.remove_query_params("token"), status_code=303)
            response.set_cookie(self.cookie, self.token.decode(), httponly=True, samesite="strict")
            return response
        return await call_next(request)
