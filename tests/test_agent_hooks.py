"""`git lac hooks install --agent NAME`: the edit hook in a harness's project settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, lac_process

Lac = Callable[..., Result]

# A user's own settings, as each harness documents them (hooks of their own on
# the same event and on others, and settings that are not hooks at all).
CLAUDE_SETTINGS = """{
    "permissions": {"allow": ["Bash(npm run lint)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}
        ],
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "ruff format"}]}
        ]
    }
}
"""
GEMINI_SETTINGS = """{
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command",
       "hooks": [{"name": "audit", "type": "command", "command": "./audit.sh", "timeout": 5000}]}
    ]
  },
  "theme": "GitHub"
}
"""
FILES = {"claude-code": (".claude/settings.json", CLAUDE_SETTINGS, "PreToolUse")}
FILES["gemini"] = (".gemini/settings.json", GEMINI_SETTINGS, "BeforeTool")


@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
def test_install_keeps_theirs_is_idempotent_and_uninstall_restores(
    lac: Lac, repo: Path, agent: str
) -> None:
    name, original, event = FILES[agent]
    path = repo / name
    path.parent.mkdir()
    path.write_text(original)
    result = lac("hooks", "install", "--agent", agent, "--json")
    assert result.code == 0, result.err
    assert result.json["agents"] == [
        {"harness": agent, "path": str(path), "action": "installed", "scope": "project"}
    ]
    after = json.loads(path.read_text())
    theirs = json.loads(original)
    groups = after["hooks"][event]
    assert groups[:-1] == theirs["hooks"][event]  # theirs kept, in order
    ours = groups[-1]["hooks"][0]
    assert ours["type"] == "command"
    assert f"git-lac guard edit --harness {agent};" in ours["command"]
    for key in set(theirs) - {"hooks"}:
        assert after[key] == theirs[key]
    for other in set(theirs["hooks"]) - {event}:
        assert after["hooks"][other] == theirs["hooks"][other]
    once = path.read_bytes()
    again = lac("hooks", "install", "--agent", agent, "--json")
    assert again.json["agents"][0]["action"] == "unchanged"
    assert path.read_bytes() == once
    removed = lac("hooks", "install", "--agent", agent, "--uninstall", "--json")
    assert removed.json["agents"][0]["action"] == "removed"
    assert path.read_text() == original  # byte for byte
    assert lac("hooks", "uninstall", "--agent", agent, "--json").json["agents"][0]["action"] == (
        "absent"
    )


def test_install_without_a_file_creates_it_and_uninstall_removes_it(lac: Lac, repo: Path) -> None:
    assert lac("hooks", "install", "--agent", "claude-code", "--agent", "gemini").code == 0
    claude = json.loads((repo / ".claude/settings.json").read_text())
    (group,) = claude["hooks"]["PreToolUse"]
    assert group["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash|PowerShell"
    assert group["hooks"][0]["timeout"] == 30  # seconds, in Claude Code
    gemini = json.loads((repo / ".gemini/settings.json").read_text())
    (group,) = gemini["hooks"]["BeforeTool"]
    assert group["matcher"] == "write_file|replace|run_shell_command"
    assert group["hooks"][0]["timeout"] == 30000  # milliseconds, in Gemini CLI
    assert lac("hooks", "uninstall", "--agent", "claude-code", "--agent", "gemini").code == 0
    assert not (repo / ".claude").exists() and not (repo / ".gemini").exists()


def test_a_user_edit_after_install_is_kept_by_uninstall(lac: Lac, repo: Path) -> None:
    assert lac("hooks", "install", "--agent", "claude").code == 0
    path = repo / ".claude/settings.json"
    data = json.loads(path.read_text())
    data["env"] = {"FOO": "1"}
    path.write_text(json.dumps(data))
    assert lac("hooks", "uninstall", "--agent", "claude").code == 0
    assert json.loads(path.read_text()) == {"env": {"FOO": "1"}}


def test_bad_input_is_exit_2_and_touches_nothing(lac: Lac, repo: Path) -> None:
    path = repo / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text("{not json")
    result = lac("hooks", "install", "--agent", "claude-code")
    assert result.code == 2 and "not valid JSON" in result.err
    assert path.read_text() == "{not json"
    result = lac("hooks", "install", "--agent", "nonesuch")
    assert result.code == 2 and "supported: claude-code, gemini, codex" in result.err
    assert lac("hooks", "install", "--uninstall").code == 2


def test_the_installed_command_runs_the_hook(lac: Lac, repo: Path) -> None:
    """The command written into the settings is what the harness runs: run it
    as a shell would, with a documented payload, and see the refusal."""
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "dana"}).code == 0
    assert lac_process(repo, "hooks", "install", "--agent", "claude-code").code == 0
    settings = json.loads((repo / ".claude/settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command.startswith("s=127; command -v git-lac ")  # from PATH: portable
    payload = {
        "session_id": "s",
        "transcript_path": "/tmp/t",
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {
            "file_path": str(repo / "core/auth.py"),
            "old_string": "a",
            "new_string": "b",
        },
        "tool_use_id": "t1",
    }
    env = {**os.environ, "LAC_AGENT": "alice", "LAC_EDIT_HELPER": "off"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # git-lac on PATH
    proc = subprocess.run(
        ["sh", "-c", command],
        cwd=repo,
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    decision = json.loads(proc.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith("dana holds core/auth.py on task #1")
