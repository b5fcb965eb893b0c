"""A large grant in team mode beside plain PostgreSQL, in one run.

    python bench/team_grant.py [--paths 2000] [--globs 1000] [--repeat 3] [--dsn postgresql://…]

Agent a holds --paths write locks in one directory; agent b claims a task
declaring --paths other files there. Plain PostgreSQL judges the grant in the
board (three statements); team mode also has the database judge every
lock again (``lac_api_insert_locks`` runs ``lac_require_free`` per lock, under
row-level security), so an agent role that skips the board's check still
cannot take a conflicting lock. Then the same with --globs glob patterns
beside as many held globs, all of one index key (the database's
check finds candidates through the head index lac_locks_head, as the board's
does through paths.PrefixIndex). Medians of --repeat pairs, measured
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


def claim_beside_held(a: Board, b: Board, n: int, globs: bool = False) -> float:
    if globs:
        a.lock([f"d/held{i}-*.py" if i % 2 else f"d/held{i}/**" for i in range(n)])
        wanted = [f"d/want{i}-*.py" if i % 2 else f"d/want{i}/**/*.c" for i in range(n)]
    else:
        a.lock([f"d/held{i}.py" for i in range(n)])
        wanted = [f"d/want{i}.py" for i in range(n)]
    task = b.add_task("big", writes=wanted)
    started = time.perf_counter()
    b.claim(task.id)
    return time.perf_counter() - started


def plain(dsn: str, n: int, globs: bool = False) -> float:
    with pg_schema(dsn) as url:
        a = Board(PostgresStore(url), Identity("a", "bench", (), "bench"))
        a.store.migrate(create=True)
        b = Board(PostgresStore(url), Identity("b", "bench", (), "bench"))
        try:
            return claim_beside_held(a, b, n, globs)
        finally:
            a.store.close()
            b.store.close()


def teamed(dsn: str, n: int, globs: bool = False) -> float:
    with team_board(dsn) as crew:
        a, b = crew.open(crew.add("a")), crew.open(crew.add("b"))
        try:
            return claim_beside_held(a, b, n, globs)
        finally:
            a.store.close()
            b.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=2000)
    parser.add_argument("--globs", type=int, default=1000, help="0: skip the globs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    args = parser.parse_args()
    for what, n, globs in (("paths", args.paths, False), ("globs", args.globs, True)):
        if not n:
            continue
        plains, teams = [], []
        for _ in range(args.repeat):
            plains.append(plain(args.dsn, n, globs))
            teams.append(teamed(args.dsn, n, globs))
        p, t = statistics.median(plains), statistics.median(teams)
        print(
            f"claim of {n:,} {what} against {n:,} held in one directory: "
            f"plain PostgreSQL {p:.3f}s, team mode {t:.3f}s ({t / p:.1f}x; target <= 2x); "
            f"medians of {args.repeat}",
            flush=True,
        )


if __name__ == "__main__":
    main()
