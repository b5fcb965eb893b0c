"""The scale figures, on both backends, in one run.

    python bench/scale.py [--paths N] [--tasks N] [--locks N] [--runs N]
                          [--dsn postgresql://…] [--backends sqlite,postgres]
                          [--globs N] [--parts grant,globs,listings,hook]

1. **The grant**: a claim of a task declaring N paths (default 2,000) while
   another agent holds N other paths in the same directory (target: under
   1 s), and a small claim made from another process meanwhile (under 0.5 s).
   Then the same with --globs glob patterns (default 1,000: ``dir/held-I-*.py``
   and ``dir/held-I/**`` held, ``dir/wanted-I-*.py`` and ``dir/wanted-I/**/*.c``
   wanted, all of one index key): "globs that scale", same targets.
2. **The listings**: `git lac tasks` and `git lac log` (default pages) on a
   board of 100,000 tasks against the same on a board of 1,000 (target: at
   most 2x, and under 300 ms on SQLite). Both boards have the same mix: 90%
   done, 5% cancelled, 4.5% open, 0.5% claimed, three events per task (so
   the default page is full on both, and the big one has thousands more).
   Timed twice, alternating the two boards run by run: the whole command
   (`git-lac tasks`, a process as a user runs it) and the core call
   (``Board.task_page`` / ``Board.log_page`` on an open board).
3. **The hook**: the installed pre-commit hook with 1,000 staged paths, on a
   board holding 100,000 locks of another agent against one holding 100
   (target: at most 1.3x). The small board's 100 locks are in the staged
   directories' neighbourhood; the big one has them plus 99,900 elsewhere.
   Alternated run by run.

Every figure is a median; ratios compare medians measured in the same loop.
The query plans of the default listings on the big board are printed too.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from guard import ENV, make_repo  # noqa: E402

from git_lacunari.board import Board  # noqa: E402
from git_lacunari.identity import Identity  # noqa: E402
from git_lacunari.paths import index_key  # noqa: E402
from git_lacunari.store import open_store  # noqa: E402

FORK = mp.get_context("fork")
DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")
GIT_LAC = str(Path(sys.executable).parent / "git-lac")


def empty_repo() -> Path:
    path = Path(tempfile.mkdtemp(prefix="lac-scale-"))
    subprocess.run(["git", "init", "-q"], cwd=path, check=True, env=ENV)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q"]
        + ["--allow-empty", "-m", "start"],
        cwd=path,
        check=True,
        env=ENV,
    )
    return path


def board(repo: Path, url: str | None, agent: str) -> Board:
    from git_lacunari.repo import discover

    where = discover(repo)
    return Board(open_store(url, where.common_dir, create=True), Identity(agent, "b", (), "b"))


@contextmanager
def pg_board(dsn: str, backend: str) -> Iterator[str | None]:
    """A fresh PostgreSQL schema as a board URL (None: the embedded board)."""
    if backend == "sqlite":
        yield None
        return
    import psycopg

    schema = "lac_scale_" + uuid.uuid4().hex[:8]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in dsn else "?"
    try:
        yield f"{dsn}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


# --- 1. the grant ------------------------------------------------------------------


def small_claim(repo: Path, url: str | None, start: float, out: mp.Queue[float | str]) -> None:
    try:
        os.chdir(repo)
        me = board(repo, url, "small")
        task = me.add_task("small", writes=["elsewhere/x.py"])
        while time.time() < start:
            time.sleep(0.001)
        began = time.perf_counter()
        me.claim(task.id)
        out.put(time.perf_counter() - began)
    except Exception as exc:  # reported, never a hung parent
        out.put(f"failed: {exc}")


def grant(url: str | None, n: int, globs: bool = False) -> tuple[float, float | str]:
    """The claim of a task declaring ``n`` paths beside ``n`` held in the same
    directory (``globs``: ``n`` glob patterns beside ``n`` held globs, all of
    one index key, so only the literal-head index keeps them apart)."""
    repo = empty_repo()
    os.chdir(repo)
    holder, big = board(repo, url, "holder"), board(repo, url, "big")
    if globs:
        held = [f"dir/held-{i}-*.py" if i % 2 else f"dir/held-{i}/**" for i in range(n)]
        wanted = [f"dir/wanted-{i}-*.py" if i % 2 else f"dir/wanted-{i}/**/*.c" for i in range(n)]
    else:
        held = [f"dir/held-{i}.py" for i in range(n)]
        wanted = [f"dir/wanted-{i}.py" for i in range(n)]
    holder.lock(held)
    task = big.add_task("big", writes=wanted)
    out: mp.Queue[float | str] = FORK.Queue()
    start = time.time() + 0.3
    proc = FORK.Process(target=small_claim, args=(repo, url, start + 0.05, out))
    proc.start()
    while time.time() < start:
        time.sleep(0.001)
    began = time.perf_counter()
    got = big.claim(task.id)
    took = time.perf_counter() - began
    assert len(got.locks) == n
    small = out.get(timeout=120)
    proc.join()
    return took, small


# --- 2. the listings -----------------------------------------------------------------


def task_rows(count: int, now: float) -> Iterator[tuple[Any, ...]]:
    for i in range(1, count + 1):
        k = i % 200
        state = (
            "claimed"
            if k == 0
            else "open"
            if k % 20 == 1
            else "cancelled"
            if k % 20 == 2
            else "done"
        )
        owner = f"agent{i % 50}" if state in ("claimed", "done") else None
        beat = now if state == "claimed" else None
        lane = ("default", "build", "docs")[i % 3]
        yield (i, f"task {i}", lane, i % 5, state, owner, beat, beat, 1800.0, now - count + i)


def event_rows(count: int, now: float) -> Iterator[tuple[Any, ...]]:
    for i in range(1, count + 1):
        for kind in ("created", "claimed", "done"):
            yield (now - count + i, i, f"agent{i % 50}", kind, "{}")


TASK_COLUMNS = (
    "id, title, lane, priority, state, owner, claimed_at, heartbeat_at, stale_after, "
    "created_at, created_by"
)


def fill_tasks(repo: Path, url: str | None, count: int) -> None:
    subprocess.run(
        [GIT_LAC, "init", *(["--url", url] if url else [])],
        cwd=repo,
        env=ENV,
        check=True,
        capture_output=True,
    )
    now = time.time()
    tasks = ((*r, "bench") for r in task_rows(count, now))
    if url is None:
        conn = sqlite3.connect(repo / ".git" / "lacunari" / "board.db")
        conn.executemany(
            f"INSERT INTO lac_tasks ({TASK_COLUMNS}) VALUES ({','.join('?' * 11)})", tasks
        )
        conn.executemany(
            "INSERT INTO lac_events (at, task_id, agent, kind, detail) VALUES (?, ?, ?, ?, ?)",
            event_rows(count, now),
        )
        conn.commit()
        conn.execute("ANALYZE")
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        with cur.copy(f"COPY lac_tasks ({TASK_COLUMNS}) FROM STDIN") as copy:
            for row in tasks:
                copy.write_row(row)
        with cur.copy("COPY lac_events (at, task_id, agent, kind, detail) FROM STDIN") as copy:
            for row in event_rows(count, now):
                copy.write_row(row)
        cur.execute("SELECT setval('lac_tasks_id_seq', %s)", (count,))
        cur.execute("VACUUM ANALYZE lac_tasks")
        cur.execute("VACUUM ANALYZE lac_events")


def run_command(repo: Path, *args: str) -> float:
    began = time.perf_counter()
    proc = subprocess.run([GIT_LAC, *args], cwd=repo, env=ENV, capture_output=True)
    took = time.perf_counter() - began
    if proc.returncode != 0:
        raise SystemExit(f"git-lac {' '.join(args)} failed: {proc.stderr.decode()}")
    return took


def core_call(call: Callable[[], object]) -> float:
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


def plans(repo: Path, url: str | None) -> list[str]:
    """The query plans of the default listings (the first lines of each)."""
    me = board(repo, url, "bench")
    store: Any = me.store
    found = []
    for name, params in (
        ("live_tasks_page", {"limit": 50, "lane": None, "owner": None}),
        ("live_tasks_more", {"after": 0, "cap": 10001, "lane": None, "owner": None}),
        ("events_page", {"limit": 50}),
        ("events_more", {"before": 10**9, "cap": 10001}),
    ):
        sql = store.queries[name]
        if url is None:
            rows = store.conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
            shown = "; ".join(r["detail"] for r in rows)
        else:
            rows = store.conn.execute("EXPLAIN " + sql, params).fetchall()
            shown = "; ".join(r["QUERY PLAN"].strip() for r in rows[:4])
        found.append(f"    {name}: {shown}")
    store.close()
    return found


def listings(
    backend: str, url_small: str | None, url_big: str | None, args: argparse.Namespace
) -> None:
    sizes = {"small": args.small_tasks, "big": args.tasks}
    repos = {"small": empty_repo(), "big": empty_repo()}
    urls = {"small": url_small, "big": url_big}
    for size, repo in repos.items():
        fill_tasks(repo, urls[size], sizes[size])
    boards = {size: board(repos[size], urls[size], "bench") for size in repos}
    times: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(args.runs):
        for size, repo in repos.items():
            for verb in ("tasks", "log"):
                times.setdefault((verb, "command", size), []).append(run_command(repo, verb))
            me = boards[size]
            times.setdefault(("tasks", "core", size), []).append(
                core_call(lambda me=me: me.task_page(limit=50))
            )
            times.setdefault(("log", "core", size), []).append(
                core_call(lambda me=me: me.log_page(limit=50))
            )
    for verb in ("tasks", "log"):
        for how in ("command", "core"):
            small = median_ms(times[(verb, how, "small")])
            big = median_ms(times[(verb, how, "big")])
            target = " (target <= 2x" + (", < 300 ms" if backend == "sqlite" else "") + ")"
            print(
                f"{backend:<8} {verb:<5} {how:<8} {sizes['small']:>7,} tasks {small:7.1f} ms   "
                f"{sizes['big']:>7,} tasks {big:7.1f} ms   {big / small:5.2f}x{target}",
                flush=True,
            )
    page = boards["big"].task_page(limit=50)
    print(
        f"{backend:<8} default page at {sizes['big']:,} tasks: "
        f"{len(page.items)} shown, {page.more:,} more"
    )
    for board_ in boards.values():
        board_.store.close()
    for line in plans(repos["big"], urls["big"]):
        print(line)


# --- 3. the hook ---------------------------------------------------------------------


def hook_lock_rows(count: int) -> Iterator[tuple[str, str, str, str, float]]:
    # The first 100 beside the staged paths (src/mod*/ holds them; none
    # covers a staged file), the rest in 999 other directories.
    for k in range(count):
        if k < 100:
            pattern = f"src/mod{k % 50}/held{k}.py"
        else:
            pattern = f"other/area{k // 100}/f{k}.py" if k % 100 else f"other/area{k // 100}/*.py"
        yield (pattern, index_key(pattern), "w", f"agent{k % 97}", time.time())


def fill_locks(repo: Path, url: str | None, count: int) -> None:
    subprocess.run(
        [GIT_LAC, "init", *(["--url", url] if url else [])],
        cwd=repo,
        env=ENV,
        check=True,
        capture_output=True,
    )
    sql = "INSERT INTO lac_locks (pattern, key, mode, agent, acquired_at) VALUES (?, ?, ?, ?, ?)"
    if url is None:
        conn = sqlite3.connect(repo / ".git" / "lacunari" / "board.db")
        conn.executemany(sql, hook_lock_rows(count))
        conn.commit()
        conn.execute("ANALYZE")
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        with cur.copy("COPY lac_locks (pattern, key, mode, agent, acquired_at) FROM STDIN") as copy:
            for row in hook_lock_rows(count):
                copy.write_row(row)
        cur.execute("VACUUM ANALYZE lac_locks")


def hook(
    backend: str, url_small: str | None, url_big: str | None, args: argparse.Namespace
) -> None:
    counts = {"small": args.small_locks, "big": args.locks}
    repos = {"small": make_repo(args.staged), "big": make_repo(args.staged)}
    urls = {"small": url_small, "big": url_big}
    for size, repo in repos.items():
        fill_locks(repo, urls[size], counts[size])
        subprocess.run(
            [GIT_LAC, "hooks", "install"], cwd=repo, env=ENV, check=True, capture_output=True
        )
    samples: dict[str, list[float]] = {"small": [], "big": []}
    for repo in repos.values():  # warm the caches once
        run_hook(repo)
    for _ in range(args.runs):
        for size, repo in repos.items():
            samples[size].append(run_hook(repo))
    small, big = median_ms(samples["small"]), median_ms(samples["big"])
    print(
        f"{backend:<8} pre-commit hook, {args.staged:,} staged: {counts['small']:>7,} locks "
        f"{small:7.1f} ms   {counts['big']:>7,} locks {big:7.1f} ms   {big / small:5.2f}x "
        "(target <= 1.3x)",
        flush=True,
    )


def run_hook(repo: Path) -> float:
    began = time.perf_counter()
    proc = subprocess.run(
        [str(repo / ".git" / "hooks" / "pre-commit")], cwd=repo, env=ENV, capture_output=True
    )
    took = time.perf_counter() - began
    if proc.returncode != 0:
        raise SystemExit(f"the hook refused: {proc.stderr.decode()}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--small-tasks", type=int, default=1000)
    parser.add_argument("--locks", type=int, default=100_000)
    parser.add_argument("--small-locks", type=int, default=100)
    parser.add_argument("--staged", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--globs", type=int, default=1000)
    parser.add_argument(
        "--parts", default="grant,globs,listings,hook", help="which figures, comma-separated"
    )
    args = parser.parse_args()
    print(f"bench/scale.py, medians of {args.runs} runs; load {os.getloadavg()[0]:.1f}")
    parts = set(args.parts.split(","))
    for backend in args.backends.split(","):
        if "grant" in parts:
            with pg_board(args.dsn, backend) as url:
                took, small = grant(url, args.paths)
            print(
                f"{backend:<8} claim of {args.paths:,} paths against {args.paths:,} held in one "
                f"directory: {took:.3f}s (target < 1 s); a small claim meanwhile: "
                f"{small if isinstance(small, str) else f'{small:.3f}s'} (target < 0.5 s)",
                flush=True,
            )
        if "globs" in parts:
            with pg_board(args.dsn, backend) as url:
                took, small = grant(url, args.globs, globs=True)
            print(
                f"{backend:<8} claim of {args.globs:,} globs against {args.globs:,} held globs "
                f"in one directory: {took:.3f}s (target < 1 s); a small claim meanwhile: "
                f"{small if isinstance(small, str) else f'{small:.3f}s'} (target < 0.5 s)",
                flush=True,
            )
        if "listings" in parts:
            with pg_board(args.dsn, backend) as small_url, pg_board(args.dsn, backend) as big_url:
                listings(backend, small_url, big_url, args)
        if "hook" in parts:
            with pg_board(args.dsn, backend) as small_url, pg_board(args.dsn, backend) as big_url:
                hook(backend, small_url, big_url, args)
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
