"""`hooks install --agent NAME --mcp`: `git lac mcp` registered in the
project's MCP file of that harness, as ``lacunari``, keeping the user's own
servers and settings; a second install changes no byte, and ``--uninstall``
gives the file back byte for byte when nothing else changed in it (or
removes it, when install made it).

Each harness's file and shape, from its documentation:

- Codex CLI: ``.codex/config.toml``, ``[mcp_servers.NAME]`` with ``command``
  and ``args`` (https://developers.openai.com/codex/mcp; the binary's
  ``RawMcpServerConfig``). A project's ``.codex/`` is read once the project
  is trusted.
- Cursor: ``.cursor/mcp.json``, ``{"mcpServers": {NAME: {"command", "args"}}}``
  (https://cursor.com/docs/context/mcp).
- Qwen Code: ``.qwen/settings.json``, ``mcpServers`` (the Gemini CLI shape
  it keeps; https://qwenlm.github.io/qwen-code-docs/en/users/features/mcp/).
- Copilot and VS Code: ``.vscode/mcp.json``, ``{"servers": {NAME: {"type":
  "stdio", "command", "args"}}}`` (https://code.visualstudio.com/docs/copilot/
  reference/mcp-configuration: ``type`` is required).
- Claude Code: ``.mcp.json``, ``mcpServers``; Gemini CLI:
  ``.gemini/settings.json``, ``mcpServers`` (as the README's MCP section).

The TOML is written as text (no TOML writer is a dependency): our table is
appended as three lines and taken out as those three lines, and the result is
read back with :mod:`tomllib` before anything is written: a file our table
cannot be added to (``mcp_servers`` an inline table, say) is refused, with
nothing changed.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from pathlib import Path

    from .protocol import SettingsChange

NAME = "lacunari"
SERVER: dict[str, Any] = {"command": "git", "args": ["lac", "mcp"]}


class McpFile(NamedTuple):
    path: str  # relative to the top of the work tree
    key: str  # the object of servers
    server: dict[str, Any]  # our entry there
    toml: bool = False


FILES = {
    "codex": McpFile(".codex/config.toml", "mcp_servers", SERVER, toml=True),
    "cursor": McpFile(".cursor/mcp.json", "mcpServers", SERVER),
    "qwen": McpFile(".qwen/settings.json", "mcpServers", SERVER),
    "copilot": McpFile(".vscode/mcp.json", "servers", {"type": "stdio", **SERVER}),
    "claude-code": McpFile(".mcp.json", "mcpServers", SERVER),
    "gemini": McpFile(".gemini/settings.json", "mcpServers", SERVER),
}
TOML_BLOCK = f'[mcp_servers.{NAME}]\ncommand = "git"\nargs = ["lac", "mcp"]\n'


def _change(agent: str, path: Path, action: str) -> SettingsChange:
    from .protocol import SettingsChange

    return SettingsChange(f"{agent} mcp", str(path), action)


def _backup(backup_dir: Path, spec: McpFile) -> Path:
    return backup_dir / ("mcp-" + spec.path.strip(".").replace("/", "-").replace(".", "-"))


def _absent_mark(backup_dir: Path, spec: McpFile) -> Path:
    return _backup(backup_dir, spec).with_name(_backup(backup_dir, spec).name + ".absent")


def _read(path: Path) -> str | None:
    from ..errors import InvalidInput

    if not path.exists():
        return None
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path} ({exc}); nothing was changed") from None


def _parse(path: Path, body: str | None, spec: McpFile) -> dict[str, Any]:
    """The file's content (empty when there is none); InvalidInput when it is
    not a JSON object (a TOML document) we could add a server to."""
    from ..errors import InvalidInput

    if body is None:
        return {}
    try:
        if spec.toml:
            import tomllib

            data: Any = tomllib.loads(body)
        else:
            data = json.loads(body) if body.strip() else {}
    except ValueError as exc:
        kind = "TOML" if spec.toml else "JSON"
        raise InvalidInput(f"{path} is not valid {kind} ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} is not a JSON object; nothing was changed")
    servers = data.get(spec.key)
    if servers is not None and not isinstance(servers, dict):
        raise InvalidInput(f'{path}: "{spec.key}" is not an object; nothing was changed')
    return data


def _record(backup_dir: Path, spec: McpFile, path: Path, body: str | None) -> None:
    backup_dir.mkdir(parents=True, exist_ok=True)
    if body is None:
        _absent_mark(backup_dir, spec).write_text("")
        _backup(backup_dir, spec).unlink(missing_ok=True)
    else:
        _backup(backup_dir, spec).write_bytes(path.read_bytes())
        _absent_mark(backup_dir, spec).unlink(missing_ok=True)


def _toml_with(old: str | None) -> str:
    if not old:
        return TOML_BLOCK
    return old + ("\n" if old.endswith("\n") else "\n\n") + TOML_BLOCK


def check(agent: str, top: Path) -> None:
    """InvalidInput, before anything is written, when the file cannot take our server."""
    spec = FILES[agent]
    path = top / spec.path
    data = _parse(path, _read(path), spec)
    _refuse_foreign(path, spec, data)
    if spec.toml and NAME not in (data.get(spec.key) or {}):
        _toml_checked(path, _read(path), data)


def _refuse_foreign(path: Path, spec: McpFile, data: dict[str, Any]) -> None:
    from ..errors import InvalidInput

    theirs = (data.get(spec.key) or {}).get(NAME)
    if theirs is not None and theirs != spec.server:
        raise InvalidInput(
            f'{path} already has a server named "{NAME}" that is not git lac mcp; '
            "rename or remove it, then install again; nothing was changed"
        )


def _toml_checked(path: Path, old: str | None, data: dict[str, Any]) -> str:
    """The file with our table added, read back: everything else as it was, and ours."""
    import tomllib

    from ..errors import InvalidInput

    new = _toml_with(old)
    try:
        got = tomllib.loads(new)
    except ValueError:
        got = None
    expected = dict(data)
    expected[FILES["codex"].key] = {**(data.get(FILES["codex"].key) or {}), NAME: SERVER}
    if got != expected:
        raise InvalidInput(
            f"{path}: cannot add [mcp_servers.{NAME}] after what the file holds (is "
            f'mcp_servers an inline table?): add command = "git", args = ["lac", "mcp"] '
            "there by hand; nothing was changed"
        )
    return new


def install(agent: str, top: Path, backup_dir: Path) -> SettingsChange:
    spec = FILES[agent]
    path = top / spec.path
    old = _read(path)
    data = _parse(path, old, spec)
    _refuse_foreign(path, spec, data)
    if (data.get(spec.key) or {}).get(NAME) == spec.server:
        return _change(agent, path, "unchanged")
    if spec.toml:
        new_text = _toml_checked(path, old, data)
        _record(backup_dir, spec, path, old)
        _write_text(path, new_text)
    else:
        from .hook_json import write

        new = {**data, spec.key: {**(data.get(spec.key) or {}), NAME: spec.server}}
        _record(backup_dir, spec, path, old)
        write(path, new)
    return _change(agent, path, "installed")


def uninstall(agent: str, top: Path, backup_dir: Path) -> SettingsChange:
    """Our server out again (nothing else); the file as install found it when
    the rest is what it was."""
    spec = FILES[agent]
    path = top / spec.path
    body = _read(path)
    data = _parse(path, body, spec)
    servers = data.get(spec.key) or {}
    if body is None or servers.get(NAME) != spec.server:
        return _change(agent, path, "absent")
    backup, absent = _backup(backup_dir, spec), _absent_mark(backup_dir, spec)
    original = backup.read_text("utf-8") if backup.exists() else None
    rest = {k: v for k, v in servers.items() if k != NAME}
    without = {**data, spec.key: rest}
    if not rest:
        del without[spec.key]
    if spec.toml:
        if original is not None and body == _toml_with(original):
            path.write_bytes(backup.read_bytes())
        elif original is None and absent.exists() and body == TOML_BLOCK:
            _unlink(path, top)
        else:
            _toml_remove(path, body)
    else:
        original_data = _parse(backup, original, spec) if original is not None else None
        if original_data is not None and original_data == without:
            path.write_bytes(backup.read_bytes())
        elif original is None and not without:
            _unlink(path, top)
        else:
            from .hook_json import write

            write(path, without)
    backup.unlink(missing_ok=True)
    absent.unlink(missing_ok=True)
    return _change(agent, path, "removed")


def _toml_remove(path: Path, body: str) -> None:
    """Our three lines out of a file changed since install (still read back)."""
    import tomllib

    from ..errors import InvalidInput

    at = body.find(TOML_BLOCK)
    if at < 0:
        raise InvalidInput(
            f"{path}: [mcp_servers.{NAME}] is not as install wrote it; remove it by hand"
        )
    rest = (
        body[:at].rstrip("\n") + ("\n" if body[:at].strip() else "") + body[at + len(TOML_BLOCK) :]
    )
    tomllib.loads(rest)
    if rest.strip():
        _write_text(path, rest)
    else:
        path.unlink()


def _unlink(path: Path, top: Path) -> None:
    from .hook_json import remove_empty_parents

    path.unlink()
    remove_empty_parents(path, top)


def _write_text(path: Path, body: str) -> None:
    if path.is_symlink():
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(body, "utf-8")
    os.replace(tmp, path)
