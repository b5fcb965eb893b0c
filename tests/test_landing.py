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
    # Named twice, but b.txt is not the line's b.txt: its commit is not in.
    assert landed(lines, "target", tip, 7) is None
    git(lines, "revert", "--no-edit", "HEAD")
    git(lines, "cherry-pick", "-x", "claim")
    assert landed(lines, "target", tip, 7) == LandedBy.CHERRY_PICKED  # -x says so


def test_commits_this_repository_lacks_have_not_landed(lines: Path) -> None:
    assert landed(lines, "target", "f" * 40, 7) is None
    assert landed(lines, "no-such-branch", "HEAD", 7) is None
    assert landed(lines, "target", "--output=/tmp/x", 7) is None


def three_on_one_file(lines: Path) -> list[str]:
    """A line of three commits, each changing f.txt (named by the trailer)."""
    (lines / "f.txt").write_text("".join(f"line {n}\n" for n in range(12)))
    git(lines, "add", "f.txt")
    git(lines, "commit", "-qm", "base")
    git(lines, "branch", "-f", "target")
    made = []
    for n, row in enumerate((1, 5, 9)):
        text = (lines / "f.txt").read_text().replace(f"line {row}\n", f"line {row} changed\n")
        (lines / "f.txt").write_text(text)
        git(lines, "commit", "-qam", f"step {n}\n\nLac-Task: 7")
        made.append(git(lines, "rev-parse", "HEAD").strip())
    git(lines, "checkout", "-q", "target")
    return made


def test_the_middle_commit_of_a_line_alone_never_lands_it(lines: Path) -> None:
    first, middle, last = three_on_one_file(lines)
    git(lines, "cherry-pick", middle)  # names the task, changes the line's one file
    assert landed(lines, "target", last, 7) is None
    git(lines, "cherry-pick", last)
    assert landed(lines, "target", last, 7) is None  # the first is still missing
    git(lines, "cherry-pick", first)
    # Every commit has its twin, out of the line's order.
    assert landed(lines, "target", last, 7) == LandedBy.CHERRY_PICKED


def test_a_line_rebased_in_order_is_rebased(lines: Path) -> None:
    *_, last = three_on_one_file(lines)
    (lines / "other.txt").write_text("moved on\n")
    git(lines, "add", "other.txt")
    git(lines, "commit", "-qm", "moved on")
    git(lines, "cherry-pick", "target..claim")
    assert landed(lines, "target", last, 7) == LandedBy.REBASED


def test_a_squash_of_the_whole_line_is_squashed_and_of_part_is_not(lines: Path) -> None:
    first, middle, last = three_on_one_file(lines)
    git(lines, "merge", "-q", "--squash", middle)  # the first two, squashed
    git(lines, "commit", "-qm", "two of three\n\nLac-Task: 7")
    assert landed(lines, "target", last, 7) is None
    git(lines, "reset", "-q", "--hard", "HEAD~1")
    git(lines, "merge", "-q", "--squash", "claim")
    git(lines, "commit", "-q", "--no-edit")  # git's own squash message, indented
    assert landed(lines, "target", last, 7) == LandedBy.SQUASHED


def test_a_one_commit_line_rebased_over_a_nearby_change_is_rebased(lines: Path) -> None:
    """The destination changed a line beside the line's change: the rebased
    commit's patch (its context) is another, its change the same."""
    (lines / "f.txt").write_text("".join(f"line {n}\n" for n in range(12)))
    git(lines, "add", "f.txt")
    git(lines, "commit", "-qm", "base")
    git(lines, "branch", "-f", "target")
    text = (lines / "f.txt").read_text()
    (lines / "f.txt").write_text(text.replace("line 5\n", "line 5 fixed\n"))
    git(lines, "commit", "-qam", "fix line 5\n\nLac-Task: 7")
    tip = git(lines, "rev-parse", "HEAD").strip()
    git(lines, "checkout", "-q", "target")
    (lines / "f.txt").write_text(text.replace("line 3\n", "line 3 moved on\n"))
    git(lines, "commit", "-qam", "main moves")
    git(lines, "cherry-pick", tip)
    assert (
        git(lines, "patch-id", "--stable", input=git(lines, "show", "HEAD")).split()[0]
        != (git(lines, "patch-id", "--stable", input=git(lines, "show", tip)).split()[0])
    )
    assert landed(lines, "target", tip, 7) == LandedBy.REBASED


def test_a_squash_into_a_commit_of_another_message_is_squashed(lines: Path) -> None:
    tip = work(lines, "claim", ("a.txt", "a\n"), message="a\n\nLac-Task: 7")
    git(lines, "checkout", "-q", "target")
    (lines / "a.txt").write_text("a\n")
    (lines / "b.txt").write_text("b\n")
    git(lines, "add", "a.txt", "b.txt")
    git(lines, "commit", "-qm", "a and b together\n\nLac-Task: 7")
    assert landed(lines, "target", tip, 7) == LandedBy.SQUASHED


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
