"""The landing queue, `git lac land` (land_queue.py): real git, a bare server
with the real server hooks (`hooks install --server`), real clones, both
backends; and the local flow (worktrees of one clone, no server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, git, lac_process
from .test_guard import run_git
from .test_landing_flow import hooked

Lac = Callable[..., Result]
CRASH = "LAC_TEST_LANDER_CRASH"


# --- a fleet: a bare server with its hooks, dana's clone and erin's --------------


@pytest.fixture
def fleet(repo: Path, tmp_path: Path, lac: Lac, board_url: str | None) -> tuple[Path, Path, Path]:
    """(server, dana's clone, erin's clone): the server's hooks installed as
    the README says, both clones' hooks too, one board. Task #1 (a.txt) for
    dana, #2 (b.txt) for erin, each claimed on a branch forked from main."""
    server = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(server))
    git(repo, "branch", "-M", "main")
    git(repo, "remote", "add", "origin", str(server))
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    git(repo, "fetch", "-q", "origin")
    git(repo, "remote", "set-head", "origin", "main")
    hooked(server, repo, board_url)
    erin = tmp_path / "erin"
    git(tmp_path, "clone", "-q", str(server), str(erin))
    url = board_url or f"sqlite://{repo / '.git/lacunari/board.db'}"
    git(erin, "config", "lac.url", url)
    assert lac("hooks", "install").code == 0
    assert lac("hooks", "install", cwd=erin).code == 0
    assert lac("task", "add", "A", "--write", "a.txt").code == 0
    assert lac("task", "add", "B", "--write", "b.txt").code == 0
    git(repo, "checkout", "-q", "-b", "line-a")
    assert lac("claim", "1", "--as", "dana").code == 0
    git(erin, "checkout", "-q", "-b", "line-b")
    assert lac("claim", "2", "--as", "erin", cwd=erin).code == 0
    return server, repo, erin


def commit(where: Path, path: str, text: str, agent: str) -> str:
    (where / path).parent.mkdir(parents=True, exist_ok=True)
    (where / path).write_text(text)
    git(where, "add", path)
    done = run_git(where, "commit", "-qm", f"{agent}: {path}", agent=agent)
    assert done.code == 0, done.err
    return git(where, "rev-parse", "HEAD").strip()


def land(where: Path, agent: str, *args: str, env: dict[str, str] | None = None) -> Result:
    wait = ["--timeout", "60s"] if "--wait" in args else []
    return lac_process(where, "land", *args, *wait, env={"LAC_AGENT": agent, **(env or {})})


def show(lac: Lac, task: int) -> dict[str, object]:
    shown = lac("show", str(task), "--json")
    assert shown.code == 0, shown.err
    task_json: dict[str, object] = shown.json["task"]
    return task_json


def contains(where: Path, tip: str, ref: str = "main") -> bool:
    proc = subprocess.run(
        ["git", "merge-base", "--is-ancestor", tip, ref], cwd=where, capture_output=True
    )
    return proc.returncode == 0


def destination_moves(server: Path, tmp_path: Path) -> str:
    """Someone else pushes to main meanwhile (a file nobody holds)."""
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(server), str(other))
    commit(other, "NEWS", "moved on\n", "frank")
    pushed = run_git(other, "push", "-q", "-o", "lac.agent=frank", "origin", "main", agent="frank")
    assert pushed.code == 0, pushed.err
    return git(other, "rev-parse", "HEAD").strip()


def test_two_disjoint_lines_land_with_no_rebase_and_the_destinations_move_is_kept(
    fleet: tuple[Path, Path, Path], lac: Lac, tmp_path: Path
) -> None:
    server, dana, erin = fleet
    a = commit(dana, "a.txt", "a\n", "dana")
    b = commit(erin, "b.txt", "b\n", "erin")
    moved = destination_moves(server, tmp_path)  # both lines forked before this
    first = land(dana, "dana", "--wait", "--json")
    assert first.code == 0, first.err
    assert first.json["outcome"] == "landed"
    second = land(erin, "erin", "--wait")
    assert second.code == 0, second.err
    assert "landed: task #2" in second.out
    for tip in (a, b, moved):
        assert contains(server, tip), tip
    # Nobody rebased: each clone's branch is the commit its worker made.
    assert git(dana, "rev-parse", "line-a").strip() == a
    assert git(erin, "rev-parse", "line-b").strip() == b
    assert show(lac, 1)["state"] == "done" and show(lac, 2)["state"] == "done"
    assert show(lac, 1)["locks"] == [] and show(lac, 2)["locks"] == []
    # The queue is empty again.
    assert git(server, "for-each-ref", "refs/lac/land/").strip() == ""


def test_a_conflicting_line_is_returned_and_its_holder_is_told(
    fleet: tuple[Path, Path, Path], lac: Lac, tmp_path: Path
) -> None:
    server, dana, erin = fleet
    commit(erin, "b.txt", "b\n", "erin")
    commit(erin, "README", "erin's readme\n", "erin")  # undeclared: nobody holds it
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(server), str(other))
    commit(other, "README", "frank's readme\n", "frank")
    assert run_git(other, "push", "-q", "origin", "main", agent="frank").code == 0
    before = git(server, "rev-parse", "main").strip()
    back = land(erin, "erin", "--wait", "--json")
    assert back.code == 1, back.out + back.err
    assert back.json["ok"] is False and back.json["unfinished"] == "returned"
    assert back.json["returned"]["conflicts"] == ["README"]
    assert git(server, "rev-parse", "main").strip() == before  # nothing landed
    task = show(lac, 2)
    assert task["state"] == "claimed" and task["owner"] == "erin"
    assert task["shown_state"] == "returned" and task["landing"] is False
    returned = task["returned"]
    assert isinstance(returned, dict) and returned["reason"] == "conflict"
    assert returned["conflicts"] == ["README"]
    # Its locks stay with its holder: dana cannot take b.txt.
    locks = task["locks"]
    assert isinstance(locks, list) and [lk["pattern"] for lk in locks] == ["b.txt"]
    assert lac("lock", "b.txt", "--as", "dana").code == 1
    # Told on status and on the next heartbeat, with the path.
    status = lac("status", cwd=erin, env={"LAC_AGENT": "erin"})
    assert "returned" in status.out and "README" in status.out, status.out
    beat = lac("heartbeat", cwd=erin, env={"LAC_AGENT": "erin"})
    assert "returned" in beat.err and "README" in beat.err, beat.err
    # The holder fixes the line (merges the destination) and lands again.
    git(erin, "fetch", "-q", "origin")
    subprocess.run(["git", "merge", "-q", "origin/main"], cwd=erin, capture_output=True)
    (erin / "README").write_text("both readmes\n")
    git(erin, "add", "README")
    assert run_git(erin, "commit", "-qm", "merge main", agent="erin").code == 0
    again = land(erin, "erin", "--wait")
    assert again.code == 0, again.out + again.err
    assert show(lac, 2)["state"] == "done"
    assert show(lac, 2)["returned"] is None


SAMPLER = textwrap.dedent(
    """
    import json, subprocess, sys, time
    url, server, tip = sys.argv[1], sys.argv[2], sys.argv[3]
    task, until = int(sys.argv[4]), float(sys.argv[5])
    ask = "SELECT count(*) FROM lac_locks WHERE task_id = "
    if url.startswith("sqlite://"):
        import sqlite3
        conn = sqlite3.connect(url[len("sqlite://"):], timeout=10)
        ask += "?"
    else:
        import psycopg
        conn = psycopg.connect(url, autocommit=True)
        ask += "%s"
    samples = []
    while time.time() < until:
        held = conn.execute(ask, (task,)).fetchone()[0]  # the board first, then the ref
        has = subprocess.run(["git", "merge-base", "--is-ancestor", tip, "main"], cwd=server)
        samples.append([held, has.returncode == 0])
        if not held and has.returncode == 0:
            break
    print(json.dumps(samples))
    """
)


def test_locks_are_never_free_while_the_destination_lacks_the_line(
    fleet: tuple[Path, Path, Path], lac: Lac, tmp_path: Path, board_url: str | None
) -> None:
    server, dana, _ = fleet
    git(server, "config", "lac.land.check", "sleep 1")  # a window before the ref moves
    tip = commit(dana, "a.txt", "a\n", "dana")
    destination_moves(server, tmp_path)
    url = board_url or f"sqlite://{dana / '.git/lacunari/board.db'}"
    sampler = subprocess.Popen(
        [sys.executable, "-c", SAMPLER, url, str(server), tip, "1", str(time.time() + 30)],
        stdout=subprocess.PIPE,
        text=True,
    )
    landed = land(dana, "dana", "--wait")
    out, _ = sampler.communicate(timeout=60)
    assert landed.code == 0, landed.err
    samples = json.loads(out)
    assert len(samples) > 10
    assert [s for s in samples if not s[0] and not s[1]] == []  # free, not in the destination
    assert samples[0] == [1, False] and samples[-1] == [0, True]


def test_a_failing_check_returns_the_line_with_its_exit_code_and_output(
    fleet: tuple[Path, Path, Path], lac: Lac
) -> None:
    server, dana, erin = fleet
    check = "if [ -e bad.txt ]; then echo 'bad.txt is not allowed'; exit 3; fi"
    git(server, "config", "lac.land.check", check)
    commit(dana, "a.txt", "a\n", "dana")
    commit(erin, "b.txt", "b\n", "erin")
    commit(erin, "bad.txt", "x\n", "erin")
    assert land(dana, "dana", "--wait").code == 0
    back = land(erin, "erin", "--wait", "--json")
    assert back.code == 1, back.out + back.err
    why = back.json["returned"]
    assert why["reason"] == "check" and why["exit"] == 3
    assert why["output"] == ["bad.txt is not allowed"]
    assert not contains(server, git(erin, "rev-parse", "HEAD").strip())
    assert show(lac, 2)["shown_state"] == "returned"


def test_only_the_holder_queues_a_line_on_the_server(fleet: tuple[Path, Path, Path]) -> None:
    server, dana, erin = fleet
    commit(dana, "a.txt", "a\n", "dana")
    assert lac_process(dana, "done", "1", env={"LAC_AGENT": "dana"}).code == 0
    theirs = run_git(
        erin,
        "push",
        "-q",
        "--no-verify",
        "-o",
        "lac.agent=erin",
        "origin",
        f"{git(erin, 'rev-parse', 'HEAD').strip()}:refs/lac/land/1",
        agent="erin",
    )
    assert theirs.code != 0 and "task #1" in theirs.err, theirs.err
    odd = run_git(
        dana,
        "push",
        "-q",
        "--no-verify",
        "-o",
        "lac.agent=dana",
        "origin",
        "HEAD:refs/lac/land/abc",
        agent="dana",
    )
    assert odd.code != 0 and "refs/lac/land/TASK-ID" in odd.err, odd.err
    assert git(server, "for-each-ref", "refs/lac/land/").strip() == ""


def test_a_line_that_writes_a_held_path_is_refused_by_the_server_when_queued(
    fleet: tuple[Path, Path, Path],
) -> None:
    # `land` pushes its line without our client pre-push (the server's
    # pre-receive is the judge of the queue): a line carrying a path
    # another agent holds is refused there, naming the holder, and never
    # queued.
    server, _dana, erin = fleet
    (erin / "a.txt").write_text("not erin's\n")
    (erin / "b.txt").write_text("b\n")
    git(erin, "add", "a.txt", "b.txt")
    assert run_git(erin, "commit", "-qm", "b and a", "--no-verify", agent="erin").code == 0
    landed = land(erin, "erin", "2", "--json")
    assert landed.code == 1, landed.err
    said = "dana holds a.txt on task #1"
    assert landed.json == {
        "ok": False,
        "message": f"the server refused task #2's landing line: {said}; "
        "fix the line, then `git lac land 2` again",
        "refused": {"reason": "not_queued", "task": 2, "said": said},
    }
    assert git(server, "for-each-ref", "refs/lac/land/").strip() == ""
    # Not left landing with nothing queued: back in work, its lock kept.
    task = json.loads(lac_process(erin, "show", "2", "--json").out)["task"]
    assert task["shown_state"] == "returned" and task["owner"] == "erin"
    assert task["returned"]["reason"] == "not_queued" and task["returned"]["said"] == said
    assert [lk["pattern"] for lk in task["locks"]] == ["b.txt"]


def test_a_line_the_server_cannot_take_goes_back_to_its_holder(
    fleet: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    # The server gone (here: a push URL that names nothing): not queued, so
    # not left landing; one line, exit 3, the claim in work again.
    _server, _dana, erin = fleet
    commit(erin, "b.txt", "b\n", "erin")
    git(erin, "config", "remote.origin.pushurl", str(tmp_path / "gone.git"))
    landed = land(erin, "erin", "2")
    assert landed.code == 3, landed.err
    assert landed.err.count("\n") == 1
    assert "task #2's landing line was not queued (" in landed.err
    assert "then `git lac land 2` again" in landed.err
    task = json.loads(lac_process(erin, "show", "2", "--json").out)["task"]
    assert task["shown_state"] == "returned" and task["returned"]["reason"] == "not_queued"


def wait_lander_idle(server: Path, timeout: float = 30) -> None:
    """Until no lander holds the server's lock (the detached one finished)."""
    import fcntl

    deadline = time.time() + timeout
    path = server / "lac-lander.lock"
    while time.time() < deadline:
        if path.exists():
            fd = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.1)
    raise AssertionError("the lander never finished")


def test_a_server_lander_killed_before_the_ref_update_resumes_on_the_next_push(
    fleet: tuple[Path, Path, Path], lac: Lac, tmp_path: Path
) -> None:
    server, dana, _ = fleet
    tip = commit(dana, "a.txt", "a\n", "dana")
    queued = land(dana, "dana", env={CRASH: "before-update-ref"})  # the push's env reaches the hook
    assert queued.code == 0, queued.err
    time.sleep(0.5)
    wait_lander_idle(server)
    assert not contains(server, tip)
    assert git(server, "for-each-ref", "--format=%(refname)", "refs/lac/land/").split() == [
        "refs/lac/land/1"
    ]
    assert show(lac, 1)["landing"] is True and show(lac, 1)["locks"]  # nothing freed
    destination_moves(server, tmp_path)  # the next push's post-receive resumes the queue
    time.sleep(0.5)
    wait_lander_idle(server)
    assert contains(server, tip)
    assert show(lac, 1)["state"] == "done"
    assert git(server, "for-each-ref", "refs/lac/land/").strip() == ""


# --- the local flow: worktrees of one clone, no server ---------------------------


@pytest.fixture
def local(repo: Path, tmp_path: Path, lac: Lac) -> tuple[Path, Path, Path]:
    """(repository, dana's worktree, erin's worktree): destination main, no
    remote; tasks #1 (a.txt) and #2 (b.txt), claimed in their worktrees."""
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-q", "--detach")  # nobody works on main itself
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "A", "--write", "a.txt").code == 0
    assert lac("task", "add", "B", "--write", "b.txt").code == 0
    wa, wb = tmp_path / "wa", tmp_path / "wb"
    git(repo, "worktree", "add", "-q", "-b", "line-a", str(wa), "main")
    git(repo, "worktree", "add", "-q", "-b", "line-b", str(wb), "main")
    assert lac("claim", "1", "--as", "dana", cwd=wa).code == 0
    assert lac("claim", "2", "--as", "erin", cwd=wb).code == 0
    return repo, wa, wb


def main_moves_locally(repo: Path) -> str:
    tree = git(repo, "rev-parse", "main^{tree}").strip()
    blob = git(repo, "hash-object", "-w", "--stdin", input="moved\n").strip()
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "tmp-index")}
    subprocess.run(["git", "read-tree", tree], cwd=repo, env={**os.environ, **index}, check=True)
    subprocess.run(
        ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},NEWS"],
        cwd=repo,
        env={**os.environ, **index},
        check=True,
    )
    new_tree = subprocess.run(
        ["git", "write-tree"],
        cwd=repo,
        env={**os.environ, **index},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    moved = git(repo, "commit-tree", new_tree, "-p", "main", "-m", "main moves").strip()
    git(repo, "update-ref", "refs/heads/main", moved)
    return moved


def test_the_local_flow_lands_in_the_repository_itself(
    local: tuple[Path, Path, Path], lac: Lac
) -> None:
    repo, wa, wb = local
    a = commit(wa, "a.txt", "a\n", "dana")
    b = commit(wb, "b.txt", "b\n", "erin")
    moved = main_moves_locally(repo)
    first = land(wa, "dana", "--json")
    assert first.code == 0, first.err
    assert first.json["outcome"] == "landed" and first.json["destination"] == "main"
    assert land(wb, "erin").code == 0
    for tip in (a, b, moved):
        assert contains(repo, tip)
    assert show(lac, 1)["state"] == "done" and show(lac, 2)["state"] == "done"


def test_a_checked_out_destination_follows_the_landing_in_its_work_tree(
    local: tuple[Path, Path, Path], lac: Lac
) -> None:
    # main checked out in the repository's own work tree, as a person keeps
    # it: the landing moves its files too, as a fast-forward there would,
    # never the ref alone (which would show the landed work as undone).
    repo, wa, wb = local
    git(repo, "checkout", "-q", "main")
    (repo / "notes.txt").write_text("mine, uncommitted\n")  # not in the lines' way
    commit(wa, "a.txt", "a\n", "dana")
    landed = land(wa, "dana")
    assert landed.code == 0, landed.err
    assert (repo / "a.txt").read_text() == "a\n"
    assert git(repo, "status", "--porcelain").splitlines() == ["?? notes.txt"]
    assert show(lac, 1)["state"] == "done"

    # Uncommitted work in the way: refused in one line, the line kept queued
    # and the task landing; once it is moved aside, the lander lands it.
    (repo / "b.txt").write_text("someone's draft\n")
    b = commit(wb, "b.txt", "b\n", "erin")
    before = git(repo, "rev-parse", "main").strip()
    blocked = land(wb, "erin")
    assert blocked.code == 3, blocked.err
    assert blocked.err.count("\n") == 1 and "checked out in" in blocked.err
    assert "the lines stay queued" in blocked.err
    assert git(repo, "rev-parse", "main").strip() == before
    assert (repo / "b.txt").read_text() == "someone's draft\n"
    assert show(lac, 2)["landing"] is True
    assert git(repo, "for-each-ref", "--format=%(objectname)", "refs/lac/land/2").strip() == b
    (repo / "b.txt").unlink()
    again = lander(repo)
    assert again.code == 0, again.err
    assert contains(repo, b) and (repo / "b.txt").read_text() == "b\n"
    assert git(repo, "status", "--porcelain").splitlines() == ["?? notes.txt"]
    assert show(lac, 2)["state"] == "done"


def lander(repo: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return lac_process(repo, "lander", "--once", "--json", *args, env=env)


def test_a_lander_killed_between_merge_and_ref_update_loses_nothing_lands_nothing_twice(
    local: tuple[Path, Path, Path], lac: Lac
) -> None:
    repo, wa, wb = local
    a = commit(wa, "a.txt", "a\n", "dana")
    b = commit(wb, "b.txt", "b\n", "erin")
    before = git(repo, "rev-parse", "main").strip()
    for where, agent in ((wa, "dana"), (wb, "erin")):
        killed = land(where, agent, env={CRASH: "before-update-ref"})
        assert killed.code in (-9, 137), killed
    assert git(repo, "rev-parse", "main").strip() == before  # nothing moved
    assert show(lac, 1)["locks"] and show(lac, 2)["locks"]  # nothing freed
    # The restart: both queued lines, disjoint, go in one batch, one ref update.
    resumed = lander(repo)
    assert resumed.code == 0, resumed.err
    assert sorted(resumed.json["landed"]) == [1, 2] and resumed.json["batches"] == 1
    assert contains(repo, a) and contains(repo, b)
    # a fast-forward to the first, one merge commit for the second: 3 commits, each once
    assert git(repo, "rev-list", "--count", f"{before}..main").strip() == "3"
    assert show(lac, 1)["state"] == "done" and show(lac, 2)["state"] == "done"
    again = lander(repo)
    assert again.code == 0 and again.json["landed"] == [] and again.json["batches"] == 0


def test_a_lander_killed_after_the_ref_update_settles_it_without_merging_again(
    local: tuple[Path, Path, Path], lac: Lac
) -> None:
    repo, wa, _ = local
    a = commit(wa, "a.txt", "a\n", "dana")
    main_moves_locally(repo)
    killed = land(wa, "dana", env={CRASH: "after-update-ref"})
    assert killed.code in (-9, 137), killed
    landed_at = git(repo, "rev-parse", "main").strip()
    assert contains(repo, a)
    assert show(lac, 1)["locks"], "freed before the settle"  # held, never freed early
    resumed = lander(repo)
    assert resumed.code == 0, resumed.err
    assert resumed.json["landed"] == [1] and resumed.json["batches"] == 0
    assert git(repo, "rev-parse", "main").strip() == landed_at  # not merged twice
    assert show(lac, 1)["state"] == "done" and show(lac, 1)["locks"] == []


def first_parents(repo: Path, since: str) -> list[str]:
    out = git(repo, "log", "--first-parent", "--reverse", "--format=%s", f"{since}..main")
    return out.splitlines()


def test_a_line_waits_for_the_task_it_comes_after(local: tuple[Path, Path, Path], lac: Lac) -> None:
    repo, wa, wb = local
    assert lac("task", "after", "1", "2", "--as", "dana", cwd=wa).code == 0
    before = git(repo, "rev-parse", "main").strip()
    commit(wa, "a.txt", "a\n", "dana")
    commit(wb, "b.txt", "b\n", "erin")
    waits = land(wa, "dana", "--json")  # #2 is not done: #1 stays queued
    assert waits.code == 1 and waits.json["outcome"] == "queued", waits
    assert git(repo, "rev-parse", "main").strip() == before
    assert show(lac, 1)["landing"] is True
    assert land(wb, "erin").code == 0  # its lander lands #2, then #1
    assert show(lac, 1)["state"] == "done" and show(lac, 2)["state"] == "done"
    assert first_parents(repo, before) == ["erin: b.txt", "Land task #1: A"]


def test_a_stacked_line_lands_after_the_line_it_is_built_on(
    local: tuple[Path, Path, Path], lac: Lac
) -> None:
    repo, wa, wb = local
    before = git(repo, "rev-parse", "main").strip()
    base = commit(wb, "b.txt", "b\n", "erin")  # erin's #2
    git(wa, "merge", "-q", "--ff-only", base)  # dana's #1 is built on it
    commit(wa, "a.txt", "a\n", "dana")
    for where, agent in ((wb, "erin"), (wa, "dana")):
        assert land(where, agent, env={CRASH: "before-update-ref"}).code in (-9, 137)
    resumed = lander(repo)
    assert resumed.code == 0, resumed.err
    assert resumed.json["landed"] == [2, 1] and resumed.json["batches"] == 2
    log = first_parents(repo, before)
    assert log[0] == "erin: b.txt" and log[-1] == "dana: a.txt", log  # fast-forwards, in order
