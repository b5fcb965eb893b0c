"""Heartbeats, the keeper and drainers: real processes killed for real, on both backends.

No test here sleeps to let time pass. A claim goes stale because its
heartbeat is moved back through the store (``Boards.backdate``), with a margin
of minutes either side of its stale-after; a real process is observed by
polling for the event it must cause, under a generous deadline; a command a
drainer runs waits on a gate file the test opens, not on a nap it hopes is
long enough.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from git_lacunari.errors import Refused

from .conftest import Boards, Result, board_sql, lac_inprocess, pg_schema

Lac = Callable[..., Result]
Spawn = Callable[..., "subprocess.Popen[str]"]
BIN = str(Path(sys.executable).parent)
# How long a test waits for a real process to do what it must. Generous: it
# bounds a failure, it is not a margin anything passes by.
DEADLINE_S = 60.0
# Far beyond any test's run time: a claim with it goes stale only if moved back.
LONG_S = 3600.0


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """Start the git-lac process itself (not a `git` wrapper, so signals reach
    it), each in a session of its own; whatever is still running when the test
    ends is killed with its children, so a failed test leaves nothing behind."""
    started: list[subprocess.Popen[str]] = []

    def start(
        repo: Path, *args: str, agent: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        full_env = {
            **os.environ,
            "PATH": BIN + os.pathsep + os.environ["PATH"],
            "LAC_AGENT": agent,
            **(env or {}),
        }
        proc = subprocess.Popen(
            [str(Path(BIN) / "git-lac"), *args],
            cwd=repo,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=DEADLINE_S)


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = DEADLINE_S) -> None:
    """Poll until ``predicate()`` holds; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout:.0f}s: {what}")
        time.sleep(0.02)


def kinds(lac: Lac, task_id: int) -> list[str]:
    return [
        e["kind"] for e in lac("log", str(task_id), "--json", "--as", "observer").json["events"]
    ]


# --- sweeping ----------------------------------------------------------------


def test_stale_claim_goes_back_with_history_and_attempts(boards: Boards) -> None:
    dana, keeper = boards("dana"), boards("keeper")
    task = dana.add_task("t", writes=["core/"])
    dana.claim(task.id, stale_after=60)
    assert keeper.sweep() == []
    boards.backdate(task.id, 50)  # silent 50s of its 60: alive
    assert keeper.sweep() == []
    boards.backdate(task.id, 20)  # 70s: stale by its own stale-after (the board's is 30m)
    (fact,) = keeper.sweep()
    assert (fact["task"], fact["previous_owner"], fact["attempts"], fact["locks"]) == (
        task.id,
        "dana",
        1,
        ["core/"],
    )
    assert 70 <= float(str(fact["silent_for"])) < 70 + DEADLINE_S
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
    dana.claim(task.id, stale_after=60)
    boards.backdate(task.id, LONG_S)
    assert keeper.show(task.id).stale, "the set-up: without a heartbeat it would be swept"
    assert dana.heartbeat() == [task.id]
    assert not keeper.show(task.id).stale
    assert keeper.sweep() == []
    assert keeper.show(task.id).owner == "dana"


def test_board_default_stale_after_and_stale_flag(boards: Boards) -> None:
    dana, observer = boards("dana"), boards("observer")
    dana.set_default_stale_after(600)
    task = dana.add_task("t")
    dana.claim(task.id)
    assert not observer.show(task.id).stale
    boards.backdate(task.id, 590)  # alive by the board's 10m
    assert not observer.show(task.id).stale and not observer.tasks(state="claimed")[0].stale
    assert boards("k").sweep() == []
    boards.backdate(task.id, 20)  # 610s: stale by the board's 10m, not by the built-in 30m
    assert observer.show(task.id).stale and observer.tasks(state="claimed")[0].stale
    assert [f["task"] for f in boards("k").sweep()] == [task.id]


def test_claim_next_sweeps_without_a_keeper(boards: Boards) -> None:
    dana, erin = boards("dana"), boards("erin")
    task = dana.add_task("t")
    dana.claim(task.id, stale_after=60)
    with pytest.raises(Refused):
        erin.claim_next()  # not stale yet: nothing to claim
    boards.backdate(task.id, 120)
    late = boards("erin")  # a new process: it sweeps on its first claim
    assert late.claim_next().task.id == task.id


def test_claim_next_wait_wakes_for_new_work(boards: Boards, lac: Lac, spawn: Spawn) -> None:
    waiter = spawn(
        boards.repo, "claim", "--next", "--wait", str(DEADLINE_S), "--json", agent="waiter"
    )
    probe = boards.store()
    # Registered on the board means its first claim attempt is under way.
    wait_for(
        lambda: (
            waiter.poll() is not None
            or board_sql(probe, "SELECT name FROM lac_agents WHERE name = 'waiter'") != []
        ),
        "the waiter registers on the board",
    )
    assert waiter.poll() is None, "it should be waiting"
    assert lac("task", "add", "late work").code == 0
    out, err = waiter.communicate(timeout=DEADLINE_S)
    assert waiter.returncode == 0, err
    assert json.loads(out)["task"]["title"] == "late work"
    started = time.monotonic()
    none = lac("claim", "--next", "--wait", "0.5", "--json")
    assert none.code == 1 and none.json["refused"]["reason"] == "not_found"
    assert time.monotonic() - started >= 0.5


def test_postgres_wait_is_woken_by_notify_not_by_the_poll_fallback(
    repo: Path, pg_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The waiter must have its task in half the polling fallback, counted from
    before its first attempt: polling cannot wake it that soon, so only a real
    notification passes (break `notify_work` and this fails). The fallback is
    stretched to 30 s here, so a loaded machine's slow start-up cannot be
    mistaken for a missing notification."""
    from git_lacunari.store import postgres as pg_store

    monkeypatch.setattr(pg_store, "POLL_FALLBACK_S", 30.0)
    fallback = pg_store.POLL_FALLBACK_S
    app = f"lac-waiter-{uuid.uuid4().hex[:12]}"
    with pg_schema(pg_server) as url:
        boards = Boards(repo, url, [])
        try:
            dana, probe = boards("dana"), boards.store()
            waiter = Boards(repo, f"{url}&application_name={app}", boards.opened)("waiter")
            got: dict[str, Any] = {}

            def wait() -> None:
                started = time.monotonic()
                try:
                    got["claim"] = waiter.claim_next(wait=DEADLINE_S)
                except BaseException as exc:  # reported below, never lost in the thread
                    got["error"] = exc
                got["took"] = time.monotonic() - started

            thread = threading.Thread(target=wait, daemon=True)
            thread.start()
            wait_for(
                lambda: (
                    not thread.is_alive()
                    or board_sql(
                        probe,
                        "SELECT pid FROM pg_stat_activity WHERE application_name = :app"
                        " AND state = 'idle' AND query ILIKE '%LISTEN%'",
                        app=app,
                    )
                    != []
                ),
                "the waiter LISTENs",
            )
            dana.add_task("late work")
            thread.join(DEADLINE_S + 10)
            assert not thread.is_alive(), "the waiter never returned"
            assert "error" not in got, got["error"]
            assert got["claim"].task.title == "late work"
            took = got["took"]
            assert took < fallback / 3, f"woken after {took:.2f}s: by polling, not by NOTIFY"
        finally:
            for store in boards.opened:
                store.close()


# --- the keeper ------------------------------------------------------------------


def test_one_keeper_per_board(lac: Lac, repo: Path, spawn: Spawn) -> None:
    first = spawn(repo, "keeper", "--interval", "0.2", agent="keeper-one")
    # Until the first keeper holds the board, a probe sweeps and exits 0.
    wait_for(lambda: lac("keeper", "--once", "--as", "probe").code == 1, "the first keeper holds")
    second = lac("keeper", "--once", "--json", "--as", "keeper-two")
    assert second.code == 1
    assert second.json["refused"]["reason"] == "already_claimed"
    assert "keeper-one" in second.json["refused"]["holder"]
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=DEADLINE_S)
    assert lac("keeper", "--once", "--as", "keeper-two").code == 0


# --- drainers -------------------------------------------------------------------------


def drain_log(tmp_path: Path) -> tuple[Path, list[str]]:
    """A command for drainers that logs its start and end, and in between waits
    for the file ``$GATE`` when one is named (so a test decides when a task
    ends, instead of guessing a nap long enough)."""
    log = tmp_path / "runs.log"
    script = (
        f'echo "start $LAC_TASK_ID $LAC_AGENT $(date +%s.%N)" >> {log};'
        ' if [ -n "$GATE" ]; then i=0;'
        f' while [ ! -e "$GATE" ] && [ $i -lt {int(DEADLINE_S * 20)} ];'
        " do sleep 0.05; i=$((i+1)); done; fi;"
        f' echo "end $LAC_TASK_ID $LAC_AGENT $(date +%s.%N)" >> {log}'
    )
    return log, ["--", "sh", "-c", script]


def logged(log: Path, text: str) -> bool:
    return log.exists() and text in log.read_text()


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
    assert [t["state"] for t in lac("tasks", "--all", "--json").json["tasks"]] == ["done", "done"]


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


def test_sigterm_releases_the_task_at_once(
    lac: Lac, repo: Path, tmp_path: Path, spawn: Spawn
) -> None:
    lac("task", "add", "long", "--lane", "x", "--write", "core/")
    log, cmd = drain_log(tmp_path)
    drainer = spawn(
        repo, "drain", "--lane", "x", *cmd, agent="d1", env={"GATE": str(tmp_path / "never-opened")}
    )
    wait_for(lambda: logged(log, "start 1 d1"), "the drainer runs the task's command")
    drainer.send_signal(signal.SIGTERM)
    drainer.wait(timeout=DEADLINE_S)
    assert drainer.returncode == 128 + 15
    shown = lac("show", "1", "--json", "--as", "obs").json["task"]
    assert (shown["state"], shown["locks"]) == ("open", [])
    assert kinds(lac, 1)[-1] == "released"


def test_sigkill_mid_task_recovered_by_the_keeper(
    lac: Lac, boards: Boards, repo: Path, tmp_path: Path, spawn: Spawn
) -> None:
    lac("task", "add", "crashy", "--lane", "x", "--write", "core/auth.py")
    log, cmd = drain_log(tmp_path)
    victim = spawn(
        repo,
        "drain",
        "--lane",
        "x",
        *cmd,
        agent="victim",
        env={"GATE": str(tmp_path / "never-opened")},
    )
    wait_for(lambda: logged(log, "start 1 victim"), "the victim runs the task's command")
    os.killpg(victim.pid, signal.SIGKILL)  # the drainer and its command, as a crash would
    victim.wait(timeout=DEADLINE_S)
    # Dead, it heartbeats no more; an hour of silence is stale by the board's 30m.
    boards.backdate(1, LONG_S)
    keeper = spawn(repo, "keeper", "--interval", "0.2", agent="keeper")
    wait_for(
        lambda: lac("show", "1", "--json", "--as", "obs").json["task"]["state"] == "open",
        "the keeper expires the dead drainer's claim",
    )
    assert lac("locks", "--json", "--as", "obs").json["locks"] == []
    rescue = lac("drain", "--lane", "x", "--once", "--as", "rescuer", *cmd)
    assert rescue.code == 0, rescue.err
    keeper.send_signal(signal.SIGTERM)
    keeper.wait(timeout=DEADLINE_S)
    assert kinds(lac, 1) == ["created", "claimed", "locked", "expired", "claimed", "locked", "done"]
    expired = [e for e in lac("log", "1", "--json").json["events"] if e["kind"] == "expired"][0]
    assert expired["detail"]["previous_owner"] == "victim"
    assert expired["detail"]["silent_for"] >= LONG_S


def test_one_drainer_per_lane_never_two_tasks_at_once(
    lac: Lac, repo: Path, tmp_path: Path, spawn: Spawn
) -> None:
    for n in range(6):
        lac("task", "add", f"job {n}", "--lane", "solo")
    log, cmd = drain_log(tmp_path)
    gate = tmp_path / "gate"
    procs = [
        spawn(repo, "drain", "--lane", "solo", *cmd, agent=name, env={"GATE": str(gate)})
        for name in ("d1", "d2")
    ]
    wait_for(lambda: logged(log, "start"), "one drainer runs a task")
    # The first task is held open by the gate: the lane is busy for certain.
    busy = lac("drain", "--lane", "solo", "--once", "--json", "--as", "d3", *cmd)
    assert busy.code == 1 and busy.json["refused"]["reason"] == "already_claimed"
    assert log.read_text().count("start") == 1, "a second drainer started a task"
    gate.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=DEADLINE_S)
        assert proc.returncode == 0, err
    runs = sorted(intervals(log), key=lambda r: r[2])
    assert sorted(r[0] for r in runs) == [1, 2, 3, 4, 5, 6]
    for before, after in zip(runs, runs[1:], strict=False):
        assert before[3] <= after[2], f"two tasks of the lane ran at once: {before} {after}"


def test_postgres_connection_terminated_under_a_drainer(
    repo: Path, tmp_path: Path, pg_server: str, spawn: Spawn
) -> None:
    with pg_schema(pg_server) as board_url:
        assert lac_inprocess(repo, "init", "--url", board_url).code == 0

        def lac(*args: str) -> Result:
            return lac_inprocess(repo, *args)

        _terminated_under_a_drainer(lac, repo, tmp_path, board_url, spawn)


def _terminated_under_a_drainer(
    lac: Lac, repo: Path, tmp_path: Path, board_url: str, spawn: Spawn
) -> None:
    import psycopg

    lac("task", "add", "survive", "--lane", "x")
    log, cmd = drain_log(tmp_path)
    gate = tmp_path / "gate"
    # PGAPPNAME marks the drainer's connections, so only they are cut.
    app = f"lac-sturdy-{uuid.uuid4().hex[:12]}"
    extra = {"GATE": str(gate), "PGAPPNAME": app}
    drainer = spawn(repo, "drain", "--lane", "x", *cmd, agent="sturdy", env=extra)
    wait_for(lambda: logged(log, "start 1"), "the drainer runs the task's command")
    # The command is held by the gate, so the cut lands mid-task for certain.
    with psycopg.connect(board_url, autocommit=True) as conn:
        killed = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = %s AND query NOT ILIKE '%%advisory_lock%%'",
            (app,),
        ).fetchone()
    assert killed is not None and killed[0] >= 1
    gate.touch()
    _, err = drainer.communicate(timeout=DEADLINE_S)
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
