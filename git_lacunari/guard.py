"""The guards the hooks run: refuse changes to paths another agent holds.

What changed is read with the ``git`` CLI, never libgit2: a hook may be
handed a temporary index (``git commit -a``, ``git commit PATH``) that only
``GIT_INDEX_FILE`` names, and git's own commands honour it.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .board import Board
from .durations import format_duration
from .edge import Result
from .errors import (
    BoardUnreachable,
    CannotWorkHere,
    InvalidInput,
    LacError,
    PathLocked,
)
from .identity import Identity, validate_name
from .model import Conflict
from .repo import Repo, discover_git_dir, git
from .session import Session

OFFLINE_CHOICES = ("warn", "refuse")
ADVICE = (  # printed under a guard's refusal, for people
    "What now: wait for the holder to finish, ask them to release it, see who holds what "
    "with `git lac check PATH`, or skip the guard with --no-verify (the board then cannot "
    "warn anyone, and the collision surfaces later, for `git lac reconcile`)."
)


def _split_z(out: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def staged_paths(repo: Repo) -> list[str]:
    """Every path the commit being made changes: added, modified, deleted,
    type-changed, and both sides of a rename (renames are not paired, so each
    side is listed on its own)."""
    # Against HEAD; on an unborn branch git diffs against the empty tree itself.
    out = git(
        "diff",
        "--cached",
        "--name-only",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        cwd=repo.toplevel,
    )
    return _split_z(out)


# Fixed for the parse below, whatever the user's config says.
LOG_CONFIG = ("-c", "log.showRoot=true", "-c", "log.showSignature=false")


def changes_of(repo: Repo, revs: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Every commit ``git rev-list REVS`` lists, with the paths it changes; one git process.

    A commit's paths are those it changes against its parent (a root: against
    nothing): added, modified, deleted, type- or mode-changed, both sides of a
    rename (renames are not paired). A merge's paths are **its own changes**:
    where its result differs from every parent (git's combined diff, ``-c``).
    What a merge merely carries in from one parent is that parent's change,
    judged on the commit that made it when that commit is new, and not blamed
    when the other side already has it.
    """
    if not revs:
        return []
    out = git(
        *LOG_CONFIG,
        "log",
        "--format=%x01%H",
        "-z",
        "--name-only",
        "-c",
        "--no-renames",
        "--no-ext-diff",
        *revs,
        "--",
        cwd=repo.toplevel,
    )
    found: list[tuple[str, list[str]]] = []
    first = False
    for token in out.split(b"\0"):
        if token.startswith(b"\x01") and len(token) in (41, 65):
            found.append((token[1:].decode(), []))
            first = True  # the header ends in a newline before a single parent's paths
            continue
        if first and token.startswith(b"\n"):
            token = token[1:]
        first = False
        if token and found:
            found[-1][1].append(token.decode("utf-8", "surrogateescape"))
    return found


def offline_policy(repo: Repo, default: str, key: str = "lac.guard.offline") -> str:
    value = (repo.get(key) or default).strip().lower()
    if value not in OFFLINE_CHOICES:
        raise InvalidInput(f"{key} is {value!r}; use warn or refuse")
    return value


# The offline policy (README, "When the board cannot answer"): what a client
# hook does when the board gives no answer, by trouble and by hook.
# - unreachable (no connection, a configured board file missing):
#   lac.guard.offline, default warn (commit, merge) and refuse (push);
# - reached but no answer (busy or locked past the bound, damaged, too new,
#   failed, disk full): lac.guard.unanswered, default refuse on every hook,
#   so a slow or broken board never lets work through unchecked unless the
#   repository says so.
def trouble_policy(repo: Repo, what: str, unreachable: bool) -> tuple[str, str]:
    """(policy, the key that sets it) for a board that cannot be reached, or
    one that was reached but did not answer, on this hook."""
    if unreachable:
        key, default = "lac.guard.offline", "refuse" if what == "push" else "warn"
    else:
        key, default = "lac.guard.unanswered", "refuse"
    return offline_policy(repo, default, key), key


def describe(holding: Conflict, now: float) -> str:
    """Who holds it and how alive their claim is, aged on the board's clock."""
    lock = holding.lock
    if lock.task_id is not None:
        beat = format_duration(now - holding.heartbeat_at) if holding.heartbeat_at else "none"
        where = f"task #{lock.task_id}, heartbeat {beat} ago"
    else:
        where = f"no task, locked {format_duration(now - lock.acquired_at)} ago"
    return f"held by {lock.agent} ({lock.mode} lock {lock.pattern}, {where})"


def checked(
    hook: str, paths: int, *, skipped: bool = False, offline: bool = False
) -> dict[str, object]:
    """The JSON body of a guard that did not refuse."""
    return {"hook": hook, "checked": paths, "skipped": skipped, "offline": offline}


HOOK_OF = {"commit": "pre-commit", "push": "pre-push", "merge": "pre-merge-commit"}


def _offline(repo: Repo, what: str, exc: CannotWorkHere) -> Result:
    """The offline policy applied: allowed unchecked with one line (warn), or
    refused with one line: unfinished (exit 1) for a board that cannot be
    reached, the board's own error (exit 3, its kind and cause in --json)
    for one that was reached but did not answer."""
    hook = HOOK_OF[what]
    policy, key = trouble_policy(repo, what, isinstance(exc, BoardUnreachable))
    if policy == "warn":
        return Result(
            checked(hook, 0, offline=True),
            warnings=[f"git lac: {exc.message}; {what} allowed unchecked ({key} = warn)"],
        )
    if not isinstance(exc, BoardUnreachable):
        exc.args = (
            f"{exc.message}; {what} refused, nothing was checked "
            f"({key} = refuse; LAC_GUARD=off skips the guard)",
        )
        exc.hint = None
        raise exc
    return Result(
        checked(hook, 0, offline=True),
        unfinished=f"{exc.message}; {what} refused ({key} = refuse; LAC_GUARD=off skips the guard)",
    )


def _holdings(
    repo: Repo, open_board: Callable[[], Board], changed: list[str], what: str
) -> tuple[list[Conflict], float] | Result:
    """Other agents' locks on ``changed`` and the board's now, or the result
    when there is nothing to refuse or the board cannot be asked (offline: a
    commit or merge is let through by default, a push refused)."""
    hook = HOOK_OF[what]
    if not changed:
        return Result(checked(hook, 0))
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
        return Result(checked(hook, len(changed)))
    return holdings, now


def guard_pre_commit(repo: Repo, open_board: Callable[[], Board]) -> Result:
    """Allowed (a Result), or refused: raises :class:`PathLocked`.

    Concluding a merge (``MERGE_HEAD`` is there: a merge that stopped for
    conflicts, committed with ``git commit``) is judged as the
    pre-merge-commit guard judges a merge."""
    if merge_heads(repo):  # MERGE_HEAD only: a plain commit has no GITHEAD_ variables
        return guard_pre_merge_commit(repo, open_board)
    found = _holdings(repo, open_board, staged_paths(repo), "commit")
    if isinstance(found, Result):
        return found
    holdings, now = found
    paths = sorted({h.path for h in holdings})
    width = max(len(p) for p in paths)
    raise PathLocked(
        holdings,
        details=[
            f"git lac: commit refused: {len(paths)} staged path(s) held by another agent",
            *(f"  {h.path:<{width}}  {describe(h, now)}" for h in holdings),
            ADVICE,
        ],
    )


@dataclass
class PushedRef:
    local_ref: str
    local_oid: str
    remote_ref: str
    remote_oid: str


def parse_push_lines(text: str) -> list[PushedRef]:
    refs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.rsplit(maxsplit=3)
        if len(parts) != 4:
            raise InvalidInput(f"unexpected pre-push input line: {line!r}")
        refs.append(PushedRef(*parts))
    return refs


def is_zero(oid: str) -> bool:
    return not oid.strip("0")


def _exists(repo: Repo, oid: str) -> bool:
    try:
        git("cat-file", "-e", f"{oid}^{{commit}}", cwd=repo.toplevel)
        return True
    except CannotWorkHere:
        return False


def _normal_url(repo: Repo, url: str) -> str:
    """A URL as compared with a configured one: a local path made absolute."""
    url = url.strip()
    if url.startswith("file://"):
        url = url[len("file://") :]
    if "://" not in url and ":" not in url.split("/", 1)[0]:  # a local path, not host:path
        url = os.path.realpath(os.path.join(repo.toplevel, url))
    url = url.rstrip("/")
    return url[: -len(".git")] if url.endswith(".git") else url


def destination(repo: Repo, remote: str | None, url: str | None) -> str | None:
    """The configured remote a push goes to: the one it names, or the one
    whose url or pushurl is the push's URL; None when the clone knows none."""
    try:
        out = git("config", "-z", "--get-regexp", r"^remote\..*\.(push)?url$", cwd=repo.toplevel)
    except CannotWorkHere:  # no remote configured at all
        return None
    urls: dict[str, list[str]] = {}
    for item in _split_z(out):
        key, _, value = item.partition("\n")
        name = key[len("remote.") : key.rindex(".")]
        urls.setdefault(name, []).append(value)
    if remote in urls:
        return remote
    if url:
        wanted = _normal_url(repo, url)
        for name, configured in urls.items():
            if any(_normal_url(repo, u) == wanted for u in configured):
                return name
    return None


def _has_refs(repo: Repo, prefix: str) -> bool:
    out = git("for-each-ref", "--count=1", "--format=x", prefix, cwd=repo.toplevel)
    return bool(out.strip())


def already_there(
    repo: Repo, remote: str | None, url: str | None, remote_oids: Sequence[str]
) -> list[str]:
    """rev-list arguments for what the push's destination already has, as far
    as this clone can tell (README, "Guarding commits", the pre-push rule):

    - every remote side git names on the hook's input that the clone has;
    - the destination's remote-tracking refs, when the push names a configured
      remote or its URL is one's url/pushurl and the clone has fetched it;
    - otherwise (a URL the clone cannot match, a fresh remote, ``--mirror``
      to a new repository) every remote-tracking ref of every remote: history
      already published anywhere was judged when it was pushed there (and by
      the server's pre-receive), so only commits no remote has are blamed.
    """
    known = sorted({o for o in remote_oids if not is_zero(o) and _exists(repo, o)})
    name = destination(repo, remote, url)
    if name is not None and _has_refs(repo, f"refs/remotes/{name}/"):
        return [*known, f"--glob=refs/remotes/{name}/*"]
    return [*known, "--remotes"]


Plan = list[tuple[str, str, list[str]]]  # (ref, commit, paths it changes)


def _plan(repo: Repo, tips: Sequence[tuple[str, str]], exclude: Sequence[str]) -> Plan:
    """Each new commit once, with the first ref that brings it."""
    plan: Plan = []
    seen: set[str] = set()
    for ref_name, tip in tips:
        for commit, changed in changes_of(repo, [tip, "--not", *exclude]):
            if commit not in seen:
                seen.add(commit)
                plan.append((ref_name, commit, changed))
    return plan


def framework_plan(repo: Repo, env: dict[str, str]) -> tuple[str, Plan] | None:
    """The push range the pre-commit framework hands its pre-push hooks (it
    keeps git's stdin to itself): the remote, and what it pushes."""
    remote = env.get("PRE_COMMIT_REMOTE_NAME")
    if not remote:
        return None
    local = env.get("PRE_COMMIT_LOCAL_BRANCH") or env.get("PRE_COMMIT_TO_REF") or "HEAD"
    to_ref, from_ref = env.get("PRE_COMMIT_TO_REF") or local, env.get("PRE_COMMIT_FROM_REF")
    exclude = already_there(repo, remote, env.get("PRE_COMMIT_REMOTE_URL"), [])
    if from_ref and not is_zero(from_ref):
        exclude = [from_ref, *exclude]
    return remote, _plan(repo, [(local, to_ref)], exclude)


def guard_pre_push(
    repo: Repo,
    open_board: Callable[[], Board],
    remote: str | None,
    stdin_text: str | None,
    env: dict[str, str] | None = None,
    url: str | None = None,
) -> Result:
    """Allowed (a Result), or refused: raises :class:`PathLocked`."""
    framework = (
        framework_plan(repo, dict(env if env is not None else os.environ))
        if remote is None
        else None
    )
    if framework is not None:
        remote, plan = framework
    else:
        if remote is None:
            raise InvalidInput("guard pre-push needs REMOTE URL (as git passes them)")
        refs = parse_push_lines(stdin_text or "")
        exclude = already_there(repo, remote, url or remote, [r.remote_oid for r in refs])
        tips = [(r.local_ref, r.local_oid) for r in refs if not is_zero(r.local_oid)]
        plan = _plan(repo, tips, exclude)
    return _judge_plan(repo, open_board, plan, "push")


def _judge_plan(repo: Repo, open_board: Callable[[], Board], plan: Plan, what: str) -> Result:
    changed = sorted({p for _, _, ps in plan for p in ps})
    found = _holdings(repo, open_board, changed, what)
    if isinstance(found, Result):
        return found
    holdings, now = found
    refused, lines = _blame(plan, holdings, now)
    raise PathLocked(
        refused,
        details=[
            f"git lac: {what} refused: {len(refused)} change(s) to paths held by another agent",
            *lines,
            ADVICE,
        ],
    )


def _blame(plan: Plan, holdings: list[Conflict], now: float) -> tuple[list[Conflict], list[str]]:
    """One conflict and one line per (ref, commit, path, holder)."""
    held: dict[str, list[Conflict]] = {}
    for holding in holdings:
        held.setdefault(holding.path, []).append(holding)
    refused: list[Conflict] = []
    lines: list[str] = []
    for ref_name, commit, commit_changed in plan:
        for path in commit_changed:
            for holding in held.get(path, []):
                refused.append(dataclasses.replace(holding, ref=ref_name, commit=commit))
                lines.append(f"  {ref_name} {commit[:12]} {path}  {describe(holding, now)}")
    return refused, lines


# --- merges ----------------------------------------------------------------------


def merge_heads(repo: Repo, *, during_merge: bool = False) -> list[str]:
    """The other parents of the merge being committed, if any: ``MERGE_HEAD``
    (a merge concluded with ``git commit``), or, while ``git merge`` runs the
    pre-merge-commit hook (it writes MERGE_HEAD only if the hook refuses),
    the ``GITHEAD_<oid>`` variables git sets for each head being merged."""
    try:  # MERGE_HEAD is per worktree: in its own git dir, no process needed
        return (repo.git_dir / "MERGE_HEAD").read_text().split()
    except OSError:
        pass
    if not during_merge:
        return []
    return sorted(
        key[len("GITHEAD_") :]
        for key in os.environ
        if key.startswith("GITHEAD_") and all(c in HEX for c in key[len("GITHEAD_") :].lower())
    )


HEX = set("0123456789abcdef")


def merge_plan(repo: Repo, others: list[str]) -> Plan:
    """What a merge being committed would have pre-push blame, blamed now:
    its own changes (the index differs from every parent there) and the
    changes of the commits it brings in that no remote has (README, "Merges")."""
    own: set[str] | None = None
    for parent in ["HEAD", *others]:
        out = git(
            "diff-index",
            "--cached",
            "--name-only",
            "-z",
            "--no-renames",
            parent,
            "--",
            cwd=repo.toplevel,
        )
        changed = set(_split_z(out))
        own = changed if own is None else own & changed
    plan: Plan = [("MERGE", "(the merge)", sorted(own or ()))]
    brought = _plan(repo, [("MERGE_HEAD", o) for o in others], ["HEAD", "--remotes"])
    return [*plan, *brought]


def guard_pre_merge_commit(repo: Repo, open_board: Callable[[], Board]) -> Result:
    """Allowed (a Result), or refused: raises :class:`PathLocked`."""
    others = merge_heads(repo, during_merge=True)
    if not others:  # not a merge after all (git runs us only for one)
        return guard_pre_commit(repo, open_board)
    return _judge_plan(repo, open_board, merge_plan(repo, others), "merge")


# --- the server: pre-receive ---------------------------------------------------------

SERVER_OFFLINE_CHOICES = ("refuse", "allow")
PUSH_OPTION = "lac.agent="
RELEASE_ADVICE = (
    "To get a release: ask the holder to finish (`git lac done ID`) or release it "
    "(`git lac release ID`, `git lac unlock PATTERN`), or wait until a stale claim "
    "expires (`git lac keeper`); then push again. The holder may push its own paths."
)


@dataclass
class ReceivedRef:
    old: str
    new: str
    ref: str


def parse_receive_lines(text: str) -> list[ReceivedRef]:
    refs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(maxsplit=2)
        if len(parts) != 3:
            raise InvalidInput(f"unexpected pre-receive input line: {line!r}")
        refs.append(ReceivedRef(*parts))
    return refs


def push_options(env: dict[str, str]) -> list[str]:
    """``git push -o`` values, as git hands them to the hooks."""
    try:
        count = int(env.get("GIT_PUSH_OPTION_COUNT", "0"))
    except ValueError:
        return []
    return [env.get(f"GIT_PUSH_OPTION_{n}", "") for n in range(count)]


@dataclass(frozen=True)
class Pusher:
    name: str | None  # None: nobody known, so nothing held is anyone's own
    source: str


def server_pusher(repo: Repo, env: dict[str, str]) -> Pusher:
    """Who is pushing (README, "Guarding the server", who trusts what).

    When ``lac.guard.server.pusher-env`` names a variable, the hosting layer
    has authenticated the pusher and that variable alone says who it is: a
    push option may only repeat it (a different name is refused), and when
    the variable is unset nobody is known. Without it, the push option
    ``lac.agent=NAME`` is taken at its word, as ``LAC_AGENT`` is on a client.
    """
    claimed = [o[len(PUSH_OPTION) :] for o in push_options(env) if o.startswith(PUSH_OPTION)]
    option = claimed[-1] if claimed else None
    variable = (repo.get("lac.guard.server.pusher-env") or "").strip()
    if variable:
        hosted = env.get(variable) or None
        if option is not None and option != hosted:
            raise InvalidInput(
                f"push option lac.agent={option} does not match the pusher the server "
                f"authenticated ({variable}={hosted or 'unset'}); drop the option"
            )
        if hosted is not None:
            return Pusher(validate_name(hosted), f"environment {variable}")
        return Pusher(None, f"environment {variable} is unset")
    if option is not None:
        return Pusher(validate_name(option), "push option lac.agent")
    return Pusher(None, "no push option lac.agent")


def server_offline(repo: Repo, exc: LacError) -> Result:
    """A board that cannot answer: refuse the push (default) or let it in, one line."""
    value = (repo.get("lac.guard.server.offline") or "refuse").strip().lower()
    if value not in SERVER_OFFLINE_CHOICES:
        raise InvalidInput(f"lac.guard.server.offline is {value!r}; use refuse or allow")
    if value == "allow":
        return Result(
            checked("pre-receive", 0, offline=True),
            warnings=[
                f"git lac: {exc.message}; push allowed unchecked (lac.guard.server.offline = allow)"
            ],
        )
    return Result(
        checked("pre-receive", 0, offline=True),
        unfinished=f"push refused: {exc.message} (lac.guard.server.offline = refuse)",
    )


def receive_plan(repo: Repo, refs: Sequence[ReceivedRef]) -> Plan:
    """Only the commits the server does not have yet. While pre-receive runs
    the pushed objects sit in git's quarantine, visible to git commands, and
    no ref has moved: ``--not --all`` is exactly what was there before."""
    tips: list[tuple[str, str]] = []
    for ref in refs:
        if is_zero(ref.new):  # a deletion pushes no commit
            continue
        try:
            tip = git("rev-parse", "--verify", "-q", f"{ref.new}^{{commit}}", cwd=repo.toplevel)
        except CannotWorkHere:  # a tag of a tree or a blob: no commits
            continue
        tips.append((ref.ref, tip.decode().strip()))
    return _plan(repo, tips, ["--all"])


def open_server_board(repo: Repo, pusher: Pusher) -> Board:
    """The board the server's config names, never created by the hook."""
    from .front_door import open_board

    url = repo.get("lac.url")
    try:
        require_existing_board(repo, url)
    except NoBoard:  # a server that guards must say where its board is: fail closed
        raise BoardUnreachable(
            f"cannot reach the board: no lac.url and no board in {repo.common_dir}"
        ) from None
    identity = Identity(pusher.name or "", pusher.source, (), "none")
    # As before: the URL alone (no lac.board), as the pusher, unchecked by team mode.
    return open_board(
        repo,
        identity=identity,
        url=url,
        timeout=repo.get("lac.timeout"),
        act=False,
        from_config=False,
    )


def guard_pre_receive(
    repo: Repo,
    stdin_text: str,
    env: dict[str, str],
    open_board: Callable[[Repo, Pusher], Board] = open_server_board,
) -> Result:
    """Judge a whole push: allowed (a Result), or refused (raises :class:`PathLocked`)."""
    refs = parse_receive_lines(stdin_text)  # every line first: one refusal rejects them all
    pusher = server_pusher(repo, env)
    plan = receive_plan(repo, refs)
    changed = sorted({p for _, _, ps in plan for p in ps})
    if not changed:
        return Result({**checked("pre-receive", 0), "pusher": pusher.name})
    try:
        board = open_board(repo, pusher)
        holdings = board.held_by_other_agents(changed)
        now = board.now() if holdings else 0.0
    except CannotWorkHere as exc:  # unreachable, busy, damaged, too new: no answer
        return server_offline(repo, exc)
    if not holdings:
        return Result({**checked("pre-receive", len(changed)), "pusher": pusher.name})
    refused, lines = _blame(plan, holdings, now)
    who = pusher.name or "unknown"
    raise PathLocked(
        refused,
        details=[
            f"git lac: push refused: {len(refused)} change(s) to paths held by another agent "
            f"(pusher: {who}, {pusher.source})",
            *lines,
            RELEASE_ADVICE,
            *(
                []
                if pusher.name or repo.get("lac.guard.server.pusher-env")
                else ["If you hold them, say who you are: git push -o lac.agent=NAME"]
            ),
        ],
    )


# --- which board, and whether there is one ---------------------------------------


class NoBoard(Exception):
    """No lac.url and no embedded board: nothing is held, so nothing to guard."""


def require_existing_board(repo: Repo, url: str | None) -> None:
    """A hook never creates a board: with no ``lac.url`` and no embedded board
    file there is none (:class:`NoBoard`); a configured SQLite file that is
    missing is a board that cannot be reached."""
    from .store import is_postgres_url
    from .store.sqlite import sqlite_path

    if url and is_postgres_url(url):
        return
    path = sqlite_path(url, repo.common_dir)
    if path.exists():
        return
    if not url:
        raise NoBoard()
    raise BoardUnreachable(f"cannot reach the board: no board at {path}")


def guard_disabled(env: dict[str, str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get("LAC_GUARD", "").strip().lower()
    return value in ("off", "0", "false", "no")


def read_stdin() -> str:
    return "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()


GUARDS = ("pre-commit", "pre-push", "pre-merge-commit", "pre-receive")


def run_guard(
    session: Session, hook: str, *, remote: str | None = None, url: str | None = None
) -> Result:
    """One hook's guard, for the edge to render: a Result when allowed,
    :class:`PathLocked` raised when refused."""
    if hook == "pre-receive":
        # Never LAC_GUARD: a push over a local path or file:// hands the
        # pusher's environment to the server's hook, so it is the pusher's
        # switch, and the server's guard is not the pusher's to turn off.
        return guard_pre_receive(discover_git_dir(), read_stdin(), dict(os.environ))
    if guard_disabled():
        return Result(
            checked(hook, 0, skipped=True),
            warnings=[f"git lac: {hook} guard skipped (LAC_GUARD=off)"],
        )
    repo = session.repo
    try:
        require_existing_board(repo, repo.get("lac.url"))
    except NoBoard:  # silent: a repository that never used git lac (a global hooksPath)
        return Result(checked(hook, 0, skipped=True))
    except BoardUnreachable as exc:
        return _offline(
            repo, {"pre-push": "push", "pre-merge-commit": "merge"}.get(hook, "commit"), exc
        )
    bound = hook_timeout(repo)

    def open_board() -> Board:
        return session.board(timeout=bound)

    if hook == "pre-commit":
        return guard_pre_commit(repo, open_board)
    if hook == "pre-merge-commit":
        return guard_pre_merge_commit(repo, open_board)
    stdin_text = read_stdin() if remote is not None else None
    return guard_pre_push(repo, open_board, remote, stdin_text, url=url)


HOOK_TIMEOUT_S = 2.0  # a commit should not stand still for long on a busy board


def hook_timeout(repo: Repo) -> str:
    """The client hooks' bound on any one wait: ``lac.guard.timeout``, else
    the shorter of ``lac.timeout`` and 2 s (``LAC_TIMEOUT`` beats both, as
    everywhere)."""
    from .durations import parse_duration
    from .errors import BadDuration
    from .store.base import MAX_TIMEOUT_S, resolve_timeout

    given = repo.get("lac.guard.timeout")
    if given:
        try:
            seconds = parse_duration(given, at_most=MAX_TIMEOUT_S)
        except BadDuration as exc:
            raise BadDuration(f"lac.guard.timeout: {exc.message}") from None
    else:
        seconds = min(resolve_timeout(repo.get("lac.timeout")), HOOK_TIMEOUT_S)
    return f"{max(seconds, 0.001):.3f}"
