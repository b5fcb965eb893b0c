"""Is the edit guard on? Run our installed edit hook as its harness runs it,
on the canary (:mod:`git_lacunari.guard.canary`), and read its answer as the
harness reads it. For `git lac guard probe` (the SessionStart hook) and
`git lac doctor` ("agent claude-code", "agent gemini").

As each harness runs a command hook: through a shell with the payload as JSON
on stdin, cwd the project's root, and the harness's variables
(``CLAUDE_PROJECT_DIR``; Gemini CLI 0.61.0's executeCommandHook:
``GEMINI_PROJECT_DIR``, ``GEMINI_CWD``, ``CLAUDE_PROJECT_DIR``). How each
reads the answer (:mod:`git_lacunari.agents` has the sources): Claude Code
blocks on exit 2 (stderr the reason) or on exit 0 with ``permissionDecision``
``"deny"``, and lets any other exit through; Gemini CLI blocks on exit 0
with ``decision`` ``"deny"`` or ``"block"`` (stdout, or stderr when stdout is
empty), and on any exit but 0 and 1.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

from .agents import (
    SCOPES,
    SETTINGS,
    TO_SECONDS,
    Harness,
    is_edit_entry,
    load_settings,
    settings_path,
)
from .errors import InvalidInput
from .guard.canary import FREE, HELD, HOLDER, VARIABLE

LONGEST = 60.0  # seconds: no probe waits longer, whatever the entry says


class Installed(NamedTuple):
    """One edit-guard entry of ours, as a settings file holds it now."""

    harness: Harness
    scope: str
    path: Path
    command: str
    timeout: float  # seconds


def installed(harness: Harness, top: Path | None) -> tuple[list[Installed], list[str]]:
    """Our edit entries in each of the harness's settings files, and the files
    that could not be read (said, never skipped silently)."""
    spec = SETTINGS[harness]
    found: list[Installed] = []
    troubles: list[str] = []
    for scope in SCOPES[harness]:
        if top is None and scope != "user":
            continue
        path = settings_path(harness, scope, top)
        try:
            data = load_settings(path)
        except InvalidInput as exc:  # bad JSON, not an object
            troubles.append(exc.message)
            continue
        groups = ((data or {}).get("hooks") or {}).get(spec.event) or []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for hook in group["hooks"]:
                if is_edit_entry(hook):
                    given = hook.get("timeout")
                    unit = TO_SECONDS[harness]
                    seconds = float(given) * unit if isinstance(given, int | float) else LONGEST
                    found.append(
                        Installed(harness, scope, path, hook["command"], min(seconds, LONGEST))
                    )
    return found, troubles


def payload(harness: Harness, top: Path, rel: str) -> dict[str, Any]:
    """A documented payload of the harness's file-writing tool, for ``rel``."""
    file_path = str(top / rel)
    if harness is Harness.CLAUDE:
        return {
            "session_id": "lac-probe",
            "transcript_path": os.devnull,
            "cwd": str(top),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": file_path, "content": ""},
            "tool_use_id": "lac-probe",
        }
    return {
        "session_id": "lac-probe",
        "transcript_path": os.devnull,
        "cwd": str(top),
        "hook_event_name": "BeforeTool",
        "timestamp": "1970-01-01T00:00:00.000Z",
        "tool_name": "write_file",
        "tool_input": {"file_path": file_path, "content": ""},
    }


def harness_env(harness: Harness, top: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LAC_GUARD"}
    env["CLAUDE_PROJECT_DIR"] = str(top)
    if harness is Harness.GEMINI:
        env.update(GEMINI_PROJECT_DIR=str(top), GEMINI_CWD=str(top), GEMINI_SESSION_ID="lac-probe")
    env[VARIABLE] = HELD
    return env


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= 240 else line[:237] + "..."


def read_answer(harness: Harness, code: int, stdout: str, stderr: str) -> tuple[bool, str]:
    """(refused, reason) as the harness reads the hook's exit and output."""
    if harness is Harness.CLAUDE:
        if code == 2:
            return True, f"exit 2: {_first_line(stderr)}"
        if code != 0:
            return False, ""
        try:
            said = json.loads(stdout) if stdout.strip() else {}
        except ValueError:
            return False, ""
        specific = said.get("hookSpecificOutput") if isinstance(said, dict) else None
        if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
            return True, str(specific.get("permissionDecisionReason", ""))
        return False, ""
    text = stdout.strip() or stderr.strip()
    if code not in (0, 1):
        return True, f"exit {code}: {_first_line(stderr)}"
    try:
        said = json.loads(text) if text else {}
    except ValueError:
        return False, ""
    if isinstance(said, dict) and said.get("decision") in ("deny", "block"):
        return True, str(said.get("reason", ""))
    return False, ""


def run_entry(entry: Installed, top: Path) -> str | None:
    """None when the entry refuses the held path naming its holder and lets
    the free one through; else what is wrong, in one line."""
    env = harness_env(entry.harness, top)
    answers = []
    for rel in (HELD, FREE):
        data = json.dumps(payload(entry.harness, top, rel))
        try:
            proc = subprocess.run(
                ["/bin/sh", "-c", entry.command],
                cwd=top,
                input=data,
                env=env,
                capture_output=True,
                text=True,
                timeout=entry.timeout,
            )
        except subprocess.TimeoutExpired:
            return f"it did not answer in {entry.timeout:g}s (the harness gives up on it)"
        except OSError as exc:
            return f"it could not be run ({exc.strerror})"
        refused, reason = read_answer(entry.harness, proc.returncode, proc.stdout, proc.stderr)
        answers.append((proc.returncode, refused, reason, _first_line(proc.stderr)))
    (code, refused, reason, err), (free_code, free_refused, free_reason, _) = answers
    if not refused:
        said = f"exit {code}" + (f": {err}" if err else "")
        return f"it lets a held path through ({said}): edits are not guarded"
    if f"{HOLDER} holds" not in reason:
        if free_refused:
            return f"it refuses every call, a free path too: {reason or f'exit {code}'}"
        return f"it refuses, but not for the held path: {reason or f'exit {code}'}"
    if free_refused:
        return f"it refuses a free path too: {free_reason or f'exit {free_code}'}"
    return None


def guard_state(harness: Harness, start: str) -> tuple[bool, str]:
    """(on, what to tell the agent) for the work tree at ``start``: every edit
    entry of ours run on the canary (`git lac guard probe`)."""
    from .edit_guard import where

    place = where(start)
    if place is None:
        return False, f"git-lacunari edit guard: off here: {start} is not in a git work tree"
    top = Path(place.top)
    entries, troubles = installed(harness, top)
    if not entries:
        files = ", ".join(str(settings_path(harness, s, top)) for s in SCOPES[harness])
        why = "; ".join(troubles) if troubles else f"no edit hook of git-lacunari in {files}"
        return False, (
            f"git-lacunari edit guard: OFF: {why}: git lac hooks install --agent {harness.value}"
        )
    problems = [f"{e.path}: {p}" for e in entries if (p := run_entry(e, top)) is not None]
    if problems:
        return False, "git-lacunari edit guard: OFF: " + "; ".join(problems)
    where_from = ", ".join(str(e.path) for e in entries)
    return True, (
        f"git-lacunari edit guard: on ({where_from}): an edit of a path another agent "
        "holds is refused before it is made, naming the holder and how to wait "
        "(git lac wait PATH)"
    )
