"""The conformance suite: every board behaviour, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from git_lacunari.board import MAX_TITLE
from git_lacunari.errors import BadPath, InvalidInput, Refused
from git_lacunari.model import EventKind, LockMode

from .conftest import Boards, git


def refusal(excinfo: pytest.ExceptionInfo[Refused]) -> tuple[str, dict[str, object]]:
    return excinfo.value.reason, excinfo.value.facts


def snapshot(board: object) -> tuple[int, int, int]:
    """(tasks, locks, events): what "nothing was written" is checked against."""
    from git_lacunari.board import Board

    assert isinstance(board, Board)
    return len(board.tasks()), len(board.locks()), len(board.log())


# --- claiming -----------------------------------------------------------------


def test_claim_then_done_records_history(boards: Boards) -> None:
    alice = boards("alice")
    task = alice.add_task("Fix login", body="details", priority=3, lane="auth")
    assert (task.state, task.lane, task.priority, task.created_by) == ("open", "auth", 3, "alice")
    got = alice.claim(task.id)
    assert (got.task.state, got.task.owner, got.task.attempts, got.again) == (
        "claimed",
        "alice",
        1,
        False,
    )
    assert got.task.heartbeat_at is not None
    finished = alice.done(task.id)
    assert (finished.state, finished.owner) == ("done", "alice")
    assert [e.kind for e in alice.log(task.id)] == ["created", "claimed", "done"]


def test_second_claimer_is_told_who_won(boards: Boards) -> None:
    alice, bob = boards("alice"), boards("bob")
    task = alice.add_task("One task")
    alice.claim(task.id)
    before = snapshot(bob)
    with pytest.raises(Refused) as err:
        bob.claim(task.id)
    assert refusal(err) == ("already_claimed", {"task": task.id, "holder": "alice", "where": None})
    assert "already claimed by alice" in err.value.message
    assert snapshot(bob) == before


def test_claiming_your_own_claim_again_succeeds(boards: Boards) -> None:
    alice = boards("alice")
    task = alice.add_task("Retry me", writes=["core/auth.py"])
    first = alice.claim(task.id)
    again = alice.claim(task.id)
    assert again.again and again.task.owner == "alice" and again.task.attempts == 1
    assert [lk.id for lk in again.locks] == [lk.id for lk in first.locks]
    assert [e.kind for e in alice.log(task.id)].count(EventKind.CLAIMED) == 1


def test_unmet_dependency_then_claimable_once_done(boards: Boards) -> None:
    alice, bob = boards("alice"), boards("bob")
    first = alice.add_task("First")
    second = alice.add_task("Second", after=[first.id])
    with pytest.raises(Refused) as err:
        bob.claim(second.id)
    assert refusal(err) == (
        "unmet_dependency",
        {"task": second.id, "dependency": first.id, "dependency_state": "open"},
    )
    alice.claim(first.id)
    alice.done(first.id)
    assert bob.claim(second.id).task.owner == "bob"


def test_missing_capability(boards: Boards) -> None:
    alice = boards("alice")
    task = alice.add_task("Needs GPU", needs=["gpu", "linux"])
    with pytest.raises(Refused) as err:
        boards("bob", caps=("linux",)).claim(task.id)
    assert refusal(err) == ("missing_capability", {"task": task.id, "capability": "gpu"})
    assert boards("carol", caps=("gpu", "linux", "x")).claim(task.id).task.owner == "carol"


def test_not_found_and_not_open(boards: Boards) -> None:
    alice = boards("alice")
    with pytest.raises(Refused) as err:
        alice.claim(999)
    assert refusal(err) == (
        "not_found",
        {"task": 999, "lane": None, "blocked_by_paths": [], "blocked_by_resources": []},
    )
    task = alice.add_task("Done soon")
    alice.claim(task.id)
    alice.done(task.id)
    with pytest.raises(Refused) as err:
        alice.claim(task.id)
    assert refusal(err) == ("not_open", {"task": task.id, "state": "done"})


def test_claim_takes_declared_locks_or_is_refused_whole(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    held = dana.add_task("Auth work", writes=["core/auth.py"])
    dana.claim(held.id)
    wanted = erin.add_task("Touches core", writes=["core/"], reads=["README"])
    before = snapshot(erin)
    with pytest.raises(Refused) as err:
        erin.claim(wanted.id)
    reason, facts = refusal(err)
    assert reason == "path_locked"
    assert (facts["holder"], facts["task"], facts["pattern"], facts["path"]) == (
        "dana",
        held.id,
        "core/auth.py",
        "core/",
    )
    assert err.value.message == f"dana holds core/auth.py on task #{held.id}"
    assert snapshot(erin) == before
    assert erin.show(wanted.id).state == "open"


def test_claim_with_extra_paths_records_them(boards: Boards) -> None:
    alice, bob = boards("alice"), boards("bob")
    task = alice.add_task("Plain")
    got = alice.claim(task.id, writes=["core/new.py"], reads=["README"])
    assert sorted((lk.pattern, lk.mode) for lk in got.locks) == [
        ("README", "read"),
        ("core/new.py", "write"),
    ]
    with pytest.raises(Refused):
        bob.lock(["core/new.py"])
    assert [(p.pattern, p.mode) for p in alice.show(task.id).paths] == [
        ("README", "read"),
        ("core/new.py", "write"),
    ]


def test_lock_records_base_blob_of_head(boards: Boards) -> None:
    alice = boards("alice")
    blob = git(boards.repo, "rev-parse", "HEAD:core/auth.py").strip()
    (lock,) = alice.lock(["core/auth.py"])
    assert lock.base_blob == blob
    (glob,) = alice.lock(["core/*.txt"])
    assert glob.base_blob is None


# --- claim next ---------------------------------------------------------------


def test_claim_next_order_priority_then_oldest(boards: Boards) -> None:
    alice = boards("alice")
    low = alice.add_task("low", priority=1)
    high_old = alice.add_task("high old", priority=5)
    high_new = alice.add_task("high new", priority=5)
    other_lane = alice.add_task("other lane", priority=9, lane="docs")
    order = [alice.claim_next().task.id for _ in range(3)]
    assert order == [high_old.id, high_new.id, low.id]
    with pytest.raises(Refused) as err:
        alice.claim_next()
    assert refusal(err)[0] == "not_found"
    assert alice.claim_next("docs").task.id == other_lane.id


def test_claim_next_skips_unclaimable_and_path_blocked(boards: Boards) -> None:
    alice, bob = boards("alice"), boards("bob")
    blocker = alice.add_task("blocker", priority=0)
    alice.add_task("waits", priority=9, after=[blocker.id])
    alice.add_task("needs gpu", priority=8, needs=["gpu"])
    path_task = alice.add_task("path", priority=7, writes=["core/"])
    free = alice.add_task("free", priority=6)
    bob.lock(["core/auth.py"])
    assert alice.claim_next().task.id == free.id
    assert alice.claim_next().task.id == blocker.id
    with pytest.raises(Refused) as err:
        alice.claim_next()
    reason, facts = refusal(err)
    assert reason == "not_found" and facts["blocked_by_paths"] == [path_task.id]
    assert alice.show(path_task.id).state == "open"


# --- locks ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("held", "wanted", "conflict"),
    [
        ("core/auth.py", "core/auth.py", True),
        ("core/", "core/auth.py", True),
        ("core", "core/auth.py", True),
        ("core/*.py", "core/auth.py", True),
        ("**/auth.py", "core/auth.py", True),
        ("core/**", "core/sub/x.py", True),
        ("core/*.py", "core/sub/x.py", False),
        ("core/auth.py", "core/auth.pyc", False),
        ("core/*.py", "core/*.txt", False),
        ("core/a*.py", "core/*h.py", True),
        ("docs/", "core/", False),
    ],
)
def test_write_lock_overlap(boards: Boards, held: str, wanted: str, conflict: bool) -> None:
    dana, erin = boards("dana"), boards("erin")
    dana.lock([held])
    if conflict:
        with pytest.raises(Refused) as err:
            erin.lock([wanted])
        assert refusal(err)[1]["holder"] == "dana"
        assert erin.check([wanted])
    else:
        assert erin.lock([wanted])[0].pattern == wanted
        assert erin.check([wanted]) == []


def test_readers_coexist_writer_excluded(boards: Boards) -> None:
    dana, erin, fred = boards("dana"), boards("erin"), boards("fred")
    dana.lock(["core/"], mode=LockMode.READ)
    erin.lock(["core/auth.py"], mode=LockMode.READ)
    with pytest.raises(Refused) as err:
        fred.lock(["core/auth.py"])
    assert refusal(err)[1]["holder"] in ("dana", "erin")
    conflicts = fred.check(["core/auth.py"])
    assert sorted(c.lock.agent for c in conflicts) == ["dana", "erin"]
    assert "reading" in conflicts[0].message


def test_own_locks_never_conflict_and_upgrade(boards: Boards) -> None:
    dana = boards("dana")
    dana.lock(["core/"], mode=LockMode.READ)
    dana.lock(["core/auth.py"])
    (again,) = dana.lock(["core/"])
    assert again.mode == LockMode.WRITE
    assert dana.check(["core/auth.py"]) == []
    assert sorted(lk.pattern for lk in dana.locks(mine=True)) == ["core/", "core/auth.py"]


def test_lock_all_or_nothing(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    dana.lock(["core/auth.py"])
    before = snapshot(erin)
    with pytest.raises(Refused):
        erin.lock(["README", "core/auth.py"])
    assert snapshot(erin) == before


def test_lock_for_task_requires_owning_it(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    task = dana.add_task("t")
    with pytest.raises(Refused) as err:
        erin.lock(["README"], task_id=task.id)
    assert refusal(err)[0] == "not_owner"
    dana.claim(task.id)
    (lock,) = dana.lock(["README"], task_id=task.id)
    assert lock.task_id == task.id
    dana.done(task.id)
    assert dana.locks() == []


def test_unlock_exact_pattern_and_by_task(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    dana.lock(["core/", "README"])
    with pytest.raises(Refused) as err:
        erin.unlock(["core/"])
    assert refusal(err)[0] == "not_owner"
    # `core` and `core/` are different patterns: the exact one held must be named.
    with pytest.raises(Refused):
        dana.unlock(["core"])
    assert [lk.pattern for lk in dana.unlock(["core/"])] == ["core/"]
    task = dana.add_task("t", writes=["docs/"])
    dana.claim(task.id)
    assert [lk.pattern for lk in dana.unlock_task(task.id)] == ["docs/"]
    assert [lk.pattern for lk in dana.locks()] == ["README"]


def test_locks_filter_by_path(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    dana.lock(["core/*.py"])
    erin.lock(["docs/"])
    assert [lk.agent for lk in dana.locks(path="core/auth.py")] == ["dana"]
    assert [lk.agent for lk in dana.locks(mine=True)] == ["dana"]
    assert sorted(lk.agent for lk in dana.locks()) == ["dana", "erin"]


def test_paths_resolve_from_current_directory(boards: Boards) -> None:
    dana = boards("dana", prefix="core/")
    (lock,) = dana.lock(["auth.py"])
    assert lock.pattern == "core/auth.py"
    (up,) = dana.lock(["../README"])
    assert up.pattern == "README"


def test_ignorecase_board(boards: Boards) -> None:
    dana = boards("dana")
    erin = boards("erin")
    erin.ignorecase = True
    dana.lock(["Core/Auth.py"])
    with pytest.raises(Refused):
        erin.lock(["core/auth.py"])
    assert boards("fred").lock(["core/auth.py"])  # case-sensitive repo: different file


# --- release, done, heartbeat -------------------------------------------------


def test_release_own_and_force(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    task = dana.add_task("t", writes=["core/"])
    dana.claim(task.id)
    with pytest.raises(Refused) as err:
        erin.release(task.id)
    assert refusal(err) == ("not_owner", {"task": task.id, "holder": "dana", "path": None})
    with pytest.raises(InvalidInput):
        erin.release(task.id, force=True)
    released = erin.release(task.id, force=True, reason="dana is on holiday")
    assert (released.state, released.owner) == ("open", None)
    assert dana.locks() == []
    event = dana.log(task.id)[-1]
    assert event.kind == "force_released"
    assert (
        event.detail["previous_owner"] == "dana" and event.detail["reason"] == "dana is on holiday"
    )
    erin.claim(task.id)
    erin.release(task.id)
    assert dana.log(task.id)[-1].kind == "released"
    with pytest.raises(Refused) as err:
        erin.release(task.id)
    assert refusal(err)[0] == "not_open"


def test_done_only_by_owner(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    task = dana.add_task("t")
    with pytest.raises(Refused) as err:
        dana.done(task.id)
    assert refusal(err)[0] == "not_open"
    dana.claim(task.id)
    with pytest.raises(Refused) as err:
        erin.done(task.id)
    assert refusal(err) == ("not_owner", {"task": task.id, "holder": "dana", "path": None})


def test_heartbeat(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    first, second = dana.add_task("a"), dana.add_task("b")
    dana.claim(first.id)
    dana.claim(second.id)
    assert dana.heartbeat() == [first.id, second.id]
    assert dana.heartbeat([first.id]) == [first.id]
    with pytest.raises(Refused) as err:
        erin.heartbeat([first.id])
    assert refusal(err)[0] == "not_owner"


# --- dependencies ---------------------------------------------------------------


def test_dependency_on_missing_task_and_cycles(boards: Boards) -> None:
    alice = boards("alice")
    before = snapshot(alice)
    with pytest.raises(InvalidInput, match="no task #42"):
        alice.add_task("x", after=[42])
    assert snapshot(alice) == before
    a = alice.add_task("a")
    b = alice.add_task("b", after=[a.id])
    c = alice.add_task("c", after=[b.id])
    before = snapshot(alice)
    with pytest.raises(InvalidInput, match="cycle"):
        alice.add_dependencies(a.id, [c.id])
    with pytest.raises(InvalidInput, match="cycle"):
        alice.add_dependencies(a.id, [a.id])
    assert snapshot(alice) == before
    d = alice.add_task("d")
    assert [dep["id"] for dep in alice.add_dependencies(a.id, [d.id]).depends_on] == [d.id]


# --- bad input writes nothing -----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"title": ""}, InvalidInput),
        ({"title": "   "}, InvalidInput),
        ({"title": "x" * 100_000}, InvalidInput),
        ({"title": "two\nlines"}, InvalidInput),
        ({"title": "ok", "lane": ""}, InvalidInput),
        ({"title": "ok", "lane": "a\tb"}, InvalidInput),
        ({"title": "ok", "writes": ["/etc/passwd"]}, BadPath),
        ({"title": "ok", "writes": ["../outside"]}, BadPath),
        ({"title": "ok", "reads": ["a\x00b"]}, BadPath),
        ({"title": "ok", "reads": ["a\x1bb"]}, BadPath),
        ({"title": "ok", "writes": [""]}, BadPath),
        ({"title": "ok", "after": [-1]}, InvalidInput),
    ],
)
def test_bad_task_input_writes_nothing(
    boards: Boards, kwargs: dict[str, object], error: type
) -> None:
    alice = boards("alice")
    before = snapshot(alice)
    with pytest.raises(error):
        alice.add_task(**kwargs)  # type: ignore[arg-type]
    assert snapshot(alice) == before


def test_title_limit_is_inclusive(boards: Boards) -> None:
    assert boards("alice").add_task("x" * MAX_TITLE).title == "x" * MAX_TITLE


@pytest.mark.parametrize("bad", ["0", "-3", "abc", "1.5", ""])
def test_bad_task_ids(boards: Boards, bad: str) -> None:
    alice = boards("alice")
    for verb in (alice.claim, alice.show, alice.done, alice.release):
        with pytest.raises(InvalidInput):
            verb(bad)  # type: ignore[arg-type]


def test_unknown_state(boards: Boards) -> None:
    with pytest.raises(InvalidInput, match="unknown state"):
        boards("alice").tasks(state="finished")


def test_tasks_filters(boards: Boards) -> None:
    alice, bob = boards("alice"), boards("bob")
    a = alice.add_task("a", lane="x")
    b = alice.add_task("b", lane="y")
    bob.claim(b.id)
    assert [t.id for t in alice.tasks(lane="x")] == [a.id]
    assert [t.id for t in alice.tasks(state="claimed")] == [b.id]
    assert [t.id for t in bob.tasks(mine=True)] == [b.id]
    assert alice.tasks(mine=True) == []
