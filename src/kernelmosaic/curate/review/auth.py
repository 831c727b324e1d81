"""Who may talk to the review server.

Protects against: other machines and users when bound elsewhere than 127.0.0.1, ::1 or localhost (a
token, compared in constant time, from a `?token=` link that sets an HttpOnly cookie, or an
`Authorization: Bearer` header); other web pages the reviewer has open posting decisions (an Origin that is not the server's is refused) and DNS rebinding on a
loopback server (a Host header that is not a loopback name is refused). Does not protect against anyone
who can read the token or the reviewer's cookies, nor provide TLS: put it behind a TLS proxy off-machine.
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

__all__ = ["COOKIE", "DEFAULT_HOSTS", "is_loopback", "needs_token", "serving_token", "AccessMiddleware"]

COOKIE = "km_review_token"
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
DEFAULT_HOSTS = ("127.0.0.1", "::1", "localhost")
"""Binding to one of these needs no token; any other address (other loopback addresses too) does."""


def is_loopback(host: str) -> bool:
    """True for `localhost`, 127.0.0.0/8 and ::1 (with or without brackets)."""
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def needs_token(host: str) -> bool:
    return host.strip("[]").lower() not in DEFAULT_HOSTS


def serving_token(host: str, token: str) -> str:
    """The token to serve with: the one given, or a fresh random one when `host` needs a token."""
    if token or not needs_token(host):
        return token
    return secrets.token_urlsafe(24)


def _host_name(netloc: str) -> str:
    return urlsplit(f"//{netloc}").hostname or ""


class AccessMiddleware(BaseHTTPMiddleware):
    def __init__(self, app: ASGIApp, token: str, loopback_only: bool) -> None:
        super().__init__(app)
        self.token = token
        self.loopback_only = loopback_only

    def _token_ok(self, request: Request) -> bool:
        if not self.token:
            return True
        header = request.headers.get("authorization", "")
        offered = [header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else "",
                   request.cookies.get(COOKIE, ""), request.query_params.get("token", "")]
        return any(o and hmac.compare_digest(o.encode(), self.token.encode()) for o in offered)

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        host = request.headers.get("host", "")
        if self.loopback_only and not is_loopback(_host_name(host)):
            return PlainTextResponse(f"host {host!r} refused: this server only answers loopback names", 403)
        if not self._token_ok(request):
            return PlainTextResponse("a token is required: open the link `kernelmosaic review serve` printed", 401)
        origin = request.headers.get("origin")
        if request.method not in ("GET", "HEAD") and origin and urlsplit(origin).netloc != host:
            return PlainTextResponse(f"cross-origin request from {origin} refused", 403)
        if self.token and request.query_params.get("token"):
            # Move the token from the URL into a cookie, so it leaves the address bar and the history.
            response: Response = RedirectResponse(request.url.remove_query_params("token"), status_code=303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
            return response
        return await call_next(request)
