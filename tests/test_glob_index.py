"""Globs that scale (issue 24): paths.PrefixIndex finds, among held patterns,
every one that may overlap a wanted pattern (or cover a path), so comparing
only those gives the answer comparing all of them gives. Checked over
generated patterns rich in wildcards, classes, escapes and case pairs, for
the index alone, for a grant on both backends, and for the guards' lookup;
and a grant of many globs beside many held compares only candidates."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from git_lacunari import paths
from git_lacunari.board import Board
from git_lacunari.errors import BadPath
from git_lacunari.model import LockMode

from .conftest import Boards, board_sql

TOKENS = [
    "*", "**", "?", "/", ".", "a", "b", "ab", "A", "B", "\u03a3", "\u03c3", "\u03c2",
    "\u0130", "i", "\u00df", "ss", "\u212a", "k", "**/", "/**", "\\*", "\\a", "[",
    "[a-c]", "[!a]", "[A-B]", "[/]",
]  # fmt: skip
HEADS = st.sampled_from(["", "a/", "a/b", "a/b/", "A/", "ab", "a/b/c"])
pattern_st = st.builds(
    lambda head, tokens: head + "".join(tokens),
    HEADS,
    st.lists(st.sampled_from(TOKENS), max_size=5),
).filter(bool)
path_st = st.builds(
    lambda head, tail: head + tail,
    HEADS,
    st.text(alphabet="abAB/.*[\u03a3\u03c3\u03c2\u0130i\u0307\u00dfsk\u212a", max_size=6),
).filter(bool)

FAST = settings(max_examples=400, deadline=None, derandomize=True, database=None)


@FAST
@given(a=pattern_st, b=pattern_st, path=path_st, ignorecase=st.booleans())
def test_heads_nest_when_patterns_meet(a: str, b: str, path: str, ignorecase: bool) -> None:
    """The index's premise: overlapping patterns have nesting heads, and a
    pattern's head starts every path it covers (casefolded)."""
    ha, hb = paths.head(a), paths.head(b)
    if paths.overlap(a, b, ignorecase):
        assert ha.startswith(hb) or hb.startswith(ha)
    if paths.covers(a, path, ignorecase):
        assert path.casefold().startswith(ha)


@FAST
@example(held=["a/b*", "a/", "**", "a/bc/*"], wanted="a/b/c", ignorecase=False)
@example(held=["\u03a3*", "\u03c3x"], wanted="\u03c2x", ignorecase=True)
@given(
    held=st.lists(pattern_st, max_size=12),
    wanted=pattern_st,
    ignorecase=st.booleans(),
)
def test_indexed_answer_is_the_brute_force_answer(
    held: list[str], wanted: str, ignorecase: bool
) -> None:
    index: paths.PrefixIndex[int] = paths.PrefixIndex()
    for n, pattern in enumerate(held):
        index.add(pattern, n)
    candidates = index.candidates(wanted)
    assert len(candidates) == len(set(candidates))  # each once
    indexed = sorted(n for n in candidates if paths.overlap(held[n], wanted, ignorecase))
    brute = [n for n, p in enumerate(held) if paths.overlap(p, wanted, ignorecase)]
    assert indexed == brute


@FAST
@given(held=st.lists(pattern_st, max_size=12), path=path_st, ignorecase=st.booleans())
def test_covering_candidates_miss_no_covering_pattern(
    held: list[str], path: str, ignorecase: bool
) -> None:
    index: paths.PrefixIndex[int] = paths.PrefixIndex()
    for n, pattern in enumerate(held):
        index.add(pattern, n)
    indexed = sorted(
        n for n in index.covering_candidates(path) if paths.covers(held[n], path, ignorecase)
    )
    assert indexed == [n for n, p in enumerate(held) if paths.covers(p, path, ignorecase)]


def test_prefix_walk_on_hostile_heads() -> None:
    """Many heads that are prefixes of one another, or share long prefixes
    without nesting: the walk finds exactly the nesting ones."""
    held = ["x" * n + "*" for n in range(0, 300)] + ["x" * n + "y*" for n in range(300)]
    index: paths.PrefixIndex[str] = paths.PrefixIndex()
    for pattern in held:
        index.add(pattern, pattern)
    wanted = "x" * 150 + "*"
    found = set(index.candidates(wanted))
    assert found == {p for p in held if paths.overlap(p, wanted)} | {
        p for p in held if paths.head(p).startswith("x" * 150)
    }
    long_literal = "a/" * 2000 + "b"  # a 4,001-character pattern
    index.add(long_literal, long_literal)
    assert long_literal in index.candidates("a/" * 1000 + "*")
    assert index.covering_candidates(long_literal + "/c").count(long_literal) == 1


# --- on a board, both backends ------------------------------------------------------


def test_many_globs_beside_many_held_compare_only_candidates(
    boards: Boards, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 200
    dana, erin = boards("dana"), boards("erin")
    dana.lock([f"big/held-{i}-*.py" for i in range(n)] + ["big/*.glob"])
    calls = {"overlap": 0}
    real = paths.overlap

    def counted(first: str, second: str, ignorecase: bool = False) -> bool:
        calls["overlap"] += 1
        return real(first, second, ignorecase)

    monkeypatch.setattr(paths, "overlap", counted)
    got = erin.lock([f"big/wanted-{i}-*.py" for i in range(n)])
    assert len(got) == n
    assert calls["overlap"] == n  # each against big/*.glob only: not n * n
    refused = erin.check(["big/held-7-x.py", "big/held-1*", "big/a.glob"])
    assert {(c.path, c.lock.pattern) for c in refused} == {
        ("big/held-7-x.py", "big/held-7-*.py"),
        *(("big/held-1*", f"big/held-{i}-*.py") for i in range(n) if str(i).startswith("1")),
        ("big/held-1*", "big/*.glob"),  # big/held-1x.glob
        ("big/a.glob", "big/*.glob"),
    }


def _valid(pattern: str) -> bool:
    try:
        return paths.normalize(pattern) == pattern
    except BadPath:
        return False


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(
    held=st.lists(st.tuples(pattern_st.filter(_valid), st.booleans()), max_size=8),
    wanted=st.lists(st.tuples(pattern_st.filter(_valid), st.booleans()), min_size=1, max_size=5),
)
def test_a_grant_finds_what_comparing_all_finds(
    boards: Boards, held: list[tuple[str, bool]], wanted: list[tuple[str, bool]]
) -> None:
    """The board's grant check (candidates from the key index, then the head
    index) against every wanted pattern compared with every held lock."""
    holder, asker = boards("dana"), boards("erin")
    try:
        _check(holder, asker, held, wanted)
    finally:
        for store in boards.opened:
            store.close()
        boards.opened.clear()


def _check(
    holder: Board, asker: Board, held: list[tuple[str, bool]], wanted: list[tuple[str, bool]]
) -> None:
    board_sql(holder.store, "DELETE FROM lac_locks")
    for pattern, write in held:
        holder.lock([pattern], mode=LockMode.WRITE if write else LockMode.READ)
    specs = asker.specs([p for p, w in wanted if w], [p for p, w in wanted if not w])
    with asker.store.read():
        found = {(c.path, c.lock.id) for c in asker._conflicts(specs)}
    expected = {
        (spec.pattern, lock.id)
        for spec in specs
        for lock in holder.locks()
        if paths.overlap(lock.pattern, spec.pattern, asker.ignorecase)
        and LockMode.WRITE in (spec.mode, lock.mode)
    }
    assert found == expected
