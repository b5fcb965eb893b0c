"""`git lac mcp` as a real subprocess, driven by the official SDK's own stdio client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .conftest import Result, git

Lac = Callable[..., Result]
LAC = str(Path(sys.executable).parent / "git-lac")
TOOLS = {
    "claim",
    "claim_next",
    "lock",
    "check",
    "release",
    "done",
    "heartbeat",
    "status",
    "tasks",
    "ready",
    "show",
    "wait",
}


async def client(stack: AsyncExitStack, cwd: Path, agent: str) -> ClientSession:
    env = {**os.environ, "LAC_AGENT": agent}
    params = StdioServerParameters(command=LAC, args=["mcp"], cwd=str(cwd), env=env)
    streams = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(*streams))
    await session.initialize()
    return session


async def call(session: ClientSession, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await session.call_tool(tool, args)
    assert result.structured_content is not None, result
    return result.is_error, result.structured_content


def test_claim_refuse_wait_and_wake_over_mcp(lac: Lac, repo: Path, tmp_path: Path) -> None:
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    other = tmp_path / "wt2"
    git(repo, "worktree", "add", "-q", str(other))

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            alice = await client(stack, repo, "alice")
            bob = await client(stack, other, "bob")
            listed = await alice.list_tools()
            assert {t.name for t in listed.tools} >= TOOLS
            assert all(t.input_schema.get("type") == "object" for t in listed.tools)

            failed, body = await call(alice, "claim", task=1)
            assert not failed and body["ok"] is True
            assert body["task"]["owner"] == "alice"
            assert [lk["pattern"] for lk in body["locks"]] == ["core/auth.py"]

            # Another worktree, another agent: refused, the holder named, as the CLI says it.
            failed, body = await call(bob, "lock", paths=["core/auth.py"])
            assert failed and body["ok"] is False
            assert body["refused"]["reason"] == "path_locked"
            assert body["refused"]["holder"] == "alice" and body["refused"]["task"] == 1
            assert body["message"] == "alice holds core/auth.py on task #1"
            failed, body = await call(bob, "claim", task=1)
            assert failed and body["refused"]["reason"] == "already_claimed"
            assert body["refused"]["holder"] == "alice"

            # A wait on the held path is woken by the release, and takes it.
            woken: dict[str, Any] = {}

            async def waiter() -> None:
                woken["result"] = await call(
                    bob, "wait", paths=["core/auth.py"], timeout=60, lock=True
                )
                woken["at"] = time.monotonic()

            async with anyio.create_task_group() as group:
                group.start_soon(waiter)
                await anyio.sleep(1.5)
                assert "result" not in woken  # still held: still waiting
                released_at = time.monotonic()
                failed, body = await call(alice, "release", task=1)
                assert not failed and body["task"]["state"] == "open"
            failed, body = woken["result"]
            assert not failed, body
            assert body["waited"] >= 1.0
            assert [lk["agent"] for lk in body["locked"]] == ["bob"]
            assert woken["at"] - released_at < 10
            failed, body = await call(alice, "check", paths=["core/auth.py"])
            assert failed and body["refused"]["holder"] == "bob"
            failed, body = await call(bob, "status")
            assert not failed and body["agent"] == "bob"
            assert [lk["pattern"] for lk in body["locks"]] == ["core/auth.py"]

    anyio.run(scenario)


def test_wait_timeout_is_a_tool_error_naming_the_holder(lac: Lac, repo: Path) -> None:
    assert lac("lock", "README", env={"LAC_AGENT": "dana"}).code == 0

    async def scenario() -> None:
        async with AsyncExitStack() as stack:
            alice = await client(stack, repo, "alice")
            failed, body = await call(alice, "wait", paths=["README"], timeout=0.5)
            assert failed and body["refused"]["reason"] == "path_locked"
            assert body["refused"]["holder"] == "dana"
            failed, body = await call(alice, "show", task=99)
            assert failed and body["refused"]["reason"] == "not_found"
            failed, body = await call(alice, "lock", paths=["/etc/passwd"])
            assert failed and body["error"]["kind"] == "bad_path"

    anyio.run(scenario)


class RawMcp:
    """`git lac mcp` spoken to line by line, as JSON-RPC text: the SDK's client
    cannot send what a careless one does (NaN, Infinity, a string for a number)."""

    def __init__(self, cwd: Path, agent: str) -> None:
        env = {**os.environ, "LAC_AGENT": agent}
        self.proc = subprocess.Popen(
            [LAC, "mcp"], cwd=cwd, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.next_id = 0
        self.info = self.request(
            "initialize",
            '{"protocolVersion": "2025-06-18", "capabilities": {}, '
            '"clientInfo": {"name": "raw", "version": "0"}}',
        )
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: str) -> dict[str, Any]:
        self.next_id += 1
        self.send(
            f'{{"jsonrpc": "2.0", "id": {self.next_id}, "method": "{method}", "params": {params}}}'
        )
        assert self.proc.stdout is not None
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.next_id, answer
        return answer["result"]  # type: ignore[no-any-return]

    def tool(self, name: str, arguments: str) -> dict[str, Any]:
        return self.request("tools/call", f'{{"name": "{name}", "arguments": {arguments}}}')

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


BAD_SECONDS = ["-5", "-0.5", "NaN", "Infinity", "-Infinity", "1e308", "1e400",
               "99999999999999999999999999999999999999999", "true", "false", '"5"', '"90s"',
               '"abc"', "[5]", '{"s": 5}']  # fmt: skip


def test_bad_durations_are_refused_as_the_cli_refuses_them(lac: Lac, repo: Path) -> None:
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("lock", "README", env={"LAC_AGENT": "dana"}).code == 0
    server = RawMcp(repo, "alice")
    try:
        for bad in BAD_SECONDS:
            for tool, args in (
                ("claim_next", f'{{"wait": {bad}}}'),
                ("wait", f'{{"paths": ["README"], "timeout": {bad}, "lock": true}}'),
            ):
                answer = server.tool(tool, args)
                assert answer["isError"] is True, (tool, bad, answer)
                error = answer["structuredContent"]["error"]
                # The CLI's own error for `--wait -5` / `--timeout 1e308`: exit 2's kind.
                assert error["kind"] == "bad_duration", (tool, bad, error)
                assert error["message"].startswith("invalid duration "), error
                assert answer["content"][0]["text"] == f"git lac: {error['message']}"
        # Nothing was claimed, nothing locked, and no wait was queued.
        shown = json.loads(lac("show", "1", "--json").out)["task"]
        assert shown["state"] == "open" and shown["owner"] is None
        held = json.loads(lac("locks", "--json").out)["locks"]
        assert [(lk["agent"], lk["pattern"]) for lk in held] == [("dana", "README")]
        # What the rule takes still works: a number of seconds, and 0 for "do not wait".
        answer = server.tool("wait", '{"paths": ["README"], "timeout": 0.3}')
        assert answer["structuredContent"]["refused"]["reason"] == "path_locked", answer
        answer = server.tool("claim_next", '{"wait": 0}')
        assert answer["isError"] is False, answer
        assert answer["structuredContent"]["task"]["owner"] == "alice"
    finally:
        server.close()
    # The CLI refuses the same durations with the same words.
    cli = lac("wait", "README", "--timeout", "1e308")
    assert cli.code == 2 and "invalid duration" in cli.err, cli.err


def test_server_info_names_the_package_version(lac: Lac, repo: Path) -> None:
    printed = lac("--version").out.strip()
    assert printed.startswith("git-lac, version ")
    server = RawMcp(repo, "alice")
    try:
        info = server.info["serverInfo"]
        assert info["name"] == "git-lacunari"
        assert info["version"] == printed.removeprefix("git-lac, version ") != ""
    finally:
        server.close()
