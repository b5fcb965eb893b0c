"""Cline, as the ``cline`` CLI 3.0.65 ships it (``@cline/core`` and
``@cline/shared`` 0.0.86, minified: the functions named below are as they
stand there), and as the Cline VS Code extension documents it
(https://docs.cline.bot/features/hooks/hook-reference).

- file: a hook is a file named after its event in ``.clinerules/hooks/``
  (also ``~/Documents/Cline/Hooks``, ``~/.cline/hooks``); ours is
  ``.clinerules/hooks/PreToolUse``, a ``#!/bin/sh`` script (the shebang picks
  the interpreter, core ``gl``), run with cwd the workspace. A user's own
  ``PreToolUse`` is kept beside it as ``PreToolUse.legacy`` (no event's
  name: Cline does not run it) and run first; uninstall puts it back.
- stdin: ``hookName``, ``workspaceRoots``, ``taskId``, and the call twice:
  ``tool_call`` ``{"name", "input"}`` (the arguments as given) and
  ``preToolUse`` ``{"toolName", "parameters"}`` (every value a string). The
  3.0.65 tools: ``editor`` ``{"path", ...}`` (create, replace and insert) and
  ``run_commands`` ``{"commands": [C, ...]}``, run in the workspace; the
  extension's: ``write_to_file``, ``replace_in_file`` (``path``) and
  ``execute_command`` (``command``).
- answer (core ``zl``): stdout's JSON (its last ``HOOK_CONTROL\\t`` line, if
  any), ``{"cancel": true, "errorMessage": R}`` refuses; ``{"cancel":
  false}`` lets it through. The exit code is ignored; a timeout, a crash or
  output that is not JSON lets the call through, so the script turns every
  failure of git-lac into the cancel. (A cancel stops the tool, and the
  3.0.65 CLI ends the run there.)
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .protocol import (
    Answer,
    EditRequest,
    Harness,
    Installed,
    MalformedPayload,
    SettingsChange,
    obj,
    text,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.CLINE
PROJECT_DIR: str | None = None
FILE_TOOLS = ("editor", "write_to_file", "replace_in_file")
SHELL_TOOLS = {"run_commands": "commands", "execute_command": "command"}
HOOK = ".clinerules/hooks/PreToolUse"
LEGACY = "PreToolUse.legacy"
SCOPES = {"project": HOOK}
MARK = "# git-lacunari edit guard"
TIMEOUT = 120.0  # seconds: Cline's own (core XV)


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    roots = data.get("workspaceRoots")
    cwd = roots[0] if isinstance(roots, list) and roots else default_cwd
    request = EditRequest(HARNESS, text(cwd, "workspaceRoots[0]"))
    call = data.get("tool_call")
    if isinstance(call, dict):
        name, given = call.get("name"), call.get("input")
    else:
        pre = obj(data.get("preToolUse"), "preToolUse")
        name, given = pre.get("toolName"), pre.get("parameters")
    request.tool = text(name, "the tool's name")
    args = obj(given, "the tool's input")
    if request.tool in FILE_TOOLS:
        request.paths = [text(args.get("path"), f"{request.tool}.path")]
    elif request.tool in SHELL_TOOLS:
        field = SHELL_TOOLS[request.tool]
        commands = args.get(field)
        if isinstance(commands, str) and field == "commands":
            try:  # preToolUse.parameters: every value a string (core Jq)
                commands = json.loads(commands)
            except ValueError:
                raise MalformedPayload(f"{request.tool}.{field} is not a list") from None
        if isinstance(commands, str):
            commands = [commands]
        if not isinstance(commands, list) or not commands:
            raise MalformedPayload(f"{request.tool}.{field} is not a list of commands")
        request.shell = "\n".join(text(c, f"a command in {request.tool}.{field}") for c in commands)
    return request


def _deny(reason: str) -> str:
    return json.dumps({"cancel": True, "errorMessage": reason})


def render(
    request: EditRequest | None,
    allowed: bool,
    reason: str,
    body: dict[str, Any] | None,
    notes: list[str],
) -> Answer:
    said = [n for n in notes if not n.startswith("refused: ")]
    if allowed:
        return Answer(0, json.dumps({"cancel": False}), said)
    return Answer(0, _deny(reason), [f"refused: {reason}", *said])


def blocked(request: EditRequest | None, reason: str, line: str) -> Answer:
    return Answer(0, _deny(reason), [line])


def script(scope: str = "project") -> str:
    """Our PreToolUse: a user's own (PreToolUse.legacy) first, its cancel
    kept; then the guard."""
    from .command import hook_command, json_refusal

    guard = hook_command(HARNESS.value, scope, passes="0", refuse=json_refusal(_deny("%s")))
    return f"""#!/bin/sh
{MARK} (git lac hooks install --agent cline; `git lac hooks uninstall --agent cline`
# takes it out and puts back a PreToolUse of yours, kept as PreToolUse.legacy and run first).
guard() {{
{guard}
}}
legacy="$(dirname "$0")/{LEGACY}"
if [ -f "$legacy" ]; then
  payload=$(cat)
  if [ -x "$legacy" ]; then
    said=$(printf '%s\\n' "$payload" | "$legacy")
  else
    said=$(printf '%s\\n' "$payload" | sh "$legacy")
  fi
  if printf '%s' "$said" | grep -q '"cancel"[[:space:]]*:[[:space:]]*true'; then
    printf '%s\\n' "$said"
    exit 0
  fi
  printf '%s\\n' "$payload" | guard
  exit $?
fi
guard
"""


def _path(top: Path | None) -> Path:
    assert top is not None
    return top / HOOK


def _ours(path: Path) -> bool:
    try:
        return MARK in path.read_text("utf-8", "replace")
    except OSError:
        return False


def check(scope: str, top: Path | None) -> None:
    from ..errors import InvalidInput

    path = _path(top)
    legacy = path.with_name(LEGACY)
    if path.is_dir():
        raise InvalidInput(f"{path} is a directory; nothing was changed")
    if path.exists() and not _ours(path) and (legacy.exists() or legacy.is_symlink()):
        raise InvalidInput(
            f"{path} is a hook of yours and {legacy} is there already: move one away; "
            "nothing was changed"
        )


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    import os

    check(scope, top)
    path = _path(top)
    body = script(scope)
    if path.exists() and _ours(path):
        if path.read_text("utf-8") == body and os.access(path, os.X_OK):
            return SettingsChange(HARNESS.value, str(path), "unchanged", scope)
    elif path.exists() or path.is_symlink():
        os.replace(path, path.with_name(LEGACY))  # the user's own, kept byte for byte
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(body, "utf-8")
    tmp.chmod(0o755)
    os.replace(tmp, path)
    return SettingsChange(HARNESS.value, str(path), "installed", scope)


def uninstall(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    import os

    from .hook_json import remove_empty_parents

    path = _path(top)
    if not (path.exists() and _ours(path)):
        return SettingsChange(HARNESS.value, str(path), "absent", scope)
    legacy = path.with_name(LEGACY)
    if legacy.exists() or legacy.is_symlink():
        os.replace(legacy, path)
    else:
        path.unlink()
        remove_empty_parents(path, top)
    return SettingsChange(HARNESS.value, str(path), "removed", scope)


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    """Ours, as Cline runs it: ``sh PATH`` (its shebang), from the workspace."""
    import shlex

    if top is None:
        return [], []
    path = _path(top)
    if not (path.is_file() and _ours(path)):
        return [], []
    return [Installed(HARNESS, "project", path, f"sh {shlex.quote(str(path))}", TIMEOUT)], []


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    base = {
        "clineVersion": "",
        "hookName": "tool_call",
        "timestamp": "0",
        "taskId": "lac-probe",
        "workspaceRoots": [str(top)],
        "userId": "unknown",
    }
    edit = {"path": str(top / rel), "new_text": ""}
    run = {"commands": [f"sed -i s/a/b/ {rel}"]}
    return [
        {**base, "tool_call": {"id": "p", "name": "editor", "input": edit},
         "preToolUse": {"toolName": "editor", "parameters": {k: str(v) for k, v in edit.items()}}},
        {**base, "tool_call": {"id": "p", "name": "run_commands", "input": run},
         "preToolUse": {"toolName": "run_commands",
                        "parameters": {"commands": json.dumps(run["commands"])}}},
    ]  # fmt: skip


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """stdout's JSON (its last HOOK_CONTROL line, if any) with cancel true
    refuses; the exit code is ignored; anything else lets the call through."""
    lines = [line for line in stdout.splitlines() if line.startswith("HOOK_CONTROL\t")]
    said_text = lines[-1].split("\t", 1)[1] if lines else stdout.strip()
    try:
        said = json.loads(said_text) if said_text else {}
    except ValueError:
        return False, ""
    if isinstance(said, dict) and said.get("cancel") is True:
        return True, str(said.get("errorMessage", ""))
    return False, ""
