"""Conflict markers are not committed by habit while a reconcile is in
progress: the real pre-commit hook (fired by a real `git commit -a`) and
`reconcile --continue` refuse a path reconcile left conflicted whose staged
content still holds markers; LAC_ALLOW_MARKERS=1 and --allow-markers commit
them on purpose; binary files, legitimate marker lines and every commit
outside a reconcile are untouched. Both backends."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from git_lacunari.reconcile.markers import marker_lines

from .conftest import Result, git, lac_process

Lac = Callable[..., Result]
BIN = str(Path(sys.executable).parent)


def run_git(repo: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    full = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], **(env or {})}
    proc = subprocess.run(["git", *args], cwd=repo, env=full, capture_output=True, text=True)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def write(repo: Path, name: str, data: str | bytes) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)


def fork(
    repo: Path,
    base: dict[str, str | bytes],
    theirs: dict[str, str | bytes],
    ours: dict[str, str | bytes],
) -> None:
    for name, data in base.items():
        write(repo, name, data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base", "--no-verify")
    git(repo, "checkout", "-qb", "offline")
    for name, data in theirs.items():
        write(repo, name, data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "theirs", "--no-verify")
    git(repo, "checkout", "-q", "main")
    for name, data in ours.items():
        write(repo, name, data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ours", "--no-verify")


@pytest.fixture
def hooked(lac: Lac, repo: Path) -> Path:
    assert lac_process(repo, "hooks", "install").code == 0
    return repo


def conflicted(repo: Path, lac: Lac, **extra: str | bytes) -> Result:
    fork(
        repo,
        {"README": "Shop\n", "notes.md": "Notes\n", "clean.txt": "a\n", **extra},
        {"README": "Shop, offline\n", "notes.md": "Notes, offline\n", "clean.txt": "a\nb\n"},
        {"README": "Shop (main)\n", "notes.md": "Notes (main)\n"},
    )
    result = lac("reconcile", "offline")
    assert result.code == 1, result
    return result


def test_commit_a_over_markers_is_refused_in_one_line_naming_the_files(
    hooked: Path, lac: Lac
) -> None:
    repo = hooked
    conflicted(repo, lac)
    before = head(repo)
    refused = run_git(repo, "commit", "-qam", "all of it")
    assert refused.code == 1, refused
    assert refused.err.splitlines() == [
        "refused: conflict markers left in README, notes.md; a reconcile is in progress: "
        "resolve them and `git add`, or commit them on purpose with LAC_ALLOW_MARKERS=1"
    ]
    assert head(repo) == before
    # Resolving one is not enough; resolving both is.
    write(repo, "README", "Shop (main), offline\n")
    again = run_git(repo, "commit", "-qam", "all of it")
    assert again.code == 1 and "left in notes.md;" in again.err and "README" not in again.err
    write(repo, "notes.md", "Notes (main), offline\n")
    done = run_git(repo, "commit", "-qam", "all of it")
    assert done.code == 0, done
    assert git(repo, "rev-parse", "HEAD^2").strip() == git(repo, "rev-parse", "offline").strip()


def test_the_override_commits_markers_on_purpose(hooked: Path, lac: Lac) -> None:
    repo = hooked
    conflicted(repo, lac)
    allowed = run_git(repo, "commit", "-qam", "markers", env={"LAC_ALLOW_MARKERS": "1"})
    assert allowed.code == 0, allowed
    assert "<<<<<<< " in git(repo, "show", "HEAD:README")


def test_continue_refuses_staged_markers_unless_allowed(hooked: Path, lac: Lac) -> None:
    repo = hooked
    conflicted(repo, lac)
    git(repo, "add", "README", "notes.md")
    before = head(repo)
    refused = lac("reconcile", "--continue", "--json")
    assert refused.code == 1
    assert refused.json["refused"] == {
        "reason": "conflict_markers",
        "paths": ["README", "notes.md"],
    }
    assert head(repo) == before and (repo / ".git" / "MERGE_HEAD").exists()
    # The fast path (entry.py) and the full command line answer alike.
    fast = lac_process(repo, "reconcile", "--continue")
    assert fast.code == 1 and fast.err.startswith("refused: conflict markers left in README")
    assert lac("reconcile", "--allow-markers").code == 2  # only with --continue
    done = lac_process(repo, "reconcile", "--continue", "--allow-markers")
    assert done.code == 0, done  # our own pre-commit hook ran inside, told the same
    assert "reconciled offline: committed" in done.out
    assert ">>>>>>> offline" in git(repo, "show", "HEAD:notes.md")


def test_binary_and_legitimate_marker_lines_pass(hooked: Path, lac: Lac) -> None:
    repo = hooked
    fixture = "before\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\nafter\n"
    binary = b"\x00\x01<<<<<<< HEAD\n" + bytes(range(256))
    fork(
        repo,
        {"fixture.txt": fixture, "blob.bin": binary, "doc.md": "Title\n=======\n\ntext\n"},
        {
            "fixture.txt": fixture + "theirs\n",
            "blob.bin": binary + b"theirs",
            "doc.md": "Title\n=======\n\ntheirs\n",
        },
        {
            "fixture.txt": fixture + "ours\n",
            "blob.bin": binary + b"ours",
            "doc.md": "Title\n=======\n\nours\n",
        },
    )
    assert lac("reconcile", "offline").code == 1
    # Resolved, each keeping lines that look like markers: as many as a side had,
    # a heading's underline, and binary content.
    write(repo, "fixture.txt", fixture + "ours\ntheirs\n")
    write(repo, "blob.bin", binary + b"\n>>>>>>> both\n")
    write(repo, "doc.md", "Title\n=======\n\nours and theirs\n")
    done = run_git(repo, "commit", "-qam", "resolved")
    assert done.code == 0, done


def test_outside_a_reconcile_nothing_is_looked_at(hooked: Path, lac: Lac) -> None:
    repo = hooked
    write(repo, "conflict.txt", "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> other\n")
    git(repo, "add", "conflict.txt")
    assert run_git(repo, "commit", "-qm", "a fixture").code == 0
    # A plain `git merge` that stopped for conflicts: git's own rules, as before.
    fork(repo, {"f.txt": "1\n"}, {"f.txt": "theirs\n"}, {"f.txt": "ours\n"})
    assert run_git(repo, "merge", "offline").code == 1
    assert run_git(repo, "commit", "-qam", "merged with markers").code == 0


def test_a_paths_own_marker_size_is_honoured(hooked: Path, lac: Lac) -> None:
    repo = hooked
    write(repo, ".gitattributes", "README conflict-marker-size=10\n")
    conflicted(repo, lac)
    assert "<<<<<<<<<< " in (repo / "README").read_text()
    write(repo, "notes.md", "Notes (main)\n<<<<<<< not a marker here? it is: 7 is notes.md's\n")
    refused = run_git(repo, "commit", "-qam", "x")
    assert refused.code == 1 and "left in README, notes.md;" in refused.err
    write(repo, "README", "ok\n<<<<<<< seven is not ten\n")
    write(repo, "notes.md", "resolved\n")
    assert run_git(repo, "commit", "-qam", "x").code == 0


def reconcile_with(
    repo: Path, lac: Lac, theirs_extra: dict[str, str | bytes], ours_extra: dict[str, str | bytes]
) -> str:
    """README conflicted, with ``.gitattributes`` as each side has it; the
    marker line git wrote."""
    fork(
        repo,
        {"README": "Shop\n"},
        {"README": "Shop, offline\n", **theirs_extra},
        {"README": "Shop (main)\n", **ours_extra},
    )
    assert lac("reconcile", "offline").code == 1
    return (repo / "README").read_text().splitlines()[0]


ATTR = ".gitattributes"


@pytest.mark.parametrize(
    ("theirs_extra", "ours_extra", "after", "written"),
    [
        # the merge brings in a size git did not use to write these markers
        ({ATTR: "README conflict-marker-size=12\n"}, {}, None, 7),
        # a size git reads but a small parser would not (large; leading digits)
        ({}, {ATTR: "README conflict-marker-size=1500\n"}, None, 1500),
        ({}, {ATTR: "README conflict-marker-size=09x\n"}, None, 9),
        # edited or removed after the markers were written
        ({}, {ATTR: "README conflict-marker-size=10\n"}, "README conflict-marker-size=20\n", 10),
        ({}, {ATTR: "README conflict-marker-size=10\n"}, "", 10),
    ],
    ids=["merged-in", "huge", "leading-digits", "edited-after", "removed-after"],
)
def test_the_size_git_wrote_the_markers_at_is_the_one_checked(
    hooked: Path,
    lac: Lac,
    theirs_extra: dict[str, str | bytes],
    ours_extra: dict[str, str | bytes],
    after: str | None,
    written: int,
) -> None:
    repo = hooked
    first = reconcile_with(repo, lac, theirs_extra, ours_extra)
    assert first == "<" * written + " HEAD", first[:40]
    if after == "":
        (repo / ATTR).unlink()
    elif after is not None:
        write(repo, ATTR, after)
    before = head(repo)
    refused = run_git(repo, "commit", "-qam", "markers")
    assert refused.code == 1, refused
    assert refused.err.splitlines() == [
        "refused: conflict markers left in README; a reconcile is in progress: "
        "resolve them and `git add`, or commit them on purpose with LAC_ALLOW_MARKERS=1"
    ]
    assert head(repo) == before
    git(repo, "add", "-A")
    cont = lac("reconcile", "--continue")
    assert cont.code == 1 and "conflict markers left in README;" in cont.err, cont
    assert head(repo) == before
    write(repo, "README", "Shop (main), offline\n")
    git(repo, "add", "README")
    assert lac("reconcile", "--continue").code == 0


def test_a_hostile_conflicted_name_is_named_escaped(hooked: Path, lac: Lac) -> None:
    repo = hooked
    name = "a\x1b[2J\nrefused: forged.txt"
    fork(repo, {name: "1\n"}, {name: "theirs\n"}, {name: "ours\n"})
    assert lac("reconcile", "offline").code == 1
    refused = run_git(repo, "commit", "-qam", "x")
    assert refused.code == 1
    assert refused.err.splitlines()[0].startswith(
        "refused: conflict markers left in a\\x1b[2J\\nrefused: forged.txt;"
    )
    assert len(refused.err.splitlines()) == 1


@pytest.mark.parametrize(
    ("data", "size", "count"),
    [
        (b"<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n", 7, 2),
        (b"<<<<<<<\r\n>>>>>>>\n", 7, 2),  # bare markers, CRLF
        (b"<<<<<<<< eight\n>>>>>> six\n <<<<<<< indented\n", 7, 0),
        (b"=======\n||||||| base\n", 7, 0),  # an underline; the base marker alone
        (b"<<<<<<<<<< x\n>>>>>>>>>> y\n<<<<<<< z\n", 10, 2),
        (b"\0<<<<<<< HEAD\n", 7, 0),  # binary
        (b"", 7, 0),
    ],
)
def test_marker_lines_are_gits(data: bytes, size: int, count: int) -> None:
    assert marker_lines(data, size) == count
