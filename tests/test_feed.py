"""The live page's watcher paces its reads by what they cost (git_lacunari/web/feed.py)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from git_lacunari.web import feed as feed_module


class EverChanging:
    """A store whose board changes all the time: a drain at full speed (a
    PostgreSQL board whose schema stays where it is, so it is never gone)."""

    dialect = "postgres"
    url = "postgresql://fake/board"

    def one(self, query: str, /, **params: Any) -> dict[str, Any]:
        assert query == "current_board"
        return {"board": "board"}

    def wait_for_change(self, timeout: float) -> bool:
        return True

    def close(self) -> None:
        pass


class Board:
    store = EverChanging()


def test_a_costly_snapshot_spaces_the_next_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    cost = 0.1  # what one snapshot of a big board takes to read and encode

    def slow_snapshot(board: Any, actions: bool) -> dict[str, Any]:
        time.sleep(cost)  # the read itself; the pacing after it is what is tested
        return {"now": 0.0}

    monkeypatch.setattr(feed_module, "snapshot", slow_snapshot)
    feed = feed_module.Feed(lambda: Board(), min_interval=0.05)  # type: ignore[arg-type, return-value]
    feed._thread = threading.Thread(target=feed._watch, args=(None,), daemon=True)
    started = time.monotonic()
    feed._thread.start()
    time.sleep(2.0)
    feed.stop()
    elapsed = time.monotonic() - started
    # Without pacing, reads follow each other every max(cost, min_interval):
    # about 20 in 2 s. Paced, a read starts at most every cost * READ_SPACING
    # (0.5 s), so the watcher is busy at most a fifth of the time. A loaded
    # machine only makes reads costlier and so rarer: the bound holds.
    assert 1 <= feed.reads <= elapsed / (cost * feed_module.READ_SPACING) + 1
