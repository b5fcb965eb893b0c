"""Team mode on the real server, with real roles (issue 11).

Every attack here is made as an agent role through plain SQL (psycopg, not
the CLI) and must both be refused and change nothing: the board's rows are
compared, as the administrator sees them, before and after.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from git_lacunari import team
from git_lacunari.errors import CannotWorkHere, InvalidInput, NotPermitted, Refused
from git_lacunari.model import LockMode

from .conftest import backdate_claim, lac_inprocess
from .team_fixtures import Team, team_board

TABLES = ("lac_tasks", "lac_locks", "lac_events", "lac_agents", "lac_settings", "lac_instances")


@pytest.fixture
def crew(pg_server: str) -> Iterator[Team]:
    with team_board(pg_server) as made:
        yield made


def snapshot(crew: Team) -> dict[str, Any]:
    conn = crew.admin_store.conn
    return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in TABLES}


@pytest.fixture
def scene(crew: Team) -> dict[str, Any]:
    """bob holds task #1 with a write lock on src/a.py, and a task-less lock."""
    alice, bob = crew.add("alice"), crew.add("bob")
    board = crew.open(bob)
    task = board.add_task("bob's work", writes=["src/a.py"])
    board.claim(task.id)
    board.lock(["docs/"])
    return {"alice": alice, "bob": bob, "task": task.id, "bob_board": board}


def raw(crew: Team, role: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(crew.url_of(role), autocommit=True)
    conn.execute(f'SET search_path = "{crew.board}"')
    return conn


ATTACKS = {
    "update another's claim": "UPDATE lac_tasks SET owner = '{me}' WHERE id = {task}",
    "update another's lock": "UPDATE lac_locks SET agent = '{me}' WHERE agent = '{bob}'",
    "delete another's lock": "DELETE FROM lac_locks WHERE agent = '{bob}'",
    "insert an event naming another": (
        "INSERT INTO lac_events (task_id, agent, kind) VALUES ({task}, '{bob}', 'done')"
    ),
    "insert a claim naming another": (
        "INSERT INTO lac_tasks (title, state, owner, created_by)"
        " VALUES ('forged', 'claimed', '{bob}', '{bob}')"
    ),
    "update an event": "UPDATE lac_events SET agent = '{me}'",
    "delete an event": "DELETE FROM lac_events",
    "disable row-level security": "ALTER TABLE lac_tasks DISABLE ROW LEVEL SECURITY",
    "no force on row-level security": "ALTER TABLE lac_locks NO FORCE ROW LEVEL SECURITY",
    "drop a policy": "DROP POLICY lac_read ON lac_tasks",
    "truncate": "TRUNCATE lac_events",
    "set role to another agent": 'SET ROLE "{bob}"',
    "turn team mode off": "UPDATE lac_settings SET value = 'off' WHERE name = 'team_mode'",
    "give itself capabilities": "UPDATE lac_agents SET capabilities = '[\"gpu\"]'",
    "replace a write function": (
        "CREATE OR REPLACE FUNCTION lac_actor(p text) RETURNS text LANGUAGE sql AS $$ SELECT p $$"
    ),
    "create a shadowing table": "CREATE TABLE lac_x (x int)",
    # The write functions, called directly with another agent's name.
    "claim in another's name": "SELECT * FROM lac_api_claim({task}, '{bob}', 'i', 60)",
    "release another's claim": "SELECT * FROM lac_api_release({task}, '{bob}')",
    "mark another's task done": "SELECT * FROM lac_api_done({task}, '{bob}', NULL)",
    "heartbeat as another": "SELECT * FROM lac_api_heartbeat('{bob}', NULL, NULL)",
    "event in another's name": (
        "SELECT lac_api_insert_event({task}, '{bob}', 'done', '{{}}'::jsonb)"
    ),
    "unlock another's lock": "SELECT * FROM lac_api_delete_agent_lock('{bob}', '', 'docs/')",
    "force-unlock as a plain agent": "SELECT * FROM lac_api_delete_pattern_locks('docs/')",
    "lock over another's write lock": (
        "SELECT * FROM lac_api_insert_lock('src/', 'zzz/', 'w', '{me}', NULL, NULL, 'i')"
    ),
    "lock on another's task": (
        "SELECT * FROM lac_api_insert_lock('x', '', 'w', '{me}', {task}, NULL, 'i')"
    ),
    "batch lock over another's write lock": (
        "SELECT * FROM lac_api_insert_locks("
        '\'[{{"pattern": "x.py", "key": "x.py", "mode": "w"}},'
        ' {{"pattern": "src/", "key": "zzz/", "mode": "w"}}]\','
        " '{me}', NULL, 'i')"
    ),
    "batch lock on another's task": (
        "SELECT * FROM lac_api_insert_locks("
        '\'[{{"pattern": "x", "key": "", "mode": "w"}}]\', \'{me}\', {task}, \'i\')'
    ),
    "batch lock in another's name": (
        "SELECT * FROM lac_api_insert_locks("
        '\'[{{"pattern": "y", "key": "", "mode": "w"}}]\', \'{bob}\', NULL, \'i\')'
    ),
    "expire another's live claim": (
        "SELECT * FROM lac_api_expire('open', {task}, '{bob}',"
        " (SELECT heartbeat_at FROM lac_tasks WHERE id = {task}))"
    ),
    "free another's task locks": "SELECT * FROM lac_api_delete_task_locks({task})",
    "drop another's task path": "SELECT * FROM lac_api_delete_task_path({task}, 'src/a.py')",
    "turn team mode off by the API": "SELECT lac_api_set_setting('team_mode', 'off')",
    "set the board's stale-after": "SELECT lac_api_set_setting('stale_after', '1')",
    "take over another's claim": "SELECT * FROM lac_api_take_over({task}, '{bob}', 'i')",
    "cancel another's claim": "SELECT * FROM lac_api_cancel({task}, '{bob}', '')",
}


@pytest.mark.parametrize("attack", list(ATTACKS), ids=list(ATTACKS))
def test_an_agent_role_cannot_change_another_agents_work(
    crew: Team, scene: dict[str, Any], attack: str
) -> None:
    before = snapshot(crew)
    sql = ATTACKS[attack].format(me=scene["alice"], bob=scene["bob"], task=scene["task"])
    with raw(crew, scene["alice"]) as conn, pytest.raises(psycopg.Error) as caught:
        conn.execute(sql).fetchall()
    # insufficient_privilege, or the lock-grant function's conflict: never a
    # typo's error (an undefined table or function would pass for a refusal)
    expected = "LAC01" if "lock over another's write lock" in attack else "42501"
    assert caught.value.sqlstate == expected, caught.value
    assert snapshot(crew) == before, f"{attack} changed the board"


def test_a_hostile_search_path_does_not_reach_the_write_functions(
    crew: Team, scene: dict[str, Any]
) -> None:
    """A temporary table named like a board table, first on the path: the
    functions' pinned search_path (board, then pg_temp) never sees it."""
    before = snapshot(crew)
    with raw(crew, scene["alice"]) as conn:
        conn.execute("CREATE TEMP TABLE lac_settings (name text, value text)")
        conn.execute("INSERT INTO lac_settings VALUES ('team_mode', 'off')")
        conn.execute(f'SET search_path = pg_temp, "{crew.board}"')
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f"SELECT * FROM lac_api_release({scene['task']}, '{scene['bob']}')")
    assert snapshot(crew) == before


def test_capabilities_given_through_the_api_are_ignored(crew: Team, scene: dict[str, Any]) -> None:
    with raw(crew, scene["alice"]) as conn:
        conn.execute(f"SELECT lac_api_upsert_agent('{scene['alice']}', '[\"gpu\"]'::jsonb)")
    row = crew.admin_store.conn.execute(
        "SELECT capabilities FROM lac_agents WHERE name = %s", (scene["alice"],)
    ).fetchone()
    assert row is not None and row["capabilities"] == []


def test_an_instance_of_another_agent_is_not_taken_over(crew: Team, scene: dict[str, Any]) -> None:
    with raw(crew, scene["bob"]) as conn:
        conn.execute(f"SELECT lac_api_upsert_instance('bobs-place', '{scene['bob']}', 'h', '/p')")
    with raw(crew, scene["alice"]) as conn:
        conn.execute(f"SELECT lac_api_upsert_instance('bobs-place', '{scene['alice']}', 'x', '/x')")
    row = crew.admin_store.conn.execute(
        "SELECT agent, host FROM lac_instances WHERE id = 'bobs-place'"
    ).fetchone()
    assert row == {"agent": scene["bob"], "host": "h"}


def test_the_write_functions_are_definer_functions_owned_by_no_superuser(crew: Team) -> None:
    rows = crew.admin_store.conn.execute(
        "SELECT p.proname, p.prosecdef, p.proconfig, r.rolname, r.rolsuper, r.rolcanlogin"
        " FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner"
        " WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'lac_api_%'"
    ).fetchall()
    assert len(rows) > 25
    names = team.role_names(crew.board)
    for row in rows:
        assert row["prosecdef"], row
        assert row["proconfig"] == [f"search_path={crew.board}, pg_temp"], row
        assert row["rolname"] == names["owner"] and not row["rolsuper"] and not row["rolcanlogin"]
    forced = crew.admin_store.conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace"
        " AND relkind = 'r' AND NOT (relrowsecurity AND relforcerowsecurity)"
    ).fetchall()
    assert forced == []


def test_the_board_works_for_agents_in_team_mode(crew: Team, repo: Path) -> None:
    alice, bob = crew.add("alice", caps=["py"]), crew.add("bob")
    a, b = crew.open(alice, repo), crew.open(bob, repo)
    assert a.identity.capabilities == ("py",)
    t1 = a.add_task("needs py", needs=["py"], writes=["src/"])
    t2 = a.add_task("plain")
    with pytest.raises(Refused) as refused:
        b.claim(t1.id)
    assert refused.value.reason == "missing_capability"
    claim = a.claim(t1.id)
    assert [lk.pattern for lk in claim.locks] == ["src/"]
    with pytest.raises(Refused) as held:
        b.lock(["src/x.py"])
    assert held.value.reason == "path_locked"
    assert b.claim_next().task.id == t2.id
    b.heartbeat([t2.id])
    b.done(t2.id)
    a.done(t1.id)
    assert [e.agent for e in a.log(t1.id)] == [alice, alice, alice, alice]
    a.store.close()
    b.store.close()


def test_the_keeper_expires_a_stale_claim_and_a_plain_agent_does_not(crew: Team) -> None:
    alice, bob, keeper = crew.add("alice"), crew.add("bob"), crew.add("keeper", kind="keeper")
    b = crew.open(bob)
    task = b.add_task("will go silent", writes=["src/a.py"])
    b.claim(task.id, stale_after=60)
    backdate_claim(crew.admin_store, task.id, 3600)
    a = crew.open(alice)
    assert a.sweep() == []  # a plain agent sweeps only its own
    assert a.show(task.id).owner == bob
    with pytest.raises(NotPermitted):
        beat = a.show(task.id).heartbeat_at
        a.store.one("expire", state="open", task_id=task.id, owner=bob, heartbeat_at=beat)
    k = crew.open(keeper)
    beat = k.show(task.id).heartbeat_at
    with pytest.raises(NotPermitted):  # a keeper returns a claim to the board, nothing else
        k.store.one("expire", state="done", task_id=task.id, owner=bob, heartbeat_at=beat)
    assert k.show(task.id).owner == bob
    expired = k.sweep()
    assert [f["task"] for f in expired] == [task.id]
    assert k.show(task.id).state == "open" and k.locks() == []
    event = k.log(task.id)[-1]
    assert (event.kind, event.agent, event.detail["previous_owner"]) == ("expired", keeper, bob)


def test_the_keeper_cannot_expire_a_live_claim(crew: Team) -> None:
    bob, keeper = crew.add("bob"), crew.add("keeper", kind="keeper")
    b = crew.open(bob)
    task = b.add_task("alive")
    b.claim(task.id, stale_after=3600)
    k = crew.open(keeper)
    beat = k.show(task.id).heartbeat_at
    assert (
        k.store.one("expire", state="open", task_id=task.id, owner=bob, heartbeat_at=beat) is None
    )
    assert k.show(task.id).owner == bob


@pytest.mark.parametrize("stale", [-1e9, 0.0, None, 1.0, float("nan"), float("-inf")])
def test_the_keeper_cannot_expire_a_live_agents_lock_by_naming_a_short_stale(
    crew: Team, stale: float | None
) -> None:
    """The function judges staleness by the board's stale-after, never by the
    period the caller passes (a keeper's own `stale` could be anything); a
    period that is no duration (not finite, not above 0) is refused."""
    bob, keeper = crew.add("bob"), crew.add("keeper", kind="keeper")
    b = crew.open(bob)
    b.lock(["docs/"])
    b.seen()
    k = crew.open(keeper)
    (lock,) = k.locks()
    if stale is not None and not 0 < stale < 1e9:
        with pytest.raises(InvalidInput, match="not a duration"), k.store.write():
            k.store.all("silent_agent_locks", stale=stale)
        with pytest.raises(InvalidInput, match="not a duration"), k.store.write():
            k.store.all("expire_lock", lock_id=lock.id, stale=stale)
    else:
        with k.store.write():
            assert k.store.all("silent_agent_locks", stale=stale) == []
            assert k.store.one("expire_lock", lock_id=lock.id, stale=stale) is None
    assert [lk.pattern for lk in k.locks()] == ["docs/"]
    assert k.sweep_locks(stale_after=1) == []
    assert [lk.pattern for lk in k.locks()] == ["docs/"]


def test_force_release_is_for_an_admin_only(crew: Team) -> None:
    bob, keeper, boss = (
        crew.add("bob"),
        crew.add("keeper", kind="keeper"),
        crew.add("boss", kind="admin"),
    )
    b = crew.open(bob)
    task = b.add_task("held", writes=["src/"])
    b.claim(task.id)
    b.lock(["docs/"])
    for role in (crew.add("alice"), keeper):
        other = crew.open(role)
        with pytest.raises(NotPermitted):
            other.release(task.id, force=True, reason="mine now")
        with pytest.raises(NotPermitted):
            other.force_unlock(["docs/"], reason="mine now")
    admin = crew.open(boss)
    released = admin.release(task.id, force=True, reason="bob is away")
    assert released.state == "open"
    event = admin.log(task.id)[-1]
    assert (event.kind, event.agent, event.detail["previous_owner"]) == (
        "force_released",
        boss,
        bob,
    )
    assert [lk.agent for lk in admin.force_unlock(["docs/"], reason="bob is away")] == [bob]


def test_a_forged_index_key_does_not_hide_a_lock(crew: Team) -> None:
    """The lock-grant function compares patterns, not the caller's key."""
    alice, bob = crew.add("alice"), crew.add("bob")
    with raw(crew, bob) as conn:
        conn.execute(
            "SELECT * FROM lac_api_insert_lock('src/a.py', 'elsewhere/', 'w',"
            f" '{bob}', NULL, NULL, '')"
        )
    a = crew.open(alice)
    stored = crew.admin_store.conn.execute("SELECT agent, key FROM lac_locks").fetchall()
    assert stored == [{"agent": bob, "key": "src/"}]  # computed in the database, not taken
    with pytest.raises(Refused) as refused:
        a.lock(["src/"], mode=LockMode.READ)
    assert refused.value.reason == "path_locked"
    assert refused.value.facts["holder"] == bob
    # The database's own check, met by a caller that skipped the board's:
    with pytest.raises(Refused) as in_db:
        a.store.one(
            "insert_lock",
            pattern="src/**",
            key="",
            mode="r",
            agent=alice,
            task_id=None,
            base_blob=None,
            instance="",
        )
    assert in_db.value.to_json() == {
        "reason": "path_locked",
        "path": "src/**",
        "wanted": "read",
        "holder": bob,
        "task": None,
        "pattern": "src/a.py",
        "mode": "write",
        "conflicts": [
            {
                "path": "src/**",
                "wanted": "read",
                "holder": bob,
                "task": None,
                "pattern": "src/a.py",
                "mode": "write",
                "heartbeat_at": None,
            }
        ],
    }
    assert [lk.agent for lk in a.locks()] == [bob]


def test_team_admin_needs_a_role_that_may_create_roles(crew: Team) -> None:
    alice = crew.add("alice")
    with pytest.raises(CannotWorkHere, match="may create roles"):
        team.add(crew.store(alice), crew.name("mallory"))


def test_enable_is_idempotent_and_covers_new_tables(crew: Team) -> None:
    conn = crew.admin_store.conn
    conn.execute("CREATE TABLE lac_later (x int)")  # as a later migration would
    again = team.enable(crew.admin_store)
    assert again["created"] == []
    row = conn.execute(
        "SELECT relrowsecurity AND relforcerowsecurity AS on FROM pg_class"
        " WHERE oid = 'lac_later'::regclass"
    ).fetchone()
    assert row == {"on": True}


def test_remove_releases_claims_frees_locks_and_drops_the_role(crew: Team) -> None:
    bob = crew.add("bob")
    b = crew.open(bob)
    task = b.add_task("bob's", writes=["src/"])
    b.claim(task.id)
    b.lock(["docs/"])
    b.store.close()
    gone = team.remove(crew.admin_store, bob)
    assert gone == {"role": bob, "released": [task.id], "locks": ["docs/", "src/"], "dropped": True}
    conn = crew.admin_store.conn
    assert conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (bob,)).fetchone() is None
    assert conn.execute("SELECT count(*) AS n FROM lac_locks").fetchone() == {"n": 0}
    event = conn.execute("SELECT kind, detail FROM lac_events ORDER BY id DESC LIMIT 1").fetchone()
    assert event is not None and event["kind"] == "team_removed"
    assert event["detail"]["released"] == [task.id]


def test_role_names_stay_within_63_bytes() -> None:
    short = team.role_names("proj")
    assert short["agent"] == "lac_proj_agent" and short["keeper"] == "lac_proj_keeper"
    long = team.role_names("p" * 63)
    assert all(len(n) <= 63 for n in long.values())
    assert long == team.role_names("p" * 63)  # stable
    assert long["agent"] != team.role_names("q" * 63)["agent"]


def test_odd_role_names_are_refused(crew: Team) -> None:
    from git_lacunari.errors import InvalidInput

    for bad in ("", "a b", "-x", "pg_evil", "x" * 64, 'a"b', team.role_names(crew.board)["admin"]):
        with pytest.raises(InvalidInput):
            team.add(crew.admin_store, bad)


# --- the command line ------------------------------------------------------------


def _init(repo: Path, url: str) -> None:
    result = lac_inprocess(repo, "init", "--url", url)
    assert result.code == 0, result.err


def test_cli_as_someone_else_is_refused(crew: Team, repo: Path) -> None:
    alice = crew.add("alice")
    _init(repo, crew.url_of(alice))
    assert lac_inprocess(repo, "task", "add", "t").code == 0
    before = snapshot(crew)
    for args, env in (
        (["--as", "bob", "claim", "1"], {}),
        (["claim", "1"], {"LAC_AGENT": "bob"}),
    ):
        result = lac_inprocess(repo, "--json", *args, env=env)
        assert result.code == 2, result
        assert json.loads(result.out)["error"]["message"].startswith("team mode:")
        assert len(result.err.strip().splitlines()) == 1
    assert snapshot(crew) == before
    who = lac_inprocess(repo, "--json", "whoami", env={"LAC_CAPS": "gpu"})
    assert who.code == 0, who.err
    assert (who.json["agent"], who.json["capabilities"]) == (alice, [])
    assert "team mode" in who.json["source"]
    same = lac_inprocess(repo, "--as", alice, "claim", "1")
    assert same.code == 0, same.err


def test_text_an_agent_writes_through_the_api_cannot_drive_anothers_terminal(
    crew: Team, repo: Path
) -> None:
    """A title, lane or pattern with control characters is refused by the
    database itself (0007), past the command line's checks; what it does
    take as the caller gives it (a body, the prose of an event's detail) is
    shown escaped in everyone else's human output."""
    alice, bob = crew.add("alice"), crew.add("bob")
    _init(repo, crew.url_of(alice))
    esc = "\x1b]0;pwned\x07\x1b[2J"
    with raw(crew, bob) as conn:
        for sql, args in (
            ("SELECT lac_api_insert_task(%s, '', 'l', 0, '[]', NULL)", ("t" + esc,)),
            ("SELECT lac_api_insert_task('t', '', %s, 0, '[]', NULL)", ("lane" + esc,)),
            (
                "SELECT * FROM lac_api_insert_lock(%s, 'x', 'r', NULL, NULL, NULL, 'i')",
                ("p" + esc,),
            ),
        ):
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute(sql, args)
        with conn.transaction():
            row = conn.execute(
                "SELECT lac_api_insert_task(%s, %s, %s, 0, '[]', NULL)",
                ("t", "body" + esc, "lane"),
            ).fetchone()
            assert row is not None
            task = str(row[0])  # the refused inserts took ids of the sequence
            conn.execute(
                "SELECT lac_api_insert_event(%s, NULL, 'created', %s)",
                (row[0], json.dumps({esc: 1})),
            )
            conn.execute("SELECT * FROM lac_api_insert_lock('p', 'x', 'r', NULL, NULL, NULL, 'i')")
    claimed = lac_inprocess(repo, "claim", task)
    assert claimed.code == 0, claimed.err
    listings: list[list[str]] = [
        ["tasks"],
        ["show", task],
        ["locks"],
        ["log", task],
        ["status"],
        ["ready"],
    ]
    for argv in listings:
        result = lac_inprocess(repo, *argv)
        assert result.code == 0, (argv, result.err)
        assert "\x1b" not in result.out + result.err, (argv, result.out)
        # the body (show) and the event's prose (log) carry it, shown escaped
        assert "\\x1b" in result.out or argv[0] not in ("show", "log"), (argv, result.out)


def test_malformed_values_an_agent_passes_to_the_api_break_no_one_elses_listing(
    crew: Team, repo: Path
) -> None:
    """needs that are not a list of names, an event detail that is not an
    object, an event kind the code does not know: each write is refused, or
    shown; never a traceback in another agent's `tasks`, `show`, `log`."""
    alice, bob = crew.add("alice"), crew.add("bob")
    _init(repo, crew.url_of(alice))
    assert lac_inprocess(repo, "task", "add", "mine").code == 0
    writes = [
        ("SELECT lac_api_insert_task('n', '', 'default', 0, %s, NULL)", ("5",)),
        ("SELECT lac_api_insert_task('n', '', 'default', 0, %s, NULL)", ('{"a": 1}',)),
        ("SELECT lac_api_insert_task('n', '', 'default', 0, %s, NULL)", ("[1, null]",)),
        ("SELECT lac_api_edit_task(1, NULL, NULL, 't', '', 'default', 0, %s)", ("7",)),
        ("SELECT lac_api_insert_event(1, NULL, 'unlocked', %s)", ("[1]",)),
        ("SELECT lac_api_insert_event(1, NULL, 'unlocked', %s)", ('"x"',)),
        ("SELECT lac_api_insert_event(1, NULL, %s, '{}')", ("no_such_kind",)),
    ]
    with raw(crew, bob) as conn:
        for sql, args in writes:
            with pytest.raises(psycopg.Error):  # each refused by the database itself
                conn.execute(sql, args)
    listings = [["tasks"], ["show", "1"], ["log"], ["log", "1"], ["ready"], ["status"]]
    for n in range(2, 5):
        listings.append(["show", str(n)])
    for argv in listings:
        for form in ([], ["--json"]):
            result = lac_inprocess(repo, *form, *argv)
            assert result.code in (0, 1), (argv, result.err)
            assert "Traceback" not in result.err, (argv, result.err)
            if form:
                assert isinstance(json.loads(result.out), dict)
    log = lac_inprocess(repo, "log", "1")
    assert "no_such_kind" not in log.out and log.out.count("\n") == 1, log.out


def test_cli_team_commands(crew: Team, repo: Path) -> None:
    _init(repo, crew.url)
    made = lac_inprocess(repo, "--json", "team", "add", crew.name("carol"), "--caps", "py,gpu")
    assert made.code == 0, made.err
    crew.roles.append(crew.name("carol"))
    assert made.json["password"] and made.json["capabilities"] == ["gpu", "py"]
    config = (repo / ".git" / "config").read_text()
    assert made.json["password"] not in config
    listed = lac_inprocess(repo, "--json", "team", "list")
    assert [(m["role"], m["kinds"]) for m in listed.json["members"]] == [
        (crew.name("carol"), ["agent"])
    ]
    plain = lac_inprocess(
        repo, "--json", "team", "add", crew.name("kim"), "--keeper", "--no-password"
    )
    crew.roles.append(crew.name("kim"))
    assert plain.code == 0 and plain.json["password"] is None
    again = lac_inprocess(repo, "--json", "team", "enable")
    assert again.code == 0, again.err
    gone = lac_inprocess(repo, "--json", "team", "remove", crew.name("carol"))
    assert gone.code == 0 and gone.json["dropped"] is True
    assert lac_inprocess(repo, "team", "remove", "no_such_role_x").code == 2


def test_cli_a_plain_agent_cannot_force_release(crew: Team, repo: Path) -> None:
    alice, bob = crew.add("alice"), crew.add("bob")
    b = crew.open(bob)
    task = b.add_task("bob's")
    b.claim(task.id)
    _init(repo, crew.url_of(alice))
    result = lac_inprocess(repo, "--json", "release", str(task.id), "--force", "--reason", "x")
    assert result.code == 1, result
    assert result.json["refused"]["reason"] == "not_permitted"
    assert b.show(task.id).owner == bob


def test_an_agent_joins_a_team_board_with_init_board(crew: Team, repo: Path) -> None:
    """An agent may not create schemas: its init on the existing board creates none."""
    alice = crew.add("alice")
    url = crew.url_of(alice).split("?", 1)[0]  # no search_path of its own: --board chooses
    result = lac_inprocess(repo, "--json", "init", "--url", url, "--board", crew.board)
    assert result.code == 0, result.err
    assert result.json["board"] == crew.board
    who = lac_inprocess(repo, "--json", "whoami")
    assert who.json["agent"] == alice
    other = lac_inprocess(repo, "init", "--url", url, "--board", "lac_not_there")
    assert other.code == 1 and "permission denied" in other.err


def test_a_role_that_may_create_roles_or_is_the_owner_cannot_join_a_team(crew: Team) -> None:
    """A CREATEROLE role grants itself any non-superuser role (the board's
    admin group, its owner): it cannot be held to team mode's rules."""
    from git_lacunari.errors import InvalidInput

    conn = crew.admin_store.conn
    maker, owned = crew.name("maker"), crew.name("owned")
    crew.roles += [maker, owned]
    conn.execute(f'CREATE ROLE "{maker}" LOGIN CREATEROLE')
    conn.execute(f'CREATE ROLE "{owned}" LOGIN')
    conn.execute(f'GRANT "{team.role_names(crew.board)["owner"]}" TO "{owned}"')
    conn.commit()
    before = snapshot(crew)
    for role in (maker, owned):
        with pytest.raises(InvalidInput, match="cannot be held to team mode"):
            team.add(crew.admin_store, role)
    assert snapshot(crew) == before
    groups = set(team.role_names(crew.board).values()) - {team.role_names(crew.board)["owner"]}
    held = conn.execute(
        "SELECT g.rolname FROM pg_auth_members am JOIN pg_roles g ON g.oid = am.roleid"
        " JOIN pg_roles m ON m.oid = am.member WHERE m.rolname = %s",
        (maker,),
    ).fetchall()
    assert not groups & {r["rolname"] for r in held}


def test_a_superuser_cannot_join_a_team_and_an_existing_role_keeps_its_password(
    crew: Team,
) -> None:
    from git_lacunari.errors import InvalidInput

    with pytest.raises(InvalidInput, match="superuser"):
        team.add(crew.admin_store, "postgres")
    role = crew.add("carol")
    again = team.add(crew.admin_store, role, caps=("gpu",), kind="keeper")
    assert (again["created"], again["password"], again["capabilities"]) == (False, None, ["gpu"])
    kinds = {m["role"]: m["kinds"] for m in team.members(crew.admin_store)}
    assert kinds[role] == ["agent", "keeper"]


def test_the_holder_reads_its_take_over_notices_on_a_team_board(crew: Team) -> None:
    """Issue 22: an admin's force actions reach the holder's notices through
    the team roles' own reads of the events; another role has none."""
    bob, boss, alice = crew.add("bob"), crew.add("boss", kind="admin"), crew.add("alice")
    b = crew.open(bob)
    task = b.add_task("held", writes=["src/"])
    b.claim(task.id)
    b.lock(["docs/"])
    admin = crew.open(boss)
    admin.release(task.id, force=True, reason="bob is away")
    admin.force_unlock(["docs/"], reason="hotfix")
    told = b.notices()
    assert [(n.kind, n.by, n.task, n.patterns, n.reason) for n in told] == [
        ("force_released", boss, task.id, ("src/",), "bob is away"),
        ("force_unlocked", boss, None, ("docs/",), "hotfix"),
    ]
    assert b.released_from_us(task.id) is not None
    assert crew.open(alice).notices() == []


def test_a_landing_lock_is_waived_only_for_the_tip_a_grant_names(crew: Team) -> None:
    """Stacking in team mode (issue 25): the database cannot see commits, so
    it waives a landing claim's lock only for a wanted lock naming that
    claim's current tip in ``built_on`` (the guards check ancestry). Any
    other tip, a claim in work, or a landing claim with no tip refuses, and
    nothing is written."""
    alice, bob = crew.add("alice"), crew.add("bob")
    b = crew.open(bob)
    landing = b.add_task("bob's landing", writes=["core/auth.py"])
    working = b.add_task("bob's work", writes=["core/cookies.py"])
    b.claim(landing.id)
    b.claim(working.id)
    tip = "a" * 40
    b.land(landing.id, branch="fix-login", tip=tip)
    a = crew.open(alice)
    mine = a.add_task("alice's", writes=["docs/"])
    a.claim(mine.id)

    def insert(path: str, built_on: list[dict[str, Any]], task: int | None = mine.id) -> None:
        wanted = [{"pattern": path, "key": path, "mode": "w", "built_on": built_on}]
        with raw(crew, alice) as conn:
            conn.execute(
                "SELECT * FROM lac_api_insert_locks(%s, %s, %s, 'i')",
                (json.dumps(wanted), alice, task),
            )

    refusals: dict[str, tuple[str, list[dict[str, Any]]]] = {
        "another tip": ("core/auth.py", [{"task": landing.id, "tip": "b" * 40}]),
        "another task": ("core/auth.py", [{"task": working.id, "tip": tip}]),
        "no line": ("core/auth.py", []),
        "a claim in work": ("core/cookies.py", [{"task": working.id, "tip": None}]),
    }
    before = snapshot(crew)
    for name, (path, built_on) in refusals.items():
        with pytest.raises(psycopg.Error) as refused:
            insert(path, built_on)
        assert "core/" in str(refused.value), name
    # The right line, but on no task: a task-less lock builds on nothing.
    with pytest.raises(psycopg.Error) as refused:
        insert("core/auth.py", [{"task": landing.id, "tip": tip}], None)
    assert "core/auth.py" in str(refused.value)
    assert snapshot(crew) == before
    insert("core/auth.py", [{"task": landing.id, "tip": tip}])
    held = crew.admin_store.conn.execute(
        "SELECT agent FROM lac_locks WHERE pattern = 'core/auth.py' ORDER BY agent"
    ).fetchall()
    assert [r["agent"] for r in held] == sorted([alice, bob])
    # A landing claim whose tip is gone (set so by the administrator) names
    # no commit: a line naming a null tip is not built on it.
    crew.admin_store.conn.execute("DELETE FROM lac_locks WHERE agent = %s", (alice,))
    crew.admin_store.conn.execute("UPDATE lac_tasks SET tip = NULL WHERE id = %s", (landing.id,))
    with pytest.raises(psycopg.Error):
        insert("core/auth.py", [{"task": landing.id, "tip": None}])


def test_the_servers_post_receive_settles_a_landing_as_its_keeper_role(
    crew: Team, tmp_path: Path
) -> None:
    """A team board's server hooks connect as a keeper role (README): the
    post-receive settles bob's landing claim as that role, not as the
    pusher (which team mode would refuse: the session acts only as itself)."""
    from .conftest import git, lac_process

    bob, keeper = crew.add("bob"), crew.add("srv", kind="keeper")
    server, clone = tmp_path / "server.git", tmp_path / "clone"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(server))
    git(tmp_path, "clone", "-q", str(server), str(clone))
    git(clone, "commit", "-q", "--allow-empty", "-m", "start")
    git(clone, "push", "-q", "origin", "HEAD:main")
    assert lac_process(server, "hooks", "install", "--server").code == 0
    git(server, "config", "lac.url", crew.url_of(keeper))
    (clone / "core").mkdir()
    (clone / "core" / "auth.py").write_text("bob's\n")
    git(clone, "add", "core/auth.py")
    git(clone, "commit", "-q", "-m", "bob's fix")
    tip = git(clone, "rev-parse", "HEAD").strip()
    b = crew.open(bob)
    task = b.add_task("auth", writes=["core/auth.py"])
    b.claim(task.id)
    b.land(task.id, branch="feat", tip=tip)
    pushed = subprocess.run(
        ["git", "push", "origin", "HEAD:main"], cwd=clone, capture_output=True, text=True
    )
    assert pushed.returncode == 0, pushed.stderr
    assert f"task #{task.id} landed (merged)" in pushed.stderr, pushed.stderr
    row = crew.admin_store.conn.execute(
        "SELECT state FROM lac_tasks WHERE id = %s", (task.id,)
    ).fetchone()
    assert row is not None and row["state"] == "done", row
    held = crew.admin_store.conn.execute("SELECT count(*) AS n FROM lac_locks").fetchone()
    assert held is not None and held["n"] == 0


def test_a_team_add_refusal_names_the_membership_chain(crew: Team, repo: Path) -> None:
    """alice is in the board's admin group through devs, then leads: adding her
    is refused naming that chain (a direct grant beside it would make `team
    remove` a lie). A role the board's agent group is a member of would make
    a cycle: refused naming that chain. Nothing is granted either way."""
    from git_lacunari.errors import InvalidInput

    names = team.role_names(crew.board)
    conn = crew.admin_store.conn
    alice, devs, leads, hub = (crew.name(n) for n in ("alice", "devs", "leads", "hub"))
    crew.roles += [alice, devs, leads, hub]
    conn.execute(f'CREATE ROLE "{alice}" LOGIN')
    conn.execute(f'CREATE ROLE "{devs}" NOLOGIN')
    conn.execute(f'CREATE ROLE "{leads}" NOLOGIN')
    conn.execute(f'CREATE ROLE "{hub}" NOLOGIN')
    conn.execute(f'GRANT "{devs}" TO "{alice}"')
    conn.execute(f'GRANT "{leads}" TO "{devs}"')
    conn.execute(f'GRANT "{names["admin"]}" TO "{leads}"')
    conn.execute(f'GRANT "{hub}" TO "{names["agent"]}"')
    conn.commit()
    _init(repo, crew.url)
    before = snapshot(crew)

    def memberships(role: str) -> set[str]:
        rows = conn.execute(
            "SELECT g.rolname FROM pg_auth_members am JOIN pg_roles g ON g.oid = am.roleid"
            " JOIN pg_roles m ON m.oid = am.member WHERE m.rolname = %s",
            (role,),
        ).fetchall()
        return {r["rolname"] for r in rows}

    said = f"{alice} is already a member of {names['admin']} through {devs}, then {leads}"
    with pytest.raises(InvalidInput, match=f"^{re.escape(said)}: "):
        team.add(crew.admin_store, alice)
    with pytest.raises(InvalidInput, match=f"^{re.escape(names['agent'])} is a member of {hub}: "):
        team.add(crew.admin_store, hub)
    # Through the CLI: one line, exit 2, the chain named.
    cli = lac_inprocess(repo, "team", "add", alice, "--no-password")
    assert cli.code == 2 and cli.err.splitlines()[0].startswith(f"git lac: {said}: "), cli.err
    assert len(cli.err.strip().splitlines()) == 1, cli.err
    # Two steps down: hub is in the agent group's own member, not only directly.
    conn.execute(f'REVOKE "{hub}" FROM "{names["agent"]}"')
    conn.execute(f'GRANT "{hub}" TO "{devs}"')
    conn.execute(f'REVOKE "{names["admin"]}" FROM "{leads}"')
    conn.execute(f'GRANT "{devs}" TO "{names["keeper"]}"')
    conn.commit()
    cycle = f"{names['keeper']} is a member of {hub} through {devs}: "
    with pytest.raises(InvalidInput, match=f"^{re.escape(cycle)}"):
        team.add(crew.admin_store, hub)
    assert memberships(alice) == {devs} and memberships(hub) == set()
    assert snapshot(crew) == before
    # Re-adding a role the board made an admin (an admin is a keeper) is no chain.
    carol = crew.add("carol", kind="admin")
    again = team.add(crew.admin_store, carol, kind="admin")
    assert again["created"] is False
