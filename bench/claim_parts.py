"""Where a PostgreSQL claim's time goes, part by part, beside the bare ceiling.

    python bench/claim_parts.py [--dsn postgresql://…] [--tasks N]

The target was claims at 0.8 of the bare ``FOR UPDATE SKIP LOCKED``
UPDATE (bench/claims.py). This takes the board's one-statement claim apart
on one connection with ``synchronous_commit = off`` (the CPU a claim costs;
the flush both pay alike): each variant below drops one more part of what
the board's claim does, and all are timed round-robin, claim after claim,
so a noisy machine slows them alike. Read the differences:

- ``board``: ``claim_next_free`` as the board runs it (the PL/pgSQL
  ``lac_api_claim_next_free``: checks, actor, the claim, its event);
- ``statement``: the same statement outside the function layer;
- ``no event``: without the ``claimed`` event row;
- ``bare task``: the UPDATE of the task row alone (no claimability rule);
- ``no checks``: that, on a copy of the table without its CHECK constraints
  and change-feed trigger (what an agent's own SQL login could otherwise
  write past);
- ``ceiling``: bench/claims.py's bare UPDATE of a three-column table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from claims import DEFAULT_DSN, PG_CEILING, make_pg_queue, make_repo, pg_url  # noqa: E402

from git_lacunari.board import Board  # noqa: E402
from git_lacunari.identity import Identity  # noqa: E402
from git_lacunari.store import open_store  # noqa: E402

PICK = """(SELECT t.id FROM {table} t
             WHERE t.lane = %(lane)s AND t.state = 'open'{rule}
             ORDER BY t.priority DESC, t.created_at, t.id
             LIMIT 1 FOR UPDATE SKIP LOCKED)"""
RULE = "\n               AND EXISTS (SELECT 1 FROM lac_claimable(t.id, %(agent)s) AS ok WHERE ok)"
CLAIM = """UPDATE lac_tasks AS u
   SET state = 'claimed', owner = %(agent)s, claimed_at = lac_now(), heartbeat_at = lac_now(),
       stale_after = 1800, attempts = u.attempts + 1, instance = %(instance)s,
       branch = NULL, tip = NULL, landing_since = NULL
 WHERE u.state = 'open' AND u.id = {pick}
   AND NOT EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = u.id)
RETURNING u.*"""
EVENT = """WITH claimed AS ({claim}), recorded AS (
    INSERT INTO lac_events (at, task_id, agent, kind, detail)
    SELECT lac_clock(), c.id, c.owner, 'claimed', jsonb_build_object('attempt', c.attempts)
      FROM claimed c)
SELECT * FROM claimed"""
BARE = (
    "UPDATE {table} AS u SET state = 'claimed', owner = %(agent)s"
    " WHERE u.id = {pick} RETURNING u.id"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default=DEFAULT_DSN, help="PostgreSQL server to use")
    parser.add_argument("--tasks", type=int, default=1500, help="claims timed per variant")
    args = parser.parse_args()
    import psycopg

    schema = "lac_bench_" + uuid.uuid4().hex[:10]
    with psycopg.connect(args.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        store = open_store(pg_url(args.dsn, schema), make_repo() / ".git", create=True)
        board = Board(store, Identity("bench", "bench", (), "bench"))
        with store.write():
            for n in range(args.tasks * 3):
                board.add_task(f"bench {n}", lane="bench", priority=n % 5)
        board._ensure_agent()
        conn: Any = store.conn  # type: ignore[attr-defined]
        # A copy of the tasks without CHECKs or triggers (LIKE copies neither
        # unless asked), with the same indexes.
        conn.execute(
            "CREATE TABLE bare_tasks (LIKE lac_tasks INCLUDING DEFAULTS INCLUDING INDEXES)"
        )
        conn.execute("INSERT INTO bare_tasks SELECT * FROM lac_tasks")
        make_pg_queue(conn, args.tasks)
        conn.execute("SET synchronous_commit = off")
        tasks_pick = PICK.format(table="lac_tasks", rule=RULE)
        statement = EVENT.format(claim=CLAIM.format(pick=tasks_pick))
        variants: dict[str, tuple[str, dict[str, Any] | tuple[str, ...]]] = {
            "board": (
                store.queries["claim_next_free"],  # type: ignore[attr-defined]
                {
                    "lane": "bench",
                    "agent": "bench",
                    "instance": board.instance,
                    "stale_after": None,
                },
            ),
            "statement": (statement, {}),
            "no event": (CLAIM.format(pick=tasks_pick), {}),
            "bare task": (
                BARE.format(table="lac_tasks", pick=PICK.format(table="lac_tasks", rule="")),
                {},
            ),
            "no checks": (
                BARE.format(table="bare_tasks", pick=PICK.format(table="bare_tasks", rule="")),
                {},
            ),
            "ceiling": (PG_CEILING, ("bare",)),
        }
        common = {"lane": "bench", "agent": "bench", "instance": board.instance}
        spent: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.tasks):
            for name, (sql, params) in variants.items():
                given = params if params else common
                start = time.perf_counter()
                conn.execute(sql, given).fetchall()
                spent[name].append((time.perf_counter() - start) * 1e6)
        store.close()
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
    ceiling = statistics.median(spent["ceiling"])
    print(f"one claim on one connection, synchronous_commit off, median of {args.tasks}")
    print(f"{'variant':<10} {'us':>6} {'x ceiling':>10} {'part':>6}")
    before = None
    for name, times in spent.items():
        us = statistics.median(times)
        part = f"{before - us:>6.0f}" if before is not None and name != "ceiling" else ""
        print(f"{name:<10} {us:>6.0f} {us / ceiling:>10.2f} {part}")
        before = us
    print("part: what the variant above spends that this one does not")


if __name__ == "__main__":
    main()
