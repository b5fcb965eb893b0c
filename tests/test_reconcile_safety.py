"""Reconcile against a hostile peer, and the merge state it leaves.

Their trees are built with plumbing (`git mktree`, `git commit-tree`), since
git's porcelain would never produce them: that is the point of a crafted
tree. The board is the embedded default; these tests are about git.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, git, lac_inprocess

Lac = Callable[..., Result]
LINES = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
def lac(repo: Path) -> Lac:
    def call(*args: str) -> Result:
        return lac_inprocess(repo, *args)

    return call


def blob(repo: Path, data: bytes) -> str:
    proc = git(repo, "hash-object", "-w", "--stdin", input=data.decode("latin-1"))
    return proc.strip()


def mktree(repo: Path, entries: dict[str, tuple[str, str]]) -> str:
    """A tree from {path: (mode, oid)}, nested by '/', names taken as given."""
    here: dict[str, tuple[str, str]] = {}
    below: dict[str, dict[str, tuple[str, str]]] = {}
    for path, entry in entries.items():
        head, sep, rest = path.partition("/")
        if sep:
            below.setdefault(head, {})[rest] = entry
        else:
            here[head] = entry
    kinds = {"160000": "commit"}
    lines = [
        f"{mode} {kinds.get(mode, 'blob')} {oid}\t{name}" for name, (mode, oid) in here.items()
    ]
    lines += [f"040000 tree {mktree(repo, sub)}\t{name}" for name, sub in below.items()]
    return git(repo, "mktree", "-z", "--missing", input="\0".join(lines) + "\0").strip()


def their_commit(repo: Path, extra: dict[str, tuple[str, str]]) -> str:
    """HEAD's tree plus ``extra``, as a child of HEAD: what a peer might send."""
    entries: dict[str, tuple[str, str]] = {}
    for line in git(repo, "ls-tree", "-r", "HEAD").splitlines():
        meta, name = line.split("\t", 1)
        mode, _kind, oid = meta.split()
        entries[name] = (mode, oid)
    entries.update(extra)
    tree = mktree(repo, entries)
    return git(repo, "commit-tree", tree, "-p", "HEAD", "-m", "peer").strip()


def snapshot(repo: Path) -> dict[str, str]:
    """HEAD, the index as a tree, and a hash of every file under the repo (git dir too)."""
    state = {
        "HEAD": git(repo, "rev-parse", "HEAD").strip(),
        "index": git(repo, "write-tree").strip(),
    }
    for root, _dirs, files in os.walk(repo):
        for name in files:
            path = Path(root) / name
            rel_parts = path.relative_to(repo).parts
            if path.name in ("index", "ORIG_HEAD") or {"objects", "logs", "lacunari"} & set(
                rel_parts
            ):
                # The index's stat cache (compared as a tree above), the object
                # store, reflogs and the board change harmlessly.
                continue
            rel = str(path.relative_to(repo))
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            state[rel] = hashlib.sha256(data).hexdigest()
    return state


HOSTILE = [
    ".git/hooks/pre-commit",
    ".GIT/hooks/pre-commit",
    ".Git/config",
    ".git /hooks/pre-commit",
    ".git./hooks/pre-commit",
    "git~1/hooks/pre-commit",
    "GIT~1/config",
    ".g\u200cit/hooks/pre-commit",
    "\ufeff.git/hooks/pre-commit",
    ".git::$INDEX_ALLOCATION/hooks/pre-commit",
    "sub/.git/hooks/pre-commit",
    "a\\.git\\hooks\\pre-commit",
    "..",
    "../escaped",
]


@pytest.mark.parametrize("path", HOSTILE)
def test_a_path_into_the_git_dir_is_refused_and_nothing_written(
    lac: Lac, repo: Path, path: str
) -> None:
    hook = blob(repo, b"#!/bin/sh\necho pwned > /tmp/lac-pwned\n")
    evil = their_commit(repo, {path: ("100755", hook)})
    before = snapshot(repo)
    for args in (("reconcile", evil), ("reconcile", evil, "--dry-run")):
        result = lac(*args)
        assert result.code == 2, (path, result.out, result.err)
        assert "cannot be checked out safely" in result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
    assert snapshot(repo) == before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / ".git" / "lacunari").exists(), "refused before the board is even opened"
    as_json = lac("reconcile", evil, "--json")
    assert as_json.code == 2 and as_json.json["ok"] is False


def test_a_symlink_named_gitmodules_is_refused(lac: Lac, repo: Path) -> None:
    target = blob(repo, b"/etc/passwd")
    evil = their_commit(repo, {".GITMODULES": ("120000", target)})
    result = lac("reconcile", evil)
    assert result.code == 2 and "symbolic link named .gitmodules" in result.err


def test_a_symlink_beside_a_directory_of_the_same_name_is_refused(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    link = blob(repo, str(outside).encode())
    payload = blob(repo, b"pwned\n")
    evil = their_commit(repo, {"evil": ("120000", link), "evil/x": ("100644", payload)})
    result = lac("reconcile", evil)
    assert result.code == 2 and "a name twice" in result.err
    assert list(outside.iterdir()) == []


def test_our_symlink_replaced_by_their_directory_writes_inside_only(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "somewhere"
    outside.mkdir()
    (repo / "lnk").symlink_to(outside)
    git(repo, "add", "lnk")
    git(repo, "commit", "-qm", "a link")
    # Their side turned the link into a directory with a file in it.
    entries = {
        name: (meta.split()[0], meta.split()[2])
        for meta, name in (
            line.split("\t", 1) for line in git(repo, "ls-tree", "-r", "HEAD").splitlines()
        )
        if name != "lnk"
    }
    entries["lnk/file"] = ("100644", blob(repo, b"theirs\n"))
    tree = mktree(repo, entries)
    theirs = git(repo, "commit-tree", tree, "-p", "HEAD", "-m", "dir").strip()
    result = lac("reconcile", theirs)
    assert result.code == 0, result.err
    assert list(outside.iterdir()) == [], "nothing written through the symlink"
    assert (repo / "lnk").is_dir() and not (repo / "lnk").is_symlink()
    assert (repo / "lnk" / "file").read_text() == "theirs\n"


def test_their_symlink_pointing_outside_is_only_a_link(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    theirs = their_commit(repo, {"docs": ("120000", blob(repo, str(outside).encode()))})
    result = lac("reconcile", theirs)
    assert result.code == 0, result.err
    assert os.readlink(repo / "docs") == str(outside)
    assert list(outside.iterdir()) == []


def fork_conflict(repo: Path) -> None:
    (repo / "doc.txt").write_text(LINES)
    (repo / "keep.txt").write_text("keep\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "docs")
    git(repo, "checkout", "-qb", "offline")
    (repo / "doc.txt").write_text(LINES.replace("line 5\n", "theirs 5\n"))
    (repo / "added.txt").write_text("theirs only\n")
    (repo / "README").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "doc.txt").write_text(LINES.replace("line 5\n", "ours 5\n"))
    git(repo, "commit", "-qam", "ours")


def test_abort_restores_head_index_and_work_tree_exactly(lac: Lac, repo: Path) -> None:
    fork_conflict(repo)
    (repo / "keep.txt").write_text("an unstaged change elsewhere\n")
    (repo / "untracked.txt").write_text("mine\n")
    before = snapshot(repo)
    result = lac("reconcile", "offline", "--json")
    assert result.code == 1 and result.json["ok"] is False
    merging = set(git(repo, "status", "--porcelain").splitlines())
    assert {"A  added.txt", "D  README", "UU doc.txt", " M keep.txt"} <= merging
    again = lac("reconcile", "offline")
    assert again.code == 3 and "in progress" in again.err
    aborted = lac("reconcile", "--abort", "--json")
    assert aborted.code == 0 and aborted.json == {"ok": True, "aborted": "offline"}
    assert snapshot(repo) == before


def test_a_plain_commit_after_resolving_is_recorded_later(lac: Lac, repo: Path) -> None:
    fork_conflict(repo)
    assert lac("reconcile", "offline").code == 1
    (repo / "doc.txt").write_text(LINES)
    git(repo, "add", "doc.txt")
    git(repo, "commit", "-q", "--no-edit", "--no-verify")
    assert lac("reconcile", "offline").code == 0  # nothing left to merge: settles the last one
    kinds = [e["kind"] for e in lac("log", "--json").json["events"]]
    assert kinds.count("reconciled") == 1


def test_modes_and_renames_merge_as_git_does(lac: Lac, repo: Path) -> None:
    (repo / "tool.sh").write_text(LINES)
    (repo / "old_name.py").write_text(LINES)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "files")
    git(repo, "checkout", "-qb", "offline")
    (repo / "tool.sh").chmod(0o755)  # their mode change...
    git(repo, "mv", "old_name.py", "new_name.py")  # ...and their rename
    git(repo, "commit", "-qam", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "tool.sh").write_text(LINES.replace("line 1\n", "ours 1\n"))  # our edits
    (repo / "old_name.py").write_text(LINES.replace("line 20\n", "ours 20\n"))
    git(repo, "commit", "-qam", "ours")
    expected = git(repo, "merge-tree", "--write-tree", "HEAD", "offline").strip()
    result = lac("reconcile", "offline", "--json")
    assert result.code == 0, result.out + result.err
    assert git(repo, "write-tree").strip() == expected
    assert os.access(repo / "tool.sh", os.X_OK), "their executable bit is not undone"
    assert "ours 1" in (repo / "tool.sh").read_text()
    assert not (repo / "old_name.py").exists()
    assert "ours 20" in (repo / "new_name.py").read_text(), "our edit follows their rename"


def test_criss_cross_uses_a_virtual_base(lac: Lac, repo: Path) -> None:
    def commit(message: str) -> None:
        git(repo, "commit", "-qam", message)

    (repo / "f.txt").write_text(LINES)
    git(repo, "add", ".")
    commit("base")
    git(repo, "branch", "other")
    (repo / "f.txt").write_text(LINES.replace("line 2\n", "main 2\n"))
    commit("main 2")
    git(repo, "checkout", "-q", "other")
    (repo / "f.txt").write_text(LINES.replace("line 19\n", "other 19\n"))
    commit("other 19")
    git(repo, "branch", "other-tip")
    git(repo, "merge", "-q", "--no-edit", "main")  # other gets main's change
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "other-tip")  # main gets other's: criss-cross
    (repo / "f.txt").write_text((repo / "f.txt").read_text().replace("line 6\n", "main 6\n"))
    commit("main 10")
    git(repo, "checkout", "-q", "other")
    (repo / "f.txt").write_text((repo / "f.txt").read_text().replace("line 15\n", "other 15\n"))
    commit("other 11")
    git(repo, "checkout", "-q", "main")
    assert len(git(repo, "merge-base", "--all", "main", "other").split()) == 2
    expected = git(repo, "merge-tree", "--write-tree", "main", "other").strip()
    result = lac("reconcile", "other", "--json")
    assert result.code == 0, result.out + result.err
    assert {f["base_source"] for f in result.json["files"]} == {"virtual-merge-base"}
    assert git(repo, "write-tree").strip() == expected


def test_a_submodule_entry_is_taken_as_git_takes_it(lac: Lac, repo: Path) -> None:
    pinned = git(repo, "rev-parse", "HEAD").strip()  # any commit id will do for a gitlink
    theirs = their_commit(repo, {"vendor/lib": ("160000", pinned)})
    result = lac("reconcile", theirs, "--json")
    assert result.code == 0, result.err
    assert result.json["files"] == [
        {
            "path": "vendor/lib",
            "outcome": "taken",
            "base": None,
            "base_source": "merge-base",
            "reason": "added on their side",
        }
    ]
    assert git(repo, "ls-files", "-s", "vendor/lib").split()[:2] == ["160000", pinned]
    assert (repo / "vendor" / "lib").is_dir() and not any((repo / "vendor" / "lib").iterdir())


def raw_tree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree object written as given (no sorting, no checks): what only a
    hostile peer makes. Entries are (mode, name, oid)."""
    data = b"".join(
        mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(oid)
        for mode, name, oid in entries
    )
    proc = subprocess.run(
        ["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"],
        cwd=repo,
        input=data,
        capture_output=True,
        check=True,
    )
    return proc.stdout.decode().strip()


@pytest.mark.parametrize(
    ("name", "said"),
    [("a/b", "a name with a slash"), ("", "an empty name"), ("README", "a name twice")],
)
def test_malformed_trees_are_refused_before_git_merges_them(
    lac: Lac, repo: Path, name: str, said: str
) -> None:
    readme = git(repo, "rev-parse", "HEAD:README").strip()
    core = git(repo, "rev-parse", "HEAD:core").strip()
    evil = blob(repo, b"evil\n")
    tree = raw_tree(
        repo, [("100644", "README", readme), ("100644", name, evil), ("40000", "core", core)]
    )
    theirs = git(repo, "commit-tree", tree, "-p", "HEAD", "-m", "crafted").strip()
    before = snapshot(repo)
    for args in ((theirs,), (theirs, "--dry-run")):
        result = lac("reconcile", *args)
        assert result.code == 2 and said in result.err, result
        assert "Traceback" not in result.err and "Assertion" not in result.err
    assert snapshot(repo) == before


def test_ntfs_short_names_of_gitmodules_are_refused_as_symlinks(lac: Lac, repo: Path) -> None:
    for name in ("gitmod~1", "GI7EBA~1", "gitatt~2 ."):
        theirs = their_commit(repo, {name: ("120000", blob(repo, b"/etc/passwd"))})
        result = lac("reconcile", theirs, "--dry-run")
        assert result.code == 2 and "symbolic link named" in result.err, (name, result)


@pytest.mark.parametrize("ref", ["^HEAD", "^main", "HEAD..main"])
def test_a_negative_revision_or_range_is_not_a_commit(lac: Lac, repo: Path, ref: str) -> None:
    result = lac("reconcile", ref)
    assert result.code == 2 and "is not a commit here" in result.err, result


def test_unborn_head_cannot_work_here(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    git(tmp_path, "init", "-q", str(fresh))
    result = lac_inprocess(fresh, "reconcile", "main")
    assert result.code == 3 and "HEAD has no commit yet" in result.err, result


def test_a_path_that_forges_report_lines_is_shown_escaped(lac: Lac, repo: Path) -> None:
    name = "run.sh  (base: none)\nplan: nothing to do\x1b[8m"
    theirs = their_commit(repo, {name: ("100644", blob(repo, b"x\n"))})
    result = lac("reconcile", theirs, "--dry-run")
    assert result.code == 0, result
    assert "\x1b" not in result.out and "\nplan: nothing to do" not in result.out
    assert result.out.strip().splitlines()[-1] == "plan: 1 taken"


def test_ignored_files_in_the_way_are_refused(lac: Lac, repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\nbuild\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore")
    theirs = their_commit(
        repo, {"x.log": ("100644", blob(repo, b"theirs\n")), "build": ("100644", blob(repo, b"b"))}
    )
    (repo / "x.log").write_text("my log\n")
    (repo / "build").mkdir()
    (repo / "build" / "data").write_text("mine\n")
    result = lac("reconcile", theirs)
    assert result.code == 3 and "ignored files" in result.err, result
    assert (repo / "x.log").read_text() == "my log\n"
    assert (repo / "build" / "data").read_text() == "mine\n"


def test_a_stale_state_never_steers_abort_or_continue(lac: Lac, repo: Path) -> None:
    fork_conflict(repo)
    assert lac("reconcile", "offline").code == 1
    git(repo, "merge", "--abort")  # undone with git's own command: the state file is stale
    (repo / "later.txt").write_text("later work\n")
    git(repo, "add", "later.txt")
    git(repo, "commit", "-qm", "later work")
    later = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-qb", "x", "HEAD~1")
    (repo / "later.txt").write_text("other work\n")
    git(repo, "add", "later.txt")
    git(repo, "commit", "-qm", "x")
    git(repo, "checkout", "-q", "main")
    merging = subprocess.run(["git", "merge", "-q", "x"], cwd=repo, capture_output=True)
    assert merging.returncode == 1  # an ordinary conflicting git merge
    for verb in ("--abort", "--continue"):
        result = lac("reconcile", verb)
        assert result.code == 2 and "git merge --abort" in result.err, result
    assert git(repo, "rev-parse", "HEAD").strip() == later, "no commit lost"
    assert "reconciled" not in [e["kind"] for e in lac("log", "--json").json["events"]]


def test_aborting_a_clean_reconcile_leaves_no_event(lac: Lac, repo: Path) -> None:
    git(repo, "checkout", "-qb", "offline")
    (repo / "new.txt").write_text("theirs\n")
    git(repo, "add", "new.txt")
    git(repo, "commit", "-qm", "theirs")
    git(repo, "checkout", "-q", "main")
    assert lac("reconcile", "offline").code == 0
    assert lac("reconcile", "--abort").code == 0
    assert "reconciled" not in [e["kind"] for e in lac("log", "--json").json["events"]]
    assert not (repo / "new.txt").exists()


def test_a_dry_run_refuses_what_a_real_run_refuses(lac: Lac, repo: Path) -> None:
    fork_conflict(repo)
    assert lac("reconcile", "offline").code == 1
    result = lac("reconcile", "offline", "--dry-run")
    assert result.code == 3 and "reconcile is in progress" in result.err


# A process that dies at the worst moment: right after git has written the
# work tree and index, before reconcile wrote MERGE_HEAD.
DIE_AFTER_READ_TREE = """
import os, signal, sys
from git_lacunari.reconcile import worktree
real = worktree.git_rc
def dying(repo, *args, **kwargs):
    result = real(repo, *args, **kwargs)
    if args[0] == "read-tree":
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    return result
worktree.git_rc = dying
from git_lacunari.cli import run
sys.exit(run(sys.argv[2:]))
"""


def run_dying(repo: Path, signame: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", DIE_AFTER_READ_TREE, signame, *args],
        cwd=repo,
        capture_output=True,
        text=True,
    )


def test_sigkill_half_way_can_be_undone_exactly(lac: Lac, repo: Path) -> None:
    fork_conflict(repo)
    (repo / "keep.txt").write_text("an unstaged change elsewhere\n")
    before = snapshot(repo)
    died = run_dying(repo, "SIGKILL", "reconcile", "offline")
    assert died.returncode == -signal.SIGKILL
    assert snapshot(repo) != before, "it did die half-way: the work tree is written"
    assert not (repo / ".git" / "MERGE_HEAD").exists(), "...and MERGE_HEAD is not"
    again = lac("reconcile", "offline")
    assert again.code == 3 and "reconcile is in progress" in again.err
    cont = lac("reconcile", "--continue")
    assert cont.code == 3 and "interrupted" in cont.err
    assert lac("reconcile", "--abort").code == 0
    assert snapshot(repo) == before


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_waits_for_a_whole_merge_then_exit_130(lac: Lac, repo: Path, signame: str) -> None:
    fork_conflict(repo)
    before = snapshot(repo)
    stopped = run_dying(repo, signame, "reconcile", "offline", "--json")
    assert stopped.returncode == 130, stopped
    body = json.loads(stopped.stdout)
    assert body["ok"] is False and body["error"]["kind"] == "interrupted"
    assert (repo / ".git" / "MERGE_HEAD").exists(), "the merge state is whole"
    assert "UU doc.txt" in git(repo, "status", "--porcelain")
    assert lac("reconcile", "--abort").code == 0
    assert snapshot(repo) == before


def test_a_wide_tree_is_checked_without_a_pipe_deadlock(repo: Path, tmp_path: Path) -> None:
    """3,000 changed directories at one level: far more tree ids than a pipe
    holds, asked of one `git cat-file --batch`."""
    payload = blob(repo, b"x\n")
    index = tmp_path / "wide.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    lines = "".join(f"100644 {payload}\td{n}/f\n" for n in range(3000))
    subprocess.run(
        ["git", "update-index", "--add", "--index-info"],
        cwd=repo,
        env=env,
        input=lines,
        text=True,
        check=True,
    )
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    theirs = git(repo, "commit-tree", tree, "-p", "HEAD", "-m", "wide").strip()
    proc = subprocess.run(
        [sys.executable, "-m", "git_lacunari", "reconcile", theirs, "--dry-run", "--json"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["counts"]["taken"] == 3000
