"""The generic protocol (ours, for a harness without an adapter): stdin
``{"paths": [P, ...], "cwd": D}`` (``cwd`` optional: the hook's own
directory); the answer one JSON object ``{"ok": B, "decision": "allow" |
"deny", "reason": R, ...}``, exit 0 allowed or 1 refused, as every ``git lac``
command. No harness takes exit 1 as a block: it is for scripts, and what
`git lac doctor` fails when a harness's entry runs it."""

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
    text,
)

if TYPE_CHECKING:
    from pathlib import Path

HARNESS = Harness.GENERIC
PROJECT_DIR: str | None = None
SCOPES: dict[str, str] = {}


def parse(data: dict[str, Any], default_cwd: str) -> EditRequest:
    request = EditRequest(HARNESS, text(data.get("cwd", default_cwd), "cwd"))
    paths = data.get("paths")
    if not isinstance(paths, list):
        raise MalformedPayload('"paths" is not a list')
    request.paths = [text(p, "a path in paths") for p in paths]
    return request


def render(
    request: EditRequest | None,
    allowed: bool,
    reason: str,
    body: dict[str, Any] | None,
    notes: list[str],
) -> Answer:
    said: dict[str, Any] = {
        **(body or {}),
        "ok": allowed,
        "decision": "allow" if allowed else "deny",
        "reason": reason or None,
    }
    return Answer(0 if allowed else 1, json.dumps(said, sort_keys=True), notes)


def tell(
    request: EditRequest | None, context: str, body: dict[str, Any], notes: list[str]
) -> Answer:
    """Allowed, the notice under ``"notice"`` in the one object (the body has it)."""
    return render(request, True, "", body, notes)


def blocked(request: EditRequest | None, reason: str, line: str) -> Answer:
    body: dict[str, Any] = {"checked": [], "locked": []}
    return render(request, False, reason, body, [line])


def check(scope: str, top: Path | None) -> None:
    raise NotImplementedError


def install(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    raise NotImplementedError


def uninstall(scope: str, top: Path | None, backup_dir: Path) -> SettingsChange:
    raise NotImplementedError


def entries(top: Path | None) -> tuple[list[Installed], list[str]]:
    return [], []


def probe_payload(top: Path, rel: str) -> list[dict[str, Any]]:
    return [{"paths": [str(top / rel)], "cwd": str(top)}]


def judge(code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    try:
        said = json.loads(stdout)
    except ValueError:
        return False, ""
    refused = code == 1 and isinstance(said, dict) and said.get("decision") == "deny"
    return refused, str(said.get("reason") or "") if refused else ""
