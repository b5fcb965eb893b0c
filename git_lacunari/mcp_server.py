"""`git lac mcp`: the board as Model Context Protocol tools, over stdio.

Built on the official SDK (``mcp``, the ``mcp`` extra: ``pip install
'git-lacunari[mcp]'``), as :class:`mcp.server.mcpserver.MCPServer`. The
agent is this work tree's instance, exactly as for ``git lac`` run here: the
server resolves its identity as the command line does (``LAC_AGENT``, ``git
config lac.agent``, …), so the claims an agent makes through MCP are the
same claims its hooks and the edit guard see.

Every tool answers with a structured result (the ``--json`` body of the
matching command, ``"ok": true``). A refusal or an error comes back as an
MCP tool error (``isError``) whose text is the CLI's message and whose
structured content is the CLI's ``--json`` object: the same reasons
(``path_locked``, ``already_claimed``, …) and facts.

Tool calls run in the SDK's worker threads; each opens the board for itself
(an SQLite connection belongs to its thread) and closes it after.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import WithJsonSchema

from . import __version__
from .board import Board
from .durations import MAX_DURATION_S, duration_value
from .edge import payload
from .errors import LacError
from .session import Session

INSTRUCTIONS = (
    "A shared board of task claims and path locks (git-lacunari). Claim a task before "
    "editing; a path another agent holds is refused, naming the holder and the task; "
    "`wait` blocks until paths are free (and with lock=true takes them)."
)


def _refusal(exc: LacError) -> CallToolResult:
    body = payload(exc) or {"ok": False}
    text = f"refused: {exc.message}" if body.get("refused") else f"git lac: {exc.message}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body, is_error=True
    )


def _on_board(act: Callable[[Board], dict[str, Any]]) -> CallToolResult:
    """Run ``act`` on a board opened here as this work tree's agent: its body
    as the structured result (and as JSON text, for clients that read only
    text), or the CLI's refusal as a tool error."""
    try:
        board = Session(None).board()
        try:
            body = {**act(board), "ok": True}
        finally:
            board.store.close()
    except LacError as exc:
        return _refusal(exc)
    text = json.dumps(body, sort_keys=True, allow_nan=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=body)


Body = CallToolResult

# A duration in seconds, as the tools take it. Advertised as a number, but
# taken as whatever JSON came: the SDK's own coercion would make a `true` or a
# `"5"` a number and pass NaN and 1e308 on, and the board's one rule for a
# duration (durations.duration_value, the rule `--wait`/`--timeout` are held
# to) must see what was sent to refuse it, as invalid input, before anything is
# claimed.
Seconds = Annotated[
    Any,
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "maximum": MAX_DURATION_S}),
]


def _seconds(value: object, *, zero: bool = False) -> float | None:
    """``value`` as seconds by the one rule; None when absent (or 0, where
    ``zero`` says 0 means "do not wait")."""
    if value is None or (zero and value == 0 and not isinstance(value, bool)):
        return None
    return duration_value(value)


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "git-lacunari", instructions=INSTRUCTIONS, version=__version__
    )

    @server.tool(structured_output=False)
    def claim(task: int, write: list[str] | None = None, read: list[str] | None = None) -> Body:
        """Claim task #task, with its declared path locks (and these extra ones), or be
        refused whole: already_claimed, unmet_dependency, missing_capability, path_locked."""

        def act(board: Board) -> dict[str, Any]:
            got = board.claim(task, writes=write or [], reads=read or [])
            return {
                "task": got.task.to_json(),
                "again": got.again,
                "locks": [lk.to_json() for lk in got.locks],
            }

        return _on_board(act)

    @server.tool(structured_output=False)
    def claim_next(lane: str = "default", wait: Seconds = 0) -> Body:
        """Claim the best claimable task of a lane whose paths are free; wait up to
        `wait` seconds for one to appear (0: do not wait)."""

        try:  # before the board is opened: bad input claims nothing
            wait_s = _seconds(wait, zero=True)
        except LacError as exc:
            return _refusal(exc)

        def act(board: Board) -> dict[str, Any]:
            got = board.claim_next(lane, wait=wait_s)
            return {
                "task": got.task.to_json(),
                "again": got.again,
                "locks": [lk.to_json() for lk in got.locks],
            }

        return _on_board(act)

    @server.tool(structured_output=False)
    def lock(paths: list[str], read: bool = False, task: int | None = None) -> Body:
        """Lock path patterns (write, or read with read=true), under task #task if given."""
        from .model import LockMode

        mode = LockMode.READ if read else LockMode.WRITE
        return _on_board(
            lambda board: {
                "locks": [lk.to_json() for lk in board.lock(paths, mode=mode, task_id=task)]
            }
        )

    @server.tool(structured_output=False)
    def check(paths: list[str]) -> Body:
        """May I write these paths? ok=false with every holder in the way (path_locked)."""
        from .errors import PathLocked

        def act(board: Board) -> dict[str, Any]:
            conflicts = board.check(paths)
            if conflicts:
                raise PathLocked(conflicts)
            return {"paths": paths, "conflicts": []}

        return _on_board(act)

    @server.tool(structured_output=False)
    def release(task: int) -> Body:
        """Give task #task back to the board (open again), with its locks."""
        return _on_board(lambda board: {"task": board.release(task).to_json()})

    @server.tool(structured_output=False)
    def done(task: int) -> Body:
        """Mark task #task done, releasing its locks."""
        return _on_board(lambda board: {"task": board.done(task).to_json()})

    @server.tool(structured_output=False)
    def heartbeat(tasks: list[int] | None = None) -> Body:
        """Refresh the heartbeat of my claims (all, or these)."""
        return _on_board(lambda board: {"refreshed": board.heartbeat(tasks or [])})

    @server.tool(structured_output=False)
    def status() -> Body:
        """Who I am here, my claims and my locks."""

        def act(board: Board) -> dict[str, Any]:
            ident = board.identity
            mine = board.task_page(states=["claimed"], mine=True, limit=100).items
            return {
                "agent": ident.name,
                "instance": ident.instance,
                "where": ident.instance_where,
                "claims": [t.to_json() for t in mine],
                "locks": [lk.to_json() for lk in board.locks(mine=True)],
            }

        return _on_board(act)

    @server.tool(structured_output=False)
    def tasks(state: str | None = None, lane: str | None = None, mine: bool = False) -> Body:
        """List tasks (open and claimed by default), by state, lane, or mine only."""

        def act(board: Board) -> dict[str, Any]:
            states = [state] if state else None
            page = board.task_page(states=states, lane=lane, mine=mine, limit=200)
            return {"tasks": [t.to_json() for t in page.items], "more": page.more}

        return _on_board(act)

    @server.tool(structured_output=False)
    def ready(lane: str = "default") -> Body:
        """What I could claim now in a lane, in claim order; why not for the rest."""

        def act(board: Board) -> dict[str, Any]:
            now, blocked = board.ready(lane)
            return {
                "ready": [t.to_json() for t in now],
                "blocked": [
                    {"task": t.to_json(), "refused": why.to_json(), "message": why.message}
                    for t, why in blocked
                ],
            }

        return _on_board(act)

    @server.tool(structured_output=False)
    def show(task: int) -> Body:
        """One task: its state, owner, paths, locks and dependencies."""
        return _on_board(lambda board: {"task": board.show(task).to_json()})

    @server.tool(structured_output=False)
    def wait(
        paths: list[str], timeout: Seconds = None, lock: bool = False, task: int | None = None
    ) -> Body:
        """Block until no other agent holds these paths; lock=true takes them (write
        locks, under task #task if given) the moment they free, oldest waiter first.
        Refused (path_locked, naming the holders) if `timeout` seconds run out.
        `finished`: the tasks whose write locks held them and that are done now:
        bring their work into your branch before you change these paths."""
        from .wait import wait_for_paths

        try:  # before the board is opened: bad input locks nothing
            timeout_s = _seconds(timeout)
        except LacError as exc:
            return _refusal(exc)

        def act(board: Board) -> dict[str, Any]:
            waited = wait_for_paths(board, paths, timeout=timeout_s, lock=lock, task_id=task)
            if waited.in_line:
                from .errors import CannotWorkHere

                raise CannotWorkHere("the wait ran out in line behind an older waiter")
            return waited.to_json()

        return _on_board(act)

    return server


def serve() -> None:
    """Serve on stdin/stdout until the client goes."""
    build().run("stdio")
