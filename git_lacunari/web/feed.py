"""The change feed: ONE watcher per server process, fanned out to every page.

A thread holds one connection to the board and waits on the store's change
signal (:meth:`Store.wait_for_change`: on PostgreSQL the board's change
counter, which 0006/0008's statement-level triggers move on a write by any
client, every 100 ms (a poll, not LISTEN: it works through a transaction
pooler, and costs the writers no NOTIFY); ``PRAGMA data_version`` every
100 ms on SQLite). On a change it reads
one snapshot (:func:`.overview.snapshot`) — at most once per ``min_interval``,
so a burst of writes is one read — encodes it once, and wakes every page's
stream, which sends the newest snapshot it has not sent yet (a slow page
skips the ones it missed). Pages never read the board themselves.

Memory is bounded whatever the pages do:

- one encoded snapshot per board version, shared by every stream: a stream
  sends it in slices of :data:`CHUNK` bytes, never a copy of it whole;
- at most ``max_clients`` streams at once (the rest are answered 503, and the
  page tries again by itself);
- a stream whose page stops reading is dropped: when a slice is not taken
  within :data:`BEHIND_S` while a newer snapshot waits, or within
  :data:`STALL_S` at all, the connection is aborted (its buffer freed at
  once) and the page reconnects by itself (``retry:``).

The watcher also checks, every :data:`CHECK_S`, that the board is still the
one it opened (:class:`Presence`): a SQLite file removed or replaced, a
PostgreSQL schema renamed or dropped, is shown as gone within seconds, and
the page recovers when the board is back.

No web framework here: the streams are plain async iterators of bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..board import Board
from ..board.snapshot import current_board
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
CHECK_S = 1.0  # how often the watcher checks that the board is still there
CHUNK = 16_384  # a stream sends a snapshot in slices of this many bytes
SEND_STEP_S = 0.25  # how often a blocked send looks whether it should give up
BEHIND_S = 2.0  # a slice not taken this long while a newer snapshot waits: dropped
STALL_S = 30.0  # a slice not taken this long at all: dropped
RECONNECT_MS = 1000  # the page's EventSource reconnects this long after a drop
DEFAULT_MAX_CLIENTS = 100

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Published:
    version: int
    data: bytes  # the snapshot, JSON: the one copy every stream sends from
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


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, where the C library is glibc; else None."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


class Presence:
    """Is the board the watcher reads still the one it opened?

    SQLite: the file at the board's path is the same file (device and inode):
    a connection keeps reading a removed or replaced file, unaware. PostgreSQL:
    the session's schema is still the board's (a renamed or dropped schema
    leaves the search_path naming nothing)."""

    def __init__(self, board: Board) -> None:
        store = board.store
        self.where = redact(str(getattr(store, "where", store.url)))
        path = getattr(store, "path", None)
        self.path: Path | None = Path(path) if store.dialect == "sqlite" and path else None
        self.file = self._file() if self.path is not None else None
        self.schema = None if self.path is not None else current_board(board)

    def _file(self) -> tuple[int, int] | None:
        assert self.path is not None
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return stat.st_dev, stat.st_ino

    def gone(self, board: Board) -> str | None:
        """None while it is; else why it is gone."""
        if self.path is not None:
            now = self._file()
            if now is None:
                return f"the board at {self.where} is gone: its file was removed"
            if now != self.file:
                return f"the board at {self.where} is gone: its file was replaced"
            return None
        schema = current_board(board)
        if schema is None or schema != self.schema:
            return (
                f"the board {self.schema} at {self.where} is gone: "
                "its schema was renamed or dropped"
            )
        return None


@dataclass
class Client:
    """One page's stream: what it is sending, and how to cut it off."""

    abort: Callable[[], None]
    sending: int = 0  # the version of the snapshot being sent (0: none)
    closed: asyncio.Event = field(default_factory=asyncio.Event)  # the page went away


class Feed:
    def __init__(
        self,
        open_board: Callable[[], Board],
        *,
        actions: bool = False,
        min_interval: float = 0.2,
        wait_step: float = 0.5,
        board: Board | None = None,
        max_clients: int = DEFAULT_MAX_CLIENTS,
        on_gone: Callable[[], None] | None = None,
    ) -> None:
        self.open_board = open_board
        self._first = board  # the watcher's connection, if already open
        self.actions = actions
        self.min_interval = min_interval
        self.wait_step = wait_step
        self.max_clients = max_clients
        self.on_gone = on_gone  # the pool's reset: its connections may read a ghost
        self.latest: Published | None = None
        self.trouble: str | None = None  # the board's last error, shown on the page
        self.gone = False  # the board went away; until a snapshot is read again
        self.reads = 0  # snapshots read (bench/serve.py and the tests read it)
        self.clients = 0  # live streams
        self.dropped = 0  # streams cut off for not reading
        self._stop = threading.Event()
        self._closing = threading.Event()  # the server is stopping: end every stream
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None
        self._lock = threading.Lock()
        self._trim_due = False

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
        presence: Presence | None = None
        next_check = 0.0
        while not self._stop.is_set():
            try:
                if board is None:
                    board = self.open_board()
                    presence = None
                if presence is None:
                    presence = Presence(board)
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + CHECK_S
                    self._trim()
                    why = presence.gone(board)
                    if why is not None:
                        self._went(why)
                        board = self._close(board)
                        self._stop.wait(RETRY_S)
                        continue
                if not board.store.wait_for_change(min(self.wait_step, CHECK_S)):
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
                # A board whose schema was renamed or dropped fails the change
                # poll first (its counter went with it): ask whether it is gone
                # before calling it trouble, on a connection of its own.
                why = self._gone_now(presence, board)
                if why is not None:
                    self._went(why)
                elif not self.gone:  # reopening a gone board fails: still said as gone
                    self._trouble(redact(exc.message))
                board = self._close(board)
                self._stop.wait(RETRY_S)
            except Exception as exc:  # a bug, or a driver error not classified: shown, retried
                why = self._gone_now(presence, board)
                if why is not None:
                    self._went(why)
                elif not self.gone:
                    self._trouble(redact(f"{type(exc).__name__}: {exc}".splitlines()[0]))
                board = self._close(board)
                self._stop.wait(RETRY_S)
        self._close(board)

    def _gone_now(self, presence: Presence | None, board: Board | None) -> str | None:
        """Whether the board a failing read was on is gone, asked on the same
        connection (a renamed or dropped schema leaves it answering, with no
        current schema); None when it is there, or when that cannot be told."""
        if presence is None or board is None or self.gone:
            return None
        try:
            return presence.gone(board)
        except Exception:  # noqa: BLE001 - cannot tell: the caller reports its trouble
            return None

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
            self.gone = False
            data["version"] = version
            encoded = json.dumps(data, separators=(",", ":"), allow_nan=False).encode()
            self.latest = Published(version, encoded, float(data["now"]), read_at)
        self._wake()

    def _trouble(self, message: str) -> None:
        with self._lock:
            self.trouble = message
        self._wake()

    def _went(self, message: str) -> None:
        """The board is gone: said at once; gone until a snapshot is read again
        (the errors of reopening it meanwhile are shown as gone too)."""
        with self._lock:
            self.trouble = message
            self.gone = True
        if self.on_gone is not None:
            with contextlib.suppress(Exception):
                self.on_gone()
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

    def admit(self) -> bool:
        """Room for one more stream? (Called on the event loop: no lock needed.)"""
        if self.clients >= self.max_clients:
            return False
        self.clients += 1
        return True

    def leave(self) -> None:
        self.clients -= 1
        self._trim_due = True

    def _trim(self) -> None:
        """Give the memory that ended streams held back to the system (glibc
        keeps freed memory in its arenas otherwise: 400 dropped pages left
        ~16 MB resident for good). At most once per CHECK_S, from the watcher."""
        if not self._trim_due:
            return
        self._trim_due = False
        gc.collect()  # the ended connections' reference cycles (transport, protocol)
        trim = _malloc_trim()
        if trim is not None:
            trim(0)

    def _trouble_event(self) -> bytes:
        return sse("trouble", json.dumps({"message": self.trouble, "gone": self.gone}))

    async def stream(self, client: Client) -> AsyncIterator[bytes]:
        """One page's events: the newest snapshot now and after every change
        (sliced, from the one shared copy), the board's clock beside each, its
        trouble, a keepalive when idle."""
        yield f"retry: {RECONNECT_MS}\n\n".encode()
        sent = 0
        trouble_sent: tuple[str | None, bool] = (None, False)
        while not self._closing.is_set():
            latest, trouble = self.latest, (self.trouble, self.gone)
            if trouble != trouble_sent:
                trouble_sent = trouble
                yield self._trouble_event()
            if latest is not None and latest.version > sent:
                sent = client.sending = latest.version
                yield sse("clock", json.dumps({"now": latest.clock()}))
                yield f"id: {latest.version}\nevent: snapshot\ndata: ".encode()
                data = latest.data
                for start in range(0, len(data), CHUNK):
                    yield data[start : start + CHUNK]
                yield b"\n\n"
                client.sending = 0
                del data, latest  # the next version must not be pinned by a waiting stream
                continue
            changed = self._changed
            assert changed is not None
            waits = {
                asyncio.ensure_future(changed.wait()),
                asyncio.ensure_future(client.closed.wait()),
            }
            done, pending = await asyncio.wait(
                waits, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED
            )
            for waiting in pending:
                waiting.cancel()
            if client.closed.is_set():
                return
            if not done:
                latest = self.latest
                if latest is not None:
                    yield sse("clock", json.dumps({"now": latest.clock()}))
                else:
                    yield b": waiting for the first snapshot\n\n"

    async def deliver(self, send: Send, body: bytes, client: Client) -> bool:
        """Send one slice; False (and the connection aborted) when the page
        has stopped reading: it took nothing for BEHIND_S while a newer
        snapshot waits, or for STALL_S at all, or the server is stopping."""
        message = {"type": "http.response.body", "body": body, "more_body": True}
        sending = asyncio.ensure_future(send(message))
        waited = 0.0
        while True:
            done, _ = await asyncio.wait({sending}, timeout=SEND_STEP_S)
            if done:
                sending.result()
                return True
            waited += SEND_STEP_S
            latest = self.latest
            behind = client.sending and latest is not None and latest.version > client.sending
            if self._closing.is_set() or waited >= (BEHIND_S if behind else STALL_S):
                sending.cancel()
                client.abort()
                self.dropped += 1
                return False
