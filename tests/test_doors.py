"""Every door finds the same board (issue 22): the server's guard and the
client hooks, with the board set up exactly as the README says, in full,
shallow, partial and linked-worktree clones; and the server judges every way
a ref can move (rewinds, resets, a branch made again).

Real bare repositories, real pushes, real hooks, real PostgreSQL: each test
that needs a database of its own makes one (its ``public`` schema is ours to
fill) and drops it after."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

from .conftest import Result, git, lac_inprocess, lac_process, make_repo
from .test_guard import head, run_git
from .test_server_guard import Server, assert_refused, commit, server_for, write

Lac = Callable[..., Result]


@contextlib.contextmanager
def new_database(server: str) -> Iterator[str]:
    """A database of this test's own on the server; yields its URL (no
    search_path: the boards are found as the README says)."""
    import psycopg

    name = "lac_doors_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(server)
    try:
        yield urlunsplit(parts._replace(path="/" + name))
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            # Only this test's own database, whose sessions are its own.
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def database(pg_server: str) -> Iterator[str]:
    with new_database(pg_server) as url:
        yield url


def schemas(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT nspname FROM pg_namespace").fetchall()
    return {str(r[0]) for r in rows}


def with_search_path(url: str, schema: str) -> str:
    return f"{url}?options={quote(f'-csearch_path={schema}')}"


def lac(cwd: Path, *args: str) -> Result:
    return lac_inprocess(cwd, *args)


def root_board(repo: Path) -> str:
    return "lac_" + git(repo, "rev-list", "--max-parents=0", "HEAD").split()[0][:12]


def unrelated_board_in_public(tmp_path: Path, url: str) -> None:
    """Another project's board in the database's ``public`` schema, holding README."""
    other = make_repo(tmp_path / "other")
    made = lac(other, "init", "--url", with_search_path(url, "public"))
    assert made.code == 0, made.err
    assert lac(other, "lock", "README", "--as", "zed").code == 0


def guarded_server(repo: Path, tmp_path: Path, url: str) -> Server:
    """The README's server: a bare repository with the client's history, then
    `git config lac.url URL` and `git lac hooks install --server` in it."""
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "push", "-q", "--no-verify", str(bare), "main")
    git(bare, "config", "lac.url", url)
    installed = lac_process(bare, "hooks", "install", "--server", "--json")
    assert installed.code == 0, installed.err
    return Server(repo, bare, str(bare))


# --- the server's guard, set up as the README says --------------------------------


@pytest.mark.parametrize("pinned", [True, False], ids=["pinned", "unpinned"])
@pytest.mark.parametrize("naming", ["root", "named"])
def test_the_readme_setup_guards_pushes_on_its_own_board(
    repo: Path, tmp_path: Path, database: str, naming: str, pinned: bool
) -> None:
    unrelated_board_in_public(tmp_path, database)
    init = ["init", "--url", database] + (
        ["--board", "shop", "--share"] if naming == "named" else []
    )
    made = lac(repo, *init)
    assert made.code == 0, made.err
    expected = "shop" if naming == "named" else root_board(repo)
    assert git(repo, "config", "lac.board").strip() == expected
    assert expected in schemas(database)
    if naming == "named":  # the shared name, committed where every clone finds it
        assert ".lacconfig: lac.board = shop, staged" in made.out
        git(repo, "commit", "-qm", "share the board", "--no-verify")
    server = guarded_server(repo, tmp_path, database)
    installed = lac_process(server.bare, "hooks", "install", "--server")
    assert f"board: {expected} on {database} (git config lac.board)" in installed.out
    git(server.bare, "config", "--unset", "lac.board")
    installed = lac_process(server.bare, "hooks", "install", "--server", "--json")
    assert installed.json["board"]["board"] == expected
    assert installed.json["board"]["recorded"] is True
    assert git(server.bare, "config", "lac.board").strip() == expected
    if not pinned:  # the server finds it by itself: .lacconfig at HEAD, else the root
        git(server.bare, "config", "--unset", "lac.board")
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    # README is held on the unrelated board in public: not this project's.
    clean = commit(repo, "clean", write("README", "erin\n"))
    pushed = server.push("main", "-o", "lac.agent=erin")
    assert pushed.code == 0, pushed.err
    assert server.has("main") == clean
    bad = commit(repo, "bad", write("core/auth.py", "erin\n"))
    refused = server.push("main", "-o", "lac.agent=erin")
    assert_refused(refused, f"refs/heads/main {bad[:12]} core/auth.py  held by dana")
    assert server.has("main") == clean
    assert server.push("main", "-o", "lac.agent=dana").code == 0
    assert server.has("main") == bad


def test_a_board_of_the_same_name_in_another_database_is_not_asked(
    repo: Path, tmp_path: Path, database: str, pg_server: str
) -> None:
    assert lac(repo, "init", "--url", database).code == 0
    name = root_board(repo)
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    with new_database(pg_server) as elsewhere:
        twin = make_repo(tmp_path / "twin")
        assert lac(twin, "init", "--url", elsewhere, "--board", name).code == 0
        server = guarded_server(repo, tmp_path, database)
        commit(repo, "bad", write("core/auth.py", "erin\n"))
        assert_refused(server.push("main", "-o", "lac.agent=erin"), "held by dana")
        # And the other way round: the server pointed at the twin's database
        # asks the twin's (empty) board, never this one.
        git(server.bare, "config", "lac.url", elsewhere)
        passed = server.push("main", "-o", "lac.agent=erin")
        assert passed.code == 0, passed.err


def test_a_pushed_lacconfig_cannot_choose_the_board_that_judges(
    repo: Path, tmp_path: Path, database: str
) -> None:
    assert lac(repo, "init", "--url", database).code == 0
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    # The hostile pusher's board: it exists, and holds nothing.
    evil = make_repo(tmp_path / "evil")
    assert lac(evil, "init", "--url", database, "--board", "evil").code == 0
    server = guarded_server(repo, tmp_path, database)
    git(server.bare, "config", "--unset", "lac.board")  # the server names no board itself
    before = server.has("main")
    assert before is not None
    commit(repo, "point elsewhere", write(".lacconfig", "[lac]\n\tboard = evil\n"))
    refused = server.push("main", "-o", "lac.agent=erin")
    assert refused.code != 0
    assert "a push may not choose its own judge" in refused.err, refused.err
    assert server.has("main") == before
    # Another root merged in (a history whose root sorts first) is refused alike.
    git(repo, "reset", "-q", "--hard", before)
    root = git(repo, "rev-list", "--max-parents=0", before).strip()
    git(repo, "checkout", "-q", "--orphan", "stranger")
    git(repo, "rm", "-rq", "--cached", ".")
    for attempt in range(256):  # half of all ids sort first: made, not hoped for
        stranger = commit(repo, f"a stranger's root {attempt}", write("x.txt", f"{attempt}\n"))
        if stranger < root:
            break
        git(repo, "update-ref", "-d", "HEAD")
    assert stranger < root
    git(repo, "checkout", "-q", "-f", "main")
    git(repo, "merge", "-q", "--no-edit", "--allow-unrelated-histories", stranger)
    refused = server.push("main", "-o", "lac.agent=erin")
    assert "a push may not choose its own judge" in refused.err, refused.err
    assert server.has("main") == before
    # Once the server names its board, a pushed .lacconfig changes nothing:
    # the held path is still judged by the project's board, not by `evil`.
    git(repo, "reset", "-q", "--hard", before)
    git(server.bare, "config", "lac.board", root_board(repo))
    commit(repo, "point elsewhere", write(".lacconfig", "[lac]\n\tboard = evil\n"))
    assert server.push("main", "-o", "lac.agent=erin").code == 0
    bad = commit(repo, "bad", write("core/auth.py", "erin\n"))
    assert_refused(
        server.push("main", "-o", "lac.agent=erin"),
        f"refs/heads/main {bad[:12]} core/auth.py  held by dana",
    )


@pytest.mark.parametrize("name", ["Shop", "a-b", "pg_shop", "x;drop", "ü", "a" * 64, ""])
def test_an_odd_board_name_is_refused_in_one_line_and_nothing_is_written(
    repo: Path, database: str, name: str
) -> None:
    result = lac(repo, "init", "--url", database, "--board", name)
    assert result.code == 2, result
    assert result.err.count("\n") == 1 and "board name" in result.err, result.err
    assert "lac.url" not in git(repo, "config", "--list")
    assert "lac.board" not in git(repo, "config", "--list")


@pytest.mark.parametrize("where", ["server config", "lacconfig", "public", "missing"])
def test_a_server_whose_board_is_odd_or_missing_refuses_in_one_line(
    repo: Path, tmp_path: Path, database: str, where: str
) -> None:
    assert lac(repo, "init", "--url", database).code == 0
    if where == "lacconfig":
        commit(repo, "odd", write(".lacconfig", "[lac]\n\tboard = Drop;Table\n"))
    elif where == "public":  # the one schema every database has: never by a file's word
        commit(repo, "odd", write(".lacconfig", "[lac]\n\tboard = public\n"))
    server = guarded_server(repo, tmp_path, database)
    if where in ("lacconfig", "public"):  # the installer could not name it: nothing recorded
        assert "lac.board" not in git(server.bare, "config", "--list")
    elif where == "server config":
        git(server.bare, "config", "lac.board", "no such board")
    else:
        git(server.bare, "config", "lac.board", "nosuch")
    before = server.has("main")
    commit(repo, "x", write("README", "x\n"))
    refused = server.push("main", "-o", "lac.agent=erin")
    assert refused.code != 0
    ours = [line for line in refused.err.splitlines() if "git lac" in line]
    assert len(ours) == 1, refused.err
    assert "Traceback" not in refused.err
    expected = {
        "server config": "board name 'no such board'",
        "lacconfig": "names no valid board",
        "public": "names no valid board",
        "missing": "no board at",
    }[where]
    assert expected in ours[0], refused.err
    assert server.has("main") == before
    assert "nosuch" not in schemas(database), "the guard created a board"


def test_a_bare_server_with_no_commit_yet(repo: Path, tmp_path: Path, database: str) -> None:
    """Nothing to name the board after: the installer says so, and the first
    push is refused until the server names it; named, it is judged."""
    assert lac(repo, "init", "--url", database).code == 0
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    bare = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(bare, "config", "lac.url", database)
    installed = lac_process(bare, "hooks", "install", "--server", "--json")
    assert installed.code == 0, installed.err
    assert installed.json["board"] is None
    assert "not known yet" in installed.err and "no commit yet" in installed.err
    server = Server(repo, bare, str(bare))
    refused = server.push("main", "-o", "lac.agent=erin")
    assert refused.code != 0 and "no commit yet" in refused.err, refused.err
    assert server.has("main") is None
    git(bare, "config", "lac.board", root_board(repo))
    pushed = server.push("main", "-o", "lac.agent=erin")  # auth.py's first version: held
    assert_refused(pushed, "core/auth.py  held by dana")
    assert server.push("main", "-o", "lac.agent=dana").code == 0


def test_a_server_whose_head_is_an_unborn_branch_finds_its_board_on_main(
    repo: Path, tmp_path: Path, database: str
) -> None:
    """HEAD names an unborn master while main has commits: the destination is
    main (README), for the board, doctor and the guard alike, never "no
    commit yet"; and a push that would make master the destination may not
    bring its own root."""
    assert lac(repo, "init", "--url", database).code == 0
    server = guarded_server(repo, tmp_path, database)  # lac.board recorded
    git(server.bare, "symbolic-ref", "HEAD", "refs/heads/master")
    code, checks = doctor(server.bare)
    assert code == 0, checks
    assert checks["shared"]["verdict"] == "ok", checks["shared"]
    assert checks["shared"]["facts"]["others"] == root_board(repo)
    git(server.bare, "config", "--unset", "lac.board")
    code, checks = doctor(server.bare)
    assert code == 0, checks
    assert checks["board"]["facts"]["board"] == root_board(repo), checks["board"]
    assert "no commit yet" not in str(checks)
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    clean = commit(repo, "clean", write("README", "erin\n"))
    pushed = server.push("main", "-o", "lac.agent=erin")
    assert pushed.code == 0, pushed.err
    assert server.has("main") == clean
    bad = commit(repo, "bad", write("core/auth.py", "erin\n"))
    assert_refused(
        server.push("main", "-o", "lac.agent=erin"),
        f"refs/heads/main {bad[:12]} core/auth.py  held by dana",
    )
    git(repo, "checkout", "-q", "--orphan", "fresh")
    git(repo, "rm", "-rq", "--cached", ".")
    for leftover in ("core", "README"):
        remove(repo / leftover)
    commit(repo, "another root", write("docs/x.md", "x\n"))
    judged = server.push("fresh:refs/heads/master", "-o", "lac.agent=erin")
    assert judged.code != 0 and "may not choose its own judge" in judged.err, judged.err
    assert server.has("master") is None


# --- rewinds: every way a ref moves, both backends ---------------------------------


@pytest.fixture
def published(lac: Lac, repo: Path, tmp_path: Path, board_url: str | None) -> tuple[Server, str]:
    """A server whose main has dana's published work on core/auth.py (on top
    of ``base``), which dana then holds."""
    server = server_for(repo, tmp_path, board_url, "path")
    base = head(repo)
    work = commit(repo, "dana's work", write("core/auth.py", "dana's work\n"))
    assert server.push("main").code == 0
    assert server.has("main") == work
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    return server, base


def test_a_force_push_back_to_an_older_commit_is_refused(published: tuple[Server, str]) -> None:
    server, base = published
    work = server.has("main")
    refused = server.push("--force", f"{base}:refs/heads/main", "-o", "lac.agent=erin")
    assert_refused(refused, "refs/heads/main (ref update) core/auth.py  held by dana")
    assert server.has("main") == work
    own = server.push("--force", f"{base}:refs/heads/main", "-o", "lac.agent=dana")
    assert own.code == 0, own.err
    assert server.has("main") == base


def test_a_reset_to_new_work_that_reverts_is_refused(
    published: tuple[Server, str], repo: Path
) -> None:
    """A reset below the published work plus a new commit elsewhere: the new
    commit is clean, the move reverts the held path."""
    server, base = published
    git(repo, "reset", "-q", "--hard", base)
    clean = commit(repo, "elsewhere", write("README", "erin\n"))
    refused = server.push("--force", "main", "-o", "lac.agent=erin")
    assert_refused(refused, "refs/heads/main (ref update) core/auth.py  held by dana")
    assert f"{clean[:12]} README" not in refused.err


def test_a_force_push_of_an_unrelated_history_is_refused(
    published: tuple[Server, str], repo: Path
) -> None:
    server, _ = published
    git(repo, "checkout", "-q", "--orphan", "fresh")
    git(repo, "rm", "-rq", "--cached", ".")
    for leftover in ("core", "README"):
        remove(repo / leftover)
    commit(repo, "unrelated", write("docs/x.md", "x\n"))
    refused = server.push("--force", "fresh:main", "-o", "lac.agent=erin")
    assert_refused(refused, "refs/heads/main (ref update) core/auth.py  held by dana")


def remove(path: Path) -> None:
    import shutil

    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def test_a_branch_made_again_at_an_old_commit_and_a_deleted_head_are_refused(
    published: tuple[Server, str],
) -> None:
    server, base = published
    # A new branch is judged against the server's HEAD branch.
    refused = server.push(f"{base}:refs/heads/release", "-o", "lac.agent=erin")
    assert_refused(refused, "refs/heads/release (ref update) core/auth.py  held by dana")
    assert server.has("release") is None
    # Deleting the HEAD branch takes every path it has.
    deleted = server.push(":main", "-o", "lac.agent=erin")
    assert_refused(deleted, "refs/heads/main (ref update) core/auth.py  held by dana")
    assert server.has("main") is not None
    # Other branches come and go freely; new tags too.
    assert server.push(f"{server.has('main')}:refs/heads/topic").code == 0
    assert server.push(":topic").code == 0
    assert server.push(f"{base}:refs/tags/v0").code == 0
    # The holder may.
    assert server.push(f"{base}:refs/heads/release", "-o", "lac.agent=dana").code == 0


def test_a_fast_forward_that_does_not_touch_the_held_path_passes(
    published: tuple[Server, str], repo: Path
) -> None:
    server, _ = published
    clean = commit(repo, "clean", write("README", "erin\n"))
    pushed = server.push("main", "-o", "lac.agent=erin")
    assert pushed.code == 0, pushed.err
    assert server.has("main") == clean


# --- clones of every kind see the same board ----------------------------------------


def clone(source: Path, target: Path, *args: str) -> Path:
    git(source.parent, "clone", "-q", *args, f"file://{source}", str(target))
    return target


@pytest.fixture
def project(repo: Path, database: str) -> Path:
    """A project on PostgreSQL with three commits (so a depth-1 clone's
    boundary is not its root) and dana holding core/auth.py."""
    assert lac(repo, "init", "--url", database).code == 0
    commit(repo, "two", write("docs/a.md", "a\n"))
    commit(repo, "three", write("docs/b.md", "b\n"))
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    return repo


def erin_commits_the_held_path(clone_dir: Path) -> Result:
    (clone_dir / "core" / "auth.py").write_text("erin\n")
    git(clone_dir, "add", "core/auth.py")
    return run_git(clone_dir, "commit", "-qm", "erin", agent="erin")


def setup_clone(clone_dir: Path, database: str) -> None:
    """A clone set up by hand, as the README says: lac.url, and the hooks."""
    git(clone_dir, "config", "lac.url", database)
    installed = lac_process(clone_dir, "hooks", "install")
    assert installed.code == 0, installed.err


def test_a_shallow_clone_never_takes_its_boundary_for_the_root(
    project: Path, tmp_path: Path, database: str
) -> None:
    shallow = clone(project, tmp_path / "shallow", "--depth", "1")
    assert git(shallow, "rev-parse", "--is-shallow-repository").strip() == "true"
    boundary = "lac_" + git(shallow, "rev-list", "--max-parents=0", "HEAD").strip()[:12]
    assert boundary != root_board(project)
    # Set up by hand (lac.url only): the hook never asks the remote, and
    # refuses in one line rather than ask an empty board.
    setup_clone(shallow, database)
    before_head = head(shallow)
    blocked = erin_commits_the_held_path(shallow)
    assert blocked.code != 0, blocked
    assert "shallow clone" in blocked.err and "git config lac.board" in blocked.err
    assert head(shallow) == before_head
    assert boundary not in schemas(database)
    # init asks the remote for the root, and records the project's board
    # (lac.board): refused for what dana holds.
    made = lac(shallow, "--json", "init", "--url", database)
    assert made.code == 0 and made.json["board"] == root_board(project), made
    assert boundary not in schemas(database)
    refused_commit = erin_commits_the_held_path(shallow)
    assert refused_commit.code != 0 and "held by dana" in refused_commit.err, refused_commit.err


def test_a_shallow_clone_finds_the_shared_lacconfig(
    repo: Path, tmp_path: Path, database: str
) -> None:
    assert lac(repo, "init", "--url", database, "--board", "shop", "--share").code == 0
    git(repo, "commit", "-qm", "share the board", "--no-verify")
    commit(repo, "more", write("docs/a.md", "a\n"))
    assert lac(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    shallow = clone(repo, tmp_path / "shallow", "--depth", "1")
    made = lac(shallow, "init", "--url", database, "--json")
    assert made.code == 0, made.err
    assert made.json["board"] == "shop"
    lac_process(shallow, "hooks", "install")
    refused = erin_commits_the_held_path(shallow)
    assert refused.code != 0 and "held by dana" in refused.err, refused.err


@pytest.mark.parametrize("kind", ["full", "partial", "worktree"])
def test_other_clones_see_the_same_board(
    project: Path, tmp_path: Path, database: str, kind: str
) -> None:
    if kind == "worktree":
        where = tmp_path / "wt"
        git(project, "worktree", "add", "-q", str(where))
        lac_process(project, "hooks", "install")
    else:
        extra = ("--filter=blob:none",) if kind == "partial" else ()
        where = clone(project, tmp_path / kind, *extra)
        if kind == "partial":
            assert git(where, "config", "remote.origin.promisor").strip() == "true"
        setup_clone(where, database)  # lac.url only: the root commit names the board
    refused = erin_commits_the_held_path(where)
    assert refused.code != 0 and "held by dana" in refused.err, refused.err
    assert "lac.board" not in git(where, "config", "--list") or kind == "worktree"


# --- case: the board decides -------------------------------------------------------


def case_clones(repo: Path, tmp_path: Path, database: str, *init: str) -> tuple[Path, Path]:
    """The project (case-sensitive) and a clone of it with core.ignorecase=true,
    both on one PostgreSQL board."""
    made = lac(repo, "init", "--url", database, *init)
    assert made.code == 0, made.err
    other = clone(repo, tmp_path / "insensitive")
    git(other, "config", "core.ignorecase", "true")
    git(other, "config", "lac.url", database)
    return repo, other


def test_case_variants_are_one_path_whatever_each_clone_says(
    repo: Path, tmp_path: Path, database: str
) -> None:
    sensitive, insensitive = case_clones(repo, tmp_path, database)
    assert lac(sensitive, "init", "--json").json["case"] == "fold"
    assert lac(sensitive, "lock", "Core/Auth.py", "--as", "dana").code == 0
    assert lac(insensitive, "lock", "core/auth.py", "--as", "erin").code == 1
    assert lac(insensitive, "lock", "docs/X.md", "--as", "erin").code == 0
    refused = lac(sensitive, "lock", "DOCS/x.md", "--as", "fred")
    assert refused.code == 1 and "erin" in refused.err, refused
    # The case-sensitive clone's hook asks the same question.
    lac_process(sensitive, "hooks", "install")
    (sensitive / "core" / "auth.py").write_text("fred\n")
    git(sensitive, "add", "core/auth.py")
    blocked = run_git(sensitive, "commit", "-qm", "fred", agent="fred")
    assert blocked.code != 0 and "held by dana" in blocked.err, blocked.err


def test_an_exact_board_keeps_case_variants_apart_and_doctor_says_so(
    repo: Path, tmp_path: Path, database: str
) -> None:
    sensitive, insensitive = case_clones(repo, tmp_path, database, "--case", "exact")
    assert lac(sensitive, "lock", "Core/Auth.py", "--as", "dana").code == 0
    assert lac(insensitive, "lock", "core/auth.py", "--as", "erin").code == 0
    said = lac(insensitive, "doctor", "--json")
    assert said.code == 1
    (case,) = [c for c in said.json["checks"] if c["check"] == "case"]
    assert case["verdict"] == "fail" and case["facts"] == {
        "rule": "exact",
        "core_ignorecase": True,
    }


@pytest.mark.parametrize("first", ["sensitive", "insensitive"])
def test_clones_sharing_an_embedded_board_follow_its_one_case_rule(
    repo: Path, tmp_path: Path, first: str
) -> None:
    """An SQLite board shared through lac.url by a case-sensitive clone and a
    core.ignorecase=true one: the board records one rule when it is made
    (fold), whichever clone makes it, and the other follows it."""
    sensitive = repo
    insensitive = clone(repo, tmp_path / "insensitive wt ü")
    git(insensitive, "config", "core.ignorecase", "true")
    board = tmp_path / "shared board" / "board.db"
    url = f"sqlite://{board}"
    order = [sensitive, insensitive] if first == "sensitive" else [insensitive, sensitive]
    for where in order:
        made = lac(where, "--json", "init", "--url", url)
        assert made.code == 0, made.err
        assert made.json["case"] == "fold", made.json
    assert lac(sensitive, "lock", "Core/Auth.py", "--as", "dana").code == 0
    refused = lac(insensitive, "lock", "core/auth.py", "--as", "erin")
    assert refused.code == 1 and "dana" in refused.err, refused
    assert lac(insensitive, "lock", "docs/X.md", "--as", "erin").code == 0
    refused = lac(sensitive, "lock", "DOCS/x.md", "--as", "fred")
    assert refused.code == 1 and "erin" in refused.err, refused
    for where, mine in ((sensitive, False), (insensitive, True)):
        said = lac(where, "doctor", "--json")
        (case,) = [c for c in said.json["checks"] if c["check"] == "case"]
        assert case["verdict"] == "ok" and case["facts"] == {
            "rule": "fold",
            "core_ignorecase": mine,
        }
    # The rule is the board's: a later init by either clone keeps it.
    assert lac(sensitive, "--json", "init").json["case"] == "fold"
    # An explicit --case exact is the board's too, and the
    # case-insensitive clone is told it cannot follow it safely.
    assert lac(sensitive, "--json", "init", "--case", "exact").json["case"] == "exact"
    said = lac(insensitive, "doctor", "--json")
    (case,) = [c for c in said.json["checks"] if c["check"] == "case"]
    assert said.code == 1 and case["verdict"] == "fail"


@pytest.mark.parametrize("rule", ["fold", "exact"])
def test_the_database_grant_folds_by_the_board_rule(repo: Path, database: str, rule: str) -> None:
    """A caller that bypasses the command line (team mode's grant function)."""
    import psycopg

    assert lac(repo, "init", "--url", database, "--case", rule).code == 0
    assert lac(repo, "lock", "Core/Auth.py", "--as", "dana").code == 0
    board = root_board(repo)
    with psycopg.connect(with_search_path(database, board), autocommit=True) as conn:
        call = "SELECT lac_require_free('erin', NULL, 'core/auth.py', 'w', NULL)"
        if rule == "fold":
            with pytest.raises(psycopg.Error) as err:
                conn.execute(call)
            assert err.value.sqlstate == "LAC01"
        else:
            conn.execute(call)
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE lac_settings SET value = 'sometimes' WHERE name = 'case'")


# --- git lac doctor ----------------------------------------------------------------


def doctor(where: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    said = lac_process(where, "doctor", "--json")
    assert said.code in (0, 1), said
    assert said.json["ok"] is (said.code == 0)
    return said.code, {c["check"]: c for c in said.json["checks"]}


def verdicts(checks: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {name: c["verdict"] for name, c in checks.items()}


def test_doctor_on_a_healthy_embedded_clone(lac: Lac, repo: Path, backend: str) -> None:
    lac_process(repo, "hooks", "install")
    code, checks = doctor(repo)
    assert code == 0, checks
    assert set(verdicts(checks).values()) == {"ok"}, checks
    assert checks["identity"]["facts"] == {"agent": "tester", "source": "default from user.email"}
    human = lac_process(repo, "doctor")
    assert human.code == 0 and human.out.startswith("ok    repository: clone\n"), human.out


def test_doctor_on_the_readme_setup(repo: Path, tmp_path: Path, database: str) -> None:
    assert lac(repo, "init", "--url", database).code == 0
    lac_process(repo, "hooks", "install")
    code, checks = doctor(repo)
    assert code == 0, checks
    assert verdicts(checks) == {
        "repository": "ok",
        "hooks": "ok",
        "probe pre-commit": "ok",
        "board": "ok",
        "shared": "ok",
        "reachable": "ok",
        "isolation": "ok",
        "case": "ok",
        "project": "ok",
        "identity": "ok",
    }
    assert checks["board"]["facts"]["board"] == root_board(repo)
    # The server, pinned and not.
    server = guarded_server(repo, tmp_path, database)
    code, checks = doctor(server.bare)
    assert code == 0 and checks["board"]["facts"]["door"] == "server guard", checks
    assert checks["hooks"]["facts"]["installed"] == ["pre-receive", "post-receive"]
    git(server.bare, "config", "--unset", "lac.board")
    code, checks = doctor(server.bare)
    assert code == 0 and checks["pinned"]["verdict"] == "warn", checks


def test_doctor_reads_and_writes_nothing(repo: Path, database: str) -> None:
    git(repo, "config", "lac.url", database)
    before = (sorted(p.name for p in (repo / ".git").rglob("*")), schemas(database))
    config = git(repo, "config", "--list")
    code, checks = doctor(repo)
    assert code == 1
    assert checks["reachable"]["verdict"] == "fail" and "no board" in str(checks["reachable"])
    assert (sorted(p.name for p in (repo / ".git").rglob("*")), schemas(database)) == before
    assert git(repo, "config", "--list") == config


@pytest.mark.parametrize(
    "broken", ["no hooks", "shallow", "missing board", "down", "isolation", "no case rule"]
)
def test_doctor_says_what_is_broken(repo: Path, tmp_path: Path, database: str, broken: str) -> None:
    import psycopg

    assert lac(repo, "init", "--url", database).code == 0
    commit(repo, "two", write("docs/a.md", "a\n"))
    where = repo
    if broken == "shallow":
        where = clone(repo, tmp_path / "shallow", "--depth", "1")
        git(where, "config", "lac.url", database)
    if broken != "no hooks":
        lac_process(where, "hooks", "install")
    if broken == "missing board":
        git(repo, "config", "lac.board", "nosuch")
    elif broken == "down":
        git(repo, "config", "lac.url", "postgresql://nobody@127.0.0.1:1/nowhere")
    elif broken == "isolation":
        name = urlsplit(database).path.lstrip("/")
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute(
                f"ALTER DATABASE \"{name}\" SET default_transaction_isolation = 'repeatable read'"
            )
    elif broken == "no case rule":  # a board made before 0010
        with psycopg.connect(with_search_path(database, root_board(repo)), autocommit=True) as c:
            c.execute("DELETE FROM lac_settings WHERE name = 'case'")
    code, checks = doctor(where)
    failing = {
        "no hooks": ("hooks", "fail"),
        "shallow": ("board", "fail"),
        "missing board": ("reachable", "fail"),
        "down": ("reachable", "fail"),
        "isolation": ("isolation", "warn"),  # safe for git lac; others get LAC02
        "no case rule": ("case", "warn"),
    }[broken]
    assert checks[failing[0]]["verdict"] == failing[1], checks
    assert code == (1 if failing[1] == "fail" else 0), checks
    others = {n: v for n, v in verdicts(checks).items() if n != failing[0]}
    if broken == "missing board":  # and a clone with only lac.url would find another
        assert others.pop("shared") == "warn"
    assert set(others.values()) <= {"ok"}, checks
    if broken == "shallow":
        assert checks["repository"]["says"] == "clone, shallow"
        assert "shallow clone" in str(checks["board"]["says"])
    if broken == "isolation":
        assert checks["isolation"]["facts"]["default"] == "repeatable read"
        assert checks["isolation"]["facts"]["source"] == "database"


def test_doctor_in_a_server_with_no_board(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    code, checks = doctor(bare)
    assert code == 1
    assert verdicts(checks) == {"repository": "ok", "hooks": "fail", "board": "fail"}
    assert checks["repository"]["facts"]["kind"] == "bare"
    assert not (bare / "lacunari").exists()


def test_the_server_installer_can_also_deny_every_rewind(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    wrong = lac_process(repo, "hooks", "install", "--deny-non-fast-forwards")
    assert wrong.code == 2 and "add --server" in wrong.err, wrong
    done = lac_process(bare, "hooks", "install", "--server", "--deny-non-fast-forwards")
    assert done.code == 0, done.err
    assert "receive.denyNonFastForwards: true" in done.out
    assert git(bare, "config", "receive.denyNonFastForwards").strip() == "true"
