"""A fleet under fire: drainers over lanes, some killed with SIGKILL, a keeper.

    python bench/fleet.py [--tasks 1000] [--drainers 16] [--lanes 4] [--kill 0.10]
                          [--backends sqlite,postgres]
    python bench/fleet.py --pgbouncer [--claimers 200] [--direct 20] [--tasks 2000]

--pgbouncer: a private throwaway PostgreSQL cluster with
max_connections 50 (the shared server is never touched), a real PgBouncer in
transaction pooling mode in front of it (tests/pgbouncer.py), and --claimers
claimer processes through it with lac.pooler = transaction: each claims the
next task (one write path of --pool shared ones), records when it held the
path, and marks it done, until none is left. Then the same fleet at --direct
processes connecting to the server directly. Both print tasks per second,
tasks done (must be each exactly once), overlapping write grants (must be 0)
and "too many connections" errors (must be 0). The cluster and the pooler
are stopped and removed at the end.

Every task declares one write path out of a small shared pool, so tasks of
different lanes contend for the same files. Each task's command records
(path, agent, start, end) of its write. A controller keeps --drainers drainer
processes alive (spread over the lanes; one works a lane at a time, the others
wait for it), SIGKILLs a running one at random until --kill of the tasks have
been hit, and restarts it; a keeper returns what the dead held. The run prints
tasks per second, how many tasks completed (must be all, each done exactly
once) and how many overlapping writes to one path by two agents it saw (must be 0).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")
STALE_AFTER = "1s"
BASE_ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    "GIT_CONFIG_NOSYSTEM": "1",
}
WRITER = """
import os, sys, time
path, log = os.environ["WRITE_PATH"], os.environ["FLEET_LOG"]
start = time.time()
with open(log, "a") as f:
    f.write(f"start {os.environ['LAC_TASK_ID']} {path} {os.environ['LAC_AGENT']} {start}\\n")
time.sleep(0.005)
with open(log, "a") as f:
    f.write(f"end {os.environ['LAC_TASK_ID']} {path} {os.environ['LAC_AGENT']} {time.time()}\\n")
"""


def lac(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        [str(BIN / "git-lac"), *args],
        cwd=repo,
        env=BASE_ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def setup(backend: str, dsn: str, tasks: int, lanes: int, pool: int) -> tuple[Path, str | None]:
    repo = Path(tempfile.mkdtemp(prefix="lac-fleet-"))
    for args in (
        ["init", "-q"],
        [
            "-c",
            "user.email=f@example.com",
            "-c",
            "user.name=f",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "start",
        ],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, env=BASE_ENV)
    url = None
    if backend == "postgres":
        import psycopg

        schema = "lac_fleet_" + uuid.uuid4().hex[:8]
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        sep = "&" if "?" in dsn else "?"
        url = f"{dsn}{sep}options={quote(f'-csearch_path={schema}')}"
    lac(repo, "init", *(["--url", url] if url else []), "--stale-after", STALE_AFTER)
    sys.path.insert(0, str(ROOT))
    from git_lacunari.board import Board
    from git_lacunari.identity import Identity
    from git_lacunari.repo import discover
    from git_lacunari.store import open_store

    store = open_store(url, discover(repo).common_dir)
    board = Board(store, Identity("planner", "bench", (), "bench"))
    rng = random.Random(7)
    with store.write():
        for n in range(tasks):
            board.add_task(
                f"task {n}",
                lane=f"lane{n % lanes}",
                writes=[f"shared/file{rng.randrange(pool)}.txt"],
            )
    store.close()
    return repo, url


def run(backend: str, args: argparse.Namespace) -> None:
    repo, url = setup(backend, args.dsn, args.tasks, args.lanes, args.pool)
    log = repo / "fleet.log"
    writer = repo / "writer.py"
    writer.write_text(WRITER)
    rng = random.Random(11)
    serial = iter(range(10**6))

    agents: dict[str, subprocess.Popen[bytes]] = {}

    def start_drainer(lane: str) -> subprocess.Popen[bytes]:
        agent = f"drainer-{next(serial)}"
        env = {**BASE_ENV, "LAC_AGENT": agent, "FLEET_LOG": str(log)}
        # The command learns its path from LAC_TASK_PATHS, as a real one would.
        script = (
            'WRITE_PATH=$(python3 -c "import json,os; print(json.loads('
            "os.environ['LAC_TASK_PATHS'])[0][0])\") exec "
            f"{sys.executable} {writer}"
        )
        proc = subprocess.Popen(
            [str(BIN / "git-lac"), "drain", "--lane", lane, "--", "sh", "-c", script],
            cwd=repo,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        agents[agent] = proc
        return proc

    lanes = [f"lane{n}" for n in range(args.lanes)]
    per_lane = max(1, args.drainers // args.lanes)
    keeper = subprocess.Popen(
        [str(BIN / "git-lac"), "keeper", "--interval", "0.25"],
        cwd=repo,
        env={**BASE_ENV, "LAC_AGENT": "keeper"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    fleet = {lane: [start_drainer(lane) for _ in range(per_lane)] for lane in lanes}
    kills_wanted, kills = int(args.tasks * args.kill), 0
    started = time.perf_counter()
    deadline = started + args.timeout
    done = 0
    while time.perf_counter() < deadline:
        time.sleep(0.05)
        board_tasks = json.loads(lac(repo, "tasks", "--json", "--as", "observer"))["tasks"]
        counts = Counter(t["state"] for t in board_tasks)
        done = counts["done"]
        if done == args.tasks:
            break
        for lane in lanes:  # keep the fleet at strength; drainers exit on an empty lane
            fleet[lane] = [p for p in fleet[lane] if p.poll() is None]
            while len(fleet[lane]) < per_lane:
                fleet[lane].append(start_drainer(lane))
        # Kill drainers in the middle of a task: the owners of live claims.
        busy = [
            agents[t["owner"]]
            for t in board_tasks
            if t["state"] == "claimed"
            and t["owner"] in agents
            and agents[t["owner"]].poll() is None
        ]
        # Spread the kills over the run: keep up with the share of tasks done.
        due = kills < kills_wanted and kills <= kills_wanted * done / args.tasks + 1
        if due and busy:
            victim = rng.choice(busy)
            try:
                os.killpg(victim.pid, signal.SIGKILL)
                kills += 1
            except ProcessLookupError:
                pass
    elapsed = time.perf_counter() - started
    for proc in [keeper, *(p for ps in fleet.values() for p in ps)]:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    events = json.loads(lac(repo, "log", "--json", "--as", "observer"))["events"]
    done_counts = Counter(e["task_id"] for e in events if e["kind"] == "done")
    expired = sum(1 for e in events if e["kind"] == "expired")
    intervals: dict[str, list[tuple[float, float, str]]] = {}
    starts: dict[tuple[str, str], tuple[str, float]] = {}
    for line in log.read_text().splitlines():
        kind, task, path, agent, at = line.split()
        if kind == "start":
            starts[task, agent] = (path, float(at))
        else:
            path, begun = starts.pop((task, agent))
            intervals.setdefault(path, []).append((begun, float(at), agent))
    overlaps = 0
    for spans in intervals.values():
        spans.sort()
        for (_, end, agent), (begin, _, other) in zip(spans, spans[1:], strict=False):
            if begin < end and agent != other:
                overlaps += 1
    print(
        f"{backend:<9} {done / elapsed:>8.1f} tasks/s  {len(done_counts):>5}/{args.tasks} done"
        f"  max done per task {max(done_counts.values(), default=0)}"
        f"  kills {kills:>4}  expired {expired:>4}  overlapping writes {overlaps}"
        f"  ({elapsed:.1f} s)",
        flush=True,
    )


# --- --pgbouncer: many claimers, one small server ------------------------------

FLEET_BOARD = "fleet"


@contextlib.contextmanager
def small_cluster(max_connections: int) -> Any:
    """A private PostgreSQL cluster (max_connections as given) on a free port,
    run as the postgres account, stopped and removed at the end."""
    import glob
    import shutil
    import socket

    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not bins:
        raise SystemExit("no /usr/lib/postgresql/*/bin: cannot start a private cluster")
    initdb, pg_ctl = f"{bins[-1]}/initdb", f"{bins[-1]}/pg_ctl"
    here = Path(tempfile.mkdtemp(prefix="lac-fleet-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(here, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    data = here / "db"
    try:
        subprocess.run(
            [*run_as, initdb, "-D", str(data), "-U", "postgres", "-A", "trust"],
            check=True,
            capture_output=True,
        )
        options = (
            f"-p {port} -k {here} -c listen_addresses=127.0.0.1 "
            f"-c max_connections={max_connections} -c fsync=off"
        )
        subprocess.run(
            [
                *run_as,
                pg_ctl,
                "-D",
                str(data),
                "-w",
                "-l",
                str(here / "log"),
                "-o",
                options,
                "start",
            ],
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                [*run_as, pg_ctl, "-D", str(data), "-m", "fast", "stop"], capture_output=True
            )
    finally:
        shutil.rmtree(here, ignore_errors=True)


def _claimer(index: int, url: str, pooled: bool, repo: str, out: Any, go: Any) -> None:
    """One claimer process: claim the next task, hold its path a moment, done."""
    from git_lacunari.board import Board
    from git_lacunari.errors import LacError, Refused
    from git_lacunari.identity import Identity
    from git_lacunari.store import open_store

    held: list[tuple[int, str, float, float]] = []
    errors: list[str] = []
    board = None
    try:
        go.wait()
        store = open_store(
            url,
            Path(repo),
            board=FLEET_BOARD,
            pooler="transaction" if pooled else None,
            timeout="60",
        )
        board = Board(store, Identity(f"claimer-{index}", "bench", (), "bench"))
        while True:
            try:
                claim = board.claim_next()
            except Refused as exc:
                if exc.reason == "not_found":
                    break
                errors.append(f"refused: {exc.reason}")
                continue
            except LacError as exc:
                errors.append(exc.message)
                if len(errors) > 20:
                    break
                continue
            start = time.time()
            time.sleep(0.002)
            end = time.time()
            path = claim.locks[0].pattern if claim.locks else ""
            board.done(claim.task.id)
            held.append((claim.task.id, path, start, end))
    except Exception as exc:  # report, never hang the parent
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        if board is not None:
            board.store.close()
        out.put((held, errors))


def fleet_round(url: str, pooled: bool, processes: int, tasks: int, pool: int) -> dict[str, Any]:
    """A fresh board of ``tasks`` tasks, drained by ``processes`` claimers."""
    import psycopg

    from git_lacunari.board import Board
    from git_lacunari.identity import Identity
    from git_lacunari.store import open_store

    direct = url
    with psycopg.connect(direct, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {FLEET_BOARD} CASCADE")
    repo = Path(tempfile.mkdtemp(prefix="lac-fleet-"))
    setup = Board(
        open_store(direct, repo, create=True, board=FLEET_BOARD),
        Identity("setup", "bench", (), "bench"),
    )
    with setup.store.write():
        for n in range(tasks):
            setup.add_task(f"job {n}", writes=[f"src/f{n % pool}.py"])
    setup.store.close()
    return {"repo": repo, "tasks": tasks, "processes": processes, "pooled": pooled}


def drain_round(round_: dict[str, Any], url: str) -> dict[str, Any]:
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    out = ctx.Queue()
    go = ctx.Event()
    procs = [
        ctx.Process(target=_claimer, args=(i, url, round_["pooled"], str(round_["repo"]), out, go))
        for i in range(round_["processes"])
    ]
    for proc in procs:
        proc.start()
    time.sleep(1.0)  # every process forked and waiting
    started = time.monotonic()
    go.set()
    results = [out.get(timeout=1800) for _ in procs]
    elapsed = time.monotonic() - started
    for proc in procs:
        proc.join(timeout=60)
    held = [h for r in results for h in r[0]]
    errors = [e for r in results for e in r[1]]
    done = Counter(task for task, _, _, _ in held)
    overlaps = 0
    by_path: dict[str, list[tuple[float, float]]] = {}
    for _, path, start, end in held:
        by_path.setdefault(path, []).append((start, end))
    for spans in by_path.values():
        spans.sort()
        overlaps += sum(1 for a, b in zip(spans, spans[1:], strict=False) if b[0] < a[1])
    return {
        "elapsed": elapsed,
        "throughput": len(held) / elapsed if elapsed else 0.0,
        "done": len(done),
        "twice": sum(1 for n in done.values() if n > 1),
        "overlaps": overlaps,
        "too_many": sum(1 for e in errors if "too many" in e.lower()),
        "errors": errors,
    }


def pgbouncer_fleet(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.pgbouncer import pgbouncer

    print(
        f"{args.tasks} tasks, each one write path of {args.pool}; a private server with "
        f"max_connections {args.max_connections}"
    )
    with small_cluster(args.max_connections) as server:
        rows = []
        with pgbouncer(server, pool_size=args.server_pool, max_clients=args.claimers + 50) as via:
            round_ = fleet_round(server, True, args.claimers, args.tasks, args.pool)
            rows.append((f"{args.claimers} claimers through PgBouncer", drain_round(round_, via)))
        round_ = fleet_round(server, False, args.direct, args.tasks, args.pool)
        rows.append((f"{args.direct} claimers connecting directly", drain_round(round_, server)))
    print(f"PgBouncer: pool_mode transaction, default_pool_size {args.server_pool}")
    for label, r in rows:
        print(
            f"{label:<40} {r['throughput']:7.1f} tasks/s  ({r['elapsed']:.1f} s)  "
            f"done {r['done']}/{args.tasks}, twice {r['twice']}, overlapping write grants "
            f"{r['overlaps']}, 'too many connections' {r['too_many']}, other errors "
            f"{len(r['errors']) - r['too_many']}"
        )
        for error in r["errors"][:3]:
            print(f"    error: {error}")
    ratio = rows[0][1]["throughput"] / rows[1][1]["throughput"] if rows[1][1]["throughput"] else 0
    print(f"through PgBouncer / direct: {ratio:.2f}x")
    ok = all(
        r["done"] == args.tasks and not r["twice"] and not r["overlaps"] and not r["too_many"]
        for _, r in rows
    )
    if not ok:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--drainers", type=int, default=16)
    parser.add_argument("--lanes", type=int, default=4)
    parser.add_argument("--pool", type=int, default=12, help="distinct write paths")
    parser.add_argument("--kill", type=float, default=0.10, help="SIGKILLs, as a share of tasks")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--pgbouncer", action="store_true", help="many claimers via PgBouncer")
    parser.add_argument("--claimers", type=int, default=200)
    parser.add_argument("--direct", type=int, default=20)
    parser.add_argument("--max-connections", type=int, default=50)
    parser.add_argument("--server-pool", type=int, default=40, help="PgBouncer's pool size")
    args = parser.parse_args()
    if args.pgbouncer:
        if "--tasks" not in sys.argv:
            args.tasks = 2000
        if "--pool" not in sys.argv:
            args.pool = 100
        pgbouncer_fleet(args)
        return
    print(
        f"{args.tasks} tasks, {args.drainers} drainers over {args.lanes} lanes, "
        f"{args.pool} shared write paths, stale-after {STALE_AFTER}, keeper every 0.25 s"
    )
    for backend in args.backends.split(","):
        run(backend, args)


if __name__ == "__main__":
    main()
