"""The edit hook's optional resident helper: one small process per work tree.

The hook runs before every tool call of an agent. Deciding in the hook's own
process means importing the board and its driver each time (psycopg alone
costs more than the whole budget, bench/edit.py); so the first hook that
finds no helper decides itself and starts one, and every later hook only
finds its paths and asks the helper over a UNIX socket in the git dir
(``lacunari/edit-KEY.sock``, reachable only by its owner). The helper keeps
the board open and answers with the same :func:`edit_guard.check`.

It is optional, and the hook never depends on it: no socket, a refused or
slow connection, or a helper that errs, and the hook decides itself.
``lac.edit.helper = off`` (or ``LAC_EDIT_HELPER=off``) never starts one.
It goes away by itself: after ``lac.edit.helper-idle`` without a question
(default 10 minutes), when its socket is replaced or removed, when its
repository goes, or when ``lac.edit.helper`` turns off.

KEY hashes what decides an answer besides the request: the environment that
names the agent, its board and its git config (``LAC_*``, ``PG*``,
``GIT_CONFIG*``, ``HOME``, ``XDG_CONFIG_HOME``), and this code's version and
interpreter. A hook run with another environment talks to another helper.
The config files themselves are watched (their stat, and at most every
CONFIG_MAX_AGE_S a fresh read), so a changed policy applies at once.
"""

from __future__ import annotations

import json
import os
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .repo import Repo

ANSWER_TIMEOUT_S = 10.0  # the hook's wait for the helper before it decides itself
KEY_PREFIXES = ("LAC_", "PG", "GIT_CONFIG")
KEY_NAMES = ("HOME", "XDG_CONFIG_HOME")


def disabled() -> bool:
    return os.environ.get("LAC_EDIT_HELPER", "").strip().lower() in ("off", "0", "false", "no")


def key() -> str:
    import hashlib

    from . import __version__

    env = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith(KEY_PREFIXES) or k in KEY_NAMES
    )
    code = os.stat(__file__).st_mtime_ns
    text = json.dumps([env, os.path.dirname(__file__), __version__, code])
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def socket_dir(git_dir: str) -> str:
    return os.path.join(git_dir, "lacunari")


def socket_name() -> str:
    return f"edit-{key()}.sock"


def connect_helper(directory: str, name: str, timeout: float) -> socket.socket:
    """A connection to ``directory/name``; the name is given relative to the
    directory (a git dir's path can pass the 108 bytes a socket address holds)."""
    here = os.open(".", os.O_RDONLY)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        os.chdir(directory)
        sock.connect(name)
    except BaseException:
        sock.close()
        raise
    finally:
        os.fchdir(here)
        os.close(here)
    return sock


def read_line(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            break
    return b"".join(chunks)


def ask(
    git_dir: str, top: str, rel: list[str], written: list[str], cwd: str
) -> dict[str, Any] | None:
    """The helper's decision for these paths (its JSON), or None (no helper,
    or no good answer): the hook then decides itself. A bad setting the
    helper found is raised as the hook would raise it (exit 2)."""
    if disabled():
        return None
    try:
        sock = connect_helper(socket_dir(git_dir), socket_name(), ANSWER_TIMEOUT_S)
    except OSError:
        return None
    try:
        with sock:
            request = {"paths": rel, "written": written, "cwd": cwd, "top": top}
            sock.sendall(json.dumps(request).encode("utf-8", "surrogateescape") + b"\n")
            reply = json.loads(read_line(sock).decode("utf-8", "surrogateescape"))
    except (OSError, ValueError):
        return None
    if isinstance(reply, dict) and isinstance(reply.get("decision"), dict):
        decision: dict[str, Any] = reply["decision"]
        return decision
    if isinstance(reply, dict) and isinstance(reply.get("invalid"), str):
        from .errors import InvalidInput

        raise InvalidInput(reply["invalid"])
    return None


def spawn(top: str, repo: Repo) -> None:
    """Start this work tree's helper in the background, unless it is off."""
    import subprocess

    setting = (repo.get("lac.edit.helper") or "auto").strip().lower()
    if disabled() or setting in ("off", "false", "no", "0"):
        return
    import contextlib

    from .hooks import lac_executable

    with contextlib.suppress(OSError):  # it is only a speed-up
        subprocess.Popen(
            [lac_executable(), "guard", "edit-helper"],
            cwd=top,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
