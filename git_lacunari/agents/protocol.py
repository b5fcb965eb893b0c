"""What every harness adapter is: one module per agent harness, each behind
the one :class:`Adapter` protocol (as pre-commit keeps one module per
language behind its ``Language`` protocol).

An adapter knows its harness's pre-tool hook protocol, as the harness's
documentation and shipped code give it (each module cites the version it
follows): how to read the payload into the paths a tool call may write (and
a shell command, for :mod:`git_lacunari.shell_writes`), how to say allow and
deny, how to refuse when the payload is not of its shape, and where a
project keeps its hooks (install and uninstall, keeping the user's content).

Nothing here is imported on the edit hook's path but this module and the
one adapter asked for: no dataclasses (they cost more to import than the
hook's own code, bench/edit.py).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from pathlib import Path


class Harness(Enum):
    CLAUDE = "claude-code"
    GEMINI = "gemini"
    CODEX = "codex"
    QWEN = "qwen"
    COPILOT = "copilot"
    CURSOR = "cursor"
    WINDSURF = "windsurf"
    KIRO = "kiro"
    GOOSE = "goose"
    CLINE = "cline"
    OPENCODE = "opencode"
    GENERIC = "generic"


class MalformedPayload(ValueError):
    """The hook's stdin is not the shape its harness documents."""

    def __init__(self, message: str, harness: Harness | None = None) -> None:
        super().__init__(message)
        self.harness = harness  # whose payload it was, when that could be told


class EditRequest:
    """What one tool call may write, as the payload says it."""

    def __init__(self, harness: Harness, cwd: str) -> None:
        self.harness = harness
        self.cwd = cwd  # the agent's directory (relative paths are resolved from it)
        self.tool = ""
        self.paths: list[str] = []  # as given: absolute or relative to cwd
        self.shell: str | None = None  # a shell command to search for write targets
        self.shell_dir: str | None = None  # where the shell command runs, if not cwd
        # shell_dir is relative to the project's directory, not to cwd (Gemini CLI's dir_path)
        self.dir_from_project = False
        self.form = ""  # which of the harness's payload forms it came in (answered in kind)


class Answer(NamedTuple):
    """What the hook prints and its exit code, in the harness's protocol."""

    code: int
    stdout: str
    stderr: list[str]


MAX_PAYLOAD = 64 * 2**20  # bytes: a Write's content rides in the payload; more is refused


def text(value: Any, what: str) -> str:
    """``value`` as a path or command: a non-empty string, without NUL, that is text."""
    if not isinstance(value, str) or value == "" or "\0" in value:
        raise MalformedPayload(f"{what} is not a non-empty string without NUL")
    try:  # a lone surrogate ("\\ud800" in the JSON) names no file, and prints nowhere
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise MalformedPayload(f"{what} holds a lone surrogate, not text") from None
    return value


def obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedPayload(f"{what} is not an object")
    return value


class SettingsChange(NamedTuple):
    harness: str
    path: str
    action: str  # installed, unchanged, removed, absent
    scope: str = "project"


class Installed(NamedTuple):
    """One edit-guard entry of ours, as a harness's file holds it now."""

    harness: Harness
    scope: str
    path: Path
    command: str
    timeout: float  # seconds
    where: str = ""  # the directory the harness runs it in ("": the top of the work tree)
    env: tuple[tuple[str, str], ...] = ()  # what the harness adds to its environment


class Adapter(Protocol):
    """One harness: its payload, its answers, its hook file (a module)."""

    HARNESS: Harness
    # The environment variable the harness names the project's directory by
    # (whose agent is asking), or None: the payload's cwd says it.
    PROJECT_DIR: str | None
    # Scope -> the file it keeps hooks in (relative to the top of the work
    # tree, or ``~/`` for the home directory).
    SCOPES: dict[str, str]

    def parse(self, data: dict[str, Any], default_cwd: str) -> EditRequest:
        """The request in the payload (a JSON object); MalformedPayload when
        it is not of the harness's shape."""
        ...

    def render(
        self,
        request: EditRequest | None,
        allowed: bool,
        reason: str,
        body: dict[str, Any] | None,
        notes: list[str],
    ) -> Answer:
        """Allow or deny in the harness's form (``notes`` go to stderr)."""
        ...

    def tell(
        self,
        request: EditRequest | None,
        context: str,
        body: dict[str, Any],
        notes: list[str],
    ) -> Answer | None:
        """An allowed call's answer that carries ``context`` (a notice: a claim
        the agent lost) to the model; None where no field of the harness's
        answer does (the edit guard then says it in a refusal)."""
        ...

    def blocked(self, request: EditRequest | None, reason: str, line: str) -> Answer:
        """The fail-closed refusal: a payload not of the harness's shape, a bad
        setting, the guard itself failing. ``line`` goes to stderr."""
        ...

    def check(self, scope: str, top: Path | None) -> None:
        """InvalidInput, before anything is written, for a file we could not merge into."""
        ...

    def install(self, scope: str, top: Path | None, backup_dir: Path) -> SettingsChange: ...

    def uninstall(self, scope: str, top: Path | None, backup_dir: Path) -> SettingsChange: ...

    def entries(self, top: Path | None) -> tuple[list[Installed], list[str]]:
        """Our edit entries as the harness's files hold them now, and the
        files that could not be read."""
        ...

    def probe_payload(self, top: Path, rel: str) -> list[dict[str, Any]]:
        """The harness's payloads of an edit of ``rel`` (each form it sends)."""
        ...

    def judge(self, code: int, stdout: str, stderr: str) -> tuple[bool, str]:
        """(refused, reason), as the harness reads the hook's exit and output."""
        ...


def parse_tool_call(
    data: dict[str, Any],
    harness: Harness,
    default_cwd: str,
    file_tools: dict[str, str],
    shell_tools: dict[str, tuple[str, tuple[str, ...]]],
    *,
    tool_key: str = "tool_name",
    input_key: str = "tool_input",
) -> EditRequest:
    """Claude Code's shape, which several harnesses share: ``cwd``,
    ``tool_name``, ``tool_input``. ``file_tools``: tool -> the input field
    holding the path it writes; ``shell_tools``: tool -> (the command's field,
    the fields that set its directory, first found wins)."""
    request = EditRequest(harness, text(data.get("cwd", default_cwd), "cwd"))
    request.tool = text(data.get(tool_key), tool_key)
    tool_input = obj(data.get(input_key), input_key)
    field_name = file_tools.get(request.tool)
    if field_name is not None:
        request.paths = [text(tool_input.get(field_name), f"{input_key}.{field_name}")]
        return request
    shell = shell_tools.get(request.tool)
    if shell is not None:
        command_field, dir_fields = shell
        request.shell = text(tool_input.get(command_field), f"{input_key}.{command_field}")
        for dir_field in dir_fields:
            if tool_input.get(dir_field) is not None:
                request.shell_dir = text(tool_input.get(dir_field), f"{input_key}.{dir_field}")
                break
    return request  # any other tool writes nothing we guard


def exit_2_render(
    request: EditRequest | None,
    allowed: bool,
    reason: str,
    body: dict[str, Any] | None,
    notes: list[str],
) -> Answer:
    """``render`` for a harness whose block form is exit 2 (:func:`exit_2_answer`)."""
    return exit_2_answer(allowed, reason, notes)


def no_channel(
    request: EditRequest | None, context: str, body: dict[str, Any], notes: list[str]
) -> None:
    """``tell`` for a harness whose answer to an allowed call reaches no
    model (an exit 0's stderr, an empty answer): a refusal must say it."""
    return None


def exit_2(request: EditRequest | None, reason: str, line: str) -> Answer:
    """The block form many harnesses share: exit 2, the reason on stderr."""
    return Answer(2, "", [line])


def exit_2_answer(allowed: bool, reason: str, notes: list[str]) -> Answer:
    """Allow: exit 0, nothing on stdout; deny: exit 2 with the reason as the
    first line of stderr (what the harness hands the agent)."""
    said = [n for n in notes if not n.startswith("refused: ")]
    if allowed:
        return Answer(0, "", said)
    return Answer(2, "", [reason, *said])
