"""Claims per second through the board API, beside the bare-SQL ceiling, in one run.

    python bench/claims.py [--tasks N] [--dsn postgresql://…]

For 1, 8 and 32 claimer processes on each backend, every process drains a lane
with ``Board.claim_next`` until it is empty; the ceiling is the same number of
processes draining a bare table with one ``UPDATE … WHERE id = (SELECT … FOR
UPDATE SKIP LOCKED LIMIT 1)`` per claim through psycopg on the same server
(for SQLite: the same bare UPDATE in ``BEGIN IMMEDIATE`` on a file beside the
board). Each pair is measured side by side, so the ratio is what to read on a
noisy machine. Then team mode (row-level security on, one role per
claimer) beside plain PostgreSQL through the same board API, pair by pair; then
the median wall time of a whole ``git lac claim --next`` process beside its
target and beside the interpreter's own start (with the driver, for
PostgreSQL), which no code of ours moves. The load average is printed first:
on a shared machine read the ratios, not the rates.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_lacunari.board import Board  # noqa: E402
from git_lacunari.errors import Refused  # noqa: E402
from git_lacunari.identity import Identity  # noqa: E402
from git_lacunari.store import open_store  # noqa: E402

FORK = mp.get_context("fork")
DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def make_repo() -> Path:
    path = Path(tempfile.mkdtemp(prefix="lac-bench-"))
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (
        ["init", "-q"],
        [
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@example.com",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "start",
        ],
    ):
        subprocess.run(["git", *args], cwd=path, check=True, env=env)
    return path


def pg_url(dsn: str, schema: str) -> str:
    sep = "&" if "?" in dsn else "?"
    return f"{dsn}{sep}options={quote(f'-csearch_path={schema}')}"


def run_parallel(target: Any, count: int, *args: Any) -> float:
    """Start ``count`` processes, release them together, return the wall time."""
    barrier = FORK.Barrier(count + 1)
    procs = [FORK.Process(target=target, args=(i, barrier, *args)) for i in range(count)]
    for proc in procs:
        proc.start()
    barrier.wait()
    start = time.perf_counter()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"a worker failed with exit code {proc.exitcode}")
    return time.perf_counter() - start


# --- the board ---------------------------------------------------------------


def board_worker(
    index: int, barrier: Any, url: str | None, common_dir: str, prefix: str | None = None
) -> None:
    name = f"bench-{index}"
    if prefix is not None and url is not None:  # team mode: each claimer its own role
        name = prefix + name
        url = url.replace("{role}", name)
    store = open_store(url, Path(common_dir))
    board = Board(store, Identity(name, "bench", (), "bench"))
    barrier.wait()
    while True:
        try:
            board.claim_next("bench")
        except Refused:
            return


def board_rate(
    url: str | None, repo: Path, procs: int, tasks: int, team: tuple[str, str] | None = None
) -> float:
    """``team``: (role prefix, URL with {role} as its user) of a team board."""
    common_dir = repo / ".git"
    store = open_store(url, common_dir, create=True)
    setup = Identity("setup", "bench", (), "bench")
    if team is not None:  # the administrator adds the tasks, as itself
        from git_lacunari.team import acting

        setup = acting(store, setup)
    board = Board(store, setup)
    with store.write():
        for n in range(tasks):
            board.add_task(f"bench {n}", lane="bench", priority=n % 5)
    store.close()
    if team is not None:
        prefix, template = team
        elapsed = run_parallel(board_worker, procs, template, str(common_dir), prefix)
    else:
        elapsed = run_parallel(board_worker, procs, url, str(common_dir))
    return tasks / elapsed


def as_role(url: str, role: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{role}@{parts.netloc.rpartition('@')[2]}"))


def team_board(url: str, roles: int, made: list[str]) -> tuple[str, str]:
    """Make the board at ``url`` a team board with ``roles`` agent roles
    (names appended to ``made``, for dropping); (prefix, URL template)."""
    from git_lacunari import team

    store = open_store(url, Path("."), create=True)
    row = store.one("current_board")
    assert row is not None
    made.extend(team.role_names(str(row["board"])).values())
    team.enable(store)
    prefix = "b" + uuid.uuid4().hex[:8] + "_"
    for i in range(roles):
        team.add(store, f"{prefix}bench-{i}", password=False)
        made.append(f"{prefix}bench-{i}")
    store.close()
    return prefix, as_role(url, "{role}")


# --- the ceilings -------------------------------------------------------------

PG_CEILING = """UPDATE bench_queue SET state = 'claimed', owner = %s
 WHERE id = (SELECT id FROM bench_queue WHERE state = 'open'
              ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id"""

LITE_CEILING = """UPDATE bench_queue SET state = 'claimed', owner = ?
 WHERE id = (SELECT id FROM bench_queue WHERE state = 'open' ORDER BY priority DESC, id LIMIT 1)
RETURNING id"""


def pg_ceiling_worker(index: int, barrier: Any, url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        barrier.wait()
        while conn.execute(PG_CEILING, (f"bare-{index}",)).fetchone():
            pass


def lite_ceiling_worker(index: int, barrier: Any, path: str) -> None:
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    conn.execute("PRAGMA synchronous=NORMAL")
    barrier.wait()
    while True:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute(LITE_CEILING, (f"bare-{index}",)).fetchone()
        conn.execute("COMMIT")
        if row is None:
            return


def make_pg_queue(conn: Any, tasks: int) -> None:
    """The ceiling's table on a PostgreSQL connection, ``tasks`` rows open."""
    conn.execute(
        "CREATE TABLE bench_queue (id bigserial PRIMARY KEY, state text NOT NULL, owner text,"
        " priority integer NOT NULL)"
    )
    conn.execute("CREATE INDEX ON bench_queue (state, priority DESC, id)")
    conn.execute(
        "INSERT INTO bench_queue (state, priority)"
        " SELECT 'open', n %% 5 FROM generate_series(1, %s) n",
        (tasks,),
    )


def ceiling_rate(kind: str, where: str, procs: int, tasks: int) -> float:
    if kind == "postgres":
        import psycopg

        with psycopg.connect(where, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS bench_queue")
            make_pg_queue(conn, tasks)
        return tasks / run_parallel(pg_ceiling_worker, procs, where)
    Path(where).unlink(missing_ok=True)
    conn = sqlite3.connect(where, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE bench_queue (id INTEGER PRIMARY KEY, state text NOT NULL, owner text,"
        " priority integer NOT NULL)"
    )
    conn.execute("CREATE INDEX q ON bench_queue (state, priority DESC, id)")
    conn.executemany(
        "INSERT INTO bench_queue (state, priority) VALUES ('open', ?)",
        [(n % 5,) for n in range(tasks)],
    )
    conn.close()
    return tasks / run_parallel(lite_ceiling_worker, procs, where)


# --- one claim statement, on the server ----------------------------------------


def statement_us(url: str, repo: Path, tasks: int, samples: int) -> tuple[float, float, float]:
    """Median server execution time (EXPLAIN ANALYZE) of the board's one-statement
    claim and of the ceiling's UPDATE, alternated on one connection with
    synchronous_commit off: the CPU a claim costs, without the flush to disk
    that a loaded machine's disk stretches (and that both pay alike). Also the
    board's claim with its triggers off: (board, board without triggers, ceiling)."""
    import re

    store = open_store(url, repo / ".git", create=True)
    board = Board(store, Identity("bench", "bench", (), "bench"))
    with store.write():
        for n in range(tasks):
            board.add_task(f"bench {n}", lane="bench", priority=n % 5)
    board._ensure_agent()
    conn = store.conn  # type: ignore[attr-defined]
    make_pg_queue(conn, tasks)
    conn.execute("SET synchronous_commit = off")
    claim = store.queries["claim_next_free"]  # type: ignore[attr-defined]
    params = {"lane": "bench", "agent": "bench", "instance": board.instance, "stale_after": None}
    spent: dict[str, list[float]] = {"board": [], "ceiling": [], "quiet": []}

    def explain(kind: str, sql: str, args: Any) -> None:
        plan = "\n".join(r["QUERY PLAN"] for r in conn.execute("EXPLAIN ANALYZE " + sql, args))
        found = re.search(r"Execution Time: ([\d.]+)", plan)
        assert found is not None
        spent[kind].append(float(found[1]) * 1000)

    for _ in range(samples):
        explain("board", claim, params)
        explain("ceiling", PG_CEILING, ("bare",))
    # Then the board's claims with its triggers off (the change feed's counter;
    # a superuser's session_replication_role, set once: setting it empties
    # every cached plan): what they cost.
    conn.execute("SET session_replication_role = replica")
    for _ in range(samples // 2):
        explain("quiet", claim, params)
    conn.execute("RESET session_replication_role")
    store.close()
    return (
        statistics.median(spent["board"]),
        statistics.median(spent["quiet"]),
        statistics.median(spent["ceiling"]),
    )


# --- whole processes ----------------------------------------------------------


def cli_claim_ms(repo: Path, url: str | None, runs: int) -> float:
    # Timed as an installed copy runs: bytecode cached (pip compiles at install time).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"

    def lac(*args: str) -> None:
        subprocess.run(["git", "lac", *args], cwd=repo, env=env, check=True, capture_output=True)

    lac("init", *(["--url", url] if url else []))
    for n in range(runs):
        lac("task", "add", f"cli {n}", "--lane", "cli")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        lac("claim", "--next", "--lane", "cli")
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


# The targets for one whole `git lac claim --next` process.
CLI_TARGET_MS = {"sqlite": 100, "postgres": 200}
# And for the board beside its ceiling.
RATIO_TARGET = {"sqlite": 0.5, "postgres": 0.8}


def interpreter_ms(runs: int, code: str) -> float:
    """The median wall time of this interpreter running ``code`` (``pass``:
    its bare start; ``import psycopg``: with the PostgreSQL driver)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1500, help="tasks per measurement")
    parser.add_argument("--dsn", default=DEFAULT_DSN, help="PostgreSQL server to use")
    parser.add_argument("--procs", default="1,8,32")
    parser.add_argument("--cli-runs", type=int, default=15)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument(
        "--statement", type=int, default=300, help="claims timed on the server (0: skip)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="pairs per row; medians shown")
    parser.add_argument(
        "--no-team", dest="team", action="store_false", help="skip team mode beside plain PG"
    )
    args = parser.parse_args()
    import psycopg

    schemas: list[str] = []
    roles: list[str] = []

    def fresh_schema() -> str:
        schema = "lac_bench_" + uuid.uuid4().hex[:10]
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        schemas.append(schema)
        return pg_url(args.dsn, schema)

    print(
        f"claims per second, {args.tasks} tasks per run, median of {args.repeat} alternating"
        f" pairs, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'backend':<9} {'procs':>5} {'board/s':>9} {'ceiling/s':>10} {'ratio':>6} {'target':>7}"
        "  (ratio: median of per-pair board/ceiling)"
    )
    try:
        backends = args.backends.split(",")
        medians: dict[tuple[str, int], tuple[float, float]] = {}
        for backend in backends:
            for procs in [int(p) for p in args.procs.split(",")]:
                boards, ceilings = [], []
                for _ in range(args.repeat):  # alternate the two, so drift hits both alike
                    repo = make_repo()
                    if backend == "sqlite":
                        where = str(repo / "ceiling.db")
                        ceilings.append(ceiling_rate("sqlite", where, procs, args.tasks))
                        boards.append(board_rate(None, repo, procs, args.tasks))
                    else:
                        ceilings.append(ceiling_rate("postgres", fresh_schema(), procs, args.tasks))
                        boards.append(board_rate(fresh_schema(), repo, procs, args.tasks))
                ratio = statistics.median(b / c for b, c in zip(boards, ceilings, strict=True))
                medians[backend, procs] = (statistics.median(boards), statistics.median(ceilings))
                print(
                    f"{backend:<9} {procs:>5} {statistics.median(boards):>9.0f}"
                    f" {statistics.median(ceilings):>10.0f} {ratio:>6.2f}"
                    f" {'>= ' + str(RATIO_TARGET[backend]):>7}",
                    flush=True,
                )
        if "sqlite" in backends and "postgres" in backends:
            print("\nthe embedded board beside the PostgreSQL ceiling (the issue's yardstick)")
            for procs in [int(p) for p in args.procs.split(",")]:
                lite, pg = medians["sqlite", procs][0], medians["postgres", procs][1]
                print(f"sqlite    {procs:>5} {lite:>9.0f} {pg:>10.0f} {lite / pg:>6.2f}")
        if "postgres" in backends and args.team:
            print(
                "\nteam mode (row-level security on, a role per claimer, writes through"
                " SECURITY DEFINER functions) beside plain PostgreSQL, through the same board API"
            )
            print(f"{'procs':>5} {'plain/s':>9} {'team/s':>9} {'ratio':>6}  (median per pair)")
            for procs in [int(p) for p in args.procs.split(",")]:
                plains, teams = [], []
                for _ in range(args.repeat):
                    plains.append(board_rate(fresh_schema(), make_repo(), procs, args.tasks))
                    url = fresh_schema()
                    crew = team_board(url, procs, roles)
                    teams.append(board_rate(url, make_repo(), procs, args.tasks, team=crew))
                ratio = statistics.median(t / p for t, p in zip(teams, plains, strict=True))
                print(
                    f"{procs:>5} {statistics.median(plains):>9.0f} {statistics.median(teams):>9.0f}"
                    f" {ratio:>6.2f}",
                    flush=True,
                )
        if "postgres" in backends and args.statement:
            print(
                "\nserver time of one claim statement (EXPLAIN ANALYZE, median of"
                f" {args.statement}, synchronous_commit off): the board's claim --next"
                " beside the ceiling's UPDATE"
            )
            board_us, quiet_us, ceiling_us = statement_us(
                fresh_schema(), make_repo(), args.statement * 2, args.statement
            )
            print(
                f"postgres  board {board_us:.0f} us  ceiling {ceiling_us:.0f} us"
                f"  ratio {ceiling_us / board_us:.2f};  the board without its triggers"
                f" (the change feed's counter) {quiet_us:.0f} us",
                flush=True,
            )
        print(
            f"\nmedian wall time of a whole `git lac claim --next` ({args.cli_runs} runs),"
            " beside the target and, as the floor no code of ours moves, this interpreter"
            " starting (and importing the driver)"
        )
        for backend in backends if args.cli_runs else ():
            url = None if backend == "sqlite" else fresh_schema()
            whole = cli_claim_ms(make_repo(), url, args.cli_runs)
            floor = interpreter_ms(args.cli_runs, "import psycopg" if url else "pass")
            print(
                f"{backend:<9} {whole:>7.0f} ms  (target <= {CLI_TARGET_MS[backend]} ms;"
                f" floor {floor:.0f} ms)",
                flush=True,
            )
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            existing = [
                r
                for r in dict.fromkeys(roles)
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (r,)).fetchone()
            ]
            if existing:  # what they own (the write functions, the triggers') and their grants
                names = ", ".join(f'"{r}"' for r in existing)
                conn.execute(f"DROP OWNED BY {names} CASCADE")
            for schema in schemas:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            for role in existing:
                conn.execute(f'DROP ROLE "{role}"')


if __name__ == "__main__":
    main()
