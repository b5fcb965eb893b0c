"""The edit hook under the real agent harnesses: Claude Code and Gemini CLI,
the pinned npm packages, driven headless against a loopback model.

Each test builds a repository where erin holds ``src/auth.py`` and
``held.ipynb`` on task #1 and the agent under test (``agent``) holds
``free.txt`` on task #2, installs the hook with ``git lac hooks install
--agent …`` and commits it, then runs ONE harness process whose model (the
stand-in in tests/harness_model.py) calls one scripted tool. It is judged by
the disk (did the file change?) and by the tool result the harness handed
back to the model (a refusal names the holder).

The harnesses are installed outside the repository, pinned, by ``.ci/run``:
``npm install --prefix DIR/claude-code-2.1.197 @anthropic-ai/claude-code@2.1.197``
and ``… DIR/gemini-cli-0.61.0 @google/gemini-cli@0.61.0``, DIR being
``$LAC_TEST_HARNESS_DIR`` (default ``~/.cache/git-lacunari-harnesses``).
Missing, these tests skip loudly, unless ``LAC_REQUIRE_HARNESS=1``.

What the harnesses really do (read in their shipped code, seen here):

Claude Code 2.1.197 (a native binary; ``ANTHROPIC_BASE_URL``):
- ``-p`` posts ``/v1/messages?beta=true`` with ``"stream": true`` and reads
  server-sent events; with ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` it
  makes no other request (no title, no quota probe, no telemetry).
- ``Edit``, ``Write`` (of an existing file) and ``NotebookEdit`` check that
  the file was ``Read`` in this session BEFORE the PreToolUse hook runs: the
  tool result is ``<tool_use_error>File has not been read yet…`` and the hook
  never sees the call. So each file scenario reads the file first.
- A hook's ``permissionDecision: "deny"`` comes back to the model as the
  tool result whose text is exactly ``permissionDecisionReason``
  (``erin holds src/auth.py on task #1; git lac wait src/auth.py``).
- A hook command that cannot run (exit 127: its git-lac is gone) is a
  "non-blocking error": the tool call goes through.
- Project hooks in ``.claude/settings.json`` run under ``-p`` without any
  trust prompt. ``acceptEdits`` does not approve ``Bash``: the free shell
  write needs ``--allowedTools Bash`` (the hook runs before that check).
- ``rm -rf .`` in the work tree, when the hook lets it through, meets Claude
  Code's own safety check (a permission "ask", refused under ``-p``): "Dangerous
  rm operation detected: '<cwd>' … would remove a workspace directory". The
  disk is safe, but the holder is not named: only the hook can say who holds
  what, and its deny comes first (PreToolUse runs before permissions).
- ``--add-dir D`` makes D a working directory: an Edit there is accepted
  under ``acceptEdits`` like one in the cwd, and the hook's payload still
  carries the session's ``cwd`` (the second work tree), not D.

Gemini CLI 0.61.0 (bundled JavaScript under node; ``GOOGLE_GEMINI_BASE_URL``):
- needs ``security.auth.selectedType: "gemini-api-key"`` in the user's
  settings, else ``-p`` exits with "Invalid auth method selected." before
  any request; ``GEMINI_CLI_NO_RELAUNCH=true`` keeps it in one process.
- posts ``models/<flash-lite>:generateContent`` first (the model router's
  classifier, asking for JSON), then
  ``models/<model>:streamGenerateContent?alt=sse`` for the main loop.
- project hooks run only in a trusted folder: trust is
  ``~/.gemini/trustedFolders.json``, ``{"<abs path>": "TRUST_FOLDER"}``
  (``GEMINI_CLI_TRUSTED_FOLDERS_PATH`` moves it); it prints a warning
  naming the project's hooks on stderr, and runs them.
- a hook's ``{"decision": "deny", "reason": R}`` comes back to the model as
  the function response ``{"error": "Tool execution blocked: R"}``; a shell
  command's output comes back wrapped in ``<untrusted_context>``.
- ``run_shell_command`` takes ``command`` and ``dir_path`` (the shell tool's
  schema in 0.61.0: "The path of the directory to run the command in").
- ``rm -rf .`` let through reaches GNU rm, which refuses it ("refusing to
  remove '.' or '..' directory"): nothing is lost, nor is the holder named.
- A hook's exit code, when its output is not JSON (hookRunner's
  ``convertPlainTextToHookOutput``): 0 allows, 1 allows with a warning, ANY
  other (2, 3, 127 for a command that is gone) denies, the text being the
  reason. So a hook whose git-lac is gone blocks every write here
  ("Tool execution blocked: bash: line 1: …/git-lac: No such file or
  directory") while Claude Code (127 is a non-blocking error) lets it through.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO_ROOT, git, lac_inprocess, pg_schema
from .harness_model import ModelServer, Script

# Read at import, before the seal moves HOME and drops LAC_* (LAC_TEST_* is kept).
HARNESS_DIR = Path(
    os.environ.get("LAC_TEST_HARNESS_DIR") or Path.home() / ".cache" / "git-lacunari-harnesses"
).expanduser()
REQUIRE = (
    os.environ.get("LAC_REQUIRE_HARNESS") == "1"
    or os.environ.get("LAC_TEST_REQUIRE_HARNESS") == "1"
)
CLAUDE = ("@anthropic-ai/claude-code", "2.1.197", "claude")
GEMINI = ("@google/gemini-cli", "0.61.0", "gemini")
PACKAGES = {"claude-code": CLAUDE, "gemini": GEMINI}  # by `hooks install --agent` name
RUN_TIMEOUT = 120  # seconds for one harness process; a start costs a few
LAC_TIMEOUT = 60

HOLDER = "erin holds src/auth.py on task #1"
NOTEBOOK_HOLDER = "erin holds held.ipynb on task #1"
AUTH = "def login():\n    return True\n"
NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c1",
            "metadata": {},
            "outputs": [],
            "source": ["x = 1\n"],
        }
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def harness_bin(package: tuple[str, str, str]) -> Path:
    """The pinned harness's executable, or a loud skip (a failure under LAC_REQUIRE_HARNESS)."""
    name, version, exe = package
    prefix = HARNESS_DIR / f"{name.rsplit('/', 1)[-1]}-{version}"
    binary = prefix / "node_modules" / ".bin" / exe
    manifest = prefix / "node_modules" / name / "package.json"
    installed = None
    if manifest.is_file():
        installed = json.loads(manifest.read_text()).get("version")
    if binary.exists() and installed == version:
        return binary
    reason = (
        f"real-harness tests SKIPPED: {name}@{version} is not installed in {prefix} "
        f"(found {installed}); `npm install --prefix {prefix} {name}@{version}` "
        "or set LAC_TEST_HARNESS_DIR"
    )
    if REQUIRE:
        pytest.fail(reason + " (LAC_REQUIRE_HARNESS=1 forbids skipping)")
    print("\n" + "!" * 78 + f"\n{reason}\n" + "!" * 78, file=sys.stderr)
    pytest.skip(reason)


# --- the world: a repository, a board, the hook installed and committed ----------------


def lac(cwd: Path, *args: str) -> None:
    """`git lac ARGS` in this process: the board's set-up, cheaply."""
    result = lac_inprocess(cwd, *args)
    assert result.code == 0, f"git lac {' '.join(args)}: {result.err}"


def lac_real(cwd: Path, *args: str, path: str) -> str:
    """`git lac ARGS` as a real process, finding git-lac on ``path``."""
    proc = subprocess.run(
        ["git", "lac", *args],
        cwd=cwd,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=LAC_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, f"git lac {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def system_path(*first: Path) -> str:
    """PATH for a harness: ``first`` (a git-lac), then node and the system's tools."""
    node = shutil.which("node")
    dirs = [str(d) for d in first] + ([str(Path(node).parent)] if node else [])
    return os.pathsep.join([*dirs, "/usr/bin", "/bin"])


VENV_BIN = Path(sys.executable).parent
LAC_PATH = system_path(VENV_BIN)


@dataclass
class World:
    repo: Path
    out: Path  # a directory in no repository
    path: str  # PATH with the git-lac the hook is to find

    def read(self, rel: str, root: Path | None = None) -> str:
        return ((root or self.repo) / rel).read_text()


def make_world(tmp: Path, url: str | None, agents: tuple[str, ...], path: str = LAC_PATH) -> World:
    for agent in agents:  # skip (or fail) before any setup
        harness_bin(PACKAGES[agent])
    # An odd name on the way (a space, a non-ASCII letter): every path the
    # harnesses hand the hook goes through it.
    repo = tmp / "the repo é"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "auth.py").write_text(AUTH)
    (repo / "held.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    (repo / "free.txt").write_text("free\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "initial")
    out = tmp / "out side"
    out.mkdir()
    # As the README's agent section: tasks declare their paths, claims hold them.
    lac(repo, "init", *(["--url", url] if url else []))
    lac(
        repo,
        "task",
        "add",
        "Harden login",
        "--write",
        "src/auth.py",
        "--write",
        "held.ipynb",
    )
    lac(repo, "task", "add", "Notes", "--write", "free.txt")
    lac(repo, "--as", "erin", "claim", "1")
    lac(repo, "--as", "agent", "claim", "2")
    # Installed as a user does, by the git-lac first on PATH.
    lac_real(repo, "hooks", "install", *(f"--agent={agent}" for agent in agents), path=path)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "edit hooks")
    return World(repo, out, path)


@pytest.fixture(params=["sqlite", "postgres"])
def claude_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    if request.param == "sqlite":
        yield None
        return
    with pg_schema(request.getfixturevalue("pg_server")) as url:
        yield url


# --- running a harness ----------------------------------------------------------------


@dataclass
class Run:
    script: Script
    proc: subprocess.CompletedProcess[str]

    @property
    def result(self) -> str:
        """The last scripted tool's result as the model got it."""
        got = self.script.last_result()
        assert got is not None, f"the tool result never came back to the model\n{self}"
        return got

    def __str__(self) -> str:
        return (
            f"exit {self.proc.returncode}\nrequests: {self.script.requests}\n"
            f"tool results: {self.script.tool_results}\n"
            f"stdout: {self.proc.stdout[-4000:]}\nstderr: {self.proc.stderr[-4000:]}"
        )


def _run(cmd: list[str], cwd: Path, env: dict[str, str], script: Script) -> Run:
    started = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"{Path(cmd[0]).name} did not finish in {RUN_TIMEOUT}s "
            f"(requests: {script.requests})\nstdout: {exc.stdout!r}\nstderr: {exc.stderr!r}"
        )
    run = Run(script, proc)
    assert proc.returncode == 0, (
        f"{Path(cmd[0]).name} failed after {time.monotonic() - started:.1f}s\n{run}"
    )
    return run


def harness_env(path: str) -> dict[str, str]:
    # The agent's own name for its hooks (both harnesses pass their env on).
    return {**os.environ, "PATH": path, "LAC_AGENT": "agent"}


def run_claude(
    world: World,
    steps: list[tuple[str, dict[str, Any]]],
    cwd: Path | None = None,
    add_dir: Path | None = None,
    path: str | None = None,
) -> Run:
    binary = harness_bin(CLAUDE)
    script = Script(steps)
    with ModelServer(script) as model:
        env = harness_env(path or world.path)
        env.update(
            ANTHROPIC_BASE_URL=model.url,
            ANTHROPIC_API_KEY="sk-ant-loopback",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",  # no telemetry, no error reports
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        cmd = [
            str(binary),
            "-p",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash",
            "--output-format",
            "json",
        ]
        if add_dir is not None:
            cmd += ["--add-dir", str(add_dir)]
        return _run([*cmd, "--", "Do the scripted step."], cwd or world.repo, env, script)


def run_gemini(
    world: World, steps: list[tuple[str, dict[str, Any]]], path: str | None = None
) -> Run:
    binary = harness_bin(GEMINI)
    home = Path(os.environ["HOME"])
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(world.repo): "TRUST_FOLDER"})
    )
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    script = Script(steps)
    with ModelServer(script) as model:
        env = harness_env(path or world.path)
        env.update(
            GOOGLE_GEMINI_BASE_URL=model.url,
            GEMINI_API_KEY="loopback",
            GEMINI_CLI_NO_RELAUNCH="true",
            GEMINI_TELEMETRY_ENABLED="false",
        )
        cmd = [str(binary), "-p", "Do the scripted step.", "--yolo", "--output-format", "json"]
        return _run(cmd, world.repo, env, script)


def assert_refused(run: Run, world: World, before: dict[Path, str], holder: str = HOLDER) -> None:
    for file, text in before.items():
        assert file.exists() and file.read_text() == text, f"{file} changed\n{run}"
    assert holder in run.result, f"the tool result does not name the holder\n{run}"


# --- Claude Code ------------------------------------------------------------------------


def read(path: Path) -> tuple[str, dict[str, Any]]:
    return ("Read", {"file_path": str(path)})


def edit(path: str) -> tuple[str, dict[str, Any]]:
    return ("Edit", {"file_path": path, "old_string": "True", "new_string": "False"})


def claude_refusals(world: World) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    auth = world.repo / "src" / "auth.py"
    shell = "Bash"
    quoted = shlex.quote(str(world.out)), shlex.quote(str(auth))
    cd_out = "cd {} && sed -i s/True/False/ {}".format(*quoted)
    return {
        "edit-absolute": [read(auth), edit(str(auth))],
        "edit-relative": [read(auth), edit("src/auth.py")],
        "write": [read(auth), ("Write", {"file_path": "src/auth.py", "content": "pass\n"})],
        "sed": [(shell, {"command": "sed -i s/True/False/ src/auth.py"})],
        "rm-rf-dot": [(shell, {"command": "rm -rf ."})],
        "checkout-dot": [(shell, {"command": "git checkout -- ."})],
        "cd-out-sed": [
            (
                shell,
                {"command": cd_out},
            )
        ],
    }


CLAUDE_REFUSALS = [
    "edit-absolute",
    "edit-relative",
    "write",
    "sed",
    "rm-rf-dot",
    "checkout-dot",
    "cd-out-sed",
]


@pytest.mark.parametrize("case", CLAUDE_REFUSALS)
def test_claude_code_refuses_the_held_file(
    tmp_path: Path, claude_url: str | None, case: str
) -> None:
    world = make_world(tmp_path, claude_url, ("claude-code",))
    auth = world.repo / "src" / "auth.py"
    if case == "checkout-dot":
        auth.write_text(AUTH + "# erin's file, dirty in this work tree\n")
    before = {auth: auth.read_text()}
    run = run_claude(world, claude_refusals(world)[case])
    assert_refused(run, world, before)


def test_claude_code_refuses_notebook_edit(tmp_path: Path, claude_url: str | None) -> None:
    world = make_world(tmp_path, claude_url, ("claude-code",))
    notebook = world.repo / "held.ipynb"
    before = {notebook: notebook.read_text()}
    steps = [
        read(notebook),
        (
            "NotebookEdit",
            {"notebook_path": str(notebook), "cell_id": "c1", "new_source": "x = 2\n"},
        ),
    ]
    run = run_claude(world, steps)
    assert_refused(run, world, before, NOTEBOOK_HOLDER)


@pytest.mark.parametrize("whose", ["first", "own"])
def test_claude_code_in_a_second_worktree_refuses_either_copy(
    tmp_path: Path, claude_url: str | None, whose: str
) -> None:
    """From a linked work tree, with the first one added (``--add-dir``): the
    first tree's held file by absolute path, and this tree's own copy."""
    world = make_world(tmp_path, claude_url, ("claude-code",))
    second = tmp_path / "second"
    git(world.repo, "worktree", "add", "-q", "-b", "second", str(second))
    target = (world.repo if whose == "first" else second) / "src" / "auth.py"
    before = {world.repo / "src/auth.py": AUTH, second / "src/auth.py": AUTH}
    run = run_claude(world, [read(target), edit(str(target))], cwd=second, add_dir=world.repo)
    assert_refused(run, world, before)


@pytest.mark.parametrize("case", ["edit", "write", "bash-append"])
def test_claude_code_lets_free_paths_change(
    tmp_path: Path, claude_url: str | None, case: str
) -> None:
    world = make_world(tmp_path, claude_url, ("claude-code",))
    free = world.repo / "free.txt"
    steps = {
        "edit": [
            read(free),
            ("Edit", {"file_path": "free.txt", "old_string": "free", "new_string": "mine"}),
        ],
        "write": [read(free), ("Write", {"file_path": str(free), "content": "mine\n"})],
        "bash-append": [("Bash", {"command": "echo mine >> free.txt"})],
    }[case]
    run = run_claude(world, steps)
    expected = "free\nmine\n" if case == "bash-append" else "mine\n"
    assert free.read_text() == expected, f"free.txt did not change\n{run}"
    assert "erin" not in run.result and "holds" not in run.result, run
    assert world.read("src/auth.py") == AUTH


def test_claude_code_is_told_a_lost_claim_by_context_then_by_a_refusal(
    tmp_path: Path, claude_url: str | None
) -> None:
    """The agent's claim of free.txt is released by force before the run. Its
    next edit (a new file) goes through with the notice added to Claude's
    context (additionalContext: in the request that carries the tool's
    result); its first edit of free.txt, which the lost claim held, is
    refused with the notice as the reason; the file is untouched."""
    world = make_world(tmp_path, claude_url, ("claude-code",))
    lac(world.repo, "--as", "erin", "release", "2", "--force", "--reason", "agent is stuck")
    free = world.repo / "free.txt"
    notes = world.repo / "notes.md"
    steps = [
        ("Write", {"file_path": str(notes), "content": "mine\n"}),
        read(free),
        ("Edit", {"file_path": "free.txt", "old_string": "free", "new_string": "mine"}),
    ]
    run = run_claude(world, steps)
    told = "your claim of task #2 was released by erin at "
    assert notes.read_text() == "mine\n", f"the new file was not written\n{run}"
    assert told not in run.script.tool_results[0], run  # beside the result, not in it
    after_write = run.script.turns[1]
    assert told in after_write and "agent is stuck" in after_write, run
    assert told in run.result and "nothing was written" in run.result, run
    assert free.read_text() == "free\n", f"free.txt changed\n{run}"


# --- Gemini CLI ---------------------------------------------------------------------------


GEMINI_REFUSALS: dict[str, tuple[str, dict[str, Any]]] = {
    "write_file": ("write_file", {"file_path": "src/auth.py", "content": "pass\n"}),
    "replace": (
        "replace",
        {
            "file_path": "src/auth.py",
            "old_string": "True",
            "new_string": "False",
            "instruction": "x",
        },
    ),
    "sed": ("run_shell_command", {"command": "sed -i s/True/False/ src/auth.py"}),
    "sed-dir_path": (
        "run_shell_command",
        {"command": "sed -i s/True/False/ auth.py", "dir_path": "src"},
    ),
    "rm-rf-dot": ("run_shell_command", {"command": "rm -rf ."}),
}


@pytest.mark.parametrize("case", list(GEMINI_REFUSALS))
def test_gemini_refuses_the_held_file(tmp_path: Path, case: str) -> None:
    world = make_world(tmp_path, None, ("gemini",))
    auth = world.repo / "src" / "auth.py"
    run = run_gemini(world, [GEMINI_REFUSALS[case]])
    assert_refused(run, world, {auth: AUTH})


@pytest.mark.parametrize("case", ["write_file", "shell", "shell-dir_path"])
def test_gemini_lets_free_writes_through(tmp_path: Path, case: str) -> None:
    world = make_world(tmp_path, None, ("gemini",))
    step, file, expected = {
        "write_file": (
            ("write_file", {"file_path": "free.txt", "content": "mine\n"}),
            "free.txt",
            "mine\n",
        ),
        "shell": (
            ("run_shell_command", {"command": "echo mine >> free.txt"}),
            "free.txt",
            "free\nmine\n",
        ),
        "shell-dir_path": (
            ("run_shell_command", {"command": "echo mine > notes.txt", "dir_path": "src"}),
            "src/notes.txt",
            "mine\n",
        ),
    }[case]
    run = run_gemini(world, [step])
    target = world.repo / file
    assert target.is_file() and target.read_text() == expected, f"{file} was not written\n{run}"
    assert "blocked" not in run.result and "holds" not in run.result, run
    assert world.read("src/auth.py") == AUTH


def test_gemini_is_told_a_lost_claim_by_a_refusal_then_writes(tmp_path: Path) -> None:
    """BeforeTool has no field for context: the first call after the loss is
    refused with the notice (the model reads it), the same call again goes."""
    world = make_world(tmp_path, None, ("gemini",))
    lac(world.repo, "--as", "erin", "release", "2", "--force", "--reason", "agent is stuck")
    write = ("write_file", {"file_path": "notes.md", "content": "mine\n"})
    run = run_gemini(world, [write, write])
    first = run.script.tool_results[0]
    assert "Tool execution blocked: your claim of task #2 was released by erin" in first, run
    assert "call the tool again" in first, run
    assert (world.repo / "notes.md").read_text() == "mine\n", f"not written\n{run}"
    assert "blocked" not in run.result, run


# --- portable: the committed settings name no venv -------------------------------------


def make_venv(where: Path) -> Path:
    """A venv of its own with its own git-lac (this checkout's package, by a .pth)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)],
        check=True,
        capture_output=True,
        timeout=LAC_TIMEOUT,
    )
    (site,) = where.glob("lib/python*/site-packages")
    ours = REPO_ROOT  # where this checkout's git_lacunari package is
    deps = {Path(p) for p in sys.path if p.endswith("site-packages")}
    site.joinpath("lac-test.pth").write_text("".join(f"{p}\n" for p in [ours, *sorted(deps)]))
    script = where / "bin" / "git-lac"
    script.write_text(
        f"#!{where / 'bin' / 'python'}\nimport sys\nfrom git_lacunari.entry import main\n"
        "sys.exit(main())\n"
    )
    script.chmod(0o755)
    return where / "bin"


def test_portable_install_works_from_another_venv(tmp_path: Path) -> None:
    a_bin = make_venv(tmp_path / "venv-a")
    b_bin = make_venv(tmp_path / "venv-b")
    world = make_world(tmp_path / "w", None, ("claude-code", "gemini"), path=system_path(a_bin))
    problems = []
    for name in (".claude/settings.json", ".gemini/settings.json"):
        committed = git(world.repo, "show", f"HEAD:{name}")
        if str(tmp_path / "venv-a") in committed:
            problems.append(f"the committed {name} names venv A: {committed}")
    shutil.rmtree(tmp_path / "venv-a")  # A is gone; only B's git-lac is on PATH
    b_path = system_path(b_bin)
    auth = world.repo / "src" / "auth.py"
    claude = run_claude(world, [read(auth), edit("src/auth.py")], path=b_path)
    if auth.read_text() != AUTH or HOLDER not in (claude.script.last_result() or ""):
        problems.append(f"Claude Code did not refuse src/auth.py\n{claude}")
    auth.write_text(AUTH)
    gemini = run_gemini(world, [GEMINI_REFUSALS["write_file"]], path=b_path)
    if auth.read_text() != AUTH or HOLDER not in (gemini.script.last_result() or ""):
        problems.append(f"Gemini CLI did not refuse src/auth.py\n{gemini}")
    free = run_gemini(
        world, [("write_file", {"file_path": "free.txt", "content": "mine\n"})], path=b_path
    )
    if world.read("free.txt") != "mine\n":
        problems.append(f"Gemini CLI's free write_file did not pass\n{free}")
    assert not problems, "\n\n".join(problems)
