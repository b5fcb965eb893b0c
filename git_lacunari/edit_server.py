"""The resident helper itself (:mod:`edit_helper` is how the edit hook finds
it, asks it and starts it; :mod:`resident`, how the other hooks and an
agent's loop do): it answers the edit hook's questions with the same
:func:`edit_guard.check` the hook runs without it, on a board it keeps open
for at most ``lac.edit.helper-linger`` (default LINGER_DEFAULT_S) after the
last question, and runs the other calls (:func:`resident.resident_call`) with
the same :func:`entry.dispatch` the direct path runs, given the caller's
argv, environment, working directory and standard input. It holds no board
connection while idle, and exits after ``lac.edit.helper-idle``."""

from __future__ import annotations

import contextlib
import os
import socket
from typing import TYPE_CHECKING, Any

from .resident import (
    connect_helper,
    disabled,
    key,
    receive,
    send,
    socket_dir,
    socket_name,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from .board import Board
    from .edit_guard import Place
    from .repo import Repo
    from .resident import Socket

    Runner = Callable[[dict[str, Any]], dict[str, Any]]

IDLE_DEFAULT_S = 600.0
LINGER_DEFAULT_S = 5.0  # a board kept open this long after its last question
GO_TIMEOUT_S = 5.0
CONFIG_MAX_AGE_S = 5.0


def _config_files(repo: Repo) -> list[str]:
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [
        str(repo.common_dir / "config"),
        str(repo.git_dir / "config.worktree"),
        os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        "/etc/gitconfig",
    ]


def _signature(files: list[str]) -> list[tuple[int, int, int] | None]:
    found: list[tuple[int, int, int] | None] = []
    for file in files:
        try:
            st = os.stat(file)
        except OSError:
            found.append(None)
            continue
        found.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return found


class Helper:
    def __init__(self, place: Place) -> None:
        from .edit_guard import locate

        self.place = place
        self.repo = locate(place)
        self._files = _config_files(self.repo)
        self._signature = _signature(self._files)
        self._read_at = _monotonic()
        self._board: Board | None = None
        self.used = _monotonic()  # when the board was last asked

    def fresh_repo(self) -> Repo:
        """The config as it is now: re-read when a config file changed, and
        at most every CONFIG_MAX_AGE_S (an included file is not watched)."""
        from .edit_guard import locate

        signature = _signature(self._files)
        if signature != self._signature or _monotonic() - self._read_at > CONFIG_MAX_AGE_S:
            repo = locate(self.place)
            if repo.config != self.repo.config:
                self.drop_board()
            self.repo, self._signature, self._read_at = repo, signature, _monotonic()
        return self.repo

    def board(self) -> Board:
        self.used = _monotonic()
        if self._board is None:
            from .guard.policy import hook_timeout
            from .session import Session

            repo = self.repo
            self._board = Session(None, repo=repo).board(timeout=hook_timeout(repo), touch=False)
        return self._board

    def drop_board(self) -> None:
        if self._board is not None:
            board, self._board = self._board, None
            with contextlib.suppress(Exception):  # a dead connection: nothing left to close
                board.store.close()

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        from .edit_guard import check
        from .errors import CannotWorkHere, InvalidInput

        rel, written, cwd = request["paths"], request["written"], request["cwd"]
        if request.get("top") != self.place.top or not isinstance(rel, list):
            return {"error": "not this work tree's helper"}
        if not isinstance(written, list):
            return {"error": "not a request"}
        try:
            repo = self.fresh_repo()
            paths = [str(p) for p in rel]
            decision = check(paths, [str(p) for p in written], str(cwd), repo, self.board)
        except InvalidInput as exc:
            return {"invalid": exc.message}
        except CannotWorkHere:
            # The board it held failed: drop it and let the hook decide (and
            # apply the offline policy) itself; the next question reconnects.
            self.drop_board()
            return {"error": "the board failed"}
        return {"decision": decision.to_json()}

    def idle_limit(self) -> float:
        return self._duration("lac.edit.helper-idle", IDLE_DEFAULT_S)

    def _duration(self, setting: str, default: float) -> float:
        from .durations import parse_duration
        from .errors import BadDuration

        given = self.repo.get(setting)
        try:
            return parse_duration(given) if given else default
        except BadDuration:
            return default

    def linger(self) -> float:
        """How long the board stays open after its last question: a fleet's
        idle helpers hold no connection (README, "PgBouncer")."""
        return self._duration("lac.edit.helper-linger", LINGER_DEFAULT_S)

    def close_idle_board(self) -> None:
        if self._board is not None and _monotonic() - self.used > self.linger():
            self.drop_board()

    def off(self) -> bool:
        setting = (self.repo.get("lac.edit.helper") or "auto").strip().lower()
        return setting in ("off", "false", "no", "0")


def _monotonic() -> float:
    import time

    return time.monotonic()


def _place(start: str) -> Place | None:
    """The work tree at ``start``, or a bare repository (a server's: its
    hooks run there with ``GIT_DIR``), as a place whose top is its git dir."""
    from .edit_guard import Place, where
    from .resident import git_dir

    place = where(start)
    if place is not None:
        return place
    found = git_dir(start)
    if found is None or not os.path.isfile(os.path.join(found, "HEAD")):
        return None
    return Place(found, found, found)


def _runnable(request: dict[str, Any], mine: str) -> str | None:
    """Why this helper will not run the call (None: it will)."""
    from .resident import resident_call

    if request.get("key") != mine:
        return "another key"
    argv, env, cwd = request.get("run"), request.get("env"), request.get("cwd")
    if not (isinstance(argv, list) and all(isinstance(w, str) for w in argv)):
        return "not a request"
    if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        return "not a request"
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        return "no such directory"
    stdin = request.get("stdin")
    if stdin is not None and not isinstance(stdin, str):
        return "not a request"
    if not resident_call(argv):
        return "not a call it answers"
    return None


def _converse(conn: Socket, helper: Helper, mine: str, run: Runner | None) -> None:
    """One connection: an edit question, or a call to run (ready, go, answer)."""
    request = receive(conn)
    if not isinstance(request, dict):
        send(conn, {"error": "not a request"})
        return
    if "run" not in request:
        send(conn, helper.answer(request))
        return
    why = "no runner" if run is None else _runnable(request, mine)
    if run is None or why is not None:
        send(conn, {"error": why})
        return
    send(conn, {"ready": mine})
    go = receive(conn)  # the caller gave up (and runs the call itself): EOF, nothing runs
    if not (isinstance(go, dict) and go.get("go") is True):
        return
    conn.settimeout(None)
    reply = run(request)
    conn.settimeout(GO_TIMEOUT_S)
    send(conn, reply)


def serve(start: str, run: Runner | None = None) -> int:
    """Run the helper of the work tree (or bare repository) at ``start``
    until it is not needed. ``run`` runs a call (:func:`entry.run_call`,
    given by the executable: this module is below the command line)."""
    import select

    place = _place(start)
    if place is None or disabled():
        return 3
    helper = Helper(place)
    if helper.off():
        return 0
    mine = key()
    directory, name = socket_dir(place.git_dir), socket_name(mine)
    os.makedirs(directory, exist_ok=True)
    try:  # one helper per key: if one answers already, this one is not needed
        connect_helper(directory, name, 1.0).close()
        return 0
    except OSError:
        pass
    os.chdir(directory)
    tmp = f"{name}.{os.getpid()}.tmp"
    old_umask = os.umask(0o077)  # the socket is its owner's only
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(tmp)
    finally:
        os.umask(old_umask)
    os.replace(tmp, name)  # atomic: a racing helper's socket is replaced, and it leaves
    mine_ino = os.stat(name).st_ino
    server.listen(16)
    last = _monotonic()
    try:
        while True:
            ready, _, _ = select.select([server], [], [], 1.0)
            try:
                if os.stat(name).st_ino != mine_ino or not os.path.isdir(place.git_dir):
                    return 0
            except OSError:
                return 0
            if not ready:
                helper.close_idle_board()
                if _monotonic() - last > helper.idle_limit():
                    return 0
                continue
            conn, _ = server.accept()
            with conn:
                conn.settimeout(GO_TIMEOUT_S)
                with contextlib.suppress(OSError, ValueError, KeyError, EOFError):  # a caller gone
                    _converse(conn, helper, mine, run)
            last = _monotonic()
            helper.close_idle_board()
            if helper.off():
                return 0
    finally:
        helper.drop_board()
        try:
            if os.stat(name).st_ino == mine_ino:
                os.unlink(name)
        except OSError:
            pass
        server.close()
