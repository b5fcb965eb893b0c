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
    installed = lac_process(server.bare, "hooks", "install", "--server", "--json")
    assert installed.json["board"]["board"] == expected
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
    commit(repo, "point elsewhere", write(".lacconfig", "[lac]\n\tboard = evil\n"))
    refused = server.push("main", "-o", "lac.agent=erin")
    assert refused.code != 0
    assert "a push may not choose its own judge" in refused.err, refused.err
    assert server.has("main") == before
    # Another root merged in (a history whose root sorts first) is refused alike.
    git(repo, "reset", "-q", "--hard", before)
    git(repo, "checkout", "-q", "--orphan", "stranger")
    git(repo, "rm", "-rq", "--cached", ".")
    stranger = commit(repo, "a stranger's root", write("x.txt", "x\n"))
    git(repo, "checkout", "-q", "-f", "main")
    git(repo, "merge", "-q", "--no-edit", "--allow-unrelated-histories", stranger)
    roots = git(repo, "rev-list", "--max-parents=0", "HEAD").split()
    if min(roots) != min(git(repo, "rev-list", "--max-parents=0", before).split()):
        refused = server.push("main", "-o", "lac.agent=erin")
        assert "a push may not choose its own judge" in refused.err, refused.err
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


@pytest.mark.parametrize("where", ["server config", "lacconfig", "missing"])
def test_a_server_whose_board_is_odd_or_missing_refuses_in_one_line(
    repo: Path, tmp_path: Path, database: str, where: str
) -> None:
    assert lac(repo, "init", "--url", database).code == 0
    if where == "lacconfig":
        commit(repo, "odd", write(".lacconfig", "[lac]\n\tboard = Drop;Table\n"))
    server = guarded_server(repo, tmp_path, database)
    if where == "lacconfig":  # the installer could not name it: nothing recorded
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
    before = schemas(database)
    # init: one line, exit 3, nothing written, no board made.
    refused = lac(shallow, "init", "--url", database)
    assert refused.code == 3, refused
    assert refused.err.count("\n") == 1 and "shallow clone" in refused.err, refused.err
    assert "lac.url" not in git(shallow, "config", "--list")
    assert schemas(database) == before
    # Set up by hand: the hook refuses in one line rather than ask an empty board.
    setup_clone(shallow, database)
    before_head = head(shallow)
    blocked = erin_commits_the_held_path(shallow)
    assert blocked.code != 0, blocked
    assert "shallow clone" in blocked.err and "git config lac.board" in blocked.err
    assert head(shallow) == before_head
    assert boundary not in schemas(database)
    # Named (lac.board), it asks the project's board: refused for what dana holds.
    git(shallow, "config", "lac.board", root_board(project))
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
