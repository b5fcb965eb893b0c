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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import CannotWorkHere, HookConflict, InvalidInput
from .repo import Repo, git
from .shipped import shipped

HOOK_NAMES = ("pre-commit", "pre-push", "pre-merge-commit", "post-commit", "commit-msg")
SERVER_HOOK_NAMES = ("pre-receive", "post-receive")
GUARD_HOOKS = ("pre-commit", "pre-push", "pre-merge-commit", "pre-receive")  # they refuse
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
# filled in (``@PY@`` and ``@CLIENT@``: the interpreter and the resident
# helper's thin client, :mod:`git_lacunari.resident`, that the hook tries
# first). A hook's tags are its name and these traits:
TEMPLATE = "hook.template"
TRAITS = {
    "pre-commit": ("client", "args"),  # runs on this clone; takes arguments, no stdin
    "pre-merge-commit": ("client", "args"),
    "pre-push": ("client", "stdin"),  # reads the refs being pushed on stdin
    "pre-receive": ("server", "stdin"),  # runs on the server; fails closed
    # After the fact (landing): they never refuse.
    "post-commit": ("after", "args"),  # tells the board where the claims' branches stand
    "commit-msg": ("after", "message"),  # names the claims' tasks in Lac-Task trailers
    "post-receive": ("after", "stdin"),  # the server settles what a push landed
}
WHAT = {"pre-commit": "commit", "pre-merge-commit": "merge", "pre-push": "push"}
TAGGED = re.compile(r"\[([a-z][a-z-]*(?: [a-z][a-z-]*)*)\](.*)", re.DOTALL)
FIELD = re.compile(r"@(HOOK|WHAT|LAC|PY|CLIENT)@")


def render(name: str, executable: str, python: str | None = None, client: str | None = None) -> str:
    """The hook ``name``, running ``executable`` (through ``client``, run by
    ``python``: by default this interpreter and this package's)."""
    from . import resident

    has = {name, *TRAITS[name]}
    python = sys.executable if python is None else python
    client = os.path.abspath(resident.__file__) if client is None else client
    fields = {
        "HOOK": name,
        "WHAT": WHAT.get(name, "push"),
        # inside single quotes
        "LAC": executable.replace("'", "'\\''"),
        "PY": python.replace("'", "'\\''"),
        "CLIENT": client.replace("'", "'\\''"),
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
    if directory.exists() and not directory.is_dir():
        raise CannotWorkHere(
            f"cannot install hooks: {directory}, where git looks for them, is not a directory"
        )
    planned: list[tuple[str, Path, str]] = []
    for name in names:  # decide everything before touching anything
        path, legacy = directory / name, directory / f"{name}.legacy"
        if (path.exists() and not path.is_file()) or (legacy.exists() and not legacy.is_file()):
            odd = path if path.exists() and not path.is_file() else legacy
            raise InvalidInput(
                f"{odd} is not a file (a directory?): git cannot run it as a hook; "
                "move it aside, then `git lac hooks install`"
            )
        if path.exists() and not is_ours(path) and legacy.exists() and not force:
            raise HookConflict(
                path=str(path),
                legacy=legacy.name,
                advice="--force replaces the old .legacy with the current hook",
            )
        planned.append((name, path, render(name, exe)))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CannotWorkHere(f"cannot install hooks in {directory}: {exc.strerror}") from None
    changes = []
    for name, path, content in planned:
        legacy = directory / f"{name}.legacy"
        action = "installed"
        if path.exists() and not is_ours(path):
            path.replace(legacy)
            action = "chained"
        elif path.exists() and path.read_text() == content and os.access(path, os.X_OK):
            changes.append(HookChange(name, str(path), "unchanged"))
            continue
        path.write_text(content)
        path.chmod(0o755)
        changes.append(HookChange(name, str(path), action))
    return changes


@dataclass
class HookState:
    """One hook as git would find it (``git lac doctor``)."""

    ours: bool = False
    runs: bool = False  # a file git runs: there, and executable
    problem: str | None = None  # missing, broken link, not executable, foreign, no git-lac
    legacy: str | None = None  # NAME.legacy: runs, not executable (then skipped)
    lac: str | None = None  # the git-lac our hook names
    note: str | None = None  # worth saying, nothing fails for it

    def said(self, name: str, fix: str) -> str:
        return {
            "missing": f"{name} missing: `{fix}`",
            "broken link": f"{name} is a link to nothing: git runs no {name} (`{fix}`)",
            "not a file": (
                f"{name} is not a file (a directory?), so git cannot run it: move it "
                f"aside, then `{fix}`"
            ),
            "legacy not a file": (
                f"{name}.legacy is not a file (a directory?): {name} tries to run it first "
                f"and fails every time; move it aside"
            ),
            "not executable": (f"{name} is not executable, so git skips it: `{fix}` (or chmod +x)"),
            "foreign": (
                f"{name} is another tool's hook and does not run git lac: `{fix}` keeps it "
                f"as {name}.legacy and runs it first"
            ),
            "foreign, legacy taken": (
                f"{name} is another tool's hook and does not run git lac, and {name}.legacy "
                f"is taken: `{fix} --force` replaces {name}.legacy with it"
            ),
            "no git-lac": (
                f"{name} runs {self.lac}, which is gone, and no git-lac is on PATH: "
                f"the guard cannot run (`{fix}`)"
            ),
        }[self.problem or ""]


LAC_LINE = re.compile(r"^LAC='((?:[^']|'\\'')*)'$", re.MULTILINE)
FRAMEWORK = "pre-commit.com"  # in every hook script the pre-commit framework writes


def hook_state(repo: Repo, directory: Path, name: str, *, bare: bool = False) -> HookState:
    path, legacy = directory / name, directory / f"{name}.legacy"
    state = HookState()
    if not path.exists():
        state.problem = "broken link" if path.is_symlink() else "missing"
        return state
    if not path.is_file():
        state.problem = "not a file"
        return state
    state.runs = os.access(path, os.X_OK)
    try:
        text = path.read_text(errors="replace") if path.is_file() else ""
    except OSError:
        text = ""
    state.ours = MARKER in text
    if not state.ours:
        if not state.runs:
            state.problem = "not executable"
        elif not _runs_lac(None if bare else Path(repo.toplevel), text, name):
            state.problem = "foreign, legacy taken" if legacy.exists() else "foreign"
        return state
    if not state.runs:
        state.problem = "not executable"
        return state
    found = LAC_LINE.search(text)
    state.lac = found[1].replace("'\\''", "'") if found else None
    if state.lac is not None and not ("/" in state.lac and os.access(state.lac, os.X_OK)):
        on_path = shutil.which("git-lac")
        if on_path is None:
            state.problem = "no git-lac"
            return state
        if "/" in state.lac:  # a bare name is looked up on PATH, as it was meant to be
            state.note = (
                f"{name} runs {state.lac}, which is gone: git-lac from PATH ({on_path}) "
                "runs instead"
            )
    if state.lac is not None and text != render(name, state.lac):
        differs = (
            f"{name} is not the hook this git-lacunari installs (an older one, or edited): "
            "`git lac hooks install` replaces it"
        )
        state.note = f"{state.note}; {differs}" if state.note else differs
    if legacy.exists() and not legacy.is_file():
        state.legacy = "not a file"
        state.problem = "legacy not a file"  # the hook runs it, and fails: every time
        return state
    if legacy.exists():
        state.legacy = "runs" if os.access(legacy, os.X_OK) else "not executable"
        if state.legacy != "runs":
            legacy_note = (
                f"{name}.legacy (the hook that was there) is not executable, so it does not run"
            )
            state.note = f"{state.note}; {legacy_note}" if state.note else legacy_note
    return state


def _runs_lac(worktree: Path | None, text: str, name: str) -> bool:
    """A hook of another tool that runs the guard all the same: one that calls
    ``git-lac guard`` / ``git lac guard``, or the pre-commit framework's with
    lac's hooks in ``.pre-commit-config.yaml``."""
    if re.search(r"git[- ]lac['\"]?\s+guard", text):
        return True
    if FRAMEWORK in text and worktree is not None:
        try:
            config = (worktree / ".pre-commit-config.yaml").read_text(errors="replace")
        except OSError:
            return False
        wanted = {"pre-commit": "lac-guard", "pre-push": "lac-guard-push"}.get(
            name, "lac-guard-merge" if name == "pre-merge-commit" else None
        )
        return wanted is not None and re.search(rf"id:\s*{wanted}\s*$", config, re.M) is not None
    return False


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


# --- who a plain `git push` says it is ------------------------------------------------

AGENT_OPTION = "lac.agent="
INSTANCE_OPTION = "lac.instance="


def set_push_identity(repo: Repo, agent: str, instance: str) -> list[str] | None:
    """Make a plain ``git push`` from this working tree tell the server who
    pushes: ``push.pushOption`` (multi-valued) gets ``lac.agent=NAME`` and
    ``lac.instance=ID``, replacing only earlier values of those two (the
    server's pre-receive reads them; ``receive.advertisePushOptions``, which
    ``hooks install --server`` sets, lets them through). A ``git push -o``
    replaces the configured options for that push, as git does.

    A linked worktree shares its clone's config, and its instance is its
    own: the values go in its own config (``git config --worktree``) where
    the repository has ``extensions.worktreeConfig``, else nowhere (None: a
    push from it names itself with ``-o``). The options written, else None."""
    per_tree = (repo.get("extensions.worktreeconfig") or "").strip().lower() in ("true", "1")
    if per_tree:
        scope = ["--worktree"]
    elif repo.is_linked_worktree or _other_worktrees(repo):
        # The clone's config would speak for every working tree of it, and
        # each is its own instance (and, by default, its own agent name).
        return None
    else:
        scope = ["--local"]
    written = []
    for prefix, value in ((AGENT_OPTION, agent), (INSTANCE_OPTION, instance)):
        if not value:
            continue
        option = f"{prefix}{value}"
        git(
            "config",
            *scope,
            "--replace-all",
            "push.pushOption",
            option,
            f"^{prefix.replace('.', '[.]')}",
            cwd=repo.toplevel,
        )
        written.append(option)
    return written


def _other_worktrees(repo: Repo) -> bool:
    """Whether the clone has linked worktrees but a drainer's task worktrees
    (whose commands act as the drainer's instance, LAC_INSTANCE)."""
    out = git("worktree", "list", "--porcelain", cwd=repo.toplevel).decode("utf-8", "replace")
    trees = [line[len("worktree ") :] for line in out.splitlines() if line.startswith("worktree ")]
    drained = str(repo.common_dir / "lacunari" / "worktrees")
    return any(Path(t) != repo.toplevel and not t.startswith(drained) for t in trees)


PROBE_TIMEOUT_S = 15.0


def push_remote(repo: Repo) -> str | None:
    """The remote a plain ``git push`` of the work goes to: the remote of a
    remote-tracking ``lac.target``, else ``origin``, else the only remote."""
    remotes = git("remote", cwd=repo.toplevel).decode().split()
    target = repo.get("lac.target") or ""
    first = target.removeprefix("refs/remotes/").split("/", 1)[0]
    if "/" in target and first in remotes:
        return first
    if "origin" in remotes:
        return "origin"
    return remotes[0] if len(remotes) == 1 else None


def takes_push_options(repo: Repo, remote: str) -> bool | None:
    """Whether ``remote`` accepts push options, asked by a dry-run push of
    HEAD to a branch name nobody uses (nothing is sent or written; no hook
    runs): git refuses a push with options at once when the server does not
    advertise them, and a configured ``push.pushOption`` would then fail
    every push. None: it could not be asked (no commit, no network, no
    credentials: never a prompt)."""
    import subprocess

    try:
        proc = subprocess.run(
            [
                "git",
                "push",
                "--dry-run",
                "--quiet",
                "--no-verify",
                "-o",
                "lac.probe",
                remote,
                "HEAD:refs/heads/lac-push-options-probe",
            ],
            cwd=repo.toplevel,
            capture_output=True,
            check=False,
            timeout=PROBE_TIMEOUT_S,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode == 0:
        return True
    return False if b"does not support push options" in proc.stderr else None


def push_identity(repo: Repo, who: Callable[[], tuple[str, str]]) -> tuple[list[str] | None, str]:
    """:func:`set_push_identity` where the push remote takes push options
    (:func:`takes_push_options`): the options written (None: none) and one
    line saying what was done, or why not. ``who``: the agent name and the
    instance, asked only then (an instance is made at its first use)."""
    remote = push_remote(repo)
    if remote is None:
        return None, "push options: not set (no remote to push to yet)"
    takes = takes_push_options(repo, remote)
    if takes is not True:
        why = "does not take push options" if takes is False else "could not be asked"
        return None, (
            f"push options: not set ({remote} {why}; on the server `git lac hooks install "
            "--server` sets receive.advertisePushOptions, then run `git lac hooks install` "
            "here again; until then push with -o lac.agent=NAME)"
        )
    written = set_push_identity(repo, *who())
    if written is None:
        return None, (
            "push options: not set (this clone has several working trees, which share its "
            "config: `git config extensions.worktreeConfig true`, then `git lac hooks "
            "install` in each)"
        )
    return written, f"push options: {' '.join(written)} (push.pushOption; {remote} takes them)"
