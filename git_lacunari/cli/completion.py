"""Shell completion: click's own scripts, plus `git lac <TAB>` through git's.

Click completes by running the program again with ``_GIT_LAC_COMPLETE`` set
(cli.run passes that name: the one click would derive from ``git lac`` has a
space). Git's bash completion completes ``git lac …`` by calling a function
named ``_git_lac`` with its ``words``/``cword``; ours hands those to the same
click machinery, as if ``git-lac`` had been typed. The command line being
completed is the root of the command that asks (no import of the package's
root: no cycle).
"""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from ..edge import Result
from ..session import Session
from .options import COMPLETE_VAR, CONTEXT, common

# For git's completion (git-completion.bash): `git lac <TAB>`.
GIT_BASH = r"""
_git_lac() {
    local IFS=$'\n' response completion type value
    response=$(env COMP_WORDS="git-lac ${words[*]:2}" COMP_CWORD=$((cword - 1)) \
        _GIT_LAC_COMPLETE=bash_complete git-lac 2>/dev/null)
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        if [[ $type == 'plain' ]]; then
            COMPREPLY+=("$value ")
        elif [[ $type == 'file' || $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o default 2>/dev/null
        fi
    done
}
"""


def script(root: click.Command, shell: str) -> str:
    cls = get_completion_class(shell)
    if cls is None:
        raise ValueError(f"no completion for {shell}")
    text = cls(root, {}, "git-lac", COMPLETE_VAR).source()
    return text + (GIT_BASH if shell == "bash" else "")


@click.command("completion", context_settings=CONTEXT)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@common
def completion(session: Session, as_json: bool, shell: str) -> Result:
    """Print the shell completion script for SHELL (bash, zsh or fish).

    bash: `eval "$(git lac completion bash)"` in ~/.bashrc (after git's own
    completion, so `git lac <TAB>` completes too); zsh: the same in ~/.zshrc;
    fish: `git lac completion fish > ~/.config/fish/completions/git-lac.fish`.
    """
    text = script(click.get_current_context().find_root().command, shell)
    return Result({"shell": shell, "script": text}, text.rstrip("\n"))
