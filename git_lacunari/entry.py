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

import io
import os
import sys

from .resident import ClaimNext, claim_next_call, hook_call

TYPE_CHECKING = False  # not typing's: the edit hook loads this module before every tool call
if TYPE_CHECKING:
    from typing import Any


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


def _claim_next(call: ClaimNext) -> int:
    """`claim --next` as the full command line runs it (cli/options.common):
    the sign of life after the claim, none after invalid input."""
    from .commands.claims import claim
    from .commands.claims import claimed as said
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
                answer = said(session, result)
            except InvalidInput:
                raise  # exit 2 writes nothing
            except Refused as refusal:
                session.touch_deferred()
                session.tell_refused(refusal)
                raise
            session.touch_deferred()
            return session.tell(answer)

        return run(claimed, as_json=call.as_json)


def _after(hook: str, message: str = "") -> int:
    """The hooks that run after the fact (landing): never refuse."""
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

        sys.exit(serve(os.getcwd(), run_call))
    from . import resident

    code, missed, stdin_text = resident.forward(argv)
    if code is not None:  # the resident helper answered, with dispatch() itself
        sys.exit(code)
    answerable = missed is not None and missed.why not in ("not resident", "no repository")
    if answerable and resident.required():
        from .edit_helper import start_helper

        sys.exit(resident.forward_started(argv, stdin_text, start_helper))
    if stdin_text is not None:  # read for the helper: the direct path reads it again
        import io

        sys.stdin = io.StringIO(stdin_text)
    code = dispatch(argv)
    if missed is not None and missed.absent:  # decided here: a helper for next time
        from .edit_helper import spawn_here

        spawn_here()
    sys.exit(code)


def dispatch(argv: list[str]) -> int:
    """Run one call of the executable; its exit code. The direct path, and
    what the resident helper runs for the calls it answers (:mod:`resident`):
    one implementation, the same inputs (argv, environment, working
    directory, standard input)."""
    edit = _edit_call(argv)
    if edit is not None:
        from .edit_guard import main as guard_edit

        return guard_edit(edit[0])
    if argv in (["guard", "post-commit"], ["guard", "post-receive"]):
        return _after(argv[1])
    claim_next = claim_next_call(argv)
    if claim_next is not None:
        return _claim_next(claim_next)
    if len(argv) == 3 and argv[:2] == ["guard", "commit-msg"] and not argv[2].startswith("-"):
        return _after("commit-msg", argv[2])
    hook = hook_call(argv)
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
    return code


# --- the calls the resident helper runs (edit_server.serve) -----------------------


class Captured(io.StringIO):
    """A caller's stdout or stderr, held for the answer: a terminal if the
    caller's is one (so what is printed is what the caller would print)."""

    def __init__(self, tty: bool, text: str = "") -> None:
        super().__init__(text)
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def run_call(request: dict[str, Any]) -> dict[str, Any]:
    """One call, run as its own process would run it (:func:`entry.dispatch`),
    in the caller's environment and working directory, with its standard
    input; what it printed and its exit code. Everything it changed of this
    process (environment, directory, streams) is put back."""
    import traceback

    argv, env, cwd = request["run"], request["env"], request["cwd"]
    tty = request.get("tty") or [False, False, False]
    saved_env = dict(os.environ)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    here = os.open(".", os.O_RDONLY)
    out, err = Captured(bool(tty[1])), Captured(bool(tty[2]))
    try:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.stdin = Captured(bool(tty[0]), request.get("stdin") or "")
        sys.stdout, sys.stderr = out, err
        try:
            code = dispatch([str(word) for word in argv])
        except SystemExit as exc:  # as the interpreter turns one into an exit code
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=err)
        except Exception:  # as the interpreter shows an error nothing caught
            err.write(traceback.format_exc())
            code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)
        os.fchdir(here)
        os.close(here)
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "code": code}
