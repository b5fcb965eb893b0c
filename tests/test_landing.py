"""Has a claim's work landed? Each rule of landing.py on real git history."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_lacunari.landing import LandedBy, landed

from .conftest import git


def work(repo: Path, branch: str, *edits: tuple[str, str], message: str = "") -> str:
    git(repo, "checkout", "-q", branch)
    for n, (name, text) in enumerate(edits):
        (repo / name).write_text(text)
        git(repo, "add", name)
        git(repo, "commit", "-qm", message or f"{branch} {n}")
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def lines(repo: Path) -> Path:
    git(repo, "branch", "-f", "target")
    git(repo, "checkout", "-q", "-b", "claim")
    return repo


def test_work_merged_into_the_target_has_landed(lines: Path) -> None:
    tip = work(lines, "claim", ("a.txt", "a\n"), ("b.txt", "b\n"))
    assert landed(lines, "target", tip, 7) is None
    work(lines, "target", ("other.txt", "moved on\n"))
    assert landed(lines, "target", tip, 7) is None
    git(lines, "merge", "-q", "--no-edit", "claim")
    assert landed(lines, "target", tip, 7) == LandedBy.MERGED


def test_work_rebased_onto_the_target_has_landed_by_patch(lines: Path) -> None:
    tip = work(lines, "claim", ("a.txt", "a\n"), ("b.txt", "b\n"))
    work(lines, "target", ("other.txt", "moved on\n"))
    git(lines, "checkout", "-q", "-b", "rebased", "claim")
    git(lines, "rebase", "-q", "target")
    git(lines, "checkout", "-q", "target")
    # Only one of the two commits picked: not landed.
    first = git(lines, "rev-parse", "rebased~1").strip()
    git(lines, "merge", "-q", "--ff-only", first)
    assert landed(lines, "target", tip, 7) is None
    git(lines, "merge", "-q", "--ff-only", "rebased")
    assert landed(lines, "target", tip, 7) == LandedBy.REBASED


def test_a_squash_lands_by_its_trailer_and_only_by_it(lines: Path) -> None:
    tip = work(lines, "claim", ("a.txt", "a\n"), ("b.txt", "b\n"))
    git(lines, "checkout", "-q", "target")
    git(lines, "merge", "-q", "--squash", "claim")
    git(lines, "commit", "-qm", "squashed, no trailer")
    assert landed(lines, "target", tip, 7) is None
    (lines / "c.txt").write_text("c\n")
    git(lines, "add", "c.txt")
    git(lines, "commit", "-qm", "another task", "--trailer", "Lac-Task=8")
    assert landed(lines, "target", tip, 7) is None
    (lines / "d.txt").write_text("d\n")
    git(lines, "add", "d.txt")
    git(lines, "commit", "-qm", "follow-up of the squash", "--trailer", "Lac-Task=7")
    assert landed(lines, "target", tip, 7) == LandedBy.SQUASHED


def test_a_line_named_in_part_has_not_landed(lines: Path) -> None:
    # Both commits name the task (the commit-msg hook's trailer).
    tip = work(lines, "claim", ("a.txt", "a\n"), ("b.txt", "b\n"), message="x\n\nLac-Task: 7")
    work(lines, "target", ("other.txt", "moved on\n"))
    git(lines, "cherry-pick", "claim~1")
    assert landed(lines, "target", tip, 7) is None  # b.txt never reached the target
    (lines / "b.txt").write_text("b, as reviewed\n")
    git(lines, "add", "b.txt")
    git(lines, "commit", "-qm", "b reviewed\n\nLac-Task: 7")
    assert landed(lines, "target", tip, 7) == LandedBy.REBASED  # named twice


def test_commits_this_repository_lacks_have_not_landed(lines: Path) -> None:
    assert landed(lines, "target", "f" * 40, 7) is None
    assert landed(lines, "no-such-branch", "HEAD", 7) is None
    assert landed(lines, "target", "--output=/tmp/x", 7) is None


# --- claim --next's order (rules.steer), the rule bench/landing.py drives -----------


def test_steer_takes_clear_and_own_only_tasks_in_order_then_the_others() -> None:
    from git_lacunari.rules import LandingLine, Meeting, steer

    mine = LandingLine(9, "feat", "abc", ("core/auth.py", "docs/"))
    tasks = [(1, ["lib/y.py"]), (2, ["core/auth.py"]), (3, ["x.py"]), (4, ["docs/a.md", "lib/"])]
    passed: list[Meeting] = []
    order = list(steer(tasks, ["lib/y.py"], [mine], passed))
    assert [(t, m.mine if m else None) for t, m in order] == [
        (2, [9]),
        (3, None),
        (1, []),
        (4, [9]),
    ]
    assert [(m.task, m.meets, m.others) for m in passed] == [
        (1, ["lib/y.py"], True),
        (4, ["docs/", "lib/y.py"], True),
    ]
    assert [t for t, _ in steer(tasks, ["lib/y.py"], [mine], [], strict=True)] == [2, 3]
    # The what-if the bench measures: own-only passed over too, tried first.
    assert [t for t, _ in steer(tasks, ["lib/y.py"], [mine], [], avoid_own=True)] == [3, 2, 1, 4]
    # Nothing busy: the board's order, nothing met.
    assert list(steer(tasks, [], [], [])) == [(t, None) for t, _ in tasks]
