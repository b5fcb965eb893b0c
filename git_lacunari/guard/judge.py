"""The guards the hooks run: judge the changes of a commit, a push, a merge or
(on a server) a received push against the board, and return a
:class:`Verdict`. Nothing is printed here: :mod:`git_lacunari.views.guard`
turns a verdict into the hook's output and exit code."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..board import Board
from ..errors import BoardUnreachable, CannotWorkHere, InvalidInput, LacError, LineHeld
from ..identity import Identity
from ..model import Conflict, EventKind, LockMode
from ..repo import Repo, discover_git_dir
from ..session import Session
from ..text import shown
from .changes import (
    MERGE_OWN,
    UPDATE,
    Plan,
    ReceivedRef,
    framework_plan,
    is_zero,
    merge_heads,
    merge_plan,
    parse_push_lines,
    parse_receive_lines,
    plan_of,
    push_exclusions,
    receive_plan,
    staged_paths,
)
from .policy import (
    NoBoard,
    Pusher,
    guard_disabled,
    hook_timeout,
    require_existing_board,
    server_offline_policy,
    server_pusher,
    trouble_policy,
)
from .verdict import HOOK_OF, WHAT_OF, Decision, Verdict

if TYPE_CHECKING:
    from ..front_door import BoardChoice


def _offline(repo: Repo, what: str, exc: CannotWorkHere) -> Verdict:
    """The offline policy applied: allowed unchecked (warn), or stopped:
    unfinished (exit 1) for a board that cannot be reached, the board's own
    error (exit 3, its kind and cause in --json) for one that was reached
    but did not answer."""
    policy, key = trouble_policy(repo, what, isinstance(exc, BoardUnreachable))
    if policy == "warn":
        decision = Decision.UNCHECKED
    elif isinstance(exc, BoardUnreachable):
        decision = Decision.BLOCKED
    else:
        decision = Decision.FAILED
    return Verdict(HOOK_OF[what], decision, trouble=exc, policy_key=key)


def _holdings(
    repo: Repo, open_board: Callable[[], Board], changed: list[str], what: str
) -> tuple[list[Conflict], float] | Verdict:
    """Other agents' locks on ``changed`` and the board's now, or the verdict
    when there is nothing to refuse or the board cannot be asked (offline: a
    commit or merge is let through by default, a push refused)."""
    hook = HOOK_OF[what]
    if not changed:
        return Verdict(hook, Decision.ALLOWED)
    open_board = functools.cache(open_board)  # one board for the question and its clock
    for unreachable in (True, False):  # a bad policy value: exit 2, before the board is asked
        trouble_policy(repo, what, unreachable)
    try:
        board = open_board()
        holdings = board.held_by_others(changed)
        now = board.now() if holdings else 0.0
    except CannotWorkHere as exc:  # unreachable, busy, damaged, too new, failed, disk full
        return _offline(repo, what, exc)
    if not holdings:
        return Verdict(hook, Decision.ALLOWED, checked=len(changed))
    return holdings, now


def judge_commit(repo: Repo, open_board: Callable[[], Board]) -> Verdict:
    """The pre-commit guard: the staged paths.

    Concluding a merge (``MERGE_HEAD`` is there: a merge that stopped for
    conflicts, committed with ``git commit``) is judged as the
    pre-merge-commit guard judges a merge."""
    if merge_heads(repo):  # MERGE_HEAD only: a plain commit has no GITHEAD_ variables
        return judge_merge(repo, open_board)
    changed = staged_paths(repo)
    found = _holdings(repo, open_board, changed, "commit")
    if isinstance(found, Verdict):
        return _with_meetings(repo, open_board, changed, found)
    holdings, now = found
    if any(h.landing_tip for h in holdings):
        from ..landing import commit_id

        head = commit_id(repo.toplevel, "HEAD")  # None: unborn, built on nothing
        ends = [head] if head is not None else []
        try:
            beside = Beside.of(open_board(), holdings)
        except CannotWorkHere as exc:
            return _offline(repo, "commit", exc)
        holdings = [h for h in holdings if not _stacked(repo, h, None, ends, beside)]
    if not holdings:
        allowed = Verdict("pre-commit", Decision.ALLOWED, checked=len(changed))
        return _with_meetings(repo, open_board, changed, allowed)
    return Verdict(
        "pre-commit", Decision.REFUSED, checked=len(changed), refused=tuple(holdings), now=now
    )


def _with_notices(repo: Repo, open_board: Callable[[], Board], verdict: Verdict) -> Verdict:
    """A commit the board judged, with the take-over notices this working
    tree was not told yet (a holder learns on its next pre-commit
    that its lock or claim was taken by force), told once, as ``status``
    tells them. Never a refusal of its own; a board that cannot answer the
    look leaves them for the next command."""
    if verdict.decision not in (Decision.ALLOWED, Decision.REFUSED):
        return verdict
    from ..liveness import tell

    try:
        told = tell(open_board(), repo)
    except LacError:
        return verdict
    if not told:
        return verdict
    said = tuple(f"git lac: {n.said()}" for n in told)
    return dataclasses.replace(verdict, warnings=(*verdict.warnings, *said))


def judge_push(
    repo: Repo,
    open_board: Callable[[], Board],
    remote: str | None,
    stdin_text: str | None,
    env: dict[str, str] | None = None,
    url: str | None = None,
) -> Verdict:
    """The pre-push guard: the commits the push brings that no remote has."""
    framework = (
        framework_plan(repo, dict(env if env is not None else os.environ))
        if remote is None
        else None
    )
    notes: list[str] = []
    if framework is not None:
        remote, plan, notes, ends = framework
    else:
        if remote is None:
            raise InvalidInput("guard pre-push needs REMOTE URL (as git passes them)")
        refs = parse_push_lines(stdin_text or "")
        exclude, notes = push_exclusions(repo, remote, url or remote, refs)
        tips = [(r.local_ref, r.local_oid) for r in refs if not is_zero(r.local_oid)]
        plan = plan_of(repo, tips, exclude)
        ends = {ref_name: [tip] for ref_name, tip in tips}
    verdict = _judge_plan(repo, open_board, plan, "push", ends)
    if notes:
        verdict = dataclasses.replace(verdict, warnings=(*notes, *verdict.warnings))
    return verdict


def judge_merge(repo: Repo, open_board: Callable[[], Board]) -> Verdict:
    """The pre-merge-commit guard: the merge's own changes and what it brings in."""
    others = merge_heads(repo, during_merge=True)
    if not others:  # not a merge after all (git runs us only for one)
        return judge_commit(repo, open_board)
    from ..landing import commit_id

    # The merge ends at a commit with every head as a parent: its own
    # changes and all it brings in are judged by what those heads contain.
    head = commit_id(repo.toplevel, "HEAD")
    parents = [*([head] if head is not None else []), *others]
    plan = merge_plan(repo, others)
    return _judge_plan(repo, open_board, plan, "merge", {r: parents for r, _, _ in plan})


def _judge_plan(
    repo: Repo,
    open_board: Callable[[], Board],
    plan: Plan,
    what: str,
    ends: dict[str, list[str]],
) -> Verdict:
    changed = sorted({p for _, _, ps in plan for p in ps})
    found = _holdings(repo, open_board, changed, what)
    if isinstance(found, Verdict):
        return _with_meetings(repo, open_board, changed, found) if what == "push" else found
    holdings, now = found
    try:
        blamed = _blame(repo, plan, holdings, ends, open_board())
    except CannotWorkHere as exc:
        return _offline(repo, what, exc)
    if not blamed:
        allowed = Verdict(HOOK_OF[what], Decision.ALLOWED, checked=len(changed))
        return _with_meetings(repo, open_board, changed, allowed) if what == "push" else allowed
    return Verdict(
        HOOK_OF[what],
        Decision.REFUSED,
        checked=len(changed),
        refused=tuple(blamed),
        now=now,
    )


def _with_meetings(
    repo: Repo, open_board: Callable[[], Board], changed: list[str], verdict: Verdict
) -> Verdict:
    """An allowed commit or push, with a warning (never a refusal) for each
    path it changes that another live claim's branch has changed too without
    declaring it (observed from the tip the board recorded): the merge of the
    two will meet there (`git lac forecast` shows the whole)."""
    if verdict.decision is not Decision.ALLOWED or not verdict.checked:
        return verdict
    from ..forecast import changed_files
    from ..landing import commit_id, destination
    from ..paths import covers

    warnings: list[str] = []
    try:
        dest = destination(repo)
        if dest is None:
            return verdict
        board = open_board()
        claims = board.live_claims()
        mine = set(changed)
        for task in claims:
            if task.owner == board.agent or task.tip is None:
                continue
            if commit_id(repo.toplevel, task.tip) is None:  # not fetched here
                continue
            for path in sorted(mine.intersection(changed_files(repo.toplevel, dest, task.tip))):
                if not any(covers(p.pattern, path, repo.ignorecase) for p in task.paths):
                    warnings.append(
                        f"git lac: warning: {path} is also changed by task #{task.id} "
                        f"({task.owner}), which did not declare it: the merge will meet "
                        "there (`git lac forecast`)"
                    )
    except LacError:  # a warning is a courtesy: never a reason to stop
        return verdict
    return dataclasses.replace(verdict, warnings=tuple(warnings))


def _blame(
    repo: Repo,
    plan: Plan,
    holdings: list[Conflict],
    ends: dict[str, list[str]],
    board: Board,
    moved_from: dict[str, str] | None = None,
) -> list[Conflict]:
    """One conflict per (ref, commit, path, holder), but for

    - a landing claim's lock the change passes (:func:`_stacked`: its own
      line's work, its version of the path, or built on it and held beside
      it; ``ends``: the commits each ref of the plan ends at: a pushed
      ref's new tip, a merge's parents);
    - a landing claim's finished work on the path (``theirs``): it cannot
      collide with the work of a claim whose lock was granted beside it. So
      a landing holder's finished line passes the lock of a claim built on
      it (stacking).

    Nothing a ref brings is waived either way when the ref moves to where
    its old tip (``moved_from``) is not: a rewind or a jump undoes changes
    on the held paths, whatever the new tip contains.

    Asked of the board only when something would be refused or a landing
    claim holds a path: the locks beside, the claims' tips, one query each."""
    top = repo.toplevel
    held: dict[str, list[Conflict]] = {}
    for holding in holdings:
        held.setdefault(holding.path, []).append(holding)

    @functools.cache
    def rewound(ref_name: str) -> bool:
        """A ref moved to where its old tip is not (a rewind, a jump): it
        undoes what the old tip had, so nothing it brings is waived."""
        old = (moved_from or {}).get(ref_name)
        return old is not None and not all(_contains(top, x, old) for x in ends.get(ref_name, []))

    def content(ref_name: str, commit: str) -> list[str]:
        """The commits a change brings its paths' content in: its own, or a
        ref's move the commit it ends at; none for a merge being made."""
        if commit == MERGE_OWN:
            return []
        return ends.get(ref_name, []) if commit == UPDATE else [commit]

    beside = Beside.of(board, holdings)
    blamed = [
        dataclasses.replace(holding, ref=ref_name, commit=commit)
        for ref_name, commit, commit_changed in plan
        for path in commit_changed
        for holding in held.get(path, [])
        if rewound(ref_name)
        or not _stacked(
            repo,
            holding,
            None if commit in (UPDATE, MERGE_OWN) else commit,
            ends.get(ref_name, []),
            beside,
            content(ref_name, commit),
        )
    ]
    if not blamed:
        return blamed
    around = Beside.of(board, blamed, every=True)
    tips = {t.id: t.tip for t in board.live_claims() if t.tip}
    # One read of a holder's events, however many of its conflicts are judged.
    granted_to = functools.cache(functools.partial(granted_beside, board))

    def theirs(c: Conflict) -> bool:
        """The change is a landing claim's finished work on this path (the
        claim holding the path still), not the holder's: under the tip that
        claim had when the holder's lock was granted beside it (the holder's
        ``locked`` event says), or under its tip now where the holder's line
        contains that and no commit of the change names the holder's task
        (its own work in progress, which nobody but the holder may push,
        carried onto the landing line by a merge of it)."""
        task = c.lock.task_id
        if task is None or c.commit is None or c.commit == MERGE_OWN:
            return False
        if rewound(c.ref or ""):
            return False
        had = ends.get(c.ref or "", []) if c.commit == UPDATE else [c.commit]
        if not had:
            return False
        here = {t for t, _ in around.landing.get(c.path, ()) if t != task}
        granted = [tip for t, tip in granted_to(task, c.lock.agent) if t in here]
        if all(any(_contains(top, tip, x) for tip in granted) for x in had):
            return True
        # A merge of that line, or a ref moved onto it, bringing the path no
        # version but the one the holder was built on.
        if granted and all(
            _blob(top, x, c.path) in {_blob(top, tip, c.path) for tip in granted} for x in had
        ):
            return True
        holder_tip = tips.get(task)
        now = [
            tip
            for t, tip in around.landing.get(c.path, ())
            if t in here and holder_tip is not None and _contains(top, holder_tip, tip)
        ]
        if not all(any(_contains(top, tip, x) for tip in now) for x in had):
            return False
        return not _names_task(top, task, c, had, (moved_from or {}).get(c.ref or ""))

    return [c for c in blamed if not theirs(c)]


def granted_beside(board: Board, task: int, owner: str) -> list[tuple[int, str]]:
    """The landing lines ``(task, tip then)`` the locks of ``owner``'s claim
    ``task`` were granted beside, as its own ``locked`` events say
    (``built_on_tips``, :func:`~git_lacunari.rules.built_on_detail`)."""
    return [
        (int(line[0]), str(line[1]))
        for e in board.log(task)
        if e.kind == EventKind.LOCKED and e.agent == owner
        for line in e.detail.get("built_on_tips") or ()
        if isinstance(line, list) and len(line) == 2
    ]


@dataclasses.dataclass(frozen=True)
class Beside:
    """Who holds the paths landing claims hold (stacking): the
    paths the acting agent (the committer, the pusher) holds a write lock on
    under a claim, and per path the landing claims' write locks, ``(task,
    tip)``, whoever's."""

    ours: frozenset[str] = frozenset()
    landing: dict[str, list[tuple[int, str]]] = dataclasses.field(default_factory=dict)
    # Per path we hold: the landing lines (task, tip then) our lock on it was
    # granted beside. Built on that tip, a change of ours passes the landing
    # lock though the holder committed since (on other paths: one on this
    # one our lock refuses).
    granted: dict[str, list[tuple[int, str]]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, board: Board, holdings: Sequence[Conflict], every: bool = False) -> Beside:
        """Asked of the board only when a landing claim holds one of the
        paths (``every``: for all of them)."""
        wanted = sorted({h.path for h in holdings if every or h.landing_tip})
        if not wanted:
            return cls()
        ours: set[str] = set()
        landing: dict[str, list[tuple[int, str]]] = {}
        granted: dict[str, list[tuple[int, str]]] = {}
        lines: dict[int, list[tuple[int, str]]] = {}
        for c in board.covering(wanted):
            if c.lock.mode != LockMode.WRITE or c.lock.task_id is None:
                continue
            if c.lock.agent == board.agent:
                ours.add(c.path)
                if c.lock.task_id not in lines:
                    lines[c.lock.task_id] = granted_beside(board, c.lock.task_id, board.agent)
                granted.setdefault(c.path, []).extend(lines[c.lock.task_id])
            if c.landing_tip:
                landing.setdefault(c.path, []).append((c.lock.task_id, c.landing_tip))
        return cls(frozenset(ours), landing, granted)


@functools.cache  # two commit ids: the answer never changes
def _contains(top: Path, commit: str, tip: str) -> bool:
    """Whether ``commit`` contains ``tip`` (False when either is not here)."""
    from ..landing import is_ancestor

    return is_ancestor(top, tip, commit)


def _stacked(
    repo: Repo,
    holding: Conflict,
    commit: str | None,
    ends: Sequence[str],
    beside: Beside,
    content: Sequence[str] = (),
) -> bool:
    """Whether ``holding`` is a landing claim's lock (its work finished,
    not in the destination yet) that this change passes (
    stacking; the board's grants waive it too, Grants._conflicts):

    - ``commit`` is part of the landing line (an ancestor of its tip): the
      landing work itself, whoever pushes it;
    - or the change is built on the tip (``commit``, None when the change is
      not a commit of its own, contains it, or one of the commits the change
      ends at, ``ends``, does; or the tip our lock on the path was granted
      beside), and either brings nothing to the path but the landing line's
      change (each of ``content``, the commits the change is judged by, has
      the tip's version of it: a merge of the line, a ref moved onto it), or
      is held beside it: the acting agent holds a write lock on the path
      under a claim, or ``commit`` is another landing claim's finished work
      on the path. Without a lock beside, everyone built on the tip could
      write the path at once.

    Then the landing work goes in with the change, or before it, and the
    two cannot conflict. A change that ends without the tip, or on an older
    one than the board recorded, is refused as before."""
    tip = holding.landing_tip
    if tip is None:
        return False
    top = repo.toplevel
    if commit is not None and _contains(top, tip, commit):
        return True
    if commit is None and content and all(_contains(top, tip, end) for end in content):
        return True  # a ref moved within the landing line: its own work
    path = holding.path
    lines = [tip] + [t for task, t in beside.granted.get(path, ()) if task == holding.lock.task_id]
    built_on = any(
        (commit is not None and _contains(top, commit, line))
        or any(_contains(top, end, line) for end in ends)
        for line in lines
    )
    if not built_on:
        return False
    # The landing lines on this path built on this one (a stack of finished
    # work): a change that brings one of their versions, or is inside one,
    # brings finished work only.
    stacked = [
        other
        for task, other in beside.landing.get(path, ())
        if task != holding.lock.task_id and _contains(top, other, tip)
    ]
    versions = {_blob(top, line, path) for line in [tip, *stacked]}
    if content and all(_blob(top, c, path) in versions for c in content):
        return True
    if path in beside.ours:
        return True
    targets = [commit] if commit is not None else list(content)
    return bool(targets) and any(
        all(_contains(top, other, x) for x in targets) for other in stacked
    )


def _names_task(top: Path, task: int, c: Conflict, had: list[str], old: str | None) -> bool:
    """Whether a commit the change brings names ``task`` (its trailer):
    the commit, or for a ref's move those between its old tip and the new
    (a branch new here: unknown, so yes)."""
    from ..landing import naming_commits

    if c.commit != UPDATE:
        return bool(naming_commits(top, task, commits=had))
    if old is None:
        return True
    return bool(naming_commits(top, task, *had, "--not", old))


@functools.cache  # a commit and a path: the answer never changes
def _blob(top: Path, commit: str, path: str) -> str | None:
    """What ``path`` is at ``commit``: its mode, type and object (a mode or
    a symlink made of the same bytes is another version); None: none, or
    not here."""
    from ..repo import git

    try:
        entry = git("ls-tree", "-z", "--full-tree", commit, "--", path, cwd=top)
    except CannotWorkHere:
        return None
    return entry.decode("utf-8", "surrogateescape").partition("\t")[0] or None


# --- the server: pre-receive ---------------------------------------------------------


def open_server_board(repo: Repo, pusher: Pusher) -> Board:
    """The board the server's config names (:func:`server_board`), never
    created by the hook."""
    from ..front_door import open_board

    chosen = server_board(repo)
    identity = Identity(pusher.name or "", pusher.source, (), "none")
    # As the pusher, unchecked by team mode.
    return open_board(
        repo,
        identity=identity,
        url=chosen.url,
        board=chosen.board,
        timeout=repo.get("lac.timeout"),
        act=False,
        from_config=False,
    )


def server_board(repo: Repo) -> BoardChoice:
    """Which board judges a push: :func:`~git_lacunari.front_door.resolve_board`
    as it stands before the push (``lac.board`` of the server's own config,
    the URL's search_path, the ``.lacconfig`` on the server's destination
    branch, its root commit). A server that guards must say where its board is: fail closed."""
    from ..front_door import resolve_board

    url = repo.get("lac.url")
    try:
        require_existing_board(repo, url)
    except NoBoard:
        raise BoardUnreachable(
            f"cannot reach the board: no lac.url and no board in {repo.common_dir}"
        ) from None
    return resolve_board(repo, url=url)


def check_board_kept(repo: Repo, refs: list[ReceivedRef]) -> None:
    """A push may not choose the board that judges the pushes after it.

    When the server's own config does not name its board (``lac.board``, or a
    URL that sets its search_path), the board comes from its destination
    branch (:func:`~git_lacunari.repo.server_root`): the ``.lacconfig``
    committed there, else its root commit. A push that would change that
    answer (a new ``.lacconfig``, a history with another root, a push that
    makes another branch the destination) is refused: the server's
    administrator names the board first."""
    from ..errors import BoardUnknown
    from ..front_door import default_board, resolve_board
    from ..repo import server_root
    from ..store import is_postgres_url

    url = repo.get("lac.url")
    if not (url and is_postgres_url(url)) or repo.get("lac.board"):
        return
    before = server_root(repo)
    moved = {r.ref: None if is_zero(r.new) else r.new for r in refs}
    after = server_root(repo, moved)
    if after is None or after.commit is None:  # nothing left to name a board: refused below
        return
    if before is not None and (after.ref, after.commit) == (before.ref, before.commit):
        return
    try:
        current = resolve_board(repo, url=url)
    except BoardUnknown:
        return  # judged as unknown (refused) by the guard itself
    if current.board is None:  # the URL's search_path chooses: no push can change it
        return
    try:
        chosen, _ = default_board(repo, after.commit)
    except (BoardUnknown, CannotWorkHere):
        chosen = None
    if chosen != current.board:
        raise InvalidInput(
            f"this push changes which board guards this repository ({current.board} -> "
            f"{chosen or 'none'}, from {after.ref}'s .lacconfig or root commit), and a push "
            "may not choose its own judge: the server's administrator sets "
            "`git config lac.board NAME` in the server repository first"
        )


def deleted_lines(repo: Repo, refs: Sequence[ReceivedRef], board: Board, pusher: Pusher) -> None:
    """A push deleting a branch (not the destination) that carries a live
    claim's unlanded work is refused, naming the holder and the task
    (:class:`~git_lacunari.errors.LineHeld`): the claim's last known commit
    (its tip) is in the branch and not in the destination, and the pusher is
    not the holder. Any other branch deletion passes: it takes away no path
    anyone builds on (the branch can only be made again from a commit, which
    is judged as any new branch is)."""
    from ..landing import is_ancestor
    from ..repo import server_root

    gone = [
        (r.ref, r.old)
        for r in refs
        if is_zero(r.new) and not is_zero(r.old) and r.ref.startswith("refs/heads/")
    ]
    root = server_root(repo)
    gone = [(ref, old) for ref, old in gone if root is None or ref != root.ref]
    if not gone:
        return
    top = repo.toplevel
    for task in board.live_claims():
        if task.tip is None or task.owner is None or task.owner == pusher.name:
            continue
        if root is not None and root.commit and is_ancestor(top, task.tip, root.commit):
            continue  # landed: the destination keeps it
        for ref, old in gone:
            if is_ancestor(top, task.tip, old):
                branch = ref.removeprefix("refs/heads/")
                raise LineHeld(branch=branch, task=task.id, holder=task.owner)


def _server_offline(repo: Repo, exc: CannotWorkHere) -> Verdict:
    """The server's board gave no answer: ``lac.guard.server.offline``."""
    allow = server_offline_policy(repo) == "allow"
    return Verdict(
        "pre-receive",
        Decision.UNCHECKED if allow else Decision.BLOCKED,
        trouble=exc,
        policy_key="lac.guard.server.offline",
    )


def judge_receive(
    repo: Repo,
    stdin_text: str,
    env: dict[str, str],
    open_board: Callable[[Repo, Pusher], Board] = open_server_board,
) -> Verdict:
    """Judge a whole push as the server receives it."""
    refs = parse_receive_lines(stdin_text)  # every line first: one refusal rejects them all
    pusher = server_pusher(repo, env)
    plan = receive_plan(repo, refs)  # an id it cannot read: refused before anything else
    if env.get("LAC_PROBE_HELD"):  # the probe's canary (guard/canary.py): no board
        from .canary import receive_verdict

        if (probed := receive_verdict(plan, pusher)) is not None:
            return probed
    check_board_kept(repo, refs)
    if any(r.ref.startswith("refs/lac/land/") for r in refs):
        # The landing queue (land_queue.py): only a task's holder queues its line.
        from ..land_queue import check_queue_push

        try:
            check_queue_push(open_board(repo, pusher), refs, pusher.name)
        except CannotWorkHere as exc:
            return _server_offline(repo, exc)
    changed = sorted({p for _, _, ps in plan for p in ps})
    board: Board | None = None
    if any(is_zero(r.new) for r in refs):  # a deletion is judged by the claims' lines
        try:
            board = open_board(repo, pusher)
            deleted_lines(repo, refs, board, pusher)
        except CannotWorkHere as exc:
            return _server_offline(repo, exc)
    if not changed:
        return Verdict("pre-receive", Decision.ALLOWED, pusher=pusher)
    try:
        board = board or open_board(repo, pusher)
        holdings = board.held_by_other_agents(changed)
        elsewhere, lines = _other_instances(board, pusher, plan, changed)
        now = board.now() if holdings or elsewhere else 0.0
    except CannotWorkHere as exc:  # unreachable, busy, damaged, too new: no answer
        return _server_offline(repo, exc)
    if elsewhere:
        return Verdict(
            "pre-receive",
            Decision.REFUSED,
            checked=len(changed),
            refused=tuple(elsewhere),
            now=now,
            pusher=pusher,
            elsewhere=tuple(lines),
        )
    if not holdings:
        return Verdict("pre-receive", Decision.ALLOWED, checked=len(changed), pusher=pusher)
    try:
        blamed = _blame(
            repo,
            plan,
            holdings,
            {r.ref: [r.new] for r in refs if not is_zero(r.new)},
            board,
            {r.ref: r.old for r in refs if not is_zero(r.old)},
        )
    except CannotWorkHere as exc:
        return _server_offline(repo, exc)
    if not blamed:
        return Verdict("pre-receive", Decision.ALLOWED, checked=len(changed), pusher=pusher)
    return Verdict(
        "pre-receive",
        Decision.REFUSED,
        checked=len(changed),
        refused=tuple(blamed),
        now=now,
        pusher=pusher,
        ask_pusher_name=not (pusher.name or repo.get("lac.guard.server.pusher-env")),
    )


def _other_instances(
    board: Board, pusher: Pusher, plan: Plan, changed: list[str]
) -> tuple[list[Conflict], list[str]]:
    """The pusher's own name's locks on ``changed`` held in another working
    tree (instance) than the push comes from: one name in two clones is
    two workers, and one may not push over the other's claim. The push says
    its instance (``lac.instance=ID``; `git lac init` sets it); one that
    does not, from a name that holds paths in several instances, cannot be
    told apart, so it is refused whole where it changes a held path. A
    name that holds in one instance only is judged by name, as before.
    The conflicts (one per ref, commit and path) and the lines to say."""
    if pusher.name is None:
        return [], []
    own = [h for h in board.covering(changed) if h.lock.agent == pusher.name]
    if not own:
        return [], []
    if pusher.instance is not None:
        held = [h for h in own if h.lock.instance and h.lock.instance != pusher.instance]
        said = [
            f"git lac: {shown(h.path)} is held by {shown(pusher.name)}'s instance "
            f"{h.lock.instance} ({board.where_of(h.lock.instance)}), not this push's "
            f"({pusher.instance}): work there, or take its claims over here with "
            f"`git lac instance adopt {h.lock.instance}`"
            for h in held
        ]
    else:
        places = {lk.instance for lk in board.locks(mine=True) if lk.instance}
        if len(places) < 2:
            return [], []
        held = own
        said = [
            f"git lac: {shown(pusher.name)} holds paths in {len(places)} working trees and this "
            "push does not say which it comes from: run `git lac init` (or `git lac hooks "
            "install`) in that clone, which sets push.pushOption lac.instance=ID, or push "
            "with -o lac.instance=ID (`git lac instance list`)"
        ]
    by_path: dict[str, list[Conflict]] = {}
    for h in held:
        by_path.setdefault(h.path, []).append(h)
    conflicts = [
        dataclasses.replace(h, ref=ref_name, commit=commit)
        for ref_name, commit, paths in plan
        for path in paths
        for h in by_path.get(path, [])
    ]
    return conflicts, list(dict.fromkeys(said)) if conflicts else []


# --- one hook, as the hook scripts call it ------------------------------------------

GUARDS = ("pre-commit", "pre-push", "pre-merge-commit", "pre-receive")


def read_stdin() -> str:
    return "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()


def judge_hook(
    session: Session, hook: str, *, remote: str | None = None, url: str | None = None
) -> Verdict:
    """One hook's guard: its verdict, for :func:`views.guard.guard_result`."""
    if hook == "pre-receive":
        # Never LAC_GUARD: a push over a local path or file:// hands the
        # pusher's environment to the server's hook, so it is the pusher's
        # switch, and the server's guard is not the pusher's to turn off.
        return judge_receive(discover_git_dir(), read_stdin(), dict(os.environ))
    if guard_disabled():
        return Verdict(hook, Decision.SWITCHED_OFF)
    repo = session.repo
    if hook == "pre-commit":  # conflict markers a reconcile left: no board needed
        from ..reconcile.worktree import refuse_markers

        refuse_markers(repo)
        if os.environ.get("LAC_PROBE_HELD"):  # the probe's canary (guard/canary.py): no board
            from .canary import commit_verdict

            if (probed := commit_verdict(staged_paths(repo))) is not None:
                return probed
    try:
        require_existing_board(repo, repo.get("lac.url"))
    except NoBoard:  # silent: a repository that never used git lac (a global hooksPath)
        return Verdict(hook, Decision.NO_BOARD)
    except BoardUnreachable as exc:
        return _offline(repo, WHAT_OF.get(hook, "commit"), exc)
    bound = hook_timeout(repo)

    def open_board() -> Board:
        return session.board(timeout=bound)

    if hook == "pre-commit":
        return _with_notices(repo, open_board, judge_commit(repo, open_board))
    if hook == "pre-merge-commit":
        return judge_merge(repo, open_board)
    stdin_text = read_stdin() if remote is not None else None
    verdict = judge_push(repo, open_board, remote, stdin_text, url=url)
    if verdict.decision is Decision.ALLOWED:
        # What the push carries is where our claims stand now (a rebase or
        # an amend runs no post-commit): told to the board, best effort.
        from ..landing import track

        with contextlib.suppress(LacError):
            track(open_board(), repo)
    return verdict
