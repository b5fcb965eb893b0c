"""Heartbeats, the keeper and drainers: real processes killed for real, on both backends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from git_lacunari.errors import Refused

from .conftest import Boards, Result

Lac = Callable[..., Result]
BIN = str(Path(sys.executable).parent)


def spawn(
    repo: Path, *args: str, agent: str, env: dict[str, str] | None = None, **kw: object
) -> subprocess.Popen[str]:
    """The git-lac process itself (not a `git` wrapper), so signals reach it."""
    env = {
        **os.environ,
        "PATH": BIN + os.pathsep + os.environ["PATH"],
        "LAC_AGENT": agent,
        **(env or {}),
    }
    return subprocess.Popen(
        [str(Path(BIN) / "git-lac"), *args],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,  # type: ignore[call-overload]
    )


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def kinds(lac: Lac, task_id: int) -> list[str]:
    return [
        e["kind"] for e in lac("log", str(task_id), "--json", "--as", "observer").json["events"]
    ]


# --- sweeping ----------------------------------------------------------------


def test_stale_claim_goes_back_with_history_and_attempts(boards: Boards) -> None:
    dana, keeper = boards("dana"), boards("keeper")
    task = dana.add_task("t", writes=["core/"])
    dana.claim(task.id, stale_after=1.5)  # margins wide enough for a loaded CI machine
    assert keeper.sweep() == []
    time.sleep(1.8)
    (fact,) = keeper.sweep()
    assert (fact["task"], fact["previous_owner"], fact["attempts"], fact["locks"]) == (
        task.id,
        "dana",
        1,
        ["core/"],
    )
    assert float(str(fact["silent_for"])) >= 1.5
    shown = keeper.show(task.id)
    assert (shown.state, shown.owner, shown.attempts, shown.locks) == ("open", None, 1, [])
    assert boards("erin").claim(task.id).task.attempts == 2
    assert [e.kind for e in keeper.log(task.id)] == [
        "created",
        "claimed",
        "locked",
        "expired",
        "claimed",
        "locked",
    ]


def test_heartbeat_keeps_a_claim_alive(boards: Boards) -> None:
    dana, keeper = boards("dana"), boards("keeper")
    task = dana.add_task("t")
    dana.claim(task.id, stale_after=1.5)
    for _ in range(6):
        time.sleep(0.4)
        dana.heartbeat()
        assert keeper.sweep() == []
    assert keeper.show(task.id).owner == "dana"


def test_board_default_stale_after_and_stale_flag(boards: Boards) -> None:
    dana = boards("dana")
    dana.set_default_stale_after(1.5)
    task = dana.add_task("t")
    dana.claim(task.id)
    assert not dana.show(task.id).stale
    time.sleep(1.8)
    assert dana.show(task.id).stale and dana.tasks(state="claimed")[0].stale
    assert [f["task"] for f in boards("k").sweep()] == [task.id]


def test_claim_next_sweeps_without_a_keeper(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    task = dana.add_task("t")
    dana.claim(task.id, stale_after=1.5)
    with pytest.raises(Refused):
        erin.claim_next()  # not stale yet: nothing to claim
    time.sleep(1.8)
    late = boards("erin")  # a new process: it sweeps on its first claim
    assert late.claim_next().task.id == task.id


def test_claim_next_wait_wakes_for_new_work(boards: Boards, lac: Lac) -> None:
    waiter = spawn(boards.repo, "claim", "--next", "--wait", "20", "--json", agent="waiter")
    time.sleep(1.0)
    assert waiter.poll() is None, "it should be waiting"
    assert lac("task", "add", "late work").code == 0
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, err
    assert json.loads(out)["task"]["title"] == "late work"
    started = time.monotonic()
    none = lac("claim", "--next", "--wait", "0.5", "--json")
    assert none.code == 1 and none.json["refused"]["reason"] == "not_found"
    assert time.monotonic() - started >= 0.5


# --- the keeper ------------------------------------------------------------------


def test_one_keeper_per_board(lac: Lac, repo: Path) -> None:
    first = spawn(repo, "keeper", "--interval", "0.2", agent="keeper-one")
    try:
        # Until the first keeper holds the board, a probe sweeps and exits 0.
        wait_for(lambda: lac("keeper", "--once", "--as", "probe").code == 1)
        second = lac("keeper", "--once", "--json", "--as", "keeper-two")
        assert second.code == 1
        assert second.json["refused"]["reason"] == "already_claimed"
        assert "keeper-one" in second.json["refused"]["holder"]
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=10)
    assert lac("keeper", "--once", "--as", "keeper-two").code == 0


# --- drainers -------------------------------------------------------------------------


def drain_log(tmp_path: Path) -> tuple[Path, list[str]]:
    log = tmp_path / "runs.log"
    script = (
        f'echo "start $LAC_TASK_ID $LAC_AGENT $(date +%s.%N)" >> {log}; sleep "${{NAP:-0}}";'
        f' echo "end $LAC_TASK_ID $LAC_AGENT $(date +%s.%N)" >> {log}'
    )
    return log, ["--", "sh", "-c", script]


def intervals(log: Path) -> list[tuple[int, str, float, float]]:
    starts: dict[tuple[str, str], float] = {}
    done = []
    for line in log.read_text().splitlines():
        kind, task, agent, at = line.split()
        if kind == "start":
            starts[task, agent] = float(at)
        else:
            done.append((int(task), agent, starts.pop((task, agent)), float(at)))
    return done


def test_drain_runs_tasks_with_their_environment(lac: Lac, repo: Path, tmp_path: Path) -> None:
    lac("task", "add", "one", "--lane", "build", "--write", "out/a")
    lac("task", "add", "two", "--lane", "build")
    seen = tmp_path / "env.json"
    script = (
        f'python3 -c \'import json,os; open("{seen}","a").write(json.dumps('
        '{k: os.environ[k] for k in ("LAC_TASK_ID","LAC_TASK_TITLE","LAC_LANE","LAC_AGENT",'
        '"LAC_TASK_PATHS")})+"\\n")\''
    )
    result = lac("drain", "--lane", "build", "--json", "--as", "d1", "--", "sh", "-c", script)
    assert result.code == 0, result.err
    assert result.json["done"] == [1, 2]
    envs = [json.loads(line) for line in seen.read_text().splitlines()]
    assert envs[0] == {
        "LAC_TASK_ID": "1",
        "LAC_TASK_TITLE": "one",
        "LAC_LANE": "build",
        "LAC_AGENT": "d1",
        "LAC_TASK_PATHS": '[["out/a", "write"]]',
    }
    assert [t["state"] for t in lac("tasks", "--json").json["tasks"]] == ["done", "done"]


def test_failures_are_retried_then_parked(lac: Lac, repo: Path) -> None:
    from .conftest import git

    git(repo, "config", "lac.maxAttempts", "2")
    lac("task", "add", "flaky", "--lane", "x")
    result = lac("drain", "--lane", "x", "--json", "--", "sh", "-c", "exit 3")
    assert result.code == 0 and result.json["failed"] == [1, 1] and result.json["parked"] == [1]
    assert lac("show", "1", "--json").json["task"]["state"] == "parked"
    assert kinds(lac, 1) == ["created", "claimed", "failed", "claimed", "failed", "parked"]
    failed = [e for e in lac("log", "1", "--json").json["events"] if e["kind"] == "failed"]
    assert failed[0]["detail"]["exit_code"] == 3


def test_sigterm_releases_the_task_at_once(lac: Lac, repo: Path, tmp_path: Path) -> None:
    lac("task", "add", "long", "--lane", "x", "--write", "core/")
    drainer = spawn(repo, "drain", "--lane", "x", "--", "sleep", "60", agent="d1")
    wait_for(lambda: lac("show", "1", "--json", "--as", "obs").json["task"]["state"] == "claimed")
    drainer.send_signal(signal.SIGTERM)
    drainer.wait(timeout=20)
    assert drainer.returncode == 128 + 15
    shown = lac("show", "1", "--json", "--as", "obs").json["task"]
    assert (shown["state"], shown["locks"]) == ("open", [])
    assert kinds(lac, 1)[-1] == "released"


def test_sigkill_mid_task_recovered_by_the_keeper(lac: Lac, repo: Path, tmp_path: Path) -> None:
    assert lac("init", "--stale-after", "1s").code == 0
    lac("task", "add", "crashy", "--lane", "x", "--write", "core/auth.py")
    log, cmd = drain_log(tmp_path)
    victim = spawn(
        repo,
        "drain",
        "--lane",
        "x",
        *cmd,
        agent="victim",
        env={"NAP": "60"},
        start_new_session=True,
    )
    wait_for(lambda: log.exists() and "start 1 victim" in log.read_text())
    os.killpg(victim.pid, signal.SIGKILL)  # the drainer and its command, as a crash would
    victim.wait()
    keeper = spawn(repo, "keeper", "--interval", "0.3", agent="keeper")
    try:
        wait_for(
            lambda: lac("show", "1", "--json", "--as", "obs").json["task"]["state"] == "open",
            timeout=20,
        )
        assert lac("locks", "--json", "--as", "obs").json["locks"] == []
        rescue = lac("drain", "--lane", "x", "--once", "--as", "rescuer", *cmd)
        assert rescue.code == 0, rescue.err
    finally:
        keeper.send_signal(signal.SIGTERM)
        keeper.wait(timeout=10)
    assert kinds(lac, 1) == ["created", "claimed", "locked", "expired", "claimed", "locked", "done"]
    expired = [e for e in lac("log", "1", "--json").json["events"] if e["kind"] == "expired"][0]
    assert expired["detail"]["previous_owner"] == "victim"


def test_one_drainer_per_lane_never_two_tasks_at_once(lac: Lac, repo: Path, tmp_path: Path) -> None:
    for n in range(6):
        lac("task", "add", f"job {n}", "--lane", "solo")
    log, cmd = drain_log(tmp_path)
    procs = [
        spawn(repo, "drain", "--lane", "solo", *cmd, agent=name, env={"NAP": "0.2"})
        for name in ("d1", "d2")
    ]
    wait_for(lambda: log.exists() and "start" in log.read_text())
    busy = lac("drain", "--lane", "solo", "--once", "--json", "--as", "d3", *cmd)
    assert busy.code == 1 and busy.json["refused"]["reason"] == "already_claimed"
    for proc in procs:
        proc.wait(timeout=60)
        assert proc.returncode == 0
    runs = sorted(intervals(log), key=lambda r: r[2])
    assert sorted(r[0] for r in runs) == [1, 2, 3, 4, 5, 6]
    for before, after in zip(runs, runs[1:], strict=False):
        assert before[3] <= after[2], f"two tasks of the lane ran at once: {before} {after}"


def test_postgres_connection_terminated_under_a_drainer(
    repo: Path, tmp_path: Path, pg_server: str
) -> None:
    from .conftest import lac_inprocess, pg_schema

    with pg_schema(pg_server) as board_url:
        assert lac_inprocess(repo, "init", "--url", board_url).code == 0

        def lac(*args: str) -> Result:
            return lac_inprocess(repo, *args)

        _terminated_under_a_drainer(lac, repo, tmp_path, board_url)


def _terminated_under_a_drainer(lac: Lac, repo: Path, tmp_path: Path, board_url: str) -> None:
    import psycopg

    lac("task", "add", "survive", "--lane", "x")
    log, cmd = drain_log(tmp_path)
    # PGAPPNAME marks the drainer's connections, so only they are cut.
    extra = {"NAP": "2", "PGAPPNAME": "lac-sturdy-drainer"}
    drainer = spawn(repo, "drain", "--lane", "x", *cmd, agent="sturdy", env=extra)
    wait_for(lambda: log.exists() and "start 1" in log.read_text())
    with psycopg.connect(board_url, autocommit=True) as conn:
        killed = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = 'lac-sturdy-drainer'"
            " AND query NOT ILIKE '%advisory_lock%'"
        ).fetchone()
    assert killed is not None and killed[0] >= 1
    _, err = drainer.communicate(timeout=60)
    assert drainer.returncode == 0, err
    assert "Traceback" not in err
    shown = lac("show", "1", "--json", "--as", "obs").json["task"]
    assert shown["state"] == "done", err


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["keeper", "--once", "--interval", "-1s"],
        ["keeper", "--once", "--stale-after", "forever"],
        ["claim", "--next", "--wait", "-3"],
        ["claim", "--next", "--stale-after", "0"],
        ["init", "--stale-after", "1x"],
        ["drain", "--lane", "x"],
        ["drain", "--lane", "x", "--"],
        ["drain", "--lane", "", "--", "true"],
        ["drain", "--lane", "a\x01b", "--", "true"],
        ["drain", "--lane", "x", "--max", "0", "--", "true"],
    ],
)
def test_bad_liveness_input_exit_2_nothing_claimed(lac: Lac, args: list[str]) -> None:
    lac("task", "add", "bait", "--lane", "x")
    result = lac(*args)
    assert result.code == 2, result
    assert "Traceback" not in result.err and result.err.strip()
    assert lac("show", "1", "--json").json["task"]["state"] == "open"
