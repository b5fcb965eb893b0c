"""A board whose disk fills up (issue 12): the embedded board on a small
tmpfs, filled to the last byte. Every command is one line and exit 3, the
commit hook obeys the offline policy, nothing is left
half-written, and the board works again once space is freed.

PostgreSQL's own disk is the server's to fill, not a test's: this is the
embedded board only.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import Result, git, lac_process
from .test_guard import head, run_git

TMPFS_SIZE = "2m"


@dataclass
class FullDisk:
    mount: Path
    board: Path
    filler: Path

    def fill(self) -> None:
        """Every free byte taken, the board's write-ahead log emptied first
        (so the next write needs new space, not a page the log already has)."""
        conn = sqlite3.connect(self.board)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        chunk = b"\0" * 65536
        with open(self.filler, "wb", buffering=0) as out:
            while True:
                try:
                    out.write(chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    if len(chunk) == 1:
                        break
                    chunk = chunk[: len(chunk) // 2]
        assert os.statvfs(self.mount).f_bavail == 0

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)


def mount_tmpfs(where: Path) -> None:
    where.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        # Without the right to mount (not root, no CAP_SYS_ADMIN) there is no
        # small filesystem to fill here; a loop device needs the same right.
        pytest.skip(f"cannot mount a tmpfs to fill ({proc.stderr.strip() or proc.returncode})")


@pytest.fixture
def full(repo: Path, tmp_path: Path) -> Iterator[FullDisk]:
    mount = tmp_path / f"small-{uuid.uuid4().hex[:6]}"
    mount_tmpfs(mount)
    try:
        disk = FullDisk(mount, mount / "board.db", mount / "filler")
        assert lac_process(repo, "init", "--url", f"sqlite://{disk.board}").code == 0
        assert lac_process(repo, "hooks", "install").code == 0
        git(repo, "config", "lac.timeout", "1s")
        assert lac_process(repo, "task", "add", "before the disk filled").code == 0
        assert lac_process(repo, "lock", "docs/", "--as", "dana").code == 0
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


def one_line(result: Result, code: int) -> str:
    assert result.code == code, result
    assert "Traceback" not in result.err, result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("git lac: "), result.err
    return lines[0]


def test_a_full_disk_is_one_line_and_the_board_survives(repo: Path, full: FullDisk) -> None:
    full.fill()
    added = lac_process(repo, "task", "add", "while full", "--body", "x" * 20_000)
    assert "disk is full" in one_line(added, 3), added.err
    as_json = lac_process(repo, "task", "add", "while full", "--json")
    assert as_json.code == 3 and as_json.json["error"]["kind"] == "board_failed"
    claimed = lac_process(repo, "claim", "1", "--write", "src/")
    assert "disk is full" in one_line(claimed, 3)
    # Even a read needs a few bytes: with no other connection open, SQLite
    # makes the board's shared-memory file (-shm) anew, and cannot.
    listed = lac_process(repo, "tasks")
    assert "disk is full" in one_line(listed, 3)
    full.free()
    # Nothing half-written, nothing lost, and it works again.
    conn = sqlite3.connect(full.board)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    assert lac_process(repo, "task", "add", "after").code == 0
    titles = [t["title"] for t in lac_process(repo, "tasks", "--json").json["tasks"]]
    assert titles == ["before the disk filled", "after"]
    assert lac_process(repo, "claim", "1", "--write", "src/").code == 0


def test_no_new_board_is_left_half_made_on_a_full_disk(repo: Path, full: FullDisk) -> None:
    full.fill()
    fresh = full.mount / "new.db"
    made = lac_process(repo, "init", "--url", f"sqlite://{fresh}")
    one_line(made, 3)
    full.free()
    left = sorted(p.name for p in full.mount.iterdir())
    assert all(n.startswith("board.db") for n in left), f"a half-made board left: {left}"
    assert not fresh.exists()


def stage(repo: Path) -> str:
    (repo / "core" / "auth.py").write_text("changed while the disk was full\n")
    git(repo, "add", "core/auth.py")
    return head(repo)


def test_the_commit_hook_on_a_full_disk_obeys_the_policy(repo: Path, full: FullDisk) -> None:
    before = stage(repo)
    full.fill()
    refused = run_git(repo, "commit", "-qm", "x", agent="erin")
    line = one_line(refused, 1)
    assert "disk is full" in line and "commit refused, nothing was checked" in line, line
    assert "lac.guard.unanswered = refuse" in line and head(repo) == before
    git(repo, "config", "lac.guard.unanswered", "warn")
    allowed = run_git(repo, "commit", "-qm", "x", agent="erin")
    line = one_line(allowed, 0)
    assert "commit allowed unchecked (lac.guard.unanswered = warn)" in line, line
    assert head(repo) != before
    full.free()
    git(repo, "config", "--unset", "lac.guard.unanswered")
    (repo / "docs").mkdir()
    (repo / "docs" / "x.md").write_text("dana holds docs/\n")
    git(repo, "add", "docs/x.md")
    held = run_git(repo, "commit", "-qm", "docs", agent="erin")  # checked again: refused
    assert held.code == 1 and "held by dana" in held.err, held
