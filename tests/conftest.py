"""Hermetic fixtures: real git repositories, real SQLite files, real PostgreSQL.

PostgreSQL comes from ``LAC_TEST_DSN`` (CI points it at the machine's
server); else the local server at 127.0.0.1:5432 is tried; else a throwaway
cluster is started with ``initdb``/``pg_ctl`` when they exist; else the
PostgreSQL half is skipped with a loud reason — unless ``LAC_REQUIRE_PG=1``,
which turns that skip into a failure (CI sets it). Every test gets its own
schema, dropped afterwards, so tests never see each other's boards.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import pytest

from git_lacunari.board import Board
from git_lacunari.identity import Identity
from git_lacunari.store import Store, open_store

REPO_ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ["sqlite", "postgres"]


# --- sealing tests from the user's git and lac settings ----------------------

GITCONFIG = (
    "[user]\n\tname = Test User\n\temail = tester@example.com\n"
    "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
    "[core]\n\teol = lf\n\tautocrlf = false\n"
)
RESIDENT_CONFIG = '[lac "edit"]\n\thelper-idle = 20s\n'
# What the seal lets through of the caller's environment by name prefix: the
# knobs that point the suite at its PostgreSQL server (read by ``pg_server``).
SEAL_KEEPS = ("LAC_TEST_", "LAC_REQUIRE_PG")
# Dropped whole, by prefix: every git setting (config injected through the
# environment, a GIT_DIR or index from a hook we run inside, identities,
# traces, pathspec magic), every pre-commit framework variable (a leaked
# PRE_COMMIT_REMOTE_NAME turns `guard pre-push` into framework mode), and
# every git-lacunari knob (an agent, capabilities, LAC_GUARD=off).
SEAL_DROPS = ("GIT_", "PRE_COMMIT", "LAC_")
# Dropped by name: identities git falls back on, editors and pagers a command
# could block on, and locale choices that would translate git's messages.
SEAL_DROP_NAMES = (
    "EMAIL",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "LESS",
    "LANGUAGE",
    "SSH_ASKPASS",
    "XDG_CONFIG_DIRS",
    # The agent harnesses' project directories: they tell the edit hook whose agent asks.
    "CLAUDE_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
)


@pytest.fixture(autouse=True)
def sealed_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs as a fresh user, in an empty directory of its own.

    As tight as git-revise's ``hermetic_seal``, and tighter: nothing of the
    caller's git, pre-commit or git-lacunari settings reaches a test, whether
    it comes from a config file (HOME, XDG, system) or from the environment
    (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT/KEY_n/VALUE_n, a hook's GIT_DIR).
    ``tests/test_seal.py`` proves it by running the suite's own probe under a
    poisoned environment.
    """
    # libpq looks for ~/.pgpass in HOME, which moves below: keep the caller's
    # file reachable so a password-protected LAC_TEST_DSN still connects.
    pgpass = Path.home() / ".pgpass"
    if "PGPASSFILE" not in os.environ and pgpass.is_file():
        monkeypatch.setenv("PGPASSFILE", str(pgpass))
    for var in list(os.environ):
        if var.startswith(SEAL_KEEPS):
            continue
        if var.startswith(SEAL_DROPS) or var in SEAL_DROP_NAMES:
            monkeypatch.delenv(var)
    home = tmp_path_factory.mktemp("home")
    # The resident helper: off (each hook and command decides in its own
    # process), unless LAC_TEST_RESIDENT=1 runs the suite's calls through it
    # (LAC_EDIT_HELPER=require), each helper leaving soon after its test.
    resident = os.environ.get("LAC_TEST_RESIDENT") == "1"
    monkeypatch.setenv("LAC_EDIT_HELPER", "require" if resident else "off")
    (home / ".gitconfig").write_text(GITCONFIG + (RESIDENT_CONFIG if resident else ""))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(var, "2026-01-01T00:00:00+0000")
    # Anything that would wait for a person fails at once instead of hanging.
    for var in ("GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL"):
        monkeypatch.setenv(var, "false")
    for var in ("GIT_PAGER", "PAGER"):
        monkeypatch.setenv(var, "cat")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    # One language for the messages tests read; one zone for the times they print.
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("TZ", "UTC")
    # The login name is the last fallback of the agent name.
    for var in ("USER", "LOGNAME"):
        monkeypatch.setenv(var, "tester")
    # A working directory of its own, empty, and no repository above it: a test
    # that forgets its cwd= fails instead of acting on the checkout it runs from.
    workdir = tmp_path_factory.mktemp("cwd")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path_factory.getbasetemp().parent))
    monkeypatch.chdir(workdir)
    return home


def git(repo: Path, *args: str, input: str | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=repo, input=input, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    (path / "core").mkdir()
    (path / "core" / "auth.py").write_text("def login():\n    return True\n")
    (path / "README").write_text("hello\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "initial")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


# --- PostgreSQL ----------------------------------------------------------------


def _can_connect(dsn: str) -> bool:
    import psycopg

    try:
        psycopg.connect(dsn, connect_timeout=3).close()
        return True
    except psycopg.Error:
        return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def throwaway_cluster(initdb: str, pg_ctl: str) -> Iterator[str]:
    """A private PostgreSQL cluster for this test session, stopped and removed after."""
    import tempfile

    data = Path(tempfile.mkdtemp(prefix="lac-pg-"))
    port = _free_port()
    run_as: list[str] = []
    # initdb refuses to run as root: use the postgres account when there is one.
    has_postgres_user = subprocess.run(["id", "postgres"], capture_output=True).returncode == 0
    if os.geteuid() == 0 and shutil.which("runuser") and has_postgres_user:
        shutil.chown(data, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    try:
        subprocess.run(
            [*run_as, initdb, "-D", str(data / "db"), "-U", "postgres", "-A", "trust"],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                *run_as,
                pg_ctl,
                "-D",
                str(data / "db"),
                "-w",
                "-l",
                str(data / "log"),
                "-o",
                f"-p {port} -k {data} -c listen_addresses=127.0.0.1",
                "start",
            ],
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                [*run_as, pg_ctl, "-D", str(data / "db"), "-m", "immediate", "stop"],
                capture_output=True,
            )
    finally:
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    dsn = os.environ.get("LAC_TEST_DSN")
    candidates = [dsn] if dsn else ["postgresql://postgres@127.0.0.1:5432/test"]
    if os.environ.get("LAC_TEST_THROWAWAY") == "1":  # exercise the no-server path here
        candidates = []
    for candidate in candidates:
        if _can_connect(candidate):
            yield candidate
            return
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if not dsn and initdb and pg_ctl:
        with throwaway_cluster(initdb, pg_ctl) as url:
            yield url
        return
    reason = (
        f"PostgreSQL half SKIPPED: no server at {candidates[0]} and no initdb/pg_ctl to start one"
    )
    if os.environ.get("LAC_REQUIRE_PG") == "1":
        pytest.fail(reason + " (LAC_REQUIRE_PG=1 forbids skipping)")
    print("\n" + "!" * 78 + f"\n{reason}\n" + "!" * 78, file=sys.stderr)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pgbouncer_server(pg_server: str) -> Iterator[str]:
    """The test server through a real PgBouncer in transaction pooling mode
    (tests/pgbouncer.py), for the session."""
    from .pgbouncer import pgbouncer

    with pgbouncer(pg_server) as url:
        yield url


@contextlib.contextmanager
def bare_schema(server: str) -> Iterator[str]:
    """A fresh, empty schema on the server; yields its name (dropped after)."""
    import psycopg

    schema = "lac_t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@contextlib.contextmanager
def pg_schema(server: str) -> Iterator[str]:
    """A fresh schema on the server; yields a board URL whose search_path is it."""
    import psycopg

    schema = "lac_t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in server else "?"
    try:
        yield f"{server}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def board_url(backend: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None for the embedded default; a per-test schema URL for PostgreSQL."""
    if backend == "sqlite":
        yield None
        return
    server = request.getfixturevalue("pg_server")
    with pg_schema(server) as url:
        yield url


# --- reaching under the board ---------------------------------------------------

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def board_sql(store: Store, sql: str, /, **params: Any) -> list[dict[str, Any]]:
    """Run one statement on the store's own connection, for a state the verbs
    cannot make on demand (a claim silent for an hour); ``:name`` parameters on
    both dialects. Both stores' connections are in autocommit mode, so it is
    committed when this returns. Returns the rows, if the statement has any."""
    conn = cast(Any, store).conn
    if store.dialect == "postgres":
        sql = _PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))
    cursor = conn.execute(sql, params)
    return list(cursor.fetchall()) if cursor.description is not None else []


def backdate_claim(store: Store, task_id: int, seconds: float) -> None:
    """Make a claim's last heartbeat (and its claim) ``seconds`` older, as if
    its holder had gone silent that long: staleness without sleeping against
    a real stale-after. Heartbeats are epoch seconds on both dialects."""
    rows = board_sql(
        store,
        "UPDATE lac_tasks SET heartbeat_at = heartbeat_at - :s, claimed_at = claimed_at - :s"
        " WHERE id = :id AND state = 'claimed' RETURNING id",
        s=float(seconds),
        id=task_id,
    )
    assert len(rows) == 1, f"task #{task_id} is not claimed: nothing to backdate"


@dataclass
class Boards:
    """Opens boards on one repository and one backend, as any agent."""

    repo: Path
    url: str | None
    opened: list[Store]

    def store(self) -> Store:
        from git_lacunari.repo import discover

        store = open_store(self.url, discover(self.repo).common_dir, create=True)
        self.opened.append(store)
        return store

    def __call__(self, agent: str = "alice", caps: tuple[str, ...] = (), prefix: str = "") -> Board:
        from git_lacunari.repo import discover

        repo = discover(self.repo)
        ident = Identity(agent, "test", tuple(sorted(caps)), "test")
        return Board(self.store(), ident, prefix=prefix, blob_ids=repo.blob_ids)

    def backdate(self, task_id: int, seconds: float) -> None:
        """See :func:`backdate_claim`."""
        backdate_claim(self.store(), task_id, seconds)

    def sql(self, sql: str, /, **params: Any) -> list[dict[str, Any]]:
        """See :func:`board_sql`."""
        return board_sql(self.store(), sql, **params)


@pytest.fixture
def boards(repo: Path, board_url: str | None) -> Iterator[Boards]:
    made = Boards(repo, board_url, [])
    yield made
    for store in made.opened:
        store.close()


# --- the command line, in process and as real processes ------------------------


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.out)
        return data


def lac_inprocess(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """Run `git lac ARGS` in this process (fast), with its own cwd and env."""
    from git_lacunari.cli import run

    out, err = io.StringIO(), io.StringIO()
    old_cwd = os.getcwd()
    old_env = dict(os.environ)
    try:
        os.chdir(cwd)
        os.environ.update(env or {})
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(list(args))
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
    return Result(code, out.getvalue(), err.getvalue())


def lac_process(
    cwd: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None
) -> Result:
    """Run `git lac ARGS` as git would: a real `git` process finding `git-lac` on PATH."""
    full_env = {**os.environ, **(env or {})}
    bindir = str(Path(sys.executable).parent)
    full_env["PATH"] = bindir + os.pathsep + full_env.get("PATH", "")
    proc = subprocess.run(
        ["git", "lac", *args],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def lac(repo: Path, board_url: str | None) -> Callable[..., Result]:
    """`git lac` in the test repo, already initialised on the backend under test."""
    init = ["init"] + (["--url", board_url] if board_url else [])
    result = lac_inprocess(repo, *init)
    assert result.code == 0, result.err

    def call(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
        return lac_inprocess(cwd or repo, *args, env=env)

    return call
