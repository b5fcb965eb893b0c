"""Render the `git-lac(1)` man page from the commands' own help.

`git lac --help` is answered by git itself, which opens `man git-lac`; the
package installs this page under `share/man/man1` so that works. The file
`man/git-lac.1` is generated (``python -m git_lacunari.manpage > man/git-lac.1``)
and a test keeps it equal to the help text.
"""

from __future__ import annotations

import inspect

import click

from . import __version__
from .cli import cli


def _roff(text: str) -> str:
    lines = []
    for line in text.replace("\\", "\\e").splitlines():
        lines.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(lines)


def _paragraphs(text: str) -> str:
    """Help text as filled roff paragraphs: its indentation removed and each
    paragraph one line, so man fills it (raw lines with their docstring
    indent came out as ragged, half-indented lines)."""
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n") if p.strip()]
    return "\n.PP\n".join(_roff(p) for p in paragraphs)


def _commands(group: click.Group, prefix: list[str]) -> list[tuple[list[str], click.Command]]:
    found: list[tuple[list[str], click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append(([*prefix, name], command))
        if isinstance(command, click.Group):
            found += _commands(command, [*prefix, name])
    return found


def render() -> str:
    out = [
        f'.TH GIT-LAC 1 "" "git-lacunari {__version__}" "Git Manual"',
        ".SH NAME",
        "git-lac \\- claim tasks and lock paths on a shared board",
        ".SH SYNOPSIS",
        ".B git lac",
        "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fB\\-\\-json\\fR] [\\fB\\-\\-as\\fR \\fINAME\\fR]",
        ".SH DESCRIPTION",
        _paragraphs(cli.help or ""),
        ".SH COMMANDS",
    ]
    for path, command in _commands(cli, []):
        # The command's own context settings (-h, widths), at a fixed terminal
        # width, so the page is the same whatever terminal renders it.
        settings = {**command.context_settings, "terminal_width": 90, "max_content_width": 90}
        ctx = click.Context(command, info_name="git lac " + " ".join(path), **settings)
        out += [".SS " + "git lac " + " ".join(path), ".nf", _roff(command.get_help(ctx)), ".fi"]
    out += [".SH SEE ALSO", "The README of git-lacunari.", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
