"""Bind, open the board, and run the live page under uvicorn.

The socket is bound here, before uvicorn starts, so a port in use or a host
that does not resolve is one line and an exit code like every other failure
(``--port 0`` takes a free port; the URL printed names the one taken). The
watcher's board is opened here too: no board is exit 3 before anything listens.
The URL is told (``listening``) as soon as the socket listens.

uvicorn runs our own subclass of its h11 protocol (:func:`protocol_class`): a
smaller write buffer per connection, and a way for the feed to abort a
connection whose page stopped reading, freeing its buffer at once.
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
from pathlib import Path
from types import FrameType
from typing import Any

from ..board import Board
from ..errors import CannotWorkHere, InvalidInput
from ..session import Session
from .app import allowed_hosts, create_app
from .feed import DEFAULT_MAX_CLIENTS, Feed
from .pool import make_pool

MIN_TOKEN = 16
STOP_GRACE_S = 5.0  # after a stop signal, the longest the stop may take
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Bytes a connection may have waiting in this process before its writer waits:
# with the feed's slices, what a page that stopped reading can cost here.
WRITE_BUFFER_HIGH = 32_768


@dataclass(frozen=True)
class Serving:
    url: str  # without the token
    host: str
    port: int
    actions: bool
    token_generated: bool
    role: str | None
    token_url: str | None = None  # the URL with a token made here (shown once)
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
    """The board's read-only role in team mode (the names team mode gives its roles; the team
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


def page_session(board: Board, actions: bool) -> str | None:
    """Set up one of the page's connections (:func:`board.snapshot.page_session`)."""
    from ..board.snapshot import page_session as set_up

    return set_up(board, actions=actions, reader=reader_role)


class Transports:
    """The open connections by client address, so the feed can abort one."""

    def __init__(self) -> None:
        self.open: dict[Any, asyncio.Transport] = {}

    def abort(self, client: Any) -> None:
        transport = self.open.pop(tuple(client) if client else None, None)
        if transport is not None:
            transport.abort()


def protocol_class(transports: Transports) -> type[Any]:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
            if self.client:
                transports.open[tuple(self.client)] = transport

        def connection_lost(self, exc: Exception | None) -> None:
            if self.client and transports.open.get(tuple(self.client)) is self.transport:
                del transports.open[tuple(self.client)]
            super().connection_lost(exc)

    return Protocol


def serve(
    session: Session,
    *,
    host: str,
    port: int,
    token: str | None,
    allow_actions: bool,
    open_browser: bool,
    echo: Callable[[str], None],
    listening: Callable[[Serving], None] | None = None,
    max_clients: int = DEFAULT_MAX_CLIENTS,
    min_interval: float = 0.2,
) -> Serving:
    import uvicorn

    token = check_token(token)
    if max_clients < 1:
        raise InvalidInput(f"--max-clients {max_clients}: at least 1")
    loopback = is_loopback(host)
    generated = False
    # Actions always need a secret: on loopback too, any local process could
    # otherwise read the page's CSRF value and act as the serving agent.
    if token is None and (allow_actions or not loopback):
        token, generated = secrets.token_urlsafe(24), True

    watcher = session.new_board(touch=False)
    # SQLite: a board file that is gone is never made anew by the page (a
    # session opening the default board would create it): gone it stays.
    sqlite_file = getattr(watcher.store, "path", None)
    if watcher.store.dialect != "sqlite":
        sqlite_file = None

    def open_board() -> Board:
        if sqlite_file is not None and not Path(sqlite_file).exists():
            raise CannotWorkHere(f"the board at {sqlite_file} is gone: its file was removed")
        board = session.new_board(touch=False)
        try:
            page_session(board, allow_actions)
        except BaseException:
            board.store.close()
            raise
        return board

    # every action acts as this agent (and names the person): the board's, so
    # on a team board the session's role, not the name git config gives
    identity = watcher.identity
    try:
        role = page_session(watcher, allow_actions)
        pool = make_pool(watcher, open_board, lambda board: page_session(board, allow_actions))
    except BaseException:
        watcher.store.close()
        raise
    try:
        sock = bind(host, port)
    except BaseException:
        pool.close()
        watcher.store.close()
        raise
    bound_port = int(sock.getsockname()[1])
    shown_host = f"[{host.strip('[]')}]" if ":" in host else host
    url = f"http://{shown_host}:{bound_port}/"
    token_url = f"{url}?token={token}" if generated else None
    transports = Transports()
    feed = Feed(
        open_board,
        actions=allow_actions,
        min_interval=min_interval,
        board=watcher,
        max_clients=max_clients,
        on_gone=pool.reset,
    )
    app = create_app(
        feed,
        pool,
        allow_actions=allow_actions,
        token=token,
        csrf=secrets.token_urlsafe(24),
        hosts=allowed_hosts(host) if loopback else None,
        port=bound_port,
        abort=transports.abort,
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
        echo(f"git lac serve: token (shown once): {token_url}")
    if listening is not None:
        listening(Serving(url, host, bound_port, allow_actions, generated, role, token_url))
    if open_browser:
        import webbrowser

        webbrowser.open(f"{url}?token={token}" if token else url)
    config = uvicorn.Config(
        app,
        http=protocol_class(transports),
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
            await asyncio.get_running_loop().run_in_executor(None, pool.close)

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
    return Serving(url, host, bound_port, allow_actions, generated, role, token_url, stop)
