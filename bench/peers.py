"""The board's claim beside two PostgreSQL job queues' dequeue, in one run.

    python bench/peers.py [--dsn postgresql://…] [--quick] [--claimers 1,8,32]

The peers record who took a job too, and are what a user would reach for
instead: procrastinate's ``procrastinate_fetch_job_v2`` (an UPDATE of the job
row with FOR UPDATE SKIP LOCKED and a status-event row written by its trigger)
and pgqueuer's dequeue statement (the SQL its own query builder renders for one
entrypoint with no limits: a pick, an UPDATE and a log row), beside the board's
``Board.claim_next`` (pick, claimability rule, claim, ``claimed`` event).

For each number of claimer processes, each round fills a fresh schema per
contender with the same number of open jobs, then that many processes, each on
its own connection in autocommit, take one job per statement until none is
left. Contenders run one after the other within a round, in an order that
rotates from round to round; the ratio board ÷ peer is taken pair by pair
within a round, and the median of those ratios is what to read (the machine
is shared). Needs the ``bench`` extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from claims import DEFAULT_DSN, make_repo, pg_url, run_parallel  # noqa: E402

from git_lacunari.board import Board  # noqa: E402
from git_lacunari.errors import Refused  # noqa: E402
from git_lacunari.identity import Identity  # noqa: E402
from git_lacunari.store import open_store  # noqa: E402

# --- the board ---------------------------------------------------------------


def board_setup(url: str, jobs: int) -> tuple[str, str]:
    repo = make_repo()
    store = open_store(url, repo / ".git", create=True)
    board = Board(store, Identity("setup", "bench", (), "bench"))
    with store.write():
        for n in range(jobs):
            board.add_task(f"bench {n}", lane="bench", priority=n % 5)
    store.close()
    return url, str(repo / ".git")


def board_worker(index: int, barrier: Any, url: str, common_dir: str) -> None:
    store = open_store(url, Path(common_dir))
    board = Board(store, Identity(f"bench-{index}", "bench", (), "bench"))
    board._ensure_agent()  # registering the agent is not part of a claim
    barrier.wait()
    while True:
        try:
            board.claim_next("bench")
        except Refused:
            break
    store.close()


# --- procrastinate -----------------------------------------------------------


def procrastinate_setup(url: str, jobs: int) -> tuple[str, str]:
    import procrastinate
    import psycopg

    schema_sql = (Path(procrastinate.__file__).parent / "sql" / "schema.sql").read_text()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(schema_sql)
        conn.execute(
            "INSERT INTO procrastinate_jobs (queue_name, task_name, priority, args)"
            " SELECT 'default', 'bench', n %% 5, '{}' FROM generate_series(1, %s) n",
            (jobs,),
        )
    return url, ""


def procrastinate_worker(index: int, barrier: Any, url: str, _unused: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT worker_id FROM procrastinate_register_worker_v1()").fetchone()
        assert row is not None
        worker = row[0]
        barrier.wait()
        fetch = "SELECT id FROM procrastinate_fetch_job_v2(ARRAY['default'], %s)"
        while True:
            got = conn.execute(fetch, (worker,)).fetchone()
            if got is None or got[0] is None:
                break


# --- pgqueuer ----------------------------------------------------------------


def pgqueuer_setup(url: str, jobs: int) -> tuple[str, str]:
    import psycopg
    from pgqueuer.adapters.persistence.qb import QueryBuilderEnvironment

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(QueryBuilderEnvironment().build_install_query(create_schema=False))
        conn.execute(
            "INSERT INTO pgqueuer (priority, status, entrypoint)"
            " SELECT n %% 5, 'queued', 'bench' FROM generate_series(1, %s) n",
            (jobs,),
        )
    return url, ""


def pgqueuer_worker(index: int, barrier: Any, url: str, _unused: str) -> None:
    import psycopg
    from pgqueuer.adapters.persistence.qb import QueryQueueBuilder

    query = QueryQueueBuilder().build_dequeue_query(
        batch_size=1,
        entrypoints=["bench"],
        concurrency_limits=[0],
        queue_manager_id=uuid.uuid4(),
        global_concurrency_limit=None,
        heartbeat_timeout=datetime.timedelta(seconds=30),
    )
    with psycopg.connect(url, autocommit=True) as conn:
        cur = psycopg.RawCursor(conn)  # pgqueuer's SQL uses $1, $2 placeholders
        barrier.wait()
        while True:
            cur.execute(query.sql, query.args)
            if cur.fetchone() is None:
                break


# --- the run -----------------------------------------------------------------

Setup = Callable[[str, int], tuple[str, str]]
Worker = Callable[..., None]
CONTENDERS: dict[str, tuple[Setup, Worker]] = {
    "board": (board_setup, board_worker),
    "procrastinate": (procrastinate_setup, procrastinate_worker),
    "pgqueuer": (pgqueuer_setup, pgqueuer_worker),
}


def one_rate(dsn: str, name: str, claimers: int, jobs: int, schemas: list[str]) -> float:
    import psycopg

    schema = f"bench_peers_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    schemas.append(schema)
    setup, worker = CONTENDERS[name]
    url, extra = setup(pg_url(dsn, schema), jobs)
    return jobs / run_parallel(worker, claimers, url, extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    parser.add_argument("--quick", action="store_true", help="a smaller run, within 4 minutes")
    parser.add_argument("--claimers", default="1,8,32")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--jobs", type=int, help="jobs per claimer process and round")
    args = parser.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    per_claimer = args.jobs or (60 if args.quick else 150)
    counts = [int(c) for c in args.claimers.split(",")]
    names = list(CONTENDERS)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {rounds} rounds")
    import psycopg

    schemas: list[str] = []
    try:
        for claimers in counts:
            jobs = max(300, per_claimer * claimers)
            rates: dict[str, list[float]] = {n: [] for n in names}
            ratios: dict[str, list[float]] = {n: [] for n in names if n != "board"}
            for r in range(rounds):
                order = names[r % len(names) :] + names[: r % len(names)]
                got = {n: one_rate(args.dsn, n, claimers, jobs, schemas) for n in order}
                for n in names:
                    rates[n].append(got[n])
                for peer in ratios:
                    ratios[peer].append(got["board"] / got[peer])
                with psycopg.connect(args.dsn, autocommit=True) as conn:
                    for schema in schemas:
                        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
                schemas.clear()
            line = ", ".join(f"{n} {statistics.median(rates[n]):,.0f}/s" for n in names)
            paired = ", ".join(
                f"board ÷ {peer} {statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"
                for peer, v in ratios.items()
            )
            print(f"{claimers:>3} claimers, {jobs} jobs: {line}; {paired}", flush=True)
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            for schema in schemas:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    main()
