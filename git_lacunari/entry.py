"""The `git-lac` executable.

The hooks run `git-lac guard pre-commit` on every commit, so that exact call
(and the other hooks' exact calls: pre-push, pre-merge-commit, pre-receive)
takes a path that never imports click (about a fifth of a hook's time), as
does `git lac guard edit`, which agent harnesses run before every tool call,
and so do the plain forms of `git lac reconcile` (whose fixed cost is measured in
bench/reconcile.py); everything else, including any call with an option these
parsers do not know (`-h`, say), goes to the full command line in
:mod:`git_lacunari.cli`. Both end at the same edge
(:mod:`git_lacunari.edge`): the same messages, JSON and exit codes.
"""

from __future__ import annotations

import os
import sys

NO_ARGUMENTS = ("pre-commit", "pre-merge-commit", "pre-receive")


def _hook_call(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """(hook, remote, url) for the exact calls the installed hooks make."""
    if len(argv) == 2 and argv[0] == "guard" and argv[1] in NO_ARGUMENTS:
        return argv[1], None, None
    if len(argv) == 4 and argv[:2] == ["guard", "pre-push"] and not argv[2].startswith("-"):
        return "pre-push", argv[2], argv[3]
    return None


class _Reconcile:
    # A plain class: importing dataclasses costs the edit hook, which loads
    # this module before every tool call of an agent, more than its own work.
    def __init__(self) -> None:
        self.ref: str | None = None
        self.base_rev: str | None = None
        self.dry_run = False
        self.abort = False
        self.continue_ = False
        self.allow_markers = False
        self.as_json = False
        self.as_name: str | None = None


def _reconcile_call(argv: list[str]) -> _Reconcile | None:
    """The options `git lac reconcile` documents, and nothing else: any other
    word is left to click, which says what is wrong with it."""
    if not argv or argv[0] != "reconcile":
        return None
    call = _Reconcile()
    flags = {
        "--dry-run": "dry_run",
        "--abort": "abort",
        "--continue": "continue_",
        "--allow-markers": "allow_markers",
    }
    valued = {"--base": "base_rev", "--as": "as_name"}
    words = iter(argv[1:])
    for word in words:
        name, eq, value = word.partition("=")
        if word in flags and not getattr(call, flags[word]):
            setattr(call, flags[word], True)
        elif word == "--json":
            call.as_json = True
        elif name in valued and getattr(call, valued[name]) is None:
            given = value if eq else next(words, None)
            if not given or given.startswith("-"):
                return None
            setattr(call, valued[name], given)
        elif word.startswith("-") or call.ref is not None:
            return None
        else:
            call.ref = word
    return call


def _edit_call(argv: list[str]) -> tuple[str | None] | None:
    """(harness,) for `guard edit [--harness NAME]`, the agent harnesses' hook,
    run before every tool call of an agent (README, "Agents")."""
    if argv[:2] != ["guard", "edit"]:
        return None
    rest = argv[2:]
    if not rest:
        return (None,)
    if len(rest) == 2 and rest[0] == "--harness" and not rest[1].startswith("-"):
        return (rest[1],)
    if len(rest) == 1 and rest[0].startswith("--harness=") and rest[0] != "--harness=":
        return (rest[0][len("--harness=") :],)
    return None


class _ClaimNext:
    def __init__(self) -> None:
        self.lane = "default"
        self.as_json = False
        self.as_name: str | None = None


def _claim_next_call(argv: list[str]) -> _ClaimNext | None:
    """`claim --next` with no option but ``--lane``, ``--json`` and ``--as``
    (each at most once): what an agent's loop runs between two tasks, so it
    skips click (about a sixth of the whole process). Anything else, ``-h``
    included, is left to click, which parses it and says what is wrong."""
    if argv[:1] != ["claim"] or "--next" not in argv:
        return None
    call = _ClaimNext()
    valued = {"--lane": "lane", "--as": "as_name"}
    seen: set[str] = set()
    words = iter(argv[1:])
    for word in words:
        name, eq, value = word.partition("=")
        if word in ("--next", "--json") and word not in seen:
            call.as_json = call.as_json or word == "--json"
        elif name in valued and name not in seen:
            given = value if eq else next(words, None)
            if not given or given.startswith("-"):
                return None
            setattr(call, valued[name], given)
            word = name
        else:
            return None
        seen.add(word)
    return call


def _claim_next(call: _ClaimNext) -> int:
    """`claim --next` as the full command line runs it (cli/options.common):
    the sign of life after the claim, none after invalid input."""
    from .commands.claims import claim
    from .edge import Result, run
    from .errors import InvalidInput, Refused
    from .session import Session

    with Session(call.as_name, defer_touch=True) as session:

        def claimed() -> Result:
            try:
                result = claim(
                    session,
                    None,
                    next_=True,
                    lane=call.lane,
                    writes=(),
                    reads=(),
                    stale=None,
                    wait=None,
                    take_over=False,
                )
            except InvalidInput:
                raise  # exit 2 writes nothing
            except Refused:
                session.touch_deferred()
                raise
            session.touch_deferred()
            return result

        return run(claimed, as_json=call.as_json)


def _after(hook: str, message: str = "") -> int:
    """The hooks that run after the fact (landing, issue 25): never refuse."""
    from .edge import run
    from .guard import after

    if hook == "post-receive":
        from .guard.judge import read_stdin

        text = read_stdin()
        run(lambda: after.post_receive(text), as_json=False)
        return 0
    from .session import Session

    with Session(None) as session:
        if hook == "commit-msg":
            run(lambda: after.commit_msg(session, message), as_json=False)
        else:
            run(lambda: after.post_commit(session), as_json=False)
    return 0


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["guard", "edit-helper"]:  # started by the edit hook itself
        from .edit_server import serve

        sys.exit(serve(os.getcwd()))
    edit = _edit_call(argv)
    if edit is not None:
        from .edit_guard import main as guard_edit

        sys.exit(guard_edit(edit[0]))
    if argv in (["guard", "post-commit"], ["guard", "post-receive"]):
        sys.exit(_after(argv[1]))
    claim_next = _claim_next_call(argv)
    if claim_next is not None:
        sys.exit(_claim_next(claim_next))
    if len(argv) == 3 and argv[:2] == ["guard", "commit-msg"] and not argv[2].startswith("-"):
        sys.exit(_after("commit-msg", argv[2]))
    hook = _hook_call(argv)
    fast = _reconcile_call(argv) if hook is None else None
    if fast is not None:
        from .edge import run
        from .reconcile.command import command
        from .session import Session
        from .views.reconcile import reconcile_result

        with Session(fast.as_name) as session:  # its board is closed when it returns
            code = run(
                lambda: reconcile_result(
                    command(
                        session,
                        fast.ref,
                        base_rev=fast.base_rev,
                        dry_run=fast.dry_run,
                        abort=fast.abort,
                        continue_=fast.continue_,
                        allow_markers=fast.allow_markers,
                    )
                ),
                as_json=fast.as_json,
            )
    elif hook is None:
        from .cli import run as full_command_line

        code = full_command_line(argv)
    else:
        from .edge import Result, run
        from .errors import Refused
        from .guard.judge import judge_hook
        from .session import Session
        from .views.guard import guard_result

        name, remote, url = hook
        # As on the command line: the sign of life after the check, and a
        # board too busy (or too full) for it just misses one, so a commit is
        # never refused unchecked for want of a heartbeat.
        session = Session(None, defer_touch=True)

        def guarded() -> Result:
            try:
                result = guard_result(judge_hook(session, name, remote=remote, url=url))
            except Refused:
                session.touch_deferred()
                raise
            session.touch_deferred()
            return result

        with session:
            code = run(guarded, as_json=False)
    sys.exit(code)
