"""`git lac guard edit` fails closed under a harness.

Under Claude Code and Gemini CLI the hook exits 0 (its answer) or 2, never
anything else: both let a call through on any other exit (Gemini CLI 0.61.0,
``hooks/hookRunner.js``: exit 1 is "non-blocking"; Claude Code: only exit 2
blocks). A payload not of the documented shape, and any unexpected failure,
is one line on stderr and a refusal in the harness's block form (Claude
Code: exit 2; Gemini CLI: ``{"decision": "deny"}``), unless
``lac.edit.malformed = allow``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_lacunari import edit_guard
from git_lacunari.agents.protocol import Harness, MalformedPayload
from git_lacunari.agents.registry import parse_payload

from .conftest import Result, git

LAC = str(Path(sys.executable).parent / "git-lac")


def run_hook(cwd: Path, stdin: bytes, harness: str, env: dict[str, str] | None = None) -> Result:
    """The hook as a harness runs it: a real process, raw bytes on stdin."""
    full = {**os.environ, "LAC_AGENT": "alice", "LAC_EDIT_HELPER": "off", **(env or {})}
    proc = subprocess.run(
        [LAC, "guard", "edit", "--harness", harness],
        cwd=cwd,
        env=full,
        input=stdin,
        capture_output=True,
        check=False,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def refused(result: Result, harness: str) -> str:
    """The one line of a refusal in the harness's block form."""
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert "Traceback" not in result.err
    if harness == "claude-code":
        assert (result.code, result.out) == (2, ""), result
    else:
        assert result.code == 0, result
        said = json.loads(result.out)
        assert set(said) == {"decision", "reason"} and said["decision"] == "deny"
        assert lines[0] in (f"refused: {said['reason']}", said["reason"])
    return lines[0]


def payload(tool_input: dict[str, Any], cwd: Path, tool: str = "Write") -> dict[str, Any]:
    return {
        "session_id": "s",
        "transcript_path": "/tmp/t",
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }


BAD_INPUTS = {
    "bad UTF-8": b'{"tool_name": "Write", "cwd": "\xff\xfe"}',
    "a lone surrogate": json.dumps(
        {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": "/", "tool_input": {}}
    )
    .replace('"/"', '"/\\ud800"')
    .encode(),
    "NUL in a path": json.dumps(
        {"tool_name": "Write", "cwd": "/", "tool_input": {"file_path": "a\u0000b"}}
    ).encode(),
    "a path that is a number": json.dumps(
        {"tool_name": "Write", "cwd": "/", "tool_input": {"file_path": 7}}
    ).encode(),
    "deep nesting": b'{"tool_input": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "empty": b"",
    "not an object": b"[1, 2]",
}


@pytest.mark.parametrize("harness", ["claude-code", "gemini"])
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_malformed_input_is_refused_in_one_line(repo: Path, harness: str, case: str) -> None:
    tool = b'"Write"' if harness == "claude-code" else b'"write_file"'
    line = refused(run_hook(repo, BAD_INPUTS[case].replace(b'"Write"', tool), harness), harness)
    assert line.startswith("refused: malformed hook payload: "), line
    assert line.endswith("(lac.edit.malformed = deny)"), line


def test_a_lone_surrogate_in_a_path_is_refused_as_malformed(repo: Path) -> None:
    raw = json.dumps(payload({"file_path": "core/auth.py"}, repo)).replace(
        "core/auth.py", "core/\\ud800.py"
    )
    line = refused(run_hook(repo, raw.encode(), "claude-code"), "claude-code")
    assert "tool_input.file_path holds a lone surrogate" in line


def test_huge_input_is_refused(repo: Path) -> None:
    content = "x" * (64 * 2**20)
    raw = json.dumps(payload({"file_path": "a.py", "content": content}, repo)).encode()
    line = refused(run_hook(repo, raw, "claude-code"), "claude-code")
    assert line == (
        "refused: malformed hook payload: stdin is over 64 MiB (lac.edit.malformed = deny)"
    )


def test_malformed_allow_opts_out(repo: Path) -> None:
    git(repo, "config", "lac.edit.malformed", "allow")
    for harness in ("claude-code", "gemini"):
        result = run_hook(repo, BAD_INPUTS["bad UTF-8"], harness)
        assert result.code == 0 and result.out.strip() in ("", "{}"), result
        assert result.err.splitlines() == [
            "git lac: malformed hook payload: stdin is not UTF-8 (byte 31); "
            "edit allowed (lac.edit.malformed = allow)"
        ]
    git(repo, "config", "lac.edit.malformed", "perhaps")
    line = refused(run_hook(repo, b"{}", "claude-code"), "claude-code")
    assert line == "git lac: lac.edit.malformed is 'perhaps'; use allow | deny"


def test_a_bad_setting_under_gemini_is_its_deny(repo: Path) -> None:
    git(repo, "config", "lac.edit.undeclared", "maybe")
    body = payload({"file_path": str(repo / "README")}, repo)
    body["hook_event_name"] = "BeforeTool"
    body["tool_name"] = "write_file"
    line = refused(run_hook(repo, json.dumps(body).encode(), "gemini"), "gemini")
    assert line == "git lac: lac.edit.undeclared is 'maybe'; use allow | lock | deny"


@pytest.mark.parametrize("harness", ["claude-code", "gemini"])
def test_an_unexpected_failure_is_a_refusal_not_a_traceback(
    repo: Path,
    harness: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One handler around the whole hook: whatever breaks inside is the harness's refusal."""

    def broken(*_args: object) -> edit_guard.Found:
        raise RuntimeError("the disk\nfell off")

    monkeypatch.setattr(edit_guard, "_judged", broken)
    monkeypatch.setattr(sys, "stdin", _stdin(json.dumps(payload({"file_path": "a"}, repo))))
    monkeypatch.chdir(repo)
    code = edit_guard.main(harness)
    out, err = capsys.readouterr()
    said = Result(code, out, err)
    line = refused(said, harness)
    assert line == "refused: the edit guard failed (RuntimeError: the disk\\nfell off)"


class _Stdin(io.TextIOWrapper):
    def isatty(self) -> bool:
        return False


def _stdin(text: str | bytes) -> _Stdin:
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return _Stdin(io.BytesIO(raw), encoding="utf-8")


# --- any input: exit 0 or 2, at most one line, never let through when malformed ---

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = {
    "session_id": st.just("s"),
    "cwd": st.sampled_from(["CWD", "", ".", "/", "/nonexistent", "core"]),
    "hook_event_name": st.sampled_from(["PreToolUse", "BeforeTool", "PostToolUse"]),
    "tool_name": st.sampled_from(
        [
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "Bash",
            "PowerShell",
            "Read",
            "write_file",
            "replace",
            "run_shell_command",
        ]
    ),
}
INPUT_FIELDS = ["file_path", "notebook_path", "command", "dir_path", "directory", "content"]
PATHS = st.sampled_from(["core/auth.py", "README", ".", "core", "/", "../x", "a b/é.py"])


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for name, valid in FIELDS.items():
        choice = draw(st.sampled_from(["valid", "absent", "any"]))
        if choice != "absent":
            body[name] = draw(valid if choice == "valid" else JSON)
    tool_input: Any = {}
    for name in INPUT_FIELDS:
        choice = draw(st.sampled_from(["valid", "absent", "absent", "any"]))
        if choice == "valid":
            tool_input[name] = draw(PATHS) if name != "command" else "echo x > " + draw(PATHS)
        elif choice == "any":
            tool_input[name] = draw(JSON)
    body["tool_input"] = draw(st.sampled_from([tool_input, tool_input, None, "x", [tool_input]]))
    return body


def _in_process(repo: Path, raw: bytes, harness: str, capsys: pytest.CaptureFixture[str]) -> Result:
    old_stdin = sys.stdin
    sys.stdin = _stdin(raw)
    try:
        code = edit_guard.main(harness)
    finally:
        sys.stdin = old_stdin
    out, err = capsys.readouterr()
    return Result(code, out, err)


def _malformed(raw: bytes, harness: str, cwd: str) -> bool:
    try:
        parse_payload(raw, Harness.CLAUDE if harness == "claude-code" else Harness.GEMINI, cwd)
    except MalformedPayload:
        return True
    return False


def _check(result: Result, raw: bytes, harness: str, cwd: str) -> None:
    assert result.code in (0, 2), result
    assert len(result.err.splitlines()) <= 1, result.err
    assert "Traceback" not in result.err
    if _malformed(raw, harness, cwd):
        refused(result, harness)


@pytest.fixture
def board_repo(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from .conftest import lac_inprocess

    assert lac_inprocess(repo, "init").code == 0
    assert lac_inprocess(repo, "lock", "core/auth.py", env={"LAC_AGENT": "dana"}).code == 0
    monkeypatch.chdir(repo)
    monkeypatch.setenv("LAC_AGENT", "alice")
    monkeypatch.setenv("LAC_EDIT_HELPER", "off")
    return repo


@pytest.mark.parametrize("harness", ["claude-code", "gemini"])
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=payloads())
def test_any_json_payload_in_process(
    board_repo: Path, harness: str, body: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    if body.get("cwd") == "CWD":
        body["cwd"] = str(board_repo)
    raw = json.dumps(body).encode("utf-8", "surrogatepass")
    _check(_in_process(board_repo, raw, harness, capsys), raw, harness, str(board_repo))


@pytest.mark.parametrize("harness", ["claude-code", "gemini"])
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode()))
def test_any_bytes_in_process(
    board_repo: Path, harness: str, raw: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(_in_process(board_repo, raw, harness, capsys), raw, harness, str(board_repo))


@pytest.mark.parametrize("harness", ["claude-code", "gemini"])
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=payloads(), junk=st.binary(max_size=30))
def test_any_input_as_a_real_process(
    board_repo: Path, harness: str, body: dict[str, Any], junk: bytes
) -> None:
    if body.get("cwd") == "CWD":
        body["cwd"] = str(board_repo)
    for raw in (json.dumps(body).encode("utf-8", "surrogatepass"), junk):
        _check(run_hook(board_repo, raw, harness), raw, harness, str(board_repo))
