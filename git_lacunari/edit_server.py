"""The edit hook's resident helper itself (:mod:`edit_helper` is how the hook
finds it, asks it and starts it): it keeps the board open and answers each
question with the same :func:`edit_guard.check` the hook runs without it."""

from __future__ import annotations

import json
import os
import socket
from typing import TYPE_CHECKING, Any

from .edit_helper import connect_helper, disabled, read_line, socket_dir, socket_name

if TYPE_CHECKING:
    from .board import Board
    from .edit_guard import Place
    from .repo import Repo

IDLE_DEFAULT_S = 600.0
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
        if self._board is None:
            from .guard.policy import hook_timeout
            from .session import Session

            repo = self.repo
            self._board = Session(None, repo=repo).board(timeout=hook_timeout(repo), touch=False)
        return self._board

    def drop_board(self) -> None:
        if self._board is not None:
            board, self._board = self._board, None
            import contextlib

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
        from .durations import parse_duration
        from .errors import BadDuration

        given = self.repo.get("lac.edit.helper-idle")
        try:
            return parse_duration(given) if given else IDLE_DEFAULT_S
        except BadDuration:
            return IDLE_DEFAULT_S

    def off(self) -> bool:
        setting = (self.repo.get("lac.edit.helper") or "auto").strip().lower()
        return setting in ("off", "false", "no", "0")


def _monotonic() -> float:
    import time

    return time.monotonic()


def serve(start: str) -> int:
    """Run the helper of the work tree at ``start`` until it is not needed."""
    import select

    from .edit_guard import where

    place = where(start)
    if place is None or disabled():
        return 3
    helper = Helper(place)
    if helper.off():
        return 0
    directory, name = socket_dir(place.git_dir), socket_name()
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
    mine = os.stat(name).st_ino
    server.listen(16)
    last = _monotonic()
    try:
        while True:
            ready, _, _ = select.select([server], [], [], 1.0)
            try:
                if os.stat(name).st_ino != mine or not os.path.isdir(place.git_dir):
                    return 0
            except OSError:
                return 0
            if not ready:
                if _monotonic() - last > helper.idle_limit():
                    return 0
                continue
            conn, _ = server.accept()
            last = _monotonic()
            with conn:
                conn.settimeout(5.0)
                try:
                    request = json.loads(read_line(conn).decode("utf-8", "surrogateescape"))
                    reply = (
                        helper.answer(request)
                        if isinstance(request, dict)
                        else {"error": "not a request"}
                    )
                except (OSError, ValueError, KeyError):
                    continue
                try:
                    conn.sendall(json.dumps(reply).encode("utf-8", "surrogateescape") + b"\n")
                except OSError:
                    continue
            if helper.off():
                return 0
    finally:
        helper.drop_board()
        try:
            if os.stat(name).st_ino == mine:
                os.unlink(name)
        except OSError:
            pass
        server.close()
