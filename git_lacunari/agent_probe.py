"""Is the edit guard on? Run our installed edit hook as its harness runs it,
on the canary (:mod:`git_lacunari.guard.canary`), and read its answer as the
harness reads it. For `git lac guard probe` (the SessionStart hook) and
`git lac doctor` ("agent claude-code", "agent codex", ...).

As each harness runs a command hook: through ``/bin/sh -c`` with its payload
as JSON on stdin, cwd the project's root (or the entry's own directory:
Goose's plugin root), and the harness's variables (``CLAUDE_PROJECT_DIR``;
Gemini CLI 0.61.0's executeCommandHook: ``GEMINI_PROJECT_DIR``,
``GEMINI_CWD``, ``CLAUDE_PROJECT_DIR``; ...). How each reads the answer is
its adapter's ``judge`` (:mod:`git_lacunari.agents`, with the sources).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .agents.protocol import Harness, Installed
from .agents.registry import adapter
from .agents.session_probe import first_line
from .guard.canary import FREE, HELD, HOLDER, VARIABLE


def installed(harness: Harness, top: Path | None) -> tuple[list[Installed], list[str]]:
    """Our edit entries in each of the harness's files, and the files that
    could not be read (said, never skipped silently)."""
    return adapter(harness).entries(top)


def harness_env(entry: Installed) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LAC_GUARD"}
    env.update(dict(entry.env))
    env[VARIABLE] = HELD
    return env


def run_entry(entry: Installed, top: Path) -> str | None:
    """None when the entry refuses the held path naming its holder and lets
    the free one through, in every payload form the harness sends; else what
    is wrong, in one line."""
    env = harness_env(entry)
    spec = adapter(entry.harness)
    cwd = Path(entry.where) if entry.where else top
    held_forms = spec.probe_payload(top, HELD)
    free_forms = spec.probe_payload(top, FREE)
    for held_payload, free_payload in zip(held_forms, free_forms, strict=True):
        answers = []
        for data in (held_payload, free_payload):
            try:
                proc = subprocess.run(
                    ["/bin/sh", "-c", entry.command],
                    cwd=cwd,
                    input=json.dumps(data),
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=entry.timeout,
                )
            except subprocess.TimeoutExpired:
                return f"it did not answer in {entry.timeout:g}s (the harness gives up on it)"
            except OSError as exc:
                return f"it could not be run ({exc.strerror})"
            refused, reason = spec.judge(proc.returncode, proc.stdout, proc.stderr)
            answers.append((proc.returncode, refused, reason, first_line(proc.stderr)))
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
    from .agents.hook_json import Spec, path_of
    from .edit_guard import where

    place = where(start)
    if place is None:
        return False, f"git-lacunari edit guard: off here: {start} is not in a git work tree"
    top = Path(place.top)
    entries, troubles = installed(harness, top)
    if not entries:
        scopes = adapter(harness).SCOPES
        spec = Spec(harness, scopes, "", 1.0)
        files = ", ".join(str(path_of(spec, s, top)) for s in scopes)
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
