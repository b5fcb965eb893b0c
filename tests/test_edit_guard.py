"""`git lac guard edit`, fed the payloads each harness documents, as a real process.

The payload shapes and field names are the harnesses' own (see the sources
cited in git_lacunari/agents/): Claude Code's PreToolUse (``tool_name``,
``tool_input.file_path`` / ``notebook_path`` / ``command``, ``cwd``,
``hook_event_name``), Gemini CLI's BeforeTool (``write_file``, ``replace``,
``run_shell_command``), and the generic ``{"paths": [...]}``. Every test
asserts the decision and the protocol: exit code, stdout, stderr. The
resident helper is off here (``LAC_EDIT_HELPER=off``) except where the
helper itself is tested, so each run decides in its own process.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import Result, git

Lac = Callable[..., Result]
LAC = str(Path(sys.executable).parent / "git-lac")


def hook(
    repo: Path,
    payload: dict[str, Any] | str,
    *,
    agent: str = "alice",
    harness: str | None = None,
    helper: bool = False,
    env: dict[str, str] | None = None,
) -> Result:
    """The hook as a harness runs it: a real process, the payload on stdin."""
    full = {**os.environ, "LAC_AGENT": agent, **(env or {})}
    full["LAC_EDIT_HELPER"] = "auto" if helper else "off"
    args = [LAC, "guard", "edit", *(["--harness", harness] if harness else [])]
    text = payload if isinstance(payload, str) else json.dumps(payload)
    proc = subprocess.run(args, cwd=repo, env=full, input=text, capture_output=True, text=True)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def claude(
    repo: Path, tool: str, tool_input: dict[str, Any], cwd: Path | None = None
) -> dict[str, Any]:
    """A Claude Code PreToolUse payload, every documented field present."""
    return {
        "session_id": "abc123",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": str(cwd or repo),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC123",
    }


def gemini(repo: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """A Gemini CLI BeforeTool payload, every documented field present."""
    return {
        "session_id": "s1",
        "transcript_path": "/tmp/t.json",
        "cwd": str(repo),
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-01-01T00:00:00Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }


def claude_denied(result: Result) -> str:
    """The reason of a Claude Code refusal, after checking its whole protocol."""
    assert result.code == 0, result.err
    out = json.loads(result.out)
    assert set(out) == {"hookSpecificOutput"}
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert spec["permissionDecision"] == "deny"
    reason: str = spec["permissionDecisionReason"]
    assert result.err.strip().splitlines()[-1] == f"refused: {reason}"
    return reason


def claude_allowed(result: Result) -> None:
    assert (result.code, result.out) == (0, ""), result.err


@pytest.fixture
def held(lac: Lac, repo: Path) -> Path:
    """dana holds core/auth.py on task #1."""
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "dana"}).code == 0
    return repo


def test_write_of_a_held_path_is_denied_naming_holder_task_and_wait(held: Path) -> None:
    result = hook(
        held, claude(held, "Write", {"file_path": str(held / "core/auth.py"), "content": "x"})
    )
    reason = claude_denied(result)
    assert reason == "dana holds core/auth.py on task #1; git lac wait core/auth.py"
    # The holder itself is let through.
    claude_allowed(
        hook(
            held,
            claude(held, "Write", {"file_path": str(held / "core/auth.py"), "content": "x"}),
            agent="dana",
        )
    )


def test_relative_paths_resolve_from_the_payloads_cwd(held: Path) -> None:
    payload = claude(
        held,
        "Edit",
        {"file_path": "auth.py", "old_string": "a", "new_string": "b"},
        cwd=held / "core",
    )
    reason = claude_denied(hook(held, payload))
    assert reason.endswith("; git lac wait auth.py")  # said as the agent, in core/, would type it
    assert "dana holds core/auth.py on task #1" in reason


def test_multiedit_and_notebookedit(held: Path, lac: Lac) -> None:
    edits = [{"old_string": "True", "new_string": "False", "replace_all": False}]
    reason = claude_denied(
        hook(
            held,
            claude(held, "MultiEdit", {"file_path": str(held / "core/auth.py"), "edits": edits}),
        )
    )
    assert "dana holds core/auth.py" in reason
    assert lac("lock", "nb/analysis.ipynb", env={"LAC_AGENT": "erin"}).code == 0
    notebook = {
        "notebook_path": str(held / "nb/analysis.ipynb"),
        "new_source": "x = 1",
        "cell_id": "c1",
        "cell_type": "code",
        "edit_mode": "replace",
    }
    reason = claude_denied(hook(held, claude(held, "NotebookEdit", notebook)))
    assert reason == "erin holds nb/analysis.ipynb (no task); git lac wait nb/analysis.ipynb"


def test_a_free_path_and_a_tool_that_writes_nothing_pass(held: Path) -> None:
    claude_allowed(
        hook(held, claude(held, "Write", {"file_path": str(held / "README"), "content": "x"}))
    )
    claude_allowed(hook(held, claude(held, "Read", {"file_path": str(held / "core/auth.py")})))
    result = hook(held, claude(held, "Write", {"file_path": str(held / "README"), "content": "x"}))
    assert result.err == ""


def test_paths_outside_the_repository_are_not_ours(held: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "auth.py"
    claude_allowed(hook(held, claude(held, "Write", {"file_path": str(outside), "content": "x"})))
    claude_allowed(
        hook(held, claude(held, "Write", {"file_path": "../../elsewhere.py", "content": "x"}))
    )
    # Nor is the repository's own .git.
    claude_allowed(
        hook(held, claude(held, "Write", {"file_path": str(held / ".git/config"), "content": "x"}))
    )


def test_symlinks_into_held_paths_are_held(held: Path) -> None:
    (held / "link.py").symlink_to("core/auth.py")
    (held / "alias").symlink_to("core")
    for path in ("link.py", "alias/auth.py"):
        reason = claude_denied(
            hook(held, claude(held, "Write", {"file_path": str(held / path), "content": "x"}))
        )
        assert reason.startswith("dana holds core/auth.py on task #1"), path


def test_spaces_and_non_ascii(lac: Lac, repo: Path) -> None:
    name = "docs/my notes é.md"
    assert lac("lock", name, env={"LAC_AGENT": "dana"}).code == 0
    reason = claude_denied(
        hook(repo, claude(repo, "Write", {"file_path": str(repo / name), "content": "x"}))
    )
    assert reason == f"dana holds {name} (no task); git lac wait 'docs/my notes é.md'"
    claude_allowed(
        hook(
            repo,
            claude(repo, "Write", {"file_path": str(repo / "docs/my notes.md"), "content": "x"}),
        )
    )


def test_gemini_protocol(held: Path) -> None:
    result = hook(
        held, gemini(held, "write_file", {"file_path": str(held / "core/auth.py"), "content": "x"})
    )
    assert result.code == 0
    assert json.loads(result.out) == {
        "decision": "deny",
        "reason": "dana holds core/auth.py on task #1; git lac wait core/auth.py",
    }
    result = hook(
        held,
        gemini(
            held,
            "replace",
            {"file_path": str(held / "README"), "old_string": "a", "new_string": "b"},
        ),
    )
    assert (result.code, json.loads(result.out), result.err) == (0, {}, "")
    shell = gemini(held, "run_shell_command", {"command": "echo x > auth.py", "directory": "core"})
    assert json.loads(hook(held, shell).out)["decision"] == "deny"


def test_generic_protocol(held: Path) -> None:
    result = hook(held, {"paths": ["core/auth.py", "README"], "cwd": str(held)})
    assert result.code == 1
    body = json.loads(result.out)
    assert body["ok"] is False and body["decision"] == "deny"
    assert body["reason"] == "dana holds core/auth.py on task #1; git lac wait core/auth.py"
    assert body["checked"] == ["core/auth.py", "README"]  # what the refusing board was asked
    result = hook(held, {"paths": ["README"]})
    assert result.code == 0
    assert json.loads(result.out) == {
        "ok": True,
        "decision": "allow",
        "reason": None,
        "checked": ["README"],
        "locked": [],
    }


@pytest.fixture
def claimed(held: Path, lac: Lac) -> Path:
    """alice claims task #2, declaring core/ok.py."""
    assert lac("task", "add", "ok", "--write", "core/ok.py").code == 0
    assert lac("claim", "2", env={"LAC_AGENT": "alice"}).code == 0
    return held


def write(repo: Path, path: str) -> dict[str, Any]:
    return claude(repo, "Write", {"file_path": str(repo / path), "content": "x"})


def test_undeclared_allow_is_the_default(claimed: Path) -> None:
    claude_allowed(hook(claimed, write(claimed, "core/other.py")))
    claude_allowed(hook(claimed, write(claimed, "core/ok.py")))


def test_undeclared_deny(claimed: Path) -> None:
    git(claimed, "config", "lac.edit.undeclared", "deny")
    reason = claude_denied(hook(claimed, write(claimed, "core/other.py")))
    assert reason == (
        "core/other.py is not declared by your claim of task #2 (lac.edit.undeclared = deny); "
        "declare it: git lac lock --task 2 core/other.py"
    )
    claude_allowed(hook(claimed, write(claimed, "core/ok.py")))  # declared
    assert "dana holds" in claude_denied(hook(claimed, write(claimed, "core/auth.py")))


def test_undeclared_lock_takes_it_under_the_claim(claimed: Path, lac: Lac) -> None:
    git(claimed, "config", "lac.edit.undeclared", "lock")
    result = hook(claimed, write(claimed, "core/other.py"))
    claude_allowed(result)
    assert "locked core/other.py for task #2" in result.err
    locks = lac("locks", "--json").json["locks"]
    mine = [lk for lk in locks if lk["pattern"] == "core/other.py"]
    assert [(lk["agent"], lk["task_id"], lk["mode"]) for lk in mine] == [("alice", 2, "write")]
    # Now it is alice's: another agent's edit of it is refused.
    reason = claude_denied(hook(claimed, write(claimed, "core/other.py"), agent="erin"))
    assert reason.startswith("alice holds core/other.py on task #2")
    # A path someone else holds is never taken: refused, nothing locked.
    assert "dana holds" in claude_denied(hook(claimed, write(claimed, "core/auth.py")))
    assert len(lac("locks", "--json").json["locks"]) == 3
    # A file named like a glob is locked as itself, not as the glob it spells.
    result = hook(claimed, write(claimed, "core/x[1].py"))
    claude_allowed(result)
    reason = claude_denied(hook(claimed, write(claimed, "core/x[1].py"), agent="erin"))
    assert reason.startswith("alice holds core/x\\[1].py on task #2")
    claude_allowed(hook(claimed, write(claimed, "core/x1.py"), agent="erin"))


def test_no_claim_policy(held: Path) -> None:
    claude_allowed(hook(held, write(held, "README")))  # default: allow
    git(held, "config", "lac.edit.unclaimed", "deny")
    reason = claude_denied(hook(held, write(held, "README")))
    assert reason.startswith("claim a task first: README is not held by a claim of yours")


def test_malformed_payload_is_one_line_and_refused_by_default(held: Path) -> None:
    """Fail closed: a payload not of the documented shape is refused in the
    harness's block form (Claude Code: exit 2, the reason its one stderr
    line; Gemini CLI: its deny JSON); lac.edit.malformed = allow opts out."""
    result = hook(held, "this is not json", harness="claude-code")
    assert (result.code, result.out) == (2, "")
    assert result.err.splitlines() == [
        "refused: malformed hook payload: stdin is not JSON (Expecting value: line 1 column 1 "
        "(char 0)) (lac.edit.malformed = deny)"
    ]
    result = hook(held, {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": "x"})
    assert (result.code, result.out) == (2, "") and "tool_input is not an object" in result.err
    result = hook(held, "[]", harness="gemini")
    assert result.code == 0 and len(result.err.splitlines()) == 1
    assert json.loads(result.out) == {
        "decision": "deny",
        "reason": "malformed hook payload: stdin is not a JSON object (lac.edit.malformed = deny)",
    }
    git(held, "config", "lac.edit.malformed", "allow")
    result = hook(held, "{", harness="claude-code")
    assert (result.code, result.out) == (0, "")
    assert result.err.splitlines() == [
        "git lac: malformed hook payload: stdin is not JSON (Expecting property name enclosed "
        "in double quotes: line 1 column 2 (char 1)); edit allowed (lac.edit.malformed = allow)"
    ]
    result = hook(held, "[]", harness="gemini")
    assert (result.code, json.loads(result.out)) == (0, {})


def test_a_bad_setting_is_exit_2_one_line(held: Path, lac: Lac) -> None:
    git(held, "config", "lac.edit.undeclared", "maybe")
    before = lac("locks", "--json").json["locks"]
    result = hook(held, write(held, "README"))
    assert (result.code, result.out) == (2, "")
    assert result.err.strip() == "git lac: lac.edit.undeclared is 'maybe'; use allow | lock | deny"
    assert lac("locks", "--json").json["locks"] == before
    assert hook(held, write(held, "README"), harness="nobody").code == 2


def test_shell_writes_best_effort(held: Path) -> None:
    def bash(command: str) -> Result:
        return hook(held, claude(held, "Bash", {"command": command, "description": "d"}))

    for command in (
        "echo x > core/auth.py",
        "printf x >>core/auth.py",
        "sed -i 's/True/False/' core/auth.py",
        "cat README | tee -a core/auth.py",
        "cd core && rm -f auth.py",
        "mv README core/auth.py",
        "cp README core/auth.py",
        "git checkout HEAD -- core/auth.py",
        "git restore --source=HEAD core/auth.py",
        "rm core/*.py",
        "rm -rf core",
    ):
        assert "dana holds core/auth.py" in claude_denied(bash(command)), command
    for command in (
        "cat core/auth.py",
        "echo '>' core/auth.py",
        "grep -r x core/ 2>/dev/null",
        "ls > /dev/null",
    ):
        claude_allowed(bash(command))


def test_unreachable_board_follows_the_offline_policy(held: Path) -> None:
    git(held, "config", "lac.url", f"sqlite:///{held}/nowhere/board.db")
    result = hook(held, write(held, "core/auth.py"))
    claude_allowed(result)
    assert "edit allowed unchecked (lac.guard.offline)" in result.err
    git(held, "config", "lac.guard.offline", "refuse")
    assert "edit refused, nothing was checked" in claude_denied(
        hook(held, write(held, "core/auth.py"))
    )


def test_guard_off_skips_and_says_so(held: Path) -> None:
    result = hook(held, write(held, "core/auth.py"), env={"LAC_GUARD": "off"})
    claude_allowed(result)
    assert "skipped (LAC_GUARD=off)" in result.err


def _sockets(repo: Path) -> list[Path]:
    return sorted((repo / ".git" / "lacunari").glob("edit-*.sock"))


def test_the_resident_helper_answers_the_same_and_is_optional(claimed: Path, lac: Lac) -> None:
    payload = write(claimed, "core/auth.py")
    first = hook(claimed, payload, helper=True)  # decides itself, starts the helper
    deadline = time.monotonic() + 30
    while not _sockets(claimed) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _sockets(claimed), "the helper did not start"
    try:
        second = hook(claimed, payload, helper=True)
        assert (second.code, second.out) == (first.code, first.out)
        assert claude_denied(second).startswith("dana holds core/auth.py")
        # A changed policy applies at once, through the helper too.
        git(claimed, "config", "lac.edit.undeclared", "deny")
        assert "not declared" in claude_denied(hook(claimed, write(claimed, "x.py"), helper=True))
        # The board moves under the helper: a release is seen at once.
        assert lac("release", "1", env={"LAC_AGENT": "dana"}).code == 0
        git(claimed, "config", "lac.edit.undeclared", "allow")
        claude_allowed(hook(claimed, payload, helper=True))
        # Another agent's environment is another helper's: never alice's answers.
        assert lac("lock", "core/auth.py", env={"LAC_AGENT": "alice"}).code == 0
        assert claude_denied(hook(claimed, payload, agent="erin", helper=True)).startswith(
            "alice holds"
        )
    finally:
        for sock in _sockets(claimed):
            sock.unlink()
    # A socket that answers nothing: the hook decides itself.
    (claimed / ".git" / "lacunari").mkdir(exist_ok=True)
    claude_allowed(hook(claimed, write(claimed, "README"), helper=False))


def test_a_path_declared_for_reading_is_undeclared_for_an_edit(lac: Lac, repo: Path) -> None:
    """A read lock goes at done, before the work lands: an edit of a path the
    claim only reads is an undeclared write (lac.edit.undeclared), and with
    lock it takes a write lock that refuses other writers and readers."""
    assert lac("task", "add", "look", "--read", "docs/guide.md").code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "alice"}).code == 0
    git(repo, "config", "lac.edit.undeclared", "deny")
    reason = claude_denied(hook(repo, write(repo, "docs/guide.md")))
    assert reason.startswith("docs/guide.md is not declared by your claim of task #1")
    git(repo, "config", "lac.edit.undeclared", "lock")
    took = hook(repo, write(repo, "docs/guide.md"))
    claude_allowed(took)
    assert "locked docs/guide.md for task #1" in took.err
    modes = {(lk["pattern"], lk["mode"]) for lk in lac("locks", "--json").json["locks"]}
    assert ("docs/guide.md", "write") in modes
    assert lac("lock", "--read", "docs/guide.md", env={"LAC_AGENT": "ivy"}).code == 1


def test_the_wait_advice_names_a_glob_named_file_as_itself(lac: Lac, repo: Path) -> None:
    """A file named *.md held by another: the advice waits for that file, not
    for every .md file (which it would, spelled as a glob)."""
    from .test_wait import finish, waiter

    assert lac("lock", "\\*.md", env={"LAC_AGENT": "erin"}).code == 0
    assert lac("lock", "a.md", env={"LAC_AGENT": "frank"}).code == 0
    reason = claude_denied(hook(repo, write(repo, "*.md")))
    assert reason == "erin holds \\*.md (no task) (covering *.md); git lac wait '\\*.md'"
    advised = reason.rpartition("git lac wait ")[2]
    waiting = waiter(repo, "alice", shlex.split(advised)[0], "--timeout", "60")
    assert lac("unlock", "\\*.md", env={"LAC_AGENT": "erin"}).code == 0
    code, body = finish(waiting)
    assert code == 0 and body["paths"] == ["\\*.md"], body  # frank's a.md did not hold it
