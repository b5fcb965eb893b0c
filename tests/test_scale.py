"""The grant path scales: patterns are matched through an index of literal
heads, not compared pattern by pattern (counted, not timed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from git_lacunari import paths
from git_lacunari.board import Board
from git_lacunari.errors import PathLocked
from git_lacunari.repo import discover

from .conftest import Boards, board_sql, git

SEGMENT = st.sampled_from(["a", "b", "A", "ab", "a.b", "a-b", "c"])
LITERAL = st.builds(
    lambda parts, slash: "/".join(parts) + ("/" if slash else ""),
    st.lists(SEGMENT, min_size=1, max_size=4),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(held=st.lists(LITERAL, max_size=12), wanted=LITERAL, ignorecase=st.booleans())
def test_literal_index_agrees_with_overlap(held: list[str], wanted: str, ignorecase: bool) -> None:
    """Literals through the head index: their candidates are exactly the
    overlapping ones, ancestors and descendants (a sibling sharing a prefix,
    ``a-b`` beside ``a``, is a candidate that overlap turns down)."""
    index: paths.PrefixIndex[int] = paths.PrefixIndex()
    for n, pattern in enumerate(held):
        index.add(pattern, n)
    expected = sorted(n for n, p in enumerate(held) if paths.overlap(p, wanted, ignorecase))
    found = [n for n in index.candidates(wanted) if paths.overlap(held[n], wanted, ignorecase)]
    assert sorted(found) == expected


def test_claiming_many_files_beside_many_held_compares_no_patterns(
    boards: Boards, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 300
    dana, erin = boards("dana"), boards("erin")
    dana.lock([f"big/held-{i}.py" for i in range(n)])
    dana.lock(["big/*.glob"])  # one held glob: compared, once per wanted path
    calls = {"overlap": 0}
    real = paths.overlap

    def counted(first: str, second: str, ignorecase: bool = False) -> bool:
        calls["overlap"] += 1
        return real(first, second, ignorecase)

    monkeypatch.setattr(paths, "overlap", counted)
    got = erin.lock([f"big/wanted-{i}.py" for i in range(n)])
    assert len(got) == n
    assert calls["overlap"] == n  # the glob only: not n * n
    with pytest.raises(PathLocked) as refused:
        erin.lock(["big/held-7.py", "big/x.glob", "big/"])
    assert {(c.path, c.lock.pattern) for c in refused.value.conflicts} >= {
        ("big/held-7.py", "big/held-7.py"),
        ("big/x.glob", "big/*.glob"),
        ("big/", "big/held-0.py"),
    }


# Patterns across a few directories at several depths, globs among them, so
# one grant asks for several keys at once (ancestors, subtrees, siblings).
PART = st.sampled_from(["a", "b", "A"])
PATTERN = st.one_of(
    st.builds(
        lambda ps, slash: "/".join(ps) + ("/" if slash else ""),
        st.lists(PART, min_size=1, max_size=4),
        st.booleans(),
    ),
    st.builds(
        lambda ps, g: "/".join([*ps, g]),
        st.lists(PART, max_size=2),
        st.sampled_from(["*", "*.py", "**", "?"]),
    ),
)


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
# Two wanted subtrees apart, each with a lock deep below it: one range per
# subtree must be asked for (a batch that asked for only one missed these).
@example(held=[("b/b/a", True)], wanted=[("a/a", True), ("b/b", True)])
@example(held=[("a/b/A/*.py", False)], wanted=[("b/a", True), ("a/b/x.py", True)])
@given(
    held=st.lists(st.tuples(PATTERN, st.booleans()), max_size=8),
    wanted=st.lists(st.tuples(PATTERN, st.booleans()), min_size=1, max_size=5),
)
def test_one_query_for_every_key_finds_what_comparing_all_finds(
    boards: Boards, held: list[tuple[str, bool]], wanted: list[tuple[str, bool]]
) -> None:
    """The grant's batched candidates miss no conflict: the same answer as
    comparing every wanted pattern with every held lock."""
    holder, asker = boards("dana"), boards("erin")
    try:
        check_against_all(holder, asker, held, wanted)
    finally:  # two connections per example, not two hundred per test
        for store in boards.opened:
            store.close()
        boards.opened.clear()


def check_against_all(
    holder: Board, asker: Board, held: list[tuple[str, bool]], wanted: list[tuple[str, bool]]
) -> None:
    from git_lacunari.model import LockMode

    board_sql(holder.store, "DELETE FROM lac_locks")
    for pattern, write in held:
        holder.lock([pattern], mode=LockMode.WRITE if write else LockMode.READ)
    specs = asker.specs([p for p, w in wanted if w], [p for p, w in wanted if not w])
    with asker.store.read():
        found = {(c.path, c.lock.id) for c in asker._conflicts(specs)}
    every = holder.locks()
    expected = {
        (spec.pattern, lock.id)
        for spec in specs
        for lock in every
        if paths.overlap(lock.pattern, spec.pattern)
        and not (spec.mode == LockMode.READ and lock.mode == LockMode.READ)
    }
    assert found == expected


def test_blob_ids_of_more_paths_than_one_command_line_holds(repo: Path) -> None:
    # 40,000 paths of ~100 bytes are 4 MB: past Linux's 2 MB argument limit,
    # so one `git ls-tree` with them all would fail to start.
    (repo / "kept.txt").write_text("kept\n")
    git(repo, "add", "kept.txt")
    git(repo, "commit", "-q", "-m", "kept")
    wanted = [f"dir/{'x' * 90}{n:06d}.txt" for n in range(40_000)] + ["kept.txt"]
    found = discover(repo).blob_ids(wanted)
    assert found == {"kept.txt": git(repo, "rev-parse", "HEAD:kept.txt").strip()}
