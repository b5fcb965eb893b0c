"""Named resource pools, on both backends (and PostgreSQL's team mode):
values granted in the claim's transaction or the claim refused whole,
freed by every way a claim ends, refused input that writes nothing, and
the environment a claim's values make."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from git_lacunari.board import Board
from git_lacunari.errors import InvalidInput, Refused
from git_lacunari.model import ResourceValue
from git_lacunari.pools import POOL_CAP, parse_need, parse_values, resource_env

from .conftest import Boards, Result, git, lac_inprocess, lac_process, pg_schema
from .test_races import FORK, TEAM, _guarded, open_board, run_workers

# --- the environment a claim's values make (a pure function) ----------------------


def test_one_value_is_its_pool_in_capitals() -> None:
    assert resource_env([ResourceValue("port", "8101")]) == {"LAC_PORT": "8101"}


def test_several_values_are_numbered_and_the_first_is_the_pool() -> None:
    env = resource_env([("port", "8101"), ("port", "8103"), ("db", "app_2")])
    assert env == {
        "LAC_PORT": "8101",
        "LAC_PORT_0": "8101",
        "LAC_PORT_1": "8103",
        "LAC_DB": "app_2",
    }
    assert resource_env([]) == {}


def test_values_are_returned_unquoted_for_the_caller_to_quote() -> None:
    assert resource_env([("db", "it's")]) == {"LAC_DB": "it's"}


def test_a_range_is_its_integers_in_order_and_strings_are_kept_in_order() -> None:
    assert parse_values(["8100-8102", "8101", "x"]) == ["8100", "8101", "8102", "x"]
    assert parse_values(["b", "a", "b"]) == ["b", "a"]
    assert parse_need("port") == ("port", 1) and parse_need("db:3") == ("db", 3)


@pytest.mark.parametrize(
    "bad",
    [["5-1"], [f"1-{POOL_CAP + 1}"], ["0-99999999999999"], ["a b"], ["x\x1b[2J"], []],
)
def test_values_that_are_not_refused_in_one_line(bad: list[str]) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_values(bad)
    assert "\n" not in refused.value.message


# --- the command line: add, list, remove, and what it refuses -----------------------


def _state(lac: Any) -> tuple[Any, int]:
    pools = lac("resource", "list", "--json").json["pools"]
    events = len(lac("log", "--json", "--limit", "0").json["events"])
    return pools, events


@pytest.mark.parametrize(
    "args",
    [
        ["resource", "add", "Port", "8100"],  # not lower case: not LAC_<NAME> as written
        ["resource", "add", "port-a", "8100"],  # not a shell identifier
        ["resource", "add", "port_0", "8100"],  # LAC_PORT_0 is the pool port's first value
        ["resource", "add", "task_id", "1"],  # LAC_TASK_ID is git-lacunari's own
        ["resource", "add", "port", "8105-8100"],
        ["resource", "add", "port", "1-1000000"],  # the cap, refused before any value is made
        ["resource", "add", "port", "a\u202eb"],
        ["resource", "add", "port", "8100-8109", "9000-19000"],  # the cap, across two ranges
        ["resource", "remove", "port", "9999"],  # not in the pool
        ["resource", "remove", "nope"],
        ["resource", "list", "nope"],
        ["task", "add", "t", "--needs-resource", "nope"],  # no such pool
        ["task", "add", "t", "--needs-resource", "port:0"],
        ["task", "add", "t", "--needs-resource", "port:x"],
        ["task", "add", "t", "--needs-resource", "port:6"],  # more than the pool holds
        ["claim", "1", "--resource", "nope"],
        ["claim", "1", "--resource", "port:"],
        ["claim", "--next", "--resource", "port"],  # a task's own needs go with --next
        ["resource", "add", "port", "08-10"],  # would make 8 9 10, never the 08 written
        ["resource", "add", "port", "0001-0002"],
        ["resource", "add", "port", "9" * 19 + "-" + "9" * 19],  # a range, not a string
        ["resource", "add", "port", "x" * 10_000],
        ["resource", "add", "port", "-3-5"],  # an option to click: it says to use --
        ["resource", "remove", "port", "-5"],
        ["resource", "add", "test_stop_at", "x"],  # LAC_TEST_STOP_AT stops a process
        ["resource", "add", "test_lander_crash", "before-update-ref"],  # kills a lander
        ["task", "add", "t", "--needs-resource", "port:1000000"],
        ["task", "add", "t", "--needs-resource", "port:" + "9" * 5000],  # past int()'s digits
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(lac: Any, args: list[str]) -> None:
    assert lac("resource", "add", "port", "8100-8104").code == 0
    assert lac("task", "add", "plain").code == 0
    before = _state(lac)
    got = lac(*args)
    assert got.code == 2, got
    said = [x for x in got.err.splitlines() if not x.startswith("Try 'git lac")]  # usage's hint
    assert got.out == "" and len(said) == 1, got
    assert "Traceback" not in got.err and "\x1b" not in got.err
    assert _state(lac) == before
    assert lac("show", "1", "--json").json["task"]["state"] == "open"


def test_odd_ranges_and_long_values_are_refused_saying_what_to_write(lac: Any) -> None:
    zeros = lac("resource", "add", "port", "08-10")
    assert zeros.code == 2 and "write 8-10" in zeros.err, zeros
    long = lac("resource", "add", "db", "x" * 10_000)
    assert long.code == 2 and "10,000 characters" in long.err and len(long.err) < 200, long
    dashed = lac("resource", "add", "port", "-3-5")
    assert dashed.code == 2 and "after `--`" in dashed.err and "task id" not in dashed.err
    assert lac("show", "-3").err.startswith("git lac: task id '-3'")  # still a task id there
    kept = lac("resource", "add", "--json", "port", "--", "-3-5", "0", "08")
    assert kept.code == 0 and kept.json["added"] == ["-3-5", "0", "08"], kept
    assert lac("resource", "remove", "port", "--", "-3-5").code == 0
    values = lac("resource", "list", "port", "--json").json["pools"][0]["values"]
    assert [v["value"] for v in values] == ["0", "08"]
    for count in ("1000000", "9" * 5000):
        huge = lac("task", "add", "t", "--needs-resource", f"port:{count}")
        assert huge.code == 2 and "N is from 1 to 10,000" in huge.err and len(huge.err) < 200
    assert parse_need("port:0002") == ("port", 2)


def test_every_lac_variable_the_package_reads_is_reserved_from_pool_names() -> None:
    """A pool's values are exported as LAC_<NAME> by `. .lac/env`: a pool
    named like a variable git-lacunari reads would change what it does
    (LAC_TEST_STOP_AT stops a process) in every command run in that env."""
    import re as re_

    import git_lacunari
    from git_lacunari.pools import RESERVED

    root = Path(git_lacunari.__file__).parent
    read: set[str] = set()
    for source in root.rglob("*.py"):
        if source.name == "pools.py":  # its examples are pools' own variables
            continue
        read.update(re_.findall(r"[\"']LAC_([A-Z][A-Z0-9_]*)[\"']", source.read_text()))
    assert read >= {"AGENT", "TEST_STOP_AT", "TEST_LANDER_CRASH"}, read  # the scan finds them
    assert {n.lower() for n in read} - RESERVED == set()


def test_adding_again_is_harmless_and_says_what_was_there(lac: Any) -> None:
    first = lac("resource", "add", "port", "8100-8102", "--json")
    assert first.json["added"] == ["8100", "8101", "8102"] and first.json["already"] == []
    again = lac("resource", "add", "port", "8101-8103")
    assert again.code == 0 and again.out.strip() == "pool port: 1 added, 2 already there"
    pools = lac("resource", "list", "--json").json["pools"]
    assert [v["value"] for v in pools[0]["values"]] == ["8100", "8101", "8102", "8103"]
    assert lac("resource", "add", "db", "app_1", "app_2").code == 0
    listed = lac("resource", "list")
    assert listed.out.splitlines()[0] == "db: 2 values, 2 free"
    assert "  8103                 free" in listed.out


def test_removing_a_held_value_is_refused_whole(lac: Any) -> None:
    lac("resource", "add", "port", "8100-8101")
    lac("task", "add", "serve", "--needs-resource", "port")
    assert lac("claim", "1").code == 0
    before = _state(lac)
    refused = lac("resource", "remove", "port", "8101", "8100", "--json")
    assert refused.code == 1
    assert refused.json["refused"] == {
        "reason": "resource_held",
        "resource": "port",
        "value": "8100",
        "task": 1,
        "holder": "tester",
    }
    assert lac("resource", "remove", "port").code == 1  # the whole pool: one is held
    assert _state(lac) == before
    gone = lac("resource", "remove", "port", "8101", "--json")
    assert gone.code == 0 and gone.json["removed"] == ["8101"]
    assert lac("release", "1").code == 0
    assert lac("resource", "remove", "port").code == 0
    assert lac("resource", "list", "--json").json["pools"] == []
    assert lac("resource", "list").out.startswith("no resource pools")


# --- shown: the claim, show, status -------------------------------------------------


def test_a_claim_shows_its_own_values_and_no_other(lac: Any) -> None:
    lac("resource", "add", "port", "8100-8104")
    lac("resource", "add", "db", "app_1", "app_2")
    lac("task", "add", "first", "--needs-resource", "port")
    lac("task", "add", "second", "--needs-resource", "port:2", "--needs-resource", "db")
    lac("task", "add", "plain")
    first = lac("claim", "1", "--json", "--as", "ann")
    assert first.json["resources"] == [{"name": "port", "value": "8100"}]
    second = lac("claim", "2", "--as", "bob")
    assert second.code == 0
    assert second.out.splitlines()[1:] == [
        "  resource db app_1",
        "  resource port 8101",
        "  resource port 8102",
    ]
    again = lac("claim", "2", "--json", "--as", "bob")  # a retry: the same values, no more
    assert again.json["again"] is True
    assert again.json["resources"] == [
        {"name": "db", "value": "app_1"},
        {"name": "port", "value": "8101"},
        {"name": "port", "value": "8102"},
    ]
    assert "8100" not in json.dumps(again.json)  # ann's value is not in bob's answer
    plain = lac("claim", "3", "--json", "--as", "bob")
    assert plain.json["resources"] == []
    shown = lac("show", "2", "--json")
    assert shown.json["resources"] == again.json["resources"]
    assert shown.json["resource_needs"] == [
        {"name": "db", "count": 1},
        {"name": "port", "count": 2},
    ]
    text = lac("show", "2").out
    assert "  resource  needs db:1, port:2" in text and "  resource  port 8102" in text
    status = lac("status", "--as", "bob")
    line = next(x for x in status.out.splitlines() if x.startswith("#2 "))
    assert "[db app_1, port 8101, port 8102]" in line
    claims = lac("status", "--json", "--as", "bob").json["claims"]
    assert {c["task"]["id"]: len(c["resources"]) for c in claims} == {2: 3, 3: 0}
    log = lac("log", "2", "--json").json["events"]
    granted = [e for e in log if e["kind"] == "granted"]
    assert [e["detail"]["resources"] for e in granted] == [again.json["resources"]]


# --- freed: every way a claim ends --------------------------------------------------


def _values(board: Board, task: int) -> list[str]:
    return [v.value for v in board.claim_resources(task)]


def test_every_end_of_a_claim_frees_its_values(boards: Boards) -> None:
    ann, admin = boards("ann"), boards("admin")
    ann.resource_add("port", ["8100"])
    ids = [ann.add_task(f"t{i}", resources=["port"]).id for i in range(6)]

    def handed_on(end: Any) -> None:
        task = ids.pop(0)
        assert _values(ann, ann.claim(task).task.id) == ["8100"]
        with pytest.raises(Refused) as refused:
            boards("bob").claim(ids[0])
        assert refused.value.reason == "resource_unavailable"
        end(task)
        assert ann.claim_resources(task) == []
        assert [p.free for p in ann.resource_pools()] == [1]

    handed_on(lambda t: ann.release(t))
    handed_on(lambda t: admin.release(t, force=True, reason="ann left"))
    handed_on(lambda t: ann.done(t))
    handed_on(lambda t: ann.cancel_task(t, reason="not needed"))
    # A landing claim (done, its work not in the destination yet) gives its
    # values back at once: the work that used them is finished.
    handed_on(lambda t: ann.land(t, branch="lac/task", tip="a" * 40))
    kinds = [e.kind for e in ann.log() if e.kind in ("granted", "freed")]
    assert kinds == ["granted", "freed"] * 5


def test_expiry_by_the_keeper_hands_the_value_on_to_claim_resource(
    repo: Path, board_url: str | None
) -> None:
    """Real processes: ann claims, goes silent, `keeper --once` expires her
    claim and frees its port; bob's `claim --resource` gets it."""
    assert lac_process(repo, "init", *(["--url", board_url] if board_url else [])).code == 0
    assert lac_process(repo, "resource", "add", "port", "8100").code == 0
    for title in ("serve", "also serve"):
        assert lac_process(repo, "task", "add", title).code == 0
    got = lac_process(repo, "claim", "1", "--resource", "port", "--as", "ann", "--json")
    assert got.code == 0 and got.json["resources"] == [{"name": "port", "value": "8100"}]
    refused = lac_process(repo, "claim", "2", "--resource", "port", "--as", "bob", "--json")
    assert refused.code == 1 and refused.json["refused"]["reason"] == "resource_unavailable"
    assert lac_process(repo, "show", "2", "--json").json["resource_needs"] == []  # nothing kept
    Boards(repo, board_url, []).backdate(1, 3 * 3600)
    kept = lac_process(repo, "keeper", "--once", "--as", "keeper")
    assert kept.code == 0, kept
    assert lac_process(repo, "show", "1", "--json").json["task"]["state"] == "open"
    handed = lac_process(repo, "claim", "2", "--resource", "port", "--as", "bob", "--json")
    assert handed.code == 0 and handed.json["resources"] == [{"name": "port", "value": "8100"}]
    events = lac_process(repo, "log", "1", "--json").json["events"]
    # one transaction: the database's `freed` beside the keeper's `expired`
    assert sorted(e["kind"] for e in events if e["kind"] in ("expired", "freed")) == [
        "expired",
        "freed",
    ]
    (freed,) = [e for e in events if e["kind"] == "freed"]
    assert freed["detail"] == {"holder": "ann", "resources": [{"name": "port", "value": "8100"}]}


def test_a_claim_asking_for_more_than_is_free_is_told_what_it_holds(lac: Any) -> None:
    assert lac("resource", "add", "port", "8100-8103").code == 0
    assert lac("task", "add", "serve", "--needs-resource", "port:3").code == 0
    assert lac("task", "add", "other", "--needs-resource", "port").code == 0
    assert lac("claim", "1", "--as", "ann").code == 0
    assert lac("claim", "2", "--as", "bob").code == 0
    more = lac("claim", "1", "--resource", "port:4", "--as", "ann", "--json")
    assert more.code == 1, more
    assert more.json["refused"] == {
        "reason": "resource_unavailable",
        "task": 1,
        "resource": "port",
        "wanted": 4,
        "held": 3,
        "free": 0,
        "total": 4,
    }
    said = lac("claim", "1", "--resource", "port:4", "--as", "ann")
    assert "task #1 needs 4 port and holds 3; pool 'port' has 0 free of 4" in said.err, said
    shown = lac("show", "1", "--json").json  # the claim is as it was: refused whole
    assert shown["task"]["state"] == "claimed" and shown["resource_needs"] == [
        {"name": "port", "count": 3}
    ]
    assert [v["value"] for v in shown["resources"]] == ["8100", "8101", "8102"]


def test_a_grant_of_thousands_of_values_is_recorded_in_events_the_board_accepts(
    lac: Any,
) -> None:
    """A pool's values listed whole pass an event's 100,000 bytes (PostgreSQL
    refused such a claim outright): the list is written as several events of
    one kind, every value once, on both backends."""
    assert lac("resource", "add", "port", "100000000-100009999").code == 0
    assert lac("task", "add", "all", "--needs-resource", "port:10000").code == 0
    got = lac("claim", "1", "--json")
    assert got.code == 0, got.err
    assert len(got.json["resources"]) == 10_000
    long = [f"v{i:04d}_" + "\u00e9" * 190 for i in range(600)]  # 6 JSON bytes a character
    assert lac("resource", "add", "db", *long).code == 0, "adding long values"
    assert lac("resource", "remove", "db").code == 0
    events = lac("log", "--json", "--limit", "0").json["events"]
    assert all(len(json.dumps(e["detail"])) < 100_000 for e in events)
    granted = [
        v["value"] for e in events if e["kind"] == "granted" for v in e["detail"]["resources"]
    ]
    assert granted == [str(100_000_000 + i) for i in range(10_000)]
    added = [v for e in events if e["kind"] == "resource_added" for v in e["detail"]["added"]]
    assert added[-600:] == long
    removed = [v for e in events if e["kind"] == "resource_removed" for v in e["detail"]["removed"]]
    assert removed == long
    (line,) = [x for x in lac("status").out.splitlines() if x.startswith("#1 ")]
    assert "[port 100000000, port 100000001, port 100000002, port 100000003, … 9,996 more]" in line
    assert len(line) < 200, line  # one line's worth: show and --json list them all
    assert lac("done", "1").code == 0
    assert lac("resource", "list", "port", "--json").json["pools"][0]["free"] == 10_000


def test_an_edit_prints_what_the_task_needs_and_holds_as_show_does(lac: Any) -> None:
    assert lac("resource", "add", "port", "8100-8101").code == 0
    assert lac("task", "add", "serve", "--needs-resource", "port:2").code == 0
    open_edit = lac("task", "edit", "1", "--title", "serve it")
    assert open_edit.code == 0 and "  resource  needs port:2" in open_edit.out.splitlines()
    assert lac("claim", "1").code == 0
    edited = lac("task", "edit", "1", "--priority", "3")
    assert edited.code == 0, edited
    lines = edited.out.splitlines()
    assert [x for x in lines if x.startswith("  resource  port")] == [
        "  resource  port 8100",
        "  resource  port 8101",
    ]
    shown = lac("show", "1").out.splitlines()
    assert [x for x in lines if "resource" in x] == [x for x in shown if "resource" in x]


def test_claim_next_passes_over_a_task_whose_pool_is_empty(boards: Boards) -> None:
    ann = boards("ann")
    ann.resource_add("db", ["app_1"])
    high = ann.add_task("needs a db", priority=5, resources=["db"])
    ann.claim(high.id)
    waiting = ann.add_task("needs a db too", priority=4, resources=["db"])
    plain = ann.add_task("needs nothing", priority=1)
    bob = boards("bob")
    got = bob.claim_next()
    assert got.task.id == plain.id and got.resources == []
    with pytest.raises(Refused) as refused:
        bob.claim_next()
    assert refused.value.reason == "not_found"
    assert refused.value.facts["blocked_by_resources"] == [waiting.id]
    assert "1 claimable task(s) wait on resources" in refused.value.message
    ann.done(high.id)
    taken = bob.claim_next()
    assert taken.task.id == waiting.id and _values(bob, waiting.id) == ["app_1"]


# --- the race: 20 processes, 5 ports -----------------------------------------------


@pytest.fixture(params=["sqlite", "postgres", "team"])
def pool_url(request: pytest.FixtureRequest, repo: Path) -> Iterator[tuple[str | None, Any]]:
    """The board the race runs on, and a board of someone who may add pools
    (team mode: an admin)."""
    if request.param == "sqlite":
        yield None, open_board(repo, None, "admin")
        return
    server = request.getfixturevalue("pg_server")
    if request.param == "postgres":
        with pg_schema(server) as url:
            yield url, open_board(repo, url, "admin")
        return
    from .team_fixtures import team_board

    with team_board(server) as crew:
        admin = crew.add("admin", kind="admin")
        for base in ["setup", "checker"] + [f"racer-{i}" for i in range(20)]:
            crew.add(base)
        yield f"{TEAM}{crew.prefix}|{crew.url_of('{role}')}", crew.open(admin, repo)


def _claim_own(
    index: int, repo: Path, url: str | None, task_ids: list[int], barrier: Any
) -> tuple[int, str | None, dict[str, Any], str, list[str]]:
    board = open_board(repo, url, f"racer-{index}")
    board.store.one("now_value")  # connected before the barrier
    barrier.wait(300)
    try:
        got = board.claim(task_ids[index])
        return task_ids[index], None, {}, "", [v.value for v in got.resources]
    except Refused as exc:
        return task_ids[index], exc.reason, exc.facts, exc.message, []


claim_own_worker = _guarded(_claim_own)


@pytest.mark.slow
def test_twenty_claimers_five_ports_five_win(
    repo: Path, pool_url: tuple[str | None, Board]
) -> None:
    url, admin = pool_url
    admin.resource_add("port", ["8100-8104"])
    setup = open_board(repo, url, "setup")
    ids = [setup.add_task(f"serve {i}", resources=["port:1"]).id for i in range(20)]
    results = run_workers(claim_own_worker, 20, repo, url, ids, FORK.Barrier(20))
    won = {task: values for task, reason, _, _, values in results if reason is None}
    lost = [(task, facts, message) for task, reason, facts, message, _ in results if reason]
    assert len(won) == 5 and len(lost) == 15, results
    granted = sorted(v for values in won.values() for v in values)
    assert granted == ["8100", "8101", "8102", "8103", "8104"]  # five distinct values
    for task, facts, message in lost:
        assert facts == {
            "task": task,
            "resource": "port",
            "wanted": 1,
            "held": 0,
            "free": 0,
            "total": 5,
        }, facts
        assert message == f"task #{task} needs 1 port; pool 'port' has 0 free of 5"
    checker = open_board(repo, url, "checker")
    claimed = checker.tasks(state="claimed")
    assert sorted(t.id for t in claimed) == sorted(won)
    (pool,) = checker.resource_pools()
    assert {v.value: v.task for v in pool.values} == {
        v: task for task, values in won.items() for v in values
    }
    holders = {t.id: t.owner for t in claimed}
    assert all(v.holder == holders[v.task] for v in pool.values if v.task is not None)
    # Nothing a loser tried stayed: no need recorded, no value, still open.
    for task, _, _ in lost:
        assert checker.show(task).state == "open" and checker.claim_resources(task) == []
    # claim --next now claims nothing: every open task waits on a port.
    with pytest.raises(Refused) as none_left:
        checker.claim_next()
    assert none_left.value.reason == "not_found"
    assert sorted(none_left.value.facts["blocked_by_resources"]) == sorted(t for t, _, _ in lost)
    assert len(checker.tasks(state="claimed")) == 5


def test_claim_next_claims_nothing_from_the_command_line_when_every_pool_is_taken(
    repo: Path, board_url: str | None
) -> None:
    assert lac_process(repo, "init", *(["--url", board_url] if board_url else [])).code == 0
    assert lac_process(repo, "resource", "add", "port", "8100").code == 0
    for title in ("a", "b"):
        assert lac_process(repo, "task", "add", title, "--needs-resource", "port").code == 0
    assert lac_process(repo, "claim", "--next", "--as", "ann").code == 0
    none = lac_process(repo, "claim", "--next", "--as", "bob", "--json")
    assert none.code == 1
    assert none.json["refused"]["blocked_by_resources"] == [2]
    text = lac_process(repo, "claim", "--next", "--as", "bob")
    assert text.code == 1
    assert text.err.strip() == (
        "refused: no claimable task in lane 'default'; 1 claimable task(s) wait on resources"
    )
    assert lac_process(repo, "tasks", "--state", "claimed", "--json").json["tasks"][0]["id"] == 1


# --- team mode: the database keeps each role to its own values ------------------------


def test_team_roles_take_and_free_only_their_own_values(repo: Path, pg_server: str) -> None:
    from .team_fixtures import team_board

    with team_board(pg_server) as crew:
        admin = crew.open(crew.add("boss", kind="admin"))
        admin.resource_add("port", ["8100-8101"])
        bob_role, mallory_role = crew.add("bob"), crew.add("mallory")
        bob = crew.open(bob_role)
        held = bob.add_task("bob's server", resources=["port"])
        bob.claim(held.id)
        mallory = crew.open(mallory_role)
        # An agent does not make or change pools: that is an admin's.
        with pytest.raises(Refused) as refused:
            mallory.resource_add("port", ["9000"])
        assert refused.value.reason == "not_permitted"
        with pytest.raises(Refused):
            mallory.resource_remove("port", ["8101"])
        with psycopg.connect(crew.url_of(mallory_role), autocommit=True) as conn:
            conn.execute(f'SET search_path = "{crew.board}"')
            for sql in (
                "UPDATE lac_resources SET task_id = NULL",
                f"UPDATE lac_resources SET task_id = {held.id} WHERE task_id IS NULL",
                "DELETE FROM lac_resources",
                f"INSERT INTO lac_task_resources VALUES ({held.id}, 'port', 2)",
                f"SELECT * FROM lac_api_grant_resources({held.id}, NULL, '')",
                f"SELECT * FROM lac_api_grant_resources({held.id}, '{bob_role}', '')",
                f"SELECT lac_api_insert_task_resource({held.id}, 'port', 2)",
                "SELECT * FROM lac_api_resource_remove('port', NULL)",
            ):
                with pytest.raises(psycopg.Error) as denied, conn.transaction():
                    conn.execute(sql)
                assert denied.value.sqlstate == "42501", (sql, denied.value)
        assert _values(admin, held.id) == ["8100"]
        # Mallory's own claim gets the free value, never bob's.
        mine = mallory.add_task("mallory's server", resources=["port"])
        assert [v.value for v in mallory.claim(mine.id).resources] == ["8101"]
        other = admin.add_task("a third", resources=["port"])
        with pytest.raises(Refused) as short:
            mallory.claim(other.id)
        assert short.value.reason == "resource_unavailable"
        # A release by its holder frees it; the admin's forced release frees bob's.
        mallory.release(mine.id)
        admin.release(held.id, force=True, reason="bob left")
        assert [p.free for p in admin.resource_pools()] == [2]
        for board in (admin, bob, mallory):
            board.store.close()


# --- the fast path ------------------------------------------------------------------


def test_a_claim_that_needs_no_resource_runs_no_resource_query(
    boards: Boards, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = boards("ann")
    board.resource_add("port", ["8100"])
    plain = board.add_task("plain")
    board.add_task("plain next", lane="l")
    asked: list[str] = []
    for verb in ("one", "all", "run", "atomic"):
        real = getattr(board.store, verb)

        def spy(query: str, /, _real: Any = real, **params: Any) -> Any:
            asked.append(query)
            return _real(query, **params)

        monkeypatch.setattr(board.store, verb, spy)
    board.claim(plain.id)
    board.claim_next("l")
    resource_queries = {
        "resource_needs",
        "grant_resources",
        "task_resources",
        "insert_task_resource",
        "pool_sizes",
    }
    assert asked and not resource_queries & set(asked), asked


def test_the_command_line_and_a_real_git_repository_agree(repo: Path) -> None:
    """A sanity run through `git lac` as git runs it."""
    git(repo, "config", "lac.agent", "dana")
    assert lac_inprocess(repo, "init").code == 0
    made: Result = lac_process(repo, "resource", "add", "port", "8100-8101")
    assert made.code == 0 and made.out.strip() == "pool port: 2 added"


def test_ready_says_what_claim_next_would_pass_over(lac: Any) -> None:
    lac("resource", "add", "db", "app_1")
    lac("task", "add", "first", "--needs-resource", "db", "--priority", "2")
    lac("task", "add", "second", "--needs-resource", "db", "--priority", "1")
    lac("task", "add", "plain")
    ready = lac("ready", "--json").json
    assert [t["id"] for t in ready["ready"]] == [1, 2, 3]
    assert lac("claim", "1", "--as", "ann").code == 0
    ready = lac("ready", "--json").json
    assert [t["id"] for t in ready["ready"]] == [3]
    (blocked,) = ready["blocked"]
    assert blocked["task"]["id"] == 2
    assert blocked["refused"] == {
        "reason": "resource_unavailable",
        "task": 2,
        "resource": "db",
        "wanted": 1,
        "held": 0,
        "free": 0,
        "total": 1,
    }
    assert "needs 1 db; pool 'db' has 0 free of 1" in lac("ready").out


def test_the_database_writes_the_pool_history_of_a_direct_caller(pg_server: str) -> None:
    """Called directly, with no event written by the caller (team mode: an
    agent with its own login): the grant and the freeing are on the record,
    with the values, written by the database."""
    from .team_fixtures import team_board

    with team_board(pg_server) as crew:
        boss = crew.open(crew.add("boss", kind="admin"))
        boss.resource_add("port", ["8100-8102"])
        bob = crew.add("bob")
        with psycopg.connect(crew.url_of(bob), autocommit=True) as conn:
            conn.execute(f'SET search_path = "{crew.board}"')
            row = conn.execute("SELECT lac_api_insert_task('a', '', 'l', 0, '[]', NULL)")
            task = row.fetchone()[0]  # type: ignore[index]
            conn.execute("SELECT lac_api_insert_task_resource(%s, 'port', 2)", (task,))
            conn.execute("SELECT * FROM lac_api_claim(%s, NULL, 'i', 60)", (task,))
            got = conn.execute("SELECT * FROM lac_api_grant_resources(%s, NULL, 'i')", (task,))
            assert got.fetchall() == [("port", "8100"), ("port", "8101")]
            again = conn.execute("SELECT * FROM lac_api_grant_resources(%s, NULL, 'i')", (task,))
            assert again.fetchall() == []  # it holds what it needs: nothing more
            conn.execute("SELECT * FROM lac_api_release(%s, %s, NULL)", (task, bob))
        events = crew.admin_store.conn.execute(
            "SELECT kind, agent, detail FROM lac_events WHERE task_id = %s ORDER BY id", (task,)
        ).fetchall()
        two = [{"name": "port", "value": "8100"}, {"name": "port", "value": "8101"}]
        assert [(e["kind"], e["agent"]) for e in events] == [
            ("created", bob),
            ("edited", bob),
            ("claimed", bob),
            ("granted", bob),
            ("freed", bob),  # in the release's own statement, before it says so
            ("released", bob),
        ]
        assert events[3]["detail"] == {"resources": two}
        assert events[4]["detail"] == {"holder": bob, "resources": two}
        boss.store.close()


def test_a_claim_taken_over_keeps_its_values(boards: Boards) -> None:
    from git_lacunari.identity import Identity

    here = boards("ann")
    here.resource_add("port", ["8100"])
    task = here.add_task("serve", resources=["port"])
    assert _values(here, here.claim(task.id).task.id) == ["8100"]
    moved = Board(boards.store(), Identity("ann", "test", (), "test", "elsewhere", "h:/x"))
    got = moved.claim(task.id, take_over=True)
    assert got.taken_from is not None and [v.value for v in got.resources] == ["8100"]
    assert _values(here, task.id) == ["8100"]  # one holder, one value: nothing granted twice
    assert [p.free for p in here.resource_pools()] == [0]
