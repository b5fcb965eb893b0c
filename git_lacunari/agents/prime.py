"""How to work here, told to an agent when it starts: `git lac prime`, and
the same words in a marked section of the project's ``AGENTS.md``.

Where a harness runs a command when a session starts and puts its stdout
before the agent, that command is ``git lac prime``: Claude Code's
``SessionStart`` (https://code.claude.com/docs/en/hooks, "SessionStart": its
input is ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``
``"SessionStart"`` and ``source`` ``startup|resume|clear|compact``; a
command's stdout on exit 0 is added to the context). prime never reads its
stdin: what it says does not depend on the payload, and a harness that keeps
stdin open cannot make it wait.

The harnesses whose session start we do not wire read ``AGENTS.md`` from the
top of the work tree by themselves (Codex CLI 0.171.0, Qwen Code 0.24.4,
Copilot CLI 1.0.102, OpenCode 1.18.33, Cline 3.0.65: each names the file in
its shipped code), so ``hooks install --agent`` writes the words there,
between two HTML comments naming git-lacunari, and ``--uninstall`` takes
them out again (the file as it was, byte for byte, when nothing else changed
in it).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from .protocol import SettingsChange

# What each step is, in the order an agent meets them: (key, command, what it means).
STEPS = (
    (
        "find",
        "git lac ready",
        "lists the tasks you can take now, in the order `git lac claim --next` takes them",
    ),
    (
        "claim",
        "git lac claim ID",
        "claims a task before you edit (or `git lac claim --next`): it locks the paths the "
        "task declares for you, and only you may change them while you hold it",
    ),
    (
        "refusal",
        "",
        "an edit refused with a line like `erin holds src/auth.py on task #1; git lac wait "
        "src/auth.py` was NOT made: another agent holds that path. Do not write it another "
        "way (another tool, a shell command): wait for it, or work on something else",
    ),
    (
        "wait",
        "git lac wait PATH...",
        "blocks until nobody else holds PATH (exit 0; `--timeout D` gives up with exit 1; "
        "`--lock` takes the paths the moment they free)",
    ),
    (
        "done",
        "git lac done ID",
        "marks your task done when your work lands some other way (a pull request)",
    ),
    (
        "land",
        "git lac land",
        "when your work is finished and committed: done and landed for you (the lander "
        "merges your branch; you go on with the next task at once)",
    ),
)
MORE = (
    "`git lac status` shows the board; `git lac heartbeat` keeps a long claim alive; "
    "`git lac release ID` gives a task back; every command takes `--json`"
)
# The section in AGENTS.md: between these two lines, nothing of the user's.
BEGIN = "<!-- git-lacunari: how to work here, written by `git lac hooks install` -->"
END = "<!-- /git-lacunari -->"
AGENTS_MD = "AGENTS.md"
# The harnesses that read AGENTS.md and whose session start we do not wire.
READ_AGENTS_MD = ("codex", "qwen", "copilot", "opencode", "cline")


def words() -> dict[str, Any]:
    """prime's body: the version, each step, and the text made of them."""
    from .. import __version__

    steps = [{"step": key, "command": cmd, "says": says} for key, cmd, says in STEPS]
    return {"version": __version__, "steps": steps, "more": MORE, "text": text(__version__)}


def text(version: str) -> str:
    lines = [
        f"git-lacunari {version} (`git lac --version`) coordinates the agents working in this "
        "repository: each claims a task, and the paths it holds are refused to the others.",
        "",
    ]
    for n, (_key, cmd, says) in enumerate(STEPS, 1):
        lines.append(f"{n}. `{cmd}` {says}." if cmd else f"{n}. Refused: {says}.")
    lines += ["", MORE + "."]
    return "\n".join(lines)


def section() -> str:
    """The AGENTS.md section: the markers and the words between them."""
    return f"{BEGIN}\n## Working with git-lacunari\n\n{words()['text']}\n{END}\n"


def _with_section(old: str | None) -> str:
    if not old:
        return section()
    joint = "\n" if old.endswith("\n") else "\n\n"
    return old + joint + section()


def _span(body: str) -> tuple[int, int] | None:
    """Where our section is in ``body`` (from its first marker to the end of the line
    after its last), or None."""
    start = body.find(BEGIN)
    if start < 0:
        return None
    end = body.find(END, start)
    if end < 0:
        return None
    end += len(END)
    if body[end : end + 1] == "\n":
        end += 1
    return start, end


def _backup(backup_dir: Path) -> Path:
    return backup_dir / "agents-md.orig"


def _absent(backup_dir: Path) -> Path:
    return backup_dir / "agents-md.absent"


def install_agents_md(top: Path, backup_dir: Path) -> SettingsChange:
    """Our section in the project's AGENTS.md: added at its end (or the file
    made), an older one replaced where it stands, the same one left alone."""
    from ..errors import InvalidInput
    from .protocol import SettingsChange

    path = top / AGENTS_MD
    try:
        old = path.read_text("utf-8") if path.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path} ({exc}); nothing was changed") from None
    span = _span(old) if old is not None else None
    if old is not None and span is not None:
        new = old[: span[0]] + section() + old[span[1] :]
        if new == old:
            return SettingsChange("agents-md", str(path), "unchanged")
    else:
        backup_dir.mkdir(parents=True, exist_ok=True)
        if old is None:
            _absent(backup_dir).write_text("")
            _backup(backup_dir).unlink(missing_ok=True)
        else:
            _backup(backup_dir).write_bytes(path.read_bytes())
            _absent(backup_dir).unlink(missing_ok=True)
        new = _with_section(old)
    _write(path, new)
    return SettingsChange("agents-md", str(path), "installed")


def uninstall_agents_md(top: Path, backup_dir: Path) -> SettingsChange:
    """Our section out again: the file as install found it when nothing else
    changed (gone, if install made it); else only the section goes."""
    from .protocol import SettingsChange

    path = top / AGENTS_MD
    try:
        body = path.read_text("utf-8") if path.exists() else None
    except (OSError, UnicodeDecodeError):
        body = None
    span = _span(body) if body is not None else None
    if body is None or span is None:
        return SettingsChange("agents-md", str(path), "absent")
    backup, absent = _backup(backup_dir), _absent(backup_dir)
    original: str | None = None
    if backup.exists():
        original = backup.read_text("utf-8")
    if absent.exists() and body == _with_section(None):
        path.unlink()
    elif original is not None and body == _with_section(original):
        path.write_bytes(backup.read_bytes())
    else:  # changed since: only what lies between our markers goes
        rest = body[: span[0]] + body[span[1] :]
        if rest.strip():
            _write(path, rest)
        else:
            path.unlink()
    backup.unlink(missing_ok=True)
    absent.unlink(missing_ok=True)
    return SettingsChange("agents-md", str(path), "removed")


def _write(path: Path, body: str) -> None:
    if path.is_symlink():
        path = path.resolve()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(body, "utf-8")
    os.replace(tmp, path)
