"""Each rule of git_lacunari/rules.py says what its twins say, on generated
boards: the SQL every claimer and the keeper run (both dialects, the real
named queries and functions on a real board) and the live page's read model.

- claimability: ``rules.claimable`` = SQLite's ``claimable`` fragment =
  PostgreSQL's ``lac_claimable`` (through ``lane_open_page``, the query
  ``ready`` reads); the refusal a board gives names an unmet dependency or a
  missing capability exactly when the SQL says no; the page calls an open
  task blocked (waiting, capability) exactly when no known agent could claim it.
- staleness: ``rules.is_stale`` = ``stale_claims`` (both dialects) = PostgreSQL's
  ``lac_api_expire`` check, on a board whose clock the test holds still, at
  and around the edge (``heartbeat_at + limit`` against ``now``). The page has
  no twin: it is sent ``stale_at`` (``rules.stale_at``) and compares.
- lock conflict: ``rules.conflict`` = PostgreSQL's ``lac_require_free`` (team
  mode's check); the overlap beneath it is pinned by tests/test_overlap_sql.py.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import psycopg
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from git_lacunari import rules
from git_lacunari.board import Board
from git_lacunari.errors import MissingCapability, UnmetDependency
from git_lacunari.identity import Identity
from git_lacunari.model import TaskState
from git_lacunari.store import Store, open_store

from .conftest import BACKENDS, board_sql, pg_schema
from .test_overlap_sql import normalized, pattern_st

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A real, freshly migrated board of each dialect, reset by each example."""
    if request.param == "sqlite":
        made = open_store(f"sqlite:///{tmp_path / 'board.db'}", tmp_path, create=True)
        yield made
        made.close()
        return
    with pg_schema(request.getfixturevalue("pg_server")) as url:
        made = open_store(url, tmp_path, create=True)
        yield made
        made.close()


def reset(store: Store) -> None:
    for table in ("lac_task_deps", "lac_task_paths", "lac_locks", "lac_events", "lac_tasks"):
        board_sql(store, f"DELETE FROM {table}")
    board_sql(store, "DELETE FROM lac_agents")
    board_sql(store, "DELETE FROM lac_settings WHERE name = 'stale_after'")


def as_json(store: Store, param: str) -> str:
    return f"CAST(:{param} AS jsonb)" if store.dialect == "postgres" else f":{param}"


# --- claimability -----------------------------------------------------------------

CAPS = ["gpu", "linux", "net", "\u00e9t\u00e9"]
STATES = [s.value for s in TaskState]
caps_st = st.lists(st.sampled_from(CAPS), max_size=3)
# A board: tasks (state, needs), dependencies between them, agents' capabilities.
board_st = st.integers(min_value=1, max_value=6).flatmap(
    lambda n: st.tuples(
        st.lists(st.tuples(st.sampled_from(STATES), caps_st), min_size=n, max_size=n),
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda d: d[0] != d[1]),
            max_size=2 * n,
        ),
        st.lists(caps_st, min_size=0, max_size=3),
    )
)


@SETTINGS
@given(drawn=board_st)
def test_claimable_matches_sql(store: Store, drawn: Any) -> None:
    tasks, deps, agents = drawn
    reset(store)
    ids = []
    for state, needs in tasks:
        row = board_sql(
            store,
            "INSERT INTO lac_tasks (title, state, needs, created_at, created_by)"
            f" VALUES ('t', :state, {as_json(store, 'needs')}, 0, 'x') RETURNING id",
            state=state,
            needs=json.dumps(needs),
        )
        ids.append(int(row[0]["id"]))
    for a, b in set(deps):
        board_sql(
            store,
            "INSERT INTO lac_task_deps (task_id, depends_on) VALUES (:a, :b)",
            a=ids[a],
            b=ids[b],
        )
    held = {f"agent{i}": caps for i, caps in enumerate(agents)}
    for name, caps in held.items():
        board_sql(
            store,
            "INSERT INTO lac_agents (name, capabilities, last_seen)"
            f" VALUES (:n, {as_json(store, 'c')}, 0)",
            n=name,
            c=json.dumps(caps),
        )
    state_of = {ids[i]: tasks[i][0] for i in range(len(ids))}
    deps_of: dict[int, list[tuple[int, str]]] = {i: [] for i in ids}
    for a, b in sorted(set(deps), key=lambda d: ids[d[1]]):
        deps_of[ids[a]].append((ids[b], state_of[ids[b]]))

    # "nobody" is recorded nowhere: SQL takes its capabilities as none.
    sql_says: dict[str, dict[int, bool]] = {}
    for name in [*held, "nobody"]:
        rows = store.all(
            "lane_open_page",
            lane="default",
            agent=name,
            limit=None,
            after_priority=None,
            after_created=None,
            after_id=None,
        )
        sql_says[name] = {int(r["id"]): bool(r["claimable"]) for r in rows}
        assert set(sql_says[name]) == {i for i in ids if state_of[i] == "open"}
        caps = held.get(name, [])
        for task_id, answer in sql_says[name].items():
            needs = tasks[ids.index(task_id)][1]
            python = rules.claimable([s for _, s in deps_of[task_id]], needs, caps)
            assert python == answer, (name, task_id, deps_of[task_id], needs, caps)
        # What `ready` says, and the reasons it gives, agree with the rule.
        if name != "nobody":
            ready, blocked = Board(store, Identity(name, "test", tuple(caps), "test")).ready()
            assert {t.id for t in ready} == {i for i, ok in sql_says[name].items() if ok}
            for task, why in blocked:
                assert isinstance(why, UnmetDependency | MissingCapability), why
                if isinstance(why, UnmetDependency):
                    assert (why.facts["dependency"], why.facts["dependency_state"]) in deps_of[
                        task.id
                    ]
                else:
                    assert why.facts["capability"] not in caps

    # The page, which speaks for no agent: blocked by a dependency or the
    # capabilities exactly when no known agent may claim it.
    page = Board(store, Identity("viewer", "test", (), "test")).snapshot()
    for shown in page["tasks"]:
        if shown["state"] != "open":
            continue
        kinds = {r["kind"] for r in shown["blocked"]}
        someone = any(sql_says[name][shown["id"]] for name in held)
        assert someone == (not kinds & {"waiting", "capability", "capabilities"}), shown


def test_page_asks_one_agent_for_every_capability(tmp_path: Path) -> None:
    """The case the page used to get wrong: each needed capability held, by
    different agents. Nobody may claim it, and the page says so."""
    store = open_store(f"sqlite:///{tmp_path / 'board.db'}", tmp_path, create=True)
    gpu = Board(store, Identity("gpu-box", "test", ("gpu",), "test"))
    linux = Board(store, Identity("linux-box", "test", ("linux",), "test"))
    task = gpu.add_task("train", needs=["gpu", "linux"])
    for board in (gpu, linux):
        assert board.ready()[0] == []
    (shown,) = [t for t in gpu.snapshot()["tasks"] if t["id"] == task.id]
    assert shown["blocked"] == [{"kind": "capabilities", "capabilities": ["gpu", "linux"]}]
    store.close()


# --- staleness --------------------------------------------------------------------


class HeldClock:
    """The board's clock, held still at a value the test chooses: SQLite's
    ``julianday('now')`` overridden on the store's connection, PostgreSQL's
    ``lac_now()`` replaced in the test's own schema by a setting."""

    def __init__(self, store: Store) -> None:
        self.store = store
        if store.dialect == "postgres":
            board_sql(
                store,
                "CREATE OR REPLACE FUNCTION lac_now() RETURNS double precision LANGUAGE sql"
                " STABLE AS $$ SELECT current_setting('lac.test_now')::double precision $$",
            )

    def set(self, julian_day: float) -> float:
        """Hold the clock at ``julian_day``; returns the board's ``now`` then,
        computed as SQLite computes it (the same float operations)."""
        now = (julian_day - 2440587.5) * 86400.0
        if self.store.dialect == "sqlite":
            conn = cast(sqlite3.Connection, cast(Any, self.store).conn)
            conn.create_function("julianday", 1, lambda _: julian_day)
        else:
            board_sql(self.store, "SELECT set_config('lac.test_now', :v, false)", v=repr(now))
        assert self.store.one("now_value") == {"now": now}
        return now


def around(x: float) -> st.SearchStrategy[float]:
    """``x``, its float neighbours, or something near: where two spellings
    of one comparison would part."""
    return st.sampled_from(
        [x, math.nextafter(x, math.inf), math.nextafter(x, -math.inf), x * 0.5, x * 2 + 1]
    )


limit_st = st.one_of(
    st.sampled_from([0.0, 0.1, 0.3, 1.0, 1800.0]),
    st.floats(min_value=0.0, max_value=1e7, allow_nan=False),
)
# A claim's own stale-after is a positive duration: the board's CHECK refuses
# any other (0007), as the command line does.
own_limit_st = st.one_of(
    st.sampled_from([0.1, 0.3, 1.0, 1800.0]),
    st.floats(min_value=1e-3, max_value=1e7, allow_nan=False),
)
claim_st = st.tuples(
    st.one_of(st.none(), own_limit_st),  # the claim's own stale-after
    limit_st,  # how long it has been silent, before jitter
    st.integers(0, 4),  # which neighbour of that silence
)


@SETTINGS
@given(
    julian_day=st.floats(min_value=2440587.5, max_value=2470000.0),
    default=st.sampled_from([0.1, 0.3, 1800.0, 12345.678]),
    at_least=st.sampled_from([0.0, 0.2, 60.0]),
    claims=st.lists(claim_st, min_size=1, max_size=8),
)
def test_staleness_matches_sql(
    store: Store,
    julian_day: float,
    default: float,
    at_least: float,
    claims: list[tuple[float | None, float, int]],
) -> None:
    reset(store)
    clock = HeldClock(store)
    now = clock.set(julian_day)
    board_sql(
        store,
        "INSERT INTO lac_settings (name, value) VALUES ('stale_after', :v)",
        v=repr(default),
    )
    expected: dict[int, tuple[bool, bool]] = {}
    for own, silent, pick in claims:
        limit = rules.stale_limit(own, default, at_least)
        # A silence at, just past or just short of the limit, or anywhere.
        silence = [limit, math.nextafter(limit, math.inf), math.nextafter(limit, 0.0), silent][
            min(pick, 3)
        ]
        heartbeat = now - silence
        row = board_sql(
            store,
            "INSERT INTO lac_tasks (title, state, owner, claimed_at, heartbeat_at, stale_after,"
            " instance, created_at, created_by)"
            " VALUES ('t', 'claimed', 'a', :hb, :hb, :own, 'here', 0, 'a') RETURNING id",
            hb=heartbeat,
            own=own,
        )
        expected[int(row[0]["id"])] = (
            rules.is_stale("claimed", heartbeat, own, default, now, at_least),
            rules.is_stale("claimed", heartbeat, own, default, now),
        )
        stale_at = rules.stale_at("claimed", heartbeat, own, default, at_least)
        assert stale_at is not None and (stale_at < now) == expected[int(row[0]["id"])][0]
    found = store.all("stale_claims", default_stale=default, at_least=at_least)
    assert {int(r["id"]) for r in found} == {i for i, (s, _) in expected.items() if s}
    if store.dialect == "postgres":  # the keeper's expiry checks it again, with no floor
        for task_id, (_, stale) in expected.items():
            (hb,) = board_sql(store, "SELECT heartbeat_at FROM lac_tasks WHERE id = :i", i=task_id)
            gone = store.all(
                "expire", state="open", task_id=task_id, owner="a", heartbeat_at=hb["heartbeat_at"]
            )
            assert bool(gone) == stale, task_id
    # And the board's own reading of the same claims (status, show, the page).
    board = Board(store, Identity("a", "test", (), "test", instance="here"))
    for task in board.tasks(state="claimed", now=now):
        assert task.stale == expected[task.id][1]


def test_page_is_sent_when_each_claim_goes_stale(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'board.db'}", tmp_path, create=True)
    board = Board(store, Identity("a", "test", (), "test"))
    task = board.add_task("t")
    board.claim(task.id, stale_after=60.0)
    board.add_task("open one")
    shown = {t["id"]: t for t in board.snapshot()["tasks"]}
    assert shown[task.id]["stale_at"] == shown[task.id]["heartbeat_at"] + 60.0
    assert [t["stale_at"] for t in shown.values() if t["id"] != task.id] == [None]
    store.close()


# --- lock conflicts ------------------------------------------------------------------


@pytest.fixture
def pg(pg_server: str) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    with pg_schema(pg_server) as url:
        made = open_store(url, Path("."), create=True)
        made.close()
        with psycopg.connect(url, autocommit=True) as conn:
            yield conn


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    held=pattern_st,
    wanted=pattern_st,
    held_mode=st.sampled_from(["read", "write"]),
    wanted_mode=st.sampled_from(["read", "write"]),
)
def test_conflict_matches_sql(
    pg: psycopg.Connection[tuple[Any, ...]],
    held: str,
    wanted: str,
    held_mode: str,
    wanted_mode: str,
) -> None:
    held, wanted = normalized(held), normalized(wanted)
    from git_lacunari import paths
    from git_lacunari.errors import BadPath

    try:  # a lock holds a valid pattern: the board's CHECK refuses any other (0007)
        paths.normalize(held)
    except BadPath:
        assume(False)

    pg.execute("DELETE FROM lac_locks")
    pg.execute(
        "INSERT INTO lac_locks (pattern, key, mode, agent, acquired_at, instance)"
        " VALUES (%s, %s, %s, 'other', 0, 'there')",
        (held, paths.index_key(held), held_mode[0]),
    )
    try:
        pg.execute("SELECT lac_require_free('me', 'here', %s, %s, NULL)", (wanted, wanted_mode[0]))
        refused = False
    except psycopg.Error as exc:
        assert exc.sqlstate == "LAC01", exc
        refused = True
    assert refused == rules.conflict(wanted, wanted_mode, held, held_mode, False)
