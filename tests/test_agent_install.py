"""Agent hooks that work on any machine (`hooks install --agent NAME --scope S`),
the SessionStart probe (`guard probe`), the LAC_PROBE_HELD canary in every
guard, and `git lac doctor`'s live probes of the agent and git hooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import Result, git, lac_process

Lac = Callable[..., Result]
BIN = Path(sys.executable).parent  # this venv's bin: its git-lac
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # git and sh, no git-lac
EVENT = {"claude-code": "PreToolUse", "gemini": "BeforeTool"}
FILES = {
    ("claude-code", "project"): ".claude/settings.json",
    ("claude-code", "local"): ".claude/settings.local.json",
    ("claude-code", "user"): "~/.claude/settings.json",
    ("gemini", "project"): ".gemini/settings.json",
    ("gemini", "user"): "~/.gemini/settings.json",
}
# A user's own settings: a hook of theirs on each event we use, and others.
THEIRS = {
    "claude-code": """{
  "permissions": {"allow": ["Bash(npm run lint)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo hello"}]}]
  }
}
""",
    "gemini": """{
  "hooks": {
    "BeforeTool": [{"matcher": "run_shell_command",
      "hooks": [{"name": "audit", "type": "command", "command": "./audit.sh", "timeout": 5000}]}],
    "SessionStart": [{"hooks": [{"name": "hi", "type": "command", "command": "echo hi"}]}]
  },
  "theme": "GitHub"
}
""",
}


def settings_file(repo: Path, agent: str, scope: str) -> Path:
    where = FILES[(agent, scope)]
    return Path.home() / where[2:] if where.startswith("~/") else repo / where


def ours(path: Path, event: str) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return [
        hook
        for group in data["hooks"].get(event, [])
        for hook in group["hooks"]
        if "git-lac guard" in hook["command"]
    ]


def payload(agent: str, repo: Path, rel: str) -> str:
    """The harness's documented payload of its file-writing tool."""
    if agent == "claude-code":
        data: dict[str, Any] = {
            "session_id": "s",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": str(repo),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(repo / rel), "content": "x"},
            "tool_use_id": "t1",
        }
    else:
        data = {
            "session_id": "s",
            "transcript_path": "/tmp/t.json",
            "cwd": str(repo),
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-01-01T00:00:00Z",
            "tool_name": "write_file",
            "tool_input": {"file_path": str(repo / rel), "content": "x"},
        }
    return json.dumps(data)


def run_sh(
    command: str, repo: Path, stdin: str, path: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command as a harness runs it: through a shell, cwd the project."""
    full = {**os.environ, "PATH": path, "LAC_EDIT_HELPER": "off", "CLAUDE_PROJECT_DIR": str(repo)}
    full.update(env or {})
    return subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=repo,
        input=stdin,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )


def denied(agent: str, proc: subprocess.CompletedProcess[str]) -> str | None:
    """The refusal's reason as the harness reads it, or None when let through."""
    if proc.returncode == 2:
        return proc.stderr
    assert proc.returncode == 0, proc.stderr
    said = json.loads(proc.stdout) if proc.stdout.strip() else {}
    if agent == "claude-code":
        specific = said.get("hookSpecificOutput", {})
        return specific.get("permissionDecisionReason") if specific else None
    return said.get("reason") if said.get("decision") == "deny" else None


def hold_auth(lac: Lac) -> None:
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "dana"}).code == 0


# --- installing, per scope --------------------------------------------------------------


@pytest.mark.parametrize(
    ("agent", "scope"),
    [
        ("claude-code", "project"),
        ("claude-code", "local"),
        ("claude-code", "user"),
        ("gemini", "project"),
        ("gemini", "user"),
    ],
)
def test_each_scope_keeps_theirs_reinstalls_byte_for_byte_and_uninstall_restores(
    repo: Path, agent: str, scope: str
) -> None:
    path = settings_file(repo, agent, scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(THEIRS[agent])
    put = lac_process(repo, "hooks", "install", "--agent", agent, "--scope", scope, "--json")
    assert put.code == 0, put.err
    assert put.json["agents"] == [
        {"harness": agent, "path": str(path), "action": "installed", "scope": scope}
    ]
    theirs, after = json.loads(THEIRS[agent]), json.loads(path.read_text())
    for event in (EVENT[agent], "SessionStart"):
        assert after["hooks"][event][:-1] == theirs["hooks"][event]  # theirs first, kept
    assert {k: v for k, v in after.items() if k != "hooks"} == {
        k: v for k, v in theirs.items() if k != "hooks"
    }
    (edit,) = ours(path, EVENT[agent])
    (probe,) = ours(path, "SessionStart")
    assert f"git-lac guard edit --harness {agent};" in edit["command"]
    assert f"git-lac guard probe --harness {agent};" in probe["command"]
    if scope != "project":  # the way out it names is this scope's
        assert f"uninstall --agent {agent} --scope {scope}" in edit["command"]
    once = path.read_bytes()
    again = lac_process(repo, "hooks", "install", "--agent", agent, "--scope", scope, "--json")
    assert again.json["agents"][0]["action"] == "unchanged"
    assert path.read_bytes() == once
    for other in {"project", "local", "user"} - {scope}:  # no other scope was touched
        if (agent, other) in FILES:
            assert not settings_file(repo, agent, other).exists()
    gone = lac_process(repo, "hooks", "uninstall", "--agent", agent, "--scope", scope, "--json")
    assert gone.json["agents"][0]["action"] == "removed", gone.err
    assert path.read_text() == THEIRS[agent]  # byte for byte


@pytest.mark.parametrize(("agent", "scope"), list(FILES))
def test_a_file_install_made_goes_with_uninstall(repo: Path, agent: str, scope: str) -> None:
    path = settings_file(repo, agent, scope)
    assert lac_process(repo, "hooks", "install", "--agent", agent, "--scope", scope).code == 0
    assert ours(path, EVENT[agent]) and ours(path, "SessionStart")
    assert lac_process(repo, "hooks", "install", "--agent", agent, "--scope", scope, "--uninstall")
    assert not path.exists()


def test_a_settings_file_that_is_a_link_stays_a_link(repo: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude settings.json"
    real.parent.mkdir()
    real.write_text(THEIRS["claude-code"])
    link = Path.home() / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert lac_process(repo, "hooks", "install", "--agent", "claude", "--scope", "user").code == 0
    assert link.is_symlink() and ours(real, "PreToolUse")
    assert lac_process(repo, "hooks", "uninstall", "--agent", "claude", "--scope", "user").code == 0
    assert link.is_symlink() and real.read_text() == THEIRS["claude-code"]


def test_doctor_warns_on_a_settings_file_it_cannot_read(lac: Lac, repo: Path) -> None:
    (repo / ".gemini").mkdir()
    (repo / ".gemini/settings.json").write_text('{"theme": "x", // a comment\n}')
    code, checks = doctor(repo)
    assert checks["agent gemini"]["verdict"] == "warn", checks
    assert "is not valid JSON" in checks["agent gemini"]["says"]


def test_gemini_has_no_local_scope_refused_in_one_line(repo: Path) -> None:
    said = lac_process(repo, "hooks", "install", "--agent", "claude-code", "--agent", "gemini",
                       "--scope", "local")  # fmt: skip
    assert said.code == 2
    assert said.err.count("\n") == 1 and "gemini has no local scope" in said.err, said.err
    assert not (repo / ".claude").exists() and not (repo / ".gemini").exists()
    assert lac_process(repo, "hooks", "install", "--scope", "user").code == 2  # needs --agent


def test_reinstall_replaces_the_old_absolute_path_entry_and_keeps_theirs(repo: Path) -> None:
    path = repo / ".claude/settings.json"
    path.parent.mkdir()
    old = {
        "env": {"FOO": "1"},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]},
                {
                    "matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "'/old/venv/bin/git-lac' guard edit --harness claude-code",
                            "timeout": 30,
                        }
                    ],
                },
            ]
        },
    }
    path.write_text(json.dumps(old, indent=4))
    assert lac_process(repo, "hooks", "install", "--agent", "claude-code").code == 0
    text = path.read_text()
    assert "/old/venv" not in text
    (edit,) = ours(path, "PreToolUse")
    assert edit["command"].startswith("s=127; command -v git-lac ")
    data = json.loads(text)
    assert data["env"] == {"FOO": "1"}
    assert data["hooks"]["PreToolUse"][0] == old["hooks"]["PreToolUse"][0]  # type: ignore[index]
    assert data["hooks"]["PreToolUse"][-1]["matcher"] == (
        "Write|Edit|MultiEdit|NotebookEdit|Bash|PowerShell"
    )
    assert lac_process(repo, "hooks", "uninstall", "--agent", "claude-code").code == 0
    after = json.loads(path.read_text())
    assert after == {"env": {"FOO": "1"}, "hooks": {"PreToolUse": [old["hooks"]["PreToolUse"][0]]}}  # type: ignore[index]


# --- the fallback: git-lac missing, or failing -------------------------------------------


@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
def test_without_git_lac_on_path_the_command_refuses_and_says_how_out(
    repo: Path, tmp_path: Path, agent: str
) -> None:
    assert lac_process(repo, "hooks", "install", "--agent", agent).code == 0
    (command,) = [h["command"] for h in ours(settings_file(repo, agent, "project"), EVENT[agent])]
    stdin = payload(agent, repo, "README")
    missing = run_sh(command, repo, stdin, SYSTEM_PATH)
    assert missing.returncode == 2 and missing.stdout == ""
    (line,) = missing.stderr.splitlines()
    assert "git-lac is not on PATH or could not run (exit 127): tool call refused" in line
    assert "Install git-lacunari" in line and "LAC_GUARD=off" in line
    assert f"git lac hooks uninstall --agent {agent}" in line
    # A git-lac that is there but fails: its own error (exit 1), or its
    # interpreter gone (exit 127 from the kernel's #! line): refused the same.
    fake = tmp_path / "fakebin"
    fake.mkdir()
    for body, code in (("#!/bin/sh\necho boom >&2\nexit 1\n", 1), ("#!/gone/python\n", 127)):
        (fake / "git-lac").write_text(body)
        (fake / "git-lac").chmod(0o755)
        broken = run_sh(command, repo, stdin, f"{fake}:{SYSTEM_PATH}")
        assert broken.returncode == 2, broken.stderr
        assert f"could not run (exit {code}): tool call refused" in broken.stderr
    # LAC_GUARD=off lets it through, git-lac or not.
    off = run_sh(command, repo, stdin, SYSTEM_PATH, {"LAC_GUARD": "Off"})
    assert off.returncode == 0 and off.stdout == "" and "LAC_GUARD=off" in off.stderr
    # And with git-lac on PATH, the same command answers itself (exit 0).
    fine = run_sh(command, repo, stdin, f"{BIN}:{SYSTEM_PATH}")
    assert fine.returncode == 0, fine.stderr


# --- the canary and the probe ----------------------------------------------------------


@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
def test_the_canary_refuses_in_the_harness_form_without_the_board(
    lac: Lac, repo: Path, agent: str
) -> None:
    hold_auth(lac)
    assert lac_process(repo, "hooks", "install", "--agent", agent).code == 0
    (command,) = [h["command"] for h in ours(settings_file(repo, agent, "project"), EVENT[agent])]
    path = f"{BIN}:{SYSTEM_PATH}"
    canary = {"LAC_PROBE_HELD": "docs/guide one.md", "LAC_AGENT": "alice"}
    held = run_sh(command, repo, payload(agent, repo, "docs/guide one.md"), path, canary)
    reason = denied(agent, held)
    assert reason is not None and reason.startswith("lac-probe holds docs/guide one.md"), held
    assert denied(agent, run_sh(command, repo, payload(agent, repo, ".lac-probe/free"), path,
                                canary)) is None  # fmt: skip
    # Without the canary the path is free; the board's holdings stay refused under it.
    alice = {"LAC_AGENT": "alice"}
    assert denied(agent, run_sh(command, repo, payload(agent, repo, "docs/guide one.md"), path,
                                alice)) is None  # fmt: skip
    real = denied(agent, run_sh(command, repo, payload(agent, repo, "core/auth.py"), path, canary))
    assert real is not None and real.startswith("dana holds core/auth.py on task #1")


@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
def test_the_session_start_probe_says_on_or_what_is_wrong(lac: Lac, repo: Path, agent: str) -> None:
    assert lac_process(repo, "hooks", "install", "--agent", agent).code == 0
    file = settings_file(repo, agent, "project")
    (probe,) = [h["command"] for h in ours(file, "SessionStart")]
    start = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart",
                        "source": "startup"})  # fmt: skip
    said = run_sh(probe, repo, start, f"{BIN}:{SYSTEM_PATH}")
    assert said.returncode == 0, said.stderr
    out = json.loads(said.stdout)
    context = out["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert context["additionalContext"].startswith(f"git-lacunari edit guard: on ({file})")
    assert "systemMessage" not in out
    # The edit entry's command gone (the old form, naming a venv that is not there).
    data = json.loads(file.read_text())
    entry = data["hooks"][EVENT[agent]][0]["hooks"][0]
    entry["command"] = f"'/gone/venv/bin/git-lac' guard edit --harness {agent}"
    file.write_text(json.dumps(data))
    off = json.loads(run_sh(probe, repo, start, f"{BIN}:{SYSTEM_PATH}").stdout)
    text = off["hookSpecificOutput"]["additionalContext"]
    assert text.startswith(f"git-lacunari edit guard: OFF: {file}: it ")
    assert "exit 127" in text and off["systemMessage"] == text
    # No git-lac at all: the probe's own fallback says so, exit 0.
    none = run_sh(probe, repo, start, SYSTEM_PATH)
    assert none.returncode == 0
    text = json.loads(none.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.startswith("git-lacunari edit guard: OFF: git-lac is not on PATH")


def make_server(repo: Path, tmp_path: Path, board_url: str | None) -> Path:
    server = tmp_path / "server.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(server))
    board = board_url or f"sqlite://{repo / '.git' / 'lacunari' / 'board.db'}"
    git(server, "config", "lac.url", board)
    assert lac_process(server, "hooks", "install", "--server").code == 0
    return server


def test_the_canary_refuses_a_real_commit_and_a_real_push(
    lac: Lac, repo: Path, tmp_path: Path, board_url: str | None
) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    server = make_server(repo, tmp_path, board_url)
    assert lac_process(repo, "hooks", "install").code == 0
    git(repo, "remote", "add", "origin", str(server))
    (repo / "docs").mkdir()
    (repo / "docs" / "a.md").write_text("a\n")
    git(repo, "add", "docs/a.md")

    def commit(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "commit", "-qm", "docs"], cwd=repo, env={**env, **extra},
                              capture_output=True, text=True)  # fmt: skip

    refused = commit({"LAC_PROBE_HELD": "./docs/a.md"})
    assert refused.returncode == 1 and "held by lac-probe" in refused.stderr, refused.stderr
    assert commit({}).returncode == 0
    pushed = subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=repo,
                            env={**env, "LAC_PROBE_HELD": "docs/a.md"},
                            capture_output=True, text=True)  # fmt: skip
    assert pushed.returncode != 0 and "held by lac-probe" in pushed.stderr, pushed.stderr
    head = git(repo, "rev-parse", "HEAD").strip()
    assert git(server, "rev-parse", "main").strip() != head  # the server's ref did not move
    pushed = subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=repo, env=env,
                            capture_output=True, text=True)  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr


# --- doctor's live probes ------------------------------------------------------------


def doctor(where: Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    said = lac_process(where, "doctor", "--json", env=env)
    assert said.code in (0, 1), said
    return said.code, {c["check"]: c for c in said.json["checks"]}


TRUSTED = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}


def test_doctor_passes_a_healthy_setup_and_fails_each_broken_part(lac: Lac, repo: Path) -> None:
    assert lac_process(repo, "hooks", "install").code == 0
    for agent in ("claude-code", "gemini"):
        assert lac_process(repo, "hooks", "install", "--agent", agent).code == 0
    code, checks = doctor(repo, TRUSTED)
    assert code == 0, checks
    for name in ("probe pre-commit", "agent claude-code", "agent gemini"):
        assert checks[name]["verdict"] == "ok", checks[name]
    # A pre-commit that ends `|| true`: git lets every commit through.
    hook = repo / ".git/hooks/pre-commit"
    good = hook.read_text()
    broken = good.replace("lac_run guard pre-commit", "lac_run guard pre-commit || true")
    assert broken != good  # the hook really ends `|| true` now
    hook.write_text(broken)
    code, checks = doctor(repo, TRUSTED)
    assert code == 1 and checks["probe pre-commit"]["verdict"] == "fail"
    assert (
        "pre-commit let through a commit changing .lac-probe/held"
        in checks["probe pre-commit"]["says"]
    )
    hook.write_text(good)
    assert git(repo, "status", "--porcelain") == "?? .claude/\n?? .gemini/\n"  # nothing staged
    # An agent hook whose command is gone: each harness's check names it and its file.
    for agent in ("claude-code", "gemini"):
        file = settings_file(repo, agent, "project")
        data = json.loads(file.read_text())
        data["hooks"][EVENT[agent]][0]["hooks"][0]["command"] = (
            f"'/gone/venv/bin/git-lac' guard edit --harness {agent}"
        )
        file.write_text(json.dumps(data))
        code, checks = doctor(repo, TRUSTED)
        assert code == 1 and checks[f"agent {agent}"]["verdict"] == "fail", checks
        assert checks[f"agent {agent}"]["says"].startswith(f"{file}: it "), checks[f"agent {agent}"]
        assert lac_process(repo, "hooks", "install", "--agent", agent).code == 0
    # One that blocks everything, and one that refuses nothing.
    file = settings_file(repo, "claude-code", "project")
    for command, said in (("echo no >&2; exit 2", "refuses every call"), ("true", "lets a held")):
        data = json.loads(file.read_text())
        data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = (
            f"{command} # git-lac guard edit --harness claude-code"
        )
        file.write_text(json.dumps(data))
        code, checks = doctor(repo, TRUSTED)
        assert code == 1 and said in checks["agent claude-code"]["says"], checks
    assert lac_process(repo, "hooks", "install", "--agent", "claude-code").code == 0
    assert doctor(repo, TRUSTED)[0] == 0


def test_doctor_fails_a_server_pre_receive_that_exits_early(
    lac: Lac, repo: Path, tmp_path: Path, board_url: str | None
) -> None:
    server = make_server(repo, tmp_path, board_url)
    before = git(server, "for-each-ref")
    objects = sorted(p.name for p in (server / "objects").iterdir())
    code, checks = doctor(server)
    assert checks["probe pre-receive"]["verdict"] == "ok", checks
    hook = server / "hooks/pre-receive"
    good = hook.read_text()
    assert "here=$(dirname" in good  # where the early exit goes
    hook.write_text(good.replace("here=$(dirname", "exit 0\nhere=$(dirname", 1))
    code, checks = doctor(server)
    assert code == 1 and checks["probe pre-receive"]["verdict"] == "fail", checks
    assert "pre-receive let through a push" in checks["probe pre-receive"]["says"]
    assert checks["hooks"]["verdict"] != "fail"  # the static look alone passed it
    assert git(server, "for-each-ref") == before  # no ref moved
    assert sorted(p.name for p in (server / "objects").iterdir()) == objects  # no object kept


def test_doctor_reads_gemini_folder_trust(lac: Lac, repo: Path) -> None:
    assert lac_process(repo, "hooks", "install", "--agent", "gemini").code == 0
    code, checks = doctor(repo)
    assert checks["agent gemini"]["verdict"] == "warn"  # not told yet: it asks at start
    assert "TRUST_FOLDER" in checks["agent gemini"]["says"]
    trust = Path.home() / ".gemini/trustedFolders.json"
    trust.parent.mkdir(exist_ok=True)
    trust.write_text(json.dumps({str(repo): "DO_NOT_TRUST"}))
    code, checks = doctor(repo)
    assert code == 1 and checks["agent gemini"]["verdict"] == "fail"
    assert "does not trust" in checks["agent gemini"]["says"]
    trust.write_text(json.dumps({str(repo / "sub"): "TRUST_PARENT"}))  # the rule's parent
    assert doctor(repo)[1]["agent gemini"]["verdict"] == "ok"


# --- portability: installed with one venv, run with another ------------------------------


def make_venv(where: Path) -> Path:
    """A venv of its own (its own interpreter), with a git-lac that runs this
    checkout (and this test venv's dependencies) through a .pth file."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    root = Path(__file__).resolve().parent.parent
    Path(site, "lac_checkout.pth").write_text(f"{root}\n{sysconfig.get_paths()['purelib']}\n")
    script = where / "bin" / "git-lac"
    script.write_text(
        f"#!{python}\nimport sys\nfrom git_lacunari.entry import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return where / "bin"


def test_installed_from_one_venv_the_hooks_run_with_another(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    hold_auth(lac)
    a = make_venv(tmp_path / "venv-a")
    env = {**os.environ, "PATH": f"{a}:{SYSTEM_PATH}"}
    for agent in ("claude-code", "gemini"):
        put = subprocess.run(["git", "lac", "hooks", "install", "--agent", agent], cwd=repo,
                             env=env, capture_output=True, text=True)  # fmt: skip
        assert put.returncode == 0, put.stderr
    for agent in ("claude-code", "gemini"):
        text = settings_file(repo, agent, "project").read_text()
        for path in (str(a.parent), str(tmp_path), str(repo), str(Path.home()), sys.prefix):
            assert path not in text, (agent, path)
    shutil.rmtree(a.parent)  # the installing machine's venv is gone
    b = make_venv(tmp_path / "venv-b")
    for agent in ("claude-code", "gemini"):
        (command,) = [h["command"] for h in ours(settings_file(repo, agent, "project"),
                                                 EVENT[agent])]  # fmt: skip
        who = {"LAC_AGENT": "alice"}
        held = run_sh(
            command, repo, payload(agent, repo, "core/auth.py"), f"{b}:{SYSTEM_PATH}", who
        )
        reason = denied(agent, held)
        assert reason is not None and reason.startswith("dana holds core/auth.py on task #1")
        free = run_sh(command, repo, payload(agent, repo, "README"), f"{b}:{SYSTEM_PATH}", who)
        assert denied(agent, free) is None, free.stderr
