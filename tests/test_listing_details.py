"""Listings that scale and tell the truth (issue 24): `ready --limit`, `ready
--all` streaming every row as it is read, and `tasks --json` / `ready --json`
reporting each task's real paths, locks and dependencies, read in one query
per page, never one per task. Both backends."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from git_lacunari.board import claims as board_claims
from git_lacunari.store import base

from .conftest import Result

Lac = Callable[..., Result]


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every named query the store runs, in order."""
    names: list[str] = []
    real = base.StoreBase._execute

    def counting(self: base.StoreBase, query: Any, params: dict[str, Any]) -> Any:
        names.append(str(query))
        return real(self, query, params)

    monkeypatch.setattr(base.StoreBase, "_execute", counting)
    yield names


@pytest.fixture
def shop(lac: Lac) -> Lac:
    """#1 claimed by someone else with a write lock on src/a.py; #2 waits on #1;
    #3 wants src/a.py; #4 free; #5..#9 free too."""
    assert lac("task", "add", "A", "--write", "src/a.py", "--read", "docs/").code == 0
    assert lac("task", "add", "B", "--after", "1").code == 0
    assert lac("task", "add", "C", "--write", "src/a.py").code == 0
    for n in range(4, 10):
        assert lac("task", "add", f"T{n}").code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "other"}).code == 0
    return lac


def test_tasks_json_reports_real_paths_locks_and_dependencies(shop: Lac, asked: list[str]) -> None:
    asked.clear()
    got = shop("tasks", "--json")
    assert got.code == 0, got
    by_id = {t["id"]: t for t in got.json["tasks"]}
    assert by_id[1]["paths"] == [
        {"pattern": "docs/", "mode": "read"},
        {"pattern": "src/a.py", "mode": "write"},
    ]
    assert sorted((lk["pattern"], lk["mode"], lk["agent"]) for lk in by_id[1]["locks"]) == [
        ("docs/", "read", "other"),
        ("src/a.py", "write", "other"),
    ]
    assert all(lk["task_id"] == 1 and lk["instance"] for lk in by_id[1]["locks"])
    assert by_id[2]["depends_on"] == [{"id": 1, "state": "claimed", "title": "A"}]
    assert by_id[3]["paths"] == [{"pattern": "src/a.py", "mode": "write"}]
    assert by_id[3]["locks"] == [] and by_id[4]["paths"] == [] and by_id[4]["depends_on"] == []
    # One query for the whole page's details, none per task.
    assert asked.count("tasks_details") == 1
    assert not {"task_paths", "task_locks", "task_deps"} & set(asked)
    # `show` tells the same as the listing.
    shown = shop("show", "1", "--json").json["task"]
    assert shown["paths"] == by_id[1]["paths"] and shown["locks"] == by_id[1]["locks"]


def test_ready_limit_pages_and_says_how_many_more(shop: Lac, asked: list[str]) -> None:
    asked.clear()
    page = shop("ready", "--limit", "3", "--json")
    assert page.code == 0, page
    body = page.json
    assert [b["task"]["id"] for b in body["blocked"]] == [2, 3]
    assert [t["id"] for t in body["ready"]] == [4]
    assert (body["limit"], body["more"], body["more_exact"]) == (3, 5, True)
    blocked = {b["task"]["id"]: b for b in body["blocked"]}
    assert blocked[2]["refused"]["reason"] == "unmet_dependency"
    assert blocked[2]["task"]["depends_on"] == [{"id": 1, "state": "claimed", "title": "A"}]
    assert blocked[3]["refused"]["reason"] == "path_locked"
    assert blocked[3]["task"]["paths"] == [{"pattern": "src/a.py", "mode": "write"}]
    assert asked.count("lane_open_page") == 1 and asked.count("tasks_details") == 1
    assert not {"task_paths", "task_deps", "task_locks"} & set(asked)

    human = shop("ready", "--limit", "3")
    assert [line.split()[0] for line in human.out.splitlines()] == ["#4", "#2", "#3"]
    assert human.err.strip() == "… 5 more open tasks; --all shows all"
    whole = shop("ready", "--json")  # the default page (50) holds them all
    assert whole.json["more"] == 0 and len(whole.json["ready"]) == 6
    assert shop("ready").err == ""
    assert shop("ready", "--limit", "0", "--json").json["limit"] is None


def test_ready_all_streams_every_row_in_claim_order(
    shop: Lac, asked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(board_claims, "READY_PAGE_SIZE", 2)
    asked.clear()
    got = shop("ready", "--all", "--json")
    assert got.code == 0, got
    rows = [json.loads(line) for line in got.out.splitlines()]
    assert [r["task"]["id"] for r in rows] == list(range(2, 10))
    assert [r["ready"] for r in rows[:2]] == [False, False] and all(r["ready"] for r in rows[2:])
    assert rows[1]["refused"]["reason"] == "path_locked"
    assert "refused" not in rows[2]
    # 8 open tasks, 2 a page: 5 page reads (the last one empty), each one
    # query for its tasks and one for their details.
    assert asked.count("lane_open_page") == 5
    assert asked.count("tasks_details") == 4

    human = shop("ready", "--all")
    lines = human.out.splitlines()
    assert [line.split()[0] for line in lines] == [f"#{n}" for n in range(2, 10)]
    assert lines[0].split()[2] == "blocked" and lines[2].split()[2] == "ready"
    assert human.err == ""


def test_ready_all_writes_rows_before_the_lane_is_read_to_its_end(
    shop: Lac, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page's rows are written before the next page is read: streamed, not collected."""
    from git_lacunari import edge
    from git_lacunari.commands import status

    monkeypatch.setattr(board_claims, "READY_PAGE_SIZE", 3)
    happened: list[str] = []
    real_rows, real_say = board_claims.Claims._ready_rows, edge.say

    def reading(self: Any, lane: str, limit: Any, after: Any) -> Any:
        happened.append("read")
        return real_rows(self, lane, limit, after)

    def writing(line: str, **kwargs: Any) -> None:
        happened.append("row")
        real_say(line, **kwargs)

    monkeypatch.setattr(board_claims.Claims, "_ready_rows", reading)
    monkeypatch.setattr(status, "say", writing)
    assert shop("ready", "--all").code == 0
    assert happened == ["read", *["row"] * 3, "read", *["row"] * 3, "read", *["row"] * 2]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("ready", "--limit", "-1"), "--limit -1 is out of range"),
        (("ready", "--limit", "x"), "'x' is not a valid integer"),
        (("ready", "--lane", "bad lane"), "lane"),
        (("ready", "--all", "--lane", "bad lane"), "lane"),
    ],
)
def test_ready_bad_input_is_one_line_and_exit_2(lac: Lac, args: tuple[str, ...], said: str) -> None:
    got = lac(*args)
    assert got.code == 2, got
    assert said in got.err and "Traceback" not in got.err and got.out == ""
