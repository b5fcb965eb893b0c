"""The grant path at scale, on both backends, in one run.

    python bench/scale.py [--paths N] [--dsn postgresql://…]

A claim of a task declaring N paths while another agent holds N other paths
in the same directory (issue 12's target: under 1 s at N=2,000), and a small
claim made from another process while the big one is granted (under 0.5 s).
The listing figures of issue 12 (tasks/log at 100,000 tasks, the hook at
100,000 locks) are not measured here yet.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_lacunari.board import Board  # noqa: E402
from git_lacunari.identity import Identity  # noqa: E402
from git_lacunari.store import open_store  # noqa: E402

FORK = mp.get_context("fork")
DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def make_repo() -> Path:
    path = Path(tempfile.mkdtemp(prefix="lac-scale-"))
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=path, check=True, env=env)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@x",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "start",
        ],
        cwd=path,
        check=True,
        env=env,
    )
    return path


def board(repo: Path, url: str | None, agent: str) -> Board:
    from git_lacunari.repo import discover

    where = discover(repo)
    return Board(open_store(url, where.common_dir, create=True), Identity(agent, "b", (), "b"))


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


def measure(url: str | None, n: int) -> tuple[float, float | str]:
    repo = make_repo()
    os.chdir(repo)
    holder, big = board(repo, url, "holder"), board(repo, url, "big")
    holder.lock([f"dir/held-{i}.py" for i in range(n)])
    task = big.add_task("big", writes=[f"dir/wanted-{i}.py" for i in range(n)])
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--paths", type=int, default=2000)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    args = parser.parse_args()
    import psycopg

    schema = "lac_scale_" + uuid.uuid4().hex[:8]
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in args.dsn else "?"
    pg_url = f"{args.dsn}{sep}options={quote(f'-csearch_path={schema}')}"
    try:
        for name, url in (("sqlite", None), ("postgres", pg_url)):
            took, small = measure(url, args.paths)
            print(
                f"{name:<8} claim of {args.paths} paths against {args.paths} held in one "
                f"directory: {took:.3f}s (target < 1 s); a small claim meanwhile: "
                f"{small if isinstance(small, str) else f'{small:.3f}s'} (target < 0.5 s)"
            )
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


if __name__ == "__main__":
    main()
