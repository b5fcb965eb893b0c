"""Under bad input and faults: one line and an exit code, never a traceback,
and no input that resets or recreates a board."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from git_lacunari.durations import format_duration, parse_duration
from git_lacunari.errors import BadDuration

from .conftest import Result, lac_inprocess, lac_process
from .test_liveness import Spawn, spawn, wait_for  # noqa: F401 - spawn is a fixture

Lac = Callable[..., Result]


def one_line_error(result: Result, code: int, needle: str) -> None:
    assert result.code == code, result
    assert "Traceback" not in result.err, result.err
    lines = result.err.strip().splitlines()
    assert len(lines) <= 2 and lines[0].startswith("git lac: "), result.err  # message (+ hint)
    assert needle in lines[0], result.err


# --- integers in the range both backends store ----------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["task", "add", "x", "--priority", str(2**31)], "priority 2147483648 is out of range"),
        (["task", "add", "x", "--priority", str(-(2**31) - 1)], "out of range"),
        (["task", "add", "x", "--priority", str(2**63)], "out of range"),
        (["task", "add", "x", "--after", str(2**63)], "is too large"),
        (["show", str(2**63)], "is too large"),
        (["claim", str(10**30)], "is too large"),
        (["heartbeat", str(2**64)], "is too large"),
    ],
)
def test_out_of_range_integers_exit_2(lac: Lac, args: list[str], needle: str) -> None:
    one_line_error(lac(*args), 2, needle)
    as_json = lac(*args, "--json")
    assert as_json.code == 2 and as_json.json["error"]["kind"] == "invalid_input"
    assert lac("tasks", "--json").json["tasks"] == []


def test_edges_of_the_range_are_stored(lac: Lac) -> None:
    high = lac("task", "add", "hi", "--priority", str(2**31 - 1), "--json")
    low = lac("task", "add", "lo", "--priority", str(-(2**31)), "--json")
    assert high.code == 0 and high.json["task"]["priority"] == 2**31 - 1
    assert low.code == 0 and low.json["task"]["priority"] == -(2**31)
    missing = lac("show", str(2**63 - 1), "--json")
    assert missing.code == 1 and missing.json["refused"]["reason"] == "not_found"


# --- URLs, durations, names --------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("postgresql://[::1/x", "invalid board URL: Invalid IPv6 URL"),
        ("postgresql://host:99999/x", "invalid board URL: Port out of range"),
        ("postgresql://h\u202e/x", "U+202E"),
        ("mysql://h/x", "unknown board URL"),
    ],
)
def test_malformed_urls_exit_2(repo: Path, url: str, needle: str) -> None:
    one_line_error(lac_inprocess(repo, "init", "--url", url), 2, needle)
    assert not (repo / ".git" / "lacunari").exists()


def test_configured_malformed_url_is_one_line(repo: Path) -> None:
    lac_process(repo, "init")  # the embedded board first, then a broken lac.url
    (repo / ".git" / "config").write_text(
        (repo / ".git" / "config").read_text() + '[lac]\n\turl = "postgresql://[::1/x"\n'
    )
    result = lac_inprocess(repo, "tasks")
    assert result.code in (2, 3) and "Traceback" not in result.err, result
    assert len(result.err.strip().splitlines()) == 1, result.err


@pytest.mark.parametrize("text", ["9" * 400 + "d", "9" * 400, "1e309", "inf", "nan", "Infinity"])
def test_durations_are_finite(text: str) -> None:
    with pytest.raises(BadDuration):
        parse_duration(text)


def test_format_duration_never_prints_nan() -> None:
    assert format_duration(float("inf")) == "forever"
    assert "nan" not in format_duration(float("nan"))
    assert format_duration(parse_duration("3650d")) == "3650d00h"


def test_infinite_stale_after_is_refused_not_nandnanh(lac: Lac) -> None:
    lac("task", "add", "x")
    one_line_error(lac("claim", "1", "--stale-after", "9" * 400 + "d"), 2, "invalid duration")
    one_line_error(lac("init", "--stale-after", "9" * 400), 2, "invalid duration")
    shown = lac("init", "--json")
    assert shown.code == 0 and "Infinity" not in shown.out and "nan" not in shown.out


def test_huge_timeout_is_refused(lac: Lac) -> None:
    one_line_error(lac("tasks", env={"LAC_TIMEOUT": "30d"}), 2, "LAC_TIMEOUT")


def test_empty_as_is_refused_not_the_default(lac: Lac) -> None:
    one_line_error(lac("whoami", "--as", ""), 2, "agent name ''")
    one_line_error(lac("--as", "", "tasks"), 2, "agent name ''")


@pytest.mark.parametrize(
    "name",
    ["al\u202eice", "al\u200bice", "al\u0085ice", "al\u2066ice", "al\ufeffice", "al\u2028ice"],
)
def test_names_lanes_patterns_refuse_lookalike_characters(lac: Lac, name: str) -> None:
    # NEL and LINE SEPARATOR are whitespace too: names refuse them as spaces.
    said = "spaces or control" if name[2].isspace() else "U+"
    one_line_error(lac("whoami", "--as", name), 2, said)
    one_line_error(lac("task", "add", "x", "--lane", name), 2, said)
    one_line_error(lac("task", "add", "x", "--needs", name), 2, said)
    one_line_error(lac("lock", f"core/{name}"), 2, "U+")
    assert lac("tasks", "--json").json["tasks"] == []


def test_titles_and_bodies_are_shown_escaped(lac: Lac) -> None:
    title = "fix \u202eexe.txt\u200b"  # C1 and separators are refused in a title
    body = "line one\n\x1b]0;owned\x07\x1b[2J\tend"
    assert lac("task", "add", title + "x", "--body", body).code == 0
    shown = lac("show", "1")
    assert shown.code == 0
    for raw in ("\x1b", "\x07", "\u202e", "\u200b"):
        assert raw not in shown.out, shown.out
    assert "\\u202e" in shown.out and "\\x1b]0;owned\\x07" in shown.out
    assert "  line one\n" in shown.out and "\tend" in shown.out  # newlines and tabs kept
    listed = lac("tasks")
    assert "\u202e" not in listed.out and "\\u202e" in listed.out
    # --json keeps the text exactly (JSON escapes it for the wire).
    assert lac("show", "1", "--json").json["task"]["body"] == body


def test_undecodable_argv_is_refused(lac: Lac) -> None:
    one_line_error(lac("task", "add", "bad \udcff title"), 2, "not valid UTF-8")
    one_line_error(lac("task", "add", "x", "--body", "\udcff"), 2, "not valid UTF-8")


# --- output contract ----------------------------------------------------------------


def test_version_json(repo: Path) -> None:
    text = lac_inprocess(repo, "--version")
    assert text.code == 0 and text.out.strip().startswith("git-lac, version ")
    for args in (["--version", "--json"], ["--json", "--version"]):
        got = lac_inprocess(repo, *args)
        assert got.code == 0 and json.loads(got.out) == {"ok": True, "version": got.json["version"]}


def test_json_is_strict() -> None:
    from git_lacunari.edge import Result as Done
    from git_lacunari.edge import render

    with pytest.raises(ValueError):
        render(Done({"x": float("inf")}), as_json=True)


# --- the board file is never reset ----------------------------------------------------


def board_file(repo: Path) -> Path:
    return repo / ".git" / "lacunari" / "board.db"


@pytest.mark.parametrize("command", [["tasks"], ["init"], ["task", "add", "x"]])
def test_zero_byte_board_is_refused_not_recreated(repo: Path, command: list[str]) -> None:
    assert lac_process(repo, "init").code == 0
    db = board_file(repo)
    for extra in ("-wal", "-shm"):
        db.with_name(db.name + extra).unlink(missing_ok=True)
    db.write_bytes(b"")
    result = lac_process(repo, *command)
    one_line_error(result, 3, "is an empty (0-byte) file")
    assert db.stat().st_size == 0  # left as it was, for whoever investigates
    as_json = lac_process(repo, *command, "--json")
    assert as_json.code == 3 and as_json.json["error"]["kind"] == "board_corrupt"


def test_foreign_sqlite_file_is_refused_not_initialised(repo: Path) -> None:
    db = board_file(repo)
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    result = lac_process(repo, "init")
    one_line_error(result, 3, "not a git-lacunari board")
    with sqlite3.connect(db) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert names == ["notes"]


def test_new_board_appears_whole(repo: Path) -> None:
    # Created under a temporary name and linked into place: no leftovers,
    # and the file at the board's path is a complete board from the start.
    assert lac_process(repo, "tasks").code == 0
    left = sorted(p.name for p in board_file(repo).parent.iterdir())
    assert not [n for n in left if n.endswith(".new") or ".new-" in n], left
    with sqlite3.connect(board_file(repo)) as conn:
        assert conn.execute("SELECT count(*) FROM lac_schema_version").fetchone()[0] >= 1


# --- liveness that cannot steal live work ----------------------------------------------


def age_claims(repo: Path, url: str | None, seconds: float) -> None:
    """Move every heartbeat ``seconds`` into the past: silence without sleeping."""
    sql = "UPDATE lac_tasks SET heartbeat_at = heartbeat_at - %s WHERE state = 'claimed'"
    if url is None:
        with sqlite3.connect(board_file(repo)) as conn:
            conn.execute(sql.replace("%s", "?"), (seconds,))
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute(sql, (seconds,))


def test_claims_carry_their_own_stale_after(lac: Lac) -> None:
    lac("task", "add", "a")
    lac("task", "add", "b")
    first = lac("claim", "1", "--as", "dana", "--json")
    assert first.json["task"]["stale_after"] == 1800.0  # the board's, recorded in the claim
    assert lac("init", "--stale-after", "1h").code == 0
    second = lac("claim", "2", "--as", "dana", "--stale-after", "2m", "--json")
    assert second.json["task"]["stale_after"] == 120.0
    assert lac("show", "1", "--json").json["task"]["stale_after"] == 1800.0


def test_a_shorter_keeper_stale_after_is_refused(lac: Lac) -> None:
    lac("task", "add", "a")
    lac("claim", "1", "--as", "dana")
    result = lac("keeper", "--once", "--stale-after", "3s", "--as", "k")
    one_line_error(result, 2, "shorter than the board's 30m00s")
    assert lac("show", "1", "--json").json["task"]["state"] == "claimed"


def test_keeper_stale_after_is_a_floor(lac: Lac, repo: Path, board_url: str | None) -> None:
    lac("task", "add", "a")
    lac("claim", "1", "--as", "dana", "--stale-after", "10s")
    age_claims(repo, board_url, 60)
    held = lac("keeper", "--once", "--stale-after", "1h", "--as", "k", "--json")
    assert held.code == 0 and held.json["expired"] == []
    swept = lac("keeper", "--once", "--as", "k", "--json")
    assert [f["task"] for f in swept.json["expired"]] == [1]


def test_keeper_never_hands_a_live_drainers_task_to_a_second_worker(
    lac: Lac,
    repo: Path,
    board_url: str | None,
    tmp_path: Path,
    spawn: Spawn,  # noqa: F811
) -> None:
    lac("task", "add", "long", "--lane", "x", "--write", "core/")
    started = tmp_path / "started"
    drainer = spawn(
        repo,
        "drain",
        "--lane",
        "x",
        "--once",
        "--",
        "sh",
        "-c",
        f"touch {started}; sleep 60",
        agent="worker-1",
    )
    try:
        wait_for(started.exists, "the drainer's command started")
        claim = lac("show", "1", "--json").json["task"]
        assert (claim["state"], claim["stale_after"]) == ("claimed", 1800.0)
        # The board's default changes under the live claim, ten minutes of
        # silence pass (moved, not slept): the claim keeps its 30 minutes.
        assert lac("init", "--stale-after", "3s").code == 0
        age_claims(repo, board_url, 600)
        refused = lac("keeper", "--once", "--stale-after", "1s", "--as", "k")
        assert refused.code == 2
        swept = lac("keeper", "--once", "--as", "k", "--json")
        assert swept.code == 0 and swept.json["expired"] == []
        second = lac("claim", "--next", "--lane", "x", "--as", "worker-2", "--json")
        assert second.code == 1 and second.json["refused"]["reason"] == "not_found"
        assert lac("show", "1", "--json").json["task"]["owner"] == "worker-1"
        assert drainer.poll() is None
    finally:
        os.killpg(drainer.pid, signal.SIGTERM)
        drainer.wait(timeout=20)


# --- drainers that keep every attempt's work ---------------------------------------------


def test_drain_retry_keeps_the_first_attempts_commits(lac: Lac, repo: Path) -> None:
    from .conftest import git

    lac("task", "add", "flaky", "--lane", "w")
    # Attempt 1 commits its work, then fails; attempt 2 must find it and build on it.
    script = (
        'n=$(git rev-list --count HEAD); echo "attempt $n" > work.txt; git add work.txt; '
        'git commit -qm "attempt $n"; test "$n" -ge 2'
    )
    first = lac("drain", "--lane", "w", "--once", "--worktree", "--json", "--", "sh", "-c", script)
    assert first.code == 1 and first.json["failed"] == [1], first
    assert "task #1 failed (exit 1)" in first.err
    after_first = git(repo, "rev-parse", "lac/task-1").strip()
    second = lac("drain", "--lane", "w", "--once", "--worktree", "--json", "--", "sh", "-c", script)
    assert second.code == 0 and second.json["done"] == [1], second
    history = git(repo, "log", "--format=%s", "lac/task-1").split("\n")
    assert history[:3] == ["attempt 2", "attempt 1", "initial"], history
    assert git(repo, "merge-base", "--is-ancestor", after_first, "lac/task-1") == ""
    failed = [e for e in lac("log", "1", "--json").json["events"] if e["kind"] == "failed"]
    assert [e["detail"]["exit_code"] for e in failed] == [1]


def test_a_worktree_that_cannot_be_made_releases_the_claim(tmp_path: Path) -> None:
    from .conftest import git

    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")  # no commit yet: no worktree can be made
    assert lac_inprocess(empty, "task", "add", "t", "--lane", "w").code == 0
    got = lac_inprocess(
        empty, "drain", "--lane", "w", "--once", "--worktree", "--json", "--", "true"
    )
    assert got.code == 1 and got.json["failed"] == [1], got
    assert "Traceback" not in got.err and "no worktree" in got.err
    shown = lac_inprocess(empty, "show", "1", "--json").json["task"]
    assert (shown["state"], shown["owner"]) == ("open", None)
    events = lac_inprocess(empty, "log", "1", "--json").json["events"]
    assert events[-1]["kind"] == "failed" and "reason" in events[-1]["detail"]


def test_drain_once_exits_with_the_outcome(lac: Lac) -> None:
    lac("task", "add", "ok", "--lane", "a")
    lac("task", "add", "bad", "--lane", "b")
    assert lac("drain", "--lane", "a", "--once", "--", "true").code == 0
    bad = lac("drain", "--lane", "b", "--once", "--json", "--", "sh", "-c", "exit 7")
    assert bad.code == 1 and bad.json["unfinished"] == "task #2 failed (exit 7)"
    assert bad.json["exit_codes"] == {"2": 7}


def test_drain_json_keeps_the_commands_output_off_stdout(lac: Lac, repo: Path) -> None:
    lac("task", "add", "noisy", "--lane", "n")
    got = lac_process(repo, "drain", "--lane", "n", "--once", "--json", "--", "echo", "NOISE")
    assert got.code == 0, got
    assert json.loads(got.out)["done"] == [1] and "NOISE" not in got.out
    assert "NOISE" in got.err


def test_sigkilled_drainers_command_is_gone(
    lac: Lac,
    repo: Path,
    tmp_path: Path,
    spawn: Spawn,  # noqa: F811
) -> None:
    lac("task", "add", "long", "--lane", "k")
    pidfile = tmp_path / "pid"
    drainer = spawn(
        repo,
        "drain",
        "--lane",
        "k",
        "--once",
        "--",
        "sh",
        "-c",
        f"echo $$ > {pidfile}; exec sleep 120",
        agent="victim",
    )
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip() != "", "the command ran")
    command = int(pidfile.read_text())
    os.kill(drainer.pid, signal.SIGKILL)  # the drainer alone, not its group
    drainer.wait(timeout=10)

    def gone() -> bool:
        try:
            os.kill(command, 0)
        except ProcessLookupError:
            return True
        # A zombie not yet reaped by init counts as gone.
        stat = Path(f"/proc/{command}/stat")
        return stat.exists() and stat.read_text().split(") ")[1].startswith("Z")

    wait_for(gone, "the command gone after its drainer's SIGKILL", timeout=5)
