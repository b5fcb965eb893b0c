"""The one edge where results meet the user: what is printed, and the exit code.

A command returns a :class:`Result` or raises a :class:`LacError`;
:func:`run` renders either (human text, or with ``--json`` exactly one JSON
object on stdout; messages always on stderr) and returns the exit code, chosen
by :func:`exit_code_of` and nowhere else. ``"ok"`` is true exactly when the
exit code is 0. No click here: the hooks' fast path (entry.py) uses it too.

The JSON envelopes (README, "JSON output"):

- success: ``{"ok": true, ...data}``
- unfinished (exit 1, nothing refused: conflicts left, a guard that could not
  check): ``{"ok": false, "unfinished": WHY, ...data}``
- stopped by a signal (exit 128+N): ``{"ok": false, "stopped_by": "SIGTERM", ...data}``
- refusal (exit 1): ``{"ok": false, "refused": {"reason": R, ...facts}, "message": M}``
- error (exit 2 or 3): ``{"ok": false, "error": {"kind": K, "message": M}}``

Every line written here for people passes through the one escaper
(:func:`git_lacunari.text.shown`), whatever composed it: a view that forgot
to escape a file name still cannot clear the screen, set the title, reorder
a line or forge one. Human text on stdout keeps its newlines and tabs (and,
on a terminal, the colours a view painted); a message on stderr is one line,
so a newline in it is escaped too. JSON is printed as it is: JSON escapes
every control character itself.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import (
    EXIT_CANNOT_WORK,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    InvalidInput,
    LacError,
    Refused,
)
from .text import shown, shown_painted


@dataclass(frozen=True)
class Result:
    """What a command did.

    ``data`` is its JSON body, ``human`` its text for people (stdout).
    ``unfinished`` says why the work is not done although nothing was refused
    (exit 1): e.g. ``"2 conflict(s) left"``. ``stopped_by`` is the signal that
    ended it (exit 128+N). ``warnings`` go to stderr in either mode.
    ``shown`` means the output is already written (click's --help, --version).
    """

    data: Mapping[str, Any] = field(default_factory=dict)
    human: str = ""
    unfinished: str | None = None
    stopped_by: signal.Signals | None = None
    warnings: Sequence[str] = ()
    shown: bool = False


Outcome = Result | LacError | KeyboardInterrupt


def exit_code_of(outcome: Outcome) -> int:
    """The exit codes (README, "Exit codes"), in one place."""
    if isinstance(outcome, KeyboardInterrupt):
        return 128 + signal.SIGINT
    if isinstance(outcome, Refused):
        return EXIT_REFUSED
    if isinstance(outcome, InvalidInput):
        return EXIT_USAGE
    if isinstance(outcome, LacError):
        return EXIT_CANNOT_WORK
    if outcome.stopped_by is not None:
        return 128 + outcome.stopped_by
    return EXIT_REFUSED if outcome.unfinished else EXIT_OK


def payload(outcome: Outcome) -> dict[str, Any] | None:
    """The one JSON object printed for ``outcome`` (None: nothing to print)."""
    ok = exit_code_of(outcome) == EXIT_OK
    if isinstance(outcome, KeyboardInterrupt):
        return {"ok": ok, "error": {"kind": "interrupted", "message": "interrupted"}}
    if isinstance(outcome, Refused):
        said = {"ok": ok, "refused": outcome.to_json(), "message": outcome.message}
        return {**said, "notices": outcome.notices} if outcome.notices else said
    if isinstance(outcome, LacError):
        error = {"kind": outcome.kind, "message": outcome.message, **outcome.extra}
        return {"ok": ok, "error": error}
    if outcome.shown:
        return None
    body: dict[str, Any] = {**outcome.data, "ok": ok}
    if outcome.unfinished:
        body["unfinished"] = outcome.unfinished
    if outcome.stopped_by is not None:
        body["stopped_by"] = outcome.stopped_by.name
    return body


def messages(outcome: Outcome) -> list[str]:
    """The lines for people on stderr (in either mode)."""
    if isinstance(outcome, KeyboardInterrupt):
        return ["git lac: interrupted"]
    if isinstance(outcome, Refused):
        return [f"refused: {outcome.message}", *outcome.details]
    if isinstance(outcome, LacError):
        return [f"git lac: {outcome.message}", *([outcome.hint] if outcome.hint else [])]
    lines = list(outcome.warnings)
    if outcome.unfinished:
        lines.append(f"git lac: {outcome.unfinished}")
    if outcome.stopped_by is not None:
        lines.append(f"git lac: stopped by {outcome.stopped_by.name}")
    return lines


def human_text(text: str) -> str:
    """Text for people on stdout, escaped: its lines and tabs kept, and on a
    terminal the colours a view painted."""
    if sys.stdout.isatty():
        return shown_painted(text, keep="\n\t")
    return shown(text, keep="\n\t")


def human_line(line: str) -> str:
    """One line for people on stderr, escaped: a newline in it is shown as
    ``\\n``, never a second line."""
    return shown(line)


def say(line: str, *, err: bool = True, raw: bool = False) -> None:
    """Print one line for people now (a keeper's or a drain's progress, a
    streamed listing's row), escaped as every line at this edge is; ``raw``:
    a line of JSON for stdout, printed as it is (JSON escapes its own)."""
    if raw:
        print(line, flush=True)
        return
    stream = sys.stderr if err else sys.stdout
    print(human_line(line) if err else human_text(line), file=stream, flush=True)


def _reader_gone() -> int:
    """The reader of stdout went away (`git lac tasks | head -1`): what it
    did not read is nobody's. Exit as a process killed by SIGPIPE would, with
    no traceback, and point stdout at /dev/null so that the interpreter's own
    flush at exit does not raise the same error again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


def render(outcome: Outcome, *, as_json: bool) -> int:
    """Print ``outcome`` and return its exit code."""
    try:
        if as_json:
            body = payload(outcome)
            if body is not None:
                print(json.dumps(body, sort_keys=True, allow_nan=False), flush=True)
        elif isinstance(outcome, Result) and outcome.human and not outcome.shown:
            print(human_text(outcome.human), flush=True)
    except BrokenPipeError:
        return _reader_gone()
    lines = [human_line(line) for line in messages(outcome)]
    if lines:  # one write: a refusal may run to thousands of lines
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
    exit_code = exit_code_of(outcome)
    return exit_code


def run(command: Callable[[], Result], *, as_json: bool) -> int:
    """Run one command inside the one error handler; its exit code."""
    outcome: Outcome
    try:
        outcome = command()
    except LacError as exc:
        outcome = exc
    except KeyboardInterrupt as exc:
        outcome = exc
    except BrokenPipeError:  # a streamed listing's reader went away
        return _reader_gone()
    return render(outcome, as_json=as_json)
