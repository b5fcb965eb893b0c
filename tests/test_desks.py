"""Desks: `git lac claim … --worktree`, `git lac env`, `git lac desks [--prune]`.

Real git throughout: a bare origin and a clone whose ``main`` is one commit
ahead of ``origin/main`` (so a desk that started at the local HEAD would
show it), hooks fired by real commits, the edit hook as a real process; on
both backends.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, git, lac_inprocess, lac_process

LAC = str(Path(sys.executable).parent / "git-lac")
Lac = Callable[..., Result]

LACCONFIG = """\
[lac "desk"]
\tcopy = .env
\tcopy = config/*.local
\tlink = node_modules
\tsetup = "echo setup for $LAC_TASK_ID as $LAC_AGENT; pwd > .setup-ran-in; touch made-by-setup"
"""


@pytest.fixture
def clone(tmp_path: Path, board_url: str | None, monkeypatch: pytest.MonkeyPatch) -> Path:
    """origin (bare) and a clone of it on the board under test; the clone's
    main is one commit ahead of origin/main; .env and node_modules untracked."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    work = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    (work / ".gitignore").write_text(".env\nnode_modules\n*.local\n.setup-ran-in\nmade-by-setup\n")
    (work / ".lacconfig").write_text(LACCONFIG)
    (work / "core").mkdir()
    (work / "core" / "auth.py").write_text("def login():\n    return True\n")
    (work / "README").write_text("hello\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "base")
    git(work, "push", "-q", "origin", "main")
    (work / "ahead").write_text("only in the local main\n")
    git(work, "add", "ahead")
    git(work, "commit", "-qm", "ahead of origin")
    (work / ".env").write_text("SECRET=from-main\n")
    (work / "config").mkdir()
    (work / "config" / "db.local").write_text("db=local\n")
    (work / "node_modules").mkdir()
    (work / "node_modules" / "dep.js").write_text("// dep\n")
    init = ["init"] + (["--url", board_url] if board_url else [])
    assert lac_inprocess(work, *init).code == 0
    return work


@pytest.fixture
def lac(clone: Path) -> Lac:
    def call(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
        return lac_inprocess(cwd or clone, *args, env=env)

    return call


def tip(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", rev).strip()


def trees(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


def branches(repo: Path) -> set[str]:
    return set(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split())


def task(lac: Lac, tid: int) -> dict[str, object]:
    shown = lac("show", str(tid), "--json")
    assert shown.code == 0, shown.err
    found: dict[str, object] = shown.json["task"]
    return found


def test_a_desk_starts_at_the_destination_and_acts_as_its_claim(lac: Lac, clone: Path) -> None:
    assert lac("task", "add", "Auth", "--write", "core/auth.py").code == 0
    made = lac("claim", "1", "--worktree", "--json")
    assert made.code == 0, made.err
    desk = made.json["desk"]
    path = Path(desk["path"])
    assert path.is_absolute() and path == clone / ".git" / "lacunari" / "worktrees" / "task-1"
    # The branch: new, at origin/main as fetched, not at the local main.
    assert desk["branch"] == "lac/task-1" and desk["base"] == "origin/main"
    assert tip(path, "HEAD") == tip(clone, "origin/main") == desk["commit"]
    assert tip(clone, "main") != tip(path, "HEAD") and not (path / "ahead").exists()
    assert git(path, "symbolic-ref", "--short", "HEAD").strip() == "lac/task-1"
    # Held at the desk's instance, which whoami there names, with the claimer.
    held = task(lac, 1)
    who = lac("whoami", "--json", cwd=path).json
    here = lac("whoami", "--json").json
    assert held["owner"] == who["agent"] == here["agent"] == "tester"
    assert held["instance"] == who["instance"] != here["instance"]
    assert who["source"] == "git config lac.agent"
    # Furnished: the copies and the link from the main work tree.
    assert (path / ".env").read_text() == "SECRET=from-main\n"
    assert not (path / ".env").is_symlink()
    assert (path / "config" / "db.local").read_text() == "db=local\n"
    assert (path / "node_modules").is_symlink()
    assert (path / "node_modules" / "dep.js").read_text() == "// dep\n"
    # The setup ran in the desk alone, with the claim's variables.
    assert Path((path / ".setup-ran-in").read_text().strip()) == path
    assert (path / "made-by-setup").exists() and not (clone / "made-by-setup").exists()
    assert not (clone / ".setup-ran-in").exists()
    assert "setup for 1 as tester" in made.err
    assert "setup for 1 as tester" in (path / ".lac" / "setup.log").read_text()
    assert desk["setup"]["exit_code"] == 0
    assert desk["setup"]["log"] == str(path / ".lac" / "setup.log")
    # .lac ignores itself; the desk is clean; .lac/env is env's output.
    assert (path / ".lac" / ".gitignore").read_text() == "*\n"
    assert git(path, "status", "--porcelain", "--untracked-files=all") == ""
    env = lac("env", cwd=path)
    assert env.code == 0, env.err
    assert env.out == "LAC_TASK_ID=1\nLAC_AGENT=tester\n"
    assert (path / ".lac" / "env").read_text() == env.out
    assert lac("env", "1").out == env.out
    listed = lac("desks", "--json").json["desks"]
    assert [(d["path"], d["task"], d["branch"], d["state"], d["holder"]) for d in listed] == [
        (str(path), 1, "lac/task-1", "claimed", "tester")
    ]
    assert listed[0]["live"] is True and listed[0]["clean"] is True


def test_the_holder_works_in_its_desk_and_another_agent_is_refused(lac: Lac, clone: Path) -> None:
    assert lac("hooks", "install").code == 0
    assert lac("task", "add", "Auth", "--write", "core/auth.py").code == 0
    path = Path(lac("claim", "1", "--worktree", "--json").json["desk"]["path"])
    target = str(path / "core" / "auth.py")
    env = {k: v for k, v in os.environ.items() if k != "LAC_AGENT"}
    payload = {
        "session_id": "s",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(path),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": target, "content": "x"},
        "tool_use_id": "toolu_1",
    }

    def edit(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [LAC, "guard", "edit", "--harness", "claude"],
            cwd=path,
            env={**env, **extra},
            input=json.dumps(payload),
            capture_output=True,
            text=True,
        )

    mine = edit({})
    assert (mine.returncode, mine.stdout) == (0, ""), mine.stderr
    other = edit({"LAC_AGENT": "erin"})
    assert other.returncode == 0
    denied = json.loads(other.stdout)["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny"
    assert "tester holds core/auth.py on task #1" in denied["permissionDecisionReason"]
    # Commits: the holder's passes there, another agent's is refused naming it.
    (path / "core" / "auth.py").write_text("def login():\n    return False\n")
    git(path, "add", "core/auth.py")
    refused = subprocess.run(
        ["git", "commit", "-qm", "erin tries"],
        cwd=path,
        env={**env, "LAC_AGENT": "erin"},
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "tester" in refused.stderr, refused.stderr
    done = subprocess.run(
        ["git", "commit", "-qm", "the holder's"], cwd=path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert tip(path, "HEAD") != tip(clone, "origin/main")


def test_a_named_branch_and_path_with_odd_characters(lac: Lac, clone: Path, tmp_path: Path) -> None:
    assert lac("task", "add", "Docs").code == 0
    assert lac("task", "add", "Cont").code == 0
    odd = tmp_path / "desks here" / "it's a $desk & more"
    made = lac("claim", "1", "--worktree", str(odd), "--branch", "feat/docs", "--json")
    assert made.code == 0, made.err
    assert made.json["desk"]["path"] == str(odd) and made.json["desk"]["branch"] == "feat/docs"
    assert git(odd, "symbolic-ref", "--short", "HEAD").strip() == "feat/docs"
    assert tip(odd, "HEAD") == tip(clone, "origin/main")
    assert (odd / ".env").exists() and (odd / "made-by-setup").exists()
    # An existing branch is continued at its tip, never reset.
    git(clone, "branch", "feat/cont", "main")
    at = tmp_path / "cont"
    cont = lac("claim", "2", "--worktree", str(at), "--branch", "feat/cont", "--json")
    assert cont.code == 0, cont.err
    assert cont.json["desk"]["continued"] is True
    assert tip(at, "HEAD") == tip(clone, "main") and (at / "ahead").exists()
    # An empty directory that is there already is a fine PATH.
    assert lac("task", "add", "Empty").code == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert lac("claim", "3", "--worktree", str(empty)).code == 0
    assert git(empty, "symbolic-ref", "--short", "HEAD").strip() == "lac/task-3"


def test_a_failing_setup_keeps_the_claim_and_the_desk(lac: Lac, clone: Path) -> None:
    (clone / ".lacconfig").write_text(
        '[lac "desk"]\n\tsetup = "echo first; echo second >&2; echo last; exit 37"\n'
    )
    git(clone, "add", ".lacconfig")
    git(clone, "commit", "-qm", "failing setup", "--no-verify")
    git(clone, "push", "-q", "origin", "main")
    assert lac("task", "add", "Fails").code == 0
    made = lac("claim", "1", "--worktree", "--json")
    assert made.code == 1, made.err
    body = made.json
    assert body["ok"] is False and body["unfinished"] == "desk_setup"
    setup = body["desk"]["setup"]
    assert setup["exit_code"] == 37 and setup["last_lines"] == ["first", "second", "last"]
    log = Path(setup["log"])
    assert log.read_text() == "first\nsecond\nlast\n"
    assert "exited 37" in made.err and str(log) in made.err and "git lac:   last" in made.err
    assert task(lac, 1)["state"] == "claimed"
    assert Path(body["desk"]["path"]).is_dir()


def test_a_path_that_is_not_empty_is_refused_and_nothing_is_claimed(
    lac: Lac, clone: Path, tmp_path: Path
) -> None:
    assert lac("task", "add", "T").code == 0
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine\n")
    before = (trees(clone), branches(clone))
    refused = lac("claim", "1", "--worktree", str(full))
    assert refused.code == 2 and "not empty" in refused.err
    assert refused.err.count("\n") == 1
    assert task(lac, 1)["state"] == "open"
    assert (trees(clone), branches(clone)) == before
    assert [p.name for p in full.iterdir()] == ["keep.txt"]


def test_a_refused_claim_leaves_no_worktree_and_no_branch(lac: Lac, clone: Path) -> None:
    assert lac("task", "add", "T").code == 0
    assert lac("claim", "1", "--as", "erin").code == 0
    before = (trees(clone), branches(clone))
    refused = lac("claim", "1", "--worktree", "--json")
    assert refused.code == 1 and refused.json["refused"]["reason"] == "already_claimed"
    assert (trees(clone), branches(clone)) == before
    assert not (clone / ".git" / "lacunari" / "worktrees" / "task-1").exists()
    nothing = lac("claim", "--next", "--worktree")
    assert nothing.code == 1 and (trees(clone), branches(clone)) == before
    # Nor a place on the board: the desk that was never made is no instance.
    places = lac("instance", "list", "--json").json["instances"]
    assert not [i for i in places if "task-1" in i["where"]], places


def test_a_desk_git_cannot_make_leaves_no_claim(lac: Lac, clone: Path) -> None:
    assert lac("task", "add", "T").code == 0
    git(clone, "branch", "lac")  # refs/heads/lac: no lac/task-1 can be made beside it
    before = (trees(clone), branches(clone))
    failed = lac("claim", "--next", "--worktree")
    assert failed.code == 3, failed.err
    assert "git cannot make the desk" in failed.err
    assert "(the claim of task #1 is given back)" in failed.err
    assert task(lac, 1)["state"] == "open"
    assert (trees(clone), branches(clone)) == before


def test_hostile_inputs(lac: Lac, clone: Path, tmp_path: Path) -> None:
    assert lac("task", "add", "T", "--write", "core/auth.py").code == 0
    before = (trees(clone), branches(clone))
    inside = lac("claim", "1", "--worktree", str(clone / "sub" / "desk"))
    assert inside.code == 2 and "inside the working tree" in inside.err
    a_file = tmp_path / "a-file"
    a_file.write_text("x\n")
    not_dir = lac("claim", "1", "--worktree", str(a_file))
    assert not_dir.code == 2 and "not a directory" in not_dir.err
    assert a_file.read_text() == "x\n"
    assert (trees(clone), branches(clone)) == before and task(lac, 1)["state"] == "open"
    held = lac("claim", "1", "--worktree", str(tmp_path / "on-main"), "--branch", "main")
    assert held.code == 2 and "checked out at" in held.err
    assert lac("claim", "1", "--worktree", "--branch", "-x").code == 2
    assert (trees(clone), branches(clone)) == before and task(lac, 1)["state"] == "open"
    # A committed copy glob that escapes the tree: refused before any claim.
    (tmp_path / "secret").write_text("not yours\n")
    for bad in ("../secret", "/etc/passwd", ".git/config", "core/../../secret"):
        (clone / ".lacconfig").write_text(f'[lac "desk"]\n\tcopy = {bad}\n')
        git(clone, "commit", "-qam", f"copy {bad}", "--no-verify")
        git(clone, "push", "-q", "origin", "main")
        escaped = lac("claim", "1", "--worktree")
        assert escaped.code == 2 and "inside the work tree" in escaped.err, (bad, escaped.err)
        assert (trees(clone), branches(clone)) == before and task(lac, 1)["state"] == "open"
    # A link whose target is missing: said, no dangling link, the desk made.
    (clone / ".lacconfig").write_text('[lac "desk"]\n\tlink = vendor/cache\n\tcopy = .env\n')
    git(clone, "commit", "-qam", "missing link", "--no-verify")
    git(clone, "push", "-q", "origin", "main")
    made = lac("claim", "1", "--worktree", "--json")
    assert made.code == 0, made.err
    path = Path(made.json["desk"]["path"])
    assert not os.path.lexists(path / "vendor" / "cache")
    assert "'vendor/cache' names nothing" in made.err
    assert made.json["desk"]["notes"] and (path / ".env").exists()
    # --worktree --as another agent: the desk is that agent's, whoever made it.
    assert lac("task", "add", "For bob").code == 0
    bobs = lac("claim", "2", "--worktree", "--as", "bob", "--json")
    assert bobs.code == 0, bobs.err
    at = Path(bobs.json["desk"]["path"])
    assert lac("whoami", "--json", cwd=at).json["agent"] == "bob"
    assert task(lac, 2)["owner"] == "bob"
    assert lac("env", cwd=at).out == "LAC_TASK_ID=2\nLAC_AGENT=bob\n"


def test_env_without_an_id(lac: Lac, clone: Path) -> None:
    none = lac("env")
    assert none.code == 2 and "holds 0 claims here" in none.err
    assert lac("task", "add", "A").code == 0
    assert lac("task", "add", "B").code == 0
    assert lac("claim", "1").code == 0
    one = lac("env", "--json")
    assert one.code == 0 and one.json["env"] == {"LAC_TASK_ID": "1", "LAC_AGENT": "tester"}
    assert lac("claim", "2").code == 0
    several = lac("env")
    assert several.code == 2 and "(#1, #2)" in several.err
    assert lac("release", "2").code == 0
    over = lac("env", "2")
    assert over.code == 1 and "task #2 is open" in over.err


def test_an_empty_path_is_refused_not_taken_for_the_default_place(lac: Lac, clone: Path) -> None:
    assert lac("task", "add", "A").code == 0
    empty = lac("claim", "1", "--worktree", "")
    assert empty.code == 2 and empty.err == "git lac: --worktree PATH: give a path\n"
    assert lac("show", "1", "--json").json["task"]["state"] == "open"
    assert trees(clone) == [str(clone)]


def test_a_desk_gets_its_claims_pool_values(lac: Lac, clone: Path) -> None:
    # The pool values a claim is granted reach its desk: the setup's
    # environment, `.lac/env` and `git lac env`.
    assert lac("resource", "add", "port", "8100-8101").code == 0
    assert lac("resource", "add", "db", "app_1").code == 0
    assert lac("task", "add", "Serve", "--needs-resource", "port:2").code == 0
    (clone / ".lacconfig").write_text('[lac "desk"]\n\tsetup = env | grep ^LAC_ | sort\n')
    git(clone, "add", ".lacconfig")
    git(clone, "commit", "-qm", "desk setup", "--no-verify")
    git(clone, "push", "-q", "--no-verify", "origin", "HEAD:main")
    git(clone, "fetch", "-q", "origin")
    made = lac("claim", "1", "--worktree", "--resource", "db", "--json")
    assert made.code == 0, made.err
    granted = sorted((v["name"], v["value"]) for v in made.json["resources"])
    assert granted == [("db", "app_1"), ("port", "8100"), ("port", "8101")]
    want = {
        "LAC_TASK_ID": "1",
        "LAC_AGENT": "tester",
        "LAC_PORT": "8100",  # the first; several add each by its index
        "LAC_PORT_0": "8100",
        "LAC_PORT_1": "8101",
        "LAC_DB": "app_1",
    }
    desk = Path(made.json["desk"]["path"])
    assert lac("env", "1", "--json").json["env"] == want
    written = (desk / ".lac" / "env").read_text()
    for name, value in want.items():
        assert f"{name}={value}\n" in written
    log = (desk / ".lac" / "setup.log").read_text()
    assert "LAC_PORT_0=8100" in log and "LAC_DB=app_1" in log


def test_prune_removes_only_desks_whose_claim_is_over_and_which_are_clean(
    lac: Lac, clone: Path
) -> None:
    for title in ("landed", "modified", "untracked", "live", "released", "staged"):
        assert lac("task", "add", title).code == 0
    desk = {}
    for tid in range(1, 7):
        made = lac("claim", str(tid), "--worktree", "--json")
        assert made.code == 0, made.err
        desk[tid] = Path(made.json["desk"]["path"])
    # 1: landed: a commit, done (landing), pushed, swept: done.
    (desk[1] / "landed.txt").write_text("work\n")
    git(desk[1], "add", "landed.txt")
    git(desk[1], "commit", "-qm", "the work")
    assert lac("done", "1", cwd=desk[1]).code == 0
    git(desk[1], "push", "-q", "origin", "lac/task-1:main")
    git(clone, "fetch", "-q")
    assert lac("sweep").code == 0
    assert task(lac, 1)["state"] == "done"
    # 2: a modified tracked file; 3: a new untracked file; 6: a staged file only.
    (desk[2] / "README").write_text("changed\n")
    (desk[3] / "new.txt").write_text("new\n")
    (desk[6] / "staged.txt").write_text("staged\n")
    git(desk[6], "add", "staged.txt")
    for tid in (2, 3, 5, 6):
        assert lac("release", str(tid), cwd=desk[tid]).code == 0
    # 4 stays claimed. Release and done removed no desk.
    assert all(p.is_dir() for p in desk.values())
    listed = {d["task"]: d for d in lac("desks", "--json").json["desks"]}
    assert listed[2]["uncommitted"] == {"modified": 1, "staged": 0, "untracked": 0}
    assert listed[6]["uncommitted"] == {"modified": 0, "staged": 1, "untracked": 0}
    assert listed[4]["live"] is True and listed[5]["live"] is False
    pruned = lac("desks", "--prune", "--json")
    assert pruned.code == 0, pruned.err
    gone = {r["task"]: r for r in pruned.json["removed"]}
    kept = {k["task"]: k["why"] for k in pruned.json["kept"]}
    assert set(gone) == {1, 5} and set(kept) == {2, 3, 4, 6}
    assert gone[1]["branch_deleted"] is True and gone[5]["branch_deleted"] is True
    assert "uncommitted work: 1 modified" in kept[2]
    assert "1 untracked" in kept[3] and "live" in kept[4] and "1 staged" in kept[6]
    assert not desk[1].exists() and not desk[5].exists()
    # A removed desk's link went, not what it pointed to in the main work tree.
    assert (clone / "node_modules" / "dep.js").read_text() == "// dep\n"
    assert (clone / ".env").read_text() == "SECRET=from-main\n"
    assert "lac/task-1" not in branches(clone) and "lac/task-5" not in branches(clone)
    # The kept ones keep every file and the staged change.
    assert (desk[2] / "README").read_text() == "changed\n"
    assert (desk[3] / "new.txt").read_text() == "new\n"
    assert git(desk[6], "diff", "--cached", "--name-only").split() == ["staged.txt"]
    assert (desk[4] / ".env").exists()
    human = lac("desks", "--prune")
    assert human.code == 0 and human.out.count("kept: ") == 4


def test_prune_keeps_a_branch_the_destination_lacks(lac: Lac, clone: Path) -> None:
    assert lac("task", "add", "Work").code == 0
    path = Path(lac("claim", "1", "--worktree", "--json").json["desk"]["path"])
    (path / "w.txt").write_text("w\n")
    git(path, "add", "w.txt")
    git(path, "commit", "-qm", "unlanded work")
    assert lac("release", "1", cwd=path).code == 0
    pruned = lac("desks", "--prune", "--json")
    assert [r["branch_deleted"] for r in pruned.json["removed"]] == [False]
    assert "lac/task-1" in branches(clone) and not path.exists()


def test_claim_help_names_the_desk_keys() -> None:
    out = lac_process(Path.cwd(), "claim", "-h").out
    for word in ("--worktree", "--branch", "lac.desk.copy", "lac.desk.link", "lac.desk.setup"):
        assert word in out


def test_racing_desk_claims_make_one_desk(lac: Lac, clone: Path) -> None:
    """Four real processes claim task 1 with a desk each: one wins, one desk
    and one branch are made, the others are refused and make nothing."""
    assert lac("task", "add", "Contended").code == 0
    procs = [
        subprocess.Popen(
            [LAC, "claim", "1", "--worktree", "--json", "--as", f"racer-{n}"],
            cwd=clone,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    outputs = [p.communicate() for p in procs]
    answers = [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]
    assert [code for code, _, _ in answers].count(0) == 1, answers
    winner = next(json.loads(out) for code, out, _ in answers if code == 0)
    for code, out, _ in answers:
        # Refused by the board, or (the winner's desk made first) by its path.
        if code == 1:
            assert json.loads(out)["refused"]["reason"] == "already_claimed"
        elif code == 2:
            assert "is there already" in json.loads(out)["error"]["message"]
        else:
            assert code == 0, answers
    assert trees(clone)[1:] == [winner["desk"]["path"]]
    assert branches(clone) == {"main", "lac/task-1"}
    assert task(lac, 1)["owner"] == winner["task"]["owner"]


def test_a_desk_next_cannot_make_after_its_claim_is_exit_3_and_gives_it_back(
    lac: Lac, clone: Path
) -> None:
    """`claim --next --worktree` learns its task, so its desk's path, only by
    claiming: a path taken already then gives the claim back, exit 3 (exit 2
    would say nothing was written)."""
    assert lac("task", "add", "T").code == 0
    taken = clone / ".git" / "lacunari" / "worktrees" / "task-1"
    taken.mkdir(parents=True)
    (taken / "left.txt").write_text("from before\n")
    failed = lac("claim", "--next", "--worktree")
    assert failed.code == 3 and "is there already" in failed.err, failed.err
    assert "given back" in failed.err
    assert task(lac, 1)["state"] == "open"
    assert (taken / "left.txt").read_text() == "from before\n"
    assert "lac/task-1" not in branches(clone)


def push_lacconfig(clone: Path, text: str) -> None:
    (clone / ".lacconfig").write_text(text)
    git(clone, "add", ".lacconfig")
    git(clone, "commit", "-qm", "desk config", "--no-verify")
    git(clone, "push", "-q", "origin", "main")


def test_a_path_in_another_desk_or_in_the_git_dir_is_refused_and_nothing_is_claimed(
    lac: Lac, clone: Path, tmp_path: Path
) -> None:
    assert lac("task", "add", "First").code == 0
    assert lac("task", "add", "Second").code == 0
    first = Path(lac("claim", "1", "--worktree", "--json").json["desk"]["path"])
    before = (trees(clone), branches(clone))
    dot_git = clone / ".git"
    cases = {
        # In the first desk: its untracked files, removed with it.
        str(first / "inner"): "inside the working tree",
        # git keeps each worktree's own files in .git/worktrees/NAME.
        str(dot_git / "worktrees" / "mixed"): "inside the git directory",
        str(dot_git / "refs" / "heads" / "desk"): "inside the git directory",
        str(dot_git / "lacunari" / "worktrees" / "task-9"): "where the desk of task #9 goes",
        str(tmp_path / "line\nbreak"): "U+000A",
        str(tmp_path / "bell\x07"): "U+0007",
        str(tmp_path / ("x" * 300)): "File name too long",
        str(tmp_path / "/".join(["y" * 200] * 25)): "too long",
    }
    for given, said in cases.items():
        refused = lac("claim", "2", "--worktree", given, "--json")
        assert refused.code == 2, (given[:60], refused.err)
        assert said in refused.json["error"]["message"], (given[:60], refused.err)
        assert refused.err.count("\n") == 1 and "Traceback" not in refused.err
        assert (trees(clone), branches(clone)) == before and task(lac, 2)["state"] == "open"
    assert not (first / "inner").exists() and not (dot_git / "worktrees" / "mixed").exists()
    # The desks' own place in the git dir is fine under any other name.
    ok = lac("claim", "2", "--worktree", str(dot_git / "lacunari" / "worktrees" / "second"))
    assert ok.code == 0, ok.err


def test_a_symlink_to_an_empty_directory_is_that_directory(
    lac: Lac, clone: Path, tmp_path: Path
) -> None:
    assert lac("task", "add", "T").code == 0
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    refused = lac("claim", "1", "--worktree", str(dangling))
    assert refused.code == 2 and "is a symlink to" in refused.err, refused.err
    assert task(lac, 1)["state"] == "open" and not (tmp_path / "nowhere").exists()
    real = tmp_path / "big-disk" / "desk"
    real.mkdir(parents=True)
    (tmp_path / "desk-link").symlink_to(real)
    made = lac("claim", "1", "--worktree", str(tmp_path / "desk-link"), "--json")
    assert made.code == 0, made.err
    assert made.json["desk"]["path"] == str(real) and (real / "README").exists()
    assert str(real) in trees(clone) and (tmp_path / "desk-link").is_symlink()


def test_a_branch_name_git_would_read_as_another_ref_is_refused(
    lac: Lac, clone: Path, tmp_path: Path
) -> None:
    assert lac("task", "add", "T").code == 0
    git(clone, "tag", "v1")
    before = (trees(clone), branches(clone), tip(clone, "origin/main"))
    for name, said in (
        ("@", "not a valid branch name"),
        ("HEAD", "not a valid branch name"),
        ("@{-1}", "not a valid branch name"),
        ("refs/heads/fix", "name it alone (e.g. 'fix')"),
        ("origin/main", "remote-tracking branch"),
        ("origin/later", "remote-tracking branch"),
        ("v1", "a tag"),
    ):
        refused = lac("claim", "1", "--worktree", str(tmp_path / "d"), "--branch", name)
        assert refused.code == 2 and said in refused.err, (name, refused.err)
        assert refused.err.count("\n") == 1
        assert (trees(clone), branches(clone), tip(clone, "origin/main")) == before
        assert task(lac, 1)["state"] == "open" and not (tmp_path / "d").exists()
    # The destination still means the remote's branch: no local one shadows it.
    assert git(clone, "rev-parse", "--symbolic-full-name", "origin/main").strip() == (
        "refs/remotes/origin/main"
    )


def test_a_setup_killed_by_a_signal_says_so(lac: Lac, clone: Path) -> None:
    push_lacconfig(clone, '[lac "desk"]\n\tsetup = "echo before; kill -KILL $$"\n')
    assert lac("task", "add", "T").code == 0
    made = lac("claim", "1", "--worktree", "--json")
    assert made.code == 1 and made.json["unfinished"] == "desk_setup", made.err
    setup = made.json["desk"]["setup"]
    assert setup["exit_code"] == 137 and setup["last_lines"] == ["before"]
    assert "was killed by SIGKILL (exit 137)" in made.err and "exited -9" not in made.err
    assert task(lac, 1)["state"] == "claimed"


def test_a_setup_that_leaves_a_process_running_does_not_hold_the_claim(
    lac: Lac, clone: Path
) -> None:
    """A setup that starts a server in the background is over when its shell
    exits; what the server prints later still goes to the log."""
    push_lacconfig(
        clone,
        '[lac "desk"]\n\tsetup = "(sleep 1; echo from the server; sleep 60) & '
        'echo $! > .lac/server.pid; echo started"\n',
    )
    assert lac("task", "add", "T").code == 0
    began = time.monotonic()
    made = lac("claim", "1", "--worktree", "--json")
    took = time.monotonic() - began
    assert made.code == 0, made.err
    path = Path(made.json["desk"]["path"])
    server = int((path / ".lac" / "server.pid").read_text())
    try:
        assert took < 20, took  # not the background job's 61 seconds
        assert made.json["desk"]["setup"]["last_lines"] == ["started"]
        log = path / ".lac" / "setup.log"
        deadline = time.monotonic() + 20
        while "from the server" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert log.read_text() == "started\nfrom the server\n"
    finally:  # the setup's process group: the background job and its sleep
        with contextlib.suppress(ProcessLookupError):
            os.killpg(os.getpgid(server), signal.SIGKILL)


def test_stopping_a_claim_stops_its_setup_and_keeps_claim_and_desk(lac: Lac, clone: Path) -> None:
    """SIGTERM to `claim --worktree` while its setup runs: the setup's whole
    process group is stopped too (no orphan left running), the answer is
    exit 143 with `stopped_by`, and the claim and the desk stay."""
    push_lacconfig(clone, '[lac "desk"]\n\tsetup = "sleep 120 & echo $! > .lac/child.pid; wait"\n')
    assert lac("task", "add", "T").code == 0
    proc = subprocess.Popen(
        [LAC, "claim", "1", "--worktree", "--json"],
        cwd=clone,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pid_file = clone / ".git" / "lacunari" / "worktrees" / "task-1" / ".lac" / "child.pid"
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    child = int(pid_file.read_text())
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, (out, err)
    body = json.loads(out)
    assert body["ok"] is False and body["stopped_by"] == "SIGTERM"
    assert body["desk"]["setup"]["exit_code"] == 143
    assert "killed by SIGTERM" in err and "Traceback" not in err
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the setup's child outlived the claim"
    assert task(lac, 1)["state"] == "claimed" and Path(body["desk"]["path"]).is_dir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead: reaped by init once its parent went.
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    return False


def test_a_lacconfig_reads_no_file_outside_its_commit(
    lac: Lac, clone: Path, tmp_path: Path
) -> None:
    """`[include] path = …` in the committed file would read this machine's
    files into it: the .lacconfig is what the commit holds, nothing more."""
    outside = tmp_path / "outside.ini"
    outside.write_text('[lac "desk"]\n\tsetup = "touch included-ran"\n')
    push_lacconfig(clone, f'[include]\n\tpath = {outside}\n[lac "desk"]\n\tcopy = .env\n')
    assert lac("task", "add", "T").code == 0
    made = lac("claim", "1", "--worktree", "--json")
    assert made.code == 0, made.err
    path = Path(made.json["desk"]["path"])
    assert made.json["desk"]["setup"]["command"] is None
    assert not (path / "included-ran").exists() and (path / ".env").exists()


def test_a_desk_deleted_by_hand_is_made_again_on_its_branch(lac: Lac, clone: Path) -> None:
    assert lac("task", "add", "T").code == 0
    path = Path(lac("claim", "1", "--worktree", "--json").json["desk"]["path"])
    (path / "w.txt").write_text("w\n")
    git(path, "add", "w.txt")
    git(path, "commit", "-qm", "kept on the branch")
    work = tip(path, "HEAD")
    shutil.rmtree(path)
    assert lac("release", "1", "--force", "--reason", "its desk is gone").code == 0
    again = lac("claim", "1", "--worktree", "--json")
    assert again.code == 0, again.err
    assert again.json["desk"]["continued"] is True and tip(path, "HEAD") == work
    assert (path / "w.txt").read_text() == "w\n"


def test_desks_lists_past_a_desk_whose_record_is_edited_into_nonsense(
    lac: Lac, clone: Path
) -> None:
    assert lac("task", "add", "A").code == 0
    assert lac("task", "add", "B").code == 0
    a = Path(lac("claim", "1", "--worktree", "--json").json["desk"]["path"])
    b = Path(lac("claim", "2", "--worktree", "--json").json["desk"]["path"])
    for nonsense in ("99999999999999999999999", "\u0661", "0"):
        git(b, "config", "--worktree", "lac.deskTask", nonsense)
        listed = lac("desks", "--json")
        assert listed.code == 0, listed.err
        assert [d["path"] for d in listed.json["desks"]] == [str(a)]
        pruned = lac("desks", "--prune")
        assert pruned.code == 0 and "kept: " in pruned.out and b.is_dir()
        env = lac("env", cwd=b)  # no desk record now: the one claim held there
        assert env.code == 0 and env.out == "LAC_TASK_ID=2\nLAC_AGENT=tester\n", env.err


def test_prune_says_a_claim_held_elsewhere_plainly(lac: Lac, clone: Path) -> None:
    assert lac("task", "add", "T").code == 0
    path = Path(lac("claim", "1", "--worktree", "--json").json["desk"]["path"])
    assert lac("claim", "1", "--take-over").code == 0  # now held in the main tree
    assert "(elsewhere)" in lac("desks").out
    pruned = lac("desks", "--prune")
    assert pruned.code == 0, pruned.err
    assert "its claim is held elsewhere now (claimed by tester) and it was clean" in pruned.out
    assert "((" not in pruned.out and "))" not in pruned.out and not path.exists()
    assert task(lac, 1)["state"] == "claimed"


def test_a_committed_symlink_cannot_lead_a_copy_out_of_the_desk(
    lac: Lac, clone: Path, tmp_path: Path
) -> None:
    """The commit the desk checks out makes `config` a symlink to a directory
    outside: copying or linking `config/db.local` there would write where the
    pusher chose. It is said and skipped; nothing is written outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    other = tmp_path / "pusher"
    git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), str(other))
    (other / "config").symlink_to(outside)
    (other / ".lacconfig").write_text(
        '[lac "desk"]\n\tcopy = config/*.local\n\tlink = config/db.local\n'
    )
    git(other, "add", "-f", "config", ".lacconfig")
    git(other, "commit", "-qm", "config is elsewhere", "--no-verify")
    git(other, "push", "-q", "origin", "main")
    git(clone, "fetch", "-q")
    assert lac("task", "add", "T").code == 0
    made = lac("claim", "1", "--worktree", "--json")
    assert made.code == 0, made.err
    assert list(outside.iterdir()) == []
    notes = made.json["desk"]["notes"]
    assert notes == [
        "lac.desk.copy 'config/db.local': a symlink in the desk leads out of it: not copied",
        "lac.desk.link 'config/db.local': a symlink in the desk leads out of it: not linked",
    ], notes
    assert (clone / "config" / "db.local").read_text() == "db=local\n"


def test_a_glob_over_a_directory_copies_it_once(lac: Lac, clone: Path) -> None:
    """`**` names a directory and everything in it: the directory is copied
    whole, and what is in it is not said again as the desk's own."""
    (clone / "config" / "nested").mkdir()
    (clone / "config" / "nested" / "deep.local").write_text("deep\n")
    push_lacconfig(clone, '[lac "desk"]\n\tcopy = config/**\n')
    assert lac("task", "add", "T").code == 0
    made = lac("claim", "1", "--worktree", "--json")
    assert made.code == 0, made.err
    path = Path(made.json["desk"]["path"])
    assert (path / "config" / "nested" / "deep.local").read_text() == "deep\n"
    assert (path / "config" / "db.local").read_text() == "db=local\n"
    assert made.json["desk"]["notes"] == [], made.json["desk"]["notes"]


def test_racing_prunes_remove_each_desk_once_and_all_answer(lac: Lac, clone: Path) -> None:
    """Three real `desks --prune` processes at once: every desk is removed by
    exactly one of them, and the others say so and exit 0 (a desk gone
    meanwhile is no failure of this machine's git)."""
    paths = []
    for n in range(6):
        assert lac("task", "add", f"T{n}").code == 0
        made = lac("claim", str(n + 1), "--worktree", "--json")
        assert made.code == 0, made.err
        paths.append(made.json["desk"]["path"])
        assert lac("release", str(n + 1), cwd=Path(paths[-1])).code == 0
    procs = [
        subprocess.Popen(
            [LAC, "desks", "--prune", "--json"],
            cwd=clone,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    answers = [(p, *p.communicate()) for p in procs]
    removed: list[str] = []
    for proc, out, err in answers:
        assert proc.returncode == 0, err
        assert "Traceback" not in err and "not installed" not in err, err
        removed += [r["path"] for r in json.loads(out)["removed"]]
    assert sorted(removed) == sorted(paths)
    assert trees(clone) == [str(clone)] and not any(Path(p).exists() for p in paths)


def test_a_desk_of_a_bare_clone_worked_in_through_worktrees_breaks_none_of_them(
    tmp_path: Path, board_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git clone --bare` then `git worktree add`: the shared config says
    `core.bare = true`. Turning on per-worktree config for the first desk
    must not make every worktree of the clone read as bare."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(origin), str(seed))
    (seed / "README").write_text("hello\n")
    git(seed, "add", "README")
    git(seed, "commit", "-qm", "base")
    git(seed, "push", "-q", "origin", "HEAD:main")
    bare = tmp_path / "proj.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    work = tmp_path / "wt-main"
    git(bare, "worktree", "add", "-q", str(work), "main")
    init = ["init"] + (["--url", board_url] if board_url else [])
    assert lac_inprocess(work, *init).code == 0
    assert lac_inprocess(work, "task", "add", "A").code == 0
    assert lac_inprocess(work, "task", "add", "B").code == 0
    made = lac_inprocess(work, "claim", "1", "--worktree", "--json")
    assert made.code == 0, made.err
    desk = Path(made.json["desk"]["path"])
    assert desk == bare / "lacunari" / "worktrees" / "task-1"
    # Every tree still works as one, and the bare repository is still bare.
    for tree in (work, desk):
        assert git(tree, "rev-parse", "--is-bare-repository").strip() == "false"
        assert git(tree, "status", "--porcelain") == ""
    assert git(bare, "rev-parse", "--is-bare-repository").strip() == "true"
    assert lac_inprocess(work, "desks").code == 0
    assert lac_inprocess(desk, "whoami", "--json").json["source"] == "git config lac.agent"
    # The desks' place inside the bare repository takes a PATH of one's own.
    named = bare / "lacunari" / "worktrees" / "named"
    second = lac_inprocess(work, "claim", "2", "--worktree", str(named))
    assert second.code == 0, second.err
    assert git(named, "symbolic-ref", "--short", "HEAD").strip() == "lac/task-2"
