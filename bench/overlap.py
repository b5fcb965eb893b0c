"""One overlap test on the server (lac_overlap, PL/pgSQL) against one in
Python (paths.overlap), side by side, in one run.

    python bench/overlap.py [--dsn postgresql://…] [--n 2000]

For typical pairs of lock patterns (literal, glob against literal, glob
against glob, case-insensitive, a pathological one) it prints the cost of one
call each way: the SQL figure is measured inside the server (N calls in one
statement, less the same statement calling a trivial function), so no round
trip is counted; the Python figure is paths.overlap with its compiled
automata cached, as a long-lived process has them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from git_lacunari import paths  # noqa: E402
from git_lacunari.store.postgres import PostgresStore  # noqa: E402

DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")
CASES = [
    ("literal vs literal", "src/core/auth.py", "src/core/", False),
    ("glob vs literal", "src/core/*.py", "src/core/auth.py", False),
    ("glob vs literal, miss", "src/core/*.py", "src/core/auth/x.txt", False),
    ("heads differ", "src/api/*.py", "src/core/**", False),
    ("glob vs glob", "src/**/*.py", "src/core/[a-m]*", False),
    ("glob vs glob, none", "src/*.py", "src/*.txt", False),
    ("ignorecase", "Src/Core/*.PY", "src/core/auth.py", True),
    ("ignorecase, non-ASCII", "Dokumente/Übersicht/*.md", "dokumente/übersicht/a.md", True),
    ("pathological", "*a" * 20 + "*b", "a" * 60 + "c", False),
]


def sql_us(conn: psycopg.Connection[tuple[object, ...]], a: str, b: str, ic: bool, n: int) -> float:
    def run(expr: str) -> float:
        start = time.perf_counter()
        conn.execute(
            f"SELECT count(*) FROM generate_series(1, %s) g WHERE {expr}",
            (n, a, b, ic) if "%s" in expr else (n,),
        )
        return time.perf_counter() - start

    call = "lac_overlap(%s || repeat('', g), %s, %s)"  # g: no constant folding
    run(call)  # warm: plans cached
    best = min(run(call) for _ in range(3))
    base = min(run("length(repeat('', g)) >= 0") for _ in range(3))
    return (best - base) / n * 1e6


def py_us(a: str, b: str, ic: bool, n: int) -> float:
    paths.overlap(a, b, ic)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            paths.overlap(a, b, ic)
        best = min(best, time.perf_counter() - start)
    return best / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    schema = "lac_bench_" + uuid.uuid4().hex[:10]
    with psycopg.connect(args.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        sep = "&" if "?" in args.dsn else "?"
        url = f"{args.dsn}{sep}options={quote(f'-csearch_path={schema}')}"
        store = PostgresStore(url)
        store.migrate(create=True)
        store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            print(f"{'case':24} {'answer':>6} {'SQL µs':>9} {'Python µs':>10} {'ratio':>7}")
            for name, a, b, ic in CASES:
                answer = paths.overlap(a, b, ic)
                row = conn.execute("SELECT lac_overlap(%s, %s, %s)", (a, b, ic)).fetchone()
                assert row is not None and row[0] == answer, (name, row, answer)
                s = sql_us(conn, a, b, ic, args.n)
                p = py_us(a, b, ic, args.n)
                print(f"{name:24} {answer!s:>6} {s:9.1f} {p:10.1f} {s / p:6.1f}x")
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


if __name__ == "__main__":
    main()
