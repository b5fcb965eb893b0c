"""Every harness adapter, through the real hook process: its payloads (as the
pinned version ships them), its answers read as that harness reads them, its
install over the user's own content, and `git lac doctor`'s live probe of it.

Each harness's reading of an answer is written here from its documentation
and shipped code (the adapter module cites the same sources), not taken from
the adapter, so an adapter that answers in a form its harness ignores fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from .conftest import Result, git, lac_process

Lac = Callable[..., Result]
BIN = Path(sys.executable).parent  # this venv's bin: its git-lac
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
HELD = "src/auth.py"
REASON = "erin holds src/auth.py on task #1; git lac wait src/auth.py"
Payload = dict[str, Any]


def hold(lac: Lac, repo: Path) -> None:
    """erin holds src/auth.py on task #1; the test's agent (alice) holds nothing."""
    (repo / "src").mkdir()
    (repo / "src" / "auth.py").write_text("def login():\n    return False\n")
    (repo / "src" / "util.py").write_text("x = 1\n")
    assert lac("task", "add", "auth", "--write", HELD).code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "erin"}).code == 0


def hook(repo: Path, harness: str, data: Payload, cwd: Path | None = None) -> Result:
    """`git lac guard edit --harness NAME`, a real process, the payload on stdin."""
    env = {**os.environ, "LAC_AGENT": "alice", "LAC_EDIT_HELPER": "off"}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    proc = subprocess.run(
        ["git-lac", "guard", "edit", "--harness", harness],
        cwd=cwd or repo,
        input=json.dumps(data),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


# --- how each harness reads an answer ----------------------------------------------


def exit_2_reads(result: Result) -> str | None:
    """Codex, Windsurf, Kiro CLI, Qwen Code, Goose: exit 2 blocks with stderr
    as the reason (an empty stderr is no block in Codex); exit 0 lets it
    through; any other exit lets it through too (fails open)."""
    if result.code == 2 and result.err.strip():
        return result.err.strip().splitlines()[0]
    return None


class Case(NamedTuple):
    """One harness: its edit payloads, its shell payload, its reading of an answer."""

    edits: Callable[[Path, str], list[tuple[str, Payload]]]  # (tool, payload) for a path
    shell: Callable[[Path, str], Payload]  # a shell tool's payload, run in the work tree
    reads: Callable[[Result], str | None]  # the refusal's reason, or None: let through
    allow_out: str  # stdout when a call is let through


# Codex CLI 0.171.0: the payload as its binary's schema `pre-tool-use.command.input`
# gives it, and as seen running it against a stand-in model (`cwd` the call's workdir).
def codex_base(repo: Path) -> Payload:
    return {
        "session_id": "s",
        "turn_id": "t",
        "transcript_path": None,
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "model": "gpt-5.5",
        "permission_mode": "workspace-write",
        "tool_use_id": "call_1",
    }


def codex_patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def codex_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    base = codex_base(repo)
    forms = {
        "update": codex_patch(
            f"*** Update File: {path}", "@@", "-    return False", "+    return True"
        ),
        "add": codex_patch(f"*** Add File: {path}", "+x = 2"),
        "delete": codex_patch(f"*** Delete File: {path}"),
        "move from": codex_patch(f"*** Update File: {path}", "*** Move to: src/moved.py"),
        "move to": codex_patch("*** Update File: src/util.py", f"*** Move to: {path}"),
        "two files": codex_patch("*** Add File: docs/new.md", "+hi", f"  *** Update File: {path}"),
    }
    return [
        (f"apply_patch {form}", {**base, "tool_name": "apply_patch", "tool_input": {"command": p}})
        for form, p in forms.items()
    ]


def codex_shell(repo: Path, command: str) -> Payload:
    return {**codex_base(repo), "tool_name": "Bash", "tool_input": {"command": command}}


# Qwen Code 0.24.4: createBaseInput and firePreToolUseEvent in its bundle.
def qwen_base(repo: Path) -> Payload:
    return {
        "session_id": "s",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "timestamp": "2026-12-07T00:00:00.000Z",
        "permission_mode": "default",
        "tool_use_id": "call_1",
    }


def qwen_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    base = qwen_base(repo)
    return [
        ("write_file", {**base, "tool_name": "write_file",
                        "tool_input": {"file_path": path, "content": "x"}}),
        ("edit", {**base, "tool_name": "edit",
                  "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}}),
        ("notebook_edit", {**base, "tool_name": "notebook_edit",
                           "tool_input": {"notebook_path": path, "new_source": "x"}}),
    ]  # fmt: skip


def qwen_shell(repo: Path, command: str) -> Payload:
    return {**qwen_base(repo), "tool_name": "run_shell_command",
            "tool_input": {"command": command, "is_background": False}}  # fmt: skip


# Copilot CLI 1.0.102 (seen running it; docs.github.com hooks-configuration):
# camelCase, toolArgs a JSON string as documented (an object in 1.0.102, tested below).
def copilot_camel(repo: Path, tool: str, args: Payload) -> Payload:
    return {"timestamp": 1704614600000, "cwd": str(repo), "toolName": tool,
            "toolArgs": json.dumps(args)}  # fmt: skip


def copilot_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    vscode = {
        "timestamp": "2026-12-07T00:00:00.000Z",
        "hookEventName": "PreToolUse",
        "sessionId": "s",
        "transcript_path": "/tmp/t.json",
        "cwd": str(repo),
        "tool_name": "editFiles",
        "tool_input": {"files": [path]},
        "tool_use_id": "tool-123",
    }
    return [
        ("edit", copilot_camel(repo, "edit", {"path": path, "old_str": "a", "new_str": "b"})),
        ("create", copilot_camel(repo, "create", {"path": path, "file_text": "x"})),
        ("VS Code editFiles", vscode),
        ("VS Code editFiles, two", {**vscode, "tool_input": {"files": ["README", path]}}),
        ("PreToolUse Edit", {"hook_event_name": "PreToolUse", "session_id": "s",
                             "timestamp": "2026-12-07T00:00:00Z", "cwd": str(repo),
                             "tool_name": "Edit", "tool_input": {"path": path, "old_str": "a"}}),
    ]  # fmt: skip


def copilot_shell(repo: Path, command: str) -> Payload:
    return copilot_camel(repo, "bash", {"command": command, "description": "d"})


def copilot_reads(result: Result) -> str | None:
    """Copilot CLI: exit 0, permissionDecision deny at the top of stdout's JSON;
    VS Code: the same inside hookSpecificOutput."""
    if result.code != 0 or not result.out.strip():
        return None
    said = json.loads(result.out)
    for where in (said, said.get("hookSpecificOutput") or {}):
        if where.get("permissionDecision") == "deny":
            return str(where["permissionDecisionReason"])
    return None


# Cursor (cursor.com/docs/agent/hooks): preToolUse and beforeShellExecution.
def cursor_base(repo: Path) -> Payload:
    return {"conversation_id": "c", "generation_id": "g", "model": "m",
            "cursor_version": "2.0.77", "workspace_roots": [str(repo)]}  # fmt: skip


def cursor_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    base = {**cursor_base(repo), "hook_event_name": "preToolUse"}
    return [
        ("Write", {**base, "tool_name": "Write",
                   "tool_input": {"file_path": path, "contents": "x"}}),
        ("StrReplace", {**base, "tool_name": "StrReplace",
                        "tool_input": {"path": path, "old_string": "a", "new_string": "b"}}),
        ("Delete", {**base, "tool_name": "Delete", "tool_input": {"path": path}}),
    ]  # fmt: skip


def cursor_shell(repo: Path, command: str) -> Payload:
    return {**cursor_base(repo), "hook_event_name": "beforeShellExecution",
            "command": command, "cwd": str(repo)}  # fmt: skip


def cursor_reads(result: Result) -> str | None:
    """Cursor: permission deny refuses (agent_message the agent's reason);
    under failClosed, a failed hook (non-zero, or no JSON) refuses too."""
    if result.code != 0:
        return f"failed: exit {result.code}"
    said = json.loads(result.out)
    return str(said["agent_message"]) if said.get("permission") == "deny" else None


# Windsurf (docs.windsurf.com/windsurf/cascade/hooks): agent_action_name and tool_info.
def windsurf_base() -> Payload:
    return {"trajectory_id": "t", "execution_id": "e", "timestamp": "2026-12-07T00:00:00Z"}


def windsurf_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    info = {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}
    return [("pre_write_code", {**windsurf_base(), "agent_action_name": "pre_write_code",
                                "tool_info": info})]  # fmt: skip


def windsurf_shell(repo: Path, command: str) -> Payload:
    return {**windsurf_base(), "agent_action_name": "pre_run_command",
            "tool_info": {"command_line": command, "cwd": str(repo)}}  # fmt: skip


# Kiro CLI (kiro.dev/docs/cli/hooks; aws/amazon-q-developer-cli docs/hooks.md).
def kiro_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    base = {"hook_event_name": "preToolUse", "cwd": str(repo)}
    return [
        (f"fs_write {command}", {**base, "tool_name": "fs_write",
                                 "tool_input": {"command": command, "path": path, **extra}})
        for command, extra in (("create", {"file_text": "x"}),
                               ("str_replace", {"old_str": "a", "new_str": "b"}),
                               ("append", {"new_str": "c"}))
    ]  # fmt: skip


def kiro_shell(repo: Path, command: str) -> Payload:
    return {"hook_event_name": "preToolUse", "cwd": str(repo), "tool_name": "execute_bash",
            "tool_input": {"command": command, "summary": "s"}}  # fmt: skip


# Goose (block/goose crates/goose/src/hooks/types.rs HookInvocation).
def goose_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    base = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(repo),
            "tool_name": "developer__text_editor", "manual_compact": False}  # fmt: skip
    return [
        (f"text_editor {command}", {**base, "tool_input": {"command": command, "path": path, **x}})
        for command, x in (("write", {"file_text": "x"}),
                           ("str_replace", {"old_str": "a", "new_str": "b"}),
                           ("insert", {"insert_line": 1, "new_str": "c"}))
    ]  # fmt: skip


def goose_shell(repo: Path, command: str) -> Payload:
    return {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(repo),
            "tool_name": "developer__shell", "tool_input": {"command": command}}  # fmt: skip


# Cline CLI 3.0.65 (the payload seen running it) and the extension's tools.
def cline_payload(repo: Path, tool: str, args: Payload) -> Payload:
    return {
        "clineVersion": "", "timestamp": "2026-12-07T00:00:00Z", "taskId": "conv_1",
        "workspaceRoots": [str(repo)], "userId": "unknown", "hookName": "tool_call",
        "tool_call": {"id": "call_1", "name": tool, "input": args},
        "preToolUse": {"toolName": tool, "parameters": {
            k: v if isinstance(v, str) else json.dumps(v) for k, v in args.items()}},
    }  # fmt: skip


def cline_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    extension = cline_payload(repo, "write_to_file", {"path": path, "content": "x"})
    del extension["tool_call"]  # the extension sends preToolUse alone
    return [
        ("editor", cline_payload(repo, "editor", {"path": path, "new_text": "x"})),
        ("extension write_to_file", extension),
    ]


def cline_shell(repo: Path, command: str) -> Payload:
    return cline_payload(repo, "run_commands", {"commands": ["ls", command]})


def cline_reads(result: Result) -> str | None:
    """Cline: stdout's JSON, cancel true refuses; the exit code is ignored."""
    said = json.loads(result.out) if result.out.strip() else {}
    return str(said["errorMessage"]) if said.get("cancel") is True else None


# OpenCode 1.18.33: what our plugin sends git-lac, tool.execute.before's input and output.args.
def opencode_call(repo: Path, tool: str, args: Payload) -> Payload:
    return {"tool": tool, "sessionID": "ses_1", "callID": "call_1", "args": args, "cwd": str(repo)}


def opencode_edits(repo: Path, path: str) -> list[tuple[str, Payload]]:
    patches = {
        "update": codex_patch(f"*** Update File: {path}", "@@", "-a", "+b"),
        "delete": codex_patch(f"*** Delete File: {path}"),
        "move from": codex_patch(f"*** Update File: {path}", "*** Move to: src/moved.py"),
    }
    return [
        ("write", opencode_call(repo, "write", {"filePath": path, "content": "x"})),
        ("edit", opencode_call(repo, "edit", {"filePath": path, "oldString": "a",
                                              "newString": "b", "replaceAll": False})),
        *((f"apply_patch {form}", opencode_call(repo, "apply_patch", {"patchText": patch}))
          for form, patch in patches.items()),
    ]  # fmt: skip


def opencode_shell(repo: Path, command: str) -> Payload:
    return opencode_call(repo, "bash", {"command": command, "description": "d"})


def opencode_reads(result: Result) -> str | None:
    """Our plugin: a non-zero exit or output that is not JSON throws; a deny
    throws its reason; anything else returns (the tool runs)."""
    if result.code != 0:
        return f"throws: exit {result.code}"
    said = json.loads(result.out)
    return str(said["reason"]) if said.get("decision") == "deny" else None


CASES: dict[str, Case] = {
    "codex": Case(codex_edits, codex_shell, exit_2_reads, ""),
    "qwen": Case(qwen_edits, qwen_shell, exit_2_reads, ""),
    "copilot": Case(copilot_edits, copilot_shell, copilot_reads, ""),
    "cursor": Case(cursor_edits, cursor_shell, cursor_reads, "{}"),
    "windsurf": Case(windsurf_edits, windsurf_shell, exit_2_reads, ""),
    "kiro": Case(kiro_edits, kiro_shell, exit_2_reads, ""),
    "goose": Case(goose_edits, goose_shell, exit_2_reads, ""),
    "cline": Case(cline_edits, cline_shell, cline_reads, '{"cancel": false}'),
    "opencode": Case(opencode_edits, opencode_shell, opencode_reads, "{}"),
}


# --- payloads --------------------------------------------------------------------


@pytest.mark.parametrize("harness", sorted(CASES))
def test_each_edit_tool_refuses_a_held_path_naming_its_holder(
    lac: Lac, repo: Path, harness: str
) -> None:
    hold(lac, repo)
    case = CASES[harness]
    for path in (HELD, str(repo / HELD)):  # relative to the payload's cwd, and absolute
        for tool, data in case.edits(repo, path):
            said = hook(repo, harness, data)
            assert case.reads(said) == REASON, (tool, path, said)
            # One line for people: the reason itself where stderr is what the
            # harness hands the agent (exit 2), else after "refused: ".
            expected = REASON if said.code == 2 else f"refused: {REASON}"
            assert said.err.splitlines() == [expected], (tool, said)
            assert said.out == "" if said.code == 2 else REASON in said.out, (tool, said)


@pytest.mark.parametrize("harness", sorted(CASES))
def test_a_free_path_and_a_new_file_go_through_in_the_harness_form(
    lac: Lac, repo: Path, harness: str
) -> None:
    hold(lac, repo)
    case = CASES[harness]
    for path in ("src/util.py", str(repo / "src/util.py"), "src/new_file.py", "new/dir/x.py"):
        assert not path.startswith("new") or not (repo / path).exists()
        for tool, data in case.edits(repo, path):
            if "move" in tool or "two files" in tool:
                continue  # these name the held path on their other side
            said = hook(repo, harness, data)
            assert (said.code, said.out.strip(), said.err) == (0, case.allow_out, ""), (tool, said)
            assert case.reads(said) is None


@pytest.mark.parametrize("harness", sorted(CASES))
def test_the_shell_tool_sed_i_of_a_held_file_is_refused_an_append_to_a_free_one_is_not(
    lac: Lac, repo: Path, harness: str
) -> None:
    hold(lac, repo)
    case = CASES[harness]
    said = hook(repo, harness, case.shell(repo, f"sed -i 's/False/True/' {HELD}"))
    assert case.reads(said) == REASON, said
    said = hook(repo, harness, case.shell(repo, f"sed -i 's/False/True/' {repo / HELD}"))
    assert case.reads(said) == REASON, said
    said = hook(repo, harness, case.shell(repo, "echo note >> notes.txt"))
    assert (said.code, said.out.strip(), said.err) == (0, case.allow_out, ""), said
    said = hook(repo, harness, case.shell(repo, "ls src"))
    assert (said.code, said.out.strip(), said.err) == (0, case.allow_out, ""), said


def test_codex_runs_the_shell_in_the_calls_workdir(lac: Lac, repo: Path) -> None:
    """Codex 0.171.0 sends a call's ``workdir`` as the payload's cwd (seen
    running it: ``"workdir": "src"`` gave ``"cwd": "<project>/src"``)."""
    hold(lac, repo)
    data = {**codex_shell(repo, "sed -i 's/False/True/' auth.py"), "cwd": str(repo / "src")}
    said = hook(repo, "codex", data, cwd=repo / "src")
    assert exit_2_reads(said) == "erin holds src/auth.py on task #1; git lac wait auth.py"
    # apply_patch run through the shell: its paths count too.
    patch = codex_patch(f"*** Delete File: {HELD}")
    said = hook(repo, "codex", codex_shell(repo, f"apply_patch <<'EOF'\n{patch}EOF\n"))
    assert exit_2_reads(said) == REASON, said


def test_copilot_answers_each_payload_form_in_its_own_form(lac: Lac, repo: Path) -> None:
    hold(lac, repo)
    camel = hook(repo, "copilot", copilot_camel(repo, "edit", {"path": HELD}))
    assert json.loads(camel.out) == {
        "permissionDecision": "deny",
        "permissionDecisionReason": REASON,
    }
    vscode = dict(copilot_edits(repo, HELD))["VS Code editFiles"]
    said = json.loads(hook(repo, "vscode", vscode).out)
    assert said == {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                    "permissionDecision": "deny", "permissionDecisionReason": REASON}}  # fmt: skip
    claude_form = {"hook_event_name": "PreToolUse", "cwd": str(repo), "tool_name": "create",
                   "tool_input": {"path": HELD, "file_text": ""}}  # fmt: skip
    said = json.loads(hook(repo, "copilot", claude_form).out)
    assert said["hookSpecificOutput"]["permissionDecisionReason"] == REASON
    # toolArgs as an object (some releases) is read the same.
    data = {**copilot_camel(repo, "create", {}), "toolArgs": {"path": HELD}}
    assert copilot_reads(hook(repo, "copilot", data)) == REASON


def test_goose_reads_nothing_into_a_view(lac: Lac, repo: Path) -> None:
    hold(lac, repo)
    data = goose_edits(repo, HELD)[0][1]
    data["tool_input"] = {"command": "view", "path": HELD}
    said = hook(repo, "goose", data)
    assert (said.code, said.out, said.err) == (0, "", "")


def test_qwen_runs_the_shell_in_its_directory_from_the_project(lac: Lac, repo: Path) -> None:
    """Qwen Code 0.24.4 resolves run_shell_command's ``directory`` from the
    project's directory (buildPermissionCheckContext)."""
    hold(lac, repo)
    data = qwen_shell(repo, "sed -i 's/False/True/' auth.py")
    data["tool_input"]["directory"] = "src"
    said = hook(repo, "qwen", data)
    assert exit_2_reads(said) == "erin holds src/auth.py on task #1; git lac wait src/auth.py"


@pytest.mark.parametrize("harness", sorted(CASES))
def test_a_malformed_payload_is_refused_in_the_block_form(
    lac: Lac, repo: Path, harness: str
) -> None:
    case = CASES[harness]
    for raw in ("{not json", "[1]", json.dumps({"hook_event_name": 3})):
        env = {**os.environ, "LAC_AGENT": "alice", "PATH": f"{BIN}:{os.environ['PATH']}"}
        proc = subprocess.run(
            ["git-lac", "guard", "edit", "--harness", harness],
            cwd=repo,
            input=raw,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        said = Result(proc.returncode, proc.stdout, proc.stderr)
        reason = case.reads(said)
        assert reason is not None and "malformed hook payload" in reason, (raw, said)
        assert "Traceback" not in said.err and len(said.err.splitlines()) == 1, said


# --- installing -------------------------------------------------------------------


def is_ours(value: Any) -> bool:
    return isinstance(value, str) and "git-lac guard edit --harness " in value


def our_commands(value: Any) -> list[str]:
    """Every command of ours in a JSON document (``command``, or Copilot's ``bash``)."""
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in ("command", "bash") and is_ours(v)]
        return found + [c for v in value.values() for c in our_commands(v)]
    if isinstance(value, list):
        return [c for v in value for c in our_commands(v)]
    return []


def strip_ours(value: Any) -> Any:
    """The document without our entries (and without a group they leave empty)."""
    if isinstance(value, dict):  # an event list holding only ours goes too
        stripped = {k: strip_ours(v) for k, v in value.items()}
        return {k: v for k, v in stripped.items() if v != [] or value[k] == []}
    if isinstance(value, list):
        kept = []
        for item in value:
            if isinstance(item, dict) and any(is_ours(item.get(k)) for k in ("command", "bash")):
                continue
            stripped = strip_ours(item)
            if isinstance(item, dict) and item.get("hooks") and not stripped.get("hooks"):
                continue  # a group of ours alone
            kept.append(stripped)
        return kept
    return value


def replace_command(value: Any, new: str) -> Any:
    if isinstance(value, dict):
        return {
            k: new if k in ("command", "bash") and is_ours(v) else replace_command(v, new)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [replace_command(v, new) for v in value]
    return value


class Install(NamedTuple):
    """Where a harness keeps its hooks; a user's own file there; what fail-closed is."""

    file: str
    theirs: str
    event: Callable[[Any], list[Any]]  # our event's list, in the parsed file
    fail_closed: Callable[[Any], bool] = lambda data: True
    entries: int = 1  # how many entries of ours (Cursor: one per event)


INSTALLS: dict[str, Install] = {
    "codex": Install(
        ".codex/hooks.json",
        """{
  "hooks": {
    "PreToolUse": [
      {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "./audit.sh", "timeout": 5}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]
  }
}
""",
        lambda data: data["hooks"]["PreToolUse"],
    ),
    "copilot": Install(
        ".github/hooks/git-lacunari.json",
        """{
  "version": 1,
  "hooks": {
    "preToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 5}],
    "sessionStart": [{"type": "command", "bash": "echo hi"}]
  }
}
""",
        lambda data: data["hooks"]["preToolUse"],
    ),
    "cursor": Install(
        ".cursor/hooks.json",
        """{
  "version": 1,
  "hooks": {
    "beforeShellExecution": [{"command": "./audit.sh"}],
    "afterFileEdit": [{"command": "npx prettier --write"}]
  }
}
""",
        lambda data: data["hooks"]["preToolUse"] + data["hooks"]["beforeShellExecution"],
        lambda entry: entry.get("failClosed") is True,
        2,
    ),
    "windsurf": Install(
        ".windsurf/hooks.json",
        """{
  "hooks": {
    "pre_run_command": [{"command": "python3 audit.py", "show_output": true}],
    "post_write_code": [{"command": "bash format.sh", "show_output": false}]
  }
}
""",
        lambda data: data["hooks"]["pre_write_code"] + data["hooks"]["pre_run_command"],
        entries=2,
    ),
    "kiro": Install(
        ".kiro/agents/git-lacunari.json",
        """{
  "name": "git-lacunari",
  "description": "mine",
  "tools": ["fs_read", "fs_write", "execute_bash"],
  "allowedTools": ["fs_read"],
  "hooks": {
    "agentSpawn": [{"command": "git status"}],
    "preToolUse": [{"matcher": "execute_bash", "command": "./audit.sh"}]
  }
}
""",
        lambda data: data["hooks"]["preToolUse"],
        lambda entry: entry.get("cache_ttl_seconds") == 0,
        4,
    ),
    "goose": Install(
        ".agents/plugins/git-lacunari/hooks/hooks.json",
        """{
  "hooks": {
    "PreToolUse": [{"matcher": "developer__shell",
                    "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]
  }
}
""",
        lambda data: [h for g in data["hooks"]["PreToolUse"] for h in g["hooks"]],
        lambda entry: entry.get("on_failure") == "block",
        2,
    ),
    "qwen": Install(
        ".qwen/settings.json",
        """{
  "model": {"name": "qwen3-coder-plus"},
  "mcpServers": {"docs": {"command": "docs-mcp"}},
  "hooks": {
    "PreToolUse": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./audit.sh"}]}
    ]
  }
}
""",
        lambda data: data["hooks"]["PreToolUse"],
    ),
}


def machine_paths(repo: Path) -> list[str]:
    return [str(BIN.parent), str(repo), str(Path.home()), sys.prefix, sys.executable]


@pytest.mark.parametrize("harness", sorted(INSTALLS))
def test_install_keeps_theirs_sets_fail_closed_twice_changes_nothing_uninstall_restores(
    repo: Path, harness: str
) -> None:
    spec = INSTALLS[harness]
    path = repo / spec.file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(spec.theirs)
    put = lac_process(repo, "hooks", "install", "--agent", harness, "--json")
    assert put.code == 0, put.err
    assert put.json["agents"] == [
        {"harness": harness, "path": str(path), "action": "installed", "scope": "project"}
    ]
    text = path.read_text()
    after = json.loads(text)
    commands = our_commands(after)
    assert len(commands) == spec.entries and len(set(commands)) == 1, commands
    command = commands[0]
    assert f"git-lac guard edit --harness {harness};" in command
    assert command.startswith("s=127; command -v git-lac ")  # from PATH
    assert strip_ours(after) == strip_ours(json.loads(spec.theirs))  # theirs kept, in order
    ours = [item for item in spec.event(after) if our_commands(item)]
    assert len(ours) == spec.entries and all(spec.fail_closed(o) for o in ours), ours
    for where in machine_paths(repo):
        assert where not in text, where
    once = path.read_bytes()
    again = lac_process(repo, "hooks", "install", "--agent", harness, "--json")
    assert again.json["agents"][0]["action"] == "unchanged", again
    assert path.read_bytes() == once
    gone = lac_process(repo, "hooks", "uninstall", "--agent", harness, "--json")
    assert gone.json["agents"][0]["action"] == "removed", gone
    assert path.read_text() == spec.theirs  # byte for byte
    assert lac_process(repo, "hooks", "uninstall", "--agent", harness).code == 0


@pytest.mark.parametrize("harness", sorted(INSTALLS))
def test_a_file_install_creates_goes_with_uninstall(repo: Path, harness: str) -> None:
    spec = INSTALLS[harness]
    path = repo / spec.file
    assert lac_process(repo, "hooks", "install", "--agent", harness).code == 0, harness
    data = json.loads(path.read_text())
    assert len(our_commands(data)) == spec.entries
    assert lac_process(repo, "hooks", "install", "--agent", harness, "--uninstall").code == 0
    assert not path.exists()
    top = spec.file.split("/")[0]
    assert not (repo / top).exists(), f"{top} left behind"
    assert git(repo, "status", "--porcelain") == ""


# --- doctor -----------------------------------------------------------------------


def doctor(repo: Path) -> tuple[int, dict[str, Any]]:
    said = lac_process(repo, "doctor", "--json", env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert said.code in (0, 1), said
    return said.code, {c["check"]: c for c in said.json["checks"]}


def trust_codex(repo: Path) -> None:
    """What trusting the project and its hook in Codex 0.171.0 writes to
    ~/.codex/config.toml (seen running it: the hash equals `codex app-server`'s
    hooks/list currentHash): sha256 of the hook's canonical JSON, keyed by
    FILE:pre_tool_use:GROUP:HANDLER."""
    import hashlib

    path = repo / ".codex/hooks.json"
    lines = [f'[projects."{repo}"]', 'trust_level = "trusted"']
    for g, group in enumerate(json.loads(path.read_text())["hooks"]["PreToolUse"]):
        for h, hook in enumerate(group["hooks"]):
            canonical = {"event_name": "pre_tool_use", "matcher": group["matcher"],
                         "hooks": [{"async": False, "timeout": 600, **hook}]}  # fmt: skip
            text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
            digest = hashlib.sha256(text.encode()).hexdigest()
            lines += [f'[hooks.state."{path}:pre_tool_use:{g}:{h}"]',
                      f'trusted_hash = "sha256:{digest}"']  # fmt: skip
    (Path.home() / ".codex").mkdir(exist_ok=True)
    (Path.home() / ".codex/config.toml").write_text("\n".join(lines) + "\n")


def test_doctor_warns_while_codex_has_not_trusted_the_project_or_its_hook(
    lac: Lac, repo: Path
) -> None:
    assert lac_process(repo, "hooks", "install", "--agent", "codex").code == 0
    check = doctor(repo)[1]["agent codex"]
    assert check["verdict"] == "warn" and "does not trust" in check["says"], check
    trust_codex(repo)
    assert doctor(repo)[1]["agent codex"]["verdict"] == "ok"
    config = Path.home() / ".codex/config.toml"
    config.write_text(config.read_text().replace("sha256:", "sha256:0"))  # another hook's hash
    check = doctor(repo)[1]["agent codex"]
    assert check["verdict"] == "warn" and "has not trusted the hook" in check["says"], check


def check_name(harness: str) -> str:
    return {"copilot": "agent copilot (VS Code)"}.get(harness, f"agent {harness}")


def test_doctor_probes_every_installed_harness_and_fails_a_broken_one_by_name(
    lac: Lac, repo: Path
) -> None:
    assert lac_process(repo, "hooks", "install").code == 0
    every = [*INSTALLS, "cline", "opencode", "claude-code", "gemini"]
    for harness in every:
        assert lac_process(repo, "hooks", "install", "--agent", harness).code == 0, harness
    trust_codex(repo)
    code, checks = doctor(repo)
    for harness in every:
        assert checks[check_name(harness)]["verdict"] == "ok", checks.get(check_name(harness))
    assert code == 0, {k: v for k, v in checks.items() if v["verdict"] == "fail"}
    for harness, spec in INSTALLS.items():
        path = repo / spec.file
        good = path.read_text()
        for command, said in (
            (f"/gone/bin/git-lac guard edit --harness {harness}", "exit 127"),
            (f"git-lac guard edit --harness generic # git-lac guard edit --harness {harness}",
             "exit 1"),
        ):  # fmt: skip
            path.write_text(json.dumps(replace_command(json.loads(good), command)))
            code, checks = doctor(repo)
            check = checks[check_name(harness)]
            assert code == 1 and check["verdict"] == "fail", (harness, check)
            assert said in check["says"] and str(path) in check["says"], (harness, check)
            others = [c for n, c in checks.items() if n.startswith("agent ") and c is not check]
            assert all(c["verdict"] == "ok" for c in others), others
        path.write_text(good)
    assert doctor(repo)[0] == 0


# --- Cline: a hook file of ours, and the user's own kept beside it --------------------


def run_cline_hook(repo: Path, data: Payload, path: str | None = None) -> Result:
    """The hook as Cline 3.0.65 runs a ``#!/bin/sh`` file: ``sh FILE``, cwd the workspace."""
    env = {**os.environ, "LAC_AGENT": "alice", "LAC_EDIT_HELPER": "off"}
    env["PATH"] = path or f"{BIN}:{SYSTEM_PATH}"
    proc = subprocess.run(["sh", str(repo / ".clinerules/hooks/PreToolUse")], cwd=repo,
                          input=json.dumps(data), env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    return Result(proc.returncode, proc.stdout, proc.stderr)


THEIRS_CLINE = """#!/bin/sh
# the user's own hook: refuse writing .env, log every call
input=$(cat)
echo "$input" >> "$(dirname "$0")/calls.log"
case $input in *'.env'*) echo '{"cancel": true, "errorMessage": "no .env edits"}'; exit 0;; esac
echo '{"cancel": false}'
"""


def test_cline_keeps_the_users_own_hook_runs_it_first_and_gives_it_back(
    lac: Lac, repo: Path
) -> None:
    hold(lac, repo)
    hooks = repo / ".clinerules/hooks"
    hooks.mkdir(parents=True)
    theirs = hooks / "PreToolUse"
    theirs.write_text(THEIRS_CLINE)
    theirs.chmod(0o750)
    put = lac_process(repo, "hooks", "install", "--agent", "cline", "--json")
    assert put.code == 0 and put.json["agents"][0]["action"] == "installed", put
    assert (hooks / "PreToolUse.legacy").read_text() == THEIRS_CLINE
    text = theirs.read_text()
    assert text.startswith("#!/bin/sh\n") and os.access(theirs, os.X_OK)
    assert "git-lac guard edit --harness cline;" in text
    for where in machine_paths(repo):
        assert where not in text, where
    # Theirs first: its own refusal stands; then ours refuses a held path; a free one goes.
    said = run_cline_hook(repo, cline_payload(repo, "editor", {"path": ".env"}))
    assert cline_reads(said) == "no .env edits"
    said = run_cline_hook(repo, cline_payload(repo, "editor", {"path": HELD}))
    assert cline_reads(said) == REASON, said
    said = run_cline_hook(repo, cline_payload(repo, "editor", {"path": "src/util.py"}))
    assert (said.out.strip(), said.err) == ('{"cancel": false}', ""), said
    assert len((hooks / "calls.log").read_text().splitlines()) == 3  # it saw every call
    # Without git-lac on PATH: a cancel saying how to get out, never a silent pass.
    said = run_cline_hook(repo, cline_payload(repo, "editor", {"path": "src/util.py"}), SYSTEM_PATH)
    reason = cline_reads(said)
    assert reason is not None and "git-lac is not on PATH" in reason, said
    (hooks / "calls.log").unlink()
    once = theirs.read_bytes()
    again = lac_process(repo, "hooks", "install", "--agent", "cline", "--json")
    assert again.json["agents"][0]["action"] == "unchanged" and theirs.read_bytes() == once
    gone = lac_process(repo, "hooks", "uninstall", "--agent", "cline", "--json")
    assert gone.json["agents"][0]["action"] == "removed", gone
    assert theirs.read_text() == THEIRS_CLINE and (theirs.stat().st_mode & 0o777) == 0o750
    assert sorted(p.name for p in hooks.iterdir()) == ["PreToolUse"]


def test_cline_install_without_a_hook_of_theirs_goes_entirely_and_refuses_a_clash(
    repo: Path,
) -> None:
    assert lac_process(repo, "hooks", "install", "--agent", "cline").code == 0
    assert (repo / ".clinerules/hooks/PreToolUse").is_file()
    assert lac_process(repo, "hooks", "uninstall", "--agent", "cline").code == 0
    assert not (repo / ".clinerules").exists()
    hooks = repo / ".clinerules/hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text(THEIRS_CLINE)
    (hooks / "PreToolUse.legacy").write_text("#!/bin/sh\n")
    said = lac_process(repo, "hooks", "install", "--agent", "cline")
    assert said.code == 2 and "nothing was changed" in said.err and said.err.count("\n") == 1
    assert (hooks / "PreToolUse").read_text() == THEIRS_CLINE


def test_doctor_probes_cline_as_it_runs_the_file(lac: Lac, repo: Path) -> None:
    assert lac_process(repo, "hooks", "install").code == 0
    assert lac_process(repo, "hooks", "install", "--agent", "cline").code == 0
    code, checks = doctor(repo)
    assert code == 0 and checks["agent cline"]["verdict"] == "ok", checks["agent cline"]
    path = repo / ".clinerules/hooks/PreToolUse"
    good = path.read_text()
    for broken in (
        good.replace("command -v git-lac", "command -v /gone/bin/git-lac", 1),
        good.replace("--harness cline;", "--harness generic;", 1),
    ):
        assert broken != good
        path.write_text(broken)
        code, checks = doctor(repo)
        assert code == 1 and checks["agent cline"]["verdict"] == "fail", checks["agent cline"]
        assert str(path) in checks["agent cline"]["says"]
    path.write_text(good)
    assert doctor(repo)[0] == 0


# --- OpenCode: the plugin, under Bun, called as OpenCode's loader calls it -------------


BUN_VERSION = "1.4.5"  # .ci/run installs it beside the harnesses


def bun() -> str:
    """Bun, pinned, as .ci/run installs it (or LAC_TEST_BUN, or one on PATH);
    missing, a loud skip, a failure under LAC_REQUIRE_HARNESS=1."""
    import shutil

    from .test_real_harness import HARNESS_DIR, REQUIRE

    pinned = HARNESS_DIR / f"bun-{BUN_VERSION}" / "node_modules" / ".bin" / "bun"
    for found in (os.environ.get("LAC_TEST_BUN"), str(pinned), shutil.which("bun")):
        if found and os.access(found, os.X_OK):
            return found
    reason = f"no bun: npm install --prefix {pinned.parents[2]} bun@{BUN_VERSION}, or LAC_TEST_BUN"
    if REQUIRE:
        pytest.fail(reason + " (LAC_REQUIRE_HARNESS=1 forbids skipping)")
    pytest.skip(reason)


# As opencode 1.18.33's loader: import each plugin module, call every exported
# function with the context, and await its "tool.execute.before" with
# (input {tool, sessionID, callID}, output {args}) before the tool runs.
LOADER = """
const [file, directory, tool, args] = process.argv.slice(2)
const mod = await import(file)
const results = []
for (const make of Object.values(mod)) {
  if (typeof make !== "function") continue
  const hooks = await make({ client: {}, project: {}, worktree: directory, directory, $: null })
  try {
    await hooks["tool.execute.before"]({ tool, sessionID: "ses_1", callID: "call_1" },
                                        { args: JSON.parse(args) })
    results.push({ threw: false })
  } catch (e) {
    results.push({ threw: true, message: String(e.message) })
  }
}
console.log(JSON.stringify(results))
"""


def under_bun(repo: Path, tool: str, args: Payload, path: str | None = None) -> dict[str, Any]:
    runner = repo.parent / "loader.mjs"
    runner.write_text(LOADER)
    env = {**os.environ, "LAC_AGENT": "alice", "LAC_EDIT_HELPER": "off"}
    env["PATH"] = path or f"{BIN}:{SYSTEM_PATH}"
    plugin = repo / ".opencode/plugins/git-lacunari.ts"
    argv = [bun(), str(runner), str(plugin), str(repo), tool, json.dumps(args)]
    proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)
    return dict(result)


def test_the_opencode_plugin_under_bun_throws_the_holder_and_lets_free_calls_run(
    lac: Lac, repo: Path
) -> None:
    hold(lac, repo)
    assert lac_process(repo, "hooks", "install", "--agent", "opencode").code == 0
    said = under_bun(repo, "edit", {"filePath": HELD, "oldString": "a", "newString": "b"})
    assert said == {"threw": True, "message": REASON}
    patch = codex_patch("*** Add File: docs/new.md", "+x", f"*** Delete File: {HELD}")
    assert under_bun(repo, "apply_patch", {"patchText": patch}) == {
        "threw": True,
        "message": REASON,
    }
    bash = {"command": "sed -i 's/False/True/' auth.py", "workdir": "src"}
    assert under_bun(repo, "bash", bash)["message"] == (
        "erin holds src/auth.py on task #1; git lac wait src/auth.py"
    )
    assert under_bun(repo, "write", {"filePath": str(repo / "src/new.py")}) == {"threw": False}
    assert under_bun(repo, "bash", {"command": "echo x >> notes.txt"}) == {"threw": False}
    assert under_bun(repo, "read", {"filePath": HELD}) == {"threw": False}
    # No git-lac on PATH: the plugin throws, saying how to get out.
    gone = under_bun(repo, "write", {"filePath": "src/util.py"}, SYSTEM_PATH)
    assert gone["threw"] and "git-lac is not on PATH" in gone["message"], gone


def test_opencode_install_keeps_other_plugins_and_refuses_a_file_not_ours(repo: Path) -> None:
    plugins = repo / ".opencode/plugins"
    plugins.mkdir(parents=True)
    (plugins / "mine.ts").write_text("export const Mine = async () => ({})\n")
    (repo / ".opencode/opencode.json").write_text('{"model": "x/y"}\n')
    put = lac_process(repo, "hooks", "install", "--agent", "opencode", "--json")
    assert put.code == 0 and put.json["agents"][0]["action"] == "installed", put
    ours = plugins / "git-lacunari.ts"
    text = ours.read_text()
    assert "git-lac guard edit --harness opencode;" in text
    for where in machine_paths(repo):
        assert where not in text, where
    once = ours.read_bytes()
    again = lac_process(repo, "hooks", "install", "--agent", "opencode", "--json")
    assert again.json["agents"][0]["action"] == "unchanged" and ours.read_bytes() == once
    assert lac_process(repo, "hooks", "uninstall", "--agent", "opencode").code == 0
    assert sorted(p.name for p in plugins.iterdir()) == ["mine.ts"]
    assert (repo / ".opencode/opencode.json").read_text() == '{"model": "x/y"}\n'
    (plugins / "mine.ts").unlink()
    (repo / ".opencode/opencode.json").unlink()
    assert lac_process(repo, "hooks", "install", "--agent", "opencode").code == 0
    assert lac_process(repo, "hooks", "uninstall", "--agent", "opencode").code == 0
    assert not (repo / ".opencode").exists()
    plugins.mkdir(parents=True)
    ours.write_text("export const Theirs = async () => ({})\n")
    said = lac_process(repo, "hooks", "install", "--agent", "opencode")
    assert said.code == 2 and "not git-lacunari's plugin; nothing was changed" in said.err
    assert ours.read_text() == "export const Theirs = async () => ({})\n"


def test_doctor_probes_the_opencode_plugins_command(lac: Lac, repo: Path) -> None:
    assert lac_process(repo, "hooks", "install").code == 0
    assert lac_process(repo, "hooks", "install", "--agent", "opencode").code == 0
    code, checks = doctor(repo)
    assert code == 0 and checks["agent opencode"]["verdict"] == "ok", checks["agent opencode"]
    path = repo / ".opencode/plugins/git-lacunari.ts"
    good = path.read_text()
    for broken in (
        good.replace("command -v git-lac", "command -v /gone/bin/git-lac", 1),
        good.replace("--harness opencode;", "--harness generic;", 1),
    ):
        assert broken != good
        path.write_text(broken)
        code, checks = doctor(repo)
        assert code == 1 and checks["agent opencode"]["verdict"] == "fail", checks
        assert str(path) in checks["agent opencode"]["says"]
    path.write_text(good)
    assert doctor(repo)[0] == 0


# --- harnesses that cannot refuse an edit ----------------------------------------------


@pytest.mark.parametrize(
    ("agent", "name"),
    [("aider", "Aider"), ("continue", "Continue"), ("roo-code", "Roo Code"),
     ("kiro-ide", "Kiro IDE"), ("amp", "Amp")],
)  # fmt: skip
def test_an_unguarded_harness_writes_nothing_and_says_what_covers_it(
    repo: Path, agent: str, name: str
) -> None:
    before = sorted(p.name for p in repo.iterdir())
    for argv in (["--agent", agent], ["--agent", "claude-code", "--agent", agent]):
        said = lac_process(repo, "hooks", "install", *argv)
        assert said.code == 2, said
        (line,) = said.err.splitlines()
        assert line.startswith(f"git lac: {name} has no hook git-lacunari can install: ")
        assert (
            "it cannot refuse an edit; MCP and the commit, push and server guards cover it" in line
        )
        assert (
            sorted(p.name for p in repo.iterdir()) == before
        )  # nothing written, not even Claude's
    assert git(repo, "status", "--porcelain") == ""
