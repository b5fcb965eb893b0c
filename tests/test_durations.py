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


def test_a_json_number_is_held_to_the_typed_rule() -> None:
    import math

    import pytest

    from git_lacunari.durations import duration_value, parse_duration
    from git_lacunari.errors import BadDuration, InvalidInput

    assert duration_value(90) == parse_duration("90") == 90.0
    assert duration_value(0.5) == parse_duration("0.5")
    assert duration_value(MAX_DURATION_S) == MAX_DURATION_S
    for bad in (0, -5, -0.5, math.nan, math.inf, -math.inf, 1e308, 10**400, True, False,
                "5", "90s", None, [5]):  # fmt: skip
        with pytest.raises(BadDuration, match="^invalid duration ") as refused:
            duration_value(bad)
        assert isinstance(refused.value, InvalidInput)
    with pytest.raises(BadDuration, match="^invalid duration 1e\\+308: at most 3650d00h$"):
        duration_value(1e308)
    with pytest.raises(BadDuration, match="^invalid duration '1e308': give a positive"):
        parse_duration("1e308")
