"""`git lac doctor`: which board each door of this repository uses, and
whether they can guard it. Read-only: it creates no board, migrates none,
writes no config and no instance file.

One verdict per line (``ok``, ``warn``, ``FAIL``); exit 0 when nothing fails,
1 when something does (README, "git lac doctor")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..edge import Result
from ..errors import CannotWorkHere, InvalidInput, LacError, NotARepository
from ..repo import Repo, discover_git_dir, git
from ..session import Session
from ..text import shown

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
    checks = [_repository(repo, bare), _hooks(repo, bare)]
    chosen, board_checks = _board(repo, bare)
    checks += board_checks
    if chosen is not None:
        checks += _live(repo, chosen)
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
    return Check("repository", OK, says, facts)


def _hooks(repo: Repo, bare: bool) -> Check:
    from ..hooks import HOOK_NAMES, SERVER_HOOK_NAMES, hooks_dir, is_ours

    names = SERVER_HOOK_NAMES if bare else HOOK_NAMES
    directory = hooks_dir(repo)
    ours = [n for n in names if is_ours(directory / n)]
    missing = [n for n in names if n not in ours]
    facts = {"installed": ours, "missing": missing, "directory": str(directory)}
    fix = "git lac hooks install" + (" --server" if bare else "")
    if not missing:
        return Check("hooks", OK, f"{', '.join(ours)} installed in {directory}", facts)
    if ours:
        return Check("hooks", WARN, f"{', '.join(missing)} missing: `{fix}`", facts)
    return Check("hooks", FAIL, f"not installed in {directory}: `{fix}`", facts)


def _board(repo: Repo, bare: bool) -> tuple[Any, list[Check]]:
    """Which board the doors use (the client's commands, hooks, page and
    keeper; or the server's guard), and whether clones find the same."""
    from ..front_door import default_board, resolve_board
    from ..guard.judge import server_board
    from ..store import is_postgres_url

    door = "server guard" if bare else "commands, hooks, page, keeper"
    try:
        chosen = server_board(repo) if bare else resolve_board(repo)
    except (CannotWorkHere, InvalidInput) as exc:
        return None, [Check("board", FAIL, f"{door}: {exc.message}", {"door": door})]
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
            chosen.url, repo.common_dir, timeout=repo.get("lac.timeout"), board=chosen.board
        )
    except LacError as exc:
        return [Check("reachable", FAIL, exc.message)]
    if store is None:
        return [Check("reachable", FAIL, "no board yet: `git lac init`", {"version": None})]
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
        return checks
    except LacError as exc:
        return [Check("reachable", FAIL, exc.message)]
    finally:
        store.close()


def _isolation(store: Any) -> Check:
    level = store.default_isolation()
    facts = {"default": level}
    if level is None:
        return Check("isolation", OK, "SQLite: every write begins IMMEDIATE", facts)
    if level == "read committed":
        return Check("isolation", OK, "the database's default is read committed", facts)
    says = (
        f"the database's default is {level}: git lac's own sessions set READ COMMITTED, "
        "but the board refuses any other caller's write (LAC02) until "
        "`ALTER DATABASE ... SET default_transaction_isolation = 'read committed'`"
    )
    return Check("isolation", FAIL, says, facts)


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


def _identity(repo: Repo, as_name: str | None) -> Check:
    from ..identity import name_of

    try:
        name, source = name_of(repo, as_name)
    except InvalidInput as exc:
        return Check("identity", FAIL, exc.message)
    return Check("identity", OK, f"claims as {name} ({source})", {"agent": name, "source": source})
