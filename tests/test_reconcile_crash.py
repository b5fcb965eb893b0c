"""A reconcile killed half-way (SIGKILL of its whole process group) is undone
by `--abort`: every path it had begun to write, the index, and the stale
`.git/index.lock` its git left; a live git holding the lock, or a lock that
is not ours, is reported in one line and left alone.

Real processes, stopped at a chosen step with the test seam
``LAC_TEST_STOP_AT`` (the process stops itself with SIGSTOP), or inside
git's own checkout by a smudge filter that stops there; then the whole
process group is killed. No sleeps: the test waits for the stop itself.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_lacunari.reconcile.stale import alive, process_started
from git_lacunari.reconcile.worktree import STEPS, STOP_AT_ENV

from .conftest import git, lac_inprocess
from .test_reconcile_safety import snapshot

FILES = 300
PAUSED = "big/f150.txt"  # the smudge filter stops git's checkout here


def fork_wide(repo: Path, tmp_path: Path) -> None:
    """Hundreds of files changed on their side, one conflict; a smudge filter
    that stops git half-way through writing them when asked to."""
    script = tmp_path / "pause.sh"
    script.write_text(
        '#!/bin/sh\nif [ -n "$PAUSE_FIFO" ]; then echo reached > "$PAUSE_FIFO"; kill -STOP $$; fi\n'
        "exec cat\n"
    )
    git(repo, "config", "filter.pause.smudge", f"sh {script}")
    git(repo, "config", "filter.pause.clean", "cat")
    (repo / ".gitattributes").write_text(f"{PAUSED} filter=pause\n")
    (repo / "big").mkdir()
    for n in range(FILES):
        (repo / "big" / f"f{n:03}.txt").write_text(f"base {n}\n")
    (repo / "doc.txt").write_text("base\n")
    (repo / "keep.txt").write_text("keep\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "offline")
    for n in range(FILES):
        (repo / "big" / f"f{n:03}.txt").write_text(f"theirs {n}\n" * 50)
    (repo / "big" / "new.txt").write_text("theirs only\n")
    (repo / "doc.txt").write_text("theirs\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "doc.txt").write_text("ours\n")
    git(repo, "commit", "-qam", "ours")
    # Work of ours elsewhere that an abort must keep.
    (repo / "keep.txt").write_text("an unstaged change elsewhere\n")
    (repo / "untracked.txt").write_text("mine\n")


def start(repo: Path, env: dict[str, str], what: str = "offline") -> subprocess.Popen[bytes]:
    """`git-lac reconcile offline` (or --abort) in its own process group."""
    return subprocess.Popen(
        [sys.executable, "-m", "git_lacunari", "reconcile", what],
        cwd=repo,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def wait_stopped(proc: subprocess.Popen[bytes]) -> None:
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), f"it ended instead of stopping: {status}"


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "reached"
    os.mkfifo(path)
    yield path


def wait_reached(path: Path, proc: subprocess.Popen[bytes]) -> None:
    """Until the smudge filter says git's checkout reached it (bounded)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([fd], [], [], 120)
        assert ready and os.read(fd, 64) == b"reached\n", "git never reached the paused file"
    finally:
        os.close(fd)
    assert proc.poll() is None


def lac(repo: Path, *args: str) -> tuple[int, str, str]:
    result = lac_inprocess(repo, *args)
    return result.code, result.out, result.err


def state_of(repo: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((repo / ".git" / "lac-reconcile.json").read_text())
    return data


def test_killed_inside_gits_checkout_abort_removes_the_stale_lock_and_restores_all(
    lac_board: None, repo: Path, tmp_path: Path, fifo: Path
) -> None:
    fork_wide(repo, tmp_path)
    before = snapshot(repo)
    proc = start(repo, {"PAUSE_FIFO": str(fifo)})
    wait_reached(fifo, proc)
    kill_group(proc)
    lock = repo / ".git" / "index.lock"
    assert lock.exists(), "git was killed holding the index lock"
    written = sum("theirs" in p.read_text() for p in (repo / "big").glob("f*.txt"))
    assert 100 <= written < FILES, f"half-written: {written} of {FILES}"
    # What git alone says now: the lock stops it.
    assert subprocess.run(["git", "add", "keep.txt"], cwd=repo, capture_output=True).returncode
    code, _, err = lac(repo, "reconcile", "--abort")
    assert code == 0, err
    assert (
        err
        == f"git lac: removed .git/index.lock, left by the interrupted reconcile (pid {proc.pid})\n"
    )
    assert not lock.exists()
    assert snapshot(repo) == before
    assert not (repo / ".git" / "lac-reconcile.json").exists()
    # And the reconcile runs again, whole, to the same conflict.
    code, _, err = lac(repo, "reconcile", "offline")
    assert code == 1 and "1 conflict(s) left" in err


def test_an_abort_killed_inside_its_own_checkout_is_finished_by_the_next(
    lac_board: None, repo: Path, tmp_path: Path, fifo: Path
) -> None:
    fork_wide(repo, tmp_path)
    before = snapshot(repo)
    proc = start(repo, {"PAUSE_FIFO": str(fifo)})
    wait_reached(fifo, proc)
    kill_group(proc)
    # The abort's own `git checkout` writes the paused file back: killed there.
    abort = start(repo, {"PAUSE_FIFO": str(fifo)}, "--abort")
    wait_reached(fifo, abort)
    kill_group(abort)
    assert (repo / ".git" / "index.lock").exists()
    assert state_of(repo)["pid"] == abort.pid
    code, _, err = lac(repo, "reconcile", "--abort")
    assert code == 0, err
    assert f"(pid {abort.pid})" in err
    assert snapshot(repo) == before


@pytest.mark.parametrize("step", STEPS)
def test_killed_at_each_step_abort_restores_exactly(
    lac_board: None, repo: Path, tmp_path: Path, step: str
) -> None:
    fork_wide(repo, tmp_path)
    before = snapshot(repo)
    proc = start(repo, {STOP_AT_ENV: step})
    wait_stopped(proc)
    kill_group(proc)
    assert state_of(repo)["pid"] == proc.pid
    written = "theirs" in (repo / "big" / "f000.txt").read_text()
    assert written == (step != "state-saved"), "it had written the work tree"
    code, _, err = lac(repo, "reconcile", "--continue")
    assert code == 3 and "interrupted" in err
    code, _, err = lac(repo, "reconcile", "--abort")
    assert code == 0, err
    assert snapshot(repo) == before


def test_abort_waits_for_a_reconcile_that_still_runs(
    lac_board: None, repo: Path, tmp_path: Path
) -> None:
    fork_wide(repo, tmp_path)
    before = snapshot(repo)
    proc = start(repo, {STOP_AT_ENV: "tree-written"})
    try:
        wait_stopped(proc)
        written = (repo / "big" / "f000.txt").read_text()
        code, _, err = lac(repo, "reconcile", "--abort")
        assert code == 3
        assert err.splitlines()[0] == (
            f"git lac: the reconcile is still writing here (pid {proc.pid}); "
            "let it finish or stop it, then --abort again"
        )
        assert len(err.splitlines()) == 1
        assert (repo / "big" / "f000.txt").read_text() == written, "nothing touched under it"
        assert (repo / ".git" / "lac-reconcile.json").exists()
    finally:
        kill_group(proc)
    code, _, err = lac(repo, "reconcile", "--abort")
    assert code == 0, err
    assert snapshot(repo) == before


def test_a_live_git_holding_the_lock_is_reported_not_clobbered(
    lac_board: None, repo: Path, tmp_path: Path
) -> None:
    fork_wide(repo, tmp_path)
    before = snapshot(repo)
    proc = start(repo, {STOP_AT_ENV: "state-saved"})
    wait_stopped(proc)
    kill_group(proc)
    # A real git that holds the index lock while it waits for its input.
    foreign = subprocess.Popen(
        ["git", "update-index", "--index-info"], cwd=repo, stdin=subprocess.PIPE
    )
    lock = repo / ".git" / "index.lock"
    try:
        # It takes the lock before reading: wait until it has (bounded, no sleep).
        for _ in range(10_000):
            if lock.exists():
                break
            select.select([], [], [], 0.01)
        assert lock.exists()
        code, _, err = lac(repo, "reconcile", "--abort")
        assert code == 3
        assert err.splitlines() == [
            f"git lac: another process holds .git/index.lock (pid {foreign.pid}: "
            "git update-index --index-info); let it finish, then --abort again"
        ]
        assert lock.exists(), "a live git's lock is never removed"
    finally:
        assert foreign.stdin is not None
        foreign.stdin.close()
        assert foreign.wait() == 0
    code, _, err = lac(repo, "reconcile", "--abort")
    assert code == 0, err
    assert snapshot(repo) == before


def test_a_lock_older_than_the_reconcile_is_not_its_to_remove(
    lac_board: None, repo: Path, tmp_path: Path
) -> None:
    fork_wide(repo, tmp_path)
    proc = start(repo, {STOP_AT_ENV: "state-saved"})
    wait_stopped(proc)
    kill_group(proc)
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    started = float(str(state_of(repo)["started"]))
    os.utime(lock, (started - 3600, started - 3600))
    code, _, err = lac(repo, "reconcile", "--abort")
    assert code == 3 and len(err.splitlines()) == 1
    assert "was there before the reconcile began" in err
    assert lock.exists()
    lock.unlink()
    assert lac(repo, "reconcile", "--abort")[0] == 0


def test_a_reused_pid_is_not_the_reconcile() -> None:
    me = os.getppid()  # a process that runs, started before now
    started = process_started(me)
    assert started is not None and started > 0
    assert alive(me, started + 5)
    assert not alive(me, started - 60), "it started after: another process with that pid"
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert not alive(dead.pid, started + 5)


@pytest.fixture
def lac_board(repo: Path) -> None:
    """The embedded board: these tests are about git and processes."""
    assert lac_inprocess(repo, "init").code == 0
