"""`git lac doctor`'s live probes: each guard run as its caller runs it, on
the canary (:mod:`git_lacunari.guard.canary`), and failed when it does not
refuse the held path. Nothing is committed, no ref moves, nothing is
written to the board.

- agent hooks: our edit entry in each settings file, as the harness runs it
  (:mod:`git_lacunari.agent_probe`), and for Gemini CLI whether it trusts
  the folder (0.61.0 runs project hooks only in a trusted one);
- pre-commit: the hook, as ``git commit`` runs it, on a copy of the index
  with the held path staged (``GIT_INDEX_FILE``);
- pre-receive (on a server): the hook, as ``git receive-pack`` runs it, on a
  push of a commit that changes the held path, its objects in a quarantine
  directory of their own (``GIT_QUARANTINE_PATH``, as git does), which goes.

Each is a ``(check, verdict, says, facts)`` for doctor's ``Check``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..repo import Repo

OK, WARN, FAIL = "ok", "warn", "fail"
Found = tuple[str, str, str, dict[str, Any]]
HOOK_TIMEOUT = 60.0


def agent_checks(repo: Repo) -> list[Found]:
    """One check per harness with an edit entry of ours in any scope."""
    from ..agent_probe import installed, run_entry
    from ..agents.registry import CHECK_NAMES, installable

    found: list[Found] = []
    top = Path(repo.toplevel)
    for harness in installable():
        entries, troubles = installed(harness, top)
        if not entries and not troubles:
            continue
        name = f"agent {CHECK_NAMES.get(harness.value, harness.value)}"
        problems = [f"{e.path}: {p}" for e in entries if (p := run_entry(e, top)) is not None]
        facts: dict[str, Any] = {"files": [str(e.path) for e in entries]}
        if not entries:  # nothing of ours to run: a file we cannot read is said, not failed
            says = "; ".join(troubles) + " (no edit hook of git-lacunari found)"
            found.append((name, WARN, says, facts))
            continue
        problems += troubles
        if problems:
            fix = f"`git lac hooks install --agent {harness.value}` writes a working entry"
            found.append((name, FAIL, f"{'; '.join(problems)}: {fix}", facts))
            continue
        files = ", ".join(facts["files"])
        says = f"the edit hook refuses a held path and lets a free one through ({files})"
        verdict = OK
        if harness.value == "gemini" and any(e.scope == "project" for e in entries):
            trust, told = gemini_trust(top)
            facts["trusted"] = trust
            if trust is not True:
                verdict = FAIL if trust is False else WARN
                says += f"; but {told}"
        if harness.value == "codex" and any(e.scope == "project" for e in entries):
            untrusted = codex_untrusted(top)
            facts["trusted"] = not untrusted
            if untrusted:
                verdict = WARN
                says += f"; but {untrusted}"
        found.append((name, verdict, says, facts))
    return found


def codex_untrusted(top: Path) -> str:
    """What keeps Codex from running our project hook, read as 0.171.0 reads
    its user config (``$CODEX_HOME/config.toml``, default ``~/.codex``): the
    project must be trusted (``[projects."TOP"] trust_level = "trusted"``),
    and each project hook too (``[hooks.state."FILE:pre_tool_use:G:H"]
    trusted_hash``, the sha256 of the hook's canonical JSON, which changes
    with its command). "" when both are."""
    import hashlib
    import tomllib

    from ..agents.codex import EVENT, SCOPES
    from ..agents.hook_json import load

    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    how = "trust it: run `codex` here and accept, then `/hooks` to trust the hook"
    try:
        config = tomllib.loads((home / "config.toml").read_text("utf-8"))
    except FileNotFoundError:
        config = {}
    except (OSError, ValueError) as exc:
        return f"{home / 'config.toml'} cannot be read ({exc}): Codex will not start"
    projects = config.get("projects") or {}
    level = (projects.get(str(top)) or projects.get(os.path.realpath(top)) or {}).get("trust_level")
    if level != "trusted":
        return f"Codex does not trust {top}, so it reads no .codex/ there: {how}"
    path = top / SCOPES["project"]
    data = load(path, {EVENT}) or {}
    state = (config.get("hooks") or {}).get("state") or {}
    for g, group in enumerate(((data.get("hooks") or {}).get(EVENT)) or []):
        hooks = group.get("hooks") if isinstance(group, dict) else None
        for h, hook in enumerate(hooks if isinstance(hooks, list) else []):
            if not (isinstance(hook, dict) and "guard edit --harness" in str(hook.get("command"))):
                continue
            handler = {k: v for k, v in hook.items() if v is not None}
            handler.setdefault("timeout", 600)
            handler.setdefault("async", False)
            canonical = {"event_name": "pre_tool_use", "matcher": group.get("matcher"),
                         "hooks": [handler]}  # fmt: skip
            if group.get("matcher") is None:
                del canonical["matcher"]
            text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
            want = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
            key = f"{path}:pre_tool_use:{g}:{h}"
            if (state.get(key) or {}).get("trusted_hash") != want:
                return f"Codex has not trusted the hook in {path} (or it changed since): {how}"
    return ""


def gemini_trust(top: Path) -> tuple[bool | None, str]:
    """Whether Gemini CLI trusts this folder, read as 0.61.0 reads it
    (checkPathTrust and LoadedTrustedFolders.isPathTrusted in its bundle):
    GEMINI_CLI_TRUST_WORKSPACE, then ``security.folderTrust.enabled`` in
    ~/.gemini/settings.json (default true), then the longest matching rule of
    ~/.gemini/trustedFolders.json (or GEMINI_CLI_TRUSTED_FOLDERS_PATH):
    TRUST_FOLDER, TRUST_PARENT (the rule's parent) or DO_NOT_TRUST. None: no
    rule (Gemini CLI asks when it starts here, and runs no project hook until
    trusted; an IDE may answer instead)."""
    how = (
        'trust it: run `gemini` here and choose "Trust folder" (or /permissions), or add '
        f'"{top}": "TRUST_FOLDER" to ~/.gemini/trustedFolders.json'
    )
    env = os.environ.get("GEMINI_CLI_TRUST_WORKSPACE")
    if os.environ.get("GEMINI_RESTRICTED_MODE") == "true" or env == "false":
        return False, "GEMINI_CLI_TRUST_WORKSPACE=false: Gemini CLI runs no project hook"
    if env == "true":
        return True, ""
    home = Path.home() / ".gemini"
    try:
        user = json.loads((home / "settings.json").read_text("utf-8"))
        enabled = user.get("security", {}).get("folderTrust", {}).get("enabled", True)
    except (OSError, ValueError, AttributeError):
        enabled = True
    if enabled is False:
        return True, ""
    path = Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / "trustedFolders.json")
    try:
        rules = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        rules = {}
    except (OSError, ValueError):
        return False, f"{path} cannot be read as JSON: Gemini CLI refuses to start; fix it"
    here = os.path.realpath(top)
    best, level = -1, None
    for rule, trust in rules.items() if isinstance(rules, dict) else ():
        where = os.path.dirname(rule) if trust == "TRUST_PARENT" else rule
        real = os.path.realpath(os.path.expanduser(where))
        if (here == real or here.startswith(real.rstrip("/") + "/")) and len(rule) > best:
            best, level = len(rule), trust
    if level in ("TRUST_FOLDER", "TRUST_PARENT"):
        return True, ""
    if level == "DO_NOT_TRUST":
        return False, f"Gemini CLI does not trust {top} ({path}), so it runs no project hook: {how}"
    return (
        None,
        f"Gemini CLI has not been told to trust {top}; until it is, no project hook runs: {how}",
    )


def _run_hook(hook: Path, cwd: Path, env: dict[str, str], stdin: str) -> tuple[int, str] | str:
    try:
        proc = subprocess.run(
            [str(hook)],
            cwd=cwd,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=HOOK_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return f"it did not finish in {HOOK_TIMEOUT:g}s"
    except OSError as exc:
        return f"git cannot run it ({exc.strerror})"
    return proc.returncode, proc.stderr


def _git(args: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def _probe_env() -> dict[str, str]:
    from ..guard.canary import HELD, VARIABLE

    env = {k: v for k, v in os.environ.items() if k != "LAC_GUARD"}
    env[VARIABLE] = HELD
    return env


def _judged(name: str, what: str, ran: tuple[int, str] | str, fix: str) -> Found:
    from ..guard.canary import HELD, HOLDER

    facts: dict[str, Any] = {"hook": name}
    if isinstance(ran, str):
        return (f"probe {name}", FAIL, f"{name}: {ran}: `{fix}`", facts)
    code, err = ran
    facts["exit"] = code
    if code == 0:
        says = f"{name} let through {what} changing {HELD}, a path held by {HOLDER}: `{fix}`"
        return (f"probe {name}", FAIL, says, facts)
    if HOLDER not in err:
        line = next((x.strip() for x in err.splitlines() if x.strip()), f"exit {code}")
        says = f"{name} refused {what}, but not for the held path: {line}"
        return (f"probe {name}", WARN, says, facts)
    return (f"probe {name}", OK, f"{name} refuses {what} changing a held path", facts)


def pre_commit_check(repo: Repo) -> Found | None:
    """The pre-commit hook run as ``git commit`` runs it, on a copy of the
    index staging the held path (its blob is never written)."""
    from ..guard.canary import HELD
    from ..hooks import hooks_dir

    hook = hooks_dir(repo) / "pre-commit"
    if not (hook.is_file() and os.access(hook, os.X_OK)):
        return None  # the hooks check says it
    top = Path(repo.toplevel)
    env = _probe_env()
    with tempfile.TemporaryDirectory(prefix="lac-probe-") as tmp:
        index = Path(tmp) / "index"
        real = repo.git_dir / "index"
        env["GIT_INDEX_FILE"] = str(index)
        try:
            if real.exists():
                shutil.copyfile(real, index)
            else:
                _git(["read-tree", "--empty"], top, env)
            blob = _git(["hash-object", "--stdin"], top, env)
            _git(
                ["update-index", "--add", "--info-only", "--cacheinfo", f"100644,{blob},{HELD}"],
                top,
                env,
            )
        except (OSError, subprocess.CalledProcessError) as exc:
            return ("probe pre-commit", WARN, f"could not stage the probe: {exc}", {})
        ran = _run_hook(hook, top, env, "")
    return _judged("pre-commit", "a commit", ran, "git lac hooks install")


def pre_receive_check(repo: Repo) -> Found | None:
    """The server's pre-receive run as ``git receive-pack`` runs it, on a push
    of a commit changing the held path, quarantined: no ref moves, and its
    objects go with the quarantine directory."""
    from ..guard.canary import HELD
    from ..hooks import hooks_dir

    hook = hooks_dir(repo) / "pre-receive"
    if not (hook.is_file() and os.access(hook, os.X_OK)):
        return None
    git_dir = Path(repo.git_dir).resolve()
    objects = git_dir / "objects"
    env = _probe_env()
    for who in ("AUTHOR", "COMMITTER"):
        env.setdefault(f"GIT_{who}_NAME", "git lac doctor")
        env.setdefault(f"GIT_{who}_EMAIL", "doctor@git-lacunari.invalid")
    with tempfile.TemporaryDirectory(prefix="lac-probe-") as quarantine:
        env.update(
            GIT_DIR=str(git_dir),
            GIT_OBJECT_DIRECTORY=quarantine,
            GIT_ALTERNATE_OBJECT_DIRECTORIES=str(objects),
            GIT_QUARANTINE_PATH=quarantine,
        )
        building = {**env, "GIT_INDEX_FILE": os.path.join(quarantine, "index")}
        try:
            ref = _git(["symbolic-ref", "-q", "HEAD"], git_dir, building) or "refs/heads/main"
            try:
                head = _git(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], git_dir, building)
            except subprocess.CalledProcessError:
                head = ""
            _git(["read-tree", head] if head else ["read-tree", "--empty"], git_dir, building)
            blob = _git(["hash-object", "-w", "--stdin"], git_dir, building)
            _git(
                ["update-index", "--add", "--cacheinfo", f"100644,{blob},{HELD}"], git_dir, building
            )
            tree = _git(["write-tree"], git_dir, building)
            parent = ["-p", head] if head else []
            commit = _git(
                ["commit-tree", tree, *parent, "-m", "git lac doctor: probe"], git_dir, building
            )
        except (OSError, subprocess.CalledProcessError) as exc:
            return ("probe pre-receive", WARN, f"could not build the probe push: {exc}", {})
        old = head or "0" * len(commit)
        ran = _run_hook(hook, git_dir, env, f"{old} {commit} {ref}\n")
    return _judged("pre-receive", "a push", ran, "git lac hooks install --server")
