"""Every harness by name, its adapter (loaded only when asked for: the edit
hook imports the one it answers), and the payload read once for all.

An adapter is a module behind :class:`~git_lacunari.agents.protocol.Adapter`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .protocol import MAX_PAYLOAD, EditRequest, Harness, MalformedPayload

if TYPE_CHECKING:
    from .protocol import Adapter

# The names `--harness` and `hooks install --agent` take (and aliases).
HARNESS_NAMES = {
    "claude-code": Harness.CLAUDE,
    "claude": Harness.CLAUDE,
    "gemini": Harness.GEMINI,
    "gemini-cli": Harness.GEMINI,
    "codex": Harness.CODEX,
    "qwen": Harness.QWEN,
    "qwen-code": Harness.QWEN,
    "copilot": Harness.COPILOT,
    "copilot-cli": Harness.COPILOT,
    "vscode": Harness.COPILOT,
    "cursor": Harness.CURSOR,
    "windsurf": Harness.WINDSURF,
    "kiro": Harness.KIRO,
    "kiro-cli": Harness.KIRO,
    "goose": Harness.GOOSE,
    "cline": Harness.CLINE,
    "opencode": Harness.OPENCODE,
    "generic": Harness.GENERIC,
}
# Harness -> its adapter module in this package.
MODULES = {
    Harness.CLAUDE: "claude",
    Harness.GEMINI: "gemini",
    Harness.CODEX: "codex",
    Harness.QWEN: "qwen",
    Harness.COPILOT: "copilot",
    Harness.CURSOR: "cursor",
    Harness.WINDSURF: "windsurf",
    Harness.KIRO: "kiro",
    Harness.GOOSE: "goose",
    Harness.CLINE: "cline",
    Harness.OPENCODE: "opencode",
    Harness.GENERIC: "generic",
}
# hook_event_name -> harness, for a payload that does not say (no --harness).
EVENTS = {"PreToolUse": Harness.CLAUDE, "BeforeTool": Harness.GEMINI}
# The harnesses `hooks install --agent` sets up, in the order the README gives them.
INSTALLABLE = (
    "claude-code",
    "gemini",
    "codex",
    "qwen",
    "copilot",
    "cursor",
    "windsurf",
    "kiro",
    "goose",
    "cline",
    "opencode",
)
# Harnesses with no hook that can refuse an edit: `hooks install --agent` names
# them, writes nothing, and says what covers them instead.
UNGUARDED = {
    "aider": "Aider",
    "continue": "Continue",
    "roo-code": "Roo Code",
    "roo": "Roo Code",
    "kiro-ide": "Kiro IDE",
    "amp": "Amp",
}
UNGUARDED_WHY = "it cannot refuse an edit; MCP and the commit, push and server guards cover it"
SCOPE_NAMES = ("project", "local", "user")
# A doctor check is "agent NAME"; where one file serves two harnesses, both are named.
CHECK_NAMES = {"copilot": "copilot (VS Code)"}


def adapter(harness: Harness) -> Adapter:
    import importlib

    module: Adapter = importlib.import_module(f"{__package__}.{MODULES[harness]}")
    return module


def installable() -> list[Harness]:
    return [HARNESS_NAMES[name] for name in INSTALLABLE]


def parse_payload(raw: str | bytes, harness: Harness | None, default_cwd: str) -> EditRequest:
    """The request in a hook's stdin (its bytes, or text); ``harness`` None:
    told by the payload itself."""
    if len(raw) > MAX_PAYLOAD:
        raise MalformedPayload(f"stdin is over {MAX_PAYLOAD // 2**20} MiB", harness)
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedPayload(f"stdin is not UTF-8 (byte {exc.start})", harness) from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise MalformedPayload(f"stdin is not JSON ({exc})") from None
    except RecursionError:
        raise MalformedPayload("stdin is JSON nested too deep") from None
    if not isinstance(data, dict):
        raise MalformedPayload("stdin is not a JSON object")
    if harness is None:
        event = data.get("hook_event_name")
        harness = EVENTS.get(event) if isinstance(event, str) else None
        if harness is None and "paths" in data:
            harness = Harness.GENERIC
        if harness is None:
            raise MalformedPayload(
                "cannot tell the harness: no hook_event_name PreToolUse or BeforeTool, "
                'no "paths" (say --harness NAME)'
            )
    try:
        return adapter(harness).parse(data, default_cwd)
    except MalformedPayload as exc:
        raise MalformedPayload(str(exc), harness) from None
