"""The `git lac` command line: click declarations only.

Each command parses its options and hands plain values to its verb in
:mod:`git_lacunari.commands`, which returns an
:class:`~git_lacunari.edge.Result` (or raises a LacError); :func:`run` hands
that to the one edge, which renders it (human text, or with ``--json`` one
JSON object) and chooses the exit code. Commands are named in
:mod:`.registry` and imported only when invoked. Every command takes
``--json`` and ``--as NAME`` (:mod:`.options`). The hooks' hot path skips
this package (see entry.py) but ends at the same edge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import click

from .. import __version__, edge
from ..edge import Result
from ..errors import BadUsage
from .options import COMPLETE_VAR, CONTEXT
from .registry import COMMANDS, LazyGroup


class VersionAsked(Exception):
    """`--version` was given: answered at the edge, so `--json` applies to it."""


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        raise VersionAsked


@click.group(cls=LazyGroup, lazy=COMMANDS, package=__name__, context_settings=CONTEXT)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Show the version and exit.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--as", "as_name", metavar="NAME", help="Act as this agent (beats LAC_AGENT).")
@click.pass_context
def cli(ctx: click.Context, as_json: bool, as_name: str | None) -> None:
    """git lac: claim tasks and lock paths on a shared board, so that a fleet
    of workers never does the same work twice.

    The board is an SQLite file in the repository's git common dir (shared by
    every linked worktree) unless `git lac init --url postgresql://…` points
    the repository at a team board.

    Exit codes: 0 done or allowed, 1 refused by the board, 2 bad usage or
    invalid input (nothing written), 3 cannot work here (no repository,
    board unreachable or too new).
    """
    ctx.meta["lac.as"] = as_name
    ctx.meta["lac.json"] = as_json


# --- to the edge ---------------------------------------------------------------

NEGATIVE_NUMBER = re.compile(r"^-\d+$")


def _wants_json(argv: Sequence[str]) -> bool:
    args = list(argv)
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def _usage(exc: click.ClickException) -> BadUsage:
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.exceptions.NoSuchOption) and exc.option_name[1:2].isdigit():
        if ctx is not None and ctx.command_path.split()[-2:-1] == ["resource"]:
            # a value such as -5 or -3-5 is a resource value, never a task id
            message = (
                f"no such option {exc.option_name!r}: a value that starts with '-' "
                "goes after `--` (git lac resource add NAME -- -5)"
            )
        elif NEGATIVE_NUMBER.match(exc.option_name):
            message = f"task id {exc.option_name!r} is not a positive whole number"
    hint = f"Try '{ctx.command_path} -h' for help." if ctx is not None else None
    return BadUsage(message, hint=hint)


def _invoke(argv: Sequence[str]) -> Result:
    """Parse and run one command; click's own failures become BadUsage."""
    try:
        # Without standalone mode click returns the command's value, or the
        # code of an Exit (0 after --help or --version, which click printed).
        done = cli.main(
            args=list(argv),
            prog_name="git lac",
            standalone_mode=False,
            complete_var=COMPLETE_VAR,
        )
    except click.ClickException as exc:
        raise _usage(exc) from None
    except click.Abort:  # click's spelling of Ctrl-C
        raise KeyboardInterrupt from None
    except VersionAsked:
        return Result({"version": __version__}, f"git-lac, version {__version__}")
    if isinstance(done, Result):
        return done
    # Only the reconcile command's body still prints for itself and has click
    # end with code 1 while conflicts are left; it is to return a Result instead.
    return Result(shown=True, unfinished="conflicts left" if done else None)


def run(argv: Sequence[str]) -> int:
    """`git lac ARGV`: the exit code (entry.main exits with it)."""
    return edge.run(lambda: _invoke(argv), as_json=_wants_json(argv))
