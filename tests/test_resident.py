"""The resident helper answers the hooks and an agent's loop exactly as the
direct path does: the same scenario, real git, real hooks, real pushes to a
bare repository with the server's hooks, run once with every call deciding
in its own process (``LAC_EDIT_HELPER=off``) and once with every call
answered by the helper (``LAC_EDIT_HELPER=require``: a call it did not
answer fails), then compared: each step's exit code, stdout and stderr, and
the board at the end. And a fleet's idle helpers hold no board connection.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import git, make_repo, pg_schema

BIN = str(Path(sys.executable).parent)
LAC = str(Path(sys.executable).parent / "git-lac")
Step = tuple[str, int, str, str]


def _env(home: Path, mode: str, agent: str) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": BIN + os.pathsep + os.environ["PATH"],
        "HOME": str(home),
        "LAC_AGENT": agent,
        "LAC_EDIT_HELPER": mode,
    }


def _run(args: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> Step:
    proc = subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True)
    return " ".join(args), proc.returncode, proc.stdout, proc.stderr


def _normal(text: str, root: Path) -> str:
    """The same scenario in another directory, seconds apart."""
    text = text.replace(str(root), "ROOT")
    text = re.sub(r"lac_t_[0-9a-f]+", "SCHEMA", text)
    text = re.sub(r'"instance": "[0-9a-f]+"', '"instance": "X"', text)
    text = re.sub(r"lac\.instance=[0-9a-f]+", "lac.instance=X", text)  # each clone's own
    text = re.sub(r"\b[0-9a-f]{40}\b", "OID", text)
    text = re.sub(r"\b\d+\.\d+(e-?\d+)?", "FLOAT", text)
    text = re.sub(r"\b[0-9a-f]{7,12}\b", "ABBREV", text)
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?", "TIME", text)
    text = re.sub(r"\d+(\.\d+)?(ms|s|m)\b( ago)?", "AGE", text)
    text = re.sub(r"(heartbeat|stale in|instance) \S+", r"\1 X", text)
    return re.sub(r'"(at|since|heartbeat_at|claimed_at|updated_at|created_at)": [^,}]+', "", text)


def scenario(root: Path, url: str | None, mode: str) -> tuple[list[Step], list[dict[str, object]]]:
    """dana holds core/auth.py; erin's commit of it is refused by pre-commit
    and her push of it by pre-receive; erin claims her own task, commits
    (commit-msg names it), pushes (pre-push, pre-receive, post-receive settle
    her finished claim), and the loop's verbs run: status, heartbeat, done."""
    root.mkdir()
    home = root / "home"
    home.mkdir()
    config = Path(os.environ["HOME"], ".gitconfig").read_text()
    (home / ".gitconfig").write_text(config + '[lac "edit"]\n\thelper-idle = 20s\n')
    bare = root / "server.git"
    erin = make_repo(root / "erin")
    git(root, "init", "-q", "--bare", str(bare))
    git(erin, "push", "-q", "--no-verify", str(bare), "main")
    git(erin, "remote", "add", "origin", str(bare))
    git(erin, "fetch", "-q", "origin")
    git(erin, "branch", "-q", "-u", "origin/main")
    steps: list[Step] = []
    dana, erin_env = _env(home, mode, "dana"), _env(home, mode, "erin")
    init = ["init", *(["--url", url] if url else []), "--json"]
    steps.append(_run([LAC, *init], erin, erin_env))
    board = url or f"sqlite://{erin / '.git' / 'lacunari' / 'board.db'}"
    git(bare, "config", "lac.url", board)
    steps.append(_run([LAC, "hooks", "install", "--server"], bare, erin_env))
    steps.append(_run([LAC, "hooks", "install"], erin, erin_env))
    for words in (
        ["task", "add", "auth", "--write", "core/auth.py"],
        ["task", "add", "docs", "--write", "docs/"],
    ):
        steps.append(_run([LAC, *words], erin, erin_env))
    steps.append(_run([LAC, "claim", "--next", "--json"], erin, dana))
    # erin's commit of dana's path: refused by pre-commit
    (erin / "core" / "auth.py").write_text("def login():\n    return False\n")
    git(erin, "add", "-A")
    steps.append(_run(["git", "commit", "-qm", "auth"], erin, erin_env))
    # committed anyway (--no-verify) and pushed: refused by the server's pre-receive
    git(erin, "commit", "-qm", "auth", "--no-verify")
    steps.append(_run(["git", "push", "-q", "--no-verify", "origin", "main"], erin, erin_env))
    git(erin, "reset", "-q", "--hard", "origin/main")
    # erin's own line: claimed, committed (commit-msg, post-commit), pushed
    steps.append(_run([LAC, "claim", "--next"], erin, erin_env))
    steps.append(_run([LAC, "claim", "--next", "--lane", "nowhere", "--json"], erin, erin_env))
    (erin / "docs").mkdir()
    (erin / "docs" / "guide.md").write_text("# guide\n")
    git(erin, "add", "-A")
    steps.append(_run(["git", "commit", "-qm", "docs"], erin, erin_env))
    steps.append(("message", 0, git(erin, "log", "-1", "--format=%B"), ""))
    steps.append(_run([LAC, "heartbeat"], erin, erin_env))
    steps.append(_run([LAC, "status", "--json"], erin, erin_env))
    steps.append(_run([LAC, "done", "2", "--json"], erin, erin_env))
    steps.append(_run(["git", "push", "-q", "origin", "main"], erin, erin_env))
    steps.append(_run([LAC, "status"], erin, erin_env))
    steps.append(_run([LAC, "done", "7"], erin, erin_env))  # exit 2 or 1, as directly
    listed = _run([LAC, "tasks", "--json"], erin, {**erin_env, "LAC_EDIT_HELPER": "off"})
    fields = ("id", "title", "state", "attempts", "holder", "stale")
    board_state = [{k: t.get(k) for k in fields} for t in json.loads(listed[2])["tasks"]]
    normal = [
        (_normal(what, root), code, _normal(out, root), _normal(err, root))
        for what, code, out, err in steps
    ]
    return normal, board_state


def _stop_helpers(root: Path) -> None:
    """The helpers the scenario started: each leaves within a second of its
    socket going."""
    for sock in root.rglob("edit-*.sock"):
        sock.unlink()


@pytest.fixture
def second_url(backend: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A second board, for the same scenario the other way."""
    if backend == "sqlite":
        yield None
        return
    with pg_schema(request.getfixturevalue("pg_server")) as url:
        yield url


def test_the_helper_answers_every_call_as_the_direct_path(
    tmp_path: Path, board_url: str | None, second_url: str | None
) -> None:
    direct, direct_board = scenario(tmp_path / "direct", board_url, "off")
    try:
        resident, resident_board = scenario(tmp_path / "resident", second_url, "require")
        assert list((tmp_path / "resident").rglob("edit-*.sock"))  # the helpers answered
    finally:
        _stop_helpers(tmp_path / "resident")
    # not a vacuous comparison: the scenario refused, claimed, settled
    said = {what: (code, err) for what, code, _, err in direct}
    assert said["git commit -qm auth"][0] == 1 and "dana holds core/auth.py" in str(direct)
    assert "push refused" in said["git push -q --no-verify origin main"][1]
    assert {t["title"]: t["state"] for t in direct_board}["auth"] == "claimed", direct_board
    assert "Lac-Task: 2" in [s for s in direct if s[0] == "message"][0][2]
    assert not list((tmp_path / "direct").rglob("edit-*.sock"))  # off: no helper at all
    for one, other in zip(direct, resident, strict=True):
        assert one == other, "\n".join(
            difflib.unified_diff(str(one).split(", "), str(other).split(", "))
        )
    assert direct_board == resident_board


# --- a fleet's idle helpers hold no board connection --------------------------------

FLEET = 20


def _idle_connections(server: str, app: str) -> int:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND state = 'idle'",
            (app,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def _edit_payload(clone: Path) -> str:
    return json.dumps(
        {
            "session_id": "s",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": str(clone),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(clone / "notes.md"), "content": "x\n"},
            "tool_use_id": "toolu_01",
        }
    )


@pytest.mark.slow
def test_a_fleet_of_helpers_holds_no_idle_connection(tmp_path: Path, pg_server: str) -> None:
    """20 clones on one PostgreSQL board, each running the edit hook (whose
    helper keeps the board open between questions) and a commit through its
    helper: while they work the helpers hold connections; 15 s after the
    last question, at most 3 are left idle (lac.edit.helper-linger, 5 s)."""
    import uuid

    app = f"lac_fleet_{uuid.uuid4().hex[:10]}"
    with pg_schema(pg_server) as url:
        origin = make_repo(tmp_path / "origin")
        env = {
            **os.environ,
            "PATH": BIN + os.pathsep + os.environ["PATH"],
            "PGAPPNAME": app,
            "LAC_EDIT_HELPER": "auto",
        }
        assert _run([LAC, "init", "--url", url], origin, env)[1] == 0
        clones = []
        try:
            for n in range(FLEET):
                clone = tmp_path / f"clone-{n}"
                git(tmp_path, "clone", "-q", str(origin), str(clone))
                git(clone, "config", "lac.url", url)
                agent = {**env, "LAC_AGENT": f"agent-{n}"}
                assert _run([LAC, "hooks", "install"], clone, agent)[1] == 0
                first = _run(
                    [LAC, "guard", "edit", "--harness", "claude-code"],
                    clone,
                    agent,
                    _edit_payload(clone),
                )
                assert first[1] == 0, first
                clones.append((clone, agent))
            deadline = time.monotonic() + 30
            while (
                time.monotonic() < deadline
                and sum(1 for c, _ in clones if list((c / ".git" / "lacunari").glob("edit-*.sock")))
                < FLEET
            ):
                time.sleep(0.2)
            # at once, through the helpers now: each keeps its board open
            procs = [
                subprocess.Popen(
                    [LAC, "guard", "edit", "--harness", "claude-code"],
                    cwd=clone,
                    env=agent,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
                for clone, agent in clones
            ]
            for proc, (clone, _) in zip(procs, clones, strict=True):
                proc.communicate(_edit_payload(clone))
                assert proc.returncode == 0
            busy = _idle_connections(pg_server, app)
            assert busy > 3, f"the helpers held only {busy} connections: nothing measured"
            for clone, agent in clones:
                (clone / "notes.md").write_text("x\n")
                git(clone, "add", "notes.md")
                committed = _run(["git", "commit", "-qm", "notes"], clone, agent)
                assert committed[1] == 0, committed
            time.sleep(15)
            left = _idle_connections(pg_server, app)
            assert left <= 3, f"{left} idle connections 15 s after the last question"
        finally:
            _stop_helpers(tmp_path)


def test_the_hooks_thin_client_imports_next_to_nothing(tmp_path: Path) -> None:
    """What a hook script's first process loads (python -I -S resident.py):
    nothing of the package, no click, no board, no driver, and not even json,
    socket, typing or hashlib (each costs more than the interpreter's start)."""
    import git_lacunari.resident as resident

    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", resident.__file__, LAC, "status"],
        cwd=tmp_path,  # no repository: the call goes to git-lac itself, after the imports
        env={**os.environ, "LAC_EDIT_HELPER": "auto"},
        capture_output=True,
        text=True,
    )
    loaded = {
        line.split("|")[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "_socket" in loaded, loaded  # it did run: what it needs is there
    heavy = {"json", "socket", "typing", "hashlib", "click", "psycopg", "sqlite3", "re", "enum"}
    assert not loaded & heavy, loaded & heavy
    assert not any(name.startswith("git_lacunari") for name in loaded), loaded
