"""What a push, commit or merge changes, read with the ``git`` CLI, never
libgit2: a hook may be handed a temporary index (``git commit -a``,
``git commit PATH``) that only ``GIT_INDEX_FILE`` names, and git's own
commands honour it. Each guard's question for the board is a :data:`Plan`:
which ref and commit change which paths."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import CannotWorkHere, InvalidInput
from ..repo import Repo, git


def split_z(out: bytes) -> list[str]:
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
    return split_z(out)


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
    for item in split_z(out):
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


def tracking_ref(repo: Repo, name: str, remote_ref: str) -> str | None:
    """The remote-tracking ref that ``git fetch NAME`` keeps for the remote's
    ``remote_ref`` (by the remote's fetch refspecs), or None."""
    try:
        out = git("config", "-z", "--get-all", f"remote.{name}.fetch", cwd=repo.toplevel)
    except CannotWorkHere:
        return None
    for spec in split_z(out):
        spec = spec.strip().removeprefix("+")
        if spec.startswith("^") or ":" not in spec:
            continue
        src, dst = spec.split(":", 1)
        if "*" not in src:
            if src == remote_ref:
                return dst
            continue
        head, _, tail = src.partition("*")
        middle = remote_ref[len(head) : len(remote_ref) - len(tail) if tail else None]
        fits = remote_ref.startswith(head) and remote_ref.endswith(tail)
        if fits and len(remote_ref) >= len(head) + len(tail) and "*" in dst:
            return dst.replace("*", middle, 1)
    return None


def _oid_of(repo: Repo, ref: str) -> str | None:
    try:
        out = git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", cwd=repo.toplevel)
    except CannotWorkHere:
        return None
    return out.decode().strip()


def push_exclusions(
    repo: Repo, remote: str | None, url: str | None, refs: Sequence[PushedRef]
) -> tuple[list[str], list[str]]:
    """What the push's destination already has (rev-list arguments), judged
    by what git says the remote has *now* (the remote side of each line on
    the hook's input), and notes worth saying.

    As :func:`already_there`, except that a remote-tracking ref git's input
    contradicts is not trusted: after another party's rewind, ``origin/main``
    still holds commits the remote no longer has, and a push on top of them
    brings them back. That ref is left out, so those commits are judged as
    new. A remote side this clone has never seen (the remote moved since the
    last fetch) cannot be judged against: the tracking ref stands in for it,
    and the hook says so."""
    exclude = already_there(repo, remote, url, [r.remote_oid for r in refs])
    name = destination(repo, remote, url)
    if name is None or f"--glob=refs/remotes/{name}/*" not in exclude:
        return exclude, []
    stale: set[str] = set()
    notes: list[str] = []
    for ref in refs:
        if is_zero(ref.remote_oid):
            continue
        tracked = tracking_ref(repo, name, ref.remote_ref)
        if tracked is None:
            continue
        had = _oid_of(repo, tracked)
        if had is None or had == ref.remote_oid:
            continue
        if _exists(repo, ref.remote_oid):
            stale.add(tracked)  # git's word wins: the remote is at a commit we know
        else:
            notes.append(
                f"git lac: warning: {ref.remote_ref} on {name} is at {ref.remote_oid[:12]}, "
                f"which this clone has not fetched: judged against {tracked} "
                f"({had[:12]}); `git fetch {name}` to judge against what is there"
            )
    if not stale:
        return exclude, notes
    out = git("for-each-ref", "--format=%(refname)", f"refs/remotes/{name}/", cwd=repo.toplevel)
    kept = [r for r in out.decode("utf-8", "surrogateescape").split("\n") if r and r not in stale]
    rest = [e for e in exclude if e != f"--glob=refs/remotes/{name}/*"]
    return [*rest, *kept], notes


Plan = list[tuple[str, str, list[str]]]  # (ref, commit, paths it changes)


def plan_of(repo: Repo, tips: Sequence[tuple[str, str]], exclude: Sequence[str]) -> Plan:
    """Each new commit once, with the first ref that brings it."""
    plan: Plan = []
    seen: set[str] = set()
    for ref_name, tip in tips:
        for commit, changed in changes_of(repo, [tip, "--not", *exclude]):
            if commit not in seen:
                seen.add(commit)
                plan.append((ref_name, commit, changed))
    return plan


def framework_plan(
    repo: Repo, env: dict[str, str]
) -> tuple[str, Plan, list[str], dict[str, list[str]]] | None:
    """The push range the pre-commit framework hands its pre-push hooks (it
    keeps git's stdin to itself): the remote, what it pushes, notes (as
    :func:`push_exclusions`: the framework passes the remote side too), and
    the commit the pushed ref ends at."""
    remote = env.get("PRE_COMMIT_REMOTE_NAME")
    if not remote:
        return None
    local = env.get("PRE_COMMIT_LOCAL_BRANCH") or env.get("PRE_COMMIT_TO_REF") or "HEAD"
    to_ref, from_ref = env.get("PRE_COMMIT_TO_REF") or local, env.get("PRE_COMMIT_FROM_REF")
    pushed = PushedRef(
        local, to_ref, env.get("PRE_COMMIT_REMOTE_BRANCH") or "", from_ref or "0" * 40
    )
    exclude, notes = push_exclusions(repo, remote, env.get("PRE_COMMIT_REMOTE_URL"), [pushed])
    return remote, plan_of(repo, [(local, to_ref)], exclude), notes, {local: [to_ref]}


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
        changed = set(split_z(out))
        own = changed if own is None else own & changed
    plan: Plan = [("MERGE", MERGE_OWN, sorted(own or ()))]
    brought = plan_of(repo, [("MERGE_HEAD", o) for o in others], ["HEAD", "--remotes"])
    return [*plan, *brought]


@dataclass
class ReceivedRef:
    old: str
    new: str
    ref: str


def parse_receive_lines(text: str) -> list[ReceivedRef]:
    """git's ``<old> <new> <ref>`` lines; anything else is refused whole
    (fail safe: a line the guard cannot read is a push it cannot judge)."""
    refs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(maxsplit=2)
        if (
            len(parts) != 3
            or not all(_is_oid(o) for o in parts[:2])
            or not parts[2].startswith("refs/")
        ):
            raise InvalidInput(
                f"push refused: unexpected pre-receive input line {line[:200]!r} "
                "(git hands `<old> <new> <ref>`, each id 40 or 64 hex digits): nothing was checked"
            )
        refs.append(ReceivedRef(*parts))
    return refs


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in HEX for c in text.lower())


def _unreadable(ref: ReceivedRef, oid: str) -> CannotWorkHere:
    return CannotWorkHere(
        f"push refused: the server cannot read {oid} for {ref.ref} (no such object here; "
        "a pre-receive hook that clears GIT_OBJECT_DIRECTORY, "
        "GIT_ALTERNATE_OBJECT_DIRECTORIES or GIT_QUARANTINE_PATH hides what is pushed): "
        "nothing was checked"
    )


UPDATE = "(ref update)"  # a ref's move, blamed as a whole (a plan's commit column)
MERGE_OWN = "(the merge)"  # a merge's own changes, being committed (a plan's commit column)


def _peeled(repo: Repo, oid: str) -> str | None:
    """The commit ``oid`` names (a tag peeled), or None (a tag of a tree or blob)."""
    try:
        out = git("rev-parse", "--verify", "-q", f"{oid}^{{commit}}", cwd=repo.toplevel)
    except CannotWorkHere:
        return None
    return out.decode().strip()


def tree_changes(repo: Repo, old: str, new: str) -> list[str]:
    """Every path whose content or mode differs between two commits' trees:
    what a ref's move from ``old`` to ``new`` changes, in either direction
    (forward, back to an older commit, to an unrelated one)."""
    out = git(
        "diff-tree",
        "-r",
        "-z",
        "--name-only",
        "--no-renames",
        "--no-ext-diff",
        old,
        new,
        "--",
        cwd=repo.toplevel,
    )
    return split_z(out)


def receive_plan(repo: Repo, refs: Sequence[ReceivedRef]) -> Plan:
    """What a push changes, ref by ref (README, "Guarding the server"):

    - the commits the server does not have yet, each with its own changes.
      While pre-receive runs the pushed objects sit in git's quarantine,
      visible to git commands, and no ref has moved: ``--not --all`` is
      exactly what was there before. A new id the server cannot read (not
      there at all, or not a commit for a branch) is no push to let through:
      :class:`CannotWorkHere`, never judged as changing nothing;
    - for a ref that moves, every path whose content differs between its old
      tip and its new one and that no new commit of that ref already accounts
      for: a rewind, a reset, a force-push to an unrelated commit, or history
      carried in from another branch of the server, blamed on :data:`UPDATE`;
    - a new branch, against the server's destination
      (:func:`~git_lacunari.repo.server_root`): a branch made again at an old
      commit is judged as a rewind;
    - the deletion of the destination, as a move to nothing: every path it
      has. The deletion of another branch changes no path anyone builds on:
      it is judged by the claims' lines instead
      (:func:`~git_lacunari.guard.judge.deleted_lines`).

    Tag deletions, and new tags, change no branch anyone builds on."""
    from ..repo import server_root

    tips: list[tuple[str, str]] = []
    moves: list[tuple[str, str, str | None]] = []
    root = server_root(repo)
    base = root.commit if root is not None else None
    for ref in refs:
        old = None if is_zero(ref.old) else _peeled(repo, ref.old)
        branch = ref.ref.startswith("refs/heads/")
        if not is_zero(ref.old) and old is None and (branch or not _present(repo, ref.old)):
            raise _unreadable(ref, ref.old)
        if is_zero(ref.new):  # a deletion pushes no commit
            if old is None or not branch:
                continue
            if root is not None and ref.ref == root.ref:
                moves.append((ref.ref, old, None))
            continue
        tip = _peeled(repo, ref.new)
        if tip is None:
            if branch or not _present(repo, ref.new):
                raise _unreadable(ref, ref.new)
            continue  # a tag of a tree or a blob: no commits
        tips.append((ref.ref, tip))
        if is_zero(ref.old) and branch and (root is None or root.ref != ref.ref):
            old = base  # judged against the server's destination
        if old is not None and old != tip:
            moves.append((ref.ref, old, tip))
    plan = plan_of(repo, tips, ["--all"])
    blamed: dict[str, set[str]] = {}
    for ref_name, _commit, changed in plan:
        blamed.setdefault(ref_name, set()).update(changed)
    for ref_name, old, tip in moves:
        changed = tree_changes(repo, old, tip) if tip else tree_paths(repo, old)
        rest = sorted(set(changed) - blamed.get(ref_name, set()))
        if rest:
            plan.append((ref_name, UPDATE, rest))
    return plan


def _present(repo: Repo, oid: str) -> bool:
    """An object of any kind the server can read."""
    try:
        git("cat-file", "-e", oid, cwd=repo.toplevel)
        return True
    except CannotWorkHere:
        return False


def tree_paths(repo: Repo, commit: str) -> list[str]:
    """Every path of a commit's tree (what deleting a branch at it takes away)."""
    out = git("ls-tree", "-r", "-z", "--name-only", "--full-tree", commit, cwd=repo.toplevel)
    return split_z(out)
