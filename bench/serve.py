"""What 10 open pages cost a drain, on both backends, in one run; and with
--memory, what 400 stalled pages cost the server's memory.

    python bench/serve.py [--tasks 1000] [--pages 10] [--rounds 3] [--dsn postgresql://…]
    python bench/serve.py --memory [--tasks 3000] [--stalled 400]

A real `git lac drain --lane L -- true` works a lane of --tasks tasks, timed
wall to wall, alternately with no server at all and with `git lac serve`
running and --pages streaming clients reading its server-sent events (plain
HTTP clients in another process: what a browser does with the stream, without
a browser). Each configuration runs --rounds times, interleaved, and the
median is compared (target: the pages add at most 10 %). The
snapshots each page received are counted, to show the pages were live.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing as mp
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_lacunari.board import Board  # noqa: E402
from git_lacunari.identity import Identity  # noqa: E402
from git_lacunari.store import open_store  # noqa: E402

BIN = Path(sys.executable).parent
FORK = mp.get_context("fork")
DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "LAC_"))}
    env.update(GIT_CONFIG_NOSYSTEM="1", LAC_AGENT="bench-drainer")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def make_repo(url: str | None) -> Path:
    path = Path(tempfile.mkdtemp(prefix="lac-serve-bench-"))
    env = git_env()
    subprocess.run(["git", "init", "-q"], cwd=path, check=True, env=env)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q"]
        + ["--allow-empty", "-m", "start"],
        cwd=path,
        check=True,
        env=env,
    )
    init = ["git", "lac", "init"] + (["--url", url] if url else [])
    subprocess.run(init, cwd=path, check=True, env=env, capture_output=True)
    return path


def fill(repo: Path, url: str | None, lane: str, n: int) -> None:
    from git_lacunari.repo import discover

    store = open_store(url, discover(repo).common_dir)
    board = Board(store, Identity("bench", "b", (), "b"))
    for i in range(n):
        board.add_task(f"{lane} task {i}", lane=lane, writes=[f"{lane}/file-{i % 50}.py"])
    store.close()


def drain(repo: Path, lane: str) -> float:
    began = time.perf_counter()
    subprocess.run(
        ["git", "lac", "drain", "--lane", lane, "--", "true"],
        cwd=repo,
        check=True,
        env=git_env(),
        capture_output=True,
    )
    return time.perf_counter() - began


def read_stream(url: str, counts: list[int], i: int, stop: threading.Event) -> None:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("GET", "/api/events", headers={"Accept": "text/event-stream"})
    response = conn.getresponse()
    while not stop.is_set():
        line = response.readline()
        if not line:
            break
        if line.startswith(b"event: snapshot"):
            counts[i] += 1
    conn.close()


def pages(url: str, n: int, out: mp.Queue[list[int]], stop: mp.Event) -> None:  # type: ignore[type-arg]
    counts = [0] * n
    halt = threading.Event()
    threads = [
        threading.Thread(target=read_stream, args=(url, counts, i, halt), daemon=True)
        for i in range(n)
    ]
    for t in threads:
        t.start()
    stop.wait()
    halt.set()
    out.put(counts)


def start_server(repo: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [str(BIN / "git-lac"), "serve", "--port", "0"],
        cwd=repo,
        env=git_env(),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if not line.startswith("git lac serve: http"):
        raise SystemExit(f"the server did not start: {line}{proc.stderr.read()}")
    return proc, line.split()[3]


def with_pages(repo: Path, lane: str, n_pages: int) -> tuple[float, list[int]]:
    server, url = start_server(repo)
    out: mp.Queue[list[int]] = FORK.Queue()
    stop = FORK.Event()
    clients = FORK.Process(target=pages, args=(url, n_pages, out, stop))
    clients.start()
    time.sleep(1.0)  # every page connected and has its first snapshot
    try:
        took = drain(repo, lane)
        time.sleep(0.5)  # the last snapshot reaches the pages
    finally:
        stop.set()
        counts = out.get(timeout=30)
        clients.join(10)
        os.killpg(server.pid, signal.SIGINT)
        server.wait(10)
    return took, counts


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no VmRSS for {pid}")


def stalled_page(host: str, port: int) -> socket.socket:
    """A page that asks for the stream and then never reads: a small receive
    buffer, so the server is left holding what it cannot send."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, port))
    sock.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return sock


def memory(name: str, url: str | None, args: argparse.Namespace) -> None:
    """Resident memory of one server at --tasks tasks: with no page, with
    --stalled pages that stopped reading (while the board changes, so newer
    snapshots are published), and after they are gone (target:
    less than 50 MB added, and given back)."""
    repo = make_repo(url)
    fill(repo, url, "m", args.tasks)
    proc = subprocess.Popen(
        [str(BIN / "git-lac"), "serve", "--port", "0", "--max-clients", str(args.stalled + 10)],
        cwd=repo,
        env=git_env(),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if not line.startswith("git lac serve: http"):
        raise SystemExit(f"the server did not start: {line}{proc.stderr.read()}")
    parts = urlsplit(line.split()[3])
    host, port = str(parts.hostname), int(parts.port or 0)

    def snapshot_size() -> int:
        conn = http.client.HTTPConnection(host, port, timeout=30)
        conn.request("GET", "/api/snapshot")
        size = len(conn.getresponse().read())
        conn.close()
        return size

    def change(n: int) -> None:
        for i in range(n):
            subprocess.run(
                ["git", "lac", "task", "add", f"change {i}"],
                cwd=repo,
                env=git_env(),
                check=True,
                capture_output=True,
            )
            time.sleep(1.0)

    try:
        size = snapshot_size()
        for _ in range(5):  # warm: the stream's code has run once, as below
            with socket.create_connection((host, port)) as warm:
                warm.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                received = 0
                while received < size:
                    received += len(warm.recv(1 << 20))
        change(3)  # the server has published a few snapshots, as it will below
        time.sleep(2)
        none = rss_mb(proc.pid)
        peak = [none]
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.wait(0.1):
                peak.append(rss_mb(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        pages = [stalled_page(host, port) for _ in range(args.stalled)]
        time.sleep(3)  # each has its first snapshot started and stalled
        stalled = rss_mb(proc.pid)
        change(3)  # newer snapshots: every stalled page is now behind
        time.sleep(4)  # past the feed's BEHIND_S: the stalled pages are dropped
        sampling.set()
        sampler.join()
        high = max(peak)
        peak_note = f"; peak {high:.1f} MB ({high - none:+.1f} MB) while the board changed"
        for sock in pages:
            sock.close()
        time.sleep(3)
        after = rss_mb(proc.pid)
        print(
            f"{name:<8} resident memory at {args.tasks} tasks (snapshot {size / 1e6:.1f} MB): "
            f"{none:.1f} MB with no page, {stalled:.1f} MB with {args.stalled} stalled pages "
            f"({stalled - none:+.1f} MB, target < +50 MB), {after:.1f} MB once they are gone "
            f"({after - none:+.1f} MB){peak_note}"
        )
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(10)


def measure(name: str, url: str | None, args: argparse.Namespace) -> None:
    repo = make_repo(url)
    bare: list[float] = []
    served: list[float] = []
    received: list[int] = []
    for r in range(args.rounds):
        for mode in ("bare", "pages") if r % 2 == 0 else ("pages", "bare"):
            lane = f"l{r}{mode}"
            fill(repo, url, lane, args.tasks)
            if mode == "bare":
                bare.append(drain(repo, lane))
            else:
                took, counts = with_pages(repo, lane, args.pages)
                served.append(took)
                received.extend(counts)
    base, loaded = statistics.median(bare), statistics.median(served)
    print(
        f"{name:<8} drain of {args.tasks} tasks: {base:.2f}s without pages, "
        f"{loaded:.2f}s with {args.pages} open pages: {100 * (loaded / base - 1):+.1f}% "
        f"(target <= +10%); medians of {args.rounds}, runs bare "
        f"{' '.join(f'{t:.2f}' for t in bare)}, with pages {' '.join(f'{t:.2f}' for t in served)}; "
        f"snapshots per page {min(received)}-{max(received)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory", action="store_true", help="stalled pages vs memory")
    parser.add_argument("--stalled", type=int, default=400)
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    args = parser.parse_args()
    if args.tasks is None:
        args.tasks = 3000 if args.memory else 1000
    import psycopg

    schema = "lac_serve_bench_" + uuid.uuid4().hex[:8]
    sep = "&" if "?" in args.dsn else "?"
    pg_url = f"{args.dsn}{sep}options={quote(f'-csearch_path={schema}')}"
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        for name, url in (("sqlite", None), ("postgres", pg_url)):
            if args.backend in (name, "both"):
                (memory if args.memory else measure)(name, url, args)
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


if __name__ == "__main__":
    main()
