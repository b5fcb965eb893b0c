"""Install and remove the native guard hooks, keeping any hook that was there.

Hooks go where git looks for them (``git rev-parse --git-path hooks``): the
common dir, so every linked worktree is covered, or ``core.hooksPath``. A
foreign hook is never overwritten: it moves to ``NAME.legacy`` and our hook
runs it first (pre-commit's own installer does the same), and uninstalling
puts it back.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import CannotWorkHere, HookConflict
from .repo import Repo, git
from .shipped import shipped

HOOK_NAMES = ("pre-commit", "pre-push", "pre-merge-commit", "post-commit", "commit-msg")
SERVER_HOOK_NAMES = ("pre-receive", "post-receive")
MARKER = "# git-lacunari guard hook"
TEMPLATES = shipped("hooks")


@dataclass
class HookChange:
    hook: str
    path: str
    action: str  # installed, unchanged, chained, removed, restored, absent, foreign


def hooks_dir(repo: Repo) -> Path:
    out = git("rev-parse", "--path-format=absolute", "--git-path", "hooks", cwd=repo.toplevel)
    return Path(out.decode().strip())


def lac_executable() -> str:
    """The git-lac that hooks should run: this one, by absolute path, since a
    GUI client or an agent's sandbox may run hooks with another PATH."""
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if here is not None and here.name == "git-lac" and os.access(here, os.X_OK):
        return str(here)
    return shutil.which("git-lac") or "git-lac"


# The one template every hook is made from (hooks/hook.template). A line
# that starts with tags, ``[client stdin]text``, is kept (as ``text``) only in
# a hook that has every one of them; ``@HOOK@``, ``@WHAT@`` and ``@LAC@`` are
# filled in. A hook's tags are its name and these traits:
TEMPLATE = "hook.template"
TRAITS = {
    "pre-commit": ("client", "args"),  # runs on this clone; takes arguments, no stdin
    "pre-merge-commit": ("client", "args"),
    "pre-push": ("client", "stdin"),  # reads the refs being pushed on stdin
    "pre-receive": ("server", "stdin"),  # runs on the server; fails closed
    # After the fact (issue 25, landing): they never refuse.
    "post-commit": ("after", "args"),  # tells the board where the claims' branches stand
    "commit-msg": ("after", "message"),  # names the claims' tasks in Lac-Task trailers
    "post-receive": ("after", "stdin"),  # the server settles what a push landed
}
WHAT = {"pre-commit": "commit", "pre-merge-commit": "merge", "pre-push": "push"}
TAGGED = re.compile(r"\[([a-z][a-z-]*(?: [a-z][a-z-]*)*)\](.*)", re.DOTALL)
FIELD = re.compile(r"@(HOOK|WHAT|LAC)@")


def render(name: str, executable: str) -> str:
    """The hook ``name``, running ``executable``."""
    has = {name, *TRAITS[name]}
    fields = {
        "HOOK": name,
        "WHAT": WHAT.get(name, "push"),
        "LAC": executable.replace("'", "'\\''"),  # inside single quotes
    }
    kept = []
    for line in (TEMPLATES / TEMPLATE).read_text().splitlines(keepends=True):
        tagged = TAGGED.match(line)
        if tagged is None:
            kept.append(line)
        elif set(tagged[1].split()) <= has:
            kept.append(tagged[2])
    # One pass, so nothing filled in (a path with an @ in it) is read as a field.
    return FIELD.sub(lambda m: fields[m[1]], "".join(kept))


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(errors="replace")
    except OSError:
        return False


def install(
    repo: Repo,
    *,
    force: bool = False,
    executable: str | None = None,
    names: tuple[str, ...] = HOOK_NAMES,
) -> list[HookChange]:
    directory = hooks_dir(repo)
    exe = executable or lac_executable()
    planned: list[tuple[str, Path, str]] = []
    for name in names:  # decide everything before touching anything
        path, legacy = directory / name, directory / f"{name}.legacy"
        if path.exists() and not is_ours(path) and legacy.exists() and not force:
            raise HookConflict(
                path=str(path),
                legacy=legacy.name,
                advice="--force replaces the old .legacy with the current hook",
            )
        planned.append((name, path, render(name, exe)))
    directory.mkdir(parents=True, exist_ok=True)
    changes = []
    for name, path, content in planned:
        legacy = directory / f"{name}.legacy"
        action = "installed"
        if path.exists() and not is_ours(path):
            path.replace(legacy)
            action = "chained"
        elif path.exists() and path.read_text() == content:
            changes.append(HookChange(name, str(path), "unchanged"))
            continue
        path.write_text(content)
        path.chmod(0o755)
        changes.append(HookChange(name, str(path), action))
    return changes


def uninstall(repo: Repo, *, names: tuple[str, ...] = HOOK_NAMES) -> list[HookChange]:
    directory = hooks_dir(repo)
    changes = []
    for name in names:
        path, legacy = directory / name, directory / f"{name}.legacy"
        if not path.exists():
            changes.append(HookChange(name, str(path), "absent"))
        elif not is_ours(path):
            changes.append(HookChange(name, str(path), "foreign"))
        elif legacy.exists():
            legacy.replace(path)
            changes.append(HookChange(name, str(path), "restored"))
        else:
            path.unlink()
            changes.append(HookChange(name, str(path), "removed"))
    return changes


# --- a server: the pre-receive guard and the post-receive landing ----------------


def install_server(
    repo: Repo, *, force: bool = False, executable: str | None = None
) -> list[HookChange]:
    """The pre-receive guard and the post-receive landing check, chaining any
    hook already there, and
    ``receive.advertisePushOptions`` so that ``git push -o lac.agent=NAME`` reaches it."""
    changes = install(repo, force=force, executable=executable, names=SERVER_HOOK_NAMES)
    git("config", "receive.advertisePushOptions", "true", cwd=repo.toplevel)
    return changes


def uninstall_server(repo: Repo) -> list[HookChange]:
    return uninstall(repo, names=SERVER_HOOK_NAMES)


# --- a hooks directory that other repositories share ----------------------------


@dataclass(frozen=True)
class SharedHooksPath:
    scope: str  # global or system
    path: str


def shared_hooks_path(repo: Repo) -> SharedHooksPath | None:
    """``core.hooksPath`` when it comes from the global or system config: a
    hooks directory every repository on the machine without its own uses."""
    try:
        out = git("config", "--show-scope", "--get", "core.hooksPath", cwd=repo.toplevel)
    except CannotWorkHere:  # not set
        return None
    scope, _, path = out.decode("utf-8", "surrogateescape").strip().partition("\t")
    if scope in ("global", "system"):
        return SharedHooksPath(scope, path)
    return None
