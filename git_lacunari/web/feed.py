"""The change feed: ONE watcher per server process, fanned out to every page.

A thread holds one connection to the board and waits on the store's change
signal (:meth:`Store.wait_for_change`: on PostgreSQL the board's change
counter, which 0006/0007's statement-level triggers move on a write by any
client, every 100 ms (a poll, not LISTEN: it works through a transaction
pooler, and costs the writers no NOTIFY); ``PRAGMA data_version`` every
100 ms on SQLite). On a change it reads
one snapshot (:func:`.overview.snapshot`) — at most once per ``min_interval``,
so a burst of writes is one read — encodes it once, and wakes every page's
stream, which sends the newest snapshot it has not sent yet (a slow page
skips the ones it missed). Pages never read the board themselves.

No web framework here: the streams are plain async iterators of bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from ..board import Board
from ..errors import LacError
from ..store import redact
from .overview import snapshot

# The watcher's share of one core: after a snapshot that took c seconds to
# read and encode, the next waits at least c * READ_SPACING, so however big the
# board, the page costs the agents working on it at most 1/READ_SPACING of a
# core; but never more than MAX_INTERVAL_S, so a change still shows within
# about a second.
READ_SPACING = 5.0
MAX_INTERVAL_S = 0.8
KEEPALIVE_S = 15.0  # a comment line on idle streams, and a fresh clock
RETRY_S = 1.0  # after board trouble, before the watcher opens the board again


@dataclass(frozen=True)
class Published:
    version: int
    data: bytes  # the snapshot, JSON
    board_now: float  # the board's clock when it was read
    read_at: float  # time.monotonic() then

    def clock(self) -> float:
        """The board's clock now, as well as this process can tell."""
        return self.board_now + (time.monotonic() - self.read_at)


def sse(event: str, data: bytes | str, event_id: int | None = None) -> bytes:
    """One server-sent event (data is one line: JSON has no raw newlines)."""
    body = data if isinstance(data, bytes) else data.encode()
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\n".encode() + b"data: " + body + b"\n\n"


class Feed:
    def __init__(
        self,
        open_board: Callable[[], Board],
        *,
        actions: bool = False,
        min_interval: float = 0.2,
        wait_step: float = 0.5,
        board: Board | None = None,
    ) -> None:
        self.open_board = open_board
        self._first = board  # the watcher's connection, if already open
        self.actions = actions
        self.min_interval = min_interval
        self.wait_step = wait_step
        self.latest: Published | None = None
        self.trouble: str | None = None  # the board's last error, shown on the page
        self.reads = 0  # snapshots read (bench/serve.py and the tests read it)
        self._stop = threading.Event()
        self._closing = threading.Event()  # the server is stopping: end every stream
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None
        self._lock = threading.Lock()

    # --- the watcher thread ------------------------------------------------------

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start watching, waking the streams of ``loop``."""
        board, self._first = self._first, None
        self._loop = loop
        self._changed = asyncio.Event()
        self._thread = threading.Thread(
            target=self._watch, args=(board,), name="lac-serve-feed", daemon=True
        )
        self._thread.start()

    def close_streams(self) -> None:
        """End every page's stream now (the server is stopping: a stream left
        open would hold the shutdown for its whole grace period)."""
        self._closing.set()
        self._wake()

    def stop(self) -> None:
        self._closing.set()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._wake()

    def _watch(self, board: Board | None) -> None:
        last_read, spacing = float("-inf"), self.min_interval
        while not self._stop.is_set():
            try:
                if board is None:
                    board = self.open_board()
                if not board.store.wait_for_change(self.wait_step):
                    continue
                # Coalesce: at most one read per spacing; the changes that came
                # meanwhile are taken now and covered by this read.
                pause = last_read + spacing - time.monotonic()
                if pause > 0 and self._stop.wait(pause):
                    break
                board.store.wait_for_change(0)
                last_read = time.monotonic()
                self._publish(snapshot(board, actions=self.actions), last_read)
                cost = time.monotonic() - last_read
                spacing = min(MAX_INTERVAL_S, max(self.min_interval, cost * READ_SPACING))
            except LacError as exc:
                self._trouble(redact(exc.message))
                board = self._close(board)
                self._stop.wait(RETRY_S)
            except Exception as exc:  # a bug, or a driver error not classified: shown, retried
                self._trouble(redact(f"{type(exc).__name__}: {exc}".splitlines()[0]))
                board = self._close(board)
                self._stop.wait(RETRY_S)
        self._close(board)

    @staticmethod
    def _close(board: Board | None) -> None:
        if board is not None:
            with contextlib.suppress(Exception):  # closing a broken connection
                board.store.close()
        return None

    def _publish(self, data: dict[str, Any], read_at: float) -> None:
        with self._lock:
            version = (self.latest.version if self.latest else 0) + 1
            self.reads += 1
            self.trouble = None
            data["version"] = version
            encoded = json.dumps(data, separators=(",", ":"), allow_nan=False).encode()
            self.latest = Published(version, encoded, float(data["now"]), read_at)
        self._wake()

    def _trouble(self, message: str) -> None:
        with self._lock:
            self.trouble = message
        self._wake()

    def _wake(self) -> None:
        loop, changed = self._loop, self._changed
        if loop is None or changed is None or loop.is_closed():
            return

        def wake() -> None:
            # Every waiting stream holds the old event: set it, hand out a new one.
            assert self._changed is not None
            old, self._changed = self._changed, asyncio.Event()
            old.set()

        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(wake)

    async def first(self, timeout: float) -> Published | None:
        """The newest snapshot, waiting up to ``timeout`` for the first one."""
        deadline = time.monotonic() + timeout
        while self.latest is None and not self._closing.is_set():
            left = deadline - time.monotonic()
            if left <= 0 or self._changed is None:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
        return self.latest

    # --- the pages' streams --------------------------------------------------------

    async def stream(self) -> AsyncIterator[bytes]:
        """One page's events: the newest snapshot now and after every change,
        the board's clock beside each, a keepalive when idle."""
        sent = 0
        trouble_sent: str | None = None
        while not self._closing.is_set():
            latest, trouble = self.latest, self.trouble
            if trouble != trouble_sent:
                trouble_sent = trouble
                yield sse("trouble", json.dumps({"message": trouble}))
            if latest is not None and latest.version > sent:
                sent = latest.version
                yield sse("clock", json.dumps({"now": latest.clock()}))
                yield sse("snapshot", latest.data, latest.version)
                continue
            changed = self._changed
            assert changed is not None
            try:
                await asyncio.wait_for(changed.wait(), KEEPALIVE_S)
            except TimeoutError:
                if latest is not None:
                    yield sse("clock", json.dumps({"now": latest.clock()}))
                else:
                    yield b": waiting for the first snapshot\n\n"
