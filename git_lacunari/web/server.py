"""Bind, open the board, and run the live page under uvicorn.

The socket is bound here, before uvicorn starts, so a port in use or a host
that does not resolve is one line and an exit code like every other failure
(``--port 0`` takes a free port; the URL printed names the one taken). The
watcher's board is opened here too: no board is exit 3 before anything listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import secrets
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType

from ..board import Board
from ..errors import CannotWorkHere, InvalidInput, LacError
from ..session import Session
from .app import create_app
from .feed import Feed

MIN_TOKEN = 16
STOP_GRACE_S = 5.0  # after a stop signal, the longest the stop may take
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass(frozen=True)
class Serving:
    url: str  # without the token
    host: str
    port: int
    actions: bool
    token_generated: bool
    role: str | None
    stopped_by: signal.Signals | None = None  # SIGTERM: exit 143


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_token(token: str | None) -> str | None:
    if token is None:
        return None
    if len(token) < MIN_TOKEN or not token.isascii() or not token.isprintable() or " " in token:
        raise InvalidInput(
            f"--token must be at least {MIN_TOKEN} printable ASCII characters without spaces"
        )
    return token


def bind(host: str, port: int) -> socket.socket:
    if not 0 <= port <= 65535:
        raise InvalidInput(f"--port {port}: from 0 (any free port) to 65535")
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise InvalidInput(f"--host {host[:80]!r} does not resolve: {exc}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.set_inheritable(True)
    except OSError as exc:
        sock.close()
        raise CannotWorkHere(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def reader_role(board_name: str) -> str:
    """The board's read-only role in team mode (coord.md's names; the team
    module derives the short form of a long board's names when it is there)."""
    try:
        from ..team import role_names  # type: ignore[import-not-found,attr-defined,unused-ignore]
    except ImportError:
        name = f"lac_{board_name}_reader"
        if len(name.encode()) > 63:
            raise CannotWorkHere(
                f"team mode: the reader role of board {board_name} needs the team module "
                "to name it (the board name is too long)"
            ) from None
        return name
    return str(role_names(board_name)["reader"])


def read_as_reader(board: Board, actions: bool) -> str | None:
    """In team mode with actions off, the page's connection reads as the
    board's reader role (SET ROLE); the role its reads run as."""
    store = board.store
    team = store.one("get_setting", name="team_mode")
    if store.dialect == "postgres" and team and team["value"] == "on" and not actions:
        current = store.one("current_board")
        role = reader_role(str(current["board"]) if current else "")
        try:
            store.one("page_set_role", role=role)
        except LacError:
            raise
        except Exception as exc:  # the driver's own error: the role is missing or not ours
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CannotWorkHere(
                f"team mode: the page reads as {role}, and cannot: {first} "
                "(`git lac team enable` makes it)"
            ) from None
    row = store.one("page_role")
    return None if row is None or row["role"] is None else str(row["role"])


def serve(
    session: Session,
    *,
    host: str,
    port: int,
    token: str | None,
    allow_actions: bool,
    open_browser: bool,
    echo: Callable[[str], None],
    min_interval: float = 0.2,
) -> Serving:
    import uvicorn

    token = check_token(token)
    loopback = is_loopback(host)
    generated = False
    if token is None and not loopback:
        token, generated = secrets.token_urlsafe(24), True

    def open_board() -> Board:
        board = session.new_board(touch=False)
        read_as_reader(board, allow_actions)
        return board

    watcher = session.new_board(touch=False)
    # every action acts as this agent (and names the person): the board's, so
    # on a team board the session's role, not the name git config gives
    identity = watcher.identity
    role = read_as_reader(watcher, allow_actions)
    sock = bind(host, port)
    bound_port = int(sock.getsockname()[1])
    shown_host = f"[{host.strip('[]')}]" if ":" in host else host
    url = f"http://{shown_host}:{bound_port}/"
    feed = Feed(
        open_board,
        actions=allow_actions,
        min_interval=min_interval,
        board=watcher,
    )
    app = create_app(
        feed,
        open_board,
        allow_actions=allow_actions,
        token=token,
        csrf=secrets.token_urlsafe(24),
        loopback_only=loopback,
    )
    # A stop that arrives once the URL is out but before uvicorn's handlers are
    # in (a supervisor that stops what it has just seen start) is held, then
    # honoured as soon as they are: never a silent death without its --json.
    early: list[int] = []
    for sig in STOP_SIGNALS:
        signal.signal(sig, lambda sig, _frame: early.append(sig))
    mode = f"actions on, as {identity.name}" if allow_actions else "read-only"
    echo(f"git lac serve: {url} ({mode}; {watcher.store.dialect} board; Ctrl-C stops)")
    if generated:
        echo(f"git lac serve: token (shown once): {url}?token={token}")
    if open_browser:
        import webbrowser

        webbrowser.open(f"{url}?token={token}" if token else url)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",  # the feed starts and stops with the server (Server below)
        timeout_graceful_shutdown=1,
        server_header=False,
    )

    stopped_by: list[int] = []

    def give_up(sig: int) -> None:
        # Never a hang: a stop that has not finished by now (a connection or a
        # board call that would not end) ends the process, saying so.
        import os
        import sys

        name = signal.Signals(sig).name
        sys.stderr.write(f"git lac: stopped by {name} (forced after {STOP_GRACE_S:g}s)\n")
        sys.stderr.flush()
        os._exit(128 + sig)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if stopped_by:
                # One stop: `git lac` is run by git, which passes a Ctrl-C on to us
                # as well, and uvicorn would take that for a second Ctrl-C and skip
                # the orderly shutdown. The stop is bounded anyway (give_up).
                return
            backstop = threading.Timer(STOP_GRACE_S, give_up, args=(sig,))
            backstop.daemon = True
            backstop.start()
            feed.close_streams()  # the pages' streams end first, so the stop is prompt
            stopped_by.append(sig)
            super().handle_exit(sig, frame)

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            feed.start(asyncio.get_running_loop())
            await super().startup(sockets)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            feed.close_streams()
            await super().shutdown(sockets)
            await asyncio.get_running_loop().run_in_executor(None, feed.stop)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn's own raises the signal again once stopped, inside its event
            # loop (a traceback on the way out): here the edge reports it instead,
            # and an echo arriving after the stop is ignored, as we are leaving.
            for sig in STOP_SIGNALS:
                signal.signal(sig, self.handle_exit)
            if early:
                self.handle_exit(early[0], None)
            try:
                yield
            finally:
                for sig in STOP_SIGNALS:
                    signal.signal(sig, signal.SIG_IGN)

    try:
        Server(config).run(sockets=[sock])
    finally:
        sock.close()
    if stopped_by and stopped_by[0] == signal.SIGINT:
        raise KeyboardInterrupt  # Ctrl-C: `git lac: interrupted`, exit 130, like every command
    stop = signal.Signals(stopped_by[0]) if stopped_by else None
    return Serving(url, host, bound_port, allow_actions, generated, role, stop)
