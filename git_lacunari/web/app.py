"""The live page's ASGI application (Starlette): one HTML page, its script
and style, the snapshot stream, a task's timeline, and — only when the server
was started with ``--allow-actions`` — four audited actions.

Safety, each in one place here:

- **read-only by default**: with actions off, every ``POST /api/action/…``
  answers 403 before anything else is looked at (a forged request included),
  and the page renders no control that changes state (it is told ``actions``);
- **token**: when one is set (always with actions on, and on a non-loopback
  bind), every request must carry it — ``?token=`` once (then a cookie named
  for this server's port, ``HttpOnly``, ``SameSite=Strict``, ``Path=/``: two
  served boards in one browser each keep their own) or
  ``Authorization: Bearer``; compared in constant time; a ``?token=`` given
  beats a cookie left by an earlier server on the same port;
- **host check** on a loopback bind: only loopback host names and the host
  the server was asked to bind are served, so a web page that rebinds its own
  name to 127.0.0.1 cannot read the board;
- **CSRF**: a POST must send ``X-Lac-Csrf`` (a secret of this process, given
  in the page), ``Content-Type: application/json``, and no foreign ``Origin``.

Board text is shown by the page with ``textContent`` only (static/app.js).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import edge
from ..board import Board, validate_task_id
from ..errors import InvalidInput, LacError
from .feed import Client, Feed
from .pool import BoardPool

STATIC = Path(__file__).resolve().parent / "static"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
ACTIONS = ("release", "force-release", "reopen", "cancel")
TOKEN_COOKIE = "lac_token_{port}"  # one per server: cookies are not told apart by port
RETRY_AFTER_S = 5  # a page turned away (too many open) tries again after this
CSRF_HEADER = "x-lac-csrf"
MAX_PERSON = 100
MAX_REASON = 1000
MAX_BODY = 16_384
PERSON_OK = re.compile(r"^[^\x00-\x1f\x7f]{1,100}$")


class TokenGate:
    """Every request carries the token, or gets 401 (nothing else is said)."""

    def __init__(self, app: ASGIApp, token: str | None, cookie: str) -> None:
        self.app = app
        self.token = token
        self.cookie = cookie

    def _given(self, request: Request) -> str | None:
        # The address bar first: a URL just printed by a new server on this
        # port must work even where an old server's cookie is still kept.
        if request.query_params.get("token"):
            return request.query_params["token"]
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return request.cookies.get(self.cookie)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token is None or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = self._given(request)
        if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
            await PlainTextResponse("a token is needed: open the URL git lac serve printed\n", 401)(
                scope, receive, send
            )
            return
        if request.query_params.get("token") and request.method == "GET":
            # Once: keep it in a cookie, and take it out of the address bar and history.
            clean = request.url.remove_query_params("token")
            response = RedirectResponse(str(clean), status_code=303)
            response.set_cookie(self.cookie, self.token, path="/", httponly=True, samesite="strict")
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def host_name(header: str) -> str:
    """The host of a Host header, without its port ([::1]:8765 -> [::1])."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[: header.index("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if ":" in header else header


def allowed_hosts(bound: str) -> frozenset[str]:
    """The Host names a loopback server answers: the loopback names, and the
    host it was asked to bind (127.0.0.2, ::1, ...), so its printed URL works."""
    own = bound.strip().lower().strip("[]")
    return frozenset({*LOOPBACK_HOSTS, f"[{own}]" if ":" in own else own})


class HostGate:
    """A request whose Host is not one of ours gets 400: a page that rebinds
    its own name to our address reaches us with its own name, and is refused."""

    def __init__(self, app: ASGIApp, hosts: Collection[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = Request(scope).headers.get("host", "")
            if host_name(host) not in self.hosts:
                await PlainTextResponse("Invalid host header", 400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class EventStream(Response):
    """A page's server-sent events, from the feed: sliced, bounded, cut off
    when the page stops reading (see :mod:`.feed`)."""

    def __init__(self, feed: Feed, abort: Callable[[Any], None]) -> None:
        self.feed = feed
        self.abort = abort
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        feed = self.feed
        if not feed.admit():
            message = f"too many open pages (at most {feed.max_clients}); the page retries"
            await JSONResponse(
                {"ok": False, "error": {"kind": "too_many_pages", "message": message}},
                503,
                headers={"Retry-After": str(RETRY_AFTER_S), "Cache-Control": "no-store"},
            )(scope, receive, send)
            return
        peer = scope.get("client")
        client = Client(abort=lambda: self.abort(peer))

        async def until_gone() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            client.closed.set()

        listening = asyncio.ensure_future(until_gone())
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-store"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            async for piece in feed.stream(client):
                if client.closed.is_set() or not await feed.deliver(send, piece, client):
                    return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            listening.cancel()
            feed.leave()


def _person(value: Any) -> str:
    if not isinstance(value, str) or not PERSON_OK.match(value.strip() or "\x00"):
        raise InvalidInput(f"say who you are: a name of 1-{MAX_PERSON} characters, one line")
    return value.strip()


def _reason(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_REASON or "\x00" in value:
        raise InvalidInput(f"a reason is text of at most {MAX_REASON} characters")
    return value.strip() or None


def act(board: Board, verb: str, task_id: int, reason: str | None) -> dict[str, Any]:
    """One action, as the board verbs the command line uses."""
    if verb == "release":
        task = board.release(task_id)
    elif verb == "force-release":
        task = board.release(task_id, force=True, reason=reason)
    elif verb == "reopen":
        task = board.reopen_task(task_id, reason=reason)
    else:
        task = board.cancel_task(task_id, reason=reason)
    return task.to_json()


def _status_of(outcome: LacError) -> int:
    code = edge.exit_code_of(outcome)
    return {1: 409, 2: 400}.get(code, 503)


def create_app(
    feed: Feed,
    pool: BoardPool,
    *,
    allow_actions: bool,
    token: str | None,
    csrf: str,
    hosts: Collection[str] | None,
    port: int,
    abort: Callable[[Any], None],
) -> Starlette:
    """``hosts``: the Host names served (None: any, a non-loopback bind, which
    has a token); ``abort(client)`` cuts off the connection of a client
    (``scope["client"]``) at once, its unsent buffer freed."""
    page = (STATIC / "index.html").read_text("utf-8")

    async def index(request: Request) -> Response:
        html = page.replace("{{csrf}}", csrf if allow_actions else "").replace(
            "{{actions}}", "on" if allow_actions else "off"
        )
        return HTMLResponse(
            html,
            headers={
                "Content-Security-Policy": (
                    "default-src 'none'; script-src 'self'; style-src 'self'; "
                    "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
                    "frame-ancestors 'none'"
                ),
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
                "Cache-Control": "no-store",
            },
        )

    async def snapshot(request: Request) -> Response:
        latest = await feed.first(timeout=10.0)
        if latest is None:
            return JSONResponse({"ok": False, "trouble": feed.trouble or "starting"}, 503)
        if feed.gone:
            return JSONResponse({"ok": False, "trouble": feed.trouble, "gone": True}, 503)
        return Response(latest.data, media_type="application/json")

    async def events(request: Request) -> Response:
        return EventStream(feed, abort)

    async def task_detail(request: Request) -> Response:
        try:
            task_id = validate_task_id(request.path_params["task_id"])

            def read(board: Board) -> dict[str, Any]:
                task = board.show(task_id)
                return {
                    "ok": True,
                    "task": task.to_json(),
                    "events": [e.to_json() for e in board.log(task_id)],
                    "now": board.now(),
                }

            return JSONResponse(await pool.run(read))
        except LacError as exc:
            return JSONResponse(edge.payload(exc), _status_of(exc))

    async def action(request: Request) -> Response:
        if not allow_actions:
            return JSONResponse(
                {"ok": False, "error": {"kind": "read_only", "message": "actions are off"}}, 403
            )
        given = request.headers.get(CSRF_HEADER, "")
        origin = request.headers.get("origin")
        host = request.headers.get("host", "")
        if (
            not hmac.compare_digest(given.encode(), csrf.encode())
            or (origin is not None and origin not in (f"http://{host}", f"https://{host}"))
            or request.headers.get("content-type", "").split(";")[0].strip() != "application/json"
        ):
            return JSONResponse(
                {"ok": False, "error": {"kind": "csrf", "message": "not from the page"}}, 403
            )
        verb = request.path_params["verb"]
        try:
            if verb not in ACTIONS:
                raise InvalidInput(f"no action {verb[:40]!r}: one of {', '.join(ACTIONS)}")
            raw = await request.body()
            if len(raw) > MAX_BODY:
                raise InvalidInput("the request is too large")
            try:
                body = json.loads(raw)
            except ValueError:
                raise InvalidInput("the request is not JSON") from None
            if not isinstance(body, dict):
                raise InvalidInput("the request is not a JSON object")
            task_id = validate_task_id(body.get("task"))
            person = _person(body.get("person"))
            reason = _reason(body.get("reason"))

            def run(board: Board) -> dict[str, Any]:
                board.audit = {"via": "git lac serve", "person": person}
                return act(board, verb, task_id, reason)

            task = await pool.run(run)
            return JSONResponse({"ok": True, "task": task})
        except LacError as exc:
            return JSONResponse(edge.payload(exc), _status_of(exc))

    middleware = [Middleware(TokenGate, token=token, cookie=TOKEN_COOKIE.format(port=port))]
    if hosts is not None:
        middleware.insert(0, Middleware(HostGate, hosts=hosts))
    return Starlette(
        routes=[
            Route("/", index),
            Route("/favicon.ico", lambda request: Response(status_code=204)),
            Route("/api/snapshot", snapshot),
            Route("/api/events", events),
            Route("/api/task/{task_id}", task_detail),
            Route("/api/action/{verb}", action, methods=["POST"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=middleware,
    )
