"""A large grant in team mode beside plain PostgreSQL, in one run.

    python bench/team_grant.py [--paths 2000] [--repeat 3] [--dsn postgresql://…]

Agent a holds --paths write locks in one directory; agent b claims a task
declaring --paths other files there. Plain PostgreSQL judges the grant in the
board (three statements, issue 12); team mode also has the database judge every
lock again (``lac_api_insert_locks`` runs ``lac_require_free`` per lock, under
row-level security), so an agent role that skips the board's check still
cannot take a conflicting lock. Medians of --repeat pairs, measured
alternately.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_lacunari.board import Board  # noqa: E402
from git_lacunari.identity import Identity  # noqa: E402
from git_lacunari.store.postgres import PostgresStore  # noqa: E402
from tests.conftest import pg_schema  # noqa: E402
from tests.team_fixtures import team_board  # noqa: E402

DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def claim_beside_held(a: Board, b: Board, n: int) -> float:
    a.lock([f"d/held{i}.py" for i in range(n)])
    task = b.add_task("big", writes=[f"d/want{i}.py" for i in range(n)])
    started = time.perf_counter()
    b.claim(task.id)
    return time.perf_counter() - started


def plain(dsn: str, n: int) -> float:
    with pg_schema(dsn) as url:
        a = Board(PostgresStore(url), Identity("a", "bench", (), "bench"))
        a.store.migrate(create=True)
        b = Board(PostgresStore(url), Identity("b", "bench", (), "bench"))
        try:
            return claim_beside_held(a, b, n)
        finally:
            a.store.close()
            b.store.close()


def teamed(dsn: str, n: int) -> float:
    with team_board(dsn) as crew:
        a, b = crew.open(crew.add("a")), crew.open(crew.add("b"))
        try:
            return claim_beside_held(a, b, n)
        finally:
            a.store.close()
            b.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    args = parser.parse_args()
    plains, teams = [], []
    for _ in range(args.repeat):
        plains.append(plain(args.dsn, args.paths))
        teams.append(teamed(args.dsn, args.paths))
    p, t = statistics.median(plains), statistics.median(teams)
    print(
        f"claim of {args.paths:,} paths against {args.paths:,} held in one directory: "
        f"plain PostgreSQL {p:.3f}s, team mode {t:.3f}s ({t / p:.1f}x); "
        f"medians of {args.repeat}"
    )


if __name__ == "__main__":
    main()
