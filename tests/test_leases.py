"""Honest leases: a claim lost to a force release or to the keeper's expiry
is told by the next `git lac` command run in its working tree and by the next
edit hook call, in the harness's protocol; `claim --max-age` caps a claim's
life from when it was made, heartbeats or not. Both backends, real `git`
and `git-lac` processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Boards, Result, lac_process

Lac = Callable[..., Result]
AT = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
BIN = str(Path(sys.executable).parent)


def run(repo: Path, *args: str, agent: str) -> Result:
    """`git lac ARGS` as a real `git` process, as ``agent``."""
    return lac_process(repo, *args, env={"LAC_AGENT": agent})


def hook(repo: Path, harness: str, payload: dict[str, Any], *, agent: str) -> Result:
    """The edit hook as a harness runs it: `git-lac guard edit --harness H`
    with the payload on stdin, the project's directory in the environment."""
    env = {
        **os.environ,
        "LAC_AGENT": agent,
        "PATH": BIN + os.pathsep + os.environ["PATH"],
        "CLAUDE_PROJECT_DIR": str(repo),
        "GEMINI_PROJECT_DIR": str(repo),
    }
    proc = subprocess.run(
        [str(Path(BIN) / "git-lac"), "guard", "edit", "--harness", harness],
        cwd=repo,
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def claude_write(repo: Path, rel: str) -> dict[str, Any]:
    """Claude Code's PreToolUse payload for a Write (hooks reference)."""
    return {
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(repo / rel), "content": "x\n"},
        "tool_use_id": "toolu_1",
    }


def gemini_write(repo: Path, rel: str) -> dict[str, Any]:
    """Gemini CLI's BeforeTool payload for write_file (hooks reference)."""
    return {
        "session_id": "s1",
        "transcript_path": "/tmp/t.json",
        "cwd": str(repo),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-01-01T00:00:00Z",
        "tool_name": "write_file",
        "tool_input": {"file_path": str(repo / rel), "content": "x\n"},
    }


@pytest.fixture
def released(lac: Lac, repo: Path) -> Path:
    """dana claims #1 (writing src/x.py) in the repository; erin releases it by force."""
    assert run(repo, "task", "add", "fix login", "--write", "src/x.py", agent="ann").code == 0
    assert run(repo, "claim", "1", agent="dana").code == 0
    forced = run(repo, "release", "1", "--force", "--reason", "dana is away", agent="erin")
    assert forced.code == 0, forced.err
    return repo


RELEASED = (
    rf"your claim of task #1 was released by erin at {AT} \(force: dana is away\);"
    r" its locks went with it: src/x\.py"
)


def test_a_force_release_is_told_by_the_next_tasks_once(released: Path) -> None:
    repo = released
    listed = run(repo, "tasks", "--json", agent="dana")
    assert listed.code == 0, listed.err
    (notice,) = listed.json["notices"]
    assert (notice["kind"], notice["by"], notice["task"], notice["locks"]) == (
        "force_released",
        "erin",
        1,
        ["src/x.py"],
    )
    assert re.fullmatch(RELEASED, notice["message"]), notice
    assert re.fullmatch(rf"git lac: {RELEASED}", listed.err.strip()), listed.err
    assert [t["id"] for t in listed.json["tasks"]] == [1]  # the verb's own answer is whole
    # Told once in this working tree, whichever command runs next.
    again = run(repo, "tasks", agent="dana")
    assert again.code == 0 and again.err == "", again.err
    assert "notices" not in run(repo, "show", "1", "--json", agent="dana").json
    # Another agent's commands here tell it nothing: it was not theirs.
    other = run(repo, "tasks", "--json", agent="ann")
    assert other.code == 0 and other.err == "" and "notices" not in other.json


def test_a_refused_command_tells_too(released: Path) -> None:
    """The next command tells even when the board refuses it: the notice
    under the refusal on stderr, and beside it in the refusal's JSON."""
    repo = released
    refused = run(repo, "claim", "99", "--json", agent="dana")
    assert refused.code == 1, refused
    body = refused.json
    assert body["refused"]["reason"] == "not_found"
    (notice,) = body["notices"]
    assert re.fullmatch(RELEASED, notice["message"]), notice
    lines = refused.err.strip().splitlines()
    assert lines[0] == "refused: no task #99 on this board", lines
    assert re.fullmatch(rf"git lac: {RELEASED}", lines[1]), lines
    # Told: the next command says nothing more.
    assert "notices" not in run(repo, "tasks", "--json", agent="dana").json


def test_the_fast_claim_next_tells(released: Path) -> None:
    """`claim --next` with no other option skips click (entry.py): it tells too."""
    plain = run(released, "claim", "--next", "--lane", "empty", agent="dana")
    assert plain.code == 1
    assert re.fullmatch(rf"git lac: {RELEASED}", plain.err.strip().splitlines()[1]), plain.err


def test_the_next_command_tells_even_when_it_is_show(released: Path) -> None:
    shown = run(released, "show", "1", agent="dana")
    assert shown.code == 0, shown.err
    assert re.fullmatch(rf"git lac: {RELEASED}", shown.err.strip()), shown.err
    assert shown.out.startswith("task #1: fix login")


def test_a_force_release_is_told_by_the_next_edit_hook_call_claude_code(released: Path) -> None:
    repo = released
    # The command line told it first: the edit hook tells it all the same
    # (an agent that only edits never reads a command's stderr).
    assert re.search(RELEASED, run(repo, "tasks", agent="dana").err)
    # An edit of another path: allowed, the notice as context for the model.
    other = hook(repo, "claude-code", claude_write(repo, "docs/notes.md"), agent="dana")
    assert other.code == 0, other.err
    said = json.loads(other.out)["hookSpecificOutput"]
    assert said["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in said  # never "allow": the user's prompt still asks
    assert re.fullmatch(RELEASED, said["additionalContext"]), said
    # The first edit of a path the lost claim held: refused, saying why.
    held = hook(repo, "claude-code", claude_write(repo, "src/x.py"), agent="dana")
    assert held.code == 0, held.err
    refused = json.loads(held.out)["hookSpecificOutput"]
    assert refused["permissionDecision"] == "deny"
    reason = refused["permissionDecisionReason"]
    assert re.match(RELEASED, reason), reason
    assert "nothing was written" in reason and "git lac claim" in reason
    assert not (repo / "src/x.py").exists()
    # Then it is judged as any edit: unclaimed, allowed (lac.edit.unclaimed
    # = allow), and nothing more to say.
    for rel in ("src/x.py", "docs/notes.md"):
        quiet = hook(repo, "claude-code", claude_write(repo, rel), agent="dana")
        assert (quiet.code, quiet.out) == (0, ""), quiet


def test_the_first_edit_of_a_held_path_is_refused_even_first(released: Path) -> None:
    repo = released
    held = hook(repo, "claude-code", claude_write(repo, "src/x.py"), agent="dana")
    refused = json.loads(held.out)["hookSpecificOutput"]
    assert refused["permissionDecision"] == "deny"
    assert re.match(RELEASED, refused["permissionDecisionReason"])
    # Told by that refusal: the next edit of another path carries nothing.
    other = hook(repo, "claude-code", claude_write(repo, "docs/notes.md"), agent="dana")
    assert (other.code, other.out) == (0, ""), other
    # Another agent's edit hook tells it nothing.
    ann = hook(repo, "claude-code", claude_write(repo, "src/x.py"), agent="ann")
    assert (ann.code, ann.out) == (0, ""), ann


def test_gemini_cli_is_told_by_its_one_channel_a_refusal(released: Path) -> None:
    repo = released
    first = hook(repo, "gemini", gemini_write(repo, "docs/notes.md"), agent="dana")
    assert first.code == 0, first.err
    said = json.loads(first.out)
    assert said["decision"] == "deny"
    assert re.match(RELEASED, said["reason"]) and "call the tool again" in said["reason"]
    again = hook(repo, "gemini", gemini_write(repo, "docs/notes.md"), agent="dana")
    assert (again.code, json.loads(again.out)) == (0, {}), again
    held = hook(repo, "gemini", gemini_write(repo, "src/x.py"), agent="dana")
    said = json.loads(held.out)
    assert said["decision"] == "deny" and "nothing was written" in said["reason"]
    assert json.loads(hook(repo, "gemini", gemini_write(repo, "src/x.py"), agent="dana").out) == {}


# --- claim --max-age -------------------------------------------------------------


def test_max_age_is_shown_and_capped_claims_expire_told_by_heartbeat(
    lac: Lac, repo: Path, boards: Boards
) -> None:
    assert run(repo, "task", "add", "capped", "--write", "src/a.py", agent="ann").code == 0
    claimed = run(repo, "claim", "1", "--max-age", "2h", "--json", agent="dana")
    assert claimed.code == 0, claimed.err
    task = claimed.json["task"]
    assert task["max_age"] == 7200.0
    assert task["expires_at"] == pytest.approx(task["claimed_at"] + 7200.0)
    human = run(repo, "show", "1", agent="dana")
    assert re.search(r"^  max age   2h00m: expires in (2h00m|1h59m)$", human.out, re.M), human.out
    assert run(repo, "show", "1", "--json", agent="dana").json["task"]["max_age"] == 7200.0
    # Heartbeats do not keep it past its max-age: move the claim (not its
    # heartbeat) back, and the keeper takes it.
    assert run(repo, "heartbeat", agent="dana").code == 0
    boards.sql("UPDATE lac_tasks SET claimed_at = claimed_at - 7300 WHERE id = 1")
    kept = run(repo, "keeper", "--once", "--json", agent="kim")
    assert kept.code == 0, kept.err
    (fact,) = kept.json["expired"]
    assert (fact["task"], fact["why"], fact["max_age"]) == (1, "max_age", 7200.0)
    assert "expired: task #1 of dana, past its max age 2h00m; back on the board" in kept.err
    event = run(repo, "log", "1", "--json", agent="kim").json["events"][-1]
    assert event["kind"] == "expired" and event["detail"]["max_age"] == 7200.0
    assert event["detail"]["previous_instance"]
    assert run(repo, "show", "1", "--json", agent="kim").json["task"]["state"] == "open"
    beat = run(repo, "heartbeat", agent="dana")
    assert beat.code == 1
    lines = beat.err.strip().splitlines()
    assert re.fullmatch(
        rf"git lac: your claim of task #1 expired at {AT} \(max age 2h00m\);"
        r" its locks went with it: src/a\.py",
        lines[0],
    ), lines
    assert lines[-1] == "git lac: a claim of yours expired (above)"
    assert run(repo, "heartbeat", agent="dana").code == 0  # told once
    named = run(repo, "heartbeat", "1", agent="dana")  # every time, by name
    assert named.code == 1 and "your claim of task #1 expired at" in named.err


def test_a_stale_expiry_is_told_too(lac: Lac, repo: Path, boards: Boards) -> None:
    assert run(repo, "task", "add", "silent", agent="ann").code == 0
    assert run(repo, "claim", "1", "--stale-after", "1m", agent="dana").code == 0
    boards.backdate(1, 3600)
    assert run(repo, "keeper", "--once", agent="kim").code == 0
    status = run(repo, "status", "--json", agent="dana")
    (notice,) = status.json["notices"]
    assert (notice["kind"], notice["why"], notice["stale_after"]) == ("expired", "stale", 60.0)
    assert re.fullmatch(
        rf"your claim of task #1 expired at {AT} \(silent 1h00m, stale after 1m00s\)",
        notice["message"],
    ), notice


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("0", "invalid duration '0'"),
        ("-5", "invalid duration '-5'"),
        ("-1h", "invalid duration '-1h'"),
        ("99999d", "at most"),
        ("12x", "invalid duration '12x'"),
        ("", "invalid duration ''"),
        ("0.5", "invalid max-age '0.5': at least 1s"),
        ("1e9", "invalid duration '1e9'"),
    ],
)
def test_bad_max_age_is_one_line_exit_2_and_nothing_written(
    lac: Lac, repo: Path, given: str, said: str
) -> None:
    assert run(repo, "task", "add", "t", agent="ann").code == 0
    before = run(repo, "log", "--json", agent="ann").json["events"]
    for args in (("claim", "1", "--max-age", given), ("claim", "--next", f"--max-age={given}")):
        result = run(repo, *args, agent="dana")
        assert result.code == 2, result
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], lines
        assert "Traceback" not in result.err and result.out == ""
    assert run(repo, "show", "1", "--json", agent="ann").json["task"]["state"] == "open"
    assert run(repo, "log", "--json", agent="ann").json["events"] == before


# --- the keeper, heartbeats each second, a real clock ------------------------------


@pytest.fixture
def beating() -> Iterator[Callable[[Path, str], threading.Event]]:
    """Heartbeat as a holder would: `git lac heartbeat` every second, each a
    real process, until the event is set; every beat must refresh."""
    threads: list[tuple[threading.Thread, threading.Event]] = []
    failures: list[Result] = []

    def start(repo: Path, agent: str) -> threading.Event:
        stop = threading.Event()

        def loop() -> None:
            while not stop.is_set():
                beat = run(repo, "heartbeat", "--json", agent=agent)
                if beat.code != 0 or beat.json["refreshed"] != [1]:
                    failures.append(beat)
                stop.wait(1.0)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        threads.append((thread, stop))
        return stop

    yield start
    for thread, stop in threads:
        stop.set()
        thread.join(timeout=60)
    assert failures == []


@pytest.mark.slow
def test_stale_after_8s_max_age_12s_heartbeated_each_second(
    lac: Lac, repo: Path, beating: Callable[[Path, str], threading.Event]
) -> None:
    assert run(repo, "task", "add", "capped", "--write", "src/a.py", agent="ann").code == 0
    claimed = run(repo, "claim", "1", "--stale-after", "8s", "--max-age", "12s", agent="dana")
    assert claimed.code == 0, claimed.err
    start = time.monotonic()
    stop = beating(repo, "dana")

    def at(seconds: float) -> None:
        time.sleep(max(0.0, start + seconds - time.monotonic()))

    at(9.0)
    kept = run(repo, "keeper", "--once", "--json", agent="kim")
    assert kept.code == 0 and kept.json["expired"] == [], kept
    task = run(repo, "show", "1", "--json", agent="kim").json["task"]
    assert (task["state"], task["owner"], task["max_age"]) == ("claimed", "dana", 12.0)
    at(13.0)
    stop.set()  # the last beat is before the keeper's look: the next one tells
    at(13.5)
    gone = run(repo, "keeper", "--once", "--json", agent="kim")
    assert gone.code == 0, gone.err
    (fact,) = gone.json["expired"]
    assert (fact["task"], fact["why"], fact["max_age"]) == (1, "max_age", 12.0)
    assert fact["silent_for"] < 8.0  # it was heartbeating: only its max-age took it
    beat = run(repo, "heartbeat", agent="dana")
    assert beat.code == 1, beat
    assert re.match(
        rf"git lac: your claim of task #1 expired at {AT} \(max age 12s\);"
        r" its locks went with it: src/a\.py",
        beat.err,
    ), beat.err


# --- team mode: the SQL functions ---------------------------------------------------


@pytest.fixture
def crew(pg_server: str) -> Iterator[Any]:
    from .team_fixtures import team_board

    with team_board(pg_server) as made:
        yield made


def test_team_mode_caps_a_claim_and_only_the_keeper_expires_it(crew: Any) -> None:
    """Through lac_api_cap_claim, lac_api_stale_claims and lac_api_expire, as
    agent roles with their own logins: bob caps his own claim, mallory cannot
    cap it, a plain agent's sweep leaves it, the keeper's takes it past its
    max-age though it heartbeats, naming where it was held."""
    from git_lacunari.errors import NotPermitted

    from .conftest import board_sql

    bob, mallory = crew.add("bob"), crew.add("mallory")
    keeper = crew.add("keeper", kind="keeper")
    b = crew.open(bob)
    task = b.add_task("capped", writes=["src/a.py"])
    claim = b.claim(task.id, stale_after=3600, max_age=60)
    assert claim.task.max_age == 60.0
    m = crew.open(mallory)
    with pytest.raises(NotPermitted):
        m.store.one("cap_claim", task_id=task.id, agent=bob, instance=b.instance, max_age=1e6)
    assert m.store.one("cap_claim", task_id=task.id, agent=mallory, instance="", max_age=1) is None
    k = crew.open(keeper)
    assert k.sweep() == []  # 60 s is not over yet: heartbeats or not, it stays
    assert b.heartbeat([task.id]) == [task.id]
    board_sql(
        crew.admin_store,
        "UPDATE lac_tasks SET claimed_at = claimed_at - 120 WHERE id = :id",
        id=task.id,
    )
    assert b.heartbeat([task.id]) == [task.id]  # alive: only the max-age can take it
    assert m.sweep() == [] and b.show(task.id).owner == bob
    (fact,) = k.sweep()
    assert (fact["task"], fact["why"], fact["max_age"]) == (task.id, "max_age", 60.0)
    assert fact["previous_instance"] == b.instance
    assert k.show(task.id).state == "open" and k.locks() == []
    event = k.log(task.id)[-1]
    assert (event.kind, event.agent, event.detail["why"]) == ("expired", keeper, "max_age")
    # bob's next look tells him, in the working tree that held it.
    (notice,) = b.notices()
    assert notice.kind == "expired" and notice.max_age == 60.0
    assert notice.said().startswith(f"your claim of task #{task.id} expired at ")
    for board in (b, m, k):
        board.store.close()
