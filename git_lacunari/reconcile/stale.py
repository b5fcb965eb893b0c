"""Whether a process is still alive, and whether a ``.git/index.lock`` is a
leftover of our own killed reconcile or held by a live git.

A reconcile records its pid and start time in its state file before git
writes anything. ``--abort`` first refuses while that process still runs
(the same pid, started no later than it was recorded: a reused pid is
another process). Then, when it finds an ``index.lock``:

- some live process has the lock file open (Linux: ``/proc/*/fd``): a
  foreign git at work; say which, never clobber it;
- the lock is older than our state file: it was there before the reconcile
  began writing, so not ours; say so;
- otherwise it was left by our killed process (or a git it ran): removed.

Where there is no ``/proc`` to ask, a lock modified in the last
:data:`QUIET_S` seconds counts as live.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..errors import CannotWorkHere

QUIET_S = 10.0  # without /proc: a lock this fresh may belong to a running git
SLACK_S = 2.0  # file times and the recorded start come from different clocks' rounding
PROC = Path("/proc")


def _boot_time() -> float | None:
    try:
        for line in (PROC / "stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def process_started(pid: int) -> float | None:
    """When ``pid`` started (epoch seconds), from /proc; None if unknown."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] in ("Z", "X"):  # a zombie is dead, only not yet reaped
            return -1.0
        ticks = int(fields[19])
        boot = _boot_time()
        return None if boot is None else boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def alive(pid: int, since: float) -> bool:
    """Whether the process ``pid`` that was running at ``since`` still runs:
    a reused pid (a process started after ``since``) is not it."""
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: alive
    started = process_started(pid)
    if started is None:
        return True
    return 0 <= started <= since + SLACK_S


def holders(path: Path) -> list[int] | None:
    """The pids that have ``path`` open, or None where that cannot be asked."""
    if not (PROC / "self" / "fd").is_dir():
        return None
    target = os.path.realpath(path)
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == target:
                    found.append(int(entry.name))
                    break
            except OSError:
                continue
    return found


def _command(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    return " ".join(words[:3])


def clear_stale_index_lock(git_dir: Path, pid: int, started: float) -> str | None:
    """Remove ``index.lock`` when our killed reconcile (``pid``, no longer
    alive: the caller asked) left it; raise :class:`CannotWorkHere` (one
    line) when it is not ours to remove. Returns a line for people when
    something was removed."""
    lock = git_dir / "index.lock"
    try:
        stat = lock.lstat()
    except FileNotFoundError:
        return None
    shown_lock = f"{git_dir.name}/index.lock" if git_dir.name == ".git" else str(lock)
    live = holders(lock)
    if live:
        what = _command(live[0])
        raise CannotWorkHere(
            f"another process holds {shown_lock} (pid {live[0]}{': ' + what if what else ''}); "
            "let it finish, then --abort again"
        )
    if stat.st_mtime < started - SLACK_S:
        raise CannotWorkHere(
            f"{shown_lock} was there before the reconcile began, so it is not its to remove; "
            "if no git process is running, remove it and --abort again"
        )
    if live is None and time.time() - stat.st_mtime < QUIET_S:
        raise CannotWorkHere(
            f"{shown_lock} changed less than {QUIET_S:g}s ago and may belong to a running git; "
            "let it finish, then --abort again"
        )
    lock.unlink(missing_ok=True)
    return f"git lac: removed {shown_lock}, left by the interrupted reconcile (pid {pid})"
