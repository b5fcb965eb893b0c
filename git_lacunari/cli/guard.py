"""`git lac guard pre-commit | pre-push | pre-merge-commit | pre-receive`, and
the hooks after the fact: `post-commit`, `commit-msg`, `post-receive`.

The installed hooks' exact calls take entry.py's fast path instead; these
are the same guards for every other spelling (``-h``, ``--json``, the
pre-commit framework's arguments).
"""

from __future__ import annotations

import click

from ..edge import Result
from ..guard.judge import judge_hook
from ..session import Session
from ..views.guard import guard_result
from .options import CONTEXT, common


@click.group("guard", context_settings=CONTEXT)
def guard() -> None:
    """What the hooks run: refuse changes to paths another agent holds.

    A board that cannot be reached lets a commit through with a warning and
    refuses a push; `git config lac.guard.offline warn|refuse` changes both.
    LAC_GUARD=off skips the guard (and says so).
    """


@guard.command("pre-commit", context_settings=CONTEXT)
@common
def guard_pre_commit_cmd(session: Session, as_json: bool) -> Result:
    """Refuse staged changes to paths held by another agent (the pre-commit hook)."""
    return guard_result(judge_hook(session, "pre-commit"))


@guard.command("pre-push", context_settings=CONTEXT)
@click.argument("remote", required=False)
@click.argument("url", required=False)
@common
def guard_pre_push_cmd(
    session: Session, as_json: bool, remote: str | None, url: str | None
) -> Result:
    """Refuse pushed commits that change paths held by another agent.

    Git runs it with REMOTE URL and the refs on standard input. Without them
    it takes the range the pre-commit framework sets (PRE_COMMIT_FROM_REF,
    PRE_COMMIT_TO_REF, PRE_COMMIT_REMOTE_NAME, PRE_COMMIT_LOCAL_BRANCH).
    """

    if (remote is None) != (url is None):
        raise click.UsageError("give both REMOTE and URL (as git does), or neither")
    return guard_result(judge_hook(session, "pre-push", remote=remote, url=url))


@guard.command("pre-merge-commit", context_settings=CONTEXT)
@common
def guard_pre_merge_commit_cmd(session: Session, as_json: bool) -> Result:
    """Refuse a merge commit that changes a path held by another agent.

    Its own changes (where the result differs from every parent) and the
    changes of the commits it brings in that no remote has yet.
    """
    return guard_result(judge_hook(session, "pre-merge-commit"))


@guard.command("pre-receive", context_settings=CONTEXT)
@common
def guard_pre_receive_cmd(session: Session, as_json: bool) -> Result:
    """On a server: judge a whole push (git's `<old> <new> <ref>` lines on stdin).

    Only commits the server does not have yet; the pusher from `git push -o
    lac.agent=NAME`, or from the variable `lac.guard.server.pusher-env` names.
    A board that cannot answer refuses the push (`lac.guard.server.offline`).
    """
    return guard_result(judge_hook(session, "pre-receive"))


@guard.command("post-commit", context_settings=CONTEXT)
@common
def guard_post_commit_cmd(session: Session, as_json: bool) -> Result:
    """Tell the board where your claims' branches stand (the post-commit hook).

    Never refuses: the commit is made. The forecast and landing read the tips.
    """
    from ..guard.after import post_commit

    return post_commit(session)


@guard.command("commit-msg", context_settings=CONTEXT)
@click.argument("message_file", metavar="MESSAGE_FILE")
@common
def guard_commit_msg_cmd(session: Session, as_json: bool, message_file: str) -> Result:
    """Name your claims' tasks in the commit message (the commit-msg hook).

    Adds a `Lac-Task: ID` trailer for each of your claims on the branch
    checked out, so the work is recognised when it lands rebased or
    squashed. Never refuses; `git config lac.trailer false` turns it off.
    """
    from ..guard.after import commit_msg

    return commit_msg(session, message_file)


@guard.command("post-receive", context_settings=CONTEXT)
@common
def guard_post_receive_cmd(session: Session, as_json: bool) -> Result:
    """On a server: settle landing claims a push to the destination landed.

    Reads git's `<old> <new> <ref>` lines on stdin. The destination is the
    server's lac.target (a branch), else its HEAD branch, main or master.
    Never refuses.
    """
    from ..guard.after import post_receive
    from ..guard.judge import read_stdin

    return post_receive(read_stdin())


# Edit time: the agent harnesses' hook and its helper.
from .agents import guard_edit_cmd, guard_edit_helper_cmd, guard_probe_cmd  # noqa: E402

guard.add_command(guard_edit_cmd)
guard.add_command(guard_probe_cmd)
guard.add_command(guard_edit_helper_cmd)
