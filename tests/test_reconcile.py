"""Reconcile on real repositories: git's own merge, hostile trees, a real merge state."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from .conftest import Result, git

Lac = Callable[..., Result]
LINES = "".join(f"line {n}\n" for n in range(1, 21))


def write(repo: Path, path: str, text: str | bytes) -> Path:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text)
    return target


def remove(path: Path) -> Path:
    path.unlink()
    return path


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, "--no-verify")
    return git(repo, "rev-parse", "HEAD").strip()


def edit_line(text: str, n: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[n - 1] = new + "\n"
    return "".join(lines)


def fork(repo: Path, ours: Callable[[], object], theirs: Callable[[], object]) -> None:
    """Branch `offline` from HEAD; apply ``theirs`` there and ``ours`` on main."""
    git(repo, "checkout", "-q", "-b", "offline")
    theirs()
    commit_all(repo, "offline work")
    git(repo, "checkout", "-q", "main")
    ours()
    commit_all(repo, "our work")


def outcomes(result: Result) -> dict[str, tuple[str, str | None]]:
    return {f["path"]: (f["outcome"], f["base_source"]) for f in result.json["files"]}


def status(repo: Path) -> list[str]:
    return sorted(git(repo, "status", "--porcelain", "--untracked-files=all").splitlines())


def test_offline_branch_merges_clean(lac: Lac, repo: Path) -> None:
    write(repo, "doc.txt", LINES)
    commit_all(repo, "doc")
    fork(
        repo,
        ours=lambda: write(repo, "doc.txt", edit_line(LINES, 2, "ours at 2")),
        theirs=lambda: (
            write(repo, "doc.txt", edit_line(LINES, 18, "theirs at 18")),
            write(repo, "new/theirs.txt", "brand new\n"),
            write(repo, "README", "their readme\n"),
        ),
    )
    result = lac("reconcile", "offline", "--json")
    assert result.code == 0, result.err
    assert outcomes(result) == {
        "doc.txt": ("merged", "merge-base"),
        "new/theirs.txt": ("taken", "merge-base"),
        "README": ("taken", "merge-base"),
    }
    merged = (repo / "doc.txt").read_text()
    assert "ours at 2" in merged and "theirs at 18" in merged and "<<<<<<<" not in merged
    staged = git(repo, "diff", "--cached", "--name-only").split()
    assert sorted(staged) == ["README", "doc.txt", "new/theirs.txt"]
    assert git(repo, "diff", "--name-only") == ""
    # Left as `git merge --no-commit` leaves it: the commit records both parents.
    offline = git(repo, "rev-parse", "offline").strip()
    assert (repo / ".git" / "MERGE_HEAD").read_text().strip() == offline
    assert lac("reconcile", "--continue").code == 0
    assert git(repo, "rev-parse", "HEAD^2").strip() == offline
    assert status(repo) == []
    kinds = [e["kind"] for e in lac("log", "--json").json["events"]]
    assert kinds.count("reconciled") == 1, "recorded once, not again at --continue"


def test_conflicting_region_keeps_markers_and_exits_1(lac: Lac, repo: Path) -> None:
    write(repo, "doc.txt", LINES)
    write(repo, "other.txt", LINES)
    commit_all(repo, "docs")
    fork(
        repo,
        ours=lambda: (
            write(repo, "doc.txt", edit_line(LINES, 5, "ours at 5")),
            write(repo, "other.txt", edit_line(LINES, 1, "ours at 1")),
        ),
        theirs=lambda: (
            write(repo, "doc.txt", edit_line(LINES, 5, "theirs at 5")),
            write(repo, "other.txt", edit_line(LINES, 20, "theirs at 20")),
        ),
    )
    result = lac("reconcile", "offline", "--json")
    assert result.code == 1
    assert result.json["ok"] is False and result.json["conflicts"] == ["doc.txt"]
    assert outcomes(result)["doc.txt"][0] == "conflicted"
    assert outcomes(result)["other.txt"][0] == "merged"
    text = (repo / "doc.txt").read_text()
    assert "<<<<<<< HEAD" in text and "ours at 5" in text and "theirs at 5" in text
    assert ">>>>>>> offline" in text, "the labels git merge would write"
    # A real merge state: git itself knows doc.txt is unmerged.
    assert "UU doc.txt" in status(repo) and "M  other.txt" in status(repo)
    stages = git(repo, "ls-files", "-u", "--", "doc.txt").split("\n")
    assert [line.split()[2] for line in stages if line] == ["1", "2", "3"]
    assert "ours at 5" in git(repo, "show", ":2:doc.txt")
    assert "theirs at 5" in git(repo, "show", ":3:doc.txt")
    head = git(repo, "rev-parse", "HEAD")
    plain = subprocess.run(["git", "commit", "--no-edit"], cwd=repo, capture_output=True)
    assert plain.returncode != 0 and b"unmerged" in plain.stderr + plain.stdout
    assert git(repo, "rev-parse", "HEAD") == head
    left = lac("reconcile", "--continue", "--json")
    assert left.code == 1 and left.json["ok"] is False and left.json["conflicts"] == ["doc.txt"]
    git(repo, "checkout", "--theirs", "--", "doc.txt")
    assert "theirs at 5" in (repo / "doc.txt").read_text()
    git(repo, "add", "doc.txt")
    assert lac("reconcile", "--continue").code == 0
    assert git(repo, "rev-parse", "HEAD^2").strip() == git(repo, "rev-parse", "offline").strip()
    assert [e["kind"] for e in lac("log", "--json").json["events"]][-1] == "reconciled"


def test_added_on_both_sides_and_deleted_versus_modified(lac: Lac, repo: Path) -> None:
    write(repo, "gone.txt", LINES)
    commit_all(repo, "gone")
    fork(
        repo,
        ours=lambda: (
            write(repo, "both.txt", "ours\n"),
            write(repo, "same.txt", "same\n"),
            write(repo, "gone.txt", edit_line(LINES, 3, "kept alive")),
        ),
        theirs=lambda: (
            write(repo, "both.txt", "theirs\n"),
            write(repo, "same.txt", "same\n"),
            remove(repo / "gone.txt"),
        ),
    )
    result = lac("reconcile", "offline", "--json")
    assert result.code == 1
    got = {f["path"]: f for f in result.json["files"]}
    assert "same.txt" not in got, "identical on both sides: nothing to do"
    assert got["both.txt"]["outcome"] == "conflicted"
    assert got["gone.txt"]["outcome"] == "conflicted"
    assert "modify/delete" in got["gone.txt"]["reason"]
    assert "kept alive" in (repo / "gone.txt").read_text(), "the modified side is never lost"
    assert "AA both.txt" in status(repo) and "UD gone.txt" in status(repo)


def test_binary_changed_on_both_sides_is_a_conflict_not_text(lac: Lac, repo: Path) -> None:
    write(repo, "img.bin", b"\x00\x01base")
    commit_all(repo, "bin")
    fork(
        repo,
        ours=lambda: write(repo, "img.bin", b"\x00\x02ours"),
        theirs=lambda: write(repo, "img.bin", b"\x00\x03theirs"),
    )
    result = lac("reconcile", "offline", "--json")
    assert result.code == 1
    (entry,) = result.json["files"]
    assert entry["outcome"] == "conflicted" and "binary" in entry["reason"].lower()
    assert (repo / "img.bin").read_bytes() == b"\x00\x02ours"


def test_path_held_by_another_agent_refuses_and_writes_nothing(lac: Lac, repo: Path) -> None:
    write(repo, "doc.txt", LINES)
    commit_all(repo, "doc")
    fork(
        repo,
        ours=lambda: write(repo, "README", "ours\n"),
        theirs=lambda: write(repo, "doc.txt", edit_line(LINES, 1, "theirs")),
    )
    assert lac("lock", "doc.txt", "--as", "dana").code == 0
    before = (repo / "doc.txt").read_text()
    result = lac("reconcile", "offline", "--json", "--as", "erin")
    assert result.code == 1
    assert result.json["refused"]["reason"] == "path_locked"
    assert result.json["refused"]["holder"] == "dana"
    assert (repo / "doc.txt").read_text() == before
    assert git(repo, "status", "--porcelain") == ""


def test_dry_run_writes_nothing(lac: Lac, repo: Path) -> None:
    write(repo, "doc.txt", LINES)
    commit_all(repo, "doc")
    fork(
        repo,
        ours=lambda: write(repo, "doc.txt", edit_line(LINES, 1, "o")),
        theirs=lambda: write(repo, "doc.txt", edit_line(LINES, 1, "t")),
    )
    events = len(lac("log", "--json").json["events"])
    result = lac("reconcile", "offline", "--dry-run", "--json")
    assert result.code == 0 and result.json["files"][0]["outcome"] == "conflicted"
    assert git(repo, "status", "--porcelain") == ""
    assert len(lac("log", "--json").json["events"]) == events


def test_unrelated_histories_merge_clean_on_the_shared_blob(
    lac: Lac, repo: Path, tmp_path: Path
) -> None:
    write(repo, "shared.txt", LINES)
    commit_all(repo, "shared file")
    write(repo, "shared.txt", edit_line(LINES, 2, "ours at 2"))
    commit_all(repo, "our edit")
    peer = tmp_path / "peer"
    peer.mkdir()
    git(peer, "init", "-q", "-b", "main")
    write(peer, "shared.txt", LINES)  # imported as a fresh history: same content, no shared commit
    commit_all(peer, "import")
    write(peer, "shared.txt", edit_line(LINES, 19, "theirs at 19"))
    commit_all(peer, "peer edit")
    git(repo, "fetch", "-q", str(peer), "main:peer")
    result = lac("reconcile", "peer", "--json")
    assert result.code == 0, result.out + result.err
    files = {f["path"]: f for f in result.json["files"]}
    entry = files.pop("shared.txt")
    assert (entry["outcome"], entry["base_source"]) == ("merged", "shared-history")
    # Ours only, and no base says the peer deleted them: kept, not conflicts.
    assert {p: (f["outcome"], f["reason"]) for p, f in files.items()} == {
        "README": ("kept", "present on our side only"),
        "core/auth.py": ("kept", "present on our side only"),
    }
    assert entry["base"] == git(repo, "rev-parse", "HEAD~1:shared.txt").strip()
    text = (repo / "shared.txt").read_text()
    assert "ours at 2" in text and "theirs at 19" in text


def test_base_recorded_by_a_lock_is_preferred(lac: Lac, repo: Path) -> None:
    write(repo, "doc.txt", LINES)
    commit_all(repo, "v0")
    git(repo, "branch", "offline")
    write(repo, "doc.txt", edit_line(LINES, 10, "v1 at 10"))
    commit_all(repo, "v1")
    locked_blob = git(repo, "rev-parse", "HEAD:doc.txt").strip()
    assert lac("lock", "doc.txt").code == 0  # records v1 as where our work starts
    git(repo, "checkout", "-q", "offline")
    write(repo, "doc.txt", edit_line(edit_line(LINES, 10, "v1 at 10"), 20, "theirs at 20"))
    commit_all(repo, "their work, from v1")
    git(repo, "checkout", "-q", "main")
    write(repo, "doc.txt", edit_line(edit_line(LINES, 10, "v1 at 10"), 1, "ours at 1"))
    commit_all(repo, "our work")
    result = lac("reconcile", "offline", "--json")
    assert result.code == 0, result.out + result.err
    (entry,) = result.json["files"]
    assert (entry["base_source"], entry["base"]) == ("lock", locked_blob)
    kinds = [e["kind"] for e in lac("log", "--json").json["events"]]
    assert "reconciled" not in kinds, "recorded when committed, not before"
    assert lac("reconcile", "--continue").code == 0
    kinds = [e["kind"] for e in lac("log", "--json").json["events"]]
    assert kinds[-1] == "reconciled"


def test_bad_input(lac: Lac, repo: Path) -> None:
    missing = lac("reconcile", "no-such-branch")
    assert missing.code == 2 and "is not a commit" in missing.err
    bad_base = lac("reconcile", "HEAD", "--base", "nope")
    assert bad_base.code == 2 and "--base" in bad_base.err
    write(repo, "doc.txt", LINES)
    commit_all(repo, "doc")
    fork(
        repo,
        ours=lambda: write(repo, "README", "ours\n"),
        theirs=lambda: write(repo, "doc.txt", edit_line(LINES, 1, "theirs")),
    )
    write(repo, "doc.txt", "uncommitted\n")
    dirty = lac("reconcile", "offline")
    assert dirty.code == 3 and "ignored files at doc.txt would be overwritten" in dirty.err
    assert (repo / "doc.txt").read_text() == "uncommitted\n"
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    nothing = lac("reconcile", "--abort")
    assert nothing.code == 2 and "no reconcile in progress" in nothing.err
    both = lac("reconcile", "offline", "--abort")
    assert both.code == 2 and "exactly one of REF, --abort and --continue" in both.err
