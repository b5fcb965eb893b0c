"""Locks that last until the work lands (issue 25), in real repositories: a
worker's clone, a bare server, real hooks fired by real commits and pushes,
both backends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import pytest

from .conftest import Boards, Result, git, lac_process
from .test_guard import run_git

Lac = Callable[..., Result]


@pytest.fixture
def server(repo: Path, tmp_path: Path) -> Path:
    """A bare server the worker's repository pushes to as origin (no hooks)."""
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    return bare


def hooked(server: Path, repo: Path, board_url: str | None) -> None:
    """The server's hooks (`hooks install --server`) on the test's board."""
    installed = lac_process(server, "hooks", "install", "--server", "--json")
    assert installed.code == 0, installed.err
    assert [h["hook"] for h in installed.json["hooks"]] == ["pre-receive", "post-receive"]
    if board_url is None:
        git(server, "config", "lac.url", f"sqlite://{repo / '.git/lacunari/board.db'}")
        return
    # A PostgreSQL server set up as the README says: the server's URL, and the
    # board named by lac.board (not by a search_path in the URL).
    url, _, query = board_url.partition("?")
    schema = unquote(query).rpartition("search_path=")[2]
    assert schema.startswith("lac_t_") and "&" not in query, board_url
    git(server, "config", "lac.url", url)
    git(server, "config", "lac.board", schema)


def work(repo: Path, branch: str, path: str, text: str, *, agent: str = "dana") -> str:
    """A commit on ``branch`` (made if new), through real hooks, as ``agent``."""
    if git(repo, "branch", "--list", branch).strip():
        git(repo, "checkout", "-q", branch)
    else:
        git(repo, "checkout", "-q", "-b", branch)
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    git(repo, "add", path)
    done = run_git(repo, "commit", "-qm", f"{branch}: {path}", agent=agent)
    assert done.code == 0, done.err
    return git(repo, "rev-parse", "HEAD").strip()


def erin_stacks(lac: Lac, repo: Path, landing: str, text: str) -> str:
    """erin's claim --next of the open task on core/auth.py, started from
    dana's landing line (branch erin-line at its tip), and her commit of the
    file on it (through the hooks): that commit."""
    git(repo, "checkout", "-q", "-b", "erin-line", landing)
    assert lac("claim", "--next", "--as", "erin").code == 0
    return work(repo, "erin-line", "core/auth.py", text, agent="erin")


def push(repo: Path, agent: str, *refs: str, verify: bool = False) -> Result:
    """``git push origin REFS`` as ``agent`` (the push option names it to the
    server), the client's pre-push guard skipped unless ``verify``."""
    skip = [] if verify else ["--no-verify"]
    return run_git(
        repo, "push", "-q", *skip, "-o", f"lac.agent={agent}", "origin", *refs, agent=agent
    )


def state(lac: Lac, task: int) -> tuple[str, bool]:
    shown = lac("show", str(task), "--json")
    assert shown.code == 0, shown.err
    return shown.json["task"]["state"], shown.json["task"]["landing"]


@pytest.fixture
def landing(lac: Lac, repo: Path, server: Path) -> str:
    """Task #1 (writes core/auth.py) claimed by dana on branch feat, a commit
    made, and `done` before any push: the claim is landing. Its tip."""
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0
    tip = work(repo, "feat", "core/auth.py", "dana's login\n")
    done = lac("done", "1", "--as", "dana", "--json")
    assert done.code == 0, done.err
    assert done.json["landing"] is True and done.json["destination"] == "origin/main"
    assert done.json["task"]["tip"] == tip  # the post-commit hook told the board
    return tip


def test_done_before_push_keeps_the_lock_and_refuses_another(
    landing: str, lac: Lac, repo: Path
) -> None:
    assert state(lac, 1) == ("claimed", True)
    listed = lac("tasks")
    assert "#1     landing" in listed.out, listed.out
    assert "landing   since" in lac("show", "1").out
    # The write lock still refuses others not built on it (erin works on
    # main): a lock, a claim of a task on the same path, and erin's commit
    # of the file (the pre-commit guard).
    git(repo, "checkout", "-q", "main")
    refused = lac("lock", "core/auth.py", "--as", "erin")
    assert refused.code == 1 and "dana holds core/auth.py on task #1" in refused.err
    assert lac("task", "add", "more auth", "--write", "core/auth.py").code == 0
    assert lac("claim", "2", "--as", "erin").code == 1
    (repo / "core" / "auth.py").write_text("erin's login\n")
    git(repo, "add", "core/auth.py")
    commit = run_git(repo, "commit", "-qm", "erin", agent="erin")
    assert commit.code != 0 and "core/auth.py" in commit.err
    log = lac("log", "1", "--json").json["events"]
    landing_event = next(e for e in log if e["kind"] == "landing")
    assert landing_event["detail"]["kept"] == ["core/auth.py"]
    assert landing_event["detail"]["tip"] == landing


def test_read_locks_go_at_done_write_locks_stay(lac: Lac, repo: Path, server: Path) -> None:
    assert lac("task", "add", "t", "--write", "src/a.py", "--read", "docs/").code == 0
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0
    work(repo, "feat", "src/a.py", "a\n")
    assert lac("heartbeat", "--as", "dana").code == 0  # no hooks here: the heartbeat tracks
    assert lac("done", "1", "--as", "dana").code == 0
    locks = lac("locks", "--json").json["locks"]
    assert [(lk["pattern"], lk["mode"]) for lk in locks] == [("src/a.py", "write")]


def test_a_push_to_the_destination_releases_it_at_once(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    hooked(server, repo, board_url)
    # A push of the branch alone lands nothing.
    pushed = push(repo, "dana", "feat", verify=True)
    assert pushed.code == 0, pushed.err
    assert state(lac, 1) == ("claimed", True)
    # The moment the ref moved: a post-receive hook that was there before
    # ours runs first (kept as post-receive.legacy) and notes the time.
    stamp = server / "moved-at"
    legacy = server / "hooks" / "post-receive.legacy"
    legacy.write_text(f"#!/bin/sh\ncat >/dev/null\ndate +%s.%N > '{stamp}'\n")
    legacy.chmod(0o755)
    pushed = run_git(repo, "push", "-o", "lac.agent=dana", "origin", "feat:main", agent="dana")
    assert pushed.code == 0, pushed.err
    # The post-receive ran before the push returned: the board says done now,
    # and the release was recorded within a second of the ref moving.
    assert state(lac, 1) == ("done", False)
    moved = float(stamp.read_text())
    released = next(e for e in lac("log", "1", "--json").json["events"] if e["kind"] == "landed")
    assert 0 <= released["at"] - moved < 1.0, released["at"] - moved
    assert "task #1 landed (merged); its locks are released" in pushed.err
    assert lac("locks", "--json").json["locks"] == []
    landed = [e for e in lac("log", "1", "--json").json["events"] if e["kind"] == "landed"]
    assert [e["detail"]["how"] for e in landed] == ["merged"]
    assert landed[0]["detail"]["locks"] == ["core/auth.py"]
    assert lac("lock", "core/auth.py", "--as", "erin").code == 0


def test_without_a_server_hook_sweep_releases_it(landing: str, lac: Lac, repo: Path) -> None:
    pushed = run_git(repo, "push", "-q", "origin", "feat:main", agent="dana")
    assert pushed.code == 0, pushed.err
    assert state(lac, 1) == ("claimed", True)  # nothing on the server looked
    swept = lac("sweep", "--json")
    assert swept.code == 0, swept.err
    assert swept.json["landed"] == [{"task": 1, "how": "merged", "tip": landing}]
    assert state(lac, 1) == ("done", False)
    assert lac("sweep").out.strip() == "sweep: no landing claims"


def test_without_a_server_hook_the_keeper_releases_it(
    landing: str, lac: Lac, repo: Path, tmp_path: Path, server: Path
) -> None:
    # Another clone pushes dana's branch to main; dana's clone has not fetched.
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(server), str(other))
    git(repo, "push", "-q", "--no-verify", "origin", "feat")
    git(other, "fetch", "-q", "origin")
    git(other, "push", "-q", "origin", "origin/feat:main")
    kept = lac("keeper", "--once", "--json")
    assert kept.code == 0 and kept.json["landed"] == []  # not fetched: not seen
    assert lac("sweep", "--fetch").code == 0 or True  # --fetch brings it; the keeper next
    git(repo, "fetch", "-q", "origin")
    assert state(lac, 1) == ("done", False)


def test_the_keeper_settles_what_it_sees(landing: str, lac: Lac, repo: Path) -> None:
    git(repo, "push", "-q", "--no-verify", "origin", "feat:main")
    kept = lac("keeper", "--once", "--json")
    assert kept.code == 0, kept.err
    assert kept.json["landed"] == [{"task": 1, "how": "merged", "tip": landing}]
    assert state(lac, 1) == ("done", False)


def test_sweep_fetch_sees_a_push_made_elsewhere(
    landing: str, lac: Lac, repo: Path, tmp_path: Path, server: Path
) -> None:
    git(repo, "push", "-q", "--no-verify", "origin", "feat")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(server), str(other))
    git(other, "push", "-q", "origin", "origin/feat:main")
    assert lac("sweep", "--json").json["landed"] == []  # origin/main here is old
    swept = lac("sweep", "--fetch", "--json")
    assert swept.code == 0, swept.err
    assert [x["task"] for x in swept.json["landed"]] == [1]


def test_rebased_work_is_recognised_by_its_patches(landing: str, lac: Lac, repo: Path) -> None:
    # main moves on; dana's commit is rebased onto it and pushed as new commits.
    git(repo, "checkout", "-q", "main")
    (repo / "README").write_text("moved on\n")
    git(repo, "commit", "-qam", "main moves", "--no-verify")
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    git(repo, "checkout", "-q", "-b", "rebased", "feat")
    git(repo, "rebase", "-q", "main")
    assert git(repo, "rev-parse", "HEAD").strip() != landing
    git(repo, "push", "-q", "--no-verify", "origin", "rebased:main")
    swept = lac("sweep", "--json")
    assert swept.json["landed"] == [{"task": 1, "how": "rebased", "tip": landing}]


def test_a_squash_lands_by_its_trailer_only(landing: str, lac: Lac, repo: Path) -> None:
    # Two commits: a squash of one commit is that commit's patch (rebased).
    landing = work(repo, "feat", "core/session.py", "sessions\n")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--squash", "feat")
    git(repo, "commit", "-qm", "squashed, no trailer", "--no-verify")
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    assert lac("sweep", "--json").json["landed"] == []
    assert state(lac, 1) == ("claimed", True)  # an unrecognised squash keeps its locks
    (repo / "core" / "auth.py").write_text("dana's login, reviewed\n")
    git(repo, "commit", "-qam", "review fixes", "--trailer", "Lac-Task=1", "--no-verify")
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    swept = lac("sweep", "--json")
    assert swept.json["landed"] == [{"task": 1, "how": "squashed", "tip": landing}]


def test_the_server_recognises_a_squash_whose_tip_it_never_saw(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    hooked(server, repo, board_url)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--squash", "feat")
    # git's squash message: the line's messages, their trailers indented. (A
    # message written anew with one trailer, over a one-commit line, cannot
    # be told from that commit rebased where the line is not: "rebased".)
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    assert never_saw(server, landing)
    pushed = run_git(repo, "push", "-o", "lac.agent=dana", "origin", "main", agent="dana")
    assert pushed.code == 0, pushed.err
    assert "task #1 landed (squashed)" in pushed.err
    assert state(lac, 1) == ("done", False)


# --- work the server never saw: the commit-msg hook names the task ---------------


def message(repo: Path, rev: str) -> str:
    return git(repo, "log", "-1", "--format=%B", rev)


def test_commits_on_a_claims_branch_name_its_task(landing: str, lac: Lac, repo: Path) -> None:
    assert "Lac-Task: 1" in message(repo, landing).splitlines()
    # An amend keeps one trailer, not two.
    amended = run_git(repo, "commit", "-q", "--amend", "--no-edit", agent="dana")
    assert amended.code == 0, amended.err
    assert message(repo, "HEAD").count("Lac-Task") == 1
    # Another branch, another agent, or lac.trailer false: no trailer.
    assert "Lac-Task" not in message(repo, work(repo, "other", "x.txt", "x\n"))
    assert "Lac-Task" not in message(repo, work(repo, "feat", "y.txt", "y\n", agent="erin"))
    git(repo, "config", "lac.trailer", "false")
    assert "Lac-Task" not in message(repo, work(repo, "feat", "z.txt", "z\n"))


def test_a_foreign_commit_msg_hook_runs_first_and_may_refuse(
    landing: str, lac: Lac, repo: Path
) -> None:
    legacy = repo / ".git" / "hooks" / "commit-msg.legacy"
    legacy.write_text('#!/bin/sh\nprintf "\\nReviewed-by: ci\\n" >> "$1"\n')
    legacy.chmod(0o755)
    tip = work(repo, "feat", "core/auth.py", "again\n")
    assert message(repo, tip).strip().splitlines()[-2:] == ["Reviewed-by: ci", "Lac-Task: 1"]
    legacy.write_text("#!/bin/sh\nexit 3\n")
    (repo / "core" / "auth.py").write_text("refused\n")
    refused = run_git(repo, "commit", "-qam", "no", agent="dana")
    assert refused.code != 0 and git(repo, "rev-parse", "HEAD").strip() == tip


def test_an_empty_message_is_still_aborted(landing: str, lac: Lac, repo: Path) -> None:
    # The editor leaves git's comments only (a verbose commit: and the diff):
    # git aborts, and the trailer does not make the message something.
    (repo / "core" / "auth.py").write_text("more\n")
    git(repo, "add", "core/auth.py")
    for verbose in ([], ["-v"]):
        aborted = run_git(repo, "commit", *verbose, env={"GIT_EDITOR": "true"}, agent="dana")
        assert aborted.code != 0 and "empty commit message" in aborted.err, aborted.err
        assert git(repo, "rev-parse", "HEAD").strip() == landing
    editor = repo.parent / "editor.sh"
    editor.write_text(
        '#!/bin/sh\nprintf "Said something\\n" | cat - "$1" > "$1.x" && mv "$1.x" "$1"\n'
    )
    editor.chmod(0o755)
    made = run_git(repo, "commit", "-v", "-q", env={"GIT_EDITOR": str(editor)}, agent="dana")
    assert made.code == 0, made.err
    assert message(repo, "HEAD").strip().splitlines() == ["Said something", "", "Lac-Task: 1"]


def test_the_commit_msg_hook_never_refuses(lac: Lac, repo: Path) -> None:
    # The hook's own call (entry's fast path) and every other spelling (click).
    for args in (["/nonexistent/COMMIT_EDITMSG"], [str(repo)], ["--json", str(repo / "none")]):
        got = lac_process(repo, "guard", "commit-msg", *args)
        assert got.code == 0 and "Traceback" not in got.err, got.err
    assert lac_process(repo, "guard", "commit-msg").code == 2  # git always gives the file


def never_saw(server: Path, tip: str) -> bool:
    return run_git(server, "cat-file", "-e", f"{tip}^{{commit}}", agent="x").code != 0


def main_moves(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    (repo / "README").write_text("moved on\n")
    git(repo, "commit", "-qam", "main moves", "--no-verify")
    git(repo, "push", "-q", "--no-verify", "origin", "main")


def test_rebase_then_push_releases_it_on_a_server_that_never_saw_the_tip(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    tip = work(repo, "feat", "core/session.py", "sessions\n")  # two commits, both named
    hooked(server, repo, board_url)
    main_moves(repo)
    git(repo, "checkout", "-q", "-b", "rebased", "feat")
    git(repo, "rebase", "-q", "main")
    # Pushed without the pre-push guard, which would tell the board the new tip.
    pushed = run_git(
        repo, "push", "--no-verify", "-o", "lac.agent=dana", "origin", "rebased:main", agent="dana"
    )
    assert pushed.code == 0, pushed.err
    assert never_saw(server, tip) and never_saw(server, landing)
    assert "task #1 landed (rebased); its locks are released" in pushed.err
    assert state(lac, 1) == ("done", False)
    landed = [e for e in lac("log", "1", "--json").json["events"] if e["kind"] == "landed"]
    assert [(e["detail"]["how"], e["detail"]["tip"]) for e in landed] == [("rebased", tip)]


def test_a_squash_merge_releases_it_on_a_server_that_never_saw_the_tip(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    tip = work(repo, "feat", "core/session.py", "sessions\n")
    hooked(server, repo, board_url)
    main_moves(repo)
    # git's own squash message: the squashed commits' messages, indented.
    git(repo, "merge", "-q", "--squash", "feat")
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    assert "    Lac-Task: 1" in message(repo, "HEAD").splitlines()
    pushed = run_git(
        repo, "push", "--no-verify", "-o", "lac.agent=dana", "origin", "main", agent="dana"
    )
    assert pushed.code == 0, pushed.err
    assert never_saw(server, tip)
    assert "task #1 landed (squashed)" in pushed.err
    assert state(lac, 1) == ("done", False)


@pytest.mark.parametrize(
    "text",
    [
        "unrelated",
        "Lac-Task: 11",
        "Lac-Task: 1x",
        "Not-Lac-Task: 1",
        "see Lac-Task: 1 in the docs",
        "Lac-Task: " + "9" * 5000,
    ],
)
def test_an_unrelated_push_releases_nothing(
    text: str, landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    hooked(server, repo, board_url)
    git(repo, "checkout", "-q", "main")
    (repo / "README").write_text("unrelated\n")
    git(repo, "commit", "-qam", f"unrelated\n\n{text}", "--no-verify")
    pushed = run_git(
        repo, "push", "--no-verify", "-o", "lac.agent=dana", "origin", "main", agent="dana"
    )
    assert pushed.code == 0, pushed.err
    assert "landed" not in pushed.err and "Traceback" not in pushed.err
    assert state(lac, 1) == ("claimed", True)
    assert lac("sweep", "--json").json["landed"] == []


def test_sweep_in_a_clone_that_never_had_the_tip(
    landing: str,
    lac: Lac,
    repo: Path,
    server: Path,
    tmp_path: Path,
    board_url: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    main_moves(repo)
    git(repo, "checkout", "-q", "-b", "rebased", "feat")
    # Without a push to read, a clone looks at what the destination gained
    # since the claim, by committer date: the rebase commits now, as git does
    # outside this suite's fixed dates.
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    git(repo, "rebase", "-q", "main")
    git(repo, "push", "-q", "--no-verify", "origin", "rebased:main")
    # A keeper's clone: the server's history, the board's URL, not dana's tip.
    elsewhere = tmp_path / "keeper"
    git(tmp_path, "clone", "-q", str(server), str(elsewhere))
    git(elsewhere, "config", "lac.url", board_url or f"sqlite://{repo / '.git/lacunari/board.db'}")
    assert never_saw(elsewhere, landing)
    swept = lac_process(elsewhere, "sweep", "--json", env={"LAC_AGENT": "keeper"})
    assert swept.code == 0, swept.err
    assert swept.json["landed"] == [{"task": 1, "how": "rebased", "tip": landing}]


def test_done_now_keeps_todays_behaviour(lac: Lac, repo: Path, server: Path) -> None:
    assert lac("task", "add", "t", "--write", "src/a.py").code == 0
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0
    work(repo, "feat", "src/a.py", "a\n")
    done = lac("done", "1", "--now", "--as", "dana", "--json")
    assert done.code == 0 and done.json["landing"] is False
    assert state(lac, 1) == ("done", False)
    assert lac("locks", "--json").json["locks"] == []


def test_done_now_ends_a_landing_claim(landing: str, lac: Lac) -> None:
    assert lac("done", "1", "--now", "--as", "dana").code == 0
    assert state(lac, 1) == ("done", False)
    assert lac("lock", "core/auth.py", "--as", "erin").code == 0


def test_work_already_in_the_destination_is_done_at_once(
    lac: Lac, repo: Path, server: Path
) -> None:
    assert lac("task", "add", "t", "--write", "src/a.py").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    work(repo, "main", "src/a.py", "a\n")
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    done = lac("done", "1", "--as", "dana", "--json")
    assert done.code == 0, done.err
    assert (done.json["landing"], done.json["how"]) == (False, "merged")
    assert state(lac, 1) == ("done", False)


def test_an_abandoned_landing_is_released(landing: str, lac: Lac) -> None:
    released = lac("release", "1", "--as", "dana")
    assert released.code == 0, released.err
    assert state(lac, 1) == ("open", False)
    assert lac("lock", "core/auth.py", "--as", "erin").code == 0
    # Claimed again, the claim starts with no branch, tip or landing.
    assert lac("unlock", "core/auth.py", "--as", "erin").code == 0
    assert lac("claim", "1", "--as", "erin").code == 0
    task = lac("show", "1", "--json").json["task"]
    assert task["landing"] is False and task["landing_since"] is None


def test_another_agent_releases_an_abandoned_landing_with_a_reason(landing: str, lac: Lac) -> None:
    assert lac("release", "1", "--as", "erin").code == 1
    forced = lac("release", "1", "--as", "erin", "--force", "--reason", "branch abandoned")
    assert forced.code == 0, forced.err
    assert state(lac, 1) == ("open", False)


def test_a_silent_landing_claim_expires_after_the_landing_period(
    lac: Lac, repo: Path, server: Path, boards: Boards
) -> None:
    assert lac("init", "--landing-period", "2h").code == 0
    assert lac("task", "add", "t", "--write", "src/a.py").code == 0
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0
    work(repo, "feat", "src/a.py", "a\n")
    assert lac("heartbeat", "--as", "dana").code == 0
    assert lac("done", "1", "--as", "dana").code == 0
    # Silent for longer than the claim's 30m stale-after, less than the 2h
    # landing period: it stays.
    boards.backdate(1, 3600)
    assert lac("keeper", "--once", "--json").json["expired"] == []
    assert state(lac, 1) == ("claimed", True)
    boards.backdate(1, 3700)  # silent for 2h 1m 40s now
    expired = lac("keeper", "--once", "--json")
    assert [e["task"] for e in expired.json["expired"]] == [1]
    assert state(lac, 1) == ("open", False)
    assert lac("locks", "--json").json["locks"] == []


def test_a_landing_claims_holder_keeps_it_alive_by_heartbeat(
    landing: str, lac: Lac, boards: Boards
) -> None:
    boards.backdate(1, 20 * 3600)
    assert lac("heartbeat", "--as", "dana").code == 0
    boards.backdate(1, 20 * 3600)
    assert lac("keeper", "--once", "--json").json["expired"] == []
    assert state(lac, 1) == ("claimed", True)


def test_a_new_commit_after_done_moves_the_tip_and_lands_it(
    landing: str, lac: Lac, repo: Path
) -> None:
    # Review asked for one more commit: the old tip reaching main is not enough.
    newer = work(repo, "feat", "core/auth.py", "dana's login, reviewed\n")
    assert lac("show", "1", "--json").json["task"]["tip"] == newer
    git(repo, "push", "-q", "--no-verify", "origin", f"{landing}:refs/heads/main")
    assert lac("sweep", "--json").json["landed"] == []
    git(repo, "push", "-q", "--no-verify", "origin", "feat:main")
    assert [x["tip"] for x in lac("sweep", "--json").json["landed"]] == [newer]


# --- hostile and unlucky inputs ---------------------------------------------------


def test_a_target_that_names_nothing_is_refused_and_nothing_written(
    lac: Lac, repo: Path, server: Path
) -> None:
    assert lac("task", "add", "t", "--write", "src/a.py").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    git(repo, "config", "lac.target", "origin/no-such-branch")
    done = lac("done", "1", "--as", "dana")
    assert done.code == 2 and "lac.target 'origin/no-such-branch' names no commit" in done.err
    assert "Traceback" not in done.err
    assert state(lac, 1) == ("claimed", False)
    assert lac("sweep").code == 2


def test_lac_target_chooses_the_destination(lac: Lac, repo: Path, server: Path) -> None:
    git(repo, "branch", "release")
    git(repo, "push", "-q", "--no-verify", "origin", "release")
    git(repo, "config", "lac.target", "origin/release")
    assert lac("task", "add", "t", "--write", "src/a.py").code == 0
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0
    work(repo, "feat", "src/a.py", "a\n")
    assert lac("heartbeat", "--as", "dana").code == 0
    assert lac("done", "1", "--as", "dana", "--json").json["destination"] == "origin/release"
    git(repo, "push", "-q", "--no-verify", "origin", "feat:main")
    assert lac("sweep", "--json").json["landed"] == []  # main is not the destination
    git(repo, "push", "-q", "--no-verify", "origin", "feat:release")
    assert [x["task"] for x in lac("sweep", "--json").json["landed"]] == [1]


def test_no_destination_at_all_is_done_at_once(lac: Lac, repo: Path) -> None:
    git(repo, "branch", "-m", "main", "trunk")  # no remote, no main, no master
    assert lac("task", "add", "t", "--write", "src/a.py").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    done = lac("done", "1", "--as", "dana", "--json")
    assert done.code == 0 and done.json["destination"] is None
    assert state(lac, 1) == ("done", False)
    swept = lac("sweep")
    assert swept.code == 2 and "no destination" in swept.err


def test_done_on_anothers_claim_is_refused_as_before(landing: str, lac: Lac) -> None:
    refused = lac("done", "1", "--as", "erin")
    assert refused.code == 1 and "dana" in refused.err
    assert state(lac, 1) == ("claimed", True)


def test_the_board_refuses_a_bad_tip_or_branch(lac: Lac, boards: Boards) -> None:
    from git_lacunari.errors import InvalidInput

    assert lac("task", "add", "t").code == 0
    board = boards("dana")
    board.claim(1)
    for bad in [(1, "feat", "not-a-commit"), (1, "two words", "a" * 40), (1, "x\u202e", "b" * 40)]:
        with pytest.raises(InvalidInput):
            board.track([bad])
    with pytest.raises(InvalidInput):
        board.land(1, branch="feat", tip="HEAD")
    assert board.track([(1, "feat", "c" * 40)]) == [1]
    assert board.track([(1, "feat", "c" * 40)]) in ([], [1])  # unchanged: harmless again


def test_settling_a_tip_that_moved_does_nothing(lac: Lac, boards: Boards) -> None:
    assert lac("task", "add", "t", "--write", "a.txt").code == 0
    board = boards("dana")
    board.claim(1)
    landing = board.land(1, branch="feat", tip="a" * 40)
    board.track([(1, "feat", "b" * 40)])  # a commit after the sweep read the claim
    assert board.settle_landed(landing, "merged") is None
    assert board.landing_claims()[0].tip == "b" * 40
    with pytest.raises(Exception, match="merged, rebased, cherry-picked, squashed"):
        board.settle_landed(board.landing_claims()[0], "guessed")


def test_post_receive_with_garbage_input_says_so_and_exits_0(
    lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    hooked(server, repo, board_url)
    got = lac_process(server, "guard", "post-receive", input="two words\n")
    assert got.code == 0 and "landing not checked" in got.err and "Traceback" not in got.err


# --- the guards warn (never refuse) where another claim changed a path undeclared ----


def test_commit_and_push_warn_of_a_path_another_claim_changed_undeclared(
    lac: Lac, repo: Path, server: Path
) -> None:
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "dana's", "--write", "docs/").code == 0
    assert lac("task", "add", "erin's", "--write", "lib/").code == 0
    git(repo, "checkout", "-q", "-b", "dana-line")
    assert lac("claim", "1", "--as", "dana").code == 0
    work(repo, "dana-line", "core/auth.py", "dana's, undeclared\n", agent="dana")
    git(repo, "checkout", "-q", "-b", "erin-line", "main")
    assert lac("claim", "2", "--as", "erin").code == 0
    (repo / "core" / "auth.py").write_text("erin's\n")
    git(repo, "add", "core/auth.py")
    commit = run_git(repo, "commit", "-qm", "erin", agent="erin")
    assert commit.code == 0, commit.err  # a warning, never a refusal
    warning = "core/auth.py is also changed by task #1 (dana), which did not declare it"
    assert warning in commit.err
    pushed = run_git(repo, "push", "-q", "origin", "erin-line", agent="erin")
    assert pushed.code == 0 and warning in pushed.err
    # A path dana's claim declares is not warned of (its lock speaks for it),
    # nor is a path nobody else changed.
    (repo / "README").write_text("erin's readme\n")
    git(repo, "add", "README")
    quiet = run_git(repo, "commit", "-qm", "erin 2", agent="erin")
    assert quiet.code == 0 and "warning" not in quiet.err


# --- claim --next prefers tasks that meet no busy path -----------------------------


@pytest.fixture
def busy(lac: Lac, repo: Path, server: Path) -> None:
    """erin's live claim changes core/auth.py without declaring it; tasks #2
    (declares core/auth.py, the better) and #3 (declares lib/x.py) are open."""
    assert lac("task", "add", "erin's", "--write", "docs/").code == 0
    git(repo, "checkout", "-q", "-b", "erin-line")
    assert lac("claim", "1", "--as", "erin").code == 0
    work(repo, "erin-line", "core/auth.py", "erin's\n", agent="erin")
    assert lac("heartbeat", "--as", "erin").code == 0
    git(repo, "checkout", "-q", "main")
    assert lac("task", "add", "auth again", "--write", "core/auth.py", "--priority", "5").code == 0
    assert lac("task", "add", "lib", "--write", "lib/x.py").code == 0


def test_claim_next_passes_over_a_task_that_meets_a_busy_path(busy: None, lac: Lac) -> None:
    got = lac("claim", "--next", "--as", "dana", "--json")
    assert got.code == 0, got.err
    assert got.json["task"]["id"] == 3
    assert got.json["passed_over"] == [{"task": 2, "meets": ["core/auth.py"], "landing": []}]
    assert got.json["start_from"] == []
    said = lac("claim", "--next", "--as", "fred")  # only #2 is left: taken, not refused
    assert said.code == 0 and "claimed: task #2" in said.out


def test_a_task_passed_over_is_one_it_could_have_taken(busy: None, lac: Lac) -> None:
    """#4 meets erin's declared docs/ too, but her lock refuses it anyway:
    not a better task passed over, and not said to be."""
    assert lac("task", "add", "docs", "--write", "docs/x.md", "--priority", "9").code == 0
    got = lac("claim", "--next", "--as", "dana", "--json")
    assert got.code == 0, got.err
    assert got.json["task"]["id"] == 3
    assert [m["task"] for m in got.json["passed_over"]] == [2]


def test_claim_next_strict_never_takes_one(busy: None, lac: Lac, repo: Path) -> None:
    git(repo, "config", "lac.next.avoid", "strict")
    assert lac("claim", "--next", "--as", "dana", "--json").json["task"]["id"] == 3
    refused = lac("claim", "--next", "--as", "fred")
    assert refused.code == 1 and "no claimable task" in refused.err
    git(repo, "config", "lac.next.avoid", "off")
    assert "claimed: task #2" in lac("claim", "--next", "--as", "fred").out


def test_claim_next_shows_why_it_passed_over(busy: None, lac: Lac, repo: Path) -> None:
    said = lac("claim", "--next", "--as", "dana")
    assert "passed over #2: its paths meet core/auth.py" in said.out
    git(repo, "config", "lac.next.avoid", "sometimes")
    bad = lac("claim", "--next", "--as", "fred")
    assert bad.code == 2 and "lac.next.avoid 'sometimes'" in bad.err


# --- ... and its own work that has not landed: start from it ---------------------


def test_claim_next_names_its_own_landing_line_to_start_from(
    landing: str, lac: Lac, repo: Path
) -> None:
    """dana's landing #1 changed core/auth.py; her own lock does not refuse
    her, and erin's refuses everyone else. Started from main, a task on that
    file would lack her change and conflict: the claim names her landing
    line to start from (branch and tip); from there her work is in its base.
    It is taken in the board's order, also with strict."""
    assert lac("task", "add", "auth again", "--write", "core/auth.py", "--priority", "5").code == 0
    assert lac("task", "add", "lib", "--write", "lib/x.py").code == 0
    got = lac("claim", "--next", "--as", "dana", "--json")
    assert got.code == 0, got.err
    assert got.json["task"]["id"] == 2
    assert got.json["passed_over"] == []
    assert got.json["start_from"] == [{"task": 1, "branch": "feat", "tip": landing, "holder": None}]
    assert lac("release", "2", "--as", "dana").code == 0
    git(repo, "config", "lac.next.avoid", "strict")
    said = lac("claim", "--next", "--as", "dana")
    assert said.code == 0 and "claimed: task #2" in said.out, said.out
    assert (
        f"start from your landing #1, branch feat at {landing[:12]}: its work is not in" in said.out
    ), said.out
    # A task that meets nothing of hers says nothing of the kind.
    other = lac("claim", "--next", "--as", "dana", "--json")
    assert other.json["task"]["id"] == 3 and other.json["start_from"] == []


def test_claim_next_sees_undeclared_files_of_its_own_landing_line(
    landing: str, lac: Lac, repo: Path
) -> None:
    """A file the landing line changed without declaring it (a commit made
    after done moves its tip) names the line too; once it lands, nothing."""
    newer = work(repo, "feat", "docs/notes.md", "dana's notes\n")
    assert lac("show", "1", "--json").json["task"]["tip"] == newer
    assert lac("task", "add", "notes", "--write", "docs/notes.md").code == 0
    got = lac("claim", "--next", "--as", "dana", "--json")
    assert got.json["task"]["id"] == 2, got.out
    assert got.json["start_from"] == [{"task": 1, "branch": "feat", "tip": newer, "holder": None}]
    assert lac("release", "2", "--as", "dana").code == 0
    git(repo, "push", "-q", "--no-verify", "origin", "feat:main")
    assert [x["task"] for x in lac("sweep", "--json").json["landed"]] == [1]
    after = lac("claim", "--next", "--as", "dana", "--json")
    assert after.json["task"]["id"] == 2 and after.json["start_from"] == []


def test_others_live_work_is_passed_over_for_its_own(landing: str, lac: Lac, repo: Path) -> None:
    """A task that meets erin's live line is passed over, saying so, for one
    that meets only dana's own landing line (she starts from it), whatever
    their priorities. erin's own line in work does not steer erin."""
    git(repo, "checkout", "-q", "-b", "erin-line", "main")
    assert lac("task", "add", "erin's", "--write", "docs/").code == 0
    assert lac("claim", "2", "--as", "erin").code == 0
    work(repo, "erin-line", "lib/y.py", "erin's\n", agent="erin")
    assert lac("heartbeat", "--as", "erin").code == 0
    git(repo, "checkout", "-q", "main")
    assert lac("task", "add", "y", "--write", "lib/y.py", "--priority", "5").code == 0
    assert lac("task", "add", "util", "--write", "core/util.py", "--priority", "3").code == 0
    work(repo, "feat", "core/util.py", "dana's util\n")  # her landing line, undeclared
    git(repo, "checkout", "-q", "main")
    got = lac("claim", "--next", "--as", "dana", "--json")
    assert got.code == 0, got.err
    assert got.json["task"]["id"] == 4
    assert got.json["passed_over"] == [{"task": 3, "meets": ["lib/y.py"], "landing": []}]
    assert [s["task"] for s in got.json["start_from"]] == [1]
    assert lac("release", "4", "--as", "dana").code == 0
    said = lac("claim", "--next", "--as", "dana")
    assert "passed over #3: its paths meet lib/y.py, which other live claims change" in said.out
    # #4 is dana's again; #3 meets only erin's own line, in work: hers.
    hers = lac("claim", "--next", "--as", "erin", "--json")
    assert hers.json["task"]["id"] == 3 and hers.json["start_from"] == []


def test_an_undeclared_file_locked_at_the_edit_waits_for_the_landing(
    lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """The README's flow for the files nobody declared (lac.edit.undeclared =
    lock): dana's edit hook locks a file her claim did not declare; it stays
    hers through `done` until her work lands; erin's edit of it is refused at
    the edit, her `git lac wait` is woken by the landing (the server's
    post-receive) and names the task to bring in; then her edit takes it."""
    from .test_edit_guard import claude, claude_allowed, claude_denied, hook
    from .test_wait import finish, waiter

    hooked(server, repo, board_url)
    assert lac("hooks", "install").code == 0
    git(repo, "config", "lac.edit.undeclared", "lock")
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("task", "add", "docs", "--write", "docs/").code == 0
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0

    def edit(agent: str, path: str) -> Result:
        payload = claude(repo, "Write", {"file_path": str(repo / path), "content": "x"})
        return hook(repo, payload, agent=agent)

    took = edit("dana", "core/session.py")
    claude_allowed(took)
    assert "locked core/session.py for task #1" in took.err
    work(repo, "feat", "core/auth.py", "dana's login\n")
    work(repo, "feat", "core/session.py", "dana's session\n")
    done = lac("done", "1", "--as", "dana", "--json")
    assert done.code == 0 and done.json["landing"] is True, done.err

    git(repo, "checkout", "-q", "-b", "docs", "main")  # erin's own line
    assert lac("claim", "2", "--as", "erin").code == 0
    # dana's landing tip is in this clone: erin may build on it, or wait.
    reason = claude_denied(edit("erin", "core/session.py"))
    assert reason == (
        "dana holds core/session.py on task #1, landing (done, its work not in the "
        f"destination yet): build on it, git merge --no-edit {done.json['task']['tip']}, "
        "then edit again; or git lac wait core/session.py"
    )
    waiting = waiter(repo, "erin", "core/session.py", "--timeout", "60")
    pushed = push(repo, "dana", "feat:main", verify=True)
    assert pushed.code == 0, pushed.err
    code, body = finish(waiting)
    assert code == 0 and body["finished"] == [1], body
    took = edit("erin", "core/session.py")
    claude_allowed(took)
    assert "locked core/session.py for task #2" in took.err


def test_the_edit_hook_locks_under_a_claim_in_work_not_a_landing_one(
    lac: Lac, repo: Path, server: Path
) -> None:
    """lac.edit.undeclared = lock takes the new lock under the newest claim
    still in work: a landing claim's locks go when its work lands, and an
    edit made now is not part of that work."""
    from .test_edit_guard import claude, claude_allowed, hook

    assert lac("hooks", "install").code == 0
    git(repo, "config", "lac.edit.undeclared", "lock")
    assert lac("task", "add", "docs", "--write", "docs/").code == 0
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0  # in work
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "2", "--as", "dana").code == 0  # newer, and landing below
    work(repo, "feat", "core/auth.py", "dana's login\n")
    done = lac("done", "2", "--as", "dana", "--json")
    assert done.code == 0 and done.json["landing"] is True, done.err
    payload = claude(repo, "Write", {"file_path": str(repo / "core/new.py"), "content": "x"})
    took = hook(repo, payload, agent="dana")
    claude_allowed(took)
    assert "locked core/new.py for task #1" in took.err


# --- stacking: a line built on a landing claim's tip is not refused by it ----------


def test_claim_next_stacks_on_anothers_landing_line_and_the_guards_hold_it_to_that(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """dana's #1 is landing on core/auth.py. erin's claim --next takes #2
    (core/auth.py) beside dana's lock, naming dana's line to start from: her
    lock does not refuse a line built on her tip. erin's commit of the file
    is refused until her branch contains that tip, and allowed after; her
    push too (the server's pre-receive). fred, whose clone does not build on
    it (a claim by id, a lock), is refused as before; a newer tip of dana's
    does not stall erin, whose lock was granted beside the older one."""
    hooked(server, repo, board_url)
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    assert lac("task", "add", "auth twice", "--write", "core/auth.py").code == 0
    got = lac("claim", "--next", "--as", "erin", "--json")
    assert got.code == 0, got.err
    assert got.json["task"]["id"] == 2
    assert got.json["start_from"] == [
        {"task": 1, "branch": "feat", "tip": landing, "holder": "dana"}
    ]
    said = lac("claim", "--next", "--as", "erin")
    assert "start from dana's landing #1, branch feat at " + landing[:12] in said.out, said.out
    assert lac("release", "3", "--as", "erin").code == 0
    # erin's lock is in work: it refuses fred's #3, stacked on dana's or not.
    fred = lac("claim", "--next", "--as", "fred")
    assert fred.code == 1 and "1 claimable task(s) wait on held paths" in fred.err, fred.err
    refused = lac("lock", "core/auth.py", "--as", "fred")
    assert refused.code == 1 and "dana holds core/auth.py on task #1" in refused.err
    # Two write locks on core/auth.py: dana's landing one and erin's.
    held = sorted((lk["agent"], lk["task_id"]) for lk in lac("locks", "--json").json["locks"])
    assert held == [("dana", 1), ("erin", 2)]

    git(repo, "checkout", "-q", "-b", "erin-line", "main")
    (repo / "core" / "auth.py").write_text("erin's login, not on dana's\n")
    git(repo, "add", "core/auth.py")
    before = run_git(repo, "commit", "-qm", "erin, too soon", agent="erin")
    assert before.code != 0 and "dana holds core/auth.py on task #1" in before.err
    assert "Task #1 is landing (done, not in the destination yet)" in before.err
    assert (
        f"passes its locks: git merge --no-edit {landing}, then git lac lock --task ID PATH\n"
        in before.err
    ), before.err
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "reset", "-q", "--hard")
    git(repo, "merge", "-q", "--no-edit", landing)
    tip = work(repo, "erin-line", "core/auth.py", "dana's login, and erin's\n", agent="erin")
    pushed = push(repo, "erin", "erin-line", verify=True)
    assert pushed.code == 0, pushed.err
    assert lac("heartbeat", "--as", "erin").code == 0
    # Built on, dana's line may not change core/auth.py again while erin holds it...
    git(repo, "checkout", "-q", "feat")
    (repo / "core" / "auth.py").write_text("dana's review fix\n")
    git(repo, "add", "core/auth.py")
    fix = run_git(repo, "commit", "-qm", "dana's fix", agent="dana")
    assert fix.code != 0 and "erin holds core/auth.py on task #2" in fix.err
    git(repo, "reset", "-q", "--hard")
    # ... and a newer tip of dana's (a commit after done, of another file)
    # does not stall erin, whose lock was granted beside the older one (her
    # locked event names it): dana's new commits on the path her lock refuses.
    newer = work(repo, "feat", "core/notes.md", "dana's notes\n")
    assert lac("show", "1", "--json").json["task"]["tip"] == newer
    git(repo, "checkout", "-q", "erin-line")
    (repo / "core" / "auth.py").write_text("erin's, on the old tip\n")
    git(repo, "add", "core/auth.py")
    stale = run_git(repo, "commit", "-qm", "erin, on the old tip", agent="erin")
    assert stale.code == 0, stale.err
    # erin's landing brings dana's with it: both settle on one push.
    git(repo, "merge", "-q", "--no-edit", newer)
    done = lac("done", "2", "--as", "erin", "--json")
    assert done.code == 0 and done.json["landing"] is True, done.err
    landed = push(repo, "erin", "erin-line:main", verify=True)
    assert landed.code == 0, landed.err
    assert state(lac, 1) == ("done", False) and state(lac, 2) == ("done", False)
    assert tip != newer


def test_a_push_not_built_on_the_landing_tip_is_refused_by_the_server(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """The server judges each pushed commit: one that contains dana's
    landing tip passes her lock, one that does not is refused (no client
    hook in the way: --no-verify)."""
    hooked(server, repo, board_url)
    git(repo, "checkout", "-q", "-b", "apart", "main")
    (repo / "core" / "auth.py").write_text("fred's\n")
    git(repo, "add", "core/auth.py")
    git(repo, "commit", "-q", "--no-verify", "-m", "fred apart")
    apart = push(repo, "fred", "apart")
    assert apart.code != 0 and "dana holds core/auth.py on task #1" in apart.err
    assert f"git merge --no-edit {landing}" in apart.err, apart.err  # the server says so too
    git(repo, "checkout", "-q", "-b", "on-top", landing)
    (repo / "core" / "auth.py").write_text("fred's, on dana's\n")
    git(repo, "add", "core/auth.py")
    git(repo, "commit", "-q", "--no-verify", "-m", "fred on top")

    def push_on_top() -> Result:
        return push(repo, "fred", "on-top")

    # Built on it, but held beside it by nobody: anyone built on the tip could
    # write the path at once. Under a claim, locked beside dana's: it passes.
    alone = push_on_top()
    assert alone.code != 0 and "dana holds core/auth.py on task #1" in alone.err, alone.err
    assert "its paths locked beside it under a claim" in alone.err, alone.err
    task = lac("task", "add", "fred's part").out.strip()
    assert lac("claim", task, "--as", "fred").code == 0
    beside = lac("lock", "--task", task, "core/auth.py", "--as", "fred")
    assert beside.code == 0, beside.err
    on_top = push_on_top()
    assert on_top.code == 0, on_top.err


def test_the_edit_hook_asks_to_build_on_a_landing_line_then_locks_beside_it(
    landing: str, lac: Lac, repo: Path
) -> None:
    """erin's edit of core/auth.py, held only by dana's landing #1 and not
    declared by erin's claim: told to merge dana's tip (or wait); once her
    branch contains it, the edit takes a lock beside dana's (a stacked
    lock, recorded in the event) and her commit passes."""
    from .test_edit_guard import claude, claude_allowed, claude_denied, hook

    git(repo, "config", "lac.edit.undeclared", "lock")
    assert lac("task", "add", "docs", "--write", "docs/").code == 0
    git(repo, "checkout", "-q", "-b", "erin-line", "main")
    assert lac("claim", "2", "--as", "erin").code == 0
    payload = claude(repo, "Write", {"file_path": str(repo / "core/auth.py"), "content": "x"})
    reason = claude_denied(hook(repo, payload, agent="erin"))
    assert f"build on it, git merge --no-edit {landing}, then edit again" in reason, reason
    mine = lac("locks", "--mine", "--as", "erin", "--json").json["locks"]
    assert [lk["pattern"] for lk in mine] == ["docs/"]  # nothing taken by the refused edit
    git(repo, "merge", "-q", "--no-edit", landing)
    took = hook(repo, payload, agent="erin")
    claude_allowed(took)
    assert "locked core/auth.py for task #2" in took.err
    locked = [e for e in lac("log", "2", "--json").json["events"] if e["kind"] == "locked"]
    assert locked[-1]["detail"]["built_on"] == [1], locked
    work(repo, "erin-line", "core/auth.py", "dana's login, and erin's\n", agent="erin")
    # A third claim, not built on dana's line, is still refused the file.
    fred = lac("lock", "core/auth.py", "--as", "fred")
    assert fred.code == 1 and "holds core/auth.py" in fred.err


def test_a_line_of_several_commits_and_a_newer_tip_merged_in_pass_every_guard(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """Stacking judged by where a change ends (a fresh pair of eyes found
    each of these refused): erin's merge of dana's two-commit line brings in
    its first commit too; a later merge of dana's newer tip that changes the
    held file itself (its own changes) passes; erin's push of commits made
    on the older tip passes, as her pushed tip contains the newer one; and
    dana's push of her own finished line passes erin's lock, built on it."""
    hooked(server, repo, board_url)
    lines = [f"line {n}\n" for n in range(1, 9)]
    second = work(repo, "feat", "core/auth.py", "".join(lines))
    assert lac("show", "1", "--json").json["task"]["tip"] == second
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    git(repo, "checkout", "-q", "-b", "erin-line", "main")
    work(repo, "erin-line", "notes.md", "erin's notes\n", agent="erin")
    got = lac("claim", "--next", "--as", "erin", "--json")
    assert got.code == 0 and got.json["task"]["id"] == 2, got.err
    assert [line["tip"] for line in got.json["start_from"]] == [second]
    merged = run_git(repo, "merge", "-q", "--no-edit", second, agent="erin")
    assert merged.code == 0, merged.err  # brings landing (dana's first commit) too
    # The merge's message (no final newline from git merge --no-edit) gets
    # the trailer where git finds trailers, after a blank line.
    trailers = git(repo, "interpret-trailers", "--parse", input=message(repo, "HEAD"))
    assert trailers.splitlines() == ["Lac-Task: 2"], message(repo, "HEAD")
    work(repo, "erin-line", "core/auth.py", "".join([*lines[:7], "erin's line 8\n"]), agent="erin")
    # dana's review fix on line 1, past erin's lock (--no-verify): a newer tip.
    git(repo, "checkout", "-q", "feat")
    (repo / "core" / "auth.py").write_text("".join(["dana's line 1\n", *lines[1:]]))
    fixed = run_git(repo, "commit", "-q", "--no-verify", "-am", "dana's review fix", agent="dana")
    assert fixed.code == 0, fixed.err
    newer = git(repo, "rev-parse", "HEAD").strip()
    assert lac("show", "1", "--json").json["task"]["tip"] == newer
    git(repo, "checkout", "-q", "erin-line")
    again = run_git(repo, "merge", "-q", "--no-edit", "feat", agent="erin")
    assert again.code == 0, again.err  # its own changes are in core/auth.py
    assert (repo / "core" / "auth.py").read_text().startswith("dana's line 1\n")
    assert lac("heartbeat", "--as", "erin").code == 0
    # erin's work in progress is hers to push: not fred's, though erin's
    # line contains it (only finished landing work passes her lock so).
    early = push(repo, "fred", "erin-line:fred-line")
    assert early.code != 0 and "erin holds core/auth.py on task #2" in early.err, early.err
    pushed = push(repo, "erin", "erin-line", verify=True)
    assert pushed.code == 0, pushed.err
    # dana lands her line while erin holds core/auth.py: erin's line has it all.
    git(repo, "checkout", "-q", "feat")
    landed = push(repo, "dana", "feat:main", verify=True)
    assert landed.code == 0, landed.err
    assert state(lac, 1) == ("done", False) and state(lac, 2) == ("claimed", False)
    # A line not built on dana's is still refused, by the client and the server.
    git(repo, "checkout", "-q", "-b", "apart", landing + "~1")
    (repo / "core" / "auth.py").write_text("fred's\n")
    git(repo, "add", "core/auth.py")
    git(repo, "commit", "-q", "--no-verify", "-m", "fred apart")
    apart = push(repo, "fred", "apart")
    assert apart.code != 0 and "erin holds core/auth.py on task #2" in apart.err, apart.err
    # A rewind of the destination to a commit erin's line contains still
    # undoes changes on the path she holds: refused.
    rewind = run_git(
        repo,
        "push",
        "-q",
        "--no-verify",
        "--force",
        "-o",
        "lac.agent=fred",
        "origin",
        f"{landing}~1:main",
        agent="fred",
    )
    assert rewind.code != 0 and "erin holds core/auth.py on task #2" in rewind.err, rewind.err


def test_lock_and_check_look_at_the_branch_as_the_guards_do(
    landing: str, lac: Lac, repo: Path
) -> None:
    """`check` and `lock --task` from a branch built on dana's landing tip:
    free, and a lock beside hers (its event names the line); from one not
    built on it, or after a newer tip, refused with the tip in --json."""
    git(repo, "checkout", "-q", "-b", "erin-line", "main")
    refused = lac("check", "core/auth.py", "--as", "erin", "--json")
    assert refused.code == 1 and refused.json["refused"]["conflicts"][0]["landing_tip"] == landing
    assert lac("lock", "core/auth.py", "--as", "erin").code == 1
    git(repo, "merge", "-q", "--no-edit", landing)
    free = lac("check", "core/auth.py", "--as", "erin")
    assert free.code == 0 and free.out.strip() == "free: core/auth.py (built on landing #1)"
    assert lac("lock", "core/auth.py", "--as", "erin").code == 1  # under a claim only
    assert lac("task", "add", "docs", "--write", "docs/").code == 0
    assert lac("claim", "2", "--as", "erin").code == 0
    took = lac("lock", "core/auth.py", "--task", "2", "--as", "erin")
    assert took.code == 0, took.err
    locked = [e for e in lac("log", "--json").json["events"] if e["kind"] == "locked"]
    assert locked[-1]["agent"] == "erin" and locked[-1]["detail"]["built_on"] == [1], locked
    assert lac("unlock", "core/auth.py", "--as", "erin").code == 0
    newer = work(repo, "feat", "core/notes.md", "dana's notes\n")
    git(repo, "checkout", "-q", "erin-line")
    again = lac("check", "core/auth.py", "--as", "erin", "--json")
    assert again.code == 1 and again.json["refused"]["conflicts"][0]["landing_tip"] == newer


def test_a_rewind_by_a_landing_line_is_judged_as_before(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """A force-push of dana's landing line over a change to her file that
    main gained since her line forked undoes that change: refused, however
    much of her line it carries."""
    git(repo, "checkout", "-q", "main")
    (repo / "core" / "auth.py").write_text("zed's landed change\n")
    git(repo, "commit", "-q", "--no-verify", "-am", "zed")
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    hooked(server, repo, board_url)
    rewind = run_git(
        repo,
        "push",
        "-q",
        "--no-verify",
        "--force",
        "-o",
        "lac.agent=mallory",
        "origin",
        "feat:main",
        agent="mallory",
    )
    assert rewind.code != 0 and "dana holds core/auth.py on task #1" in rewind.err, rewind.err


def test_a_landing_line_of_ones_own_carries_nothing_past_anothers_lock(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """mallory pushes erin's work in progress to main beside a landing line
    of her own made on top of it (a tag brings it to the server): only a
    landing line erin's is built on passes erin's lock."""
    hooked(server, repo, board_url)
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    assert lac("task", "add", "dummy", "--write", "dummy.txt").code == 0
    git(repo, "checkout", "-q", "-b", "erin-line", landing)
    assert lac("claim", "2", "--as", "erin").code == 1  # claim ID does not stack
    assert lac("claim", "--next", "--as", "erin").code == 0
    work(repo, "erin-line", "core/auth.py", "erin, in progress\n", agent="erin")
    assert lac("heartbeat", "--as", "erin").code == 0
    mine = push(repo, "erin", "erin-line", verify=True)
    assert mine.code == 0, mine.err
    git(repo, "checkout", "-q", "-b", "mal", "erin-line")
    assert lac("claim", "3", "--as", "mallory").code == 0
    work(repo, "mal", "dummy.txt", "dummy\n", agent="mallory")
    assert lac("done", "3", "--as", "mallory", "--json").json["landing"] is True
    sneak = push(repo, "mallory", "mal:refs/tags/t1", "erin-line:main")
    assert sneak.code != 0 and "erin holds core/auth.py on task #2" in sneak.err, sneak.err


def test_a_claim_made_on_anothers_line_is_bound_to_the_branch_its_work_goes_on(
    landing: str, lac: Lac, repo: Path, server: Path
) -> None:
    """erin runs claim --next while dana's landing branch is checked out (as
    the README's example does), then starts her own branch from it: her
    claim records her branch, not dana's, so dana's landing does not settle
    erin's task, and erin's tip is her own."""
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    assert lac("claim", "--next", "--as", "erin").code == 0
    assert lac("heartbeat", "--as", "erin").code == 0
    shown = lac("show", "2", "--json").json["task"]
    assert (shown["branch"], shown["tip"]) == (None, None)
    git(repo, "checkout", "-q", "-b", "log-failures")
    mine = work(repo, "log-failures", "core/auth.py", "dana's, and erin's\n", agent="erin")
    shown = lac("show", "2", "--json").json["task"]
    assert (shown["branch"], shown["tip"]) == ("log-failures", mine)
    git(repo, "checkout", "-q", "feat")
    landed = run_git(repo, "push", "-q", "origin", "feat:main", agent="dana")
    assert landed.code == 0, landed.err
    assert lac("sweep").code == 0
    assert state(lac, 1) == ("done", False) and state(lac, 2) == ("claimed", False)


def test_a_landing_claim_of_no_work_of_its_own_finishes_nothing_of_anothers(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """mallory claims a task on erin's line and says done with no commit of
    her own: her claim is landing at erin's tip. That makes none of erin's
    work in progress finished: only a landing claim holding the path too
    (a lock erin's was granted beside) does, so the server refuses
    mallory's push of erin's line to main."""
    hooked(server, repo, board_url)
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    assert lac("task", "add", "dummy", "--write", "dummy.txt").code == 0
    erins = erin_stacks(lac, repo, landing, "erin, in progress\n")
    assert lac("heartbeat", "--as", "erin").code == 0
    git(repo, "checkout", "-q", "-b", "mal", "erin-line")
    assert lac("claim", "3", "--as", "mallory").code == 0
    done = lac("done", "3", "--as", "mallory", "--json")
    assert done.json["landing"] is True and done.json["task"]["tip"] == erins, done.out
    sneak = push(repo, "mallory", "erin-line:main")
    assert sneak.code != 0 and "erin holds core/auth.py on task #2" in sneak.err, sneak.err


def test_built_on_a_landing_line_one_writer_at_a_time(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """erin and fred both build on dana's landing tip, with the default
    lac.edit.undeclared (allow): the edit hook locks core/auth.py beside
    dana's for the first (else everyone built on the tip could write it at
    once), and refuses the second, whose commit and push are refused too;
    an edit built on the tip without a claim is refused, with the reason."""
    from .test_edit_guard import claude, claude_allowed, claude_denied, hook

    hooked(server, repo, board_url)
    assert lac("task", "add", "docs", "--write", "docs/").code == 0
    assert lac("task", "add", "notes", "--write", "notes/").code == 0
    git(repo, "checkout", "-q", "-b", "fred-line", landing)
    payload = claude(repo, "Write", {"file_path": str(repo / "core/auth.py"), "content": "x"})
    unclaimed = claude_denied(hook(repo, payload, agent="fred"))
    assert "held by a landing claim this branch is built on" in unclaimed, unclaimed
    git(repo, "checkout", "-q", "-b", "erin-line", landing)
    assert lac("claim", "2", "--as", "erin").code == 0
    took = hook(repo, payload, agent="erin")
    claude_allowed(took)
    assert "locked core/auth.py for task #2 (beside a landing line)" in took.err, took.err
    work(repo, "erin-line", "core/auth.py", "dana's, and erin's\n", agent="erin")
    git(repo, "checkout", "-q", "fred-line")
    assert lac("claim", "3", "--as", "fred").code == 0
    second = claude_denied(hook(repo, payload, agent="fred"))
    assert "erin holds core/auth.py on task #2" in second, second
    (repo / "core" / "auth.py").write_text("dana's, and fred's\n")
    git(repo, "add", "core/auth.py")
    commit = run_git(repo, "commit", "-qm", "fred too", agent="fred")
    assert commit.code != 0 and "erin holds core/auth.py on task #2" in commit.err, commit.err
    git(repo, "commit", "-q", "--no-verify", "-m", "fred too")
    pushed = push(repo, "fred", "fred-line")
    assert pushed.code != 0 and "erin holds core/auth.py on task #2" in pushed.err, pushed.err
    # dana's own landing line, pushed by anyone, passes: it is the landing work.
    git(repo, "checkout", "-q", "feat")
    landed = push(repo, "fred", "feat:main")
    assert landed.code == 0, landed.err


def test_two_landing_claims_at_one_tip_are_two_lines(lac: Lac, repo: Path, server: Path) -> None:
    """dana finishes #1 and #2 on one branch: both landing at one tip. A
    branch built on it is built on both: check says so, and lock --task
    takes its lock beside both."""
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "a", "--write", "core/a.py").code == 0
    assert lac("task", "add", "b", "--write", "core/b.py").code == 0
    assert lac("task", "add", "docs", "--write", "docs/").code == 0
    git(repo, "checkout", "-q", "-b", "feat")
    assert lac("claim", "1", "--as", "dana").code == 0
    assert lac("claim", "2", "--as", "dana").code == 0
    work(repo, "feat", "core/a.py", "a\n")
    tip = work(repo, "feat", "core/b.py", "b\n")
    for task in ("1", "2"):
        assert lac("done", task, "--as", "dana", "--json").json["landing"] is True
    git(repo, "checkout", "-q", "-b", "erin-line", tip)
    free = lac("check", "core/a.py", "core/b.py", "--as", "erin")
    assert free.code == 0 and "(built on landing #1, #2" in free.out, free.out
    assert lac("claim", "3", "--as", "erin").code == 0
    took = lac("lock", "--task", "3", "core/a.py", "core/b.py", "--as", "erin")
    assert took.code == 0, took.err


def test_a_claim_binds_where_its_first_commit_goes_not_where_it_was_made(
    landing: str, lac: Lac, repo: Path, server: Path
) -> None:
    """dana claims #2 on her own landing line (claim --next there, as the
    README's example does) and #3 on main, then works each on a branch of
    its own: each claim records the branch its commit went on, so `done`
    judges that work, and the landing of her first line settles neither."""
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    assert lac("task", "add", "docs", "--write", "docs/").code == 0
    assert lac("claim", "--next", "--as", "dana", "--lane", "default").code == 0
    git(repo, "checkout", "-q", "main")
    assert lac("claim", "3", "--as", "dana").code == 0
    for task in ("2", "3"):
        shown = lac("show", task, "--json").json["task"]
        assert (shown["branch"], shown["tip"]) == (None, None), shown
    second = work(repo, "log-failures", "core/auth.py", "dana's, and more\n")
    git(repo, "checkout", "-q", "main")
    third = work(repo, "docs-line", "docs/a.md", "docs\n")
    for task, branch, tip in (("2", "log-failures", second), ("3", "docs-line", third)):
        done = lac("done", task, "--as", "dana", "--json")
        assert done.json["landing"] is True, done.out
        assert (done.json["task"]["branch"], done.json["task"]["tip"]) == (branch, tip)
    git(repo, "checkout", "-q", "feat")
    landed = run_git(repo, "push", "-q", "origin", "feat:main", agent="dana")
    assert landed.code == 0, landed.err
    assert lac("sweep").code == 0
    assert state(lac, 1) == ("done", False)
    assert state(lac, 2) == ("claimed", True) and state(lac, 3) == ("claimed", True)


def test_a_trailer_on_a_commit_of_other_files_lands_nothing(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """fred names dana's landing task in a commit of another file and
    pushes it to main, where dana's tip never was: her claim does not land
    (a trailer is anyone's to write); her own squash of the work does."""
    hooked(server, repo, board_url)
    main_moves(repo)
    (repo / "README").write_text("fred's\n")
    git(repo, "commit", "-qam", "readme\n\nLac-Task: 1", "--no-verify")
    pushed = run_git(
        repo, "push", "--no-verify", "-o", "lac.agent=fred", "origin", "main", agent="fred"
    )
    assert pushed.code == 0, pushed.err
    assert never_saw(server, landing) and "landed" not in pushed.err, pushed.err
    assert state(lac, 1) == ("claimed", True)
    git(repo, "merge", "-q", "--squash", "feat")
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    squashed = run_git(
        repo, "push", "--no-verify", "-o", "lac.agent=dana", "origin", "main", agent="dana"
    )
    assert "task #1 landed (squashed)" in squashed.err, squashed.err
    assert state(lac, 1) == ("done", False)


def test_a_landing_branch_reset_to_the_destination_does_not_land_it(
    landing: str, lac: Lac, repo: Path
) -> None:
    """dana resets her landing branch to main (or reuses it): the claim keeps
    the tip its work ends at, so neither heartbeat nor sweep takes that for
    landed; a commit that builds on the tip moves it."""
    git(repo, "reset", "-q", "--hard", "main")
    assert lac("heartbeat", "--as", "dana").code == 0
    assert lac("sweep").code == 0
    shown = lac("show", "1", "--json").json["task"]
    assert shown["tip"] == landing and state(lac, 1) == ("claimed", True), shown
    other = work(repo, "feat", "core/other.py", "unrelated\n")
    assert lac("show", "1", "--json").json["task"]["tip"] == landing != other
    git(repo, "reset", "-q", "--hard", landing)
    onward = work(repo, "feat", "core/auth.py", "dana's login, reviewed\n")
    assert lac("show", "1", "--json").json["task"]["tip"] == onward


def test_a_branch_name_the_board_cannot_show_is_followed_by_its_tip(
    lac: Lac, repo: Path, server: Path
) -> None:
    """A branch named with a bidi control (git allows it; the board shows no
    such name): the claim is followed by its tip, and `done` keeps it
    landing instead of failing."""
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    git(repo, "checkout", "-q", "-b", "f\u202ex")
    assert lac("claim", "1", "--as", "dana").code == 0
    tip = work(repo, "f\u202ex", "core/auth.py", "dana's\n")
    assert lac("heartbeat", "--as", "dana").code == 0
    done = lac("done", "1", "--as", "dana", "--json")
    assert done.code == 0, done.err
    assert done.json["landing"] is True and done.json["task"]["tip"] == tip
    assert done.json["task"]["branch"] is None


def test_a_landing_holder_cannot_carry_a_stackers_work_in_progress_to_main(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """erin stacks on dana's landing line and pushes her work in progress;
    dana fast-forwards her landing branch onto it (her tip moves forward,
    onto erin's commits) and pushes it to main: refused, erin's commits
    name her task. dana's own line, pushed by anyone, passes, also as a
    branch already on the server moved to main, or merged --no-ff."""
    hooked(server, repo, board_url)
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    git(repo, "push", "-q", "--no-verify", "origin", "feat")
    wip = erin_stacks(lac, repo, landing, "erin, in progress\n")
    pushed = push(repo, "erin", "erin-line", verify=True)
    assert pushed.code == 0, pushed.err
    git(repo, "checkout", "-q", "-b", "carried", landing)
    git(repo, "merge", "-q", "--ff-only", wip)
    git(repo, "branch", "-q", "-f", "feat", wip)
    git(repo, "checkout", "-q", "feat")
    assert lac("heartbeat", "--as", "dana").code == 0
    assert lac("show", "1", "--json").json["task"]["tip"] == wip  # forward, as allowed
    carried = push(repo, "dana", "feat:main")
    assert carried.code != 0 and "erin holds core/auth.py on task #2" in carried.err, carried.err
    # The landing line itself (on the server already: a ref's move), by fred.
    moved = push(repo, "fred", f"{landing}:refs/heads/main")
    assert moved.code == 0, moved.err


def test_a_merge_of_the_landing_line_by_anyone_passes(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """fred merges dana's landing line --no-ff and pushes the merge to main:
    it brings core/auth.py nothing but dana's version, so it passes her
    lock and lands her claim."""
    hooked(server, repo, board_url)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-verify", "-m", "merge dana's fix", landing)
    merged = push(repo, "fred", "main")
    assert merged.code == 0, merged.err
    assert state(lac, 1) == ("done", False)


def test_an_ours_merge_naming_the_task_lands_nothing(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """fred merges an unrelated history with -s ours under a message naming
    dana's task: compared with its first parent it changes nothing, so her
    landing claim does not land on the server that never saw her tip."""
    hooked(server, repo, board_url)
    git(repo, "checkout", "-q", "--orphan", "junk")
    git(repo, "rm", "-rqf", ".")
    (repo / "junk.txt").write_text("junk\n")
    git(repo, "add", "junk.txt")
    git(repo, "commit", "-q", "--no-verify", "-m", "junk")
    git(repo, "checkout", "-q", "main")
    git(
        repo,
        "merge",
        "-q",
        "-s",
        "ours",
        "--allow-unrelated-histories",
        "--no-verify",
        "-m",
        "x\n\nLac-Task: 1",
        "junk",
    )
    pushed = push(repo, "fred", "main")
    assert pushed.code == 0, pushed.err
    assert never_saw(server, landing) and "landed" not in pushed.err, pushed.err
    assert state(lac, 1) == ("claimed", True)


def test_a_second_claim_does_not_bind_to_the_first_ones_branch(
    lac: Lac, repo: Path, server: Path
) -> None:
    """dana claims #1 and #2 on main, works #1 on fix1 (its commit binds #1
    there), runs heartbeat, then works #2 on fix2: #2 is bound to fix2, and
    done judges each line."""
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("task", "add", "other", "--write", "other.txt").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    assert lac("claim", "2", "--as", "dana").code == 0
    first = work(repo, "fix1", "core/auth.py", "dana's\n")
    assert lac("heartbeat", "--as", "dana").code == 0
    shown = {t: lac("show", t, "--json").json["task"] for t in ("1", "2")}
    assert (shown["1"]["branch"], shown["1"]["tip"]) == ("fix1", first)
    assert (shown["2"]["branch"], shown["2"]["tip"]) == (None, None)
    git(repo, "checkout", "-q", "main")
    second = work(repo, "fix2", "other.txt", "other\n")
    assert "Lac-Task: 2" in message(repo, "HEAD")
    done = lac("done", "2", "--as", "dana", "--json")
    assert (done.json["task"]["branch"], done.json["task"]["tip"]) == ("fix2", second)


def test_done_again_keeps_a_landing_claims_tip(landing: str, lac: Lac, repo: Path) -> None:
    """After done, dana resets her branch to main, or commits other work on
    it, and runs done again: the claim keeps the tip its work ends at."""
    git(repo, "reset", "-q", "--hard", "main")
    again = lac("done", "1", "--as", "dana", "--json")
    assert again.code == 0 and again.json["landing"] is True, again.out
    assert again.json["task"]["tip"] == landing
    other = work(repo, "feat", "x.txt", "unrelated\n")
    third = lac("done", "1", "--as", "dana", "--json")
    assert third.json["landing"] is True and third.json["task"]["tip"] == landing != other


def test_the_edit_hook_locks_nothing_under_a_landing_claim(landing: str, repo: Path) -> None:
    """dana's only claim is landing: an edit of an undeclared file under
    lac.edit.undeclared = lock is not locked under it (its locks go when its
    work lands, which this edit is not part of)."""
    from .test_edit_guard import claude, claude_allowed, hook

    git(repo, "config", "lac.edit.undeclared", "lock")
    payload = claude(repo, "Write", {"file_path": str(repo / "docs/new.md"), "content": "x"})
    took = hook(repo, payload, agent="dana")
    claude_allowed(took)
    assert "locked" not in took.err, took.err


def test_a_second_claim_worked_on_the_same_branch_binds_there(
    lac: Lac, repo: Path, server: Path
) -> None:
    """dana claims #1 and #2 on main and works both on feat: #2 binds to
    feat at the commit that changes its path, so done keeps it landing."""
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "one", "--write", "p1/").code == 0
    assert lac("task", "add", "three", "--write", "p3/").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    assert lac("claim", "2", "--as", "dana").code == 0
    work(repo, "feat", "p1/x", "x\n")
    tip = work(repo, "feat", "p3/z", "z\n")
    assert lac("heartbeat", "--as", "dana").code == 0
    git(repo, "checkout", "-q", "main")
    done = lac("done", "2", "--as", "dana", "--json")
    assert done.json["landing"] is True, done.out
    assert (done.json["task"]["branch"], done.json["task"]["tip"]) == ("feat", tip)


def test_a_mode_or_a_symlink_of_the_lines_bytes_is_not_its_version(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """fred, holding nothing, pushes to main dana's landing line with her
    file's mode changed, or made a symlink of the same bytes: refused, it is
    not her version of the path."""
    hooked(server, repo, board_url)
    blob = git(repo, "rev-parse", f"{landing}:core/auth.py").strip()
    for mode in ("100755", "120000"):
        git(repo, "checkout", "-q", "-B", "fred-line", landing)
        git(repo, "update-index", "--cacheinfo", f"{mode},{blob},core/auth.py")
        git(repo, "commit", "-q", "--no-verify", "-m", f"fred, {mode}")
        pushed = push(repo, "fred", "HEAD:main")
        assert pushed.code != 0 and "dana holds core/auth.py on task #1" in pushed.err, mode
        git(repo, "reset", "-q", "--hard", landing)
    assert state(lac, 1) == ("claimed", True)


@pytest.mark.parametrize("how", ["fast-forward", "no-ff"])
def test_an_integrator_lands_a_stack_of_finished_lines(
    how: str, landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """dana's #1 is landing; erin's #2, built on it beside dana's lock, is
    landing too; both lines are on the server. ivan, who holds nothing,
    lands the stack on main (a fast-forward of erin's line, or a --no-ff
    merge of it): finished work only, it passes both locks and lands both."""
    hooked(server, repo, board_url)
    git(repo, "push", "-q", "--no-verify", "origin", "feat")
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    erin_stacks(lac, repo, landing, "dana's login, and erin's\n")
    assert lac("done", "2", "--as", "erin", "--json").json["landing"] is True
    pushed = push(repo, "erin", "erin-line", verify=True)
    assert pushed.code == 0, pushed.err
    if how == "fast-forward":
        target = "origin/erin-line"
    else:
        git(repo, "checkout", "-q", "main")
        git(repo, "merge", "-q", "--no-ff", "--no-verify", "-m", "land the stack", "erin-line")
        target = "main"
    landed = push(repo, "ivan", f"{target}:refs/heads/main")
    assert landed.code == 0, landed.err
    assert state(lac, 1) == ("done", False) and state(lac, 2) == ("done", False)


def test_a_merge_of_a_landing_line_passes_the_lock_of_a_claim_built_on_it(
    landing: str, lac: Lac, repo: Path, server: Path, board_url: str | None
) -> None:
    """erin started #2 from dana's landing line (claim --next) and committed
    on it; ivan merges dana's line --no-ff into main and pushes: it brings
    core/auth.py only the version erin's lock was granted beside, so it
    passes her lock and lands dana's claim; erin's stays in work."""
    hooked(server, repo, board_url)
    git(repo, "push", "-q", "--no-verify", "origin", "feat")
    assert lac("task", "add", "auth again", "--write", "core/auth.py").code == 0
    erin_stacks(lac, repo, landing, "dana's login, and erin's\n")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-verify", "-m", "land dana's fix", "origin/feat")
    landed = push(repo, "ivan", "main")
    assert landed.code == 0, landed.err
    assert state(lac, 1) == ("done", False) and state(lac, 2) == ("claimed", False)
