"""The grant path scales: plain paths and directories are matched through an
index, not compared pattern by pattern (counted, not timed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_lacunari import paths
from git_lacunari.errors import PathLocked

from .conftest import Boards

SEGMENT = st.sampled_from(["a", "b", "A", "ab", "a.b", "a-b", "c"])
LITERAL = st.builds(
    lambda parts, slash: "/".join(parts) + ("/" if slash else ""),
    st.lists(SEGMENT, min_size=1, max_size=4),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(held=st.lists(LITERAL, max_size=12), wanted=LITERAL, ignorecase=st.booleans())
def test_literal_index_agrees_with_overlap(held: list[str], wanted: str, ignorecase: bool) -> None:
    index: paths.LiteralIndex[int] = paths.LiteralIndex(ignorecase)
    for n, pattern in enumerate(held):
        index.add(pattern, n)
    expected = sorted(n for n, p in enumerate(held) if paths.overlap(p, wanted, ignorecase))
    assert sorted(index.overlapping(wanted)) == expected


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
