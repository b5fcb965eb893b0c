"""What every command shares: its context settings, ``--json`` and ``--as``,
and the session it runs in (closed when it returns)."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import InvalidInput, Refused
from ..session import Session

F = TypeVar("F", bound=Callable[..., Any])
# Click completes by running the program again with this set: the name click
# would derive from ``git lac`` has a space (see completion.py).
COMPLETE_VAR = "_GIT_LAC_COMPLETE"
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

DEFAULT_LIMIT = 50  # rows a listing shows unless --limit says otherwise (0: all)
LIMIT_HELP = f"Show at most N (default {DEFAULT_LIMIT}; 0 shows all)."


# A whole number as people type it: ASCII digits only. Python's int() (and so
# click's INT) also takes Arabic-Indic, full-width and other digits, which
# read as another number, or as none, to people who do not read them.
_ASCII_INT = re.compile(r"\s*[+-]?[0-9]+\s*")


def _ascii_checked(kind: click.types.IntParamType, value: Any, param: Any, ctx: Any) -> None:
    if isinstance(value, str) and not _ASCII_INT.fullmatch(value):
        kind.fail(f"{value[:40]!r} is not a whole number (ASCII digits 0-9)", param, ctx)


class AsciiInt(click.types.IntParamType):
    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        _ascii_checked(self, value, param, ctx)
        return super().convert(value, param, ctx)


class AsciiIntRange(click.IntRange):
    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        _ascii_checked(self, value, param, ctx)
        return super().convert(value, param, ctx)


INT = AsciiInt()


def common(func: F) -> F:
    """``--json`` and ``--as`` on every command; the command gets its session
    and whether JSON is wanted, and its board is closed when it returns."""

    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
    @click.option("--as", "as_name", metavar="NAME", help="Act as this agent (beats LAC_AGENT).")
    @functools.wraps(func)
    def wrapper(*args: Any, as_json: bool, as_name: str | None, **kwargs: Any) -> Any:
        # The same two options are accepted before the verb: `git lac --as bob claim 1`.
        group = click.get_current_context().find_root().meta
        # `--as ''` is a name, refused as one: never silently the default.
        with Session(
            as_name if as_name is not None else group.get("lac.as"), defer_touch=True
        ) as session:
            try:
                result = func(session, as_json or group.get("lac.json", False), *args, **kwargs)
            except InvalidInput:
                raise  # exit 2 writes nothing
            except Refused as refusal:
                session.touch_deferred()
                if not _is_hook(click.get_current_context()):
                    session.tell_refused(refusal)
                raise
            session.touch_deferred()
            if _is_hook(click.get_current_context()):
                return result  # the hooks tell what they tell (guard/judge.py), no more
            return session.tell(result)

    return wrapper  # type: ignore[return-value]


def _is_hook(ctx: click.Context) -> bool:
    """A `git lac guard …` call: what git's hooks run, kept to their own
    round trips."""
    return ctx.parent is not None and ctx.parent.command.name == "guard"


def read_body(body: str | None, body_file: str | None) -> str | None:
    """--body TEXT or --body-file FILE (``-``: standard input), not both."""
    if body is not None and body_file is not None:
        raise click.UsageError("give --body or --body-file, not both")
    if body_file is None:
        return body
    try:
        if body_file == "-":
            return sys.stdin.read()
        return Path(body_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read --body-file {body_file}: {exc}") from None


def echo_to(*, err: bool) -> Callable[[str], None]:
    """Progress lines for a long-running command (stderr when ``err``),
    escaped at the edge like every line for people."""
    from ..edge import say

    return lambda line: say(line, err=err)
