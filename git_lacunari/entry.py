"""The `git-lac` executable.

The hooks run `git-lac guard pre-commit` on every commit, so that exact call
takes a path that never imports click (about a fifth of a hook's time);
everything else, including any guard call with options, goes to the full
command line in :mod:`git_lacunari.cli`.
"""

from __future__ import annotations

import sys


def _hook_call(argv: list[str]) -> tuple[str, str | None] | None:
    if len(argv) == 2 and argv == ["guard", "pre-commit"]:
        return "pre-commit", None
    if len(argv) == 4 and argv[:2] == ["guard", "pre-push"] and not argv[2].startswith("-"):
        return "pre-push", argv[2]
    return None


def main() -> None:
    hook = _hook_call(sys.argv[1:])
    if hook is None:
        from .cli import main as full_command_line

        full_command_line()
        return
    from .errors import LacError
    from .guard import run_guard
    from .session import Session

    try:
        code = run_guard(Session(None), hook[0], remote=hook[1])
    except LacError as exc:
        print(f"git lac: {exc.message}", file=sys.stderr)
        code = exc.exit_code
    sys.exit(code)
