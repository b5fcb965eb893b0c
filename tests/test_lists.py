"""Lists that scale (issue 12): `tasks` and `log` page, hide finished tasks
unless asked, say how many more there are, and are served by indexes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from git_lacunari.board import tasks as board_tasks

from .conftest import Boards, Result, lac_inprocess

Lac = Callable[..., Result]


def ids(result: Result) -> list[int]:
    assert result.code == 0, result
    return [t["id"] for t in result.json["tasks"]]


@pytest.fixture
def mixed(lac: Lac) -> Lac:
    """Tasks 1-6: open, claimed, done, cancelled, parked (made by SQL), open."""
    for n in range(1, 7):
        assert lac("task", "add", f"t{n}", "--lane", "b" if n % 2 else "a").code == 0
    assert lac("claim", "2").code == 0
    assert lac("claim", "3").code == 0 and lac("done", "3").code == 0
    assert lac("task", "cancel", "4").code == 0
    return lac


def park(boards: Boards, task_id: int) -> None:
    boards.sql("UPDATE lac_tasks SET state = 'parked' WHERE id = :id", id=task_id)


def test_tasks_hides_done_and_cancelled_unless_asked(mixed: Lac, boards: Boards) -> None:
    park(boards, 5)
    assert ids(mixed("tasks", "--json")) == [1, 2, 5, 6]
    assert ids(mixed("tasks", "--all", "--json")) == [1, 2, 3, 4, 5, 6]
    assert ids(mixed("tasks", "--state", "done", "--json")) == [3]
    assert ids(mixed("tasks", "--state", "done,cancelled", "--json")) == [3, 4]
    assert ids(mixed("tasks", "--state", "done", "--state", "parked", "--json")) == [3, 5]
    assert ids(mixed("tasks", "--state", " open , claimed ", "--json")) == [1, 2, 6]
    assert ids(mixed("tasks", "--lane", "b", "--json")) == [1, 5]
    assert ids(mixed("tasks", "--lane", "b", "--all", "--json")) == [1, 3, 5]
    assert ids(mixed("tasks", "--mine", "--json")) == [2]
    assert ids(mixed("tasks", "--mine", "--all", "--json")) == [2, 3]
    human = mixed("tasks")
    assert [line.split()[0] for line in human.out.splitlines()] == ["#1", "#2", "#5", "#6"]
    assert human.err == ""  # nothing cut: no "more" line


def test_tasks_limit_says_how_many_more(mixed: Lac) -> None:
    cut = mixed("tasks", "--limit", "2")
    assert [line.split()[0] for line in cut.out.splitlines()] == ["#1", "#2"]
    assert cut.err.strip().splitlines() == ["… 2 more tasks; --limit 0 shows all"]
    one = mixed("tasks", "--limit", "3")
    assert one.err.strip() == "… 1 more task; --limit 0 shows all"
    as_json = mixed("tasks", "--limit", "2", "--all", "--json")
    assert ids(as_json) == [1, 2]
    assert (as_json.json["limit"], as_json.json["more"], as_json.json["more_exact"]) == (2, 4, True)
    everything = mixed("tasks", "--limit", "0", "--all", "--json")
    assert ids(everything) == [1, 2, 3, 4, 5, 6]
    assert (everything.json["limit"], everything.json["more"]) == (None, 0)
    exact = mixed("tasks", "--limit", "4", "--json")  # exactly a page: nothing more
    assert ids(exact) == [1, 2, 5, 6] and exact.json["more"] == 0


def test_the_default_page_is_fifty(lac: Lac, boards: Boards) -> None:
    many = boards("alice")
    for n in range(53):
        many.add_task(f"t{n}")
    shown = lac("tasks", "--json")
    assert len(shown.json["tasks"]) == 50 and shown.json["more"] == 3
    assert lac("tasks").err.strip() == "… 3 more tasks; --limit 0 shows all"


def test_more_is_counted_up_to_a_cap(
    mixed: Lac, boards: Boards, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(board_tasks, "COUNT_CAP", 2)  # where the listings read it
    cut = mixed("tasks", "--all", "--limit", "1", "--json")
    assert (cut.json["more"], cut.json["more_exact"]) == (2, False)
    assert mixed("tasks", "--all", "--limit", "1").err.strip() == (
        "… more than 2 more tasks; --limit 0 shows all"
    )
    under = mixed("tasks", "--all", "--limit", "4", "--json")
    assert (under.json["more"], under.json["more_exact"]) == (2, True)
    events = mixed("log", "--limit", "1", "--json")
    assert (events.json["more"], events.json["more_exact"]) == (2, False)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["tasks", "--state", "finished"], "unknown state 'finished'"),
        (["tasks", "--state", "open,nope"], "unknown state 'nope'"),
        (["tasks", "--state", ","], "--state needs a state"),
        (["tasks", "--limit", "-1"], "--limit -1 is out of range"),
        (["tasks", "--limit", str(2**63)], "out of range"),
        (["log", "--limit", "-5"], "--limit -5 is out of range"),
        (["log", "x", "--limit", "5"], "is not a positive whole number"),
    ],
)
def test_bad_listing_arguments_exit_2(mixed: Lac, args: list[str], needle: str) -> None:
    result = mixed(*args)
    assert result.code == 2 and "Traceback" not in result.err, result
    assert needle in result.err and len(result.err.strip().splitlines()) == 1, result.err


def test_log_shows_the_newest_page_oldest_first(mixed: Lac) -> None:
    everything = mixed("log", "--limit", "0", "--json").json["events"]
    assert len(everything) > 5 and everything == sorted(everything, key=lambda e: e["id"])
    page = mixed("log", "--limit", "3", "--json")
    assert page.json["events"] == everything[-3:]
    assert (page.json["more"], page.json["more_exact"]) == (len(everything) - 3, True)
    human = mixed("log", "--limit", "3")
    assert len(human.out.splitlines()) == 3
    assert human.err.strip() == f"… {len(everything) - 3} earlier events; --limit 0 shows all"
    default = mixed("log", "--json")
    assert default.json["events"] == everything and default.json["more"] == 0


def test_log_of_one_task_pages(mixed: Lac) -> None:
    kinds = [e["kind"] for e in mixed("log", "3", "--json").json["events"]]
    assert kinds == ["created", "claimed", "done"]
    page = mixed("log", "3", "--limit", "1", "--json")
    assert [e["kind"] for e in page.json["events"]] == ["done"] and page.json["more"] == 2
    missing = mixed("log", "99", "--limit", "1", "--json")
    assert missing.code == 1 and missing.json["refused"]["reason"] == "not_found"


# --- the default listings are served by an index, not a scan or a sort -------------


def plan(boards: Boards, query: str, **params: Any) -> str:
    store: Any = boards.store()
    sql = store.queries[query]
    if store.dialect == "sqlite":
        rows = store.conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
        return "\n".join(r["detail"] for r in rows)
    store.conn.execute("SET enable_seqscan = off")  # a tiny table: ask for the index path
    store.conn.execute("SET enable_sort = off")
    rows = store.conn.execute("EXPLAIN " + sql, params).fetchall()
    return "\n".join(r["QUERY PLAN"] for r in rows)


# The default listings, --all and the log. (`--state S` reads the (state, id)
# index and may sort what matches: a listing people ask for by name.)
LISTINGS: list[tuple[str, dict[str, Any], str]] = [
    ("live_tasks_page", {"limit": 50, "lane": None, "owner": None}, "lac_tasks_live"),
    ("live_tasks_more", {"after": 7, "cap": 10001, "lane": None, "owner": None}, "lac_tasks_live"),
    ("live_tasks_page", {"limit": 50, "lane": "a", "owner": None}, "lac_tasks_live"),
    ("all_tasks_page", {"limit": 50, "lane": None, "owner": None}, ""),
    ("events_page", {"limit": 50}, ""),
    ("task_events_page", {"limit": 50, "task_id": 3}, "lac_events_task"),
    ("events_more", {"before": 90, "cap": 10001}, ""),
    # The grant's candidates, every wanted key at once: the key index only.
    (
        "candidate_locks_batch",
        {"exact": '["", "a/", "a/b/"]', "ranges": '[{"lo": "a/b/", "hi": "a/b/\U0010ffff"}]'},
        "lac_locks_key",
    ),
    ("own_locks_on", {"agent": "alice", "patterns": '["a/b"]'}, "lac_locks_agent"),
]


@pytest.mark.parametrize(("query", "params", "index"), LISTINGS)
def test_listing_queries_neither_scan_nor_sort_the_table(
    boards: Boards, query: str, params: dict[str, Any], index: str
) -> None:
    many = boards("alice")
    for n in range(20):
        many.add_task(f"t{n}", lane="a" if n % 2 else "b")
    shown = plan(boards, query, **params)
    if boards.url is None:
        # No sort; a SCAN without an index is in rowid order and stops at the LIMIT.
        assert "TEMP B-TREE" not in shown, shown
    else:
        assert "Seq Scan on lac_" not in shown and "Sort" not in shown, shown
    assert index in shown, shown


@pytest.mark.parametrize(
    "args",
    [
        ["tasks", "--as", ""],
        ["log", "--as", ""],
        ["tasks", "--lane", ""],
        ["tasks", "--lane", "a b"],
    ],
)
def test_bad_input_in_a_repository_without_a_board_makes_none(repo: Path, args: list[str]) -> None:
    """Exit 2 writes nothing: not even the board a first command would create."""
    result = lac_inprocess(repo, *args)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1, result
    assert not (repo / ".git" / "lacunari").exists(), "exit 2 created a board"
