"""Forecast: which live lines will meet, and whether git would merge them.

On a scratch history (same file, same line; same file, other lines; a file
against a directory) and on the real history of `requests`, where every
sampled merge's two parents are forecast as two lines from their merge base
and the verdict is compared with a real `git merge` of the same commits.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_lacunari.forecast import DESTINATION, Line, forecast

from .conftest import REPO_ROOT, git

BUNDLE = REPO_ROOT.parent / "shared" / "corpus" / "requests-main.bundle"
EVERY = 25  # one merge in EVERY of the corpus


def commit_on(repo: Path, branch: str, start: str, files: dict[str, str]) -> str:
    git(repo, "checkout", "-q", "-B", branch, start)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-qm", branch)
    return git(repo, "rev-parse", "HEAD").strip()


def git_merge_conflicts(repo: Path, ours: str, theirs: str) -> bool:
    """What `git merge` itself says, in a scratch worktree."""
    wt = repo.parent / f"merge-{ours[:8]}-{theirs[:8]}"
    git(repo, "worktree", "add", "-q", "--detach", str(wt), ours)
    try:
        proc = subprocess.run(
            ["git", "merge", "-q", "--no-edit", "--no-ff", theirs],
            cwd=wt,
            capture_output=True,
            check=False,
        )
        return proc.returncode != 0
    finally:
        git(repo, "worktree", "remove", "--force", str(wt))


@pytest.fixture
def lines_repo(repo: Path) -> Path:
    (repo / "core.py").write_text("".join(f"line {n}\n" for n in range(20)))
    git(repo, "add", "core.py")
    git(repo, "commit", "-qm", "core")
    git(repo, "branch", "-f", "target")
    return repo


def test_two_claims_that_edit_one_undeclared_file_are_reported(lines_repo: Path) -> None:
    base = git(lines_repo, "rev-parse", "target").strip()
    text = (lines_repo / "core.py").read_text()
    a = commit_on(lines_repo, "a", base, {"core.py": text.replace("line 1\n", "A\n")})
    b = commit_on(lines_repo, "b", base, {"core.py": text.replace("line 15\n", "B\n")})
    c = commit_on(lines_repo, "c", base, {"core.py": text.replace("line 1\n", "C\n")})
    d = commit_on(lines_repo, "d", base, {"docs/guide.md": "d\n"})
    lines = [
        Line("#1 ana", a, frozenset({"core.py"})),
        Line("#2 bo", b, frozenset({"src/"})),
        Line("#3 cy", c, frozenset()),
        Line("#4 di", d, frozenset({"docs/"})),
    ]
    result = forecast(lines_repo, "target", lines, with_destination=False)
    met = {(m.first, m.second): m for m in result.meetings}
    assert set(met) == {("#1 ana", "#2 bo"), ("#1 ana", "#3 cy"), ("#2 bo", "#3 cy")}
    assert met["#1 ana", "#2 bo"].both == ("core.py",)
    assert met["#1 ana", "#2 bo"].undeclared == ("core.py",)  # bo declared src/ only
    assert met["#1 ana", "#2 bo"].conflicts == ()
    assert met["#1 ana", "#3 cy"].conflicts == ("core.py",)
    assert met["#2 bo", "#3 cy"].conflicts == ()
    assert result.changed["#4 di"] == ("docs/guide.md",)
    for (first, second), meeting in met.items():
        tips = {line.label: line.tip for line in lines}
        assert meeting.conflicting == git_merge_conflicts(lines_repo, tips[first], tips[second])


def test_a_file_against_a_directory_is_a_meeting_though_no_path_is_shared(
    lines_repo: Path,
) -> None:
    base = git(lines_repo, "rev-parse", "target").strip()
    a = commit_on(lines_repo, "a", base, {"build": "a file\n"})
    b = commit_on(lines_repo, "b", base, {"build/out.txt": "in a directory\n"})
    result = forecast(lines_repo, "target", [Line("a", a), Line("b", b)], with_destination=False)
    assert len(result.meetings) == 1 and result.meetings[0].both == ()
    assert result.meetings[0].conflicting == git_merge_conflicts(lines_repo, a, b) is True


def test_a_line_is_compared_with_what_the_destination_did_since_it_forked(
    lines_repo: Path,
) -> None:
    base = git(lines_repo, "rev-parse", "target").strip()
    text = (lines_repo / "core.py").read_text()
    a = commit_on(lines_repo, "a", base, {"core.py": text.replace("line 3\n", "A\n")})
    moved = commit_on(lines_repo, "target", base, {"core.py": text.replace("line 3\n", "T\n")})
    result = forecast(lines_repo, "target", [Line("a", a, frozenset({"core.py"}))])
    assert result.destination == moved
    (meeting,) = result.meetings
    assert (meeting.first, meeting.second) == (DESTINATION, "a")
    assert meeting.conflicts == ("core.py",) and meeting.undeclared == ()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not BUNDLE.exists():
        pytest.skip(f"corpus not found at {BUNDLE}")
    clone = tmp_path_factory.mktemp("forecast") / "requests"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(BUNDLE), str(clone)], check=True)
    yield clone


def test_on_real_history_the_verdict_is_git_merges(history: Path) -> None:
    """Every sampled merge of the corpus, forecast as two lines from their
    merge base: a pair that shares no file must merge cleanly, and a pair
    that does conflicts exactly when `git merge` says it does."""
    out = git(history, "rev-list", "--merges", "--parents", "refs/remotes/origin/main")
    merges = [line.split() for line in out.splitlines() if len(line.split()) == 3]
    sample = merges[::EVERY]
    seen = {"met": 0, "conflicted": 0}
    for _merge, ours, theirs in sample:
        bases = git(history, "merge-base", "--all", ours, theirs).split()
        if len(bases) != 1:
            continue  # a criss-cross has no one fork point to forecast from
        result = forecast(
            history, bases[0], [Line("ours", ours), Line("theirs", theirs)], with_destination=False
        )
        conflicted = git_merge_conflicts(history, ours, theirs)
        if not result.meetings:
            assert not conflicted, (ours, theirs)
            continue
        seen["met"] += 1
        (meeting,) = result.meetings
        assert meeting.conflicting == conflicted, (ours, theirs, meeting)
        seen["conflicted"] += conflicted
    # The sample really exercised both verdicts (16 meetings, 2 conflicted).
    assert seen["met"] >= 5 and seen["conflicted"] >= 1, seen
