"""The whole pre-commit hook with 1,000 staged paths, against many locks, in one run;
then the server's pre-receive hook.

    python bench/guard.py [--runs N] [--locks 100,10000,100000] [--dsn postgresql://…]
                          [--server-only | --no-server]

The board holds N locks of another agent, none covering the staged paths
(files, and a glob per hundred, in other directories). Each row is the median
wall time of the installed hook (`.git/hooks/pre-commit`, as git runs it),
beside a bare `git diff --cached --name-only` of the same index measured in
the same loop, and the cost of going from the fewest locks to the most.

The server side, printed in the same run: the installed `hooks/pre-receive`
run as git runs it (in the bare repository, the pushed objects present and
no ref moved, as in git's quarantine) for a push of 1,000 new commits
changing 10,000 paths against 10,000 foreign locks (target: under 2 s on
both backends), beside `git rev-list --count NEW --not --all`; and a
one-commit push into 100,000 commits of history against the same into 100
(ratio at most 1.5x: the guard must not walk old history). Histories are
built with `git fast-import`.
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
from collections.abc import Callable
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
    parser.add_argument("--server-runs", type=int, default=5)
    parser.add_argument("--server-only", action="store_true")
    parser.add_argument("--no-server", action="store_true")
    parser.add_argument("--refusal-only", action="store_true")
    parser.add_argument("--refusal-commits", type=int, default=3000)
    parser.add_argument("--refusal-locks", type=int, default=2000)
    args = parser.parse_args()
    if args.refusal_only:
        refusal_side(args)
        return
    if not args.server_only:
        client_side(args)
    if not args.no_server:
        server_side(args)
        refusal_side(args)


def client_side(args: argparse.Namespace) -> None:
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


# --- the server: pre-receive -------------------------------------------------------

SERVER_LOCKS = 10_000


def fast_import(bare: Path, stream: bytes) -> None:
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done"],
        cwd=bare,
        env=ENV,
        input=stream,
        check=True,
        capture_output=True,
    )


def commit_block(ref: str, mark: int, parent: str | None, files: list[tuple[str, str]]) -> bytes:
    # A commit a second, as real history goes (git's walk relies on dates).
    when = 1_700_000_000 + mark
    lines = [f"commit {ref}", f"mark :{mark}", f"committer bench <b@example.com> {when} +0000"]
    lines += ["data 6", "bench"]
    if parent:
        lines.append(f"from {parent}")
    body = "\n".join(lines) + "\n"
    for path, text in files:
        data = text.encode()
        body += f"M 100644 inline {path}\ndata {len(data)}\n{text}\n"
    return body.encode()


def rev(bare: Path, name: str) -> str:
    out = subprocess.run(
        ["git", "rev-parse", name], cwd=bare, env=ENV, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


def server_repo(history: int, new_commits: int, paths_per_commit: int) -> tuple[Path, str, str]:
    """A bare repository with ``history`` commits on main and, present but on no
    ref (as in git's quarantine), ``new_commits`` more on top of it."""
    bare = Path(tempfile.mkdtemp(prefix="lac-server-bench-")) / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], env=ENV, check=True)
    stream = bytearray()
    for n in range(1, history + 1):
        parent = f":{n - 1}" if n > 1 else None
        stream += commit_block("refs/heads/main", n, parent, [(f"old/f{n % 100}.txt", f"{n}")])
    for k in range(new_commits):
        mark = history + 1 + k
        files = [
            (f"src/mod{(k * paths_per_commit + j) % 50}/file{k * paths_per_commit + j}.py", "v")
            for j in range(paths_per_commit)
        ]
        stream += commit_block("refs/bench/new", mark, f":{mark - 1}", files)
    stream += b"done\n"
    fast_import(bare, bytes(stream))
    old, new = rev(bare, "refs/heads/main"), rev(bare, "refs/bench/new")
    subprocess.run(["git", "update-ref", "-d", "refs/bench/new"], cwd=bare, env=ENV, check=True)
    subprocess.run(
        ["git", "lac", "hooks", "install", "--server"],
        cwd=bare,
        env=ENV,
        check=True,
        capture_output=True,
    )
    return bare, old, new


Timer = Callable[[], tuple[float, float]]


def receive_timer(bare: Path, old: str, new: str) -> Timer:
    """One timed run of the hook as git runs it, and of the bare rev-list beside it."""
    hook = str(bare / "hooks" / "pre-receive")
    line = f"{old} {new} refs/heads/main\n".encode()
    env = {**ENV, "GIT_DIR": "."}

    def once(cmd: list[str], stdin: bytes | None) -> float:
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=bare, env=env, input=stdin, capture_output=True)
        elapsed = (time.perf_counter() - start) * 1000
        if proc.returncode != 0:
            raise SystemExit(f"{cmd} failed: {proc.stderr.decode()}")
        return elapsed

    def run() -> tuple[float, float]:
        return once([hook], line), once(["git", "rev-list", "--count", new, "--not", "--all"], None)

    run()  # warm caches once
    return run


def medians(
    timers: list[Callable[[], tuple[float, float]]], runs: int
) -> list[tuple[float, float]]:
    """Each timer's median (hook, rev-list), the timers taking turns so that
    a noisy neighbour slows them alike."""
    seen: list[list[tuple[float, float]]] = [[] for _ in timers]
    for _ in range(runs):
        for i, timer in enumerate(timers):
            seen[i].append(timer())
    return [(statistics.median(h for h, _ in s), statistics.median(w for _, w in s)) for s in seen]


def server_board(args: argparse.Namespace, backend: str, board_repo: Path) -> str:
    """A board with SERVER_LOCKS foreign locks; its URL for the server's lac.url."""
    if backend == "sqlite":
        fill_sqlite(board_repo, SERVER_LOCKS)
        return f"sqlite://{board_repo / '.git' / 'lacunari' / 'board.db'}"
    import psycopg

    schema = "lac_gbench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in args.dsn else "?"
    url = f"{args.dsn}{sep}options={quote(f'-csearch_path={schema}')}"
    fill_postgres(board_repo, url, SERVER_LOCKS)
    return url


def server_side(args: argparse.Namespace) -> None:
    runs = args.server_runs
    print(
        f"\npre-receive hook, {SERVER_LOCKS} foreign locks, median of {runs} runs "
        f"({max(runs, 21)} for the history pair, taking turns); rev-list: "
        "`git rev-list --count NEW --not --all` in the same loop"
    )
    big = server_repo(history=1, new_commits=1000, paths_per_commit=10)
    deep = server_repo(history=100_000, new_commits=1, paths_per_commit=1)
    shallow = server_repo(history=100, new_commits=1, paths_per_commit=1)
    board_repo = make_repo(1)
    git(board_repo, "commit", "-qm", "board home")
    print(f"{'backend':<9} {'push':<40} {'hook ms':>8} {'rev-list ms':>12} {'note':>14}")
    for backend in args.backends.split(","):
        url = server_board(args, backend, board_repo)
        try:
            for bare, _, _ in (big, deep, shallow):
                git(bare, "config", "lac.url", url)
            [(big_ms, big_walk)] = medians([receive_timer(*big)], runs)
            verdict = "ok" if big_ms < 2000 else "OVER 2 s"
            print(
                f"{backend:<9} {'1,000 commits, 10,000 paths':<40} {big_ms:>8.1f} "
                f"{big_walk:>12.1f} {verdict:>14}",
                flush=True,
            )
            [(deep_ms, deep_walk), (shallow_ms, shallow_walk)] = medians(
                [receive_timer(*deep), receive_timer(*shallow)], max(runs, 21)
            )
            ratio = deep_ms / shallow_ms
            print(
                f"{backend:<9} {'1 commit onto 100 commits of history':<40} {shallow_ms:>8.1f} "
                f"{shallow_walk:>12.1f} {'':>14}"
            )
            print(
                f"{backend:<9} {'1 commit onto 100,000 commits of history':<40} {deep_ms:>8.1f} "
                f"{deep_walk:>12.1f} {f'{ratio:.2f}x of 100':>14}",
                flush=True,
            )
        finally:
            if backend == "postgres":
                import psycopg

                schema = url.rsplit("search_path%3D", 1)[-1]
                with psycopg.connect(args.dsn, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def refusal_board(
    args: argparse.Namespace,
    backend: str,
    board_repo: Path,
    rows: list[tuple[str, str, str, str, float]],
) -> str:
    """A board holding exactly ``rows``; its URL for the server's lac.url."""
    if backend == "sqlite":
        import sqlite3

        subprocess.run(["git", "lac", "init"], cwd=board_repo, env=ENV, check=True)
        db = board_repo / ".git" / "lacunari" / "board.db"
        conn = sqlite3.connect(db)
        conn.execute("DELETE FROM lac_locks")
        conn.executemany(
            "INSERT INTO lac_locks (pattern, key, mode, agent, acquired_at) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        conn.commit()
        conn.close()
        return f"sqlite://{db}"
    import psycopg

    schema = "lac_gbench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in args.dsn else "?"
    url = f"{args.dsn}{sep}options={quote(f'-csearch_path={schema}')}"
    subprocess.run(["git", "lac", "init", "--url", url], cwd=board_repo, env=ENV, check=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM lac_locks")
        with (
            conn.cursor() as cur,
            cur.copy("COPY lac_locks (pattern, key, mode, agent, acquired_at) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
        conn.execute("ANALYZE lac_locks")
    return url


def refusal_side(args: argparse.Namespace) -> None:
    """Refusals as cheap as acceptance: the pre-receive hook on a
    push of --refusal-commits commits (one path each) while --refusal-locks of
    those paths are write-locked by agent "holder" (and one glob per hundred
    beside them), refused (the pusher is someone else) against accepted (the
    pusher is the holder, `-o lac.agent=holder`), taking turns. The same push,
    the same board, the same locks found: only the verdict differs."""
    commits, held = args.refusal_commits, args.refusal_locks
    bare, old, new = server_repo(history=1, new_commits=commits, paths_per_commit=1)
    rows = [
        (f"src/mod{k % 50}/file{k}.py", f"src/mod{k % 50}/", "w", "holder", 0.0)
        for k in range(held)
    ]
    rows += [(f"src/mod{k}/x*.txt", f"src/mod{k}/", "w", "holder", 0.0) for k in range(0, 50, 2)]
    hook = str(bare / "hooks" / "pre-receive")
    line = f"{old} {new} refs/heads/main\n".encode()

    def once(pusher: str) -> float:
        env = {
            **ENV,
            "GIT_DIR": ".",
            "GIT_PUSH_OPTION_COUNT": "1",
            "GIT_PUSH_OPTION_0": f"lac.agent={pusher}",
        }
        start = time.perf_counter()
        proc = subprocess.run([hook], cwd=bare, env=env, input=line, capture_output=True)
        elapsed = (time.perf_counter() - start) * 1000
        refused = proc.returncode != 0
        if refused != (pusher != "holder"):
            raise SystemExit(
                f"pusher {pusher}: unexpected exit {proc.returncode}: {proc.stderr.decode()[-500:]}"
            )
        return elapsed

    print(
        f"\npre-receive, {commits:,} commits against {held:,} held paths (+25 globs); "
        f"median of {args.server_runs}, taking turns"
    )
    for backend in args.backends.split(","):
        board_repo = make_repo(1)
        git(board_repo, "commit", "-qm", "board home")
        url = refusal_board(args, backend, board_repo, rows)
        try:
            git(bare, "config", "lac.url", url)
            once("holder"), once("someone")  # warm caches
            accepted, refused = [], []
            for _ in range(args.server_runs):
                accepted.append(once("holder"))
                refused.append(once("someone"))
            a, r = statistics.median(accepted), statistics.median(refused)
            verdict = "ok" if r <= 1.5 * a else "OVER 1.5x"
            print(
                f"{backend:<9} accepted {a:8.1f} ms  refused {r:8.1f} ms  "
                f"({r / a:.2f}x; target <= 1.5x) {verdict}",
                flush=True,
            )
        finally:
            if backend == "postgres":
                import psycopg

                schema = url.rsplit("search_path%3D", 1)[-1]
                with psycopg.connect(args.dsn, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


if __name__ == "__main__":
    main()
