"""Merging our entries into a harness's JSON hook file, and taking them out.

Most harnesses keep hooks as ``{"hooks": {EVENT: [ITEM, ...]}}``: an ITEM is a
group ``{"matcher": M, "hooks": [ENTRY, ...]}`` (Claude Code's shape, which
Gemini CLI, Codex, Qwen Code and Goose share) or the entry itself (Cursor,
Copilot CLI, Windsurf, Kiro CLI). An entry of ours is one whose command
(``command``, or Copilot's ``bash``) runs ``git-lac guard edit|probe``.

Install keeps everything else, in order, and replaces any older entry of
ours; the file as it was is kept aside, so that uninstall gives it back byte
for byte when nothing else changed (and removes a file install created).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, NamedTuple

from .command import is_edit, is_ours
from .protocol import Harness, Installed, SettingsChange

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

COMMAND_KEYS = ("command", "bash")


class Spec(NamedTuple):
    """Where a harness keeps hooks, and what we put there."""

    harness: Harness
    scopes: dict[str, str]  # scope -> file (relative to the top, or ``~/``)
    edit_event: str  # the event our edit entry is on
    to_seconds: float  # the entry's ``timeout`` unit, in seconds
    timeout_key: str = "timeout"
    defaults: dict[str, Any] = {}  # top-level keys a file we create starts with  # noqa: RUF012


def path_of(spec: Spec, scope: str, top: Path | None) -> Path:
    from pathlib import Path

    where = spec.scopes[scope]
    if where.startswith("~/"):
        return Path.home() / where[2:]
    assert top is not None
    return top / where


def _entry_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and any(is_ours(hook.get(k)) for k in COMMAND_KEYS)


def _entry_edit(hook: Any) -> str | None:
    if not isinstance(hook, dict):
        return None
    for key in COMMAND_KEYS:
        if is_edit(hook.get(key)):
            return str(hook[key])
    return None


def load(path: Path, events: set[str]) -> dict[str, Any] | None:
    """The file as JSON (None when there is none); bad: InvalidInput, nothing written."""
    from ..errors import InvalidInput

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
        if event in events and not isinstance(groups, list):
            raise InvalidInput(f'{path}: "hooks.{event}" is not a list; nothing was changed')
    return data


def write(path: Path, data: dict[str, Any]) -> None:
    if path.is_symlink():  # a dotfiles link: the file it names changes, the link stays
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, path)


def without_ours(groups: list[Any]) -> list[Any]:
    """The event's items with our entries taken out (a group left empty goes)."""
    kept: list[Any] = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            hooks = [h for h in group["hooks"] if not _entry_ours(h)]
            if not hooks and len(group["hooks"]) > 0:
                continue
            group = {**group, "hooks": hooks}
        elif _entry_ours(group):
            continue
        kept.append(group)
    return kept


def ours_count(groups: Any) -> int:
    if not isinstance(groups, list):
        return 0
    count = 0
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            count += sum(1 for hook in group["hooks"] if _entry_ours(hook))
        elif _entry_ours(group):
            count += 1
    return count


def edit_entries(spec: Spec, data: dict[str, Any] | None) -> list[tuple[str, float | None]]:
    """(command, timeout in seconds) of each edit entry of ours on the edit event."""
    found: list[tuple[str, float | None]] = []
    groups = ((data or {}).get("hooks") or {}).get(spec.edit_event) or []
    for group in groups if isinstance(groups, list) else ():
        hooks = group.get("hooks") if isinstance(group, dict) else None
        for hook in hooks if isinstance(hooks, list) else [group]:
            command = _entry_edit(hook)
            if command is not None:
                given = hook.get(spec.timeout_key)
                seconds = float(given) * spec.to_seconds if isinstance(given, int | float) else None
                found.append((command, seconds))
    return found


LONGEST = 60.0  # seconds: no probe waits longer, whatever the entry says


def entries(
    spec: Spec, top: Path | None, events: set[str], env: tuple[tuple[str, str], ...] = ()
) -> tuple[list[Installed], list[str]]:
    from ..errors import InvalidInput

    found: list[Installed] = []
    troubles: list[str] = []
    for scope in spec.scopes:
        if top is None and not spec.scopes[scope].startswith("~/"):
            continue
        path = path_of(spec, scope, top)
        try:
            data = load(path, events)
        except InvalidInput as exc:
            troubles.append(exc.message)
            continue
        for command, seconds in edit_entries(spec, data):
            timeout = min(seconds, LONGEST) if seconds is not None else LONGEST
            found.append(Installed(spec.harness, scope, path, command, timeout, env=env))
    return found, troubles


def _backup(backup_dir: Path, spec: Spec, scope: str) -> Path:
    return backup_dir / f"{spec.harness.value}-{scope}.json"


def install(
    spec: Spec,
    scope: str,
    top: Path | None,
    backup_dir: Path,
    ours: dict[str, Any],
) -> SettingsChange:
    """Merge ``ours`` (event -> our item, or a list of them) into the file of that scope."""
    path = path_of(spec, scope, top)
    data = load(path, set(ours))
    hooks = dict((data or {}).get("hooks") or {})
    had_ours = any(ours_count(groups) for groups in hooks.values())
    for event, item in ours.items():
        items = item if isinstance(item, list) else [item]
        groups = hooks.get(event) or []
        if ours_count(groups) == ours_count(items) and all(i in groups for i in items):
            continue  # already ours, as this version writes it: left where it is
        hooks[event] = [*without_ours(groups), *items]
    base = data if data is not None else dict(spec.defaults)
    new = {**base, "hooks": hooks}
    if new == data:
        return SettingsChange(spec.harness.value, str(path), "unchanged", scope)
    if not had_ours:  # the user's own file, before we touched it
        backup = _backup(backup_dir, spec, scope)
        backup.parent.mkdir(parents=True, exist_ok=True)
        if data is None:
            backup.unlink(missing_ok=True)
        else:
            backup.write_bytes(path.read_bytes())
    write(path, new)
    return SettingsChange(spec.harness.value, str(path), "installed", scope)


def uninstall(
    spec: Spec, scope: str, top: Path | None, backup_dir: Path, events: set[str]
) -> SettingsChange:
    """Take our entries out again: what install added goes, nothing else
    changes. When the rest equals the file as install found it, that file
    comes back byte for byte (or goes, if there was none)."""
    path = path_of(spec, scope, top)
    data = load(path, events)
    hooks = (data or {}).get("hooks") or {}
    if data is None or not any(ours_count(groups) for groups in hooks.values()):
        return SettingsChange(spec.harness.value, str(path), "absent", scope)
    kept_hooks = {}
    for event, groups in hooks.items():
        kept = without_ours(groups) if ours_count(groups) else groups
        if kept or not ours_count(groups):
            kept_hooks[event] = kept
    rest = {**data, "hooks": kept_hooks}
    if not kept_hooks:
        del rest["hooks"]
    backup = _backup(backup_dir, spec, scope)
    if not backup.exists() and scope == "project":  # kept by a version before scopes
        backup = backup_dir / f"{spec.harness.value}.json"
    original = load(backup, events) if backup.exists() else None
    if original is not None and original == rest:
        path.write_bytes(backup.read_bytes())
    elif original is None and (not rest or rest == spec.defaults):
        path.unlink()
        remove_empty_parents(path, top)
    else:
        write(path, rest)
    backup.unlink(missing_ok=True)
    return SettingsChange(spec.harness.value, str(path), "removed", scope)


def remove_empty_parents(path: Path, top: Path | None) -> None:
    """The directories install made for ``path``, if nothing else is in them
    (up to the top of the work tree, or the home directory)."""
    from pathlib import Path

    stop = top if top is not None else Path.home()
    here = path.parent
    while here != stop and stop in here.parents:
        try:
            here.rmdir()
        except OSError:
            return
        here = here.parent


class HookFile:
    """The verbs every adapter whose hooks live in a JSON hook file shares:
    ``check``, ``uninstall`` and ``entries``, for its ``spec`` and events."""

    def __init__(self, spec: Callable[[], Spec], events: set[str]) -> None:
        self.spec, self.events = spec, events

    def check(self, scope: str, top: Path | None) -> None:
        load(path_of(self.spec(), scope, top), self.events)

    def uninstall(self, scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
        return uninstall(self.spec(), scope, top, backup_dir, self.events)

    def entries(
        self, top: Path | None, env: tuple[tuple[str, str], ...] = ()
    ) -> tuple[list[Installed], list[str]]:
        return entries(self.spec(), top, self.events, env)
