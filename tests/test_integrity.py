"""The database enforces what the CLI promises (issue 21), for every caller
and every isolation level: real processes racing on databases whose default
isolation is REPEATABLE READ or SERIALIZABLE (a throwaway database or a
uniquely named role per run, never the shared database's defaults), a
hostile agent with its own PostgreSQL login calling every function it may
EXECUTE, the events the database writes for each state change, and the
SQL form of the Python validators compared with Python itself.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from git_lacunari import paths, team
from git_lacunari.board import Board
from git_lacunari.errors import BoardBusy, InvalidInput, Refused
from git_lacunari.identity import NAME_OK, Identity
from git_lacunari.store.postgres import PostgresStore

from .team_fixtures import Team, as_role, team_board

ROUNDS = 150  # racing pairs per configuration, for locks and for claims each


@pytest.fixture
def crew(pg_server: str) -> Iterator[Team]:
    with team_board(pg_server) as made:
        yield made


def _with_db(url: str, db: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + db, query=""))


@contextlib.contextmanager
def throwaway_db(server: str, *, owner: str | None = None) -> Iterator[str]:
    """A database of its own for this run (uniquely named, dropped after)."""
    name = "lac_iso_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"' + (f' OWNER "{owner}"' if owner else ""))
    try:
        yield _with_db(server, name)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- races between real processes -----------------------------------------------------


def _racer(url: str, me: str, tasks: list[int], barrier: Any, out: Any, pgoptions: str) -> None:
    if pgoptions:
        os.environ["PGOPTIONS"] = pgoptions
    store = PostgresStore(url)
    board = Board(store, Identity(me, "test", (), "test", instance=me))
    # What a write transaction of the store really runs at, whatever the default.
    with store.write():
        level = store.conn.execute("SHOW transaction_isolation").fetchone()
    locked: list[int] = []
    claimed: list[int] = []
    for i, task in enumerate(tasks):
        barrier.wait()
        # Overlapping, not identical: a directory against a file in it.
        pattern = f"r{i}/" if me == "a" else f"r{i}/x.py"
        with contextlib.suppress(Refused, BoardBusy):
            board.lock([pattern])
            locked.append(i)
        barrier.wait()
        with contextlib.suppress(Refused, BoardBusy):
            board.claim(task)
            claimed.append(i)
    out.put((me, level["transaction_isolation"] if level else None, locked, claimed))
    store.close()


def _race(url: str, pgoptions: str = "") -> dict[str, Any]:
    store = PostgresStore(url)
    store.migrate(create=True)
    setup = Board(store, Identity("setup", "test", (), "test"))
    tasks = [setup.add_task(f"t{i}").id for i in range(ROUNDS)]
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(target=_racer, args=(url, me, tasks, barrier, out, pgoptions))
        for me in ("a", "b")
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    rows = store.conn.execute(
        "SELECT count(*) AS n FROM lac_locks a JOIN lac_locks b ON a.id < b.id"
        " WHERE a.agent <> b.agent AND (a.mode = 'w' OR b.mode = 'w')"
        " AND lac_overlap(a.pattern, b.pattern, false)"
    ).fetchone()
    twice = store.conn.execute(
        "SELECT count(*) AS n FROM (SELECT task_id FROM lac_events WHERE kind = 'claimed'"
        " GROUP BY task_id HAVING count(*) > 1) AS d"
    ).fetchone()
    store.close()
    locked = {me: set(lk) for me, _, lk, _ in results}
    claimed = {me: set(c) for me, _, _, c in results}
    return {
        "levels": {me: level for me, level, _, _ in results},
        "overlapping": rows["n"] if rows else None,
        "claimed_twice": twice["n"] if twice else None,
        "both_locked": len(locked["a"] & locked["b"]),
        "locked_rounds": len(locked["a"] | locked["b"]),
        "both_claimed": len(claimed["a"] & claimed["b"]),
        "claimed_rounds": len(claimed["a"] | claimed["b"]),
    }


def _assert_race_free(found: dict[str, Any]) -> None:
    assert found["levels"] == {"a": "read committed", "b": "read committed"}, found
    assert found["overlapping"] == 0 and found["both_locked"] == 0, found
    assert found["claimed_twice"] == 0 and found["both_claimed"] == 0, found
    # Not a race nobody won: every round granted the lock to one, the task to one.
    assert found["locked_rounds"] == ROUNDS and found["claimed_rounds"] == ROUNDS, found


@pytest.mark.parametrize("level", ["repeatable read", "serializable"])
def test_racing_grants_on_a_database_whose_default_is_not_read_committed(
    pg_server: str, level: str
) -> None:
    with throwaway_db(pg_server) as url:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            db = urlsplit(url).path.lstrip("/")
            conn.execute(f"ALTER DATABASE \"{db}\" SET default_transaction_isolation = '{level}'")
        with psycopg.connect(url, autocommit=True) as conn:  # the default is in effect
            assert conn.execute("SHOW transaction_isolation").fetchone() == (level,)
        _assert_race_free(_race(url))


def test_racing_grants_for_a_role_whose_default_is_repeatable_read(pg_server: str) -> None:
    role = "lac_iso_" + uuid.uuid4().hex[:10]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN')
        conn.execute(f"ALTER ROLE \"{role}\" SET default_transaction_isolation = 'repeatable read'")
    try:
        with throwaway_db(pg_server, owner=role) as url:
            url = as_role(url, role)
            with psycopg.connect(url, autocommit=True) as conn:
                assert conn.execute("SHOW transaction_isolation").fetchone() == ("repeatable read",)
            _assert_race_free(_race(url))
    finally:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_racing_grants_with_pgoptions_serializable(
    pg_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = "-c default_transaction_isolation=serializable"
    with throwaway_db(pg_server) as url:
        with psycopg.connect(url, autocommit=True, options=options) as conn:
            assert conn.execute("SHOW transaction_isolation").fetchone() == ("serializable",)
        monkeypatch.setenv("PGOPTIONS", options)  # the setup's connections too
        _assert_race_free(_race(url, pgoptions=options))


def _team_racer(url: str, board: str, me: str, n: int, level: str, barrier: Any, out: Any) -> None:
    refused: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'SET search_path = "{board}"')
        for i in range(n):
            barrier.wait()
            pattern = f"t{i}/" if me.endswith("alice") else f"t{i}/x.py"
            try:
                with conn.transaction():
                    conn.execute(f"SET TRANSACTION ISOLATION LEVEL {level}")
                    conn.execute("SELECT 1")  # the snapshot is taken here, before the call
                    conn.execute(
                        "SELECT * FROM lac_api_insert_lock(%s, '', 'w', NULL, NULL, NULL, 'i')",
                        (pattern,),
                    )
            except psycopg.Error as exc:
                refused.append(str(exc.sqlstate))
    out.put((me, refused))


@pytest.mark.parametrize("level", ["REPEATABLE READ", "SERIALIZABLE"])
def test_team_agents_in_their_own_snapshot_transactions_are_refused_never_granted_stale(
    crew: Team, level: str
) -> None:
    """An agent that calls the lock function inside its own REPEATABLE READ or
    SERIALIZABLE transaction could decide on a snapshot older than another's
    grant: every such call is refused (LAC02), so none is granted."""
    alice, bob = crew.add("alice"), crew.add("bob")
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(
            target=_team_racer,
            args=(crew.url_of(r), crew.board, r, ROUNDS, level, barrier, out),
        )
        for r in (alice, bob)
    ]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(60)
    assert {r: len(v) for r, v in results.items()} == {alice: ROUNDS, bob: ROUNDS}
    assert {s for v in results.values() for s in v} == {"LAC02"}
    row = crew.admin_store.conn.execute("SELECT count(*) AS n FROM lac_locks").fetchone()
    assert row is not None and row["n"] == 0


def test_team_agents_whose_role_defaults_to_serializable_race_through_the_store(
    crew: Team,
) -> None:
    """The same agents with their role's default at SERIALIZABLE, through `git
    lac`'s store: it begins READ COMMITTED, and exactly one of each racing pair
    gets the overlapping lock and the task."""
    alice, bob = crew.add("alice"), crew.add("bob")
    admin = crew.admin_store.conn
    for role in (alice, bob):
        admin.execute(f"ALTER ROLE \"{role}\" SET default_transaction_isolation = 'serializable'")
    setup = crew.open(alice)
    tasks = [setup.add_task(f"t{i}").id for i in range(ROUNDS)]
    setup.store.close()
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(target=_team_board_racer, args=(crew, r, r == alice, tasks, barrier, out))
        for r in (alice, bob)
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
    locked = [set(lk) for _, lk, _ in results]
    claimed = [set(c) for _, _, c in results]
    assert not locked[0] & locked[1] and len(locked[0] | locked[1]) == ROUNDS
    assert not claimed[0] & claimed[1] and len(claimed[0] | claimed[1]) == ROUNDS
    twice = admin.execute(
        "SELECT count(*) AS n FROM lac_locks a JOIN lac_locks b ON a.id < b.id"
        " WHERE a.agent <> b.agent AND lac_overlap(a.pattern, b.pattern, false)"
    ).fetchone()
    assert twice is not None and twice["n"] == 0


def _team_board_racer(
    crew: Team, role: str, first: bool, tasks: list[int], barrier: Any, out: Any
) -> None:
    board = crew.open(role)
    locked: list[int] = []
    claimed: list[int] = []
    for i, task in enumerate(tasks):
        barrier.wait()
        with contextlib.suppress(Refused, BoardBusy):
            board.lock([f"t{i}/" if first else f"t{i}/x.py"])
            locked.append(i)
        barrier.wait()
        with contextlib.suppress(Refused, BoardBusy):
            board.claim(task)
            claimed.append(i)
    out.put((role, locked, claimed))


def test_sqlite_writes_never_decide_on_a_stale_snapshot(repo: Path) -> None:
    """SQLite, checked for the same hole: the store begins every write
    IMMEDIATE (the write lock before the first read, whatever any setting
    says), and a connection that read in a deferred transaction cannot then
    write on its old snapshot once another connection has committed."""
    from git_lacunari.store.sqlite import SqliteStore

    path = repo / "board.db"
    store = SqliteStore(path)
    store.migrate(create=True)
    assert store.queries["begin_write"].split()[-2:] == ["BEGIN", "IMMEDIATE"]
    board = Board(store, Identity("a", "test", (), "test"))
    stale = sqlite3.connect(str(path), isolation_level=None, timeout=0.1)
    stale.execute("BEGIN")  # deferred: a snapshot at its first read
    assert stale.execute("SELECT count(*) FROM lac_locks").fetchone() == (0,)
    board.lock(["core/"])
    with pytest.raises(sqlite3.OperationalError):  # SQLITE_BUSY_SNAPSHOT: no stale write
        stale.execute(
            "INSERT INTO lac_locks (pattern, key, mode, agent, acquired_at)"
            " VALUES ('core/a.py', 'core/', 'w', 'b', 0)"
        )
    stale.execute("ROLLBACK")
    stale.close()
    assert [lk.pattern for lk in board.locks()] == ["core/"]


# --- the validators, in SQL and in Python ---------------------------------------------


def test_sql_character_rules_match_python_for_every_code_point(pg_server: str) -> None:
    with psycopg.connect(pg_server, autocommit=True) as conn, _helpers(conn) as schema:
        row = conn.execute(
            f"""SELECT array_agg(c) FILTER (WHERE NOT "{schema}".lac_safe(chr(c))),
                       array_agg(c) FILTER (WHERE NOT "{schema}".lac_valid_name(chr(c)))
                  FROM generate_series(1, 1114111) AS c
                 WHERE c NOT BETWEEN 55296 AND 57343"""
        ).fetchone()
        assert row is not None
        unsafe, unnamed = row
    chars = [c for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    assert unsafe == [c for c in chars if paths.unsafe_char(chr(c)) is not None]
    assert unnamed == [
        c for c in chars if not NAME_OK.match(chr(c)) or paths.unsafe_char(chr(c)) is not None
    ]


@contextlib.contextmanager
def _helpers(conn: psycopg.Connection[Any]) -> Iterator[str]:
    schema = "lac_t_" + uuid.uuid4().hex[:12]
    conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        conn.execute(f'SET search_path = "{schema}"')
        store_sql = Path(paths.__file__).parent.parent / "sql/postgres/functions/integrity.sql"
        text = store_sql.read_text()
        # Only the pure helpers: the rest needs the board's tables.
        start = text.index("CREATE OR REPLACE FUNCTION lac_safe")
        end = text.index("-- One spelling of")
        conn.execute(text[start:end].encode())
        yield schema
    finally:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


PATTERNS = [
    "a",
    "a/",
    "a/b.py",
    "**",
    "src/**/x",
    "a b/c",
    "x" * 4096,
    "x" * 4097,
    "/abs",
    "a//b",
    "a/./b",
    "a/../b",
    "..",
    ".",
    "a/..",
    "a\nb",
    "a\x1bb",
    "a\u202eb",
    "a\u200bb",
    "a\u2028b",
    "caf\u00e9/",
    "a\u00a0b",
    "",
]


def test_sql_pattern_rule_accepts_exactly_what_normalize_returns(pg_server: str) -> None:
    """Everything paths.normalize returns is a valid pattern in SQL; anything
    it refuses or would rewrite is refused by SQL as a stored pattern."""
    with psycopg.connect(pg_server, autocommit=True) as conn, _helpers(conn):
        for raw in PATTERNS:
            try:
                normal: str | None = paths.normalize(raw)
            except InvalidInput:
                normal = None
            ok = conn.execute("SELECT lac_valid_pattern(%s)", (raw,)).fetchone()
            assert ok == ((normal == raw),), raw
            if normal is not None:
                assert conn.execute("SELECT lac_valid_pattern(%s)", (normal,)).fetchone() == (
                    True,
                ), raw


def test_sql_duration_rule_matches_parse_duration(pg_server: str) -> None:
    from git_lacunari.durations import MAX_DURATION_S

    with psycopg.connect(pg_server, autocommit=True) as conn, _helpers(conn):
        for value, ok in [
            (1.0, True),
            (MAX_DURATION_S, True),
            (MAX_DURATION_S + 1, False),
            (0.0, False),
            (-1.0, False),
            (float("nan"), False),
            (float("inf"), False),
            (1e308, False),
        ]:
            got = conn.execute("SELECT lac_valid_duration(%s::float8)", (value,)).fetchone()
            assert got == (ok,), value


# --- a hostile agent, through every function it may EXECUTE ----------------------------

TABLES = (
    "lac_tasks",
    "lac_task_deps",
    "lac_task_paths",
    "lac_locks",
    "lac_events",
    "lac_agents",
    "lac_settings",
    "lac_instances",
    "lac_changes",
    "lac_resources",
    "lac_task_resources",
)


def fingerprint(crew: Team) -> dict[str, Any]:
    conn = crew.admin_store.conn
    return {
        t: conn.execute(
            f"SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), ''))"
            f" AS h FROM {t} AS x"
        ).fetchone()
        for t in TABLES
    }


@pytest.fixture
def hostile(crew: Team) -> dict[str, Any]:
    """bob (gpu) made #open (needs gpu, declares src/b.py, waits on nothing),
    holds #held with a write lock on src/a.py and the port 8100 of the pool
    port (8100-8101, an admin's), and a task-less lock on docs/; mallory is
    a plain agent with no capability."""
    mallory = crew.add("mallory")
    bob = crew.add("bob", caps=["gpu"])
    pools = crew.open(crew.add("pool_admin", kind="admin"))
    pools.resource_add("port", ["8100-8101"])
    pools.store.close()
    b = crew.open(bob)
    opened = b.add_task("bob's open work", needs=["gpu"], writes=["src/b.py"])
    held = b.add_task("bob's claimed work", writes=["src/a.py"], resources=["port"])
    b.claim(held.id)
    b.lock(["docs/"])
    b.store.close()
    lock = crew.admin_store.conn.execute(
        "SELECT l.id, t.heartbeat_at FROM lac_locks l JOIN lac_tasks t ON t.id = l.task_id"
        " WHERE l.task_id = %s",
        (held.id,),
    ).fetchone()
    assert lock is not None
    return {
        "me": mallory,
        "bob": bob,
        "open": opened.id,
        "held": held.id,
        "lock": lock["id"],
        "beat": lock["heartbeat_at"],
    }


# Each attempt: the function it tries, the SQL, and what the database says:
# an SQLSTATE it refuses with, or "none" (the call does nothing, by its
# contract: zero rows). Formatted with the fixture's facts.
ATTEMPTS: list[tuple[str, str, str]] = [
    ("lac_api_agent_seen", "SELECT lac_api_agent_seen('{bob}')", "42501"),
    ("lac_api_upsert_agent", "SELECT lac_api_upsert_agent('{bob}', '[\"root\"]')", "42501"),
    (
        "lac_api_upsert_instance",
        "SELECT lac_api_upsert_instance(E'i\\x1b', NULL, 'h', 'p')",
        "LAC03",
    ),
    (
        "lac_api_insert_task",
        "SELECT lac_api_insert_task('t', '', E'lane\\x1b[2J', 0, '[]', NULL)",
        "23514",
    ),
    (
        "lac_api_insert_task",
        "SELECT lac_api_insert_task(repeat('t', 501), '', 'l', 0, '[]', NULL)",
        "23514",
    ),
    (
        "lac_api_insert_task",
        "SELECT lac_api_insert_task('t', '', 'l', 0, '[\"a b\"]', NULL)",
        "23514",
    ),
    ("lac_api_insert_task", "SELECT lac_api_insert_task('t', '', 'l', 0, '[]', '{bob}')", "42501"),
    ("lac_api_insert_dep", "SELECT lac_api_insert_dep({open}, {held})", "42501"),
    ("lac_api_delete_dep", "SELECT * FROM lac_api_delete_dep({open}, {held})", "42501"),
    ("lac_api_insert_task_path", "SELECT lac_api_insert_task_path({open}, 'x', 'w')", "42501"),
    (
        "lac_api_delete_task_path",
        "SELECT * FROM lac_api_delete_task_path({open}, 'src/b.py')",
        "42501",
    ),
    (
        "lac_api_edit_task",
        "SELECT * FROM lac_api_edit_task({open}, NULL, NULL, 'bob''s open work', '', 'default',"
        " 0, '[]')",
        "42501",
    ),
    ("lac_api_claim", "SELECT * FROM lac_api_claim({open}, NULL, 'i', NULL)", "none"),
    ("lac_api_claim", "SELECT * FROM lac_api_claim({open}, NULL, 'i', 'NaN')", "LAC03"),
    (
        "lac_api_claim_next_free",
        "SELECT * FROM lac_api_claim_next_free('default', NULL, 'i', 'Infinity')",
        "LAC03",
    ),
    (
        "lac_api_claim_next_free",
        "SELECT * FROM lac_api_claim_next_free('default', NULL, 'i', NULL)",
        "none",
    ),
    (
        "lac_api_next_candidate",
        "SELECT * FROM lac_api_next_candidate('default', NULL, '{{}}')",
        "LAC03",
    ),
    (
        "lac_api_insert_lock",
        "SELECT * FROM lac_api_insert_lock('src/', '', 'w', NULL, NULL, NULL, 'i')",
        "LAC01",
    ),
    (
        "lac_api_insert_lock",
        "SELECT * FROM lac_api_insert_lock('x', '', 'w', NULL, {held}, NULL, 'i')",
        "42501",
    ),
    (
        "lac_api_insert_lock",
        "SELECT * FROM lac_api_insert_lock('/etc', '', 'w', NULL, NULL, NULL, 'i')",
        "23514",
    ),
    (
        "lac_api_insert_lock",
        "SELECT * FROM lac_api_insert_lock(E'a\\u202eb', '', 'w', NULL, NULL, NULL, 'i')",
        "23514",
    ),
    (
        "lac_api_insert_locks",
        'SELECT * FROM lac_api_insert_locks(\'[{{"pattern": "docs/x", "mode": "r"}}]\','
        " NULL, NULL, 'i')",
        "LAC01",
    ),
    (
        "lac_api_insert_locks",
        "SELECT * FROM lac_api_insert_locks('{{}}', NULL, NULL, 'i')",
        "LAC03",
    ),
    ("lac_api_upgrade_lock", "SELECT lac_api_upgrade_lock({lock})", "42501"),
    ("lac_api_delete_task_locks", "SELECT * FROM lac_api_delete_task_locks({held})", "42501"),
    (
        "lac_api_delete_task_lock",
        "SELECT * FROM lac_api_delete_task_lock({held}, 'src/a.py')",
        "42501",
    ),
    (
        "lac_api_delete_agent_lock",
        "SELECT * FROM lac_api_delete_agent_lock('{bob}', '', 'docs/')",
        "42501",
    ),
    (
        "lac_api_delete_pattern_locks",
        "SELECT * FROM lac_api_delete_pattern_locks('docs/')",
        "42501",
    ),
    ("lac_api_release", "SELECT * FROM lac_api_release({held}, '{bob}', NULL)", "42501"),
    ("lac_api_release", "SELECT * FROM lac_api_release({held}, '{bob}', '{bob}')", "42501"),
    ("lac_api_park", "SELECT * FROM lac_api_park({held}, '{bob}')", "42501"),
    ("lac_api_done", "SELECT * FROM lac_api_done({held}, '{bob}', '')", "42501"),
    ("lac_api_done", "SELECT * FROM lac_api_done({held}, NULL, '')", "none"),
    ("lac_api_heartbeat", "SELECT * FROM lac_api_heartbeat('{bob}', '', NULL)", "42501"),
    ("lac_api_heartbeat", "SELECT * FROM lac_api_heartbeat(NULL, '', '{{}}')", "LAC03"),
    # `claim --max-age` (0018): another's claim is never capped (shortened or
    # lengthened), as another or as oneself; a cap that is no duration is bad input.
    ("lac_api_cap_claim", "SELECT * FROM lac_api_cap_claim({held}, '{bob}', '', 1)", "42501"),
    ("lac_api_cap_claim", "SELECT * FROM lac_api_cap_claim({held}, NULL, '', 1)", "none"),
    ("lac_api_cap_claim", "SELECT * FROM lac_api_cap_claim({held}, NULL, '', 'NaN')", "LAC03"),
    ("lac_api_cap_claim", "SELECT * FROM lac_api_cap_claim({held}, NULL, '', 0)", "LAC03"),
    ("lac_api_stale_claims", "SELECT * FROM lac_api_stale_claims('NaN', 0)", "LAC03"),
    ("lac_api_stale_claims", "SELECT * FROM lac_api_stale_claims(1, '-Infinity')", "LAC03"),
    ("lac_api_expire", "SELECT * FROM lac_api_expire('open', {held}, '{bob}', {beat})", "42501"),
    ("lac_api_silent_agent_locks", "SELECT * FROM lac_api_silent_agent_locks('Infinity')", "LAC03"),
    ("lac_api_expire_lock", "SELECT * FROM lac_api_expire_lock({lock}, 1e308)", "LAC03"),
    ("lac_api_expire_lock", "SELECT * FROM lac_api_expire_lock({lock}, 1)", "42501"),
    (
        "lac_api_set_setting",
        "SELECT lac_api_set_setting('holder:keeper', '{me} (pid 1 on h)')",
        "42501",
    ),
    (
        "lac_api_set_setting",
        "SELECT lac_api_set_setting('holder:keeper', '{bob} (pid 1 on h)')",
        "42501",
    ),
    ("lac_api_set_setting", "SELECT lac_api_set_setting('stale_after', 'NaN')", "LAC03"),
    ("lac_api_set_setting", "SELECT lac_api_set_setting('stale_after', '60')", "42501"),
    ("lac_api_set_setting", "SELECT lac_api_set_setting('team_role:admin', '{me}')", "42501"),
    ("lac_api_insert_event", "SELECT lac_api_insert_event({held}, NULL, 'done', '{{}}')", "42501"),
    (
        "lac_api_insert_event",
        "SELECT lac_api_insert_event({held}, NULL, 'force_released',"
        ' \'{{"via": "page", "person": "the boss"}}\')',
        "42501",
    ),
    (
        "lac_api_insert_event",
        "SELECT lac_api_insert_event({held}, NULL, 'claimed', '{{}}')",
        "42501",
    ),
    (
        "lac_api_insert_event",
        "SELECT lac_api_insert_event(NULL, '{bob}', 'reconciled', '{{}}')",
        "42501",
    ),
    ("lac_api_cancel", "SELECT * FROM lac_api_cancel({held}, NULL, '')", "none"),
    ("lac_api_reopen", "SELECT * FROM lac_api_reopen({held})", "none"),
    ("lac_api_take_over", "SELECT * FROM lac_api_take_over({held}, '{bob}', 'i')", "42501"),
    ("lac_api_take_over", "SELECT * FROM lac_api_take_over({held}, NULL, 'i')", "none"),
    ("lac_api_take_over_locks", "SELECT lac_api_take_over_locks({held}, '{bob}', 'i')", "42501"),
    # Landing (issue 25, 0009): another's claim is neither tracked, landed nor
    # settled; a tip or a way of landing that is not one is bad input.
    ("lac_api_track", "SELECT * FROM lac_api_track('{bob}', '', '[]')", "42501"),
    ("lac_api_track", "SELECT * FROM lac_api_track(NULL, '', '{{}}')", "LAC03"),
    (
        "lac_api_track",
        f"SELECT * FROM lac_api_track(NULL, '', '[[{{held}}, \"b\", \"{'a' * 40}\"]]')",
        "none",
    ),
    (
        "lac_api_land",
        "SELECT * FROM lac_api_land({held}, '{bob}', '', NULL, repeat('a', 40))",
        "42501",
    ),
    ("lac_api_land", "SELECT * FROM lac_api_land({held}, NULL, '', NULL, repeat('a', 40))", "none"),
    ("lac_api_land", "SELECT * FROM lac_api_land({held}, NULL, '', NULL, NULL)", "LAC03"),
    (
        "lac_api_landed",
        "SELECT * FROM lac_api_landed({held}, repeat('a', 40), 'merged', NULL)",
        "42501",
    ),
    ("lac_api_landed", "SELECT * FROM lac_api_landed({held}, 'x', 'guessed', NULL)", "LAC03"),
    # The landing queue (0016): another's landing line is not returned, as
    # nobody or as another agent.
    (
        "lac_api_return_line",
        "SELECT * FROM lac_api_return_line({held}, repeat('a', 40), '{{}}', NULL)",
        "42501",
    ),
    (
        "lac_api_return_line",
        "SELECT * FROM lac_api_return_line({held}, repeat('a', 40), '{{}}', '{bob}')",
        "42501",
    ),
    (
        "lac_api_delete_task_read_locks",
        "SELECT * FROM lac_api_delete_task_read_locks({held})",
        "42501",
    ),
    # Functions that are no write API: they run with the agent's own rights.
    ("lac_changed", "SELECT lac_changed('done', {held}, NULL, '{{}}')", "42501"),
    ("lac_free_task_locks", "SELECT lac_free_task_locks({held})", "42501"),
    ("lac_record_unlocked", "SELECT lac_record_unlocked('[\"x\"]', {held})", "42501"),
    ("lac_trg_settle", "SELECT lac_trg_settle()", "0A000"),
    ("lac_trg_task_text", "SELECT lac_trg_task_text()", "0A000"),
    ("lac_notify_change", "SELECT lac_notify_change()", "0A000"),
    # The page's poll of the change counter (0008), the board owner's to read:
    # it answers (a row: "wrote" in _sqlstate's words) and the fingerprint
    # taken after every attempt shows it changed nothing.
    ("lac_changes_seen", "SELECT * FROM lac_changes_seen()", "wrote"),
    # Resource pools (0017): a pool is an admin's; another's claim is neither
    # granted nor given more needs; nothing frees a value but its claim's end.
    ("lac_api_resource_add", "SELECT * FROM lac_api_resource_add('port', '[\"9\"]')", "42501"),
    ("lac_api_resource_add", "SELECT * FROM lac_api_resource_add('x', '[\"9\"]')", "42501"),
    ("lac_api_resource_remove", "SELECT * FROM lac_api_resource_remove('port', NULL)", "42501"),
    (
        "lac_api_resource_remove",
        "SELECT * FROM lac_api_resource_remove('port', '[\"8101\"]')",
        "42501",
    ),
    (
        "lac_api_insert_task_resource",
        "SELECT lac_api_insert_task_resource({held}, 'port', 2)",
        "42501",
    ),
    (
        "lac_api_insert_task_resource",
        "SELECT lac_api_insert_task_resource({open}, 'port', 1)",
        "42501",
    ),
    ("lac_api_grant_resources", "SELECT * FROM lac_api_grant_resources({held}, NULL, '')", "42501"),
    (
        "lac_api_grant_resources",
        "SELECT * FROM lac_api_grant_resources({held}, '{bob}', '')",
        "42501",
    ),
    ("lac_trg_free_resources", "SELECT lac_trg_free_resources()", "0A000"),
]

# Functions an agent may EXECUTE that write nothing (rules, helpers): called
# by the suite to show they are harmless, never trusted for identity.
PURE = {
    "lac_absorbs",
    "lac_actor",
    "lac_ancestor_keys",
    "lac_casefold",
    "lac_change_event",
    "lac_claimable",
    "lac_clock",
    "lac_covers",
    "lac_created_now",
    "lac_default_stale",
    "lac_folds",
    "lac_head",
    "lac_head_end",
    "lac_head_prefixes",
    "lac_has",
    "lac_index_key",
    "lac_invalid",
    "lac_keeps",
    "lac_landing_period",
    "lac_lock_stale",
    "lac_lower",
    "lac_may_change",
    "lac_merge",
    "lac_now",
    "lac_overlap",
    "lac_pool_cap",
    "lac_refuse",
    "lac_require_change",
    "lac_require_current",
    "lac_require_finite",
    "lac_require_free",
    "lac_require_free_all",
    "lac_require_shape",
    "lac_safe",
    "lac_stands_for",
    "lac_team",
    "lac_valid_duration",
    "lac_valid_duration_text",
    "lac_valid_name",
    "lac_valid_names",
    "lac_valid_pattern",
    "lac_who",
    "lac_wildmatch",
}


def _sqlstate(conn: psycopg.Connection[Any], sql: str) -> str:
    try:
        with conn.transaction():
            cursor = conn.execute(sql)
            rows = cursor.fetchall() if cursor.description else []
            if rows and any(any(v is not None for v in r) for r in rows):
                return "wrote"
    except psycopg.Error as exc:
        return str(exc.sqlstate)
    return "none"


def test_a_hostile_agent_is_refused_everywhere_and_nothing_is_written(
    crew: Team, hostile: dict[str, Any]
) -> None:
    before = fingerprint(crew)
    got: dict[str, str] = {}
    with psycopg.connect(crew.url_of(hostile["me"]), autocommit=True) as conn:
        conn.execute(f'SET search_path = "{crew.board}"')
        for name, sql, expected in ATTEMPTS:
            text = sql.format(**hostile)
            got[text] = _sqlstate(conn, text)
            assert got[text] == expected, (name, text, got[text])
            assert fingerprint(crew) == before, (name, text)
        for name in sorted(PURE):  # callable, and harmless: still nothing written
            args = conn.execute(
                "SELECT pg_get_function_identity_arguments(p.oid) AS a FROM pg_proc p"
                " WHERE p.proname = %s AND p.pronamespace = %s::regnamespace",
                (name, crew.board),
            ).fetchone()
            assert args is not None, name
            n = 0 if not args[0] else args[0].count(",") + 1
            with contextlib.suppress(psycopg.Error), conn.transaction():
                conn.execute(f"SELECT {name}({', '.join(['NULL'] * n)})")
        assert fingerprint(crew) == before


def test_every_write_function_refuses_a_snapshot_transaction(
    crew: Team, hostile: dict[str, Any]
) -> None:
    with psycopg.connect(crew.url_of(hostile["me"]), autocommit=True) as conn:
        conn.execute(f'SET search_path = "{crew.board}"')
        names = conn.execute(
            "SELECT p.proname, pg_get_function_identity_arguments(p.oid) FROM pg_proc p"
            " WHERE p.pronamespace = %s::regnamespace AND p.proname LIKE 'lac\\_api\\_%%'",
            (crew.board,),
        ).fetchall()
        assert len(names) >= 33
        for name, args in names:
            n = 0 if not args else args.count(",") + 1
            for level in ("REPEATABLE READ", "SERIALIZABLE"):
                with pytest.raises(psycopg.Error) as refused, conn.transaction():
                    conn.execute(f"SET TRANSACTION ISOLATION LEVEL {level}")
                    conn.execute(f"SELECT * FROM {name}({', '.join(['NULL'] * n)})")
                assert refused.value.sqlstate == "LAC02", (name, level, refused.value)
                assert "READ COMMITTED" in str(refused.value)


def test_the_catalog_lists_no_function_the_hostile_suite_does_not_cover(
    crew: Team, hostile: dict[str, Any]
) -> None:
    """Every function an agent role may EXECUTE on the board: each either has
    an attempt in ATTEMPTS or is listed as PURE (and called above). A new
    function fails here until the suite covers it."""
    with psycopg.connect(crew.url_of(hostile["me"]), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT DISTINCT p.proname, p.prosecdef FROM pg_proc p"
            " WHERE p.pronamespace = %s::regnamespace"
            "   AND has_function_privilege(p.oid, 'EXECUTE')",
            (crew.board,),
        ).fetchall()
    attempted = {name for name, _, _ in ATTEMPTS}
    executable = {name for name, _ in rows}
    assert executable - attempted - PURE == set()
    # Every function that acts as the board's owner is attacked, not trusted.
    definers = {name for name, definer in rows if definer}
    assert definers <= attempted and len(definers) >= 34
    assert not PURE & definers


# --- the history the database writes -----------------------------------------------------


def _events(crew: Team, since: int) -> list[dict[str, Any]]:
    return crew.admin_store.conn.execute(
        "SELECT id, at, task_id, agent, kind, detail FROM lac_events WHERE id > %s ORDER BY id",
        (since,),
    ).fetchall()


def _last(crew: Team) -> int:
    row = crew.admin_store.conn.execute(
        "SELECT coalesce(max(id), 0) AS n FROM lac_events"
    ).fetchone()
    return int(row["n"]) if row else 0


def test_every_state_change_through_the_api_writes_its_event(crew: Team) -> None:
    """Called directly, as an agent with its own login would, with no event
    written by the caller: the database writes each one, with its facts."""
    bob, admin = crew.add("bob"), crew.add("boss", kind="admin")
    keeper = crew.add("keeper", kind="keeper")
    cases: list[tuple[str, str, str, dict[str, Any]]] = []

    with psycopg.connect(crew.url_of(bob), autocommit=True) as conn:
        conn.execute(f'SET search_path = "{crew.board}"')

        def call(sql: str, *args: Any) -> Any:
            mark = _last(crew)
            row = conn.execute(sql, args).fetchone()
            return row, [
                (e["kind"], e["task_id"], e["agent"], e["detail"]) for e in _events(crew, mark)
            ]

        row, ev = call("SELECT lac_api_insert_task('a', '', 'l', 0, '[]', NULL)")
        t = row[0]
        assert ev == [
            (
                "created",
                t,
                bob,
                {"title": "a", "lane": "l", "priority": 0, "needs": [], "after": [], "paths": []},
            )
        ]
        row, ev = call("SELECT lac_api_insert_task('b', '', 'l', 0, '[]', NULL)")
        u = row[0]
        _, ev = call("SELECT lac_api_insert_dep(%s, %s)", u, t)
        assert ev == [("depends", u, bob, {"after": [t]})]
        _, ev = call("SELECT * FROM lac_api_delete_dep(%s, %s)", u, t)
        assert ev == [("edited", u, bob, {"changes": {"dropped_after": [t]}})]
        _, ev = call("SELECT lac_api_insert_task_path(%s, 'p/', 'w')", t)
        assert ev == [("edited", t, bob, {"changes": {"added_paths": [["p/", "w"]]}})]
        _, ev = call("SELECT * FROM lac_api_delete_task_path(%s, 'p/')", t)
        assert ev == [("edited", t, bob, {"changes": {"dropped_paths": ["p/"]}})]
        _, ev = call(
            "SELECT * FROM lac_api_edit_task(%s, NULL, NULL, 'a2', 'xyz', 'l', 5, '[]')", t
        )
        assert ev == [
            (
                "edited",
                t,
                bob,
                {
                    "changes": {
                        "title": ["a", "a2"],
                        "body": {"before_chars": 0, "after_chars": 3},
                        "priority": [0, 5],
                    }
                },
            )
        ]
        _, ev = call("SELECT * FROM lac_api_claim(%s, NULL, 'i', 60)", t)
        assert ev == [("claimed", t, bob, {"attempt": 1})]
        _, ev = call("SELECT * FROM lac_api_insert_lock('q/', '', 'w', NULL, %s, NULL, 'i')", t)
        assert ev == [("locked", t, bob, {"paths": [["q/", "w"]]})]
        _, ev = call("SELECT * FROM lac_api_take_over(%s, NULL, 'j')", t)
        assert ev == [("taken_over", t, bob, {"previous_instance": "i", "instance": "j"})]
        _, ev = call("SELECT * FROM lac_api_release(%s, %s, NULL)", t, bob)
        assert ev == [("released", t, bob, {"locks": ["q/"]})]
        _, ev = call("SELECT * FROM lac_api_claim(%s, NULL, 'i', 60)", t)
        _, ev = call("SELECT * FROM lac_api_insert_lock('q/', '', 'r', NULL, %s, NULL, 'i')", t)
        _, ev = call("SELECT * FROM lac_api_done(%s, NULL, 'i')", t)
        assert ev == [("done", t, bob, {"locks": ["q/"]})]
        _, ev = call("SELECT * FROM lac_api_reopen(%s)", t)
        assert ev == [
            ("reopened", t, bob, {"previous_state": "done", "previous_owner": bob, "attempts": 2})
        ]
        _, ev = call("SELECT * FROM lac_api_cancel(%s, NULL, 'i')", u)
        assert ev == [("cancelled", u, bob, {"previous_state": "open", "locks": [], "waiting": []})]
        _, ev = call("SELECT * FROM lac_api_claim(%s, NULL, 'i', 60)", t)
        _, ev = call("SELECT * FROM lac_api_insert_lock('held/', '', 'w', NULL, %s, NULL, 'i')", t)
        _, ev = call("SELECT * FROM lac_api_insert_lock('free/', '', 'w', NULL, NULL, NULL, 'i')")
        _, ev = call("SELECT * FROM lac_api_delete_agent_lock(NULL, 'i', 'free/')")
        assert ev == [("unlocked", None, bob, {"paths": ["free/"]})]

    with psycopg.connect(crew.url_of(admin), autocommit=True) as conn:
        conn.execute(f'SET search_path = "{crew.board}"')
        mark = _last(crew)
        conn.execute("SELECT * FROM lac_api_release(%s, %s, NULL)", (t, bob))
        ev = [(e["kind"], e["task_id"], e["agent"], e["detail"]) for e in _events(crew, mark)]
        # An admin's release frees the claim's locks like any release, on the record.
        assert ev == [("force_released", t, admin, {"previous_owner": bob, "locks": ["held/"]})]
        assert conn.execute(
            "SELECT count(*) FROM lac_locks WHERE task_id = %s", (t,)
        ).fetchone() == (0,)
        mark = _last(crew)
        conn.execute("SELECT lac_api_set_setting('stale_after', '120')")
        ev = [(e["kind"], e["agent"], e["detail"]) for e in _events(crew, mark)]
        assert ev == [("setting", admin, {"name": "stale_after", "value": "120"})]

    # The keeper's expiry, and events in the order things happened.
    with psycopg.connect(crew.url_of(bob), autocommit=True) as conn:
        conn.execute(f'SET search_path = "{crew.board}"')
        conn.execute("SELECT * FROM lac_api_claim(%s, NULL, 'i', 60)", (t,))
        conn.execute("SELECT * FROM lac_api_insert_lock('k/', '', 'w', NULL, %s, NULL, 'i')", (t,))
    crew.admin_store.conn.execute(
        "UPDATE lac_tasks SET heartbeat_at = heartbeat_at - 3600 WHERE id = %s", (t,)
    )
    with psycopg.connect(crew.url_of(keeper), autocommit=True) as conn:
        conn.execute(f'SET search_path = "{crew.board}"')
        beat = conn.execute("SELECT heartbeat_at FROM lac_tasks WHERE id = %s", (t,)).fetchone()
        mark = _last(crew)
        assert beat is not None
        conn.execute("SELECT * FROM lac_api_expire('open', %s, %s, %s)", (t, bob, beat[0]))
        (e,) = _events(crew, mark)
        assert (e["kind"], e["agent"], e["detail"]["previous_owner"], e["detail"]["locks"]) == (
            "expired",
            keeper,
            bob,
            ["k/"],
        )
    times = [e["at"] for e in _events(crew, 0)]
    assert times == sorted(times)
    assert cases == []


def test_an_agent_describes_only_its_own_change_and_the_database_keeps_the_facts(
    crew: Team,
) -> None:
    bob = crew.add("bob")
    with psycopg.connect(crew.url_of(bob), autocommit=True) as conn:
        conn.execute(f'SET search_path = "{crew.board}"')
        made = conn.execute("SELECT lac_api_insert_task('a', '', 'l', 0, '[]', NULL)").fetchone()
        assert made is not None
        t = made[0]
        conn.execute("SELECT * FROM lac_api_claim(%s, NULL, 'i', 60)", (t,))
        conn.execute("SELECT * FROM lac_api_insert_lock('q/', '', 'w', NULL, %s, NULL, 'i')", (t,))
        mark = _last(crew)
        with conn.transaction():
            conn.execute("SELECT * FROM lac_api_release(%s, %s, NULL)", (t, bob))
            conn.execute(
                "SELECT lac_api_insert_event(%s, NULL, 'released', %s)",
                (t, json.dumps({"locks": ["made/up"], "reason": "lunch"})),
            )
        (e,) = _events(crew, mark)
        assert (e["kind"], e["detail"]) == ("released", {"locks": ["q/"], "reason": "lunch"})


def test_capabilities_cannot_be_edited_away_by_an_agent_that_lacks_them(
    crew: Team, hostile: dict[str, Any]
) -> None:
    """The issue's case: an agent without gpu drops the need and claims. Not
    its creator: refused; its creator without gpu: refused too; an admin may."""
    me = crew.open(hostile["me"])
    with pytest.raises(Refused):
        me.edit_task(hostile["open"], needs=[])
    mine = me.add_task("mine", needs=["gpu"])
    with pytest.raises(Refused):
        me.edit_task(mine.id, needs=[])
    assert me.show(mine.id).needs == ["gpu"]
    boss = crew.open(crew.add("boss", kind="admin"))
    boss.edit_task(mine.id, needs=[], reason="no gpu needed after all")
    assert me.claim(mine.id).task.owner == hostile["me"]


def test_team_add_refuses_a_role_that_climbs_to_a_superuser_through_membership(
    crew: Team,
) -> None:
    """x -> y (NOINHERIT membership) -> z (SUPERUSER): x can SET ROLE y, then z."""
    x, y, z = (crew.name(n) for n in ("climber", "middle", "top"))
    admin = crew.admin_store.conn
    admin.execute(f'CREATE ROLE "{z}" SUPERUSER NOLOGIN')
    admin.execute(f'CREATE ROLE "{y}" NOLOGIN NOINHERIT')
    admin.execute(f'CREATE ROLE "{x}" LOGIN NOINHERIT')
    admin.execute(f'GRANT "{z}" TO "{y}"')
    admin.execute(f'GRANT "{y}" TO "{x}"')
    crew.roles.extend([x, y, z])
    with pytest.raises(InvalidInput) as refused:
        team.add(crew.admin_store, x, password=False)
    assert f"{x} -> {y} -> {z}" in str(refused.value) and "superuser" in str(refused.value)
    owner = team.role_names(crew.board)["owner"]
    admin.execute(f'GRANT "{owner}" TO "{y}"')
    admin.execute(f'REVOKE "{z}" FROM "{y}"')
    with pytest.raises(InvalidInput, match="owner role"):
        team.add(crew.admin_store, x, password=False)


def test_holder_settings_are_written_only_by_the_holder_in_its_own_name(crew: Team) -> None:
    from git_lacunari.liveness import holder_text

    keeper = crew.add("keeper", kind="keeper")
    k = crew.open(keeper)
    held = k.store.exclusive("keeper")
    assert held is not None
    try:
        k.record_holder("keeper", holder_text(k))
        assert k.holder_of("keeper").startswith(keeper + " (pid ")
        other = crew.open(crew.add("other"))
        with pytest.raises(Refused):
            other.record_holder("keeper", holder_text(other))
        with pytest.raises(Refused):  # the holder itself, in another's name
            k.record_holder("keeper", "someone else (pid 1 on h)")
    finally:
        held.release()
