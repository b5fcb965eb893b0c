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
  exit 0 with nothing on stdout, or, to tell the model something (a claim
  it lost), ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "additionalContext": C}}`` with no ``permissionDecision`` (C is added to
  Claude's context; the CHANGELOG of 2.1.9: "Added support for PreToolUse
  hooks to return additionalContext to the model"; 2.1.197's hook output
  schema: ``permissionDecision``, ``permissionDecisionReason``,
  ``updatedInput`` and ``additionalContext``, each optional). (Exit 2 also
  blocks, with stderr as the reason: that is how a bad setting refuses, see
  below.)
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
  BeforeTool has no field that adds context to an allowed call (the
  reference lists ``decision``, ``reason``, ``hookSpecificOutput.tool_input``
  and ``continue``; 0.61.0's ``BeforeToolHookOutput`` reads only
  ``tool_input``, ``additionalContext`` is read after a tool and before the
  agent), so a notice for the model (a claim it lost) is a refusal with the
  notice as R: the one text of a BeforeTool hook its model reads.
- settings: ``.gemini/settings.json``, ``{"hooks": {"BeforeTool": [{"matcher":
  "write_file|replace", "hooks": [{"type": "command", "command": C, "name": N,
  "timeout": MS}]}]}}`` (``timeout`` in milliseconds).

**Generic** (ours, for any other harness): stdin ``{"paths": [P, ...],
"cwd": D}`` (``cwd`` optional: the hook's own directory); answer one JSON
object ``{"ok": B, "decision": "allow"|"deny", "reason": R, ...}``, exit 0
allowed or 1 refused, as every ``git lac`` command.

Both harnesses treat exit 2 as "block, stderr is the reason". Any other
non-zero exit is a warning that lets the call through in Claude Code, and in
Gemini CLI for exit 1 only (0.61.0's convertPlainTextToHookOutput denies on
every other code). Our own exit codes (README, "Exit codes"): 2 (a bad
setting) blocks; the installed command (:func:`hook_command`) turns every
other failure into exit 2 with how to get out.
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
    context: str = "",
) -> Answer:
    """The harness's own form of allow or deny (see the module's sources).
    ``context``: a notice for the model beside an allowed call (what was taken
    from the agent, :mod:`git_lacunari.lease_notices`), in the harness's
    form, also a line on stderr for people."""
    notes = list(notes or [])
    if not allowed:
        notes.append(f"refused: {reason}")
    elif context:
        notes.append(f"git lac: {context}")
    if harness is Harness.CLAUDE:
        if allowed and context:  # no permissionDecision: the user's prompt still asks
            told = {"hookEventName": "PreToolUse", "additionalContext": context}
            return Answer(0, json.dumps({"hookSpecificOutput": told}), notes)
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
        if allowed and context:  # BeforeTool has no field for context: its one channel
            reason, allowed = f"{context}; call the tool again to go on", False
        said: dict[str, str] = {} if allowed else {"decision": "deny", "reason": reason}
        return Answer(0, json.dumps(said), notes)
    generic: dict[str, Any] = {
        **(body or {}),
        "ok": allowed,
        "decision": "allow" if allowed else "deny",
        "reason": reason or None,
    }
    return Answer(0 if allowed else 1, json.dumps(generic, sort_keys=True), notes)


# --- installing the hooks in a harness's settings ------------------------------------
#
# Two entries per harness: the edit guard on the pre-tool event, and the probe
# on SessionStart, which tells the agent whether the guard is on.
#
# SessionStart (Claude Code: https://code.claude.com/docs/en/hooks, "SessionStart",
# and claude_agent_sdk/types.py's SessionStartHookSpecificOutput; Gemini CLI
# 0.61.0: docs/hooks/reference.md, "SessionStart", and its bundle's
# getAdditionalContext): exit 0 with {"hookSpecificOutput": {"hookEventName":
# "SessionStart", "additionalContext": TEXT}} puts TEXT before the agent, and
# "systemMessage" shows a line to the user. It never blocks.
#
# Both run the command through a shell (Gemini CLI 0.61.0: `bash -c COMMAND`,
# cwd and GEMINI_PROJECT_DIR the project root, CLAUDE_PROJECT_DIR as an alias;
# Claude Code: CLAUDE_PROJECT_DIR). An exit other than 0 and 2 is a warning in
# Claude Code, which then makes the edit, and a refusal in Gemini CLI (0.61.0's
# convertPlainTextToHookOutput: any code but 0 and 1 denies): so our command
# turns every failure of git-lac into exit 2, with a line saying how to get out.


class Settings(NamedTuple):
    """Where a harness keeps a project's hooks, and our entry there."""

    harness: Harness
    file: str  # the project scope's, relative to the top of the work tree
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
HOOK_NAME = "git-lacunari"  # Gemini's `name` of the edit guard
PROBE_NAME = "git-lacunari-probe"  # ... and of the probe
START_EVENT = "SessionStart"
PROBE_TIMEOUT = {Harness.CLAUDE: 60, Harness.GEMINI: 60000}  # s, ms
TO_SECONDS = {Harness.CLAUDE: 1.0, Harness.GEMINI: 0.001}

# Each harness's settings files, by scope: relative to the top of the work
# tree, or (``~/``) to the home directory. Claude Code reads all three, and
# keeps settings.local.json out of git itself; Gemini CLI has no local scope.
SCOPES: dict[Harness, dict[str, str]] = {
    Harness.CLAUDE: {
        "project": ".claude/settings.json",
        "local": ".claude/settings.local.json",
        "user": "~/.claude/settings.json",
    },
    Harness.GEMINI: {"project": ".gemini/settings.json", "user": "~/.gemini/settings.json"},
}
SCOPE_NAMES = ("project", "local", "user")


def settings_path(harness: Harness, scope: str, top: Path | None) -> Path:
    from pathlib import Path

    where = SCOPES[harness][scope]
    if where.startswith("~/"):
        return Path.home() / where[2:]
    assert top is not None
    return top / where


def _uninstall_hint(harness: Harness, scope: str) -> str:
    return f"git lac hooks uninstall --agent {harness.value}" + (
        f" --scope {scope}" if scope != "project" else ""
    )


def fallback_line(harness: Harness, scope: str) -> str:
    """What the edit hook says (exit 2) when git-lac is not there or fails."""
    return (
        "git-lacunari: git-lac is not on PATH or could not run (exit $s): tool call refused. "
        "Install git-lacunari (pip install git-lacunari) so that git-lac is on PATH, "
        "set LAC_GUARD=off to skip the guard, or take the hook out: "
        + _uninstall_hint(harness, scope)
    )


def hook_command(harness: Harness, scope: str = "project") -> str:
    """The edit guard's command: git-lac from PATH (never a path of the
    installing machine), and exit 2 with how to get out when it is missing or
    fails (an exit other than 0 or 2: 1, a crash, 127 from a missing
    interpreter); LAC_GUARD=off lets the call through even then."""
    return (
        "s=127; command -v git-lac >/dev/null 2>&1 && "
        f"{{ git-lac guard edit --harness {harness.value}; s=$?; }}; "
        "case $s in 0|2) exit $s;; esac; "
        "case ${LAC_GUARD-} in [Oo][Ff][Ff]|0|[Ff][Aa][Ll][Ss][Ee]|[Nn][Oo]) "
        'echo "git-lacunari: edit guard skipped (LAC_GUARD=off)" >&2; exit 0;; esac; '
        f'echo "{fallback_line(harness, scope)}" >&2; exit 2'
    )


def probe_said(harness: Harness, text: str, *, tell_user: bool) -> str:
    """SessionStart's answer: ``text`` for the agent (and the user)."""
    out: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": START_EVENT, "additionalContext": text}
    }
    if tell_user:
        out["systemMessage"] = text
    return json.dumps(out)


def probe_command(harness: Harness, scope: str = "project") -> str:
    """The SessionStart probe's command: ``git lac guard probe``, from PATH;
    when it is missing or fails, the same news in the harness's own form."""
    import shlex

    off = probe_said(
        harness,
        "git-lacunari edit guard: OFF: git-lac is not on PATH or could not run, so "
        f"the {harness.value} edit hook refuses every tool call it checks. Install "
        "git-lacunari (pip install git-lacunari), set LAC_GUARD=off to skip the guard, "
        f"or take the hooks out: {_uninstall_hint(harness, scope)}",
        tell_user=True,
    )
    return (
        "s=127; command -v git-lac >/dev/null 2>&1 && "
        f"{{ git-lac guard probe --harness {harness.value}; s=$?; }}; "
        f"[ $s = 0 ] || printf '%s\\n' {shlex.quote(off)}; exit 0"
    )


def _is_ours(hook: Any) -> bool:
    """Our entry, in any form we ever wrote (the old one named git-lac by an
    absolute path: ``'/venv/bin/git-lac' guard edit --harness NAME``)."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    command = hook["command"]
    return "git-lac" in command and (
        " guard edit --harness " in command or " guard probe --harness " in command
    )


def is_edit_entry(hook: Any) -> bool:
    return _is_ours(hook) and " guard edit --harness " in hook["command"]


class SettingsChange(NamedTuple):
    harness: str
    path: str
    action: str  # installed, unchanged, removed, absent
    scope: str = "project"


def _load(path: Path) -> dict[str, Any] | None:
    from .errors import InvalidInput

    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); nothing was changed") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path} ({exc.strerror}); nothing was changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} is not a JSON object; nothing was changed")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InvalidInput(f'{path}: "hooks" is not an object; nothing was changed')
    for event, groups in (hooks or {}).items():
        if event in SETTINGS_EVENTS and not isinstance(groups, list):
            raise InvalidInput(f'{path}: "hooks.{event}" is not a list; nothing was changed')
    return data


SETTINGS_EVENTS = {s.event for s in SETTINGS.values()} | {START_EVENT}


def load_settings(path: Path) -> dict[str, Any] | None:
    """A harness's settings file as JSON (None when there is none); bad: InvalidInput."""
    return _load(path)


def _write(path: Path, data: dict[str, Any]) -> None:
    if path.is_symlink():  # a dotfiles link: the file it names changes, the link stays
        path = path.resolve()
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


def _ours_count(groups: Any) -> int:
    if not isinstance(groups, list):
        return 0
    return sum(
        1
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
        if _is_ours(hook)
    )


def our_groups(harness: Harness, scope: str) -> dict[str, dict[str, Any]]:
    """Event -> the hook group we install there."""
    spec = SETTINGS[harness]
    edit: dict[str, Any] = {"type": "command", "command": hook_command(harness, scope)}
    probe: dict[str, Any] = {"type": "command", "command": probe_command(harness, scope)}
    if harness is Harness.GEMINI:
        edit["name"], probe["name"] = HOOK_NAME, PROBE_NAME
    edit["timeout"], probe["timeout"] = spec.timeout, PROBE_TIMEOUT[harness]
    # SessionStart without a matcher: every start (new, resumed, cleared, compacted).
    return {spec.event: {"matcher": spec.matcher, "hooks": [edit]}, START_EVENT: {"hooks": [probe]}}


def _backup(backup_dir: Path, harness: Harness, scope: str) -> Path:
    return backup_dir / f"{harness.value}-{scope}.json"


def check_settings(harness: Harness, scope: str, top: Path | None) -> None:
    """Raise InvalidInput, before anything is written, for a file we could not merge into."""
    _load(settings_path(harness, scope, top))


def install_settings(
    harness: Harness, scope: str, top: Path | None, backup_dir: Path
) -> SettingsChange:
    """Merge our hooks into the harness's settings of that scope, keeping
    everything else, and replacing any older entry of ours. The file as it
    was is kept in ``backup_dir``, so that uninstalling gives it back byte for
    byte when nothing else changed."""
    path = settings_path(harness, scope, top)
    data = _load(path)
    hooks = dict((data or {}).get("hooks") or {})
    had_ours = any(_ours_count(groups) for groups in hooks.values())
    for event, ours in our_groups(harness, scope).items():
        groups = hooks.get(event) or []
        if _ours_count(groups) == 1 and ours in groups:
            continue  # already ours, as this version writes it: left where it is
        hooks[event] = [*_without_ours(groups), ours]
    new = {**(data or {}), "hooks": hooks}
    if new == data:
        return SettingsChange(harness.value, str(path), "unchanged", scope)
    if not had_ours:  # the user's own file, before we touched it
        backup = _backup(backup_dir, harness, scope)
        backup.parent.mkdir(parents=True, exist_ok=True)
        if data is None:
            backup.unlink(missing_ok=True)
        else:
            backup.write_bytes(path.read_bytes())
    _write(path, new)
    return SettingsChange(harness.value, str(path), "installed", scope)


def uninstall_settings(
    harness: Harness, scope: str, top: Path | None, backup_dir: Path
) -> SettingsChange:
    """Take our hooks out again: what install added goes, nothing else changes.
    When the rest equals the file as install found it, that file comes back
    byte for byte (or goes, if there was none)."""
    path = settings_path(harness, scope, top)
    data = _load(path)
    hooks = (data or {}).get("hooks") or {}
    if data is None or not any(_ours_count(groups) for groups in hooks.values()):
        return SettingsChange(harness.value, str(path), "absent", scope)
    kept_hooks = {}
    for event, groups in hooks.items():
        kept = _without_ours(groups) if _ours_count(groups) else groups
        if kept or not _ours_count(groups):
            kept_hooks[event] = kept
    rest = {**data, "hooks": kept_hooks}
    if not kept_hooks:
        del rest["hooks"]
    backup = _backup(backup_dir, harness, scope)
    if not backup.exists() and scope == "project":  # kept by a version before scopes
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
    return SettingsChange(harness.value, str(path), "removed", scope)


def _suppress_oserror() -> Any:
    import contextlib

    return contextlib.suppress(OSError)
