"""The `git-lac` executable.

The hooks run `git-lac guard pre-commit` on every commit, so that exact call
(and the other hooks' exact calls: pre-push, pre-merge-commit, pre-receive)
takes a path that never imports click (about a fifth of a hook's time);
everything else, including any guard call with options, goes to the full
command line in :mod:`git_lacunari.cli`. Both end at the same edge
(:mod:`git_lacunari.edge`): the same messages, JSON and exit codes.
"""

from __future__ import annotations

import sys

NO_ARGUMENTS = ("pre-commit", "pre-merge-commit", "pre-receive")


def _hook_call(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """(hook, remote, url) for the exact calls the installed hooks make."""
    if len(argv) == 2 and argv[0] == "guard" and argv[1] in NO_ARGUMENTS:
        return argv[1], None, None
    if len(argv) == 4 and argv[:2] == ["guard", "pre-push"] and not argv[2].startswith("-"):
        return "pre-push", argv[2], argv[3]
    return None


def main() -> None:
    argv = sys.argv[1:]
    hook = _hook_call(argv)
    if hook is None:
        from .cli import run as full_command_line

        code = full_command_line(argv)
    else:
        from .edge import run
        from .guard import run_guard
        from .session import Session

        name, remote, url = hook
        code = run(lambda: run_guard(Session(None), name, remote=remote, url=url), as_json=False)
    sys.exit(code)
