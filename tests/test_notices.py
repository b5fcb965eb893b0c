"""Take-over notices (issue 22): a holder whose claim was force-released, or
whose lock was force-unlocked, is told by its next heartbeat, status or done,
once, in the working tree that held it; `done` and `heartbeat TASK` of a
force-released claim refuse every time, saying who released it and when.
Both backends, through the command line."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

from git_lacunari.errors import NotPermitted

from .conftest import Boards, Result, git, lac_process

Lac = Callable[..., Result]

AT = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


@pytest.fixture
def held(lac: Lac) -> Lac:
    """dana claims #1 (writing src/x.py) and locks docs/ without a task."""
    assert lac("task", "add", "fix login", "--write", "src/x.py").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    assert lac("lock", "docs/", "--as", "dana").code == 0
    return lac


def test_force_release_is_told_once_by_heartbeat_and_done_refuses_naming_who(held: Lac) -> None:
    lac = held
    assert lac("release", "1", "--force", "--reason", "dana is away", "--as", "erin").code == 0
    beat = lac("heartbeat", "--as", "dana")
    assert beat.code == 1, beat.err
    lines = beat.err.strip().splitlines()
    assert re.fullmatch(
        rf"git lac: your claim of task #1 was released by erin at {AT} \(force: dana is away\);"
        r" its locks went with it: src/x\.py",
        lines[0],
    ), lines
    assert lines[1:] == ["git lac: a claim or lock of yours was taken by force (above)"]
    # Told once: the next heartbeat is an ordinary one, and so is status.
    again = lac("heartbeat", "--as", "dana")
    assert again.code == 0 and again.err == "", again.err
    status = lac("status", "--as", "dana", "--json")
    assert status.code == 0 and status.json["notices"] == []
    # done refuses every time, saying who released it, when and why.
    for _ in range(2):
        done = lac("done", "1", "--as", "dana")
        assert done.code == 1
        assert re.fullmatch(
            rf"refused: task #1 is open; your claim of task #1 was released by erin at {AT}"
            r" \(force: dana is away\); its locks went with it: src/x\.py",
            done.err.strip(),
        ), done.err
    shaped = lac("done", "1", "--as", "dana", "--json")
    assert shaped.json["refused"] == {"reason": "not_open", "task": 1, "state": "open"}
    named = lac("heartbeat", "1", "--as", "dana")
    assert named.code == 1 and "was released by erin at" in named.err
    assert named.err.startswith("refused: task #1 is open; your claim of task #1")
    # Claimed by someone else since: done says whose it is now, and what happened.
    assert lac("claim", "1", "--as", "frank").code == 0
    taken = lac("done", "1", "--as", "dana")
    assert taken.code == 1
    assert taken.err.startswith("refused: task #1 (claimed by frank) is not dana's; your claim")


def test_force_unlock_is_told_by_status_once(held: Lac) -> None:
    lac = held
    assert (
        lac("unlock", "src/x.py", "docs/", "--force", "--reason", "hotfix", "--as", "erin").code
        == 0
    )
    shown = lac("status", "--as", "dana")
    assert shown.code == 0, shown.err
    taken = sorted(line for line in shown.out.splitlines() if line.startswith("TAKEN"))
    assert len(taken) == 2, shown.out
    assert re.fullmatch(
        rf"TAKEN     your lock docs/ was removed by erin at {AT} \(force: hotfix\)", taken[0]
    ), taken
    assert re.fullmatch(
        rf"TAKEN     your lock src/x\.py on #1 was removed by erin at {AT} \(force: hotfix\)",
        taken[1],
    ), taken
    assert "TAKEN" not in lac("status", "--as", "dana").out
    beat = lac("heartbeat", "--as", "dana", "--json")
    assert beat.code == 0 and beat.json["notices"] == [] and beat.json["refreshed"] == [1]
    # The claim itself is still dana's: done finishes it, with nothing to tell.
    done = lac("done", "1", "--as", "dana")
    assert done.code == 0 and done.err == "", done.err


def test_notices_in_json(held: Lac) -> None:
    lac = held
    assert lac("release", "1", "--force", "--reason", "r1", "--as", "erin").code == 0
    assert lac("unlock", "docs/", "--force", "--reason", "r2", "--as", "erin").code == 0
    beat = lac("heartbeat", "--as", "dana", "--json")
    assert beat.code == 1
    body = beat.json
    assert body["ok"] is False and body["refreshed"] == []
    assert body["unfinished"] == "2 of your claims or locks taken by force (above)"
    notices = body["notices"]
    assert [(n["kind"], n["by"], n["task"], n["locks"], n["reason"]) for n in notices] == [
        ("force_released", "erin", 1, ["src/x.py"], "r1"),
        ("force_unlocked", "erin", None, ["docs/"], "r2"),
    ]
    assert all(isinstance(n["at"], float) and n["message"] for n in notices)
    assert beat.err.count("git lac: your ") == 2  # stderr for people, in either mode


def test_done_tells_a_lock_taken_from_a_claim_it_finishes(held: Lac) -> None:
    lac = held
    assert lac("unlock", "src/x.py", "--force", "--reason", "hotfix", "--as", "erin").code == 0
    done = lac("done", "1", "--as", "dana", "--json")
    assert done.code == 0, done.err
    assert [n["locks"] for n in done.json["notices"]] == [["src/x.py"]]
    assert re.fullmatch(
        rf"git lac: your lock src/x\.py on #1 was removed by erin at {AT} \(force: hotfix\)",
        done.err.strip(),
    ), done.err


def test_only_the_holder_in_its_working_tree_is_told(held: Lac, repo: Path, tmp_path: Path) -> None:
    """Another agent is never told; the same agent name in another working
    tree (another instance) is not either: it held nothing."""
    lac = held
    other = tmp_path / "other-tree"
    git(repo, "worktree", "add", "-q", "--detach", str(other))
    assert lac("release", "1", "--force", "--reason", "r", "--as", "erin").code == 0
    for who, where in (("frank", repo), ("erin", repo), ("dana", other)):
        beat = lac("heartbeat", "--as", who, cwd=where)
        assert beat.code == 0 and beat.err == "", (who, beat.err)
        assert lac("status", "--as", who, "--json", cwd=where).json["notices"] == []
    assert lac("heartbeat", "--as", "dana").code == 1


def test_own_release_expiry_and_a_claim_taken_back_are_not_notices(held: Lac) -> None:
    lac = held
    assert lac("release", "1", "--as", "dana").code == 0
    assert lac("unlock", "docs/", "--as", "dana").code == 0
    assert lac("heartbeat", "--as", "dana").code == 0
    # Force-released, told, then claimed again: done is an ordinary done.
    assert lac("claim", "1", "--as", "dana").code == 0
    assert lac("release", "1", "--force", "--reason", "r", "--as", "erin").code == 0
    assert lac("heartbeat", "--as", "dana").code == 1
    assert lac("claim", "1", "--as", "dana").code == 0
    done = lac("done", "1", "--as", "dana")
    assert done.code == 0 and done.err == "", done.err


def test_hostile_reason_and_names_reach_the_terminal_escaped(held: Lac) -> None:
    lac = held
    reason = "\x1b[2Jgone\u202eevil\u200b\nforged line"
    released = lac("release", "1", "--force", "--reason", reason, "--as", "erin")
    assert released.code == 0, released.err
    for result in (lac("heartbeat", "--as", "dana"), lac("done", "1", "--as", "dana")):
        assert result.code == 1
        # (U+200B is the terminal helper's, issue 22's escaping part.)
        for bad in ("\x1b", "\u202e"):
            assert bad not in result.err + result.out
        assert "forged line" not in "".join(
            line for line in result.err.splitlines() if line.startswith("forged")
        )
        assert all(line.startswith(("git lac:", "refused:")) for line in result.err.splitlines())


def test_a_damaged_told_record_tells_again_and_never_fails(held: Lac, repo: Path) -> None:
    lac = held
    assert lac("release", "1", "--force", "--reason", "r", "--as", "erin").code == 0
    assert lac("heartbeat", "--as", "dana").code == 1
    told = list((repo / ".git" / "lacunari" / "told").iterdir())
    assert len(told) == 1 and json.loads(told[0].read_text())
    told[0].write_text("{not json")
    assert lac("heartbeat", "--as", "dana").code == 1  # told again
    assert lac("heartbeat", "--as", "dana").code == 0
    # A record that cannot be written (its folder is a file): told every
    # time, never a traceback.
    shutil.rmtree(told[0].parent)
    told[0].parent.write_text("not a folder\n")
    for _ in range(2):
        beat = lac("heartbeat", "--as", "dana")
        assert beat.code == 1 and "Traceback" not in beat.err, beat.err
        assert beat.err.startswith("git lac: your claim of task #1 was released by erin")


# --- `task after` on another agent's claim; `done` of a done task (issue 22) -------


def test_task_after_refuses_a_task_another_agent_claimed(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    assert lac("task", "add", "first").code == 0
    assert lac("task", "add", "second").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    refused = lac("task", "after", "1", "2", "--as", "erin", "--json")
    assert refused.code == 1
    assert refused.json["refused"] == {
        "reason": "not_owner",
        "task": 1,
        "holder": "dana",
        "path": None,
    }
    assert lac("task", "after", "1", "2", "--as", "erin").err.strip() == (
        "refused: task #1 (claimed by dana) is not erin's; only its owner edits a claimed task"
    )
    # Dana's own name from another working tree: not where it is claimed.
    other = tmp_path / "other-tree"
    git(repo, "worktree", "add", "-q", "--detach", str(other))
    elsewhere = lac("task", "after", "1", "2", "--as", "dana", "--json", cwd=other)
    assert elsewhere.code == 1 and elsewhere.json["refused"]["reason"] == "already_claimed"
    assert lac("show", "1", "--json").json["task"]["depends_on"] == []
    # The holder may; so may anyone once it is open again.
    assert lac("task", "after", "1", "2", "--as", "dana").code == 0
    assert [d["id"] for d in lac("show", "1", "--json").json["task"]["depends_on"]] == [2]
    assert lac("task", "add", "third").code == 0
    assert lac("release", "1", "--as", "dana").code == 0
    assert lac("task", "after", "1", "3", "--as", "erin").code == 0


def test_the_board_itself_refuses_a_dependency_on_another_agents_claim(boards: Boards) -> None:
    """Under the command line's check, the statement holds the same rule, for
    a caller that skips the check (or races it)."""
    dana, erin = boards("dana"), boards("erin")
    one = dana.add_task("first")
    two = dana.add_task("second")
    dana.claim(one.id)
    store = erin.store
    if store.dialect == "postgres":
        with pytest.raises(NotPermitted, match="claimed by dana"), store.write():
            store.run("insert_dep", task_id=one.id, depends_on=two.id, agent="erin", instance="")
    else:
        with store.write():
            store.run("insert_dep", task_id=one.id, depends_on=two.id, agent="erin", instance="")
    assert erin.show(one.id).depends_on == []
    with store.write():  # the holder's own
        store.run("insert_dep", task_id=one.id, depends_on=two.id, agent="dana", instance="")
    assert [d["id"] for d in erin.show(one.id).depends_on] == [two.id]


def test_done_of_a_done_task_says_it_is_done(lac: Lac) -> None:
    assert lac("task", "add", "t").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    assert lac("done", "1", "--as", "dana").code == 0
    again = lac("done", "1", "--as", "dana")
    assert again.code == 1
    assert again.err.strip() == "refused: task #1 is done; it is done already: nothing to do"
    assert "claim it" not in again.err
    assert lac("done", "1", "--as", "dana", "--json").json["refused"] == {
        "reason": "not_open",
        "task": 1,
        "state": "done",
    }
    assert lac("task", "add", "u").code == 0
    opened = lac("done", "2", "--as", "dana")
    assert opened.err.strip() == "refused: task #2 is open; claim it before marking it done"
    assert lac("task", "cancel", "2").code == 0
    cancelled = lac("done", "2", "--as", "dana")
    assert "cancelled (`git lac task reopen` it" in cancelled.err


# --- init --stale-after: under a second, zero, negative, huge (issue 22) -----------


@pytest.mark.parametrize(
    "value", ["0.0001s", "0.5", "999ms", "0", "0s", "-1s", "-5m", "9" * 400, "99999d", "nan", "inf"]
)
def test_init_refuses_a_stale_after_under_a_second_writing_nothing(
    repo: Path, board_url: str | None, value: str
) -> None:
    url = ["--url", board_url] if board_url else []
    before = git(repo, "config", "--local", "--list")
    refused = lac_process(repo, "init", *url, "--stale-after", value)
    assert refused.code == 2, refused
    lines = refused.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("git lac: invalid "), lines
    assert "Traceback" not in refused.err and refused.out == ""
    assert git(repo, "config", "--local", "--list") == before
    assert not (repo / ".git" / "lacunari").exists()
    if board_url:
        import psycopg

        with psycopg.connect(board_url) as conn:
            tables = conn.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
            ).fetchone()
        assert tables == (0,)


def test_init_takes_one_second(lac: Lac) -> None:
    made = lac("init", "--stale-after", "1s", "--json")
    assert made.code == 0 and made.json["stale_after"] == 1.0
    assert lac("claim", "--next", "--stale-after", "0.5s").code == 2


# --- init --url whose search_path names no schema (issue 22) ------------------------


@pytest.mark.parametrize("schema", ["lac_no_such_schema_22", "MixedCase", "x" * 63])
def test_init_with_a_search_path_naming_no_schema_says_so_in_one_line(
    repo: Path, pg_server: str, schema: str
) -> None:
    sep = "&" if "?" in pg_server else "?"
    url = f"{pg_server}{sep}options={quote(f'-csearch_path={json.dumps(schema)}')}"
    before = git(repo, "config", "--local", "--list")
    for args in (("init", "--url", url), ("init", "--url", url, "--json")):
        result = lac_process(repo, *args)
        assert result.code == 3, result
        assert "Traceback" not in result.err
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and "its search_path names no schema that exists" in lines[0]
    assert json.loads(result.out)["error"]["kind"] == "cannot_work"
    assert git(repo, "config", "--local", "--list") == before


def test_a_board_that_cannot_tell_notices_does_not_fail_the_verb(
    held: Lac, monkeypatch: pytest.MonkeyPatch
) -> None:
    """done has finished (and heartbeat refreshed) when notices are looked
    for: a failing look leaves them for the next command, exit 0."""
    from git_lacunari.board import Board
    from git_lacunari.errors import BoardUnreachable

    lac = held
    assert lac("release", "1", "--force", "--reason", "r", "--as", "erin").code == 0

    def unreachable(self: Board) -> list[object]:
        raise BoardUnreachable("lost the board: test")

    with monkeypatch.context() as patched:
        patched.setattr(Board, "notices", unreachable)
        # Every command looks (the next command tells): claim's look fails too.
        claimed = lac("claim", "1", "--as", "dana")
        assert claimed.code == 0 and claimed.err == "", claimed.err
        beat = lac("heartbeat", "--as", "dana")
        assert beat.code == 0 and beat.err == "", beat.err
        done = lac("done", "1", "--as", "dana")
        assert done.code == 0 and done.err == "", done.err
    later = lac("status", "--as", "dana", "--json")
    assert [n["kind"] for n in later.json["notices"]] == ["force_released"]


def test_heartbeat_of_a_claim_taken_by_force_is_the_not_open_refusal(held: Lac) -> None:
    lac = held
    assert lac("release", "1", "--force", "--reason", "away", "--as", "erin").code == 0
    named = lac("heartbeat", "1", "--as", "dana", "--json")
    assert named.code == 1
    assert named.json["refused"] == {"reason": "not_open", "task": 1, "state": "open"}
    assert re.fullmatch(
        rf"refused: task #1 is open; your claim of task #1 was released by erin at {AT}"
        r" \(force: away\); its locks went with it: src/x\.py",
        named.err.strip(),
    ), named.err
    # Never claimed by dana: still not dana's, no notice in it.
    assert lac("task", "add", "other").code == 0
    other = lac("heartbeat", "2", "--as", "dana")
    assert other.code == 1 and other.err.strip() == "refused: task #2 is not dana's"


@pytest.mark.parametrize("verb", ["done", "heartbeat"])
def test_a_notice_said_by_a_refusal_is_told(held: Lac, verb: str) -> None:
    lac = held
    assert lac("release", "1", "--force", "--reason", "away", "--as", "erin").code == 0
    refused = lac(verb, "1", "--as", "dana")
    assert refused.code == 1 and "was released by erin at" in refused.err, refused.err
    # Said once: status and heartbeat do not say it again.
    status = lac("status", "--as", "dana", "--json")
    assert status.code == 0 and status.json["notices"] == [], status.json
    beat = lac("heartbeat", "--as", "dana")
    assert beat.code == 0 and beat.err == "", beat.err
    # The refusal itself still says it, every time (README, "Honest leases").
    again = lac(verb, "1", "--as", "dana")
    assert again.code == 1 and "was released by erin at" in again.err


def _commit(repo: Path, name: str, agent: str) -> Result:
    from .test_guard import run_git

    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    with (repo / name).open("a") as file:
        file.write(f"{agent} was here\n")
    git(repo, "add", name)
    return run_git(repo, "commit", "-qm", f"{agent}: {name}", agent=agent)


def test_the_pre_commit_hook_tells_a_take_over_once(held: Lac, repo: Path) -> None:
    lac = held
    assert lac_process(repo, "hooks", "install").code == 0
    assert lac("unlock", "docs/", "--force", "--reason", "hotfix", "--as", "erin").code == 0
    first = _commit(repo, "src/x.py", "dana")  # dana's own claim: allowed, and told
    assert first.code == 0, first.err
    assert re.fullmatch(
        rf"git lac: your lock docs/ was removed by erin at {AT} \(force: hotfix\)",
        first.err.strip(),
    ), first.err
    second = _commit(repo, "src/x.py", "dana")
    assert second.code == 0 and second.err == "", second.err
    status = lac("status", "--as", "dana", "--json")
    assert status.json["notices"] == []


def test_a_refused_pre_commit_tells_the_take_over_too(held: Lac, repo: Path) -> None:
    lac = held
    assert lac_process(repo, "hooks", "install").code == 0
    assert lac("release", "1", "--force", "--reason", "away", "--as", "erin").code == 0
    assert lac("lock", "src/x.py", "--as", "erin").code == 0
    before = git(repo, "rev-parse", "HEAD")
    refused = _commit(repo, "src/x.py", "dana")
    assert refused.code == 1, refused
    assert "held by erin" in refused.err
    told = [line for line in refused.err.splitlines() if "was released by erin" in line]
    assert len(told) == 1 and told[0].startswith("git lac: your claim of task #1"), refused.err
    assert git(repo, "rev-parse", "HEAD") == before
    again = _commit(repo, "src/x.py", "dana")
    assert again.code == 1 and "was released by erin" not in again.err
