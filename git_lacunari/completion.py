"""Shell completion: click's own scripts, plus `git lac <TAB>` through git's.

Click completes by running the program again with ``_GIT_LAC_COMPLETE`` set
(cli.run passes that name: the one click would derive from ``git lac`` has a
space). Git's bash completion completes ``git lac …`` by calling a function
named ``_git_lac`` with its ``words``/``cword``; ours hands those to the same
click machinery, as if ``git-lac`` had been typed.
"""

from __future__ import annotations

from click.shell_completion import get_completion_class

COMPLETE_VAR = "_GIT_LAC_COMPLETE"

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


def script(shell: str) -> str:
    from .cli import cli

    cls = get_completion_class(shell)
    if cls is None:
        raise ValueError(f"no completion for {shell}")
    text = cls(cli, {}, "git-lac", COMPLETE_VAR).source()
    return text + (GIT_BASH if shell == "bash" else "")
