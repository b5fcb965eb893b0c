"""`git lac prime` (its words, the version, --json, Claude Code's
SessionStart hook, the AGENTS.md section) and `hooks install --agent NAME
--mcp` (each harness's MCP file, over the user's own content: kept, a second
install changes no byte, uninstall gives the file back byte for byte).

Every command here is a real `git lac` process in a real repository, as a
harness or a user runs it."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from git_lacunari import __version__

from .conftest import git, lac_process

# Claude Code's SessionStart input (https://code.claude.com/docs/en/hooks, "SessionStart").
SESSION_START = {
    "session_id": "9b1f0c1e-0000-4000-8000-000000000001",
    "transcript_path": "/tmp/transcript.jsonl",
    "cwd": "",
    "hook_event_name": "SessionStart",
    "source": "startup",
}


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    return repo


def snapshot(repo: Path) -> dict[str, str]:
    """Every file of the work tree (not .git) -> sha256 of its bytes."""
    return {
        str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }


# --- prime ------------------------------------------------------------------------------


def test_prime_says_how_to_work_and_the_version(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    said = lac_process(repo, "prime")
    assert said.code == 0, said.err
    version = lac_process(repo, "--version")
    assert version.code == 0
    assert version.out.strip() == f"git-lac, version {__version__}"
    assert f"git-lacunari {__version__}" in said.out
    for command in ("git lac claim ID", "git lac wait PATH...", "git lac done ID", "git lac land"):
        assert f"`{command}`" in said.out, command
    # What a refusal means, in the words the edit hook uses, and what to do about it.
    assert "erin holds src/auth.py on task #1; git lac wait src/auth.py" in said.out
    assert "was NOT made" in said.out
    assert said.err == ""


def test_prime_json_is_one_object_with_the_same_words(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    plain = lac_process(repo, "prime")
    said = lac_process(repo, "prime", "--json")
    assert said.code == 0, said.err
    body = json.loads(said.out)  # the whole stdout is one JSON object
    assert isinstance(body, dict)
    assert body["version"] == __version__
    assert body["text"] == plain.out.rstrip("\n")
    steps = {s["step"]: s["command"] for s in body["steps"]}
    assert steps["claim"] == "git lac claim ID"
    assert steps["wait"] == "git lac wait PATH..."
    assert steps["done"] == "git lac done ID"
    assert steps["land"] == "git lac land"
    assert "refusal" in steps


def test_prime_exits_0_on_claude_codes_session_start_payload(tmp_path: Path) -> None:
    """As Claude Code runs it: the SessionStart payload on stdin, cwd the
    project; and outside any repository (prime needs no board)."""
    repo = make_repo(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for cwd in (repo, outside):
        payload = json.dumps({**SESSION_START, "cwd": str(cwd)})
        said = lac_process(cwd, "prime", input=payload)
        assert said.code == 0, said.err
        assert "`git lac claim ID`" in said.out
        assert said.err == ""


def session_start_commands(settings: Path) -> list[str]:
    data = json.loads(settings.read_text())
    return [
        hook["command"]
        for group in data["hooks"].get("SessionStart", [])
        for hook in group.get("hooks", [])
    ]


def test_claude_code_install_runs_prime_at_session_start_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = (
        '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}\n'
    )
    settings.write_text(theirs)
    first = lac_process(repo, "hooks", "install", "--agent", "claude-code")
    assert first.code == 0, first.err
    commands = session_start_commands(settings)
    assert commands.count("git lac prime") == 1
    assert "echo hi" in commands  # theirs kept
    before = settings.read_bytes()
    again = lac_process(repo, "hooks", "install", "--agent", "claude-code")
    assert again.code == 0, again.err
    assert settings.read_bytes() == before
    assert session_start_commands(settings).count("git lac prime") == 1
    out = lac_process(repo, "hooks", "uninstall", "--agent", "claude-code")
    assert out.code == 0, out.err
    assert settings.read_text() == theirs


# --- the AGENTS.md section ------------------------------------------------------------------

BEGIN = "<!-- git-lacunari:"
END = "<!-- /git-lacunari -->"


def test_agents_md_section_for_harnesses_without_session_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    agents_md = repo / "AGENTS.md"
    theirs = "# Working here\n\nRun `make test` before you commit."  # no final newline
    agents_md.write_text(theirs)
    before = snapshot(repo)
    put = lac_process(repo, "hooks", "install", "--agent", "codex", "--agent", "qwen", "--json")
    assert put.code == 0, put.err
    assert put.json["agents_md"]["action"] == "installed"
    body = agents_md.read_text()
    assert body.startswith(theirs)
    assert body.count(BEGIN) == 1 and body.count(END) == 1
    section = body[body.index(BEGIN) :]
    assert "git-lacunari" in section.splitlines()[0]  # the marker names it
    assert "`git lac claim ID`" in section and __version__ in section
    installed = snapshot(repo)
    again = lac_process(repo, "hooks", "install", "--agent", "codex", "--agent", "qwen")
    assert again.code == 0, again.err
    assert snapshot(repo) == installed
    # One harness goes: the other still reads the section.
    one = lac_process(repo, "hooks", "uninstall", "--agent", "codex", "--json")
    assert one.code == 0, one.err
    assert one.json["agents_md"]["action"] == "kept"
    assert agents_md.read_text() == body
    last = lac_process(repo, "hooks", "uninstall", "--agent", "qwen")
    assert last.code == 0, last.err
    assert snapshot(repo) == before


def test_agents_md_made_by_install_goes_with_uninstall(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    put = lac_process(repo, "hooks", "install", "--agent", "copilot")
    assert put.code == 0, put.err
    body = (repo / "AGENTS.md").read_text()
    assert body.startswith(BEGIN) and body.endswith(END + "\n")
    out = lac_process(repo, "hooks", "uninstall", "--agent", "copilot")
    assert out.code == 0, out.err
    assert not (repo / "AGENTS.md").exists()
    assert snapshot(repo) == {}


def test_agents_md_edited_since_keeps_the_users_lines(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    agents_md = repo / "AGENTS.md"
    agents_md.write_text("# Rules\n")
    assert lac_process(repo, "hooks", "install", "--agent", "codex").code == 0
    agents_md.write_text(agents_md.read_text() + "\nAdded later by hand.\n")
    out = lac_process(repo, "hooks", "uninstall", "--agent", "codex")
    assert out.code == 0, out.err
    left = agents_md.read_text()
    assert BEGIN not in left and END not in left
    assert left.startswith("# Rules\n") and "Added later by hand." in left


def test_claude_code_alone_writes_no_agents_md(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    assert lac_process(repo, "hooks", "install", "--agent", "claude-code").code == 0
    assert not (repo / "AGENTS.md").exists()


# --- --mcp ---------------------------------------------------------------------------------

OURS = {"command": "git", "args": ["lac", "mcp"]}
# agent -> (the MCP file, the user's own content there, the servers in the parsed file)
MCP: dict[str, tuple[str, str, Any]] = {
    "codex": (
        ".codex/config.toml",
        '# my settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
        'args = ["--stdio"]\n\n[tui]\nnotifications = true',
        lambda text: tomllib.loads(text)["mcp_servers"],
    ),
    "qwen": (
        ".qwen/settings.json",
        '{"model": {"name": "qwen3-coder-plus"},\n'
        ' "mcpServers": {"docs": {"command": "docs-mcp"}}}',
        lambda text: json.loads(text)["mcpServers"],
    ),
    "copilot": (
        ".vscode/mcp.json",
        '{\n  "inputs": [],\n  "servers": {"docs": {"type": "stdio", "command": "docs-mcp"}}\n}\n',
        lambda text: json.loads(text)["servers"],
    ),
    "cursor": (
        ".cursor/mcp.json",
        '{"mcpServers": {"docs": {"command": "docs-mcp"}}}',
        lambda text: json.loads(text)["mcpServers"],
    ),
    "claude-code": (
        ".mcp.json",
        '{"mcpServers": {"docs": {"command": "docs-mcp"}}}',
        lambda text: json.loads(text)["mcpServers"],
    ),
    "gemini": (
        ".gemini/settings.json",
        '{"theme": "GitHub", "mcpServers": {"docs": {"command": "docs-mcp"}}}',
        lambda text: json.loads(text)["mcpServers"],
    ),
}
EXPECTED = {"copilot": {"type": "stdio", **OURS}}


def installable(agent: str) -> None:
    from git_lacunari.agents.registry import INSTALLABLE

    if agent not in INSTALLABLE:
        pytest.skip(f"{agent} is not an installable harness in this build (no adapter yet)")


@pytest.mark.parametrize("agent", sorted(MCP))
def test_mcp_registered_over_the_users_servers_twice_and_out_again(
    tmp_path: Path, agent: str
) -> None:
    installable(agent)
    rel, theirs, servers = MCP[agent]
    repo = make_repo(tmp_path)
    file = repo / rel
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(theirs)
    before = snapshot(repo)
    put = lac_process(repo, "hooks", "install", "--agent", agent, "--mcp", "--json")
    assert put.code == 0, put.err
    assert put.json["mcp"] == [
        {"harness": f"{agent} mcp", "path": str(file), "action": "installed", "scope": "project"}
    ]
    got = servers(file.read_text())
    assert got["lacunari"] == EXPECTED.get(agent, OURS)
    assert "docs" in got  # the user's server kept
    assert servers(theirs).items() <= got.items()
    if agent == "codex":  # the rest of the TOML as it was
        data = tomllib.loads(file.read_text())
        assert data["model"] == "o3" and data["tui"] == {"notifications": True}
    installed = snapshot(repo)
    again = lac_process(repo, "hooks", "install", "--agent", agent, "--mcp", "--json")
    assert again.code == 0, again.err
    assert again.json["mcp"][0]["action"] == "unchanged"
    assert snapshot(repo) == installed
    out = lac_process(repo, "hooks", "install", "--agent", agent, "--uninstall")
    assert out.code == 0, out.err
    assert snapshot(repo) == before
    assert file.read_text() == theirs


@pytest.mark.parametrize("agent", ["codex", "copilot"])
def test_mcp_file_made_by_install_goes_with_uninstall(tmp_path: Path, agent: str) -> None:
    repo = make_repo(tmp_path)
    rel = MCP[agent][0]
    put = lac_process(repo, "hooks", "install", "--agent", agent, "--mcp")
    assert put.code == 0, put.err
    text = (repo / rel).read_text()
    server = tomllib.loads(text)["mcp_servers"] if agent == "codex" else json.loads(text)["servers"]
    assert server == {"lacunari": EXPECTED.get(agent, OURS)}
    out = lac_process(repo, "hooks", "uninstall", "--agent", agent)
    assert out.code == 0, out.err
    assert not (repo / rel).exists()
    assert not (repo / rel).parent.exists() or any((repo / rel).parent.iterdir())
    assert snapshot(repo) == {}


def test_mcp_toml_it_cannot_add_to_is_refused_and_nothing_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    config = repo / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('mcp_servers = { docs = { command = "docs-mcp" } }\n')
    before = snapshot(repo)
    put = lac_process(repo, "hooks", "install", "--agent", "codex", "--mcp")
    assert put.code == 2, put.out + put.err
    assert put.err.count("\n") == 1 and "Traceback" not in put.err
    assert "[mcp_servers.lacunari]" in put.err and "nothing was changed" in put.err
    assert snapshot(repo) == before  # not even the hooks file


def test_mcp_a_foreign_lacunari_server_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    file = repo / ".vscode" / "mcp.json"
    file.parent.mkdir()
    file.write_text('{"servers": {"lacunari": {"type": "stdio", "command": "other"}}}')
    before = snapshot(repo)
    put = lac_process(repo, "hooks", "install", "--agent", "copilot", "--mcp")
    assert put.code == 2, put.out + put.err
    assert "already has a server named" in put.err and "Traceback" not in put.err
    assert snapshot(repo) == before


def test_mcp_bad_uses_are_one_line_each(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    alone = lac_process(repo, "hooks", "install", "--mcp")
    assert alone.code == 2 and "--mcp goes with --agent NAME" in alone.err
    scoped = lac_process(repo, "hooks", "install", "--agent", "codex", "--mcp", "--scope", "user")
    assert scoped.code == 2 and "drop --scope" in scoped.err
    assert snapshot(repo) == {}
