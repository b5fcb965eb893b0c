"""The edit hook's optional resident helper: one small process per work tree.

The hook runs before every tool call of an agent. Deciding in the hook's own
process means importing the board and its driver each time (psycopg alone
costs more than the whole budget, bench/edit.py); so the first hook that
finds no helper decides itself and starts one, and every later hook only
finds its paths and asks the helper over a UNIX socket in the git dir
(``lacunari/edit-KEY.sock``, reachable only by its owner). The helper keeps
the board open for a few seconds after each question
(``lac.edit.helper-linger``) and answers with the same
:func:`edit_guard.check`. The same helper answers the guard hooks and an
agent's ``claim --next``, ``done``, ``heartbeat`` and ``status``
(:mod:`resident`).

It is optional, and the hook never depends on it: no socket, a refused or
slow connection, or a helper that errs, and the hook decides itself.
``lac.edit.helper = off`` (or ``LAC_EDIT_HELPER=off``) never starts one.
It goes away by itself: after ``lac.edit.helper-idle`` without a question
(default 10 minutes), when its socket is replaced or removed, when its
repository goes, or when ``lac.edit.helper`` turns off.

KEY hashes what decides an answer besides the request: the environment that
names the agent, its board and its git config (``LAC_*``, ``PG*``,
``GIT_CONFIG*``, ``HOME``, ``XDG_CONFIG_HOME``), and this code's files and
interpreter (:func:`resident.key`). A hook run with another environment talks to another helper.
The config files themselves are watched (their stat, and at most every
CONFIG_MAX_AGE_S a fresh read), so a changed policy applies at once.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .repo import Repo

from .resident import (
    connect_helper,
    disabled,
    key,
    receive,
    send,
    socket_dir,
    socket_name,
)

ANSWER_TIMEOUT_S = 10.0  # the hook's wait for the helper before it decides itself
# What the helper is started without: what only this one call means (the
# index of this commit, the quarantine of this push, its push options); each
# call it answers brings its own.
CALL_ONLY = (
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
    "GIT_PUSH_OPTION_",
    "GIT_PREFIX",
    "GIT_REFLOG_ACTION",
    "GIT_EDITOR",
    "GIT_AUTHOR_",
    "GIT_COMMITTER_",
    "GIT_EXEC_PATH",
    "GIT_PROTOCOL",
)

__all__ = ["ask", "connect_helper", "key", "socket_dir", "socket_name", "spawn"]


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
        send(sock, {"paths": rel, "written": written, "cwd": cwd, "top": top})
        reply = receive(sock)
    except (OSError, ValueError, EOFError):
        return None
    finally:
        sock.close()
    if isinstance(reply, dict) and isinstance(reply.get("decision"), dict):
        decision: dict[str, Any] = reply["decision"]
        return decision
    if isinstance(reply, dict) and isinstance(reply.get("invalid"), str):
        from .errors import InvalidInput

        raise InvalidInput(reply["invalid"])
    return None


def spawn(top: str, repo: Repo) -> None:
    """Start this work tree's helper in the background, unless it is off."""
    setting = (repo.get("lac.edit.helper") or "auto").strip().lower()
    if disabled() or setting in ("off", "false", "no", "0"):
        return
    _start(top)


def spawn_here() -> None:
    """After a call the helper could have answered, decided here: start the
    helper of this git dir (a work tree's, or a server's bare repository's)
    for the next one, unless ``lac.edit.helper`` is off."""
    import subprocess

    if disabled():
        return
    try:
        setting = subprocess.run(
            ["git", "config", "--get", "lac.edit.helper"],
            capture_output=True,
            check=False,
        ).stdout.decode("utf-8", "replace")
    except OSError:
        return
    if setting.strip().lower() in ("off", "false", "no", "0"):
        return
    start_helper()


def start_helper() -> None:
    _start(os.getcwd())


def _start(where: str) -> None:
    import contextlib
    import subprocess

    from .hooks import lac_executable

    env = {k: v for k, v in os.environ.items() if not k.startswith(CALL_ONLY)}
    if env.get("GIT_DIR"):  # a server's hook gets GIT_DIR=. : the helper's is absolute
        env["GIT_DIR"] = os.path.abspath(env["GIT_DIR"])
    with contextlib.suppress(OSError):  # it is only a speed-up
        subprocess.Popen(
            [lac_executable(), "guard", "edit-helper"],
            cwd=where,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
