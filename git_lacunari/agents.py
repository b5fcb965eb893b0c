"""The agent harnesses `git lac guard edit` answers, each in its own protocol.

Every field name here is the harness's own, as its documentation gives it;
nothing is guessed. A harness is supported when its pre-tool hook protocol
is documented: what it sends on stdin, how a hook refuses, and where a
project's settings file keeps its hooks.

**Claude Code** (https://code.claude.com/docs/en/hooks, "PreToolUse";
the same shapes as the Agent SDK's ``PreToolUseHookInput`` and
``PreToolUseHookSpecificOutput`` in ``claude_agent_sdk/types.py``):

- stdin: ``session_id``, ``transcript_path``, ``cwd``, ``permission_mode``,
  ``hook_event_name`` (``"PreToolUse"``), ``tool_name``, ``tool_input``,
  ``tool_use_id``. The file tools' ``tool_input``: ``Write`` and ``Edit``
  ``{"file_path"}``, ``NotebookEdit`` ``{"notebook_path"}``; the shells
  ``Bash`` and ``PowerShell`` ``{"command"}`` (run in ``cwd``). Checked
  against Claude Code 2.1.197 as shipped (``npm pack
  @anthropic-ai/claude-code-linux-x64@2.1.197``: the tool names in its
  binary, ``sdk-tools.d.ts`` for the inputs; PowerShell's schema is
  ``strictObject({command, timeout, description, run_in_background})``).
  ``MultiEdit`` ``{"file_path", "edits"}`` is gone from 2.1.197 and kept for
  older releases. The hook runs with ``CLAUDE_PROJECT_DIR``, the project's
  directory: whose agent is asking.
- refusal: exit 0 with ``{"hookSpecificOutput": {"hookEventName":
  "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason":
  R}}`` on stdout (R is shown to Claude). We never answer ``"allow"``: that
  would skip the user's own permission prompt; letting an edit through is
  exit 0 with nothing on stdout. (Exit 2 also blocks, with stderr as the
  reason: that is how a bad setting refuses, see below.)
- settings: ``.claude/settings.json``, ``{"hooks": {"PreToolUse": [{"matcher":
  "Write|Edit", "hooks": [{"type": "command", "command": C, "timeout": S}]}]}}``
  (``matcher`` a regex over the tool name; ``timeout`` in seconds).

**Gemini CLI** (https://geminicli.com/docs/hooks/reference, "BeforeTool";
tools in https://geminicli.com/docs/tools/file-system and .../tools/shell):

- stdin: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``
  (``"BeforeTool"``), ``timestamp``, ``tool_name``, ``tool_input``. The file
  tools: ``write_file`` and ``replace`` ``{"file_path"}``; the shell tool
  ``run_shell_command`` ``{"command", "dir_path"}``, ``dir_path`` resolved
  from the project root (``directory`` in older releases). Checked against
  ``@google/gemini-cli-core`` 0.61.0, what gemini-cli 0.61.0 bundles:
  ``dist/src/tools/definitions/base-declarations.js`` (``PARAM_FILE_PATH``,
  ``PARAM_DIR_PATH``, ``SHELL_TOOL_NAME``, ``WRITE_FILE_TOOL_NAME``,
  ``EDIT_TOOL_NAME``) and ``tools/shell.js`` (``path.resolve(
  config.getTargetDir(), params.dir_path)``). The hook runs with
  ``GEMINI_PROJECT_DIR`` (``hooks/hookRunner.js``).
- refusal: exit 0 with ``{"decision": "deny", "reason": R}`` on stdout (R is
  sent to the agent as the tool's error; 0.61.0's ``hooks/types.js``:
  ``isBlockingDecision()`` is ``decision === 'block' || decision === 'deny'``).
  stdout must hold nothing but the final JSON (``hooks/hookRunner.js`` parses
  ``stdout.trim() || stderr.trim()``), so letting a call through prints ``{}``.
- settings: ``.gemini/settings.json``, ``{"hooks": {"BeforeTool": [{"matcher":
  "write_file|replace", "hooks": [{"type": "command", "command": C, "name": N,
  "timeout": MS}]}]}}`` (``timeout`` in milliseconds).

**Generic** (ours, for any other harness): stdin ``{"paths": [P, ...],
"cwd": D}`` (``cwd`` optional: the hook's own directory); answer one JSON
object ``{"ok": B, "decision": "allow"|"deny", "reason": R, ...}``, exit 0
allowed or 1 refused, as every ``git lac`` command.

Both harnesses treat exit 2 as "block, stderr is the reason" and any other
non-zero exit as a warning that lets the call through; our own exit codes
(README, "Exit codes") agree with that: 2 (a bad setting) blocks, 3 (cannot
work here) does not.
"""

from __future__ import annotations

import json
import os
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from pathlib import Path

# No dataclasses here: this module is on the edit hook's path, which runs
# before every tool call of an agent, and importing them costs more than the
# rest of the hook's own code (bench/edit.py).


class Harness(Enum):
    CLAUDE = "claude-code"
    GEMINI = "gemini"
    GENERIC = "generic"


# The names `--harness` and `hooks install --agent` take (and a short alias each).
HARNESS_NAMES = {
    "claude-code": Harness.CLAUDE,
    "claude": Harness.CLAUDE,
    "gemini": Harness.GEMINI,
    "gemini-cli": Harness.GEMINI,
    "generic": Harness.GENERIC,
}

# hook_event_name -> harness, for a payload that does not say (no --harness).
EVENTS = {"PreToolUse": Harness.CLAUDE, "BeforeTool": Harness.GEMINI}

# Per harness: the file-writing tools and the tool_input field holding the path.
FILE_TOOLS: dict[Harness, dict[str, str]] = {
    Harness.CLAUDE: {
        "Write": "file_path",
        "Edit": "file_path",
        "MultiEdit": "file_path",
        "NotebookEdit": "notebook_path",
    },
    Harness.GEMINI: {"write_file": "file_path", "replace": "file_path"},
}
# Per harness: the shell tools, each with the tool_input field of its command
# and the fields that set its directory, first found wins (none: the payload's cwd).
SHELL_TOOLS: dict[Harness, dict[str, tuple[str, tuple[str, ...]]]] = {
    Harness.CLAUDE: {"Bash": ("command", ()), "PowerShell": ("command", ())},
    Harness.GEMINI: {"run_shell_command": ("command", ("dir_path", "directory"))},
}
# Per harness: the environment variable naming the project's directory, which
# tells whose agent is asking (README, "Agents"); else the payload's cwd.
PROJECT_DIRS = {Harness.CLAUDE: "CLAUDE_PROJECT_DIR", Harness.GEMINI: "GEMINI_PROJECT_DIR"}


class MalformedPayload(ValueError):
    """The hook's stdin is not the shape its harness documents."""

    def __init__(self, message: str, harness: Harness | None = None) -> None:
        super().__init__(message)
        self.harness = harness  # whose payload it was, when that could be told


class EditRequest:
    """What one tool call may write, as the payload says it."""

    def __init__(self, harness: Harness, cwd: str) -> None:
        self.harness = harness
        self.cwd = cwd  # the agent's directory (relative paths are resolved from it)
        self.tool = ""
        self.paths: list[str] = []  # as given: absolute or relative to cwd
        self.shell: str | None = None  # a shell command to search for write targets
        self.shell_dir: str | None = None  # where the shell command runs, if not cwd


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or value == "" or "\0" in value:
        raise MalformedPayload(f"{what} is not a non-empty string without NUL")
    try:  # a lone surrogate ("\\ud800" in the JSON) names no file, and prints nowhere
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise MalformedPayload(f"{what} holds a lone surrogate, not text") from None
    return value


MAX_PAYLOAD = 64 * 2**20  # bytes: a Write's content rides in the payload; more is refused


def parse_payload(raw: str | bytes, harness: Harness | None, default_cwd: str) -> EditRequest:
    """The request in a hook's stdin (its bytes, or text); ``harness`` None:
    told by the payload itself."""
    if len(raw) > MAX_PAYLOAD:
        raise MalformedPayload(f"stdin is over {MAX_PAYLOAD // 2**20} MiB", harness)
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedPayload(f"stdin is not UTF-8 (byte {exc.start})", harness) from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise MalformedPayload(f"stdin is not JSON ({exc})") from None
    except RecursionError:
        raise MalformedPayload("stdin is JSON nested too deep") from None
    if not isinstance(data, dict):
        raise MalformedPayload("stdin is not a JSON object")
    if harness is None:
        event = data.get("hook_event_name")
        harness = EVENTS.get(event) if isinstance(event, str) else None
        if harness is None and "paths" in data:
            harness = Harness.GENERIC
        if harness is None:
            raise MalformedPayload(
                "cannot tell the harness: no hook_event_name PreToolUse or BeforeTool, "
                'no "paths" (say --harness NAME)'
            )
    try:
        return _request(data, harness, default_cwd)
    except MalformedPayload as exc:
        raise MalformedPayload(str(exc), harness) from None


def _request(data: dict[str, Any], harness: Harness, default_cwd: str) -> EditRequest:
    cwd = data.get("cwd", default_cwd)
    request = EditRequest(harness, _text(cwd, "cwd"))
    if harness is Harness.GENERIC:
        paths = data.get("paths")
        if not isinstance(paths, list):
            raise MalformedPayload('"paths" is not a list')
        request.paths = [_text(p, "a path in paths") for p in paths]
        return request
    tool = data.get("tool_name")
    tool_input = data.get("tool_input")
    request.tool = _text(tool, "tool_name")
    if not isinstance(tool_input, dict):
        raise MalformedPayload("tool_input is not an object")
    field_name = FILE_TOOLS[harness].get(request.tool)
    if field_name is not None:
        request.paths = [_text(tool_input.get(field_name), f"tool_input.{field_name}")]
        return request
    shell = SHELL_TOOLS[harness].get(request.tool)
    if shell is not None:
        command_field, dir_fields = shell
        request.shell = _text(tool_input.get(command_field), f"tool_input.{command_field}")
        for dir_field in dir_fields:
            if tool_input.get(dir_field) is not None:
                request.shell_dir = _text(tool_input.get(dir_field), f"tool_input.{dir_field}")
                break
    return request  # any other tool writes nothing we guard


class Answer(NamedTuple):
    """What the hook prints and its exit code, in the harness's protocol."""

    code: int
    stdout: str
    stderr: list[str]


def answer(
    harness: Harness,
    *,
    allowed: bool,
    reason: str = "",
    body: dict[str, Any] | None = None,
    notes: list[str] | None = None,
) -> Answer:
    """The harness's own form of allow or deny (see the module's sources)."""
    notes = list(notes or [])
    if not allowed:
        notes.append(f"refused: {reason}")
    if harness is Harness.CLAUDE:
        if allowed:
            return Answer(0, "", notes)
        out = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
        return Answer(0, json.dumps(out), notes)
    if harness is Harness.GEMINI:
        said: dict[str, str] = {} if allowed else {"decision": "deny", "reason": reason}
        return Answer(0, json.dumps(said), notes)
    generic: dict[str, Any] = {
        **(body or {}),
        "ok": allowed,
        "decision": "allow" if allowed else "deny",
        "reason": reason or None,
    }
    return Answer(0 if allowed else 1, json.dumps(generic, sort_keys=True), notes)


# --- installing the hook in a harness's project settings -----------------------------


class Settings(NamedTuple):
    """Where a harness keeps a project's hooks, and our entry there."""

    harness: Harness
    file: str  # relative to the top of the work tree
    event: str
    matcher: str
    timeout: int  # in the harness's own unit


SETTINGS = {
    Harness.CLAUDE: Settings(
        Harness.CLAUDE,
        ".claude/settings.json",
        "PreToolUse",
        "Write|Edit|MultiEdit|NotebookEdit|Bash|PowerShell",
        30,  # seconds
    ),
    Harness.GEMINI: Settings(
        Harness.GEMINI,
        ".gemini/settings.json",
        "BeforeTool",
        "write_file|replace|run_shell_command",
        30000,  # milliseconds
    ),
}
INSTALLABLE = tuple(s.harness.value for s in SETTINGS.values())
HOOK_NAME = "git-lacunari"  # Gemini's `name`; how our entry is known in either file


def hook_command(executable: str, harness: Harness) -> str:
    quoted = "'" + executable.replace("'", "'\\''") + "'"
    return f"{quoted} guard edit --harness {harness.value}"


def _is_ours(hook: Any) -> bool:
    return (
        isinstance(hook, dict)
        and isinstance(hook.get("command"), str)
        and " guard edit --harness " in hook["command"]
        and "git-lac" in hook["command"]
    )


class SettingsChange(NamedTuple):
    harness: str
    path: str
    action: str  # installed, unchanged, removed, absent


def _load(path: Path) -> dict[str, Any] | None:
    from .errors import InvalidInput

    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} is not a JSON object; nothing was changed")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InvalidInput(f'{path}: "hooks" is not an object; nothing was changed')
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, path)


def _without_ours(groups: list[Any]) -> list[Any]:
    """The event's hook groups with our entries taken out (a group left empty goes)."""
    kept: list[Any] = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            hooks = [h for h in group["hooks"] if not _is_ours(h)]
            if not hooks and len(group["hooks"]) > 0:
                continue
            group = {**group, "hooks": hooks}
        kept.append(group)
    return kept


def _ours_count(groups: list[Any]) -> int:
    return sum(
        1
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
        if _is_ours(hook)
    )


def install_settings(
    toplevel: Path, harness: Harness, executable: str, backup_dir: Path
) -> SettingsChange:
    """Merge our hook into the harness's project settings, keeping everything
    else. The file as it was is kept in ``backup_dir`` (the git dir), so that
    uninstalling gives it back byte for byte when nothing else changed."""
    spec = SETTINGS[harness]
    path = toplevel / spec.file
    data = _load(path)
    hooks = dict((data or {}).get("hooks") or {})
    groups = hooks.get(spec.event) or []
    if not isinstance(groups, list):
        from .errors import InvalidInput

        raise InvalidInput(f'{path}: "hooks.{spec.event}" is not a list; nothing was changed')
    entry: dict[str, Any] = {"type": "command", "command": hook_command(executable, harness)}
    if harness is Harness.GEMINI:
        entry["name"] = HOOK_NAME
    entry["timeout"] = spec.timeout
    ours = {"matcher": spec.matcher, "hooks": [entry]}
    if ours in groups and _ours_count(groups) == 1:
        return SettingsChange(harness.value, str(path), "unchanged")
    if _ours_count(groups) == 0:  # the user's own file, before we touched it
        backup = backup_dir / f"{harness.value}.json"
        backup.parent.mkdir(parents=True, exist_ok=True)
        if data is None:
            backup.unlink(missing_ok=True)
        else:
            backup.write_bytes(path.read_bytes())
    hooks[spec.event] = [*_without_ours(groups), ours]
    _write(path, {**(data or {}), "hooks": hooks})
    return SettingsChange(harness.value, str(path), "installed")


def uninstall_settings(toplevel: Path, harness: Harness, backup_dir: Path) -> SettingsChange:
    """Take our hook out again: what install added goes, nothing else changes.
    When the rest equals the file as install found it, that file comes back
    byte for byte (or goes, if there was none)."""
    spec = SETTINGS[harness]
    path = toplevel / spec.file
    data = _load(path)
    groups = (data or {}).get("hooks", {}).get(spec.event)
    if data is None or not isinstance(groups, list) or _ours_count(groups) == 0:
        return SettingsChange(harness.value, str(path), "absent")
    hooks = dict(data["hooks"])
    kept = _without_ours(groups)
    if kept:
        hooks[spec.event] = kept
    else:
        del hooks[spec.event]
    rest = {**data, "hooks": hooks}
    if not hooks:
        del rest["hooks"]
    backup = backup_dir / f"{harness.value}.json"
    original = _load(backup) if backup.exists() else None
    if original is not None and original == rest:
        path.write_bytes(backup.read_bytes())
    elif original is None and not rest:
        path.unlink()
        with _suppress_oserror():  # the directory install made, if nothing else is in it
            path.parent.rmdir()
    else:
        _write(path, rest)
    backup.unlink(missing_ok=True)
    return SettingsChange(harness.value, str(path), "removed")


def _suppress_oserror() -> Any:
    import contextlib

    return contextlib.suppress(OSError)
