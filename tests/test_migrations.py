"""Replaying every migration, one at a time, gives exactly the fresh schema."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from git_lacunari.store.postgres import PostgresStore
from git_lacunari.store.queries import SQL_DIR, latest_version, migrations
from git_lacunari.store.sqlite import SqliteStore

from .conftest import pg_schema


def sqlite_catalog(store: SqliteStore) -> dict[str, Any]:
    conn = store.conn
    tables = [
        r["name"]
        for r in conn.execute(
            "SELECT name FROM sqlite_master"
            " WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    catalog: dict[str, Any] = {
        "triggers": [
            tuple(r.values())
            for r in conn.execute(
                "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
            )
        ]
    }
    for table in tables:
        catalog[table] = {
            "columns": [tuple(r.values()) for r in conn.execute(f"PRAGMA table_info({table})")],
            "foreign_keys": sorted(
                (r["table"], r["from"], r["to"])
                for r in conn.execute(f"PRAGMA foreign_key_list({table})")
            ),
            "indexes": sorted(
                (
                    r["name"],
                    r["unique"],
                    tuple(
                        i["name"]
                        for i in conn.execute(f"PRAGMA index_xinfo({r['name']})")
                        if i["key"]
                    ),
                )
                for r in conn.execute(f"PRAGMA index_list({table})")
            ),
        }
    return catalog


def postgres_catalog(store: PostgresStore) -> dict[str, Any]:
    conn = store.conn
    row = conn.execute("SELECT current_schema() AS s").fetchone()
    assert row is not None
    schema = str(row["s"])

    def rows(sql: str) -> list[tuple[Any, ...]]:
        # Definitions name their schema; each board here has its own.
        return sorted(
            tuple(v.replace(schema, "SCHEMA") if isinstance(v, str) else v for v in r.values())
            for r in conn.execute(sql)
        )

    return {
        "columns": rows(
            "SELECT table_name, column_name, data_type, column_default, is_nullable, collation_name"
            " FROM information_schema.columns WHERE table_schema = current_schema()"
        ),
        "indexes": rows(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
        ),
        "constraints": rows(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE connamespace = current_schema()::regnamespace"
        ),
        "triggers": rows(
            "SELECT tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t"
            " JOIN pg_class c ON c.oid = t.tgrelid"
            " WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal"
        ),
        "functions": rows(
            "SELECT proname, pg_get_functiondef(oid) FROM pg_proc"
            " WHERE pronamespace = current_schema()::regnamespace"
        ),
    }


def test_migration_files_are_numbered_without_gaps() -> None:
    for dialect in ("sqlite", "postgres"):
        versions = [v for v, _, _ in migrations(dialect)]
        assert versions == list(range(1, len(versions) + 1)), dialect
    assert latest_version("sqlite") == latest_version("postgres")


def test_sqlite_replayed_migrations_equal_fresh_schema(tmp_path: Path) -> None:
    fresh = SqliteStore(tmp_path / "fresh.db")
    fresh.migrate(create=True)
    replayed = SqliteStore(tmp_path / "replayed.db")
    for version, _, _ in migrations("sqlite"):
        assert replayed.migrate(create=True, upto=version) == version
        assert replayed.schema_version() == version
    replayed.migrate(create=True)  # already current: a no-op
    assert sqlite_catalog(replayed) == sqlite_catalog(fresh)
    assert fresh.schema_version() == replayed.schema_version() == latest_version("sqlite")


def test_postgres_replayed_migrations_equal_fresh_schema(pg_server: str) -> None:
    with pg_schema(pg_server) as fresh_url, pg_schema(pg_server) as replayed_url:
        fresh = PostgresStore(fresh_url)
        fresh.migrate(create=True)
        replayed = PostgresStore(replayed_url)
        for version, _, _ in migrations("postgres"):
            assert replayed.migrate(create=True, upto=version) == version
        assert postgres_catalog(replayed) == postgres_catalog(fresh)
        assert postgres_catalog(fresh)["columns"], "the catalog query saw no tables"
        fresh.close()
        replayed.close()


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_concurrent_first_use_creates_the_schema_once(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Many processes opening a board that does not exist yet: one creates, all work."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    if dialect == "sqlite":
        target: Any = tmp_path / "b.db"
        opener = "sqlite"
        cm: Any = None
    else:
        cm = pg_schema(request.getfixturevalue("pg_server"))
        target = cm.__enter__()
        opener = "postgres"
    try:
        procs = [ctx.Process(target=_open_and_migrate, args=(opener, target)) for _ in range(8)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(60)
        assert [p.exitcode for p in procs] == [0] * 8
    finally:
        if cm is not None:
            cm.__exit__(None, None, None)


def _open_and_migrate(opener: str, target: Any) -> None:
    store = SqliteStore(target) if opener == "sqlite" else PostgresStore(target)
    store.migrate(create=True)
    assert store.schema_version() == latest_version(store.dialect)


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_a_failing_migration_step_rolls_back_whole(
    dialect: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One transaction per step (store/base.py): a step that fails half way
    leaves neither its first statement nor a version behind."""
    from git_lacunari.store import base

    real = migrations(dialect)
    broken = (
        len(real) + 1,
        f"{len(real) + 1:04d}_broken.sql",
        "CREATE TABLE lac_half (x int);\nSELECT lac_no_such_function();\n",
    )
    cm: Any = None
    if dialect == "sqlite":
        store: Any = SqliteStore(tmp_path / "b.db")
    else:
        cm = pg_schema(request.getfixturevalue("pg_server"))
        store = PostgresStore(cm.__enter__())
    try:
        assert store.migrate(create=True) == len(real)
        monkeypatch.setattr(base, "migrations", lambda d: [*real, broken])
        monkeypatch.setattr(base, "latest_version", lambda d: broken[0])
        with pytest.raises(Exception, match="lac_no_such_function"):
            store.migrate(create=True)
        assert store.schema_version() == len(real)
        if dialect == "sqlite":
            half = store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'lac_half'")
        else:
            half = store.conn.execute("SELECT 1 WHERE to_regclass('lac_half') IS NOT NULL")
        assert half.fetchone() is None, "the failed step's first statement stayed"
        store.close()
    finally:
        if cm is not None:
            cm.__exit__(None, None, None)


# --- migrations frozen, functions/ the one place a body lives ------------------------

# Every migration as released: its statements are never edited (boards have
# applied them; an edit would reach only new boards). Change a function in
# functions/, a table in a new migration. The pin is over the statements, not
# the comment lines, which say what a migration is for and may be corrected.
# Add a line here when a migration ships.
RELEASED = {
    "postgres/0001_board.sql": "3f031c9956cbba01",
    "postgres/0002_instances.sql": "cdf7455b7c325ae2",
    "postgres/0003_scale.sql": "a806101968a285e0",
    "postgres/0004_overlap.sql": "7aaf4b465efee3f5",
    "postgres/0005_team.sql": "8649ad470bbaf29e",
    "postgres/0006_change_feed.sql": "44f6a63f6151d00d",
    "postgres/0007_integrity.sql": "da2b9330a6abc593",
    "postgres/0008_change_counter.sql": "8fee6a973b98461e",
    "postgres/0009_landing.sql": "a3e5181b7e285f58",
    "postgres/0010_case_rule.sql": "ea4aa40cea25e8c2",
    "postgres/0011_notices.sql": "59a7fbff037a101b",
    "postgres/0012_claim_speed.sql": "e3b0c44298fc1c14",
    "postgres/0013_glob_index.sql": "d4645853316c1064",
    "postgres/0014_task_text_trigger.sql": "ab8f0003a9b8e0ab",
    "postgres/0015_stacking.sql": "b4e0497804e46e0a",
    "postgres/0016_land_queue.sql": "b951b86de6a3bb91",
    "postgres/0017_resources.sql": "f01effbc6dcbf1e6",
    "postgres/0018_max_age.sql": "e3180ff69449cfac",
    "sqlite/0001_board.sql": "c5abce3aa385c9ab",
    "sqlite/0002_instances.sql": "20b1ebecf4b5afd2",
    "sqlite/0003_scale.sql": "a806101968a285e0",
    "sqlite/0004_overlap.sql": "e3b0c44298fc1c14",
    "sqlite/0005_team.sql": "e3b0c44298fc1c14",
    "sqlite/0006_change_feed.sql": "e3b0c44298fc1c14",
    "sqlite/0007_integrity.sql": "e3b0c44298fc1c14",
    "sqlite/0008_change_counter.sql": "e3b0c44298fc1c14",
    "sqlite/0009_landing.sql": "6016e9b0bef0489e",
    "sqlite/0010_case_rule.sql": "e3b0c44298fc1c14",
    "sqlite/0011_notices.sql": "a847c82cb25d972b",
    "sqlite/0012_claim_speed.sql": "b4e0497804e46e0a",
    "sqlite/0013_glob_index.sql": "e3b0c44298fc1c14",
    "sqlite/0014_task_text_trigger.sql": "e3b0c44298fc1c14",
    "sqlite/0015_stacking.sql": "e3b0c44298fc1c14",
    "sqlite/0016_land_queue.sql": "c3d04e29957c8a3c",
    "sqlite/0017_resources.sql": "a83a44f8187f0cdf",
    "sqlite/0018_max_age.sql": "ca2f9356977f63f5",
}


def statements(sql: str) -> str:
    """A migration without its whole-line comments: what a board runs."""
    return "\n".join(ln for ln in sql.split("\n") if not ln.lstrip().startswith("--"))


def test_released_migrations_are_unchanged() -> None:
    import hashlib

    for dialect in ("sqlite", "postgres"):
        for _, filename, sql in migrations(dialect):
            key = f"{dialect}/{filename}"
            if key in RELEASED:
                digest = hashlib.sha256(statements(sql).encode()).hexdigest()[:16]
                assert digest == RELEASED[key], f"{key} was released and is edited"
    assert {k for k in RELEASED} <= {
        f"{d}/{f}" for d in ("sqlite", "postgres") for _, f, _ in migrations(d)
    }, "a released migration is gone"


def test_no_schema_sql_any_more() -> None:
    """A fresh board replays the migrations, then functions/: no third copy."""
    assert not list(SQL_DIR.glob("*/schema.sql"))


def _defined(dialect: str, pattern: str) -> set[str]:
    return {
        m.group(1)
        for path in (SQL_DIR / dialect / "functions").glob("*.sql")
        for m in re.finditer(pattern, path.read_text(), re.MULTILINE)
    }


def test_every_postgres_function_lives_in_functions(pg_server: str) -> None:
    with pg_schema(pg_server) as url:
        store = PostgresStore(url)
        store.migrate(create=True)
        on_board = {
            r["proname"]
            for r in store.conn.execute(
                "SELECT proname FROM pg_proc WHERE pronamespace = current_schema()::regnamespace"
            )
        }
        store.close()
    defined = _defined("postgres", r"^CREATE OR REPLACE FUNCTION (\w+)\(")
    assert len(on_board) > 50
    assert on_board == defined, {
        "on the board, not in functions/": sorted(on_board - defined),
        "in functions/, not on the board": sorted(defined - on_board),
    }
    every_create = _defined("postgres", r"^CREATE (?!OR REPLACE)(\w+ \w+)")
    assert every_create == set(), "functions/ is re-applied: only CREATE OR REPLACE there"


def test_every_sqlite_trigger_lives_in_functions(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "b.db")
    store.migrate(create=True)
    on_board = {
        r["name"]
        for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
    }
    assert on_board == {"lac_tasks_claimed", "lac_tasks_free_resources"}
    assert _defined("sqlite", r"^CREATE TRIGGER (\w+)") == on_board
    assert _defined("sqlite", r"^DROP TRIGGER IF EXISTS (\w+);") == on_board


# SECURITY DEFINER by their own definition (functions/change_feed.sql): any
# writer moves the board's change counter, any reader reads it.
CHANGE_FEED_DEFINERS = ("lac_notify_change", "lac_changes_seen")


def test_upgrade_reapplies_functions_and_keeps_team_attributes(pg_server: str) -> None:
    """A board one version behind gets functions/ with its last migration: a
    body changed since (here: lac_now's, damaged by hand) is the current one
    again, and what `team enable` set on a function (SECURITY DEFINER, its
    pinned search_path) survives the CREATE OR REPLACE."""
    latest = latest_version("postgres")
    with pg_schema(pg_server) as url:
        store = PostgresStore(url)
        store.migrate(create=True, upto=latest - 1)
        conn = store.conn
        conn.execute(
            "CREATE OR REPLACE FUNCTION lac_now() RETURNS double precision"
            " LANGUAGE sql STABLE AS $$ SELECT 0::double precision $$"
        )
        row = conn.execute("SELECT current_schema() AS s").fetchone()
        assert row is not None
        board = str(row["s"])
        signature = "lac_api_claim(bigint, text, text, double precision, text)"
        got = conn.execute(
            "SELECT p.oid::regprocedure::text AS sig FROM pg_proc p"
            " WHERE p.proname = 'lac_api_claim' AND pronamespace = current_schema()::regnamespace"
        ).fetchone()
        assert got is not None
        signature = str(got["sig"])
        conn.execute(
            f'ALTER FUNCTION {signature} SECURITY DEFINER SET search_path = "{board}", pg_temp'
        )
        conn.commit()
        assert conn.execute("SELECT lac_now() AS n").fetchone() == {"n": 0}
        assert store.migrate(create=True) == latest
        now = conn.execute("SELECT lac_now() AS n").fetchone()
        assert now is not None and now["n"] > 1e9, "functions/ was not applied"
        attributes = conn.execute(
            "SELECT prosecdef, proconfig FROM pg_proc WHERE oid = %s::regprocedure", (signature,)
        ).fetchone()
        assert attributes == {
            "prosecdef": True,
            "proconfig": [f"search_path={board}, pg_temp"],
        }
        plain = conn.execute(
            "SELECT count(*) AS n FROM pg_proc WHERE pronamespace = current_schema()::regnamespace"
            " AND prosecdef AND proname <> ALL (%s)",
            (list(CHANGE_FEED_DEFINERS),),
        ).fetchone()
        assert plain == {"n": 1}, "only the function team mode changed is SECURITY DEFINER"
        store.close()


def test_a_failing_functions_script_rolls_back_the_last_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """functions/ runs in the last migration's transaction: if it fails, the
    board stays at the version before, and the next open tries again."""
    from git_lacunari.store import base

    latest = latest_version("sqlite")
    store = SqliteStore(tmp_path / "b.db")
    store.migrate(create=True, upto=latest - 1)
    monkeypatch.setattr(base, "functions", lambda d: "SELECT lac_no_such_function();")
    with pytest.raises(Exception, match="lac_no_such_function"):
        store.migrate(create=True)
    assert store.schema_version() == latest - 1
    monkeypatch.undo()
    assert store.migrate(create=True) == latest
    store.close()


def test_task_text_rules_run_when_the_text_is_written(pg_server: str) -> None:
    """0014: the rules on a task's title, body, lane, needs and creator are a
    trigger on those columns, not CHECKs on every UPDATE of the row. Any
    writer of that text is refused as the CHECK refused it (23514, naming
    the rule: the same as before, which the first part shows); a write of
    other columns (a claim) does not run them, which only the trigger does
    (the last part: with the CHECKs the owner's UPDATE was refused)."""
    import psycopg

    from git_lacunari.board import Board
    from git_lacunari.identity import Identity

    with pg_schema(pg_server) as url:
        store = PostgresStore(url)
        store.migrate(create=True)
        task = Board(store, Identity("dana", "h", (), "h")).add_task("fine")
        conn = store.conn
        for column, value, rule in (
            ("title", "bell\x07", "lac_tasks_title_ok"),
            ("title", " ", "lac_tasks_title_ok"),
            ("body", "x" * 1_000_001, "lac_tasks_body_ok"),
            ("lane", "a b", "lac_tasks_lane_ok"),
            ("needs", '["ok", "\u202e"]', "lac_tasks_needs_ok"),
            ("created_by", "", "lac_tasks_creator_ok"),
        ):
            with pytest.raises(psycopg.errors.CheckViolation) as refused:
                conn.execute(f"UPDATE lac_tasks SET {column} = %s WHERE id = %s", (value, task.id))
            assert refused.value.diag.constraint_name == rule
            assert f'violates check constraint "{rule}"' in str(refused.value)
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO lac_tasks (title, created_by, created_at) VALUES (%s, 'dana', 0)",
                ("\x1b[2J",),
            )
        # A row written before the rules (as NOT VALID CHECKs let one stay)
        # is not refused for a write of other columns: the owner's, a claim's.
        conn.execute("ALTER TABLE lac_tasks DISABLE TRIGGER lac_task_text")
        conn.execute("UPDATE lac_tasks SET title = %s WHERE id = %s", ("old\x07", task.id))
        conn.execute("ALTER TABLE lac_tasks ENABLE TRIGGER lac_task_text")
        conn.execute("UPDATE lac_tasks SET owner = 'erin' WHERE id = %s", (task.id,))
        row = conn.execute(
            "SELECT title, owner FROM lac_tasks WHERE id = %s", (task.id,)
        ).fetchone()
        assert row is not None and (row["title"], row["owner"]) == ("old\x07", "erin")
        store.close()


def test_migrate_outwaits_a_busy_board_then_gives_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Busy while migrating (another process migrating the same board, most
    likely) is tried again for MIGRATION_WAIT_S, not one busy timeout; a
    board busy for longer is BoardBusy, as before, with nothing applied."""
    import sqlite3
    import threading

    from git_lacunari.errors import BoardBusy
    from git_lacunari.store import base

    path = tmp_path / "b.db"
    old = SqliteStore(path)
    old.migrate(create=True, upto=latest_version("sqlite") - 1)
    old.close()

    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    store = SqliteStore(path, timeout=0.2)
    monkeypatch.setattr(base, "MIGRATION_WAIT_S", 0.6)
    with pytest.raises(BoardBusy):
        store.migrate(create=True)
    assert store.schema_version() == latest_version("sqlite") - 1

    monkeypatch.setattr(base, "MIGRATION_WAIT_S", 30.0)
    release = threading.Timer(1.0, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        assert store.migrate(create=True) == latest_version("sqlite")
    finally:
        release.join()
        holder.close()
    assert store.schema_version() == latest_version("sqlite")
    store.close()
