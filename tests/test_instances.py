"""A claim is held by an agent *at an instance*: one working tree of one clone.

The same agent name from another clone or linked worktree is another holder:
refused its claim and its commits of the held paths, unless it takes over on
the record; a crashed instance's claim expires even while the other keeps
working under the same name.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from git_lacunari.identity import instance_of
from git_lacunari.repo import discover
from git_lacunari.store import open_store

from .conftest import Result, git, lac_inprocess

Lac = Callable[..., Result]
BIN = str(Path(sys.executable).parent)


def places(kind: str, repo: Path, tmp_path: Path, url: str | None) -> tuple[Path, Path]:
    """Two working trees of one project on one board: two clones, or two
    linked worktrees of one clone."""
    if kind == "clones":
        first, second = tmp_path / "a", tmp_path / "b"
        git(tmp_path, "clone", "-q", str(repo), str(first))
        git(tmp_path, "clone", "-q", str(repo), str(second))
        for clone in (first, second):
            init = ["init"] + (["--url", url] if url else [])
            assert lac_inprocess(clone, *init).code == 0
    else:
        first, second = tmp_path / "wt1", tmp_path / "wt2"
        git(repo, "worktree", "add", "-q", "-b", "one", str(first))
        git(repo, "worktree", "add", "-q", "-b", "two", str(second))
    return first, second


def age_claims(where: Path, url: str | None, seconds: float) -> None:
    """Move every claim's heartbeat back: a silence, without sleeping."""
    store = open_store(url, discover(where).common_dir)
    try:
        with store.write():
            sql = "UPDATE lac_tasks SET heartbeat_at = heartbeat_at - {} WHERE state = 'claimed'"
            store._script(sql.format(float(seconds)))  # type: ignore[attr-defined]
    finally:
        store.close()


@pytest.fixture(params=["clones", "worktrees"])
def two(
    request: pytest.FixtureRequest, lac: Lac, repo: Path, tmp_path: Path, board_url: str | None
) -> tuple[Path, Path, dict[str, str]]:
    if request.param == "clones" and board_url is None:
        pytest.skip("two clones share a board only through a server")
    first, second = places(request.param, repo, tmp_path, board_url)
    # Clones: the same user.email, so the same default name. Worktrees would
    # get distinct default names: give them the same explicit one.
    env = {"LAC_AGENT": "bot"} if request.param == "worktrees" else {}
    return first, second, env


def test_same_name_elsewhere_is_refused_claim_commit_and_done(
    two: tuple[Path, Path, dict[str, str]],
) -> None:
    first, second, env = two
    assert lac_inprocess(first, "task", "add", "auth", "--write", "README", env=env).code == 0
    mine = lac_inprocess(first, "claim", "1", "--json", env=env)
    assert mine.code == 0 and mine.json["again"] is False
    name = mine.json["task"]["owner"]
    assert lac_inprocess(first, "claim", "1", "--json", env=env).json["again"] is True

    other = lac_inprocess(second, "claim", "1", "--json", env=env)
    assert other.code == 1, other
    refused = other.json["refused"]
    assert refused["reason"] == "already_claimed" and refused["holder"] == name
    assert refused["where"].endswith(":" + str(first)), refused
    assert str(first) in other.json["message"] and "--take-over" in other.json["message"]

    (second / "README").write_text("the other instance's edit\n")
    git(second, "add", "README")
    guard = lac_inprocess(second, "guard", "pre-commit", "--json", env=env)
    assert guard.code == 1 and guard.json["refused"]["path"] == "README", guard
    assert lac_inprocess(second, "check", "README", env=env).code == 1
    assert lac_inprocess(second, "done", "1", "--json", env=env).json["refused"]["reason"] == (
        "already_claimed"
    )
    assert lac_inprocess(second, "heartbeat", "1", env=env).code == 1
    assert lac_inprocess(second, "release", "1", env=env).code == 1
    for verb in (("task", "edit", "1", "--title", "hijacked"), ("task", "cancel", "1")):
        elsewhere = lac_inprocess(second, *verb, "--json", env=env)
        assert elsewhere.json["refused"]["reason"] == "already_claimed", (verb, elsewhere)
    assert lac_inprocess(first, "show", "1", "--json", env=env).json["task"]["title"] == "auth"

    # The holder itself is unaffected: its own commit of the path passes.
    (first / "README").write_text("the holder's edit\n")
    git(first, "add", "README")
    assert lac_inprocess(first, "guard", "pre-commit", env=env).code == 0
    shown = lac_inprocess(first, "show", "1", "--json", env=env).json["task"]
    assert shown["state"] == "claimed" and shown["owner"] == name
    assert shown["instance"] == instance_of(discover(first)).id


def test_take_over_moves_the_claim_and_its_locks_on_the_record(
    two: tuple[Path, Path, dict[str, str]],
) -> None:
    first, second, env = two
    lac_inprocess(first, "task", "add", "auth", "--write", "README", env=env)
    assert lac_inprocess(first, "claim", "1", env=env).code == 0
    taken = lac_inprocess(second, "claim", "1", "--take-over", "--json", env=env)
    assert taken.code == 0, taken.err
    here = instance_of(discover(second)).id
    assert taken.json["task"]["instance"] == here
    assert [lk["instance"] for lk in taken.json["locks"]] == [here]

    events = lac_inprocess(second, "log", "1", "--json", env=env).json["events"]
    moved = [e for e in events if e["kind"] == "taken_over"]
    assert len(moved) == 1
    assert moved[0]["detail"]["previous_instance"] == instance_of(discover(first)).id
    assert moved[0]["detail"]["previous_where"].endswith(":" + str(first))
    assert moved[0]["detail"]["instance"] == here
    # Told as a move, naming where from (not "already yours").
    again = lac_inprocess(first, "claim", "1", "--take-over", env=env)
    assert again.code == 0, again.err
    assert again.out.startswith(f"taken over here from {socket.gethostname()}:{second}"), again.out
    taken = lac_inprocess(second, "claim", "1", "--take-over", "--json", env=env)
    assert taken.code == 0 and taken.json["task"]["instance"] == here
    # The place it left says where it is held now.
    status = lac_inprocess(first, "status", env=env)
    assert f"(held at {socket.gethostname()}:{second}, not here)" in status.out, status.out
    assert "not here" not in lac_inprocess(second, "status", env=env).out

    # Now the first place is the other one.
    assert lac_inprocess(first, "heartbeat", "1", env=env).code == 1
    (first / "README").write_text("late edit\n")
    git(first, "add", "README")
    assert lac_inprocess(first, "guard", "pre-commit", env=env).code == 1
    assert lac_inprocess(second, "done", "1", env=env).code == 0


def test_take_over_never_takes_another_agents_claim(
    two: tuple[Path, Path, dict[str, str]],
) -> None:
    first, second, env = two
    lac_inprocess(first, "task", "add", "auth", env=env)
    assert lac_inprocess(first, "claim", "1", "--as", "dana").code == 0
    other = lac_inprocess(second, "claim", "1", "--take-over", "--json", env=env)
    assert other.code == 1 and other.json["refused"]["holder"] == "dana"
    assert other.json["refused"]["where"] is None


def test_a_crashed_instance_expires_while_the_other_keeps_working(
    two: tuple[Path, Path, dict[str, str]], board_url: str | None
) -> None:
    first, second, env = two
    lac_inprocess(first, "task", "add", "crashed one's", "--write", "core/", env=env)
    lac_inprocess(first, "task", "add", "living one's", env=env)
    assert lac_inprocess(first, "claim", "1", "--stale-after", "10m", env=env).code == 0
    assert lac_inprocess(second, "claim", "2", "--stale-after", "10m", env=env).code == 0
    age_claims(first, board_url, 3600)
    # The living instance keeps running commands under the same name: each
    # refreshes its own claim only.
    assert lac_inprocess(second, "tasks", env=env).code == 0
    assert lac_inprocess(second, "heartbeat", env=env).code == 0
    swept = lac_inprocess(second, "keeper", "--once", "--json", env=env)
    assert swept.code == 0, swept.err
    assert [f["task"] for f in swept.json["expired"]] == [1]
    states = {t["id"]: t["state"] for t in lac_inprocess(second, "tasks", "--json").json["tasks"]}
    assert states == {1: "open", 2: "claimed"}
    assert lac_inprocess(second, "locks", "--json").json["locks"] == []


def test_whoami_shows_a_stable_instance_per_working_tree(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    one = lac("whoami", "--json").json
    assert one["instance"] == lac("whoami", "--json").json["instance"]
    assert one["where"].endswith(":" + str(repo))
    assert len(one["instance"]) == 16 and "instance: " in lac("whoami").out
    stored = json.loads((repo / ".git" / "lacunari" / "instance.json").read_text())
    assert stored["id"] == one["instance"] and stored["path"] == str(repo)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    other = lac("whoami", "--json", cwd=linked).json
    assert other["instance"] != one["instance"]
    assert (repo / ".git" / "worktrees" / "linked" / "lacunari" / "instance.json").exists()


def test_a_copied_working_tree_is_a_new_instance(repo: Path, tmp_path: Path) -> None:
    import shutil

    first = instance_of(discover(repo)).id
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    assert instance_of(discover(copy)).id != first
    assert instance_of(discover(repo)).id == first


def test_a_moved_worktree_keeps_its_instance_and_its_claims(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    """`git worktree move` (and `mv` of a clone) is the same working tree at
    a new path: it keeps its instance, so its owner's claim stays its own."""
    old, new = tmp_path / "wt", tmp_path / "moved" / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(old))
    assert lac("task", "add", "auth", "--write", "README").code == 0
    mine = lac("claim", "1", "--json", cwd=old)
    assert mine.code == 0, mine.err
    before = mine.json["task"]["instance"]
    new.parent.mkdir()
    git(repo, "worktree", "move", str(old), str(new))
    here = lac("whoami", "--json", cwd=new).json
    assert here["instance"] == before and here["where"].endswith(":" + str(new))
    (new / "README").write_text("the owner's edit, after the move\n")
    git(new, "add", "README")
    assert lac("guard", "pre-commit", cwd=new).code == 0
    assert lac("done", "1", cwd=new).code == 0

    # The main working tree moved with `mv`: the same instance too.
    first = instance_of(discover(repo)).id
    moved = tmp_path / "elsewhere"
    repo.rename(moved)
    git(moved, "worktree", "repair")
    assert instance_of(discover(moved)).id == first


def test_a_moved_worktree_commits_through_real_hooks_and_finishes_its_claim(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    """Issue 22: after `git worktree move`, the holder's real `git commit`
    (installed hooks) passes, its heartbeat refreshes the claim, `done`
    finishes it; another agent's commit of the held path is still refused."""
    from .conftest import lac_process
    from .test_guard import run_git

    assert lac_process(repo, "hooks", "install").code == 0
    old, new = tmp_path / "wt", tmp_path / "moved" / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(old))
    assert lac("task", "add", "auth", "--write", "README").code == 0
    assert lac("claim", "1", "--as", "dana", cwd=old).code == 0
    new.parent.mkdir()
    git(repo, "worktree", "move", str(old), str(new))
    beat = lac("heartbeat", "--as", "dana", "--json", cwd=new)
    assert beat.code == 0 and beat.json["refreshed"] == [1], beat.err
    (new / "README").write_text("the owner's edit, after the move\n")
    git(new, "add", "README")
    committed = run_git(new, "commit", "-qm", "after the move", agent="dana")
    assert committed.code == 0, committed.err
    (repo / "README").write_text("someone else's edit\n")
    git(repo, "add", "README")
    refused = run_git(repo, "commit", "-qm", "not mine", agent="erin")
    assert refused.code != 0 and "held by dana" in refused.err, refused.err
    assert lac("done", "1", "--now", "--as", "dana", cwd=new).code == 0
    assert run_git(repo, "commit", "-qm", "free now", agent="erin").code == 0


def test_lac_instance_is_honoured_only_for_this_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_lacunari.errors import InvalidInput

    from .conftest import make_repo

    main = instance_of(discover(repo))
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    monkeypatch.setenv("LAC_INSTANCE", main.id)
    lent = instance_of(discover(linked))
    assert lent.id == main.id and lent.source == "environment LAC_INSTANCE"
    stranger = make_repo(tmp_path / "stranger")
    with pytest.raises(InvalidInput, match="names no working tree of this repository"):
        instance_of(discover(stranger))
    monkeypatch.setenv("LAC_INSTANCE", "0123456789abcdef")
    with pytest.raises(InvalidInput):
        instance_of(discover(linked))


def test_a_drainers_command_in_a_task_worktree_acts_as_the_drainer(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    lac("task", "add", "one", "--lane", "build", "--write", "README")
    seen = tmp_path / "whoami.json"
    # The command heartbeats and marks nothing itself: a heartbeat from the
    # task worktree succeeds only if it acts as the drainer's instance.
    script = f'git lac heartbeat "$LAC_TASK_ID" && git lac whoami --json > "{seen}"'
    path = BIN + os.pathsep + os.environ["PATH"]
    result = lac(
        "drain",
        "--lane",
        "build",
        "--worktree",
        "--json",
        "--as",
        "d1",
        "--",
        "sh",
        "-c",
        script,
        env={"PATH": path},
    )
    assert result.code == 0, result.err
    assert result.json["done"] == [1], result.json
    who = json.loads(seen.read_text())
    assert who["agent"] == "d1" and who["instance"] == instance_of(discover(repo)).id
    assert who["instance_source"] == "environment LAC_INSTANCE"


def test_instance_list_and_adopt_move_every_claim_here(
    two: tuple[Path, Path, dict[str, str]],
) -> None:
    """`git lac instance list` shows where the agent's claims are held;
    `instance adopt ID` moves them all here, on the record, and nothing else:
    a lock of no claim stays, another agent's claim is never touched."""
    first, second, env = two
    for title, path in (("auth", "core/auth.py"), ("docs", "docs/")):
        assert lac_inprocess(first, "task", "add", title, "--write", path, env=env).code == 0
        assert lac_inprocess(first, "claim", "--next", env=env).code == 0
    assert lac_inprocess(first, "lock", "loose.txt", env=env).code == 0
    assert lac_inprocess(first, "task", "add", "theirs", "--write", "x/", env=env).code == 0
    assert lac_inprocess(first, "claim", "3", "--as", "erin").code == 0
    old = instance_of(discover(first)).id
    here = instance_of(discover(second)).id

    listed = lac_inprocess(second, "instance", "list", "--json", env=env)
    assert listed.code == 0, listed.err
    rows = {i["id"]: i for i in listed.json["instances"]}
    assert rows[old]["claims"] == 2 and rows[old]["locks"] == 3 and not rows[old]["here"]
    assert rows[old]["where"].endswith(":" + str(first))

    adopted = lac_inprocess(second, "instance", "adopt", old, "--json", env=env)
    assert adopted.code == 0, adopted.err
    assert adopted.json["adopted"] == [1, 2]
    assert {t["instance"] for t in adopted.json["tasks"]} == {here}
    rows = {
        i["id"]: i
        for i in lac_inprocess(second, "instance", "list", "--json", env=env).json["instances"]
    }
    assert (rows[here]["claims"], rows[here]["locks"], rows[here]["here"]) == (2, 2, True)
    assert (rows[old]["claims"], rows[old]["locks"]) == (0, 1)  # loose.txt: no claim's
    kinds = [e["kind"] for e in lac_inprocess(second, "log", "2", "--json").json["events"]]
    assert kinds[-1] == "taken_over"
    erin = lac_inprocess(second, "show", "3", "--json").json["task"]
    assert erin["owner"] == "erin"  # never another agent's
    # Human output names where each came from.
    again = lac_inprocess(first, "instance", "adopt", here, env=env)
    assert again.code == 0 and again.out.count("taken over here from ") == 2, again.out


@pytest.mark.parametrize(
    "given, says",
    [
        ("nope", "no instance 'nope' of"),
        ("", "no instance '' of"),
        ("HERE", "is this working tree's own"),
    ],
)
def test_instance_adopt_refuses_what_is_not_another_instance_of_ours(
    lac: Lac, repo: Path, given: str, says: str
) -> None:
    assert lac("task", "add", "t", "--write", "a").code == 0
    assert lac("claim", "1").code == 0
    if given == "HERE":
        given = instance_of(discover(repo)).id
    before = lac("log", "--json").json["events"]
    refused = lac("instance", "adopt", given)
    assert refused.code == 2 and says in refused.err, refused
    assert len(refused.err.strip().splitlines()) == 1
    assert lac("log", "--json").json["events"] == before
