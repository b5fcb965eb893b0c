"""The whole pre-commit hook with 1,000 staged paths, against many locks, in one run.

    python bench/guard.py [--runs N] [--locks 100,10000,100000] [--dsn postgresql://…]

The board holds N locks of another agent, none covering the staged paths
(files, and a glob per hundred, in other directories). Each row is the median
wall time of the installed hook (`.git/hooks/pre-commit`, as git runs it),
beside a bare `git diff --cached --name-only` of the same index measured in
the same loop, and the cost of going from the fewest locks to the most.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_lacunari.paths import index_key  # noqa: E402

DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")
BIN = str(Path(sys.executable).parent)
# Timed as an installed copy runs: with its bytecode cached (pip compiles it
# at install time; this environment may have PYTHONDONTWRITEBYTECODE set).
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PATH": BIN + os.pathsep + os.environ["PATH"],
    "GIT_CONFIG_NOSYSTEM": "1",
    "LAC_AGENT": "committer",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, env=ENV, capture_output=True)


def make_repo(staged: int) -> Path:
    repo = Path(tempfile.mkdtemp(prefix="lac-guard-bench-"))
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "bench")
    for n in range(staged):
        path = repo / "src" / f"mod{n % 50}" / f"file{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"value = {n}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    for n in range(staged):
        (repo / "src" / f"mod{n % 50}" / f"file{n}.py").write_text(f"value = {n + 1}\n")
    git(repo, "add", ".")
    return repo


def lock_rows(count: int) -> list[tuple[str, str, str, str, float]]:
    rows = []
    for k in range(count):
        pattern = f"other/area{k // 100}/*.py" if k % 100 == 0 else f"other/area{k // 100}/f{k}.py"
        rows.append((pattern, index_key(pattern), "w", f"agent{k % 97}", 0.0))
    return rows


def fill_sqlite(repo: Path, count: int) -> None:
    import sqlite3

    subprocess.run(["git", "lac", "init"], cwd=repo, env=ENV, check=True, capture_output=True)
    conn = sqlite3.connect(repo / ".git" / "lacunari" / "board.db")
    conn.execute("DELETE FROM lac_locks")
    conn.executemany(
        "INSERT INTO lac_locks (pattern, key, mode, agent, acquired_at) VALUES (?, ?, ?, ?, ?)",
        lock_rows(count),
    )
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()


def fill_postgres(repo: Path, url: str, count: int) -> None:
    import psycopg

    subprocess.run(
        ["git", "lac", "init", "--url", url], cwd=repo, env=ENV, check=True, capture_output=True
    )
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM lac_locks")
        with (
            conn.cursor() as cur,
            cur.copy("COPY lac_locks (pattern, key, mode, agent, acquired_at) FROM STDIN") as copy,
        ):
            for row in lock_rows(count):
                copy.write_row(row)
        conn.execute("ANALYZE lac_locks")


def timed(cmd: list[str], repo: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=repo, env=ENV, capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode()}")
    return elapsed


def measure(repo: Path, runs: int) -> tuple[float, float]:
    hook = str(repo / ".git" / "hooks" / "pre-commit")
    diff = ["git", "diff", "--cached", "--name-only"]
    hooks, diffs = [], []
    timed([hook], repo)  # warm caches once
    for _ in range(runs):
        hooks.append(timed([hook], repo))
        diffs.append(timed(diff, repo))
    return statistics.median(hooks), statistics.median(diffs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--staged", type=int, default=1000)
    parser.add_argument("--locks", default="100,10000,100000")
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    counts = [int(c) for c in args.locks.split(",")]
    repo = make_repo(args.staged)
    subprocess.run(
        ["git", "lac", "hooks", "install"], cwd=repo, env=ENV, check=True, capture_output=True
    )
    print(f"pre-commit hook, {args.staged} staged paths, median of {args.runs} runs")
    print(f"{'backend':<9} {'locks':>7} {'hook ms':>8} {'git diff ms':>12} {'vs fewest':>10}")
    import psycopg

    for backend in args.backends.split(","):
        schema = "lac_gbench_" + uuid.uuid4().hex[:8]
        url = None
        if backend == "postgres":
            with psycopg.connect(args.dsn, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA "{schema}"')
            sep = "&" if "?" in args.dsn else "?"
            url = f"{args.dsn}{sep}options={quote(f'-csearch_path={schema}')}"
        try:
            fewest = None
            for count in counts:
                if url is None:
                    fill_sqlite(repo, count)
                else:
                    fill_postgres(repo, url, count)
                hook_ms, diff_ms = measure(repo, args.runs)
                fewest = fewest or hook_ms
                print(
                    f"{backend:<9} {count:>7} {hook_ms:>8.1f} {diff_ms:>12.1f} "
                    f"{hook_ms / fewest:>9.2f}x",
                    flush=True,
                )
        finally:
            if url is not None:
                git(repo, "config", "--unset", "lac.url")
                with psycopg.connect(args.dsn, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


if __name__ == "__main__":
    main()
