"""Kiro CLI (https://kiro.dev/docs/cli/hooks and the agent configuration
reference; the same protocol as its open-source predecessor's
``docs/hooks.md`` and ``docs/built-in-tools.md`` in aws/amazon-q-developer-cli).

- file: hooks live in an agent's configuration, ``.kiro/agents/NAME.json``
  (or ``~/.kiro/agents/``): ``{"hooks": {"preToolUse": [{"matcher": TOOL,
  "command": C, "timeout_ms": MS, "cache_ttl_seconds": S}]}}``. Ours is the
  agent ``git-lacunari`` (``.kiro/agents/git-lacunari.json``: every tool,
  and the guard), chosen with ``kiro-cli chat --agent git-lacunari`` or made
  the default (``kiro-cli settings chat.defaultAgent git-lacunari``).
  ``cache_ttl_seconds`` 0: no answer is reused (a path's holder changes).
- stdin: ``hook_event_name`` (``"preToolUse"``), ``cwd``, ``tool_name``,
  ``tool_input``. The file tool ``fs_write`` ``{"command": "create" |
  "str_replace" | "insert" | "append", "path"}``; the shell ``execute_bash``
  ``{"command"}`` (``write`` and ``shell`` are their newer names).
- refusal: exit 2, stderr returned to the model; any other non-zero exit is
  a warning and the tool runs, so the installed command turns every failure
  into exit 2. Allow: exit 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .hook_json import HookFile
from .protocol import (
    EditRequest,
    Harness,
    Installed,
    SettingsChange,
    exit_2,
    exit_2_render,
    no_channel,
    parse_tool_call,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.KIRO
PROJECT_DIR: str | None = None
EVENT = "preToolUse"
FILE_TOOLS = {"fs_write": "path", "write": "path"}
SHELL_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "execute_bash": ("command", ()),
    "shell": ("command", ()),
}
MATCHERS = ("fs_write", "write", "execute_bash", "shell")
TIMEOUT_MS = 30000
AGENT = "git-lacunari"
SCOPES = {"project": f".kiro/agents/{AGENT}.json", "user": f"~/.kiro/agents/{AGENT}.json"}
EVENTS = {EVENT}
DEFAULTS = {
    "name": AGENT,
    "description": "Every tool, each edit checked by git-lacunari's edit guard first",
    "tools": ["*"],
}


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    return parse_tool_call(data, HARNESS, default_cwd, FILE_TOOLS, SHELL_TOOLS)


render = exit_2_render


blocked = exit_2


def _spec() -> Any:
    from .hook_json import Spec

    return Spec(HARNESS, SCOPES, EVENT, 0.001, "timeout_ms", DEFAULTS)


_file = HookFile(_spec, EVENTS)
check = _file.check


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    from .command import hook_command
    from .hook_json import install as merge

    command = hook_command(HARNESS.value, scope)
    items = [
        {"matcher": m, "command": command, "timeout_ms": TIMEOUT_MS, "cache_ttl_seconds": 0}
        for m in MATCHERS
    ]
    return merge(_spec(), scope, top, backup_dir, {EVENT: items})


uninstall = _file.uninstall


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    from .hook_json import entries as found

    every, troubles = found(_spec(), top, EVENTS)
    return list(dict.fromkeys(every)), troubles  # one command, one probe


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    base = {"hook_event_name": EVENT, "cwd": str(top)}
    return [
        {**base, "tool_name": "fs_write",
         "tool_input": {"command": "create", "path": str(top / rel), "file_text": ""}},
        {**base, "tool_name": "execute_bash",
         "tool_input": {"command": f"sed -i s/a/b/ {rel}", "summary": "probe"}},
    ]  # fmt: skip


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """Exit 2 blocks, stderr returned to the model; any other exit lets it run."""
    from .session_probe import first_line

    return (True, first_line(stderr)) if code == 2 else (False, "")


# No field of its answer to an allowed call reaches the model: a refusal says a notice.
tell = no_channel
