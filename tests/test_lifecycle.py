"""The whole life of a task and a lock (issue 14), on SQLite and PostgreSQL:
edit, cancel, reopen, unlock --force, and the keeper's task-less locks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from git_lacunari.board import Board
from git_lacunari.errors import InvalidInput, Refused

from .conftest import Boards, Result

Lac = Callable[..., Result]


def refusal(excinfo: pytest.ExceptionInfo[Refused]) -> tuple[str, dict[str, object]]:
    return excinfo.value.reason, excinfo.value.facts


def kinds(board: Board, task_id: int | None = None) -> list[str]:
    return [e.kind for e in board.log(task_id)]


def last(board: Board, task_id: int | None = None) -> tuple[str, str, dict[str, object]]:
    event = board.log(task_id)[-1]
    return event.kind, event.agent, event.detail


def move_back(board: Board, table: str, column: str, seconds: int, where: str) -> None:
    """Age a row instead of sleeping: the board's clock stays honest."""
    with board.store.write():
        board.store.conn.execute(  # type: ignore[attr-defined]
            f"UPDATE {table} SET {column} = {column} - {int(seconds)} WHERE {where}"
        )


# --- task edit ---------------------------------------------------------------------


def test_edit_an_open_task_is_one_event_with_every_change(boards: Boards) -> None:
    alice = boards("alice")
    dep = alice.add_task("Dep")
    task = alice.add_task("Fix teh bug", writes=["core/"], needs=["py"], after=[dep.id])
    other = alice.add_task("Other")
    edited = boards("bob").edit_task(
        task.id,
        title="Fix the bug",
        body="long text",
        lane="auth",
        priority=5,
        needs=["py", "sql"],
        reads=["docs/"],
        drop_paths=["core/"],
        add_after=[other.id],
        drop_after=[dep.id],
        reason="typo",
    )
    assert (edited.title, edited.body, edited.lane, edited.priority, edited.needs) == (
        "Fix the bug",
        "long text",
        "auth",
        5,
        ["py", "sql"],
    )
    assert [(p.pattern, p.mode) for p in edited.paths] == [("docs/", "read")]
    assert [d["id"] for d in edited.depends_on] == [other.id]
    kind, agent, detail = last(alice, task.id)
    assert (kind, agent, detail["reason"]) == ("edited", "bob", "typo")
    changes = detail["changes"]
    assert isinstance(changes, dict)
    assert changes["title"] == ["Fix teh bug", "Fix the bug"]
    assert changes["priority"] == [0, 5]
    assert changes["body"] == {"before_chars": 0, "after_chars": 9}
    assert changes["dropped_paths"] == ["core/"] and changes["dropped_after"] == [dep.id]
    assert kinds(alice, task.id).count("edited") == 1


def test_edit_refusals_write_nothing(boards: Boards) -> None:
    alice, bob = boards("alice"), boards("bob")
    task = alice.add_task("Mine", writes=["core/"])
    alice.claim(task.id)
    before = len(alice.log())
    with pytest.raises(Refused) as err:
        bob.edit_task(task.id, title="Hijacked")
    assert refusal(err) == ("not_owner", {"task": task.id, "holder": "alice", "path": None})
    done = alice.add_task("Done")
    alice.claim(done.id)
    alice.done(done.id)
    with pytest.raises(Refused) as err2:
        alice.edit_task(done.id, title="Later")
    assert refusal(err2) == ("not_open", {"task": done.id, "state": "done"})
    with pytest.raises(InvalidInput):
        alice.edit_task(task.id, title="Mine")  # nothing changes
    with pytest.raises(InvalidInput):
        alice.edit_task(task.id, add_after=[task.id])  # a cycle
    with pytest.raises(InvalidInput):
        alice.edit_task(task.id, drop_paths=["nowhere/"])
    assert len(alice.log()) == before + 3  # done's claimed + done + created only
    assert alice.show(task.id).title == "Mine"


def test_owner_edits_a_claim_new_paths_locked_dropped_ones_freed(boards: Boards) -> None:
    alice, bob = boards("alice"), boards("bob")
    task = alice.add_task("Claimed", writes=["core/"])
    alice.claim(task.id)
    bob.lock(["docs/"])
    with pytest.raises(Refused) as err:
        alice.edit_task(task.id, writes=["docs/guide.md"])
    assert err.value.reason == "path_locked"
    assert [p.pattern for p in alice.show(task.id).paths] == ["core/"]  # refused whole
    edited = alice.edit_task(task.id, writes=["lib/"], drop_paths=["core/"])
    assert [lk.pattern for lk in edited.locks] == ["lib/"]
    assert bob.check(["core/auth.py"]) == []
    assert edited.state == "claimed" and edited.owner == "alice"


def test_edit_removing_a_dependency_makes_it_claimable(boards: Boards) -> None:
    alice = boards("alice")
    dep = alice.add_task("Dep")
    task = alice.add_task("Waits", after=[dep.id])
    with pytest.raises(Refused):
        alice.claim(task.id)
    alice.edit_task(task.id, drop_after=[dep.id])
    assert alice.claim(task.id).task.id == task.id


# --- cancel and reopen ---------------------------------------------------------------


def test_cancel_open_task_and_dependents_stay_blocked(boards: Boards) -> None:
    alice = boards("alice")
    dep = alice.add_task("Dep")
    waiting = alice.add_task("Waits", after=[dep.id])
    cancelled = boards("bob").cancel_task(dep.id, reason="not needed")
    assert cancelled.state == "cancelled"
    kind, agent, detail = last(alice, dep.id)
    assert (kind, agent) == ("cancelled", "bob")
    assert detail == {
        "reason": "not needed",
        "previous_state": "open",
        "locks": [],
        "waiting": [waiting.id],
    }
    with pytest.raises(Refused) as err:
        alice.claim(waiting.id)
    assert refusal(err) == (
        "unmet_dependency",
        {"task": waiting.id, "dependency": dep.id, "dependency_state": "cancelled"},
    )
    assert alice.show(waiting.id).depends_on[0]["state"] == "cancelled"


def test_cancel_own_claim_frees_its_locks_others_claim_refused(boards: Boards) -> None:
    alice, bob = boards("alice"), boards("bob")
    task = alice.add_task("Claimed", writes=["core/"])
    alice.claim(task.id)
    with pytest.raises(Refused) as err:
        bob.cancel_task(task.id)
    assert err.value.reason == "not_owner"
    alice.cancel_task(task.id)
    assert alice.locks() == [] and alice.show(task.id).owner is None
    assert last(alice, task.id)[2]["locks"] == ["core/"]
    with pytest.raises(Refused) as err2:
        alice.cancel_task(task.id)
    assert refusal(err2) == ("not_open", {"task": task.id, "state": "cancelled"})


@pytest.mark.parametrize("end", ["done", "cancelled", "parked"])
def test_reopen_resets_attempts_and_records_the_past(boards: Boards, end: str) -> None:
    alice = boards("alice")
    task = alice.add_task("T")
    alice.claim(task.id)
    if end == "done":
        alice.done(task.id)
    elif end == "cancelled":
        alice.cancel_task(task.id)
    else:
        alice.fail(task.id, status=1, max_attempts=1)
    assert alice.show(task.id).state == end
    reopened = boards("bob").reopen_task(task.id, reason="again")
    assert (reopened.state, reopened.owner, reopened.attempts) == ("open", None, 0)
    kind, agent, detail = last(alice, task.id)
    assert (kind, agent) == ("reopened", "bob")
    assert detail["previous_state"] == end and detail["attempts"] == 1
    assert detail["reason"] == "again"
    assert boards("carol").claim(task.id).task.attempts == 1


def test_reopen_of_an_open_or_claimed_task_is_refused(boards: Boards) -> None:
    alice = boards("alice")
    task = alice.add_task("T")
    before = len(alice.log())
    with pytest.raises(Refused) as err:
        alice.reopen_task(task.id)
    assert refusal(err) == ("already_open", {"task": task.id})
    alice.claim(task.id)
    with pytest.raises(Refused) as err2:
        alice.reopen_task(task.id)
    reason, facts = refusal(err2)
    assert (reason, facts["task"], facts["holder"]) == ("already_claimed", task.id, "alice")
    assert len(alice.log()) == before + 1  # the claim only


# --- unlock --force ------------------------------------------------------------------


def test_force_unlock_records_previous_holders(boards: Boards) -> None:
    alice, admin = boards("alice"), boards("admin")
    alice.lock(["docs/"])
    task = alice.add_task("T", writes=["core/"])
    alice.claim(task.id)
    freed = admin.force_unlock(["docs/", "core/"], reason="alice went home")
    assert sorted(lk.pattern for lk in freed) == ["core/", "docs/"]
    assert admin.locks() == []
    events = [e for e in admin.log() if e.kind == "force_unlocked"]
    assert {(e.task_id, e.agent) for e in events} == {(None, "admin"), (task.id, "admin")}
    for event in events:
        assert event.detail["reason"] == "alice went home"
        assert event.detail["previous_holders"] == ["alice"]


def test_force_unlock_needs_a_reason_and_a_held_pattern(boards: Boards) -> None:
    alice, admin = boards("alice"), boards("admin")
    alice.lock(["docs/"])
    before = len(admin.log())
    for reason in (None, "  "):
        with pytest.raises(InvalidInput):
            admin.force_unlock(["docs/"], reason=reason)
    with pytest.raises(Refused) as err:
        admin.force_unlock(["docs/", "free/"], reason="tidy")
    assert refusal(err) == ("not_owner", {"task": None, "holder": None, "path": "free/"})
    assert [lk.pattern for lk in admin.locks()] == ["docs/"]  # all or nothing
    assert len(admin.log()) == before


def test_unlock_force_on_the_command_line(lac: Lac) -> None:
    assert lac("lock", "docs/", "--as", "alice").code == 0
    no_reason = lac("unlock", "--force", "docs/", "--as", "admin")
    assert no_reason.code == 2 and "--reason" in no_reason.err
    done = lac("unlock", "--force", "docs/", "--reason", "gone", "--as", "admin", "--json")
    assert done.code == 0 and done.json["unlocked"][0]["agent"] == "alice"
    log = lac("log", "--json").json["events"]
    assert log[-1]["kind"] == "force_unlocked" and log[-1]["detail"]["reason"] == "gone"


# --- the keeper and task-less locks ------------------------------------------------


def test_keeper_returns_task_less_locks_of_silent_agents(boards: Boards) -> None:
    alice, bob, keeper = boards("alice"), boards("bob"), boards("keeper")
    alice.touch()
    bob.touch()
    alice.lock(["docs/"])
    bob.lock(["lib/"])
    task = alice.add_task("T", writes=["core/"])
    alice.claim(task.id, stale_after=10_000)
    assert keeper.sweep_locks(stale_after=60) == []
    move_back(alice, "lac_agents", "last_seen", 120, "name = 'alice'")
    move_back(alice, "lac_locks", "acquired_at", 120, "agent = 'alice'")
    (fact,) = keeper.sweep_locks(stale_after=60)
    assert fact["agent"] == "alice" and fact["locks"] == ["docs/"]
    assert float(fact["silent_for"]) >= 120
    # bob was seen; alice's claim's lock has its own heartbeat and stays.
    assert sorted(lk.pattern for lk in keeper.locks()) == ["core/", "lib/"]
    kind, agent, detail = last(keeper)
    assert (kind, agent, detail["previous_owner"], detail["locks"]) == (
        "locks_expired",
        "keeper",
        "alice",
        ["docs/"],
    )


def test_a_command_is_a_sign_of_life_for_task_less_locks(boards: Boards) -> None:
    alice, keeper = boards("alice"), boards("keeper")
    alice.lock(["docs/"])
    move_back(alice, "lac_locks", "acquired_at", 120, "agent = 'alice'")
    move_back(alice, "lac_agents", "last_seen", 120, "name = 'alice'")
    alice.touch()  # what every command does
    assert keeper.sweep_locks(stale_after=60) == []


def test_keeper_command_reports_expired_locks(lac: Lac, boards: Boards) -> None:
    assert lac("lock", "docs/", "--as", "alice").code == 0
    board = boards("x")
    move_back(board, "lac_agents", "last_seen", 7200, "name = 'alice'")
    move_back(board, "lac_locks", "acquired_at", 7200, "agent = 'alice'")
    swept = lac("keeper", "--once", "--json", "--as", "keeper")
    assert swept.code == 0, swept.err
    assert [f["locks"] for f in swept.json["expired_locks"]] == [["docs/"]]
    assert lac("locks", "--json").json["locks"] == []


def test_show_says_a_cancelled_dependency_blocks(lac: Lac) -> None:
    lac("task", "add", "Dep")
    lac("task", "add", "Waits", "--after", "1")
    assert lac("task", "cancel", "1", "--reason", "dropped").code == 0
    shown = lac("show", "2").out
    assert "after     #1 (cancelled) Dep" in shown
    assert "blocks this task: `task edit 2 --not-after 1` or `task reopen 1`" in shown
    refused = lac("claim", "2", "--json")
    assert refused.code == 1 and refused.json["refused"]["dependency_state"] == "cancelled"
    assert lac("task", "edit", "2", "--not-after", "1").code == 0
    assert lac("claim", "2").code == 0
