"""`git lac guard edit`: refuse an agent's edit before it is made.

An agent harness runs this before every tool call (README, "Agents"), so it
is built to cost little more than starting Python: no click, no ``git``
process to find the repository (its ``.git`` is found by walking up, as git
does, unless the environment redirects git), one ``git config`` for the
settings, one read of the board, and nothing at all when the call writes no
path of a repository.

Each path is judged by the work tree that holds it, found from its real
path as git finds a repository (:func:`judged_groups`); whose agent asks is
told by the harness's project directory. A directory (or a root) is refused
when another agent holds anything under it.

The answer, in the harness's own protocol (its adapter, :mod:`git_lacunari.agents`):

- a path another agent holds: refused, naming holder and task, and how to
  wait (``dana holds core/auth.py on task #12; git lac wait core/auth.py``);
- a path our claim did not declare: ``lac.edit.undeclared`` (allow | lock |
  deny; ``lock`` takes a write lock on it under our newest claim in work,
  when free; a path our claim only reads counts as undeclared for an edit);
- no claim at all: ``lac.edit.unclaimed`` (allow | deny, "claim a task first");
- a payload not of the documented shape: ``lac.edit.malformed`` (deny, the
  default, | allow), one line on stderr either way; under a harness whatever
  goes wrong (an unexpected exception too) is one line and its refusal, never
  a traceback nor an exit code the harness lets through;
- a board that cannot be reached, or does not answer: the guards' offline
  policy (``lac.guard.offline``, default warn: allowed with a line;
  ``lac.guard.unanswered``, default refuse).
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

from .agents.protocol import MAX_PAYLOAD, Answer, EditRequest, Harness, MalformedPayload
from .agents.registry import HARNESS_NAMES, adapter

if TYPE_CHECKING:
    from collections.abc import Callable

    from .board import Board
    from .board.edit import EditView
    from .identity import Identity
    from .model import Conflict
    from .repo import Repo


class Undeclared(Enum):
    ALLOW = "allow"
    LOCK = "lock"
    DENY = "deny"


class Unclaimed(Enum):
    ALLOW = "allow"
    DENY = "deny"


Malformed = Unclaimed  # the same two answers: let it through, or refuse it

# A claim whose heartbeat is older than this gets one from the edit hook: an
# agent that keeps editing is alive, without a write on every tool call.
HEARTBEAT_EVERY_S = 60.0
# Environment variables that move the repository away from what walking up
# from the directory finds: with any of them, git itself is asked.
GIT_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_DISCOVERY_ACROSS_FILESYSTEM")


# A target that is the top of a work tree, as the board is asked about it
# (``git lac lock ./`` is the whole tree, ``**``).
ROOT = "./"


def _policy(repo: Repo, key: str, choices: type[Enum], default: str = "allow") -> Enum:
    from .errors import InvalidInput

    value = (repo.get(key) or default).strip().lower()
    try:
        return choices(value)
    except ValueError:
        names = " | ".join(str(c.value) for c in choices)
        raise InvalidInput(f"{key} is {value!r}; use {names}") from None


# --- where: the repository and the paths in it ------------------------------------


def _dot_git(directory: str) -> str | None:
    """The git dir a ``.git`` in ``directory`` names (a directory, or a
    ``gitdir:`` file as in a linked worktree or a submodule), or None."""
    dot = os.path.join(directory, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        with open(dot, encoding="utf-8") as handle:
            first = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not first.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(directory, first[len("gitdir:") :].strip()))


def _walk_up(start: str, resolved: bool = False) -> tuple[str, str] | None:
    """(top of the work tree, git dir) found from ``start`` (``resolved``:
    already a real path) as git finds it, stopping below
    ``GIT_CEILING_DIRECTORIES``; None outside any repository."""
    ceilings = {
        os.path.realpath(c) for c in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(":") if c
    }
    here = start if resolved else os.path.realpath(start)
    while True:
        git_dir = _dot_git(here)
        if git_dir is not None:
            return here, git_dir
        parent = os.path.dirname(here)
        if parent == here or parent in ceilings:
            return None
        here = parent


class Place:
    """A work tree as the hook finds it, before any config is read."""

    def __init__(self, top: str, git_dir: str, common_dir: str) -> None:
        self.top, self.git_dir, self.common_dir = top, git_dir, common_dir


def where(start: str) -> Place | None:
    """This work tree's top, git dir and common dir, or None outside any:
    found by walking up as git does (no process), or by asking git when the
    environment redirects it."""
    if any(os.environ.get(v) for v in GIT_REDIRECTS):
        from .errors import NotARepository
        from .repo import discover

        try:
            found = discover(start)
        except NotARepository:
            return None
        return Place(str(found.toplevel), str(found.git_dir), str(found.common_dir))
    walked = _walk_up(start)
    if walked is None:
        return None
    return _place(*walked)


def locate(place: Place) -> Repo:
    """The :class:`Repo` of a place, its config read (one ``git config``)."""
    from pathlib import Path

    from .repo import Repo, read_config

    return Repo(
        Path(place.top),
        Path(place.git_dir),
        Path(place.common_dir),
        "",
        read_config(Path(place.top)),
    )


def _under(path: str, top: str) -> str | None:
    if path == top or not path.startswith(top.rstrip("/") + "/"):
        return None
    return path[len(top.rstrip("/")) + 1 :]


class Target(NamedTuple):
    """One path a tool call may write: absolute (a link in it not yet
    followed); ``tree``: everything under it is written too."""

    path: str
    tree: bool = False


def _target(found: object) -> Target:
    """A shell reader's answer as a target: a path (the reader as it was), or
    a ``Write`` with ``.path`` and ``.tree`` (the reader rewritten)."""
    if isinstance(found, str):
        return Target(found)
    return Target(str(getattr(found, "path")), bool(getattr(found, "tree")))  # noqa: B009


class Group:
    """The paths of one tool call that one board judges, as it names them:
    relative to the top of the work tree holding each, ``/`` separated, a
    directory with a trailing ``/`` (for what is below it), a whole tree as
    :data:`ROOT`. ``written`` is where each write lands, through symlinks;
    ``checked`` adds the path as written too, when a link in the work tree
    leads there (a lock on the link is a lock too). ``place`` judges: its
    config, its helper, its agent; ``foreign``: the asking agent is of
    another repository (named from there, the helper not asked)."""

    def __init__(self, place: Place, foreign: bool) -> None:
        self.place, self.foreign = place, foreign
        self.checked: list[str] = []
        self.written: list[str] = []

    def add(self, rel: str, lexical: str | None) -> None:
        if rel not in self.written:
            self.written.append(rel)
        for path in (rel, lexical):
            if path is not None and path not in self.checked:
                self.checked.append(path)


def _place(top: str, git_dir: str) -> Place:
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            common = os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        common = git_dir
    return Place(top, git_dir, common)


def judged_groups(wanted: list[Target], project: Place | None) -> list[Group]:
    """Each target with the work tree that holds it, found from its real path
    (the existing part's symlinks resolved) as git finds a repository, and
    grouped by the board that judges it: a tree of the project's clone (a
    linked worktree shares its board) is judged as the project's agent; a
    tree of another repository by that repository's board; a path in no
    repository, or inside a ``.git``, is not ours. The project's group comes
    first. With the environment redirecting git, every path is of the one
    repository git names (``project``)."""
    redirected = any(os.environ.get(v) for v in GIT_REDIRECTS)
    common = os.path.realpath(project.common_dir) if project is not None else None
    walked: dict[str, tuple[str, str] | None] = {}
    places: dict[str, Place] = {}
    groups: dict[tuple[str, bool], Group] = {}
    clones: dict[str, bool] = {}  # top -> of the project's clone (its board, its agent)
    if project is not None:  # first, as the fast path: every path in the project's own tree
        places[project.top] = project
        clones[project.top] = True
        groups[(project.top, False)] = Group(project, False)
    for target in wanted:
        real = os.path.realpath(target.path)
        tree = target.tree or os.path.isdir(real)
        if redirected:
            found = (project.top, project.git_dir) if project is not None else None
        else:
            start = real if tree else os.path.dirname(real)
            if start not in walked:
                walked[start] = _walk_up(start, resolved=True)
            found = walked[start]
        if found is None:
            continue  # in no repository: not ours
        top, git_dir = found
        rel = ROOT if real == top else _under(real, top)
        if rel is None or rel == ".git" or rel.startswith(".git/"):
            continue
        if rel != ROOT and tree:
            rel += "/"
        lexical = _under(os.path.normpath(target.path), top)
        if lexical is not None and (lexical == rel.rstrip("/") or lexical.startswith(".git/")):
            lexical = None
        place = places.get(top)
        if place is None:
            place = places[top] = _place(top, git_dir)
            clones[top] = project is not None and os.path.realpath(place.common_dir) == common
        if project is not None and clones[top]:
            key, judge, foreign = (project.top, False), project, False
        else:
            key, judge, foreign = (top, project is not None), place, project is not None
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(judge, foreign)
        group.add(rel, lexical)
    return [g for g in groups.values() if g.written]


# --- the decision --------------------------------------------------------------------


class Decision:
    """Allowed or refused (and why), what was checked and locked, lines for people.
    Plain, not a dataclass: it crosses the helper's socket as JSON, on the hook's path."""

    def __init__(
        self,
        allowed: bool,
        reason: str = "",
        checked: tuple[str, ...] = (),
        locked: tuple[str, ...] = (),
        notes: tuple[str, ...] = (),
        notice: str = "",
    ) -> None:
        self.allowed, self.reason, self.notes = allowed, reason, notes
        self.checked, self.locked = checked, locked
        # What was taken from us, told beside an allowed edit (lease_notices.py).
        self.notice = notice

    def to_json(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "reason": self.reason,
            "checked": list(self.checked),
            "locked": list(self.locked),
            "notes": list(self.notes),
            "notice": self.notice,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        return cls(
            bool(data["allowed"]),
            str(data["reason"]),
            tuple(data["checked"]),
            tuple(data["locked"]),
            tuple(data["notes"]),
            str(data.get("notice") or ""),
        )


def _wait_hint(paths: list[str], cwd: str, top: str) -> str:
    import shlex

    from .paths import literal

    # Each a path as itself: a file named like a glob (*.md) is waited for
    # alone, not every path the glob would match.
    paths = [literal(p.rstrip("/")) + ("/" if p.endswith("/") else "") for p in paths]
    inside = _under(os.path.realpath(cwd), top) is not None or os.path.realpath(cwd) == top
    shown = [os.path.relpath(os.path.join(top, p), cwd) if inside else p for p in paths]
    return "git lac wait " + " ".join(shlex.quote(p) for p in shown)


def _build_on_advice(holdings: list[Conflict]) -> str:
    """Every holder is a landing claim whose tip this clone has: merge them
    in, and the edit is allowed (the board grants a lock beside theirs)."""
    tips = list(dict.fromkeys(h.landing_tip for h in holdings if h.landing_tip))
    said = "; ".join(dict.fromkeys(h.message for h in holdings))
    if len(tips) == 1:
        return (
            f"{said}, landing (done, its work not in the destination yet): build on it, "
            f"git merge --no-edit {tips[0]}, then edit again"
        )
    return (
        f"{said}: every one landing (done, its work not in the destination yet): "
        f"build on them, git merge --no-edit {' '.join(tips)}, then edit again"
    )


def decide(board: Board, rel: list[str], written: list[str], cwd: str, repo: Repo) -> Decision:
    """The edit's decision, with what was taken from us here (a claim
    force-released or expired): the first edit of a path it held is
    refused, saying so, before anything is locked; any other edit carries
    it (:mod:`lease_notices`)."""
    view = board.edit_view(rel)
    if not view.taken:
        return _decide(board, rel, written, cwd, repo, view)
    from .lease_notices import edit_notice

    notice = edit_notice(board, repo, view.taken, written)
    if notice.refuse:
        return Decision(False, notice.text, tuple(rel))
    decision = _decide(board, rel, written, cwd, repo, view)
    if notice.text and decision.allowed:
        decision.notice = notice.text
    elif notice.text:
        decision.reason += f"; and: {notice.text}"
    return decision


def _decide(
    board: Board, rel: list[str], written: list[str], cwd: str, repo: Repo, view: EditView
) -> Decision:
    from .errors import LacError, PathLocked

    top = str(repo.toplevel)
    from .landing import every_line, landing_lines

    built_on, build_on = landing_lines(repo, view.others)
    # Held by landing claims HEAD is built on: writable beside them, under a
    # lock of ours whatever lac.edit.undeclared says (the guards pass such a
    # change only then): else everyone built on the tip could write it at once.
    stacked = {h.path for h in view.others if h.landing_tip in built_on}
    view.others = [h for h in view.others if h.landing_tip not in built_on]
    if view.others and all(h.landing_tip in build_on for h in view.others):
        held = list(dict.fromkeys(h.path for h in view.others))
        advice = f"{_build_on_advice(view.others)}; or {_wait_hint(held, cwd, top)}"
        return Decision(False, advice, tuple(rel))
    if view.others:
        held = list(dict.fromkeys(h.path for h in view.others))
        said = list(dict.fromkeys(h.message for h in view.others))
        holders = "; ".join(said[:3]) + (f"; and {len(said) - 3} more" if len(said) > 3 else "")
        first = view.others[0]
        if len(said) == 1 and first.path.endswith("/"):
            holders += f" (in {first.path})"
        elif len(said) == 1 and first.lock.pattern != first.path:
            holders += f" (covering {first.path})"
        return Decision(False, f"{holders}; {_wait_hint(held, cwd, top)}", tuple(rel))
    if view.oldest_heartbeat_age is not None and view.oldest_heartbeat_age > HEARTBEAT_EVERY_S:
        import contextlib

        with contextlib.suppress(LacError):  # a busy board just misses one sign of life
            board.touch()
    undeclared = [p for p in written if p not in view.covered]
    if not undeclared:
        return Decision(True, checked=tuple(rel))
    beside = [p for p in undeclared if p in stacked]
    if beside and not view.in_work:
        return Decision(
            False,
            f"{beside[0]} is held by a landing claim this branch is built on: it is written "
            "beside it under a claim in work (not one landing); git lac claim --next, "
            "or git lac claim ID",
            tuple(rel),
        )
    if not view.in_work:  # no claim, or only landing ones: nothing in work to lock under
        if _policy(repo, "lac.edit.unclaimed", Unclaimed) is Unclaimed.ALLOW:
            return Decision(True, checked=tuple(rel))
        return Decision(
            False,
            f"claim a task first: {undeclared[0]} is not held by a claim of yours "
            "(lac.edit.unclaimed = deny); git lac claim --next, or git lac claim ID",
            tuple(rel),
        )
    task = view.in_work[0]
    policy = _policy(repo, "lac.edit.undeclared", Undeclared)
    if policy is Undeclared.ALLOW and not beside:
        return Decision(True, checked=tuple(rel))
    if policy is Undeclared.DENY:
        import shlex

        return Decision(
            False,
            f"{undeclared[0]} is not declared by your claim of task #{task} "
            f"(lac.edit.undeclared = deny); declare it: git lac lock --task {task} "
            + " ".join(shlex.quote(p) for p in undeclared),
            tuple(rel),
        )
    # lock: take it under our newest claim in work, when it is free (allow:
    # only the paths held beside a landing line)
    locking = undeclared if policy is Undeclared.LOCK else beside
    try:
        from .paths import literal

        board.lock([literal(p) for p in locking], task_id=task, built_on=every_line(built_on))
    except PathLocked as exc:  # taken between our look and our grant
        held = [c.path for c in exc.conflicts]
        return Decision(False, f"{exc.message}; {_wait_hint(held, cwd, top)}", tuple(rel))
    why = "lac.edit.undeclared" if policy is Undeclared.LOCK else "beside a landing line"
    return Decision(
        True,
        checked=tuple(rel),
        locked=tuple(locking),
        notes=(f"git lac: locked {', '.join(locking)} for task #{task} ({why})",),
    )


def _trouble(repo: Repo, exc: Exception) -> Decision:
    """The guards' offline policy, for an edit (README, "When the board cannot answer")."""
    from .errors import BoardUnreachable, CannotWorkHere
    from .guard.policy import trouble_policy

    assert isinstance(exc, CannotWorkHere)
    policy, key = trouble_policy(repo, "commit", isinstance(exc, BoardUnreachable))
    if policy == "warn":
        return Decision(True, notes=(f"git lac: {exc.message}; edit allowed unchecked ({key})",))
    return Decision(False, f"{exc.message}; edit refused, nothing was checked ({key} = refuse)")


def project_dir(request: EditRequest, cwd: str) -> str:
    """Whose agent asks: the harness's project directory (the environment it
    runs the hook with), else the payload's cwd, else the hook's own."""
    name = adapter(request.harness).PROJECT_DIR
    for given in (os.environ.get(name) if name else None, request.cwd):
        if given and os.path.isdir(os.path.join(cwd, given)):
            return os.path.join(cwd, given)
    return cwd


def targets(request: EditRequest, project: str) -> list[Target]:
    """The paths the tool call may write: the file tools' own (relative to
    the payload's cwd), or a shell command's obvious write targets (best
    effort, :mod:`shell_writes`), from where it runs: the payload's cwd, or
    its tool's directory field (Gemini CLI resolves ``dir_path`` from the
    project root)."""
    given = [Target(os.path.join(request.cwd, p)) for p in request.paths]
    if request.shell is not None:
        from .shell_writes import write_targets

        base = project if request.dir_from_project else request.cwd
        shell_cwd = os.path.join(base, request.shell_dir or "")
        given += [_target(found) for found in write_targets(request.shell, shell_cwd)]
    return given


def validate_settings(repo: Repo) -> None:
    """A bad value of any setting the hook reads is exit 2, whatever the board says."""
    from .guard.policy import trouble_policy

    for key, choices in (("lac.edit.undeclared", Undeclared), ("lac.edit.unclaimed", Unclaimed)):
        _policy(repo, key, choices)
    _policy(repo, "lac.edit.malformed", Malformed, "deny")
    for unreachable in (True, False):
        trouble_policy(repo, "commit", unreachable)


def check(
    rel: list[str],
    written: list[str],
    cwd: str,
    repo: Repo,
    open_board: Callable[[], Board] | None = None,
    identity: Callable[[], Identity] | None = None,
) -> Decision:
    """The decision for these repo-relative paths. ``open_board`` gives a
    board kept open (the helper's); without it one is opened and closed here,
    as ``identity()`` (asked only then; default: this work tree's agent)."""
    from .errors import BoardUnreachable, CannotWorkHere
    from .front_door import open_board as opened
    from .guard.policy import NoBoard, hook_timeout, require_existing_board

    validate_settings(repo)
    try:
        require_existing_board(repo, repo.get("lac.url"))
    except NoBoard:  # this repository never used git lac
        return Decision(True, checked=tuple(rel))
    except BoardUnreachable as exc:
        return _trouble(repo, exc)
    own = open_board is None
    try:
        if open_board is None:
            agent = identity() if identity is not None else None
            board = opened(repo, identity=agent, timeout=hook_timeout(repo))
        else:
            board = open_board()
    except CannotWorkHere as exc:
        return _trouble(repo, exc)
    try:
        return decide(board, rel, written, cwd, repo)
    except BoardUnreachable as exc:
        return _trouble(repo, exc)
    except CannotWorkHere as exc:
        if not own:
            raise  # the helper drops its board and answers with the policy
        return _trouble(repo, exc)
    finally:
        if own:
            board.store.close()


def guard_edit(
    harness_name: str | None, stdin: str | bytes, cwd: str, *, as_json: bool = False
) -> Answer:
    """The whole hook: a harness's payload in (bytes as read, or text), its
    protocol's answer out (``as_json``: the generic protocol's one JSON
    object, whatever the harness). Raises :class:`LacError` for what the
    edge reports itself (a bad setting: exit 2)."""
    found = _guard_edit(harness_name, stdin, cwd)
    if not as_json:
        return found[0]
    _, allowed, reason, body, notes = found
    return adapter(Harness.GENERIC).render(None, allowed, reason, body, notes)


Found = tuple[Answer, bool, str, dict[str, Any], list[str]]


def _answer(
    harness: Harness,
    *,
    allowed: bool,
    reason: str = "",
    body: dict[str, Any] | None = None,
    notes: list[str] | None = None,
    request: EditRequest | None = None,
    context: str = "",
) -> Found:
    """``context``: a notice for the model beside an allowed call (what was
    taken from the agent, :mod:`git_lacunari.lease_notices`): in the
    harness's own channel for it (``tell``), or, where it has none, as a
    refusal, the one text its model reads (the call made again goes)."""
    given = dict(body or {"checked": [], "locked": []})
    if context:  # the generic protocol's form of it, and --json's
        given["notice"] = context
    said_notes = list(notes or [])
    if not allowed:
        said_notes.append(f"refused: {reason}")
    elif context:
        said_notes.append(f"git lac: {context}")
    plugin = adapter(harness)
    said = plugin.tell(request, context, given, said_notes) if allowed and context else None
    if said is None and allowed and context:
        again = f"{context}; call the tool again to go on"
        said = plugin.render(request, False, again, given, said_notes)
    elif said is None:
        said = plugin.render(request, allowed, reason, given, said_notes)
    return said, allowed, reason, given, list(notes or [])


def _harness(name: str | None) -> Harness | None:
    from .errors import InvalidInput

    if name is None:
        return None
    harness = HARNESS_NAMES.get(name.lower())
    if harness is None:
        names = ", ".join(sorted({h.value for h in Harness}))
        raise InvalidInput(f"unknown harness {name!r}; use one of {names}")
    return harness


def _guard_edit(harness_name: str | None, stdin: str | bytes, cwd: str) -> Found:
    from .agents.registry import parse_payload
    from .errors import LacError

    harness = _harness(harness_name)
    try:
        request = parse_payload(stdin, harness, cwd)
    except MalformedPayload as exc:
        if _guard_off():
            return _skipped(exc.harness or harness or Harness.GENERIC)
        return _malformed(exc.harness or harness or Harness.GENERIC, str(exc), cwd)
    if _guard_off():
        return _skipped(request.harness)
    try:
        return _judged(request, cwd)
    except LacError as exc:  # a bad setting: exit 2 at the edge, or the harness's refusal
        if request.harness is Harness.GENERIC:
            raise
        from .edge import messages

        line = "; ".join(messages(exc))
        return _blocked(request.harness, line, line, request)


def _judged(request: EditRequest, cwd: str) -> Found:
    """Every group of the call's paths judged by its own board, in turn; the
    first refusal is the answer (the groups after it are not asked)."""
    project = project_dir(request, cwd)
    asking = where(project)
    groups = judged_groups(targets(request, project), asking)
    checked: list[str] = []
    locked: list[str] = []
    notes: list[str] = []
    told: list[str] = []  # what was taken from us, told beside the answer
    for group in groups:  # none: no path of any repository, no board is asked
        decision = _judge(group, asking, request.cwd)
        notes += decision.notes
        checked += decision.checked
        locked += decision.locked
        told += [decision.notice] if decision.notice else []
        if not decision.allowed:
            body = {"checked": checked, "locked": locked}
            said = "; ".join([decision.reason, *told])
            return _answer(
                request.harness, allowed=False, reason=said, body=body, notes=notes, request=request
            )
    body = {"checked": checked, "locked": locked}
    return _answer(
        request.harness,
        allowed=True,
        body=body,
        notes=notes,
        request=request,
        context="; ".join(told),
    )


def _judge(group: Group, asking: Place | None, cwd: str) -> Decision:
    """One group's decision: from its work tree's helper when it has one,
    else here (and a helper started for next time). A group asked for by an
    agent of another repository is decided here, as that agent."""
    if os.environ.get("LAC_PROBE_HELD"):  # the probe's canary (guard/canary.py): no board
        from .guard.canary import edit_answer

        if (probed := edit_answer(list(group.checked))) is not None:
            return Decision(probed[0], probed[1], checked=tuple(group.checked))
    from .edit_helper import ask, spawn

    place = group.place
    if not group.foreign:
        asked = ask(place.git_dir, place.top, group.checked, group.written, cwd)
        if asked is not None:
            try:
                return Decision.from_json(asked)
            except (KeyError, TypeError, ValueError):
                pass
    repo = locate(place)
    identity = None
    if group.foreign and asking is not None:
        identity = lambda: _asking_from(asking, repo)  # noqa: E731 - only once a board is there
    decision = check(group.checked, group.written, cwd, repo, identity=identity)
    if not group.foreign:
        spawn(place.top, repo)
    return decision


def _asking_from(asking: Place, repo: Repo) -> Identity:
    """The project's agent, asking in another repository: its name and
    capabilities from the project's work tree, its place the tree written
    (an instance belongs to one repository's working trees)."""
    from dataclasses import replace

    from .identity import instance_of, resolve

    agent = resolve(locate(asking))
    here = instance_of(repo)
    return replace(agent, instance=here.id, instance_where=here.where, instance_source=here.source)


def _guard_off() -> bool:
    return os.environ.get("LAC_GUARD", "").strip().lower() in ("off", "0", "false", "no")


def _skipped(harness: Harness) -> Found:
    return _answer(harness, allowed=True, notes=["git lac: edit guard skipped (LAC_GUARD=off)"])


def _blocked(
    harness: Harness | None,
    reason: str,
    line: str | None = None,
    request: EditRequest | None = None,
) -> Found:
    """A refusal in the harness's fail-closed form (its adapter's
    ``blocked``), with one line on stderr (``line``, default ``refused:
    REASON``): Claude Code, exit 2 (stderr is the reason it shows Claude);
    Gemini CLI, its deny JSON; the generic protocol, refused (exit 1). No
    harness known: exit 2, the block form most harnesses share."""
    from .text import shown

    reason = shown(reason)  # one line, whatever the reason holds
    line = shown(line) if line is not None else f"refused: {reason}"
    if harness is None:
        return Answer(2, "", [line]), False, reason, {}, []
    said = adapter(harness).blocked(request, reason, line)
    body: dict[str, Any] = {} if harness is not Harness.GENERIC else {"checked": [], "locked": []}
    return said, False, reason, body, []


def _malformed(harness: Harness, why: str, cwd: str) -> Found:
    """``lac.edit.malformed`` of the hook's own directory (deny when it is in
    no repository, or says nothing): refused, or let through with a line."""
    name = adapter(harness).PROJECT_DIR
    project = os.environ.get(name, "") if name else ""
    place = where(project if project and os.path.isdir(project) else cwd)
    repo = locate(place) if place else None
    choice = _policy(repo, "lac.edit.malformed", Malformed, "deny") if repo else Malformed.DENY
    said = f"malformed hook payload: {why}"
    if choice is Malformed.ALLOW:
        note = f"git lac: {said}; edit allowed (lac.edit.malformed = allow)"
        return _answer(harness, allowed=True, notes=[note])
    return _blocked(harness, f"{said} (lac.edit.malformed = deny)")


def read_payload() -> bytes:
    """This process's stdin as bytes, at most one byte past MAX_PAYLOAD (the
    parser refuses more): decoded by the parser, so bad UTF-8 is malformed."""
    if sys.stdin is None or sys.stdin.isatty():
        return b""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream without bytes under it (a test's)
        return str(sys.stdin.read(MAX_PAYLOAD + 1)).encode("utf-8", "surrogateescape")
    data: bytes = stream.read(MAX_PAYLOAD + 1)
    return data


def main(harness_name: str | None) -> int:
    """Run the hook on this process's stdin; print; the exit code. One
    handler around it all (a thin main, as pre-commit's): under a harness,
    whatever fails is one line and that harness's refusal, never a
    traceback, and never an exit code the harness lets through."""
    try:
        return _main(harness_name)
    except Exception as exc:  # noqa: BLE001 - fails closed, whatever broke
        try:
            harness = HARNESS_NAMES.get(harness_name.lower()) if harness_name else None
        except Exception:  # noqa: BLE001
            harness = None
        said = _blocked(harness, f"the edit guard failed ({type(exc).__name__}: {exc})")
        return _print(said[0])


def _main(harness_name: str | None) -> int:
    from .errors import LacError

    try:
        result = guard_edit(harness_name, read_payload(), os.getcwd())
    except LacError as exc:
        from .edge import exit_code_of, human_line, messages

        for line in messages(exc):
            print(human_line(line), file=sys.stderr, flush=True)
        return exit_code_of(exc)
    return _print(result)


def _print(result: Answer) -> int:
    if result.stdout:  # the harness's protocol: JSON, which escapes itself
        print(result.stdout, flush=True)
    if result.stderr:  # lines for people: through the one escaper, as at the edge
        from .text import shown

        for line in result.stderr:
            print(shown(line), file=sys.stderr, flush=True)
    return result.code
