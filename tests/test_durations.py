"""How durations are shown: every part stays inside its unit."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from git_lacunari.durations import MAX_DURATION_S, format_duration

SHAPES = {
    "s": re.compile(r"(\d+)s"),
    "m": re.compile(r"(\d+)m(\d\d)s"),
    "h": re.compile(r"(\d+)h(\d\d)m"),
    "d": re.compile(r"(\d+)d(\d\d)h"),
}
LIMITS = {"s": 60, "m": 60, "h": 60, "d": 24}


def test_the_edges_of_each_unit_round_up_into_the_next() -> None:
    # Each part rounded on its own gave "1m60s" and "59m60s".
    assert format_duration(59.6) == "1m00s"
    assert format_duration(119.6) == "2m00s"
    assert format_duration(3599.6) == "1h00m"
    assert format_duration(86399.0) == "1d00h"
    assert format_duration(0.4) == "0s"
    assert format_duration(-5) == "0s"


@given(st.floats(min_value=0, max_value=MAX_DURATION_S))
def test_no_part_reaches_its_unit(seconds: float) -> None:
    text = format_duration(seconds)
    kind = next(k for k, shape in SHAPES.items() if shape.fullmatch(text))
    match = SHAPES[kind].fullmatch(text)
    assert match is not None
    if kind == "s":
        assert int(match[1]) < LIMITS["s"]
    else:
        assert int(match[2]) < LIMITS[kind]
