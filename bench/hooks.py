"""What the hooks and an agent's loop cost, in units of `python -c pass`, in one run.

    python bench/hooks.py [--runs N] [--dsn postgresql://…] [--backends sqlite,postgres]
                          [--locks 100000] [--skip commit,push,claim,edit]

Each figure is a median of N alternated pairs, measured beside `python3 -c
pass` of the same interpreter in the same loop, with the resident helper (the
default: the first call starts it) and without it (``LAC_EDIT_HELPER=off``:
each call decides in its own process, as before the helper answered them):

- commit: the time a one-file ``git commit`` with the client hooks
  (pre-commit, commit-msg, post-commit) adds over the same commit with
  ``core.hooksPath=/dev/null``; target at most 4x.
- push: the time the server's hooks (pre-receive, post-receive, which settles
  the finished claim the push lands) add to a push of one finished line over
  the same push to a bare repository without hooks; target at most 4x.
- claim: a whole ``git-lac claim --next`` process; target at most 2.5x.
- edit: the installed edit hook, ``git-lac guard edit --harness claude-code``
  run through ``/bin/sh -c`` on a Claude Code payload (1 path; 50 paths: the
  generic payload), with bench/edit.py's board of N foreign locks; target
  at most 2.5x on SQLite, under 150 ms on PostgreSQL.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import edit as edit_bench  # noqa: E402  (bench/edit.py: its board of foreign locks)

DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")
BIN = Path(sys.executable).parent
LAC = str(BIN / "git-lac")
BASE = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PATH": str(BIN) + os.pathsep + os.environ["PATH"],
    "GIT_CONFIG_NOSYSTEM": "1",
    "LAC_AGENT": "bench",
}
MODES = {"helper": {}, "direct": {"LAC_EDIT_HELPER": "off"}}
PASS = ["python3", "-c", "pass"]
# The server's hooks only (--no-verify: not the client's pre-push), the pusher named.
PUSH = ["git", "push", "-q", "--no-verify", "-o", "lac.agent=bench"]


def sh(cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    proc = subprocess.run(
        list(args), cwd=cwd, env=env or BASE, input=stdin, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


def timed(cwd: Path, cmd: list[str], env: dict[str, str], stdin: str | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0 or '"deny"' in proc.stdout:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    return elapsed


def wait_for_helper(git_dir: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if list((git_dir / "lacunari").glob("edit-*.sock")):
            return
        time.sleep(0.05)
    raise SystemExit(f"no helper started in {git_dir}")


def stop_helpers(*git_dirs: Path) -> None:
    for git_dir in git_dirs:
        for sock in (git_dir / "lacunari").glob("edit-*.sock"):
            sock.unlink()  # a helper whose socket is gone leaves within a second
    time.sleep(1.2)


def report(what: str, backend: str, mode: str, ms: float, pass_ms: float, target: str) -> None:
    print(
        f"{what:<7} {backend:<9} {mode:<7} {ms:>8.1f} ms {pass_ms:>7.1f} ms "
        f"{ms / pass_ms:>6.2f}x   (target {target})",
        flush=True,
    )


# --- the world: a clone with the client hooks, a server with its hooks -------------


class World:
    def __init__(self, url: str | None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="lac-hooks-bench-"))
        self.bare = self.root / "server.git"
        self.plain = self.root / "plain.git"  # the same pushes, no hooks
        self.clone = self.root / "clone"
        self.clone.mkdir()
        sh(self.root, "git", "init", "-q", "--bare", str(self.bare))
        sh(self.root, "git", "init", "-q", "--bare", str(self.plain))
        sh(self.plain, "git", "config", "receive.advertisePushOptions", "true")
        c = self.clone
        sh(c, "git", "init", "-q", "-b", "main")
        sh(c, "git", "config", "user.email", "bench@example.com")
        sh(c, "git", "config", "user.name", "bench")
        (c / "src").mkdir()
        (c / "src" / "a.py").write_text("a = 0\n")
        sh(c, "git", "add", ".")
        sh(c, "git", "commit", "-qm", "start")
        sh(c, "git", "remote", "add", "origin", str(self.bare))
        sh(c, "git", "push", "-q", "origin", "main")
        sh(c, "git", "push", "-q", str(self.plain), "main")
        sh(c, "git", "branch", "-q", "-u", "origin/main")
        sh(c, LAC, "init", *(["--url", url] if url else []))
        board = url or f"sqlite://{c / '.git' / 'lacunari' / 'board.db'}"
        sh(self.bare, "git", "config", "lac.url", board)
        sh(self.bare, LAC, "hooks", "install", "--server")
        sh(c, LAC, "hooks", "install")
        self.n = 0

    def line(self, env: dict[str, str]) -> None:
        """One finished line, committed and done (landing), not pushed yet."""
        self.n += 1
        path = f"src/line{self.n}.py"
        sh(self.clone, LAC, "task", "add", f"line {self.n}", "--write", path, env=env)
        sh(self.clone, LAC, "claim", "--next", env=env)
        (self.clone / path).write_text(f"n = {self.n}\n")
        sh(self.clone, "git", "add", path, env=env)
        sh(self.clone, "git", "commit", "-qm", f"line {self.n}", env=env)
        sh(self.clone, LAC, "done", "--json", str(self.last_task(env)), env=env)

    def last_task(self, env: dict[str, str]) -> int:
        import json

        shown = json.loads(sh(self.clone, LAC, "status", "--json", env=env))
        return max(int(c["task"]["id"]) for c in shown["claims"])


def alternated(
    runs: int, a: Callable[[], float], b: Callable[[], float], setup: Callable[[], None]
) -> tuple[float, float, float]:
    """Medians of a, b and `python -c pass`, in alternated pairs."""
    got_a, got_b, got_pass = [], [], []
    for n in range(runs):
        setup()
        first, second = (a, b) if n % 2 == 0 else (b, a)
        x = first()
        y = second()
        ta, tb = (x, y) if n % 2 == 0 else (y, x)
        got_a.append(ta)
        got_b.append(tb)
        got_pass.append(timed(Path("/"), PASS, BASE))
    return statistics.median(got_a), statistics.median(got_b), statistics.median(got_pass)


def bench_commit(world: World, backend: str, runs: int) -> None:
    for mode, extra in MODES.items():
        commit_once(world, backend, runs, mode, {**BASE, **extra})


def commit_once(world: World, backend: str, runs: int, mode: str, env: dict[str, str]) -> None:
    c = world.clone
    sh(c, LAC, "task", "add", f"commits {mode}", "--write", "src/a.py", env=env)
    sh(c, LAC, "claim", "--next", env=env)
    count = [0]

    def change() -> None:
        count[0] += 1
        (c / "src" / "a.py").write_text(f"a = {count[0]}\n")
        sh(c, "git", "add", "src/a.py", env=env)

    def hooked() -> float:
        t = timed(c, ["git", "commit", "-q", "-m", "a"], env)
        change()
        return t

    def bare() -> float:
        t = timed(c, ["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "a"], env)
        change()
        return t

    change()
    hooked()  # warm: the first call starts the helper
    if mode == "helper":
        wait_for_helper(c / ".git")
    with_hooks, without, pass_ms = alternated(runs, hooked, bare, lambda: None)
    report("commit", backend, mode, with_hooks - without, pass_ms, "<= 4x, added")
    stop_helpers(c / ".git")


def bench_push(world: World, backend: str, runs: int) -> None:
    for mode, extra in MODES.items():
        push_once(world, backend, runs, mode, {**BASE, **extra})


def push_once(world: World, backend: str, runs: int, mode: str, env: dict[str, str]) -> None:
    c = world.clone

    def hooked() -> float:
        return timed(c, [*PUSH, "origin", "main"], env)

    def bare() -> float:
        return timed(c, [*PUSH, str(world.plain), "main"], env)

    world.line(env)
    hooked()  # warm: the first push starts the server's helper
    bare()
    if mode == "helper":
        wait_for_helper(world.bare)
    with_hooks, without, pass_ms = alternated(runs, hooked, bare, lambda: world.line(env))
    report("push", backend, mode, with_hooks - without, pass_ms, "<= 4x, added")
    stop_helpers(world.bare, c / ".git")


def bench_claim(world: World, backend: str, runs: int) -> None:
    c = world.clone
    for mode, extra in MODES.items():
        env = {**BASE, **extra}
        for n in range(runs + 2):
            sh(c, LAC, "task", "add", f"claim {mode} {n}", "--write", f"claims/{mode}{n}", env=env)
        cmd = [LAC, "claim", "--next"]
        timed(c, cmd, env)
        if mode == "helper":
            wait_for_helper(c / ".git")
        claims, passes = [], []
        for _ in range(runs):
            claims.append(timed(c, cmd, env))
            passes.append(timed(Path("/"), PASS, BASE))
        report(
            "claim", backend, mode, statistics.median(claims), statistics.median(passes), "<= 2.5x"
        )
        stop_helpers(c / ".git")


def bench_edit(backend: str, url: str | None, runs: int, locks: int) -> None:
    repo = edit_bench.make_repo()
    edit_bench.fill(repo, url, locks)
    payloads = edit_bench.payloads(repo)
    target = "<= 2.5x" if backend == "sqlite" else "< 150 ms"
    for count, payload in payloads.items():
        harness = " --harness claude-code" if count == 1 else ""
        cmd = ["/bin/sh", "-c", f"'{LAC}' guard edit{harness}"]
        for mode, extra in MODES.items():
            env = {**edit_bench.ENV, **extra}
            timed(repo, cmd, env, payload)
            if mode == "helper":
                wait_for_helper(repo / ".git")
                timed(repo, cmd, env, payload)
            hooks, passes = [], []
            for _ in range(runs):
                hooks.append(timed(repo, cmd, env, payload))
                passes.append(timed(Path("/"), PASS, BASE))
            report(
                f"edit/{count}",
                backend,
                mode,
                statistics.median(hooks),
                statistics.median(passes),
                target,
            )
            stop_helpers(repo / ".git")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--dsn", default=DEFAULT_DSN)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--locks", type=int, default=100_000)
    parser.add_argument("--skip", default="")
    args = parser.parse_args()
    skip = set(args.skip.split(",")) - {""}
    print(f"median of {args.runs} alternated runs; python3 -c pass measured beside each")
    print(f"{'what':<7} {'backend':<9} {'mode':<7} {'time':>11} {'pass':>10} {'ratio':>7}")
    for backend in args.backends.split(","):
        url, schema = None, f"lac_hbench_{uuid.uuid4().hex[:8]}"
        if backend == "postgres":
            import psycopg

            with psycopg.connect(args.dsn, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA "{schema}"')
            sep = "&" if "?" in args.dsn else "?"
            url = f"{args.dsn}{sep}options={quote(f'-csearch_path={schema}')}"
        try:
            if not {"commit", "push", "claim"} <= skip:
                world = World(url)
                try:
                    if "commit" not in skip:
                        bench_commit(world, backend, args.runs)
                    if "push" not in skip:
                        bench_push(world, backend, args.runs)
                    if "claim" not in skip:
                        bench_claim(world, backend, args.runs)
                finally:
                    stop_helpers(world.bare, world.clone / ".git")
            if "edit" not in skip:
                edit_url = url
                if url is not None:  # a board of its own: bench/edit.py fills it
                    edit_url = url.replace(schema, schema + "e")
                    import psycopg

                    with psycopg.connect(args.dsn, autocommit=True) as conn:
                        conn.execute(f'CREATE SCHEMA "{schema}e"')
                bench_edit(backend, edit_url, args.runs, args.locks)
        finally:
            if url is not None:
                import psycopg

                with psycopg.connect(args.dsn, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}e" CASCADE')


if __name__ == "__main__":
    main()
