"""A fleet of agents on real git: git-lacunari against no coordination at all.

    python bench/fleet_git.py [--agents 8] [--tasks 40] [--files 30] [--seed 1]
                              [--backend sqlite|postgres|both] [--dsn DSN]
                              [--landing push|queue] [--crashes 2] [--think MS]
                              [--quick]

One seeded task set (each task appends one unique line to each of its files:
a primary file, sometimes a second declared one, the shared config file every
Nth task, sometimes an undeclared co-change, and `--after` chains on one file)
is run twice, back to back, by N agent processes, each in its own clone of a
bare server repository:

- lac: the server has `git lac hooks install --server`, every clone the client
  hooks, one board (embedded SQLite shared through `lac.url`, or PostgreSQL
  with a fresh board); the committed `.claude/settings.json` written by
  `git lac hooks install --agent claude-code` is read and its PreToolUse
  command run through `/bin/sh -c` with a Claude Code `Edit` payload before
  each file write (a refusal is honoured: the agent waits, then gives the task
  back and takes other work). Claim with `git lac claim --next --wait`, commit,
  land (`--landing push`: `git lac done` + `git push -o lac.agent=…`, rebase on
  non-fast-forward; `--landing queue`: `git lac land ID --wait`, exit 1 means
  the line came back `returned` and is redone). A keeper with a short
  stale-after returns the work of the agents killed with SIGKILL mid-task.
- none: plain clones, no hooks, no board; each agent picks a random task not
  yet done in its view of the server, edits, commits, pushes, and on a
  non-fast-forward rebases; a conflicting rebase is counted, aborted and the
  task redone on the new tip.

It prints wall times and their ratio, the correctness counts measured in the
server's final tree, a per-step table for the lac run and the serial floor of
the longest chain. Every subprocess has a timeout and every arm a deadline,
so the bench prints even when a run goes wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_DSN = os.environ.get("LAC_TEST_DSN", "postgresql://postgres@127.0.0.1:5432/test")
# Short, so the killed agents' work comes back within seconds; long enough
# that a live agent whose push waits under load (2 cores, many git hooks) is
# not taken for dead: it also heartbeats between pushes.
STALE_AFTER = "8s"
CONFIG = "config.ini"
CMD_TIMEOUT = 60.0


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAC_", "GIT_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{os.environ['PATH']}"
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = "fleet"
    env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = "fleet@example.com"
    return env


def run(
    args: list[str],
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = CMD_TIMEOUT,
    stdin: str | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    try:
        cp = subprocess.run(
            args,
            cwd=cwd,
            env=env or base_env(),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        cp = subprocess.CompletedProcess(args, 124, "", f"timeout after {timeout}s: {exc}")
    if check and cp.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} (in {cwd}) exit {cp.returncode}: {cp.stderr.strip()[-400:]}"
        )
    return cp


# ---------------------------------------------------------------- task set


def make_tasks(n_tasks: int, n_files: int, seed: int, config_every: int = 5) -> dict[str, Any]:
    rng = random.Random(seed)
    files = [CONFIG] + [f"src/f{i:02d}.txt" for i in range(1, n_files)]
    plain = files[1:]
    hot = plain[: max(2, len(plain) // 6)]  # a few files many tasks share
    tasks: list[dict[str, Any]] = []
    last_on: dict[str, int] = {}
    for i in range(n_tasks):
        primary = rng.choice(hot) if rng.random() < 0.35 else rng.choice(plain)
        declared = [primary]
        if rng.random() < 0.2:
            extra = rng.choice(plain)
            if extra not in declared:
                declared.append(extra)
        if (i + 1) % config_every == 0:
            declared.append(CONFIG)
        undeclared = []
        if rng.random() < 0.15:
            co = rng.choice(plain)
            if co not in declared:
                undeclared.append(co)
        after = []
        if primary in last_on and rng.random() < 0.3:
            after.append(last_on[primary])
        last_on[primary] = i
        tasks.append(
            {
                "n": i,
                "title": f"T{i:03d}",
                "declared": declared,
                "undeclared": undeclared,
                "after": after,
            }
        )
    depth: dict[int, int] = {}
    for t in tasks:
        depth[t["n"]] = 1 + max((depth[a] for a in t["after"]), default=0)
    return {"files": files, "tasks": tasks, "longest_chain": max(depth.values(), default=0)}


def line_of(task: dict[str, Any], path: str, agent: str) -> str:
    return f"{task['title']} {path} by {agent}"


# ---------------------------------------------------------------- worker


class Worker:
    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = cfg
        self.agent: str = cfg["agent"]
        self.clone = Path(cfg["clone"])
        self.lac: bool = cfg["arm"] == "lac"
        self.tasks = {t["title"]: t for t in cfg["taskset"]["tasks"]}
        self.deadline: float = cfg["deadline"]
        self.think = cfg["think"] / 1000.0
        self.log = open(cfg["log"], "a", buffering=1)  # noqa: SIM115 - lives as long as the process
        self.env = base_env()
        self.env["LAC_AGENT"] = self.agent
        self.env["CLAUDE_PROJECT_DIR"] = str(self.clone)
        self.rng = random.Random(f"{cfg['seed']}-{self.agent}")
        self.hooks = self.edit_hooks() if self.lac else []

    def emit(self, **rec: Any) -> None:
        rec["t"] = time.time()
        rec["agent"] = self.agent
        self.log.write(json.dumps(rec) + "\n")

    def git(self, *args: str, timeout: float = CMD_TIMEOUT) -> subprocess.CompletedProcess[str]:
        return run(["git", *args], self.clone, self.env, timeout=timeout)

    def lacc(self, *args: str, timeout: float = CMD_TIMEOUT) -> subprocess.CompletedProcess[str]:
        return run(["git", "lac", *args], self.clone, self.env, timeout=timeout)

    def timed(self, step: str, fn: Any, *a: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*a)
        finally:
            self.emit(ev="step", step=step, dt=time.perf_counter() - t0)

    # The commands the committed harness settings run before a Claude Code Edit.
    def edit_hooks(self) -> list[str]:
        settings = json.loads((self.clone / ".claude" / "settings.json").read_text())
        out = []
        for entry in settings.get("hooks", {}).get("PreToolUse", []):
            matcher = entry.get("matcher", "")
            if matcher in ("", "*") or re.fullmatch(matcher, "Edit"):
                out += [h["command"] for h in entry.get("hooks", []) if h.get("type") == "command"]
        if not out:
            raise RuntimeError("no PreToolUse command for Edit in .claude/settings.json")
        return out

    def hook_allows(self, path: str) -> tuple[bool, str]:
        # Payload as Claude Code sends PreToolUse (https://code.claude.com/docs/en/hooks):
        # common fields + tool_name/tool_input; deny = exit 2, or exit 0 with
        # hookSpecificOutput.permissionDecision "deny".
        payload = {
            "session_id": self.agent,
            "transcript_path": str(self.clone / ".transcript.jsonl"),
            "cwd": str(self.clone),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {
                "file_path": str(self.clone / path),
                "old_string": "",
                "new_string": "x",
                "replace_all": False,
            },
        }
        for cmd in self.hooks:
            cp = run(
                ["/bin/sh", "-c", cmd], self.clone, self.env, timeout=30, stdin=json.dumps(payload)
            )
            if cp.returncode == 2:
                return False, cp.stderr.strip()[:200]
            if cp.returncode == 0 and cp.stdout.strip():
                with contextlib.suppress(ValueError):
                    out = json.loads(cp.stdout)
                    hso = out.get("hookSpecificOutput", {})
                    if hso.get("permissionDecision") == "deny":
                        return False, str(hso.get("permissionDecisionReason", ""))[:200]
        return True, ""

    def write_lines(self, task: dict[str, Any]) -> None:
        for path in task["declared"] + task["undeclared"]:
            self.emit(ev="write_start", task=task["title"], path=path)
            with open(self.clone / path, "a") as f:
                f.write(line_of(task, path, self.agent) + "\n")

    def end_writes(self, task: dict[str, Any], how: str) -> None:
        for path in task["declared"] + task["undeclared"]:
            self.emit(ev="write_end", task=task["title"], path=path, how=how)

    def commit(self, task: dict[str, Any]) -> bool:
        paths = task["declared"] + task["undeclared"]
        self.git("add", "--", *paths)
        cp = self.git("commit", "-q", "-m", f"{task['title']}: append its lines")
        if cp.returncode != 0:
            self.emit(ev="commit_refused", task=task["title"], err=cp.stderr.strip()[-300:])
        return cp.returncode == 0

    def fresh_branch(self, name: str) -> None:
        self.git("fetch", "-q", "origin")
        self.git("checkout", "-q", "-B", name, "origin/main")

    # -------------------------------------------------- landing by push
    def push_until_in(self, task: dict[str, Any], lac: bool) -> str:
        """Push HEAD to main; on non-fast-forward rebase; a conflicting rebase
        is aborted and the task redone on the new tip. Returns landed/failed."""
        opts = ["-o", f"lac.agent={self.agent}"] if lac else []
        for _attempt in range(30):
            if time.time() > self.deadline:
                return "failed"
            cp = self.git("push", *opts, "origin", "HEAD:main")
            if cp.returncode == 0:
                return "landed"
            err = cp.stderr
            if "non-fast-forward" not in err and "fetch first" not in err and "rejected" not in err:
                self.emit(
                    ev="push_refused", task=task["title"], rc=cp.returncode, err=err.strip()[-600:]
                )
                time.sleep(0.2)
            if lac:
                self.lacc("heartbeat")  # the landing claim stays alive while we retry
            self.git("fetch", "-q", "origin")
            rb = self.git("rebase", "-q", "origin/main")
            if rb.returncode != 0:
                self.emit(ev="conflict", task=task["title"], kind="rebase")
                self.git("rebase", "--abort")
                branch = self.git("rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
                self.git("reset", "-q", "--hard", "origin/main")
                self.emit(ev="redo", task=task["title"], branch=branch)
                self.write_lines(task)
                if not self.commit(task):
                    return "failed"
        return "failed"

    def land_push(self, tid: int, task: dict[str, Any]) -> str:
        self.lacc("done", str(tid))
        return self.push_until_in(task, lac=True)

    # -------------------------------------------------- landing by the queue
    def land_queue(self, tid: int, task: dict[str, Any]) -> str:
        for _attempt in range(10):
            left = max(5.0, self.deadline - time.time())
            cp = self.lacc("land", str(tid), "--wait", timeout=left)
            if cp.returncode == 0:
                return "landed"
            if cp.returncode != 1:
                self.emit(
                    ev="land_error",
                    task=task["title"],
                    rc=cp.returncode,
                    err=cp.stderr.strip()[-300:],
                )
                return "failed"
            # returned: fix on the new tip and hand the line over again
            self.emit(ev="returned", task=task["title"])
            self.fresh_branch(f"t{tid}")
            self.write_lines(task)
            if not self.commit(task):
                return "failed"
        return "failed"

    # -------------------------------------------------- the lac agent
    def run_lac(self) -> None:
        land = self.land_queue if self.cfg["landing"] == "queue" else self.land_push
        while time.time() < self.deadline:
            self.emit(ev="phase", phase="claim")
            cp = self.timed("claim", self.lacc, "claim", "--next", "--wait", "2", "--json")
            if cp.returncode != 0:
                if self.board_empty():
                    return
                continue
            try:
                got = json.loads(cp.stdout)
                tid = int(got["task"]["id"])
                task = self.tasks[got["task"]["title"]]
            except (ValueError, KeyError, TypeError):
                self.emit(ev="error", where="claim", out=cp.stdout[-300:], err=cp.stderr[-300:])
                continue
            self.emit(ev="claimed", task=task["title"], id=tid)
            self.fresh_branch(f"t{tid}")
            self.emit(ev="phase", phase="edit", task=task["title"])
            if not self.timed("edit hook", self.edit_through_hook, task):
                self.emit(ev="gave_back", task=task["title"])
                self.lacc("release", str(tid))
                self.git("checkout", "-q", "--detach", "origin/main")
                time.sleep(self.rng.uniform(0.05, 0.3))
                continue
            time.sleep(self.think)
            self.write_lines(task)
            ok = self.timed("commit", self.commit, task)
            if not ok:
                self.end_writes(task, "abandoned")
                self.lacc("release", str(tid))
                continue
            self.emit(ev="phase", phase="land", task=task["title"])
            how = self.timed("land", land, tid, task)
            self.end_writes(task, how)
            self.emit(ev="landing", task=task["title"], how=how)

    def edit_through_hook(self, task: dict[str, Any]) -> bool:
        """Ask the hook for every file before writing; a refusal waits a
        little (the holder may land soon), then gives the task back."""
        for path in task["declared"] + task["undeclared"]:
            give_up = time.time() + 1.5
            while True:
                ok, why = self.hook_allows(path)
                if ok:
                    break
                self.emit(ev="hook_refused", task=task["title"], path=path, why=why)
                if time.time() > give_up:
                    return False
                time.sleep(0.2)
        return True

    def board_empty(self) -> bool:
        cp = self.lacc("tasks", "--limit", "0", "--json")
        try:
            rows = json.loads(cp.stdout)["tasks"]
        except (ValueError, KeyError, TypeError):
            return False
        return not any(r["state"] in ("open", "claimed") for r in rows)

    # -------------------------------------------------- the uncoordinated agent
    def done_in_view(self) -> set[str]:
        done: set[str] = set()
        for title, t in self.tasks.items():
            path = t["declared"][0]
            cp = self.git("show", f"origin/main:{path}")
            if any(ln.startswith(f"{title} {path} by ") for ln in cp.stdout.splitlines()):
                done.add(title)
        return done

    def run_none(self) -> None:
        by_n = {t["n"]: t for t in self.tasks.values()}
        while time.time() < self.deadline:
            self.emit(ev="phase", phase="claim")
            t0 = time.perf_counter()
            self.git("fetch", "-q", "origin")
            done = self.done_in_view()
            ready = [
                t
                for title, t in self.tasks.items()
                if title not in done and all(by_n[a]["title"] in done for a in t["after"])
            ]
            self.emit(ev="step", step="claim", dt=time.perf_counter() - t0)
            if not ready:
                if len(done) == len(self.tasks):
                    return
                time.sleep(0.2)
                continue
            task = self.rng.choice(ready)
            self.git("checkout", "-q", "-B", "work", "origin/main")
            self.emit(ev="phase", phase="edit", task=task["title"])
            time.sleep(self.think)
            self.write_lines(task)
            ok = self.timed("commit", self.commit, task)
            if not ok:
                self.end_writes(task, "abandoned")
                continue
            self.emit(ev="phase", phase="land", task=task["title"])
            how = self.timed("land", self.push_until_in, task, False)
            self.end_writes(task, how)
            self.emit(ev="landing", task=task["title"], how=how)


def worker_main(cfg_path: str) -> int:
    cfg = json.loads(Path(cfg_path).read_text())
    w = Worker(cfg)
    try:
        (w.run_lac if w.lac else w.run_none)()
    except Exception as exc:  # report, never hang
        w.emit(ev="error", where="worker", err=repr(exc)[-400:])
        return 1
    w.emit(ev="exit")
    return 0


# ---------------------------------------------------------------- the arms


def pg_board(dsn: str) -> tuple[str, Any]:
    name = "lac_fleetgit_" + uuid.uuid4().hex[:8]

    def drop() -> None:
        import psycopg

        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    return name, drop


def setup_arm(
    tmp: Path, arm: str, opts: argparse.Namespace, taskset: dict[str, Any], backend: str
) -> dict[str, Any]:
    """The server, the seed clone with its files and settings, the agents' clones."""
    server, seed = tmp / "server.git", tmp / "seed"
    run(["git", "init", "-q", "--bare", "-b", "main", str(server)], tmp, check=True)
    run(["git", "clone", "-q", str(server), str(seed)], tmp, check=True)
    run(["git", "checkout", "-q", "-b", "main"], seed)
    for path in taskset["files"]:
        (seed / path).parent.mkdir(parents=True, exist_ok=True)
        (seed / path).write_text(f"# {path}\n")
    info: dict[str, Any] = {
        "server": server,
        "seed": seed,
        "drop": None,
        "url": None,
        "board": None,
    }
    if arm == "lac":
        run(["git", "lac", "hooks", "install", "--agent", "claude-code"], seed, check=True)
    run(["git", "add", "-A"], seed, check=True)
    run(["git", "commit", "-q", "-m", "seed"], seed, check=True)
    run(["git", "push", "-q", "origin", "main"], seed, check=True)
    if arm == "lac":
        if backend == "postgres":
            name, drop = pg_board(opts.dsn)
            info["drop"] = drop
            url = opts.dsn
            init = ["--url", url, "--board", name]
            info["board"] = name
        else:
            url = f"sqlite:///{tmp / 'board.db'}"
            init = ["--url", url]
        info["url"] = url
        run(
            [
                "git",
                "lac",
                "init",
                *init,
                "--stale-after",
                STALE_AFTER,
                "--landing-period",
                STALE_AFTER,
            ],
            seed,
            check=True,
        )
        run(["git", "config", "lac.edit.undeclared", "lock"], seed, check=True)
        run(["git", "config", "lac.url", url], server, check=True)
        if info["board"]:
            run(["git", "config", "lac.board", info["board"]], server, check=True)
        run(["git", "lac", "hooks", "install", "--server"], server, check=True)
        run(["git", "lac", "hooks", "install"], seed, check=True)
        by_n: dict[int, int] = {}
        for t in taskset["tasks"]:
            args = ["git", "lac", "task", "add", t["title"]]
            for p in t["declared"]:
                args += ["--write", p]
            for a in t["after"]:
                args += ["--after", str(by_n[a])]
            cp = run(args, seed, check=True)
            by_n[t["n"]] = int(cp.stdout.strip())
    clones = []
    for k in range(opts.agents):
        clone = tmp / f"agent-{k}"
        run(["git", "clone", "-q", str(server), str(clone)], tmp, check=True)
        if arm == "lac":
            run(["git", "config", "lac.url", info["url"]], clone, check=True)
            if info["board"]:
                run(["git", "config", "lac.board", info["board"]], clone, check=True)
            run(["git", "config", "lac.edit.undeclared", "lock"], clone, check=True)
            run(["git", "lac", "hooks", "install"], clone, check=True)
        clones.append(clone)
    info["clones"] = clones
    return info


def run_arm(
    arm: str, opts: argparse.Namespace, taskset: dict[str, Any], backend: str
) -> dict[str, Any]:
    res: dict[str, Any] = {
        "arm": arm,
        "backend": backend,
        "failure": None,
        "records": [],
        "wall": None,
    }
    tmp = Path(tempfile.mkdtemp(prefix=f"lac-fleetgit-{arm}-"))
    info: dict[str, Any] = {}
    procs: list[subprocess.Popen[bytes]] = []
    keeper: subprocess.Popen[bytes] | None = None
    try:
        try:
            info = setup_arm(tmp, arm, opts, taskset, backend)
        except RuntimeError as exc:
            res["failure"] = f"setup: {exc}"
            return res
        if arm == "lac":
            kenv = base_env()
            kenv["LAC_AGENT"] = "keeper"
            keeper = subprocess.Popen(
                ["git", "lac", "keeper", "--interval", "1s"],
                cwd=info["seed"],
                env=kenv,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        t0 = time.time()
        deadline = t0 + opts.deadline
        for k, clone in enumerate(info["clones"]):
            cfg = {
                "agent": f"agent-{k}",
                "clone": str(clone),
                "arm": arm,
                "taskset": taskset,
                "deadline": deadline,
                "think": opts.think,
                "landing": opts.landing,
                "seed": opts.seed,
                "log": str(tmp / f"agent-{k}.jsonl"),
            }
            (tmp / f"agent-{k}.json").write_text(json.dumps(cfg))
            procs.append(
                subprocess.Popen(
                    [sys.executable, __file__, "--_worker", str(tmp / f"agent-{k}.json")],
                    cwd=clone,
                    env=base_env(),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,  # it reports to its log
                    start_new_session=True,
                )
            )
        # Crashes: kill -9 an agent (its whole process group) while it edits.
        rng = random.Random(opts.seed)
        victims = rng.sample(range(len(procs)), min(opts.crashes, len(procs)))
        killed: list[dict[str, Any]] = []
        while any(p.poll() is None for p in procs) and time.time() < deadline + 20:
            time.sleep(0.05)
            if victims:
                k = victims[0]
                landed = sum(1 for r in read_records(tmp) if r.get("ev") == "landing")
                if landed >= (len(killed) + 1) * max(1, opts.tasks // (opts.crashes + 2)):
                    last = phase_of(tmp / f"agent-{k}.jsonl")
                    if last and last.get("phase") == "edit" and procs[k].poll() is None:
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(procs[k].pid, signal.SIGKILL)
                        killed.append(
                            {"agent": f"agent-{k}", "t": time.time(), "task": last.get("task")}
                        )
                        victims.pop(0)
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                res["failure"] = (
                    res["failure"] or ""
                ) + f"agent pid {p.pid} still running at the deadline; "
            p.wait(timeout=10)
        res["wall"] = time.time() - t0
        res["killed"] = killed
        res["records"] = read_records(tmp)
        res["final"] = final_tree(info["server"], taskset)
        if arm == "lac":
            cp = run(["git", "lac", "locks", "--json"], info["seed"])
            try:
                res["leaked_locks"] = len(json.loads(cp.stdout)["locks"])
            except (ValueError, KeyError, TypeError):
                res["leaked_locks"] = None
                res["failure"] = (
                    res["failure"] or ""
                ) + f"locks --json: {cp.stderr.strip()[-200:]}; "
            cp = run(["git", "lac", "tasks", "--all", "--limit", "0", "--json"], info["seed"])
            with contextlib.suppress(ValueError, KeyError, TypeError):
                res["board_states"] = dict(
                    sorted(
                        __import__("collections")
                        .Counter(t["state"] for t in json.loads(cp.stdout)["tasks"])
                        .items()
                    )
                )
            cp = run(["git", "lac", "log", "--limit", "0", "--json"], info["seed"])
            with contextlib.suppress(ValueError, KeyError, TypeError):
                events = json.loads(cp.stdout)["events"]
                res["expired"] = sum(1 for e in events if e.get("kind") == "expired")
                # When the board freed each task's locks on landing: the end of
                # its writes, however late its agent's poll noticed.
                res["freed_at"] = {
                    str(e["task_id"]): float(e["at"])
                    for e in events
                    if e.get("kind") in ("landed", "done") and e.get("task_id") is not None
                }
        errs = [r for r in res["records"] if r.get("ev") in ("error", "land_error")]
        if errs:
            res["failure"] = (
                res["failure"] or ""
            ) + f"{len(errs)} agent error(s), first: {errs[0]}; "
        return res
    except Exception as exc:  # the bench prints whatever happens
        res["failure"] = (res["failure"] or "") + f"{type(exc).__name__}: {exc}"
        return res
    finally:
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
        if keeper is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(keeper.pid, signal.SIGTERM)
            try:
                keeper.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(keeper.pid, signal.SIGKILL)
        if info.get("drop"):
            try:
                info["drop"]()
            except Exception as exc:
                res["failure"] = (res["failure"] or "") + f"drop schema: {exc}; "
        if opts.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def read_records(tmp: Path) -> list[dict[str, Any]]:
    out = []
    for f in sorted(tmp.glob("agent-*.jsonl")):
        for ln in f.read_text().splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(ln))
    return out


def phase_of(log: Path) -> dict[str, Any] | None:
    try:
        lines = log.read_text().splitlines()
    except OSError:
        return None
    for ln in reversed(lines):
        with contextlib.suppress(ValueError):
            r = json.loads(ln)
            if r.get("ev") == "phase":
                return r  # type: ignore[no-any-return]
    return None


def final_tree(server: Path, taskset: dict[str, Any]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for t in taskset["tasks"]:
        counts[t["title"]] = {}
    for path in taskset["files"]:
        cp = run(["git", "show", f"main:{path}"], server)
        for ln in cp.stdout.splitlines():
            m = re.match(r"(T\d+) (\S+) by ", ln)
            if m and m.group(1) in counts and m.group(2) == path:
                counts[m.group(1)][path] = counts[m.group(1)].get(path, 0) + 1
    return counts


# ---------------------------------------------------------------- figures


def analyse(res: dict[str, Any], taskset: dict[str, Any]) -> dict[str, Any]:
    recs = res["records"]
    final = res.get("final") or {}
    once = lost = dup = unlanded = 0
    # A line is lost when its task's push went in and the line is not in the
    # final tree; a task no push landed (the deadline) is counted apart.
    pushed = {r["task"] for r in recs if r["ev"] == "landing" and r["how"] == "landed"}
    for t in taskset["tasks"]:
        c = final.get(t["title"], {})
        paths = t["declared"] + t["undeclared"]
        if all(c.get(p, 0) == 1 for p in paths):
            once += 1
        if t["title"] in pushed:
            lost += sum(1 for p in paths if c.get(p, 0) == 0)
        elif not any(c.get(p, 0) for p in paths):
            unlanded += 1
        dup += sum(c.get(p, 0) - 1 for p in paths if c.get(p, 0) > 1)
    # overlapping writes: a file's write runs from its edit to the landing of
    # the task (or its abandoning); two for different tasks at once overlap.
    open_w: dict[tuple[str, str, str], float] = {}
    spans: list[tuple[str, str, str, float, float]] = []
    kills = {k["agent"]: k["t"] for k in res.get("killed", [])}
    # A landed write ends when the board freed its locks (the lander's
    # "landed" event), not when its agent's `land --wait` poll noticed: in
    # between, another agent may rightly claim and write the path.
    ids = {r["task"]: str(r["id"]) for r in recs if r["ev"] == "claimed"}
    freed = res.get("freed_at") or {}
    for r in sorted(recs, key=lambda r: r["t"]):
        key = (r.get("agent", ""), r.get("task", ""), r.get("path", ""))
        if r["ev"] == "write_start":
            open_w.setdefault(key, r["t"])
        elif r["ev"] == "write_end" and key in open_w:
            end = r["t"]
            if r.get("how") == "landed" and ids.get(key[1]) in freed:
                end = min(end, freed[ids[key[1]]])
            spans.append((key[2], key[0], key[1], open_w.pop(key), end))
    for key, start in open_w.items():  # a killed agent's write ends at its death
        spans.append((key[2], key[0], key[1], start, kills.get(key[0], start)))
    overlaps = 0
    by_path: dict[str, list[tuple[str, str, str, float, float]]] = {}
    for s in spans:
        by_path.setdefault(s[0], []).append(s)
    for ss in by_path.values():
        ss.sort(key=lambda s: s[3])
        for i, a in enumerate(ss):
            for b in ss[i + 1 :]:
                if b[3] >= a[4]:
                    break
                if a[2] != b[2] and a[1] != b[1]:
                    overlaps += 1
    steps: dict[str, list[float]] = {}
    for r in recs:
        if r["ev"] == "step":
            steps.setdefault(r["step"], []).append(r["dt"])
    return {
        "once": once,
        "lost": lost,
        "unlanded": unlanded,
        "dup": dup,
        "overlaps": overlaps,
        "conflicts": sum(1 for r in recs if r["ev"] == "conflict"),
        "returned": sum(1 for r in recs if r["ev"] == "returned"),
        "hook_refusals": sum(1 for r in recs if r["ev"] == "hook_refused"),
        "gave_back": sum(1 for r in recs if r["ev"] == "gave_back"),
        "commit_refused": sum(1 for r in recs if r["ev"] == "commit_refused"),
        "push_refused": sum(1 for r in recs if r["ev"] == "push_refused"),
        "landings": sum(1 for r in recs if r["ev"] == "landing" and r["how"] == "landed"),
        "steps": steps,
    }


def fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def report(
    lac: dict[str, Any], none: dict[str, Any], taskset: dict[str, Any], opts: argparse.Namespace
) -> None:
    a, b = analyse(lac, taskset), analyse(none, taskset)
    print(
        f"\n== backend {lac['backend']}, landing {opts.landing}: {opts.agents} agents, "
        f"{opts.tasks} tasks over "
        f"{opts.files} files, seed {opts.seed}, {opts.crashes} kill -9, think {opts.think} ms =="
    )
    ratio = lac["wall"] / none["wall"] if lac["wall"] and none["wall"] else None
    rows = [
        ("wall time (s)", lac["wall"], none["wall"]),
        ("tasks landed exactly once", f"{a['once']}/{opts.tasks}", f"{b['once']}/{opts.tasks}"),
        ("successful landings (pushes)", a["landings"], b["landings"]),
        ("overlapping writes", a["overlaps"], b["overlaps"]),
        ("conflicting landings/rebases", a["conflicts"], b["conflicts"]),
        ("returned lines", a["returned"], "-"),
        ("lost lines", a["lost"], b["lost"]),
        ("tasks never landed (deadline)", a["unlanded"], b["unlanded"]),
        ("duplicated lines", a["dup"], b["dup"]),
        ("leaked locks", lac.get("leaked_locks"), "-"),
        ("edit-hook refusals / given back", f"{a['hook_refusals']} / {a['gave_back']}", "-"),
        (
            "commits / pushes refused by guards",
            f"{a['commit_refused']} / {a['push_refused']}",
            f"{b['commit_refused']} / {b['push_refused']}",
        ),
        (
            "agents killed (task)",
            ", ".join(f"{k['agent']}({k['task']})" for k in lac.get("killed", [])) or "-",
            ", ".join(f"{k['agent']}({k['task']})" for k in none.get("killed", [])) or "-",
        ),
        ("claims expired by the keeper", lac.get("expired"), "-"),
        ("board states at the end", lac.get("board_states"), "-"),
    ]
    print(f"{'':38} {'lac':>22} {'uncoordinated':>22}")
    for name, x, y in rows:
        print(f"{name:38} {fmt(x):>22} {fmt(y):>22}")
    print(f"ratio lac / uncoordinated wall time: {fmt(ratio)}")
    for r in (lac, none):
        if r["failure"]:
            print(f"FAILURE ({r['arm']}): {r['failure']}")
    print("\nper step, lac run (s):")
    print(f"{'step':12} {'n':>5} {'median':>9} {'total':>9}")
    meds = {}
    for step in ("claim", "edit hook", "commit", "land"):
        xs = a["steps"].get(step, [])
        meds[step] = statistics.median(xs) if xs else 0.0
        print(f"{step:12} {len(xs):5d} {meds[step]:9.3f} {sum(xs):9.2f}")
    per_task = sum(meds.values()) + opts.think / 1000.0
    chain = taskset["longest_chain"]
    print(
        f"serial floor: longest --after chain {chain} x median step time {per_task:.3f} s "
        f"(claim+hook+think+commit+land) = {chain * per_task:.2f} s"
    )
    if lac["wall"]:
        print(
            f"lac wall / serial floor: {lac['wall'] / (chain * per_task):.2f}"
            if chain and per_task
            else ""
        )


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--_worker":
        return worker_main(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--files", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--dsn", default=None, help="PostgreSQL DSN (implies --backend postgres unless given)"
    )
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default=None)
    ap.add_argument("--landing", choices=["push", "queue"], default=None)
    ap.add_argument("--crashes", type=int, default=2)
    ap.add_argument("--think", type=float, default=5.0, help="ms of thinking per task")
    ap.add_argument(
        "--deadline",
        type=float,
        default=None,
        help="seconds an arm may run (default 300, quick 90)",
    )
    ap.add_argument(
        "--quick", action="store_true", help="a small run: 4 agents, 12 tasks, 10 files"
    )
    ap.add_argument("--keep", action="store_true", help="keep the temp dirs")
    opts = ap.parse_args()
    if opts.quick:
        opts.agents, opts.tasks, opts.files = (
            min(opts.agents, 4),
            min(opts.tasks, 12),
            min(opts.files, 10),
        )
        opts.crashes = min(opts.crashes, 1)
    if opts.deadline is None:
        opts.deadline = 90.0 if opts.quick else 300.0
    if opts.backend is None:
        opts.backend = "postgres" if opts.dsn else "sqlite"
    opts.dsn = opts.dsn or DEFAULT_DSN
    if opts.landing is None:
        probe = run(["git", "lac", "land", "-h"], ROOT, timeout=30)
        opts.landing = "queue" if probe.returncode == 0 else "push"
    taskset = make_tasks(opts.tasks, opts.files, opts.seed)
    t = taskset["tasks"]
    print(
        f"task set: {len(t)} tasks, {sum(len(x['undeclared']) for x in t)} undeclared co-changes, "
        f"{sum(CONFIG in x['declared'] for x in t)} touch {CONFIG}, "
        f"{sum(bool(x['after']) for x in t)} with --after, "
        f"longest chain {taskset['longest_chain']}"
    )
    backends = ["sqlite", "postgres"] if opts.backend == "both" else [opts.backend]
    for backend in backends:
        lac = run_arm("lac", opts, taskset, backend)
        none = run_arm("none", opts, taskset, backend)
        report(lac, none, taskset, opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
