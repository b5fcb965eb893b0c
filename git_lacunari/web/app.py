"""The live page's ASGI application (Starlette): one HTML page, its script
and style, the snapshot stream, a task's timeline, and — only when the server
was started with ``--allow-actions`` — four audited actions.

Safety, each in one place here:

- **read-only by default**: with actions off, every ``POST /api/action/…``
  answers 403 before anything else is looked at (a forged request included),
  and the page renders no control that changes state (it is told ``actions``);
- **token**: when one is set (always on a non-loopback bind), every request
  must carry it — ``?token=`` once (then a cookie, ``HttpOnly``,
  ``SameSite=Strict``) or ``Authorization: Bearer``; compared in constant time;
- **host check** on a loopback bind: only loopback host names are served, so
  a web page that rebinds its own name to 127.0.0.1 cannot read the board;
- **CSRF**: a POST must send ``X-Lac-Csrf`` (a secret of this process, given
  in the page), ``Content-Type: application/json``, and no foreign ``Origin``.

Board text is shown by the page with ``textContent`` only (static/app.js).
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import edge
from ..board import Board, validate_task_id
from ..errors import InvalidInput, LacError
from .feed import Feed

STATIC = Path(__file__).resolve().parent / "static"
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
ACTIONS = ("release", "force-release", "reopen", "cancel")
TOKEN_COOKIE = "lac_token"
CSRF_HEADER = "x-lac-csrf"
MAX_PERSON = 100
MAX_REASON = 1000
MAX_BODY = 16_384
PERSON_OK = re.compile(r"^[^\x00-\x1f\x7f]{1,100}$")


class TokenGate:
    """Every request carries the token, or gets 401 (nothing else is said)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    def _given(self, request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return request.cookies.get(TOKEN_COOKIE) or request.query_params.get("token")

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
            response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="strict")
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


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
    open_board: Callable[[], Board],
    *,
    allow_actions: bool,
    token: str | None,
    csrf: str,
    loopback_only: bool,
) -> Starlette:
    page = (STATIC / "index.html").read_text("utf-8")

    def with_board(work: Callable[[Board], Any]) -> Any:
        board = open_board()
        try:
            return work(board)
        finally:
            board.store.close()

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
        return Response(latest.data, media_type="application/json")

    async def events(request: Request) -> Response:
        return StreamingResponse(
            feed.stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

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

            return JSONResponse(await run_in_threadpool(with_board, read))
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

            task = await run_in_threadpool(with_board, run)
            return JSONResponse({"ok": True, "task": task})
        except LacError as exc:
            return JSONResponse(edge.payload(exc), _status_of(exc))

    middleware = [Middleware(TokenGate, token=token)]
    if loopback_only:
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=LOOPBACK_HOSTS))
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
