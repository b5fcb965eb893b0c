"""One landing rule, judged by commits, told truthfully: a worker's clone and
a bare server with the real server hooks (`hooks install --server`), real
commits and pushes, both backends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, git, lac_process
from .test_guard import run_git
from .test_landing_flow import hooked, landing, never_saw, push, server, state, work

Lac = Callable[..., Result]
__all__ = ["landing", "server"]  # fixtures, used by name


def three_commit_line(lac: Lac, repo: Path) -> list[str]:
    """Task #1 (core/auth.py) claimed by dana on branch feat: three commits,
    each changing core/auth.py (named by the commit-msg hook), then `done`."""
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    rows = [f"row {n}\n" for n in range(12)]
    (repo / "core" / "auth.py").write_text("".join(rows))
    git(repo, "add", "core/auth.py")
    git(repo, "commit", "-qm", "auth as it was", "--no-verify")
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0
    made = []
    for n in (1, 5, 9):
        rows[n] = f"row {n} by dana\n"
        made.append(work(repo, "feat", "core/auth.py", "".join(rows)))
    done = lac("done", "1", "--as", "dana", "--json")
    assert done.code == 0 and done.json["landing"] is True, done.err
    return made


def test_the_middle_commit_cherry_picked_settles_nothing(
    lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """The server received the whole line (its branch), then main got only
    the middle commit: neither its post-receive nor a sweep settles the
    claim; the rest of the line picked, both see it landed."""
    hooked(server, repo, board_url)
    first, middle, last = three_commit_line(lac, repo)
    assert push(repo, "dana", "feat").code == 0  # the server has the line
    git(repo, "checkout", "-q", "main")
    git(repo, "cherry-pick", middle)
    assert "Lac-Task: 1" in git(repo, "log", "-1", "--format=%B")
    pushed = push(repo, "dana", "main")
    assert pushed.code == 0, pushed.err
    assert "landed" not in pushed.err, pushed.err
    swept = lac("sweep", "--json")
    assert swept.json["landed"] == [] and swept.json["landing"][0]["task"] == 1
    assert state(lac, 1) == ("claimed", True)
    refused = lac("lock", "core/auth.py", "--as", "erin")
    assert refused.code == 1 and "dana holds core/auth.py" in refused.err
    git(repo, "cherry-pick", last, first)  # every commit now, out of order
    pushed = push(repo, "dana", "main")
    assert "task #1 landed (cherry-picked); its locks are released" in pushed.err, pushed.err
    assert state(lac, 1) == ("done", False)


def test_sweep_alone_judges_by_commits_too(lac: Lac, repo: Path, server: Path) -> None:
    """No server hook: the worker's sweep is the judge, by the same rule."""
    _, middle, _ = three_commit_line(lac, repo)
    git(repo, "checkout", "-q", "main")
    git(repo, "cherry-pick", middle)
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    assert lac("sweep", "--json").json["landed"] == []
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, "merge", "-q", "--squash", "feat")
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    git(repo, "push", "-q", "--no-verify", "-f", "origin", "main")
    swept = lac("sweep", "--json")
    assert [(s["task"], s["how"]) for s in swept.json["landed"]] == [(1, "squashed")]


def test_done_judges_by_the_same_rule(lac: Lac, repo: Path, server: Path) -> None:
    """`done` of a line whose middle commit alone is in the destination is
    landing, not done."""
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    rows = [f"row {n}\n" for n in range(12)]
    (repo / "core" / "auth.py").write_text("".join(rows))
    git(repo, "add", "core/auth.py")
    git(repo, "commit", "-qm", "auth as it was", "--no-verify")
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0
    made = []
    for n in (1, 5, 9):
        rows[n] = f"row {n} by dana\n"
        made.append(work(repo, "feat", "core/auth.py", "".join(rows)))
    git(repo, "checkout", "-q", "main")
    git(repo, "cherry-pick", made[1])
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    git(repo, "checkout", "-q", "feat")
    done = lac("done", "1", "--as", "dana", "--json")
    assert done.code == 0 and done.json["landing"] is True and done.json["how"] is None


def test_a_rebased_one_commit_line_is_told_rebased(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """dana's one commit, rebased onto a main that changed the line beside
    hers, pushed to a server that never saw her tip: rebased, not squashed;
    the sweep of her clone, which has the line, says the same."""
    hooked(server, repo, board_url)
    git(repo, "checkout", "-q", "main")
    (repo / "NEWS").write_text("moved on\n")
    git(repo, "add", "NEWS")
    git(repo, "commit", "-qm", "main moves", "--no-verify")
    assert push(repo, "dana", "main").code == 0
    git(repo, "checkout", "-q", "-b", "rebased", "feat")
    git(repo, "rebase", "-q", "main")
    pushed = run_git(
        repo, "push", "--no-verify", "-o", "lac.agent=dana", "origin", "rebased:main", agent="dana"
    )
    assert pushed.code == 0, pushed.err
    assert never_saw(server, landing)
    assert "task #1 landed (rebased); its locks are released" in pushed.err, pushed.err
    landed = [e for e in lac("log", "1", "--json").json["events"] if e["kind"] == "landed"]
    assert [e["detail"]["how"] for e in landed] == ["rebased"]


# --- drain settles through the same rule ---------------------------------------------

COMMITS = (
    "mkdir -p out && echo $LAC_TASK_ID > out/a && git add out/a && "
    'git -c user.name=d -c user.email=d@x commit -qm "task $LAC_TASK_ID" --no-verify'
)


@pytest.mark.parametrize("worktree", [False, True], ids=["here", "worktree"])
def test_a_drained_task_with_unlanded_commits_is_landing(
    lac: Lac, repo: Path, server: Path, worktree: bool
) -> None:
    """The command commits (on a branch of its own, or in the task's
    worktree on lac/task-1), nothing reaches origin/main: the task is
    landing and keeps its write lock, as `done` would have it."""
    assert lac("task", "add", "build", "--lane", "b", "--write", "out/a").code == 0
    if not worktree:
        git(repo, "checkout", "-q", "-b", "drained")
    flags = ["--worktree"] if worktree else []
    ran = lac(
        "drain", "--lane", "b", "--once", *flags, "--json", "--as", "d1", "--", "sh", "-c", COMMITS
    )
    assert ran.code == 0, ran.err
    assert ran.json["done"] == [1] and ran.json["landing"] == [1]
    assert state(lac, 1) == ("claimed", True)
    locks = lac("locks", "--json").json["locks"]
    assert [(lk["pattern"], lk["agent"]) for lk in locks] == [("out/a", "d1")]
    branch = "lac/task-1" if worktree else "drained"
    assert lac("show", "1", "--json").json["task"]["branch"] == branch
    # Pushed to the destination, the sweep settles it.
    git(repo, "push", "-q", "--no-verify", "origin", f"{branch}:main")
    git(repo, "fetch", "-q", "origin")
    swept = lac("sweep", "--json")
    assert [(s["task"], s["how"]) for s in swept.json["landed"]] == [(1, "merged")]


def test_a_drained_task_with_nothing_to_land_is_done(lac: Lac, repo: Path, server: Path) -> None:
    assert lac("task", "add", "check", "--lane", "b", "--write", "out/a").code == 0
    ran = lac("drain", "--lane", "b", "--once", "--json", "--as", "d1", "--", "true")
    assert ran.code == 0 and ran.json["done"] == [1] and ran.json["landing"] == [], ran.err
    assert state(lac, 1) == ("done", False)
    assert lac("locks", "--json").json["locks"] == []


def test_drain_refuses_a_target_that_names_nothing_before_any_claim(
    lac: Lac, repo: Path, server: Path
) -> None:
    assert lac("task", "add", "check", "--lane", "b").code == 0
    git(repo, "config", "lac.target", "no-such-branch")
    ran = lac("drain", "--lane", "b", "--once", "--", "true")
    assert ran.code == 2 and "lac.target" in ran.err and "Traceback" not in ran.err
    assert state(lac, 1) == ("open", False)


# --- releasing the base of a stack ----------------------------------------------------


def test_release_of_a_landing_claim_another_is_built_on_is_refused(
    landing: str, lac: Lac, repo: Path, server: Path
) -> None:
    """erin's claim --next stacks on dana's landing #1: dana's `release 1`
    is refused (one line naming #2 and what to do), nothing changed;
    `--force --reason` releases it; with erin's claim gone, a plain release
    is as before."""
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    got = lac("claim", "--next", "--as", "erin", "--json")
    assert got.code == 0 and got.json["task"]["id"] == 2, got.err
    before = lac("log", "--json").json["events"]
    refused = lac("release", "1", "--as", "dana")
    assert refused.code == 1, refused.err
    lines = refused.err.strip().splitlines()
    assert len(lines) == 1, refused.err
    assert "task #1 is landing and task #2 (erin) is built on it" in lines[0]
    assert "git lac release 1 --force --reason TEXT" in lines[0]
    as_json = lac("release", "1", "--as", "dana", "--json")
    assert as_json.code == 1 and as_json.json["refused"] == {
        "reason": "built_on",
        "task": 1,
        "built_on_by": [2],
        "holder": "erin",
    }, as_json.out
    assert lac("log", "--json").json["events"] == before
    assert state(lac, 1) == ("claimed", True)
    forced = lac("release", "1", "--as", "dana", "--force", "--reason", "replaced")
    assert forced.code == 0 and "released: task #1 is open again" in forced.out, forced.err
    assert state(lac, 1) == ("open", False)


def test_release_of_a_stack_base_once_the_stacked_claim_is_gone(
    landing: str, lac: Lac, repo: Path, server: Path
) -> None:
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    assert lac("claim", "--next", "--as", "erin").code == 0
    assert lac("release", "2", "--as", "erin").code == 0
    released = lac("release", "1", "--as", "dana")
    assert released.code == 0, released.err
    assert state(lac, 1) == ("open", False)


# --- a plain `git push` says who pushes ---------------------------------------------


def push_options(repo: Path) -> list[str]:
    return run_git(repo, "config", "--get-all", "push.pushOption", agent="x").out.split()


def test_a_plain_push_of_the_holders_rebased_line_passes_the_server(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """Installed beside a server that takes push options, the hooks set the
    clone's push.pushOption: dana's plain `git push` of her rebased line
    (her own held path) is hers, and lands."""
    hooked(server, repo, board_url)
    assert push_options(repo) == []  # installed before the server took options
    installed = lac("hooks", "install", "--as", "dana", "--json")
    assert installed.code == 0, installed.err
    instance = lac("whoami", "--json", "--as", "dana").json["instance"]
    options = ["lac.agent=dana", f"lac.instance={instance}"]
    assert installed.json["push_options"] == options
    assert push_options(repo) == options
    again = lac("hooks", "install", "--as", "dana")  # idempotent: replaced, not added
    assert "push options: lac.agent=dana lac.instance=" in again.out, again.out
    assert push_options(repo) == options
    git(repo, "checkout", "-q", "main")
    (repo / "NEWS").write_text("moved on\n")
    git(repo, "add", "NEWS")
    git(repo, "commit", "-qm", "main moves", "--no-verify")
    assert push(repo, "fred", "main").code == 0
    git(repo, "checkout", "-q", "feat")
    git(repo, "rebase", "-q", "main")
    pushed = run_git(repo, "push", "origin", "feat:main", agent="dana")
    assert pushed.code == 0, pushed.err
    assert "task #1 landed (rebased)" in pushed.err, pushed.err


def test_push_options_are_not_set_for_a_server_that_refuses_them(
    lac: Lac, repo: Path, server: Path
) -> None:
    """A server without the hooks does not advertise push options, and git
    would fail every push that carries them: none are set, and it is said."""
    installed = lac("hooks", "install", "--json")
    assert installed.code == 0 and installed.json["push_options"] is None, installed.err
    said = lac("hooks", "install")
    assert "push options: not set (origin does not take push options" in said.out, said.out
    assert push_options(repo) == []
    assert run_git(repo, "push", "-q", "origin", "main", agent="dana").code == 0


def test_an_explicit_push_option_still_names_the_pusher(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    hooked(server, repo, board_url)
    assert lac("hooks", "install", "--as", "dana").code == 0
    git(repo, "checkout", "-q", "feat")
    # -o replaces the configured options: fred says who he is, and is refused.
    (repo / "core" / "auth.py").write_text("fred's\n")
    git(repo, "commit", "-qam", "fred", "--no-verify")
    refused = run_git(
        repo, "push", "--no-verify", "-o", "lac.agent=fred", "origin", "feat:fred", agent="fred"
    )
    assert refused.code != 0 and "dana holds core/auth.py" in refused.err, refused.err


# --- init --fleet -----------------------------------------------------------------


def test_init_fleet_sets_the_fleet_presets(lac: Lac, repo: Path, board_url: str | None) -> None:
    url = ["--url", board_url] if board_url else []
    got = lac("init", *url, "--fleet", "--json")
    assert got.code == 0, got.err
    assert got.json["fleet"] is True
    assert (got.json["stale_after"], got.json["landing_period"]) == (600.0, 7200.0)
    assert git(repo, "config", "lac.edit.undeclared").strip() == "lock"
    said = lac("init", *url, "--fleet")
    assert "claims stale after 10m00s" in said.out, said.out
    assert "fleet: landing claims expire after 2h00m of silence" in said.out, said.out
    assert "`git lac keeper`" in said.out
    # An explicit setting wins over the preset.
    mine = lac("init", *url, "--fleet", "--landing-period", "30m", "--json")
    assert mine.json["landing_period"] == 1800.0 and mine.json["stale_after"] == 600.0
    plain = lac("init", *url, "--json")  # without --fleet, nothing is reset
    assert plain.json["fleet"] is False and plain.json["landing_period"] == 1800.0


# --- one name, two clones ----------------------------------------------------------


def test_the_server_judges_one_name_in_two_clones_by_instance(
    landing: str, lac: Lac, repo: Path, server: Path, tmp_path: Path, board_url: str | None
) -> None:
    """dana's first clone holds core/auth.py (landing #1). A second clone of
    hers, same name, pushes a change to it without its pre-push: saying its
    instance, it is refused, naming the holder's instance and `instance
    adopt`; saying none, once the name holds paths in both clones, refused
    too, with how to say it. The first clone's own push passes."""
    hooked(server, repo, board_url)
    other = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(server), str(other))
    git(other, "config", "lac.url", board_url or f"sqlite://{repo / '.git/lacunari/board.db'}")
    env = {"LAC_AGENT": "dana"}
    second = lac_process(other, "whoami", "--json", env=env).json["instance"]
    first = lac("whoami", "--json", "--as", "dana").json["instance"]
    assert first != second
    (other / "core").mkdir(exist_ok=True)
    (other / "core" / "auth.py").write_text("the second clone's\n")
    git(other, "add", "core/auth.py")
    git(other, "commit", "-qm", "over the first clone's claim", "--no-verify")
    said = run_git(
        other,
        "push",
        "--no-verify",
        "-o",
        "lac.agent=dana",
        "-o",
        f"lac.instance={second}",
        "origin",
        "HEAD:main",
        agent="dana",
    )
    assert said.code != 0, said.err
    assert f"core/auth.py is held by dana's instance {first}" in said.err, said.err
    assert f"git lac instance adopt {first}" in said.err
    # Before the name holds anything there, a push that says no instance is
    # judged by name (one working tree holds: it cannot be told apart).
    unsaid = run_git(
        other, "push", "--no-verify", "-o", "lac.agent=dana", "origin", "HEAD:side", agent="dana"
    )
    assert unsaid.code == 0, unsaid.err
    assert lac_process(other, "lock", "docs/notes.md", env=env).code == 0
    unsaid = run_git(
        other, "push", "--no-verify", "-o", "lac.agent=dana", "origin", "HEAD:main", agent="dana"
    )
    assert unsaid.code != 0, unsaid.err
    assert "holds paths in 2 working trees and this push does not say which" in unsaid.err
    # The holder's own clone, saying its instance, pushes its line.
    own = run_git(
        repo,
        "push",
        "--no-verify",
        "-o",
        "lac.agent=dana",
        "-o",
        f"lac.instance={first}",
        "origin",
        "feat",
        agent="dana",
    )
    assert own.code == 0, own.err
    bad = run_git(
        repo,
        "push",
        "--no-verify",
        "-o",
        "lac.agent=dana",
        "-o",
        "lac.instance=../x",
        "origin",
        "feat:f2",
        agent="dana",
    )
    assert bad.code != 0 and "is not an instance id" in bad.err, bad.err
