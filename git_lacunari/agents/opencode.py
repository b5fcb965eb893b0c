"""OpenCode, as ``opencode-ai`` 1.18.33 ships it (a Bun-compiled binary; the
plugin loader and the tool registry read in its embedded JavaScript, and
seen running it against a stand-in model).

- file: OpenCode has no command hooks. A plugin is a module in
  ``.opencode/plugins/`` (or ``plugin/``; ``{plugin,plugins}/*.{ts,js}`` of
  each configuration directory), loaded in process by OpenCode's own Bun;
  every exported function is a plugin, called with ``{client, project,
  worktree, directory, $, ...}`` and returning its hooks. Ours,
  ``.opencode/plugins/git-lacunari.ts``, returns ``tool.execute.before``,
  which OpenCode awaits before each tool with ``input`` ``{tool,
  sessionID, callID}`` and ``output`` ``{args}``: the plugin runs
  ``git-lac guard edit --harness opencode`` (through ``/bin/sh -c``, the
  command in the file's ``COMMAND``) with that as JSON on stdin, and throws
  an ``Error`` with the reason to refuse (the model gets exactly that text).
  Returning lets the tool run. Anything that goes wrong in the plugin throws
  too: in process, OpenCode refuses the call. (A plugin file that fails to
  load is skipped without a word: `git lac doctor` runs the command it holds.)
- the tools (``args``): ``write`` and ``edit`` ``{"filePath"}``,
  ``apply_patch`` ``{"patchText"}`` (Codex's patch grammar: every file
  header counts), ``bash`` ``{"command", "workdir"}`` (``workdir`` relative
  to the project's directory, or absolute).
- what our command answers the plugin (ours, not OpenCode's): one JSON
  object on stdout, ``{"decision": "deny", "reason": R}`` or ``{}``.
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

HARNESS = Harness.OPENCODE
PROJECT_DIR: str | None = None
FILE_TOOLS = {"write": "filePath", "edit": "filePath", "multiedit": "filePath"}
PLUGIN = ".opencode/plugins/git-lacunari.ts"
SCOPES = {"project": PLUGIN}
MARK = "// git-lacunari edit guard"
TIMEOUT = 30.0  # seconds: the plugin's own limit on the command


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    from .codex import patch_paths

    request = EditRequest(HARNESS, text(data.get("cwd", default_cwd), "cwd"))
    request.tool = text(data.get("tool"), "tool")
    args = obj(data.get("args"), "args")
    field_name = FILE_TOOLS.get(request.tool)
    if field_name is not None:
        request.paths = [text(args.get(field_name), f"args.{field_name}")]
    elif request.tool == "apply_patch":
        request.paths = patch_paths(text(args.get("patchText"), "args.patchText"))
        if not request.paths:
            raise MalformedPayload("args.patchText is a patch naming no file")
    elif request.tool == "bash":
        request.shell = text(args.get("command"), "args.command")
        if args.get("workdir") is not None:
            request.shell_dir = text(args.get("workdir"), "args.workdir")
    return request


def render(
    request: EditRequest | None,
    allowed: bool,
    reason: str,
    body: dict[str, Any] | None,
    notes: list[str],
) -> Answer:
    said = [n for n in notes if not n.startswith("refused: ")]
    if allowed:
        return Answer(0, "{}", said)
    return Answer(
        0, json.dumps({"decision": "deny", "reason": reason}), [f"refused: {reason}", *said]
    )


def blocked(request: EditRequest | None, reason: str, line: str) -> Answer:
    return Answer(0, json.dumps({"decision": "deny", "reason": reason}), [line])


def command(scope: str = "project") -> str:
    from .command import hook_command, json_refusal

    refuse = json_refusal(json.dumps({"decision": "deny", "reason": "%s"}))
    return hook_command(HARNESS.value, scope, passes="0", refuse=refuse)


def plugin(scope: str = "project") -> str:
    """The plugin's source: the command as a JSON string (TypeScript reads it
    as its own string literal), run with the call on stdin."""
    return f"""{MARK} (git lac hooks install --agent opencode; take it out with
// `git lac hooks uninstall --agent opencode`). Before each tool call it asks
// git-lac whether the paths it writes are held by another agent, and refuses
// the call (throws) when they are, or when it cannot get an answer.
import {{ spawnSync }} from "node:child_process"

const COMMAND = {json.dumps(command(scope))}
const TIMEOUT_MS = {int(TIMEOUT * 1000)}

export const GitLacunari = async ({{ directory }}: {{ directory: string }}) => ({{
  "tool.execute.before": async (
    input: {{ tool: string; sessionID?: string; callID?: string }},
    output: {{ args: unknown }},
  ) => {{
    const call = {{ ...input, args: output.args, cwd: directory }}
    const ran = spawnSync("/bin/sh", ["-c", COMMAND], {{
      cwd: directory,
      input: JSON.stringify(call),
      encoding: "utf8",
      timeout: TIMEOUT_MS,
    }})
    const why = (ran.stderr || "").trim()
    if (ran.error || ran.status !== 0) {{
      const how = ran.error ? String(ran.error) : `exit ${{ran.status}}`
      throw new Error(`git-lacunari: the edit guard did not answer (${{how}}): ${{why}}`)
    }}
    let said: {{ decision?: string; reason?: string }}
    try {{
      said = JSON.parse(ran.stdout)
    }} catch {{
      throw new Error(`git-lacunari: the edit guard's answer is not JSON: ${{why}}`)
    }}
    if (said.decision === "deny") throw new Error(said.reason || "git-lacunari: edit refused")
  }},
}})
"""


def _path(top: Path | None) -> Path:
    assert top is not None
    return top / PLUGIN


def _ours(path: Path) -> bool:
    try:
        return path.read_text("utf-8", "replace").startswith(MARK)
    except OSError:
        return False


def check(scope: str, top: Path | None) -> None:
    from ..errors import InvalidInput

    path = _path(top)
    if (path.exists() or path.is_symlink()) and not _ours(path):
        raise InvalidInput(f"{path} is not git-lacunari's plugin; nothing was changed")


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    import os

    check(scope, top)
    path = _path(top)
    body = plugin(scope)
    if path.exists() and path.read_text("utf-8") == body:
        return SettingsChange(HARNESS.value, str(path), "unchanged", scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(body, "utf-8")
    os.replace(tmp, path)
    return SettingsChange(HARNESS.value, str(path), "installed", scope)


def uninstall(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    from .hook_json import remove_empty_parents

    path = _path(top)
    if not (path.exists() and _ours(path)):
        return SettingsChange(HARNESS.value, str(path), "absent", scope)
    path.unlink()
    remove_empty_parents(path, top)
    return SettingsChange(HARNESS.value, str(path), "removed", scope)


def held_command(source: str) -> str | None:
    """The command a plugin file of ours runs (its ``COMMAND`` line), or None."""
    for line in source.splitlines():
        if line.startswith("const COMMAND = "):
            try:
                found = json.loads(line[len("const COMMAND = ") :])
            except ValueError:
                return None
            return found if isinstance(found, str) else None
    return None


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    if top is None:
        return [], []
    path = _path(top)
    if not (path.is_file() and _ours(path)):
        return [], []
    found = held_command(path.read_text("utf-8", "replace"))
    if found is None:
        return [], [f"{path}: no COMMAND line of git-lacunari's plugin"]
    return [Installed(HARNESS, "project", path, found, TIMEOUT)], []


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    base = {"sessionID": "lac-probe", "callID": "lac-probe", "cwd": str(top)}
    return [
        {**base, "tool": "write", "args": {"filePath": str(top / rel), "content": ""}},
        {**base, "tool": "bash", "args": {"command": f"sed -i s/a/b/ {rel}"}},
    ]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """As the plugin reads it (and OpenCode then refuses on the Error it throws):
    any exit but 0, or output that is not JSON, throws without the reason."""
    if code != 0:
        return True, f"exit {code}: the plugin throws"
    try:
        said = json.loads(stdout)
    except ValueError:
        return True, "not JSON: the plugin throws"
    if isinstance(said, dict) and said.get("decision") == "deny":
        return True, str(said.get("reason", ""))
    return False, ""
