"""`git lac help [COMMAND...]`: the help `-h` prints, for a command or the whole.

`git lac --help` is git's: it opens the man page (`man git-lac`), which every
install has (an editable one too: man/editable.py); `git lac help` is for where
no man page is wanted, or no `man` exists."""

from __future__ import annotations

import click

from ..edge import Result
from ..errors import InvalidInput
from ..session import Session
from .options import CONTEXT, common


@click.command("help", context_settings=CONTEXT)
@click.argument("words", nargs=-1, metavar="[COMMAND]...")
@common
def help_cmd(session: Session, as_json: bool, words: tuple[str, ...]) -> Result:
    """Print the help of git lac, or of COMMAND (`git lac help task add`):
    the same text as `git lac COMMAND -h`. `git lac --help` opens the man page."""
    root = click.get_current_context().find_root().command
    ctx = click.Context(root, info_name="git lac")
    command: click.Command = root
    for word in words:
        sub = command.get_command(ctx, word) if isinstance(command, click.Group) else None
        if sub is None:
            said = " ".join(["git lac", *words[: words.index(word) + 1]])
            raise InvalidInput(f"no such command: {said} (`git lac help` lists them)")
        ctx = click.Context(sub, info_name=word, parent=ctx)
        command = sub
    text = command.get_help(ctx)
    return Result({"command": ctx.command_path, "help": text}, text)
