"""Races between real OS processes, on both backends.

Each worker is a forked process with its own connection; a barrier lines
them up so every round really is simultaneous.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import queue as queues
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from git_lacunari.board import Board
from git_lacunari.errors import Refused
from git_lacunari.identity import Identity
from git_lacunari.model import LockMode
from git_lacunari.repo import discover
from git_lacunari.store import open_store

from .conftest import bare_schema, lac_process, pg_schema

FORK = mp.get_context("fork")
BARRIER_TIMEOUT_S = 300


# A team board (issue 11) is named to the workers as TEAM|PREFIX|URL, URL's
# user being {role}: each worker connects as its own role, PREFIX + its name.
TEAM = "team|"


# A board behind PgBouncer in transaction pooling mode (issue 24) is named
# PGBOUNCER|SCHEMA|URL: URL through the pooler, the board chosen by name (the
# pooler refuses a search_path passed as a startup option).
PGBOUNCER = "pgbouncer|"


def open_board(repo: Path, url: str | None, agent: str) -> Board:
    where = discover(repo)
    if url and url.startswith(TEAM):
        _, prefix, template = url.split("|", 2)
        agent = prefix + agent
        url = template.replace("{role}", agent)
    if url and url.startswith(PGBOUNCER):
        _, schema, through = url.split("|", 2)
        store = open_store(
            through, where.common_dir, create=True, board=schema, pooler="transaction"
        )
        return Board(store, Identity(agent, "test", (), "test"), blob_ids=where.blob_ids)
    store = open_store(url, where.common_dir, create=True)
    return Board(store, Identity(agent, "test", (), "test"), blob_ids=where.blob_ids)


RACE_ROLES = (
    ["setup", "checker"]
    + [f"racer-{i}" for i in range(50)]
    + [f"drainer-{i}" for i in range(32)]
    + [f"locker-{i}" for i in range(20)]
)


@pytest.fixture(params=["sqlite", "postgres", "team", "pgbouncer"])
def race_url(request: pytest.FixtureRequest, repo: Path) -> Iterator[str | None]:
    """The board the race tests run on: embedded, PostgreSQL, PostgreSQL in
    team mode with one role per process (row-level security on), and
    PostgreSQL through a real PgBouncer in transaction pooling mode."""
    if request.param == "sqlite":
        yield None
        return
    server = request.getfixturevalue("pg_server")
    if request.param == "pgbouncer":
        through = request.getfixturevalue("pgbouncer_server")
        with bare_schema(server) as schema:
            yield f"{PGBOUNCER}{schema}|{through}"
        return
    if request.param == "postgres":
        with pg_schema(server) as url:
            yield url
        return
    from .team_fixtures import team_board

    with team_board(server) as crew:
        for base in RACE_ROLES:
            crew.add(base)
        yield f"{TEAM}{crew.prefix}|{crew.url_of('{role}')}"


def run_workers(target: Any, count: int, *args: Any) -> list[Any]:
    """Start ``count`` processes of ``target(index, *args, queue)``; gather what they put.

    A worker that dies without reporting (a crash no ``except`` sees) fails the
    test at once instead of leaving it waiting out the deadline; whatever is
    still running when the test ends is killed."""
    queue = FORK.Queue()
    procs = [FORK.Process(target=target, args=(i, *args, queue)) for i in range(count)]
    results: list[Any] = []
    deadline = time.monotonic() + BARRIER_TIMEOUT_S * 2
    try:
        for proc in procs:
            proc.start()
        while len(results) < count:
            try:
                results.append(queue.get(timeout=0.5))
            except queues.Empty:
                crashed = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                assert not crashed, f"a worker died without reporting (exit {crashed[0]})"
                assert any(p.is_alive() for p in procs), "every worker exited, some unreported"
                assert time.monotonic() < deadline, "the workers did not report in time"
        for proc in procs:
            proc.join(timeout=60)
            assert proc.exitcode == 0, f"worker exited with {proc.exitcode}"
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
                proc.join()
    errors = [r for r in results if isinstance(r, str)]
    assert not errors, errors[0]
    return results


def _guarded(body: Any) -> Any:
    def worker(index: int, *args: Any) -> None:
        queue = args[-1]
        try:
            queue.put(body(index, *args[:-1]))
        except BaseException as exc:  # report, never hang the parent
            import traceback

            queue.put("".join(traceback.format_exception(exc)))

    return worker


def _claim_same(
    index: int, repo: Path, url: str | None, task_ids: list[int], barrier: Any
) -> list[tuple[int, str, str | None, Any]]:
    board = open_board(repo, url, f"racer-{index}")
    agent = board.agent
    seen: list[tuple[int, str, str | None, Any]] = []
    for task_id in task_ids:
        barrier.wait(BARRIER_TIMEOUT_S)
        try:
            board.claim(task_id)
            seen.append((task_id, agent, None, None))
        except Refused as exc:
            seen.append((task_id, agent, exc.reason, exc.facts.get("holder")))
    return seen


claim_same_worker = _guarded(_claim_same)


@pytest.mark.slow
def test_fifty_processes_claim_one_task_hundred_times(repo: Path, race_url: str | None) -> None:
    processes, rounds = 50, 100
    setup = open_board(repo, race_url, "setup")
    task_ids = [setup.add_task(f"contested {r}").id for r in range(rounds)]
    setup.store.close()
    results = run_workers(
        claim_same_worker, processes, repo, race_url, task_ids, FORK.Barrier(processes)
    )
    outcomes = [row for worker in results for row in worker]
    assert len(outcomes) == processes * rounds
    checker = open_board(repo, race_url, "checker")
    for task_id in task_ids:
        rows = [r for r in outcomes if r[0] == task_id]
        winners = [agent for _, agent, reason, _ in rows if reason is None]
        assert len(winners) == 1, (task_id, winners)
        losers = [(reason, holder) for _, _, reason, holder in rows if reason is not None]
        assert losers == [("already_claimed", winners[0])] * (processes - 1)
        assert checker.show(task_id).owner == winners[0]


def _drain(index: int, repo: Path, url: str | None, barrier: Any) -> list[int]:
    board = open_board(repo, url, f"drainer-{index}")
    barrier.wait(BARRIER_TIMEOUT_S)
    claimed = []
    while True:
        try:
            claimed.append(board.claim_next().task.id)
        except Refused as exc:
            assert exc.reason == "not_found"
            return claimed


drain_worker = _guarded(_drain)


@pytest.mark.slow
def test_thirty_two_processes_drain_two_thousand_tasks(repo: Path, race_url: str | None) -> None:
    processes, total = 32, 2000
    setup = open_board(repo, race_url, "setup")
    with setup.store.write():
        task_ids = [setup.add_task(f"job {n}", priority=n % 7).id for n in range(total)]
    setup.store.close()
    results = run_workers(drain_worker, processes, repo, race_url, FORK.Barrier(processes))
    claimed = Counter(task_id for worker in results for task_id in worker)
    assert sorted(claimed) == sorted(task_ids), "some task was left behind"
    assert max(claimed.values()) == 1, "some task was claimed twice"
    assert sum(1 for worker in results if worker) > 1, "only one drainer ever won"
    checker = open_board(repo, race_url, "checker")
    assert checker.tasks(state="open") == []


OVERLAPPING = ["src/core/auth.py", "src/core/", "src/**/*.py", "src/core/a*.py", "src"]


def _lock_race(
    index: int, repo: Path, url: str | None, rounds: int, readers: bool, barrier: Any
) -> list[tuple[int, str, bool]]:
    board = open_board(repo, url, f"locker-{index}")
    reading = readers and index % 2 == 0
    pattern = "src/core/auth.py" if reading else OVERLAPPING[index % len(OVERLAPPING)]
    seen = []
    for round_no in range(rounds):
        barrier.wait(BARRIER_TIMEOUT_S)
        try:
            board.lock([pattern], mode=LockMode.READ if reading else LockMode.WRITE)
            won = True
        except Refused as exc:
            assert exc.reason == "path_locked"
            won = False
        seen.append((round_no, "r" if reading else "w", won))
        barrier.wait(BARRIER_TIMEOUT_S)  # everyone has tried: the grants of this round stand
        if won:
            board.unlock([pattern])
        barrier.wait(BARRIER_TIMEOUT_S)
    return seen


lock_race_worker = _guarded(_lock_race)


@pytest.mark.slow
@pytest.mark.parametrize("readers", [False, True], ids=["writers", "readers-and-writers"])
def test_overlapping_write_locks_never_granted_twice(
    repo: Path, race_url: str | None, readers: bool
) -> None:
    processes, rounds = 20, 40
    results = run_workers(
        lock_race_worker, processes, repo, race_url, rounds, readers, FORK.Barrier(processes)
    )
    for round_no in range(rounds):
        rows = [r for worker in results for r in worker if r[0] == round_no]
        writers = sum(1 for _, mode, won in rows if won and mode == "w")
        reader_wins = sum(1 for _, mode, won in rows if won and mode == "r")
        if readers:
            assert (writers == 1 and reader_wins == 0) or (writers == 0 and reader_wins >= 1), rows
        else:
            assert writers == 1, rows


def finished(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=120)
    return proc.returncode, out


def test_cli_processes_race_for_one_task(repo: Path, board_url: str | None) -> None:
    """Whole `git lac claim` processes, as agents really run them."""
    init = ["init"] + (["--url", board_url] if board_url else [])
    assert lac_process(repo, *init).code == 0
    assert lac_process(repo, "task", "add", "contested").code == 0
    env_path = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": env_path + os.pathsep + os.environ["PATH"]}
    procs = [
        subprocess.Popen(
            ["git", "lac", "claim", "1", "--as", f"cli-{i}", "--json"],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(10)
    ]
    try:
        outputs = [finished(proc) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    codes = Counter(code for code, _ in outputs)
    assert codes == Counter({0: 1, 1: 9}), outputs
    winner = next(json.loads(out)["task"]["owner"] for code, out in outputs if code == 0)
    for code, out in outputs:
        if code == 1:
            assert json.loads(out)["refused"] == {
                "reason": "already_claimed",
                "task": 1,
                "holder": winner,
                "where": None,
            }
