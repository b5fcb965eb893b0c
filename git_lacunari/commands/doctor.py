"""`git lac doctor`: which board each door of this repository uses, and
whether they can guard it. Read-only: it creates no board, migrates none,
writes no config and no instance file.

One verdict per line (``ok``, ``warn``, ``FAIL``); exit 0 when nothing fails,
1 when something does (README, "git lac doctor")."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..edge import Result
from ..errors import CannotWorkHere, InvalidInput, LacError, NotARepository
from ..repo import Repo, discover_git_dir, git
from ..session import Session
from ..text import shown

if TYPE_CHECKING:
    from ..board import Board

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass
class Check:
    check: str
    verdict: str
    says: str
    facts: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        mark = {OK: "ok  ", WARN: "warn", FAIL: "FAIL"}[self.verdict]
        return f"{mark}  {self.check}: {shown(self.says)}"


def _where(session: Session) -> tuple[Repo, bool]:
    """The repository here, and whether it is a server's (bare) one."""
    try:
        return session.repo, False
    except NotARepository:
        repo = discover_git_dir()
        bare = git("rev-parse", "--is-bare-repository", cwd=repo.toplevel).decode().strip()
        if bare != "true":
            raise
        return repo, True


def run(session: Session) -> Result:
    repo, bare = _where(session)
    checks = [_repository(repo, bare), _hooks(repo, bare), *_probes(repo, bare)]
    chosen, board_checks = _board(repo, bare)
    checks += board_checks
    if chosen is not None:
        checks += [dataclasses.replace(c, says=_advice(c.says, bare)) for c in _live(repo, chosen)]
    if not bare:
        checks.append(_identity(repo, session.as_name))
    failed = [c for c in checks if c.verdict == FAIL]
    return Result(
        {"checks": [{**vars(c), "facts": c.facts} for c in checks]},
        "\n".join(c.line() for c in checks),
        unfinished=f"{len(failed)} check(s) failed" if failed else None,
    )


def _repository(repo: Repo, bare: bool) -> Check:
    shallow = repo.is_shallow()
    partial = any(
        key.startswith("remote.") and key.endswith(".promisor") and value == "true"
        for key, value in repo.config.items()
    ) or bool(repo.get("extensions.partialclone"))
    kind = "bare (a server)" if bare else "linked worktree" if repo.is_linked_worktree else "clone"
    traits = [t for t, on in (("shallow", shallow), ("partial", partial)) if on]
    says = kind + (f", {' and '.join(traits)}" if traits else "")
    facts = {"kind": kind.split(" ")[0], "shallow": shallow, "partial": partial}
    if bare:
        deny = (repo.get("receive.denyNonFastForwards") or "").lower() in TRUE
        facts["deny_non_fast_forwards"] = deny
        says += (
            "; git refuses every rewind (receive.denyNonFastForwards)"
            if deny
            else "; rewinds that change a held path are refused by the guard alone"
        )
    return Check("repository", OK, says, facts)


TRUE = ("true", "yes", "on", "1")


def _hooks(repo: Repo, bare: bool) -> Check:
    """Every hook git would run here, as git runs it: ours and executable, and
    the git-lac it names there (or on PATH); a hook another tool put there
    (kept as ``NAME.legacy`` by ``hooks install``) fails unless it runs the
    guard itself (the pre-commit framework with lac's hooks configured)."""
    from ..hooks import GUARD_HOOKS, HOOK_NAMES, SERVER_HOOK_NAMES, hook_state, hooks_dir

    names = SERVER_HOOK_NAMES if bare else HOOK_NAMES
    directory = hooks_dir(repo)
    fix = "git lac hooks install" + (" --server" if bare else "")
    if directory.exists() and not directory.is_dir():
        says = f"{directory}, where git looks for hooks, is not a directory: git runs none"
        return Check("hooks", FAIL, says, {"directory": str(directory), "installed": []})
    states = {n: hook_state(repo, directory, n, bare=bare) for n in names}
    facts: dict[str, Any] = {
        "installed": [n for n, s in states.items() if s.ours and s.runs],
        "missing": [n for n, s in states.items() if s.problem == "missing"],
        "directory": str(directory),
        "hooks": {n: vars(s) for n, s in states.items()},
    }
    troubles = [(n, s) for n, s in states.items() if s.problem]
    if not troubles:
        says = f"{', '.join(names)} installed in {directory}"
        chained = [n for n, s in states.items() if s.legacy == "runs"]
        if chained:
            says += f" (running the hooks that were there first: {', '.join(chained)})"
        notes = [s.note for s in states.values() if s.note]
        if notes:
            return Check("hooks", WARN, "; ".join([says, *notes]), facts)
        return Check("hooks", OK, says, facts)
    if all(s.problem == "missing" for s in states.values()):
        says = f"not installed in {directory}: `{fix}`"
        configured = repo.get("core.hooksPath")
        if configured and not os.path.isabs(os.path.expanduser(configured)) and not bare:
            says += (
                f" (core.hooksPath {configured} is relative: each worktree runs the hooks "
                "in its own copy of it; commit them there, or make it absolute)"
            )
        return Check("hooks", FAIL, says, facts)
    # post-commit and post-receive never refuse: trouble with them is said, not failed.
    failing = any(n in GUARD_HOOKS for n, _ in troubles)
    parts = [s.said(n, fix) for n, s in troubles]
    parts += [s.note for s in states.values() if s.note]
    return Check("hooks", FAIL if failing else WARN, "; ".join(parts), facts)


def _probes(repo: Repo, bare: bool) -> list[Check]:
    """The guards run live on the canary: the server's pre-receive; here the
    pre-commit and each agent harness's edit hook (doctor_probes.py)."""
    from .doctor_probes import agent_checks, pre_commit_check, pre_receive_check

    found = [pre_receive_check(repo)] if bare else [pre_commit_check(repo), *agent_checks(repo)]
    return [Check(*f) for f in found if f is not None]


def _board(repo: Repo, bare: bool) -> tuple[Any, list[Check]]:
    """Which board the doors use (the client's commands, hooks, page and
    keeper; or the server's guard), and whether clones find the same."""
    from ..front_door import default_board, resolve_board
    from ..guard.judge import server_board
    from ..store import is_postgres_url

    door = "server guard" if bare else "commands, hooks, page, keeper"
    if bare and not repo.get("lac.url"):
        says = (
            f"{door}: no lac.url in this server's config: `git config lac.url URL` (the board "
            "the clones use; `git config lac.board NAME` too for PostgreSQL), then "
            "`git lac hooks install --server`"
        )
        return None, [Check("board", FAIL, says, {"door": door})]
    try:
        chosen = server_board(repo) if bare else resolve_board(repo)
    except (CannotWorkHere, InvalidInput) as exc:
        says = f"{door}: {_advice(exc.message, bare)}"
        if bare and "no board at" in says and "git lac init" not in says:
            says += " (a clone makes it: `git lac init --url URL`)"
        return None, [Check("board", FAIL, says, {"door": door})]
    facts = {"door": door, "url": _redacted(chosen.url), "board": chosen.board}
    facts["source"] = chosen.source
    checks = [Check("board", OK, f"{door}: {chosen.where} ({chosen.source})", facts)]
    if not (chosen.url and is_postgres_url(chosen.url)) or chosen.board is None:
        return chosen, checks
    try:
        others, how = default_board(repo)
    except CannotWorkHere as exc:
        others, how = None, exc.message
    agree = {"others": others, "others_source": how}
    if others == chosen.board:
        says = f"a clone with only lac.url finds {others} too ({how})"
        checks.append(Check("shared", OK, says, agree))
    elif bare:
        says = (
            f"pinned by the server's lac.board; its destination branch would name "
            f"{others or 'none'} ({how}): "
            "clones must use the pinned board"
        )
        checks.append(Check("shared", WARN, says, agree))
    else:
        says = (
            f"a clone with only lac.url would use {others or 'no board'} ({how}), not "
            f"{chosen.board}: `git lac init --url URL --board {chosen.board} --share` and commit"
        )
        checks.append(Check("shared", WARN, says, agree))
    if bare and chosen.source != "git config lac.board":
        says = (
            f"the server's config does not name its board: `git config lac.board {chosen.board}` "
            "(or `git lac hooks install --server`) pins it"
        )
        checks.append(Check("pinned", WARN, says, {"pinned": False}))
    return chosen, checks


def _advice(says: str, bare: bool) -> str:
    """In a server repository, advice to run `git lac init` is advice for a clone."""
    if not bare:
        return says
    return INIT.sub(lambda m: f"{m[0]} in a clone (not in this server repository)", says)


INIT = re.compile(r"`git lac init[^`]*`")


def _redacted(url: str | None) -> str | None:
    from ..store import redact

    return redact(url) if url else None


def _live(repo: Repo, chosen: Any) -> list[Check]:
    """Reach the board without creating or migrating it: its schema, the
    database's default isolation, the case rule."""
    from ..board import Board
    from ..identity import Identity
    from ..store import open_existing
    from ..store.queries import latest_version

    try:
        store = open_existing(
            chosen.url,
            repo.common_dir,
            timeout=repo.get("lac.timeout"),
            board=chosen.board,
            pooler=repo.get("lac.pooler"),
            listen_url=repo.get("lac.listenurl"),
        )
    except LacError as exc:
        return [Check("reachable", FAIL, exc.message)]
    if store is None:
        from ..store.sqlite import sqlite_path

        says = f"no board yet at {sqlite_path(chosen.url, repo.common_dir)}: `git lac init`"
        return [Check("reachable", FAIL, says, {"version": None})]
    try:
        checks = []
        latest = latest_version(store.dialect)
        version = store.schema_version()
        facts = {"version": version, "latest": latest}
        if version == latest:
            checks.append(Check("reachable", OK, f"schema version {version} (current)", facts))
        elif version is None:
            return [Check("reachable", FAIL, f"no board at {store.where}: `git lac init`", facts)]
        elif version < latest:
            says = f"schema version {version}, older than {latest}: `git lac init` migrates it"
            return [Check("reachable", FAIL, says, facts)]
        else:
            says = f"schema version {version}, newer than this git-lacunari ({latest}): upgrade"
            return [Check("reachable", FAIL, says, facts)]
        checks.append(_isolation(store))
        ident = Identity("doctor", "doctor", (), "none")
        board = Board(store, ident, ignorecase=repo.ignorecase)
        checks.append(_case(board, repo.ignorecase))
        checks.append(_made_for(repo, board))
        return checks
    except LacError as exc:
        return [Check("reachable", FAIL, exc.message)]
    finally:
        store.close()


SOURCES = {
    "database": "ALTER DATABASE ... SET",
    "user": "ALTER ROLE ... SET",
    "database user": "ALTER ROLE ... IN DATABASE ... SET",
    "configuration file": "postgresql.conf",
    "default": "PostgreSQL's default",
}


def _isolation(store: Any) -> Check:
    """What a plain connection to the board's database gets (never what this
    shell's PGOPTIONS or the URL's options add): READ COMMITTED is safe. Any
    other level is safe for git lac (every session of its own sets READ
    COMMITTED) and for the board when its write functions refuse other
    levels (LAC02): a warning, since every other caller's write is refused;
    a failure when they do not (a stale grant is possible)."""
    found = store.default_isolation()
    if found is None:
        return Check("isolation", OK, "SQLite: every write begins IMMEDIATE", {"default": None})
    level, source = found["level"], found["source"]
    facts = {"default": level, "source": source}
    facts |= {"settings": found["settings"], "yours": found["yours"]}
    facts["guarded"] = found["guarded"]
    origin = SOURCES.get(source, source)
    unsafe = [s for s in found["settings"] if s["level"].strip("'\"").lower() != "read committed"]
    notes = [
        f"role {s['role'] or 'every role'}"
        + (f" in {s['database']}" if s["database"] else "")
        + f" gets {s['level']}"
        for s in unsafe
        if not (s["level"] == level and _source_is(s, source))
    ]
    if found["yours"] and found["yours"] != "read committed":
        notes.append(f"this shell's PGOPTIONS or the URL's options make it {found['yours']}")
    fixes = []
    if level != "read committed":
        fixes.append(FIXES.get(source, f"set default_transaction_isolation where {source} sets it"))
    if len(notes) > (1 if found["yours"] and found["yours"] != "read committed" else 0):
        fixes.append("ALTER ROLE ... RESET default_transaction_isolation for those roles")
    if found["yours"] and found["yours"] != "read committed":
        fixes.append("drop default_transaction_isolation from PGOPTIONS or the URL's options")
    fix = " and ".join(f"`{f}`" if f.startswith("ALTER") else f for f in fixes)
    if level == "read committed" and not notes:
        return Check("isolation", OK, f"the database's default is read committed ({origin})", facts)
    if level == "read committed":
        says = f"the database's default is read committed ({origin}), but " + "; ".join(notes)
    else:
        says = "; ".join([f"the database's default is {level} ({origin})", *notes])
    if not found["guarded"]:
        says += (
            ": this board's write functions do not refuse it (no lac_require_current), so "
            "another caller may be granted a path on stale data: `git lac init` migrates "
            f"it, and {fix}"
        )
        return Check("isolation", FAIL, says, facts)
    says += (
        ": git lac's own sessions set READ COMMITTED, and the board refuses any other "
        f"caller's write (LAC02) until {fix}"
    )
    return Check("isolation", WARN, says, facts)


FIXES = {
    "database": "ALTER DATABASE ... SET default_transaction_isolation = 'read committed'",
    "user": "ALTER ROLE ... SET default_transaction_isolation = 'read committed'",
    "database user": (
        "ALTER ROLE ... IN DATABASE ... SET default_transaction_isolation = 'read committed'"
    ),
    "configuration file": "default_transaction_isolation = 'read committed' in postgresql.conf",
}


def _source_is(setting: dict[str, str], source: str) -> bool:
    """Whether a role/database setting is the one the plain connection reported."""
    kind = {(True, False): "user", (False, True): "database", (True, True): "database user"}
    return kind.get((bool(setting["role"]), bool(setting["database"]))) == source


def _case(board: Any, clone: bool) -> Check:
    rule = board.case_rule
    facts = {"rule": rule, "core_ignorecase": clone}
    mine = "true" if clone else "false"
    if rule == "fold":
        says = f"the board folds case (README and readme are one path); core.ignorecase={mine}"
        return Check("case", OK, says, facts)
    if rule == "exact":
        if clone:
            says = (
                "the board compares case exactly, but this clone's core.ignorecase=true: "
                "case variants it cannot tell apart are locked apart (`git lac init --case fold`)"
            )
            return Check("case", FAIL, says, facts)
        return Check("case", OK, "the board compares case exactly; core.ignorecase=false", facts)
    if board.store.dialect == "postgres":
        says = (
            f"the board has no case rule: each clone follows its own core.ignorecase ({mine}), "
            "so clones may lock README and readme apart: `git lac init --case fold`"
        )
        return Check("case", WARN, says, facts)
    return Check("case", OK, f"one clone's board: core.ignorecase={mine}", facts)


def _made_for(repo: Repo, board: Board) -> Check:
    """The repository the board was made for (the root commit `git lac init`
    recorded on it) against this one's: a server whose lac.url (or lac.board)
    names another project's board would judge its pushes by that project's
    claims. In a bare repository the destination's root is compared."""
    recorded = board.recorded_root()
    from ..repo import is_bare, server_root

    rev = "HEAD"
    if is_bare(repo.toplevel):
        dest = server_root(repo)
        rev = dest.commit if dest is not None and dest.commit else ""
    ours = None if not rev or repo.is_shallow() else repo.root_commit(rev)
    facts = {"board_root": recorded, "repository_root": ours}
    if recorded is None:
        says = "the board records no repository (`git lac init` in a clone records it)"
        return Check("project", OK, says, facts)
    if ours is None:
        says = f"the board was made for root commit {recorded[:12]}; this repository's is unknown"
        return Check("project", OK, says + " (no commit yet, or a shallow clone)", facts)
    if ours == recorded or _has_commit(repo, recorded, rev):
        says = f"the board was made for this repository (root commit {recorded[:12]})"
        return Check("project", OK, says, facts)
    says = (
        f"the board was made for another repository (root commit {recorded[:12]}, this one's "
        f"is {ours[:12]}): lac.url{' and lac.board' if repo.get('lac.board') else ''} name "
        "another project's board"
    )
    return Check("project", FAIL, says, facts)


def _has_commit(repo: Repo, commit: str, rev: str) -> bool:
    """``commit`` is in ``rev``'s history (a repository with several roots),
    or, in a clone, in any of its refs' (a worktree on an orphan branch is
    still the project's)."""
    from ..repo import is_bare

    try:
        git("merge-base", "--is-ancestor", commit, rev, cwd=repo.toplevel)
        return True
    except CannotWorkHere:
        pass
    if is_bare(repo.toplevel):  # a server is judged by its destination alone
        return False
    try:
        found = git(
            "for-each-ref",
            "--count=1",
            "--format=%(refname)",
            "--contains",
            commit,
            cwd=repo.toplevel,
        )
    except CannotWorkHere:
        return False
    return bool(found.strip())


def _identity(repo: Repo, as_name: str | None) -> Check:
    from ..identity import name_of

    try:
        name, source = name_of(repo, as_name)
    except InvalidInput as exc:
        return Check("identity", FAIL, exc.message)
    return Check("identity", OK, f"claims as {name} ({source})", {"agent": name, "source": source})
