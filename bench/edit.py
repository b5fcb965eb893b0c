"""The agent harness hook, `git lac guard edit`, beside a bare `python -c pass`, in one run.

    python bench/edit.py [--runs N] [--locks 100000] [--dsn postgresql://…]
                         [--backends sqlite,postgres]

An agent harness runs the hook before every tool call, so its whole-process
time is what an agent pays. The board holds N write locks of 97 other agents
(files, and a glob per hundred, in other directories); the agent holds a
claim declaring ``src/``, so every edit is allowed after the full check (the
common case). Rows: 1 path (a Claude Code ``PreToolUse`` payload for
``Write``) and 50 paths (the generic ``{"paths": [...]}`` payload), with the
resident helper (the default: the first hook starts it) and without it
(``LAC_EDIT_HELPER=off``: each hook opens the board itself). Each cell is the
median wall time of the real `git-lac` process fed the payload on stdin,
measured in the same loop as `python -c pass` of the same interpreter.

Targets: SQLite, 1 path, at most 2.5x `python -c pass`;
PostgreSQL under 150 ms.
"""

from __future__ import annotations

import argparse
import json
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
BIN = Path(sys.executable).parent
LAC = str(BIN / "git-lac")
# Timed as an installed copy runs: with its bytecode cached (pip compiles it
# at install time; this environment may have PYTHONDONTWRITEBYTECODE set).
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PATH": str(BIN) + os.pathsep + os.environ["PATH"],
    "GIT_CONFIG_NOSYSTEM": "1",
    "LAC_AGENT": "editor",
}


def run(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        list(args), cwd=repo, env=env or ENV, check=False, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"{args} failed: {proc.stderr}")
    return proc.stdout


def make_repo() -> Path:
    repo = Path(tempfile.mkdtemp(prefix="lac-edit-bench-"))
    run(repo, "git", "init", "-q")
    run(repo, "git", "config", "user.email", "bench@example.com")
    run(repo, "git", "config", "user.name", "bench")
    for n in range(50):
        path = repo / "src" / f"mod{n % 5}" / f"file{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"value = {n}\n")
    run(repo, "git", "add", ".")
    run(repo, "git", "commit", "-qm", "start")
    return repo


def lock_rows(count: int) -> list[tuple[str, str, str, str, float]]:
    rows = []
    for k in range(count):
        pattern = f"other/area{k // 100}/*.py" if k % 100 == 0 else f"other/area{k // 100}/f{k}.py"
        rows.append((pattern, index_key(pattern), "w", f"agent{k % 97}", 0.0))
    return rows


def fill(repo: Path, url: str | None, count: int) -> None:
    """The board: ``count`` foreign locks, and our claim of a task declaring src/."""
    run(repo, LAC, "init", *(["--url", url] if url else []))
    if url is None:
        import sqlite3

        conn = sqlite3.connect(repo / ".git" / "lacunari" / "board.db")
        conn.execute("DELETE FROM lac_locks")
        conn.executemany(
            "INSERT INTO lac_locks (pattern, key, mode, agent, acquired_at) VALUES (?, ?, ?, ?, ?)",
            lock_rows(count),
        )
        conn.commit()
        conn.execute("ANALYZE")
        conn.close()
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DELETE FROM lac_locks")
            with (
                conn.cursor() as cur,
                cur.copy(
                    "COPY lac_locks (pattern, key, mode, agent, acquired_at) FROM STDIN"
                ) as copy,
            ):
                for row in lock_rows(count):
                    copy.write_row(row)
            conn.execute("ANALYZE lac_locks")
    task = run(repo, LAC, "task", "add", "bench", "--write", "src/", "--json")
    run(repo, LAC, "claim", str(json.loads(task)["task"]["id"]))


def payloads(repo: Path) -> dict[int, str]:
    files = sorted(str(p) for p in (repo / "src").rglob("*.py"))
    one = {
        "session_id": "bench",
        "transcript_path": "/dev/null",
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": files[0], "content": "value = 0\n"},
        "tool_use_id": "toolu_bench",
    }
    return {1: json.dumps(one), 50: json.dumps({"paths": files[:50], "cwd": str(repo)})}


def timed(cmd: list[str], repo: Path, stdin: str | None, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=repo, env=env, input=stdin, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0 or "deny" in proc.stdout:
        raise SystemExit(f"{cmd} did not allow: {proc.returncode} {proc.stdout} {proc.stderr}")
    return elapsed


def wait_for_helper(repo: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if list((repo / ".git" / "lacunari").glob("edit-*.sock")):
            return
        time.sleep(0.1)
    raise SystemExit("the helper did not start")


def stop_helpers(repo: Path) -> None:
    for sock in (repo / ".git" / "lacunari").glob("edit-*.sock"):
        sock.unlink()  # a helper whose socket is gone leaves within a second
    time.sleep(1.5)


def measure(repo: Path, runs: int) -> list[tuple[int, str, float, float]]:
    rows = []
    bare = [sys.executable, "-c", "pass"]
    for count, payload in payloads(repo).items():
        for mode in ("helper", "in-process"):
            env = dict(ENV) if mode == "helper" else {**ENV, "LAC_EDIT_HELPER": "off"}
            cmd = [LAC, "guard", "edit"]
            timed(cmd, repo, payload, env)  # warm caches (and start the helper)
            if mode == "helper":
                wait_for_helper(repo)
                timed(cmd, repo, payload, env)
            hooks, passes = [], []
            for _ in range(runs):
                hooks.append(timed(cmd, repo, payload, env))
                passes.append(timed(bare, repo, None, env))
            rows.append((count, mode, statistics.median(hooks), statistics.median(passes)))
            if mode == "helper":
                stop_helpers(repo)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--locks", type=int, default=100_000)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    print(
        f"git lac guard edit, {args.locks:,} foreign locks held, median of {args.runs} runs "
        "(python -c pass measured beside it)"
    )
    print(f"{'backend':<9} {'paths':>5} {'mode':<11} {'hook ms':>8} {'pass ms':>8} {'ratio':>6}")
    for backend in args.backends.split(","):
        repo = make_repo()
        url = None
        schema = "lac_ebench_" + uuid.uuid4().hex[:8]
        if backend == "postgres":
            import psycopg

            with psycopg.connect(args.dsn, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA "{schema}"')
            sep = "&" if "?" in args.dsn else "?"
            url = f"{args.dsn}{sep}options={quote(f'-csearch_path={schema}')}"
        try:
            fill(repo, url, args.locks)
            for count, mode, hook_ms, pass_ms in measure(repo, args.runs):
                print(
                    f"{backend:<9} {count:>5} {mode:<11} {hook_ms:>8.1f} {pass_ms:>8.1f} "
                    f"{hook_ms / pass_ms:>5.2f}x",
                    flush=True,
                )
        finally:
            stop_helpers(repo)
            if url is not None:
                import psycopg

                with psycopg.connect(args.dsn, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


if __name__ == "__main__":
    main()
