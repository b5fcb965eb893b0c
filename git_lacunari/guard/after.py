"""The hooks that run after the fact and never refuse.

- ``post-commit`` (a clone): tells the board where this worker's claims
  stand, each claim's branch tip (the forecast and landing read them).
- ``commit-msg`` (a clone): names the task of each of this worker's claims
  on the branch in a ``Lac-Task`` trailer of the message, so the work is
  known when it lands rebased or squashed where its line is not;
  ``git config lac.trailer false`` turns it off.
- ``post-receive`` (a server): the push has landed; every landing claim
  whose work the destination now holds is done and its locks released.

Both print at most a line or two, and exit 0 whatever happens: the commit or
the push is made already.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..edge import Result
from ..errors import CannotWorkHere, LacError
from ..identity import Identity
from ..repo import Repo, discover_git_dir, git
from .changes import is_zero, parse_receive_lines
from .policy import NoBoard, guard_disabled, hook_timeout, require_existing_board, server_pusher

if TYPE_CHECKING:
    from ..session import Session

SERVER_AGENT = "lac-server"  # who records a landing settled by the server, when no pusher is known


def server_act_board(repo: Repo, name: str, why: str) -> Any:
    """The board a server's pre-receive judges pushes by (its lac.board, the
    URL's search_path, its HEAD's .lacconfig), opened to act on as ``name``:
    the post-receive that settles and the lander that lands use this one."""
    from ..front_door import open_board
    from .judge import server_board

    chosen = server_board(repo)
    return open_board(
        repo,
        identity=Identity(name, why, (), "none"),
        url=chosen.url,
        board=chosen.board,
        timeout=repo.get("lac.timeout"),
        act=True,
        from_config=False,
    )


def track_here(session: Session) -> list[int]:
    """Where our claims here stand, told to the board; [] when this clone has
    no board, or the guard is off. Errors are the caller's to swallow."""
    from ..landing import track

    if guard_disabled():
        return []
    repo = session.repo
    try:
        require_existing_board(repo, repo.get("lac.url"))
    except NoBoard:
        return []
    return track(session.board(timeout=hook_timeout(repo)), repo)


def post_commit(session: Session) -> Result:
    """Silent either way: a board in trouble was reported by the pre-commit
    guard a moment ago, and the next heartbeat or push tells the board."""
    try:
        track_here(session)
    except LacError:
        return Result({"hook": "post-commit", "tracked": False})
    return Result({"hook": "post-commit", "tracked": True})


def commit_msg(session: Session, message_file: str) -> Result:
    """Add ``Lac-Task: N`` to the message for each of our claims here whose
    branch is the one checked out (or that records none yet). Silent; a
    board in trouble leaves the message as it is."""
    from ..landing import TRAILER, current_branch

    body: dict[str, object] = {"hook": "commit-msg", "named": []}
    repo = session.repo
    if guard_disabled() or (repo.get("lac.trailer") or "").strip().lower() in OFF:
        return Result(body)
    try:
        require_existing_board(repo, repo.get("lac.url"))
    except (NoBoard, LacError):  # none here, or one in trouble the pre-commit guard spoke of
        return Result(body)
    try:
        if not _has_words(repo, Path(message_file)):
            return Result(body)  # git aborts an empty message: a trailer must not save it
        branch = current_branch(repo.toplevel)
        tracks = session.board(timeout=hook_timeout(repo)).claim_tracks()
        named = sorted({task for task, on, _ in tracks if on is None or on == branch})
        if named:
            _end_with_newline(Path(message_file))
            trailers = [a for t in named for a in ("--trailer", f"{TRAILER}: {t}")]
            git(
                "interpret-trailers",
                "--in-place",
                "--if-exists",
                "addIfDifferent",
                *trailers,
                "--",
                message_file,
                cwd=repo.toplevel,
            )
    except LacError:
        return Result(body)
    body["named"] = named
    return Result(body)


OFF = ("off", "0", "false", "no")
# `git commit -v`: below this line (after the comment character) is the diff.
SCISSORS = re.compile(r"^\S ?-{24} >8 -{24}$")


def _end_with_newline(message_file: Path) -> None:
    """``git merge --no-edit`` hands the hook a message with no final
    newline, and interpret-trailers (git 2.39) then puts the trailer right
    under the subject, where no trailer parser finds it: end the last line
    first."""
    try:
        text = message_file.read_bytes()
        if text and not text.endswith(b"\n"):
            message_file.write_bytes(text + b"\n")
    except OSError as exc:
        raise CannotWorkHere(f"cannot rewrite the commit message: {exc.strerror}") from exc


def _has_words(repo: Repo, message_file: Path) -> bool:
    """Whether the message says anything once git's comments (and a
    verbose commit's diff) are gone, as git will judge it."""
    try:
        lines = message_file.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return False
    kept = []
    for line in lines:
        if SCISSORS.match(line):
            break
        kept.append(line)
    text = "\n".join(kept).encode()
    return bool(git("stripspace", "--strip-comments", cwd=repo.toplevel, input=text).strip())


def post_receive(stdin_text: str, env: dict[str, str] | None = None) -> Result:
    """Settle the landing claims a push to the destination has landed."""
    from ..landing import destination, settle

    repo = discover_git_dir()
    body: dict[str, object] = {"hook": "post-receive", "landed": []}
    try:
        refs = parse_receive_lines(stdin_text)
        _wake_lander(repo)
        dest = destination(repo)
        dest_ref = _full_ref(repo, dest) if dest else None
        moved = [r for r in refs if r.ref == dest_ref and not is_zero(r.new)]
        if dest is None or not moved:
            return Result(body)
        received = _new_commits(repo, moved[-1].old, moved[-1].new)
        try:
            require_existing_board(repo, repo.get("lac.url"))
        except NoBoard:
            return Result(body)
        pusher = server_pusher(repo, dict(env if env is not None else os.environ))
        # Settling is the server's own act: in team mode as the session's
        # role (a keeper settles another agent's landing), not the pusher;
        # on a plain board it is recorded as the pusher's.
        board = server_act_board(repo, pusher.name or SERVER_AGENT, "the server's post-receive")
        try:
            settled = settle(board, repo.toplevel, dest, received=received)
        finally:
            board.store.close()
    except LacError as exc:
        return Result(
            body, warnings=[f"git lac: landing not checked: {exc} (`git lac sweep` will)"]
        )
    body["landed"] = [{"task": s.task.id, "how": s.how, "tip": s.task.tip} for s in settled]
    lines = [
        f"git lac: task #{s.task.id} landed ({s.how}); its locks are released" for s in settled
    ]
    return Result(body, "\n".join(lines))


def _wake_lander(repo: Repo) -> None:
    """The landing queue (land_queue.py): lines queued, by this push or
    before a restart, are landed by a lander started detached."""
    from ..land_queue import wake

    wake(repo)


def _full_ref(repo: Repo, name: str) -> str | None:
    try:
        out = git("rev-parse", "--symbolic-full-name", "--end-of-options", name, cwd=repo.toplevel)
    except CannotWorkHere:
        return None
    # Some versions of git echo the --end-of-options they were given.
    lines = out.decode("utf-8", "surrogateescape").split()
    return lines[-1] if lines and lines[-1] != "--end-of-options" else None


def _new_commits(repo: Repo, old: str, new: str) -> list[str]:
    """The commits ``new`` brings that ``old`` had not (at most 10,000)."""
    span = [new] if is_zero(old) else [new, "--not", old]
    out = git("rev-list", "--max-count=10000", *span, cwd=repo.toplevel)
    return out.decode().split()
