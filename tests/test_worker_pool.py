"""Long-running processes borrow their connections (issue 24): a drainer's
heartbeats and a keeper's sweeps run on a ``psycopg_pool`` pool on
PostgreSQL, never a connection per beat or per sweep."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from git_lacunari.store import postgres

from .conftest import Result

Lac = Callable[..., Result]


@pytest.mark.parametrize("backend", ["postgres"])
def test_drainer_heartbeats_and_keeper_sweeps_borrow_from_a_pool(
    lac: Lac, repo: Path, board_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_lacunari.store import pool

    assert board_url is not None
    assert lac("init", "--url", board_url, "--stale-after", "1s").code == 0
    lac("task", "add", "slow", "--lane", "x")
    made: list[str] = []
    real_connect = postgres.connect

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append("conn")
        return real_connect(*args, **kwargs)

    lent: list[int] = []
    real_store = pool.StorePool.store

    def lending(self: pool.StorePool) -> Any:
        lent.append(1)
        return real_store(self)

    monkeypatch.setattr(postgres, "connect", counting)
    monkeypatch.setattr(pool.StorePool, "store", lending)
    got = lac("drain", "--lane", "x", "--once", "--json", "--", "sleep", "1.6")
    assert got.code == 0, got.err
    assert got.json["done"] == [1]
    beats = len(lent)
    assert beats >= 3  # every 1s / 3: each beat borrowed a connection ...
    # ... and the pool made at most its size: the session's board, the
    # drainer's hold, and the pool's (POOL_SIZE), not one per beat.
    assert len(made) <= 2 + pool.POOL_SIZE < 2 + beats + 1, (made, beats)

    lent.clear()
    made.clear()
    kept = lac("keeper", "--once", "--json")
    assert kept.code == 0, kept.err
    assert len(lent) == 1  # the sweep, on a pooled connection
