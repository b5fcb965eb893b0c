"""The edit hook under more real agent harnesses, each the pinned npm package
driven headless against a loopback stand-in of its model API
(tests/harness_model.py), judged by the disk and by the tool result the
harness handed back to the model (a refusal names the holder):

- Codex CLI ``@openai/codex`` 0.171.0, ``codex exec``, against a stand-in
  OpenAI Responses API;
- Qwen Code ``@qwen-code/qwen-code`` 0.24.4, ``qwen -p``, Chat Completions;
- Copilot CLI ``@github/copilot`` 1.0.102, ``copilot -p`` offline with a
  custom provider (BYOK), Chat Completions;
- OpenCode ``opencode-ai`` 1.18.33 and Cline ``cline`` 3.0.65, Chat
  Completions, once their adapters are in this build (until then the test
  says so and skips).

The world is test_real_harness.py's: erin holds ``src/auth.py`` on task #1,
the agent under test (``agent``) holds ``free.txt`` on task #2, the hook is
installed with ``git lac hooks install --agent NAME`` and committed. The
packages are installed by ``.ci/run`` into ``$LAC_TEST_HARNESS_DIR``; missing,
these tests skip loudly, or fail under ``LAC_REQUIRE_HARNESS=1``.

What the harnesses do, seen running them (HARNESS-NOTES in the work notes
of this change, and each adapter's docstring):

Codex CLI 0.171.0 (a Rust binary; ``$CODEX_HOME/config.toml``):
- a model provider ``wire_api = "responses"`` at the stand-in; the model
  ``gpt-5.5`` is one of the bundled catalog's whose ``apply_patch`` is a
  freeform (``custom``) tool: an unknown slug is offered no apply_patch.
- two trusts: the project (``[projects."DIR"] trust_level = "trusted"``,
  else its ``.codex/`` is ignored) and each project hook (``[hooks.state.
  "FILE:pre_tool_use:G:H"] trusted_hash = "sha256:…"``, the sha256 of the
  hook's normalised identity as canonical JSON, what ``/hooks`` records;
  an untrusted hook is skipped without a word and the edit goes through).
- the shell tool ``exec_command`` reaches the hook as ``Bash``
  ``{"command"}``, the payload's ``cwd`` the call's ``workdir``; a refusal
  comes back as "Command blocked by PreToolUse hook: REASON. Command: …".

Qwen Code 0.24.4: ``security.auth.selectedType: "openai"`` with
``OPENAI_BASE_URL``; project hooks run in a trusted folder, and every folder
is trusted while folder trust is off (its default). ``write_file`` and
``edit`` take absolute paths only (a relative one is refused by the tool
before any hook), ``run_shell_command``'s ``directory`` too. An exit-2
refusal comes back as exactly the hook's stderr.

Copilot CLI 1.0.102: ``COPILOT_OFFLINE=true`` with
``COPILOT_PROVIDER_BASE_URL``; hooks of an untrusted folder are not loaded
(trust: ``~/.copilot/config.json`` ``trustedFolders``). It unpacks its
JavaScript under ``$XDG_CACHE_HOME/copilot`` on first run: pointed into the
harness directory, that is done once. A refusal comes back as "Denied by
preToolUse hook: REASON".
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from .conftest import git
from .harness_model import ModelServer, Script
from .test_real_harness import (
    AUTH,
    HARNESS_DIR,
    LAC_PATH,
    REQUIRE,
    Run,
    World,
    _run,
    assert_refused,
    harness_bin,
    harness_env,
    lac,
    lac_real,
    make_world,
    read,
    run_claude,
)

CODEX = ("@openai/codex", "0.171.0", "codex")
QWEN = ("@qwen-code/qwen-code", "0.24.4", "qwen")
COPILOT = ("@github/copilot", "1.0.102", "copilot")
OPENCODE = ("opencode-ai", "1.18.33", "opencode")
CLINE = ("cline", "3.0.65", "cline")
PACKAGES = {"codex": CODEX, "qwen": QWEN, "copilot": COPILOT, "opencode": OPENCODE, "cline": CLINE}
PROMPT = "Do the scripted step."


def adapter_here(agent: str) -> None:
    """Skip, saying why, when this build has no adapter for ``agent`` yet."""
    from git_lacunari.agents.registry import INSTALLABLE

    if agent not in INSTALLABLE:
        reason = (
            f"{agent}: the harness runs offline against the stand-in, but this build has no "
            f"`hooks install --agent {agent}` adapter"
        )
        if REQUIRE:
            pytest.fail(reason + " (LAC_REQUIRE_HARNESS=1 forbids skipping)")
        pytest.skip(reason)


def npm_world(tmp: Path, agent: str) -> World:
    """test_real_harness's world, with ``agent``'s hook installed and committed."""
    harness_bin(PACKAGES[agent])  # skip (or fail) before any setup
    adapter_here(agent)
    repo = tmp / "the repo é"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "auth.py").write_text(AUTH)
    (repo / "free.txt").write_text("free\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "initial")
    out = tmp / "out side"
    out.mkdir()
    lac(repo, "init")
    lac(repo, "task", "add", "Harden login", "--write", "src/auth.py")
    lac(repo, "task", "add", "Notes", "--write", "free.txt")
    lac(repo, "--as", "erin", "claim", "1")
    lac(repo, "--as", "agent", "claim", "2")
    lac_real(repo, "hooks", "install", f"--agent={agent}", path=LAC_PATH)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "edit hooks")
    return World(repo, out, LAC_PATH)


def assert_went_through(run: Run, file: Path, expected: str) -> None:
    assert file.is_file() and file.read_text() == expected, f"{file} was not written\n{run}"
    assert "holds" not in run.result and "blocked" not in run.result.lower(), run


# --- Codex CLI ---------------------------------------------------------------------------


def toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string is JSON's, for these


def codex_hook_trust(repo: Path) -> list[str]:
    """The ``[hooks.state]`` tables that trust each hook in the project's
    .codex/hooks.json, as Codex 0.171.0 computes the hash (its discovery's
    ``command_hook_hash``: the group with this one handler, normalised — the
    timeout defaulting to 600, ``async`` to false, absent fields dropped —
    under ``event_name``, as canonical JSON, sha256)."""
    file = repo / ".codex" / "hooks.json"
    data = json.loads(file.read_text())
    tables = []
    for g, group in enumerate(data["hooks"]["PreToolUse"]):
        for h, hook in enumerate(group["hooks"]):
            handler: dict[str, Any] = {
                "type": "command",
                "command": hook["command"],
                "timeout": max(int(hook.get("timeout", 600)), 1),
                "async": bool(hook.get("async", False)),
            }
            if hook.get("statusMessage") is not None:
                handler["statusMessage"] = hook["statusMessage"]
            identity: dict[str, Any] = {"event_name": "pre_tool_use", "hooks": [handler]}
            if group.get("matcher") is not None:
                identity["matcher"] = group["matcher"]
            canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
            digest = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
            key = f"{file}:pre_tool_use:{g}:{h}"
            tables.append(f"[hooks.state.{toml_string(key)}]\ntrusted_hash = {toml_string(digest)}")
    return tables


def run_codex(world: World, steps: list[tuple[str, dict[str, Any]]]) -> Run:
    binary = harness_bin(CODEX)
    script = Script(steps)
    home = world.out.parent / "codex-home"
    home.mkdir(exist_ok=True)
    with ModelServer(script) as model:
        config = [
            'model = "gpt-5.5"',
            'model_provider = "stand"',
            "check_for_update_on_startup = false",
            "[model_providers.stand]",
            'name = "stand"',
            f'base_url = "{model.url}/v1"',
            'wire_api = "responses"',
            'env_key = "LAC_STAND_KEY"',
            f"[projects.{toml_string(str(world.repo))}]",
            'trust_level = "trusted"',
            *codex_hook_trust(world.repo),
        ]
        (home / "config.toml").write_text("\n".join(config) + "\n")
        env = harness_env(world.path)
        env.update(CODEX_HOME=str(home), LAC_STAND_KEY="loopback", NO_COLOR="1")
        cmd = [str(binary), "exec", "-s", "workspace-write", PROMPT]
        return _run(cmd, world.repo, env, script)


def patch(*hunks: str) -> tuple[str, dict[str, Any]]:
    return ("apply_patch", {"input": "*** Begin Patch\n" + "".join(hunks) + "*** End Patch\n"})


UPDATE_AUTH = (
    "*** Update File: src/auth.py\n@@\n def login():\n-    return True\n+    return False\n"
)


def shell(cmd: str, workdir: str | None = None) -> tuple[str, dict[str, Any]]:
    return ("exec_command", {"cmd": cmd, **({"workdir": workdir} if workdir else {})})


CODEX_REFUSALS: dict[str, tuple[str, dict[str, Any]]] = {
    "patch-update": patch(UPDATE_AUTH),
    "patch-delete": patch("*** Delete File: src/auth.py\n"),
    "patch-two-files": patch("*** Add File: notes.txt\n+mine\n", UPDATE_AUTH),
    "sed": shell("sed -i s/True/False/ src/auth.py"),
    "sed-workdir": shell("sed -i s/True/False/ auth.py", workdir="src"),
}


@pytest.mark.parametrize("case", list(CODEX_REFUSALS))
def test_codex_refuses_the_held_file(tmp_path: Path, case: str) -> None:
    world = npm_world(tmp_path, "codex")
    auth = world.repo / "src" / "auth.py"
    run = run_codex(world, [CODEX_REFUSALS[case]])
    assert_refused(run, world, {auth: AUTH})
    if case == "patch-two-files":  # the patch goes whole or not at all
        assert not (world.repo / "notes.txt").exists(), run


@pytest.mark.parametrize("case", ["patch-update", "patch-add", "shell-append", "shell-workdir"])
def test_codex_lets_free_edits_through(tmp_path: Path, case: str) -> None:
    world = npm_world(tmp_path, "codex")
    step, rel, expected = {
        "patch-update": (
            patch("*** Update File: free.txt\n@@\n-free\n+mine\n"),
            "free.txt",
            "mine\n",
        ),
        "patch-add": (patch("*** Add File: src/new.py\n+x = 1\n"), "src/new.py", "x = 1\n"),
        "shell-append": (shell("echo mine >> free.txt"), "free.txt", "free\nmine\n"),
        "shell-workdir": (shell("echo mine > notes.txt", workdir="src"), "src/notes.txt", "mine\n"),
    }[case]
    run = run_codex(world, [step])
    assert_went_through(run, world.repo / rel, expected)
    assert world.read("src/auth.py") == AUTH


# --- Qwen Code ---------------------------------------------------------------------------


def run_qwen(world: World, steps: list[tuple[str, dict[str, Any]]]) -> Run:
    binary = harness_bin(QWEN)
    home = Path(harness_env(world.path)["HOME"])
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "openai"}},
        "general": {"enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    script = Script(steps)
    with ModelServer(script) as model:
        env = harness_env(world.path)
        env.update(
            OPENAI_API_KEY="loopback",
            OPENAI_BASE_URL=f"{model.url}/v1",
            OPENAI_MODEL="stand",
            QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
        )
        cmd = [str(binary), "-p", PROMPT, "--yolo", "--output-format", "json"]
        return _run(cmd, world.repo, env, script)


def qwen_read(path: Path) -> tuple[str, dict[str, Any]]:
    """Qwen Code's write_file and edit want the file read in the session first
    (after the hook: a refusal comes before it, a let-through meets it)."""
    return ("read_file", {"file_path": str(path)})


def qwen_refusals(repo: Path) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    auth = repo / "src" / "auth.py"
    return {
        "write_file": [
            qwen_read(auth),
            ("write_file", {"file_path": str(auth), "content": "pass\n"}),
        ],
        "edit": [
            qwen_read(auth),
            ("edit", {"file_path": str(auth), "old_string": "True", "new_string": "False"}),
        ],
        "sed": [("run_shell_command", {"command": "sed -i s/True/False/ src/auth.py"})],
        "sed-directory": [
            (
                "run_shell_command",
                {"command": "sed -i s/True/False/ auth.py", "directory": str(repo / "src")},
            )
        ],
    }


@pytest.mark.parametrize("case", ["write_file", "edit", "sed", "sed-directory"])
def test_qwen_refuses_the_held_file(tmp_path: Path, case: str) -> None:
    world = npm_world(tmp_path, "qwen")
    auth = world.repo / "src" / "auth.py"
    run = run_qwen(world, qwen_refusals(world.repo)[case])
    assert_refused(run, world, {auth: AUTH})


@pytest.mark.parametrize("case", ["write_file", "edit", "shell-append"])
def test_qwen_lets_free_writes_through(tmp_path: Path, case: str) -> None:
    world = npm_world(tmp_path, "qwen")
    free = world.repo / "free.txt"
    steps, expected = {
        "write_file": (
            [qwen_read(free), ("write_file", {"file_path": str(free), "content": "mine\n"})],
            "mine\n",
        ),
        "edit": (
            [
                qwen_read(free),
                ("edit", {"file_path": str(free), "old_string": "free", "new_string": "mine"}),
            ],
            "mine\n",
        ),
        "shell-append": (
            [("run_shell_command", {"command": "echo mine >> free.txt"})],
            "free\nmine\n",
        ),
    }[case]
    run = run_qwen(world, steps)
    assert_went_through(run, free, expected)
    assert world.read("src/auth.py") == AUTH


# --- Copilot CLI -------------------------------------------------------------------------


def run_copilot(world: World, steps: list[tuple[str, dict[str, Any]]]) -> Run:
    binary = harness_bin(COPILOT)
    env = harness_env(world.path)
    home = Path(env["HOME"])
    (home / ".copilot").mkdir(parents=True, exist_ok=True)
    # The folder trusted as `copilot` records it once the user says yes.
    (home / ".copilot" / "config.json").write_text(
        json.dumps({"trustedFolders": [str(world.repo)]})
    )
    script = Script(steps)
    with ModelServer(script) as model:
        env.update(
            COPILOT_OFFLINE="true",
            COPILOT_PROVIDER_BASE_URL=f"{model.url}/v1",
            COPILOT_PROVIDER_API_KEY="loopback",
            COPILOT_MODEL="stand",
            COPILOT_AUTO_UPDATE="false",
            # Its JavaScript, unpacked on first run: once, beside the package.
            XDG_CACHE_HOME=str(HARNESS_DIR / f"copilot-{COPILOT[1]}" / "cache"),
        )
        cmd = [str(binary), "-p", PROMPT, "--allow-all-tools"]
        return _run(cmd, world.repo, env, script)


def copilot_refusals(repo: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    auth = repo / "src" / "auth.py"
    return {
        "edit-absolute": ("edit", {"path": str(auth), "old_str": "True", "new_str": "False"}),
        "edit-relative": ("edit", {"path": "src/auth.py", "old_str": "True", "new_str": "False"}),
        "sed": ("bash", {"command": "sed -i s/True/False/ src/auth.py", "description": "edit"}),
        "cd-sed": (
            "bash",
            {"command": "cd src && sed -i s/True/False/ auth.py", "description": "edit"},
        ),
    }


@pytest.mark.parametrize("case", ["edit-absolute", "edit-relative", "sed", "cd-sed"])
def test_copilot_refuses_the_held_file(tmp_path: Path, case: str) -> None:
    world = npm_world(tmp_path, "copilot")
    auth = world.repo / "src" / "auth.py"
    run = run_copilot(world, [copilot_refusals(world.repo)[case]])
    assert_refused(run, world, {auth: AUTH})


@pytest.mark.parametrize("case", ["create", "bash-append"])
def test_copilot_lets_free_writes_through(tmp_path: Path, case: str) -> None:
    world = npm_world(tmp_path, "copilot")
    new = world.repo / "src" / "new.py"
    step, file, expected = {
        "create": (("create", {"path": str(new), "file_text": "x = 1\n"}), new, "x = 1\n"),
        "bash-append": (
            ("bash", {"command": "echo mine >> free.txt", "description": "append"}),
            world.repo / "free.txt",
            "free\nmine\n",
        ),
    }[case]
    run = run_copilot(world, [step])
    assert_went_through(run, file, expected)
    assert world.read("src/auth.py") == AUTH


# --- OpenCode and Cline ----------------------------------------------------------------------


def run_opencode(world: World, steps: list[tuple[str, dict[str, Any]]], model: str) -> Run:
    binary = harness_bin(OPENCODE)
    script = Script(steps)
    with ModelServer(script) as server:
        models = {m: {"name": m, "tool_call": True} for m in ("stand", "gpt-5-stand")}
        config = {
            "provider": {
                "stand": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Stand",
                    "options": {"baseURL": f"{server.url}/v1", "apiKey": "loopback"},
                    "models": models,
                }
            },
            "autoupdate": False,
            "share": "disabled",
        }
        env = harness_env(world.path)
        env.update(
            PWD=str(world.repo),  # its project is $PWD, not the process's directory
            OPENCODE_CONFIG_CONTENT=json.dumps(config),
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
        )
        cmd = [str(binary), "run", "-m", f"stand/{model}", PROMPT]
        return _run(cmd, world.repo, env, script)


def opencode_refusals(repo: Path) -> dict[str, tuple[tuple[str, dict[str, Any]], str]]:
    auth = str(repo / "src" / "auth.py")
    update = "*** Begin Patch\n" + UPDATE_AUTH + "*** End Patch"
    return {
        "write": (("write", {"filePath": auth, "content": "pass\n"}), "stand"),
        "edit": (("edit", {"filePath": auth, "oldString": "True", "newString": "False"}), "stand"),
        "apply_patch": (("apply_patch", {"patchText": update}), "gpt-5-stand"),
        "bash-workdir": (
            (
                "bash",
                {"command": "sed -i s/True/False/ auth.py", "workdir": "src", "description": "x"},
            ),
            "stand",
        ),
    }


@pytest.mark.parametrize("case", ["write", "edit", "apply_patch", "bash-workdir"])
def test_opencode_refuses_the_held_file(tmp_path: Path, case: str) -> None:
    world = npm_world(tmp_path, "opencode")
    auth = world.repo / "src" / "auth.py"
    step, model = opencode_refusals(world.repo)[case]
    run = run_opencode(world, [step], model)
    assert_refused(run, world, {auth: AUTH})


def test_opencode_lets_a_free_write_through(tmp_path: Path) -> None:
    world = npm_world(tmp_path, "opencode")
    free = world.repo / "free.txt"
    run = run_opencode(world, [("write", {"filePath": str(free), "content": "mine\n"})], "stand")
    assert_went_through(run, free, "mine\n")


def run_cline(world: World, steps: list[tuple[str, dict[str, Any]]]) -> Run:
    binary = harness_bin(CLINE)
    script = Script(steps)
    with ModelServer(script) as model:
        env = harness_env(world.path)
        env["PWD"] = str(world.repo)  # Bun's process.cwd() answers $PWD
        auth = [str(binary), "auth", "-p", "openai-compatible", "-k", "loopback", "-m", "stand"]
        _run([*auth, "-b", f"{model.url}/v1"], world.repo, env, Script([]))
        return _run([str(binary), "--json", PROMPT], world.repo, env, script)


def test_cline_stops_at_the_held_file(tmp_path: Path) -> None:
    """Cline 3.0.65's PreToolUse file hook can only cancel: the tool does not
    run, and the whole run stops (the reason is not handed to the model)."""
    world = npm_world(tmp_path, "cline")
    auth = world.repo / "src" / "auth.py"
    cmd = "sed -i s/True/False/ " + shlex.quote(str(auth))
    run = run_cline(world, [("run_commands", {"commands": [cmd]})])
    assert auth.read_text() == AUTH, run
    assert '"finishReason":"aborted"' in run.proc.stdout, run


def test_cline_lets_a_free_write_through(tmp_path: Path) -> None:
    world = npm_world(tmp_path, "cline")
    run = run_cline(world, [("run_commands", {"commands": ["echo mine >> free.txt"]})])
    assert_went_through(run, world.repo / "free.txt", "free\nmine\n")


# --- Claude Code: prime at SessionStart ------------------------------------------------------


def test_claude_code_session_start_puts_prime_before_the_agent(tmp_path: Path) -> None:
    """The installed SessionStart hook runs `git lac prime`, and Claude Code
    2.1.197 hands its words to the model with the first request."""
    world = make_world(tmp_path, None, ("claude-code",))
    run = run_claude(world, [read(world.repo / "free.txt")])
    first = json.dumps(run.script.bodies[0], ensure_ascii=False)
    for words in ("git lac claim ID", "git lac wait PATH...", "git lac land", "was NOT made"):
        assert words in first, f"{words!r} is not in the first request\n{run}"
