"""The verbs' bodies, without click: ``run(session, plain arguments) -> Result``.

Each module holds one verb or a small family of them. A verb takes values the
command line has already parsed (strings, numbers, tuples), calls the board
or a workflow, and returns an :class:`~git_lacunari.edge.Result` whose human
text comes from :mod:`git_lacunari.views`; it prints nothing itself and
picks no exit code (the edge does both). Option combinations that click
reports as usage errors stay in :mod:`git_lacunari.cli`, where the message
and its ``-h`` hint are made.
"""

from __future__ import annotations

from ..durations import parse_duration
from ..errors import BadDuration

# A claim silent for less than this is not stale: no heartbeat can keep up
# with a shorter limit (a command takes longer than that to run).
MIN_STALE_AFTER_S = 1.0


def parse_stale(text: str | None) -> float | None:
    """A ``--stale-after`` value: seconds, or None when not given. Under
    :data:`MIN_STALE_AFTER_S` is refused (exit 2), as zero and negatives are."""
    if text is None:
        return None
    seconds = parse_duration(text)
    if seconds < MIN_STALE_AFTER_S:
        raise BadDuration(
            f"invalid stale-after {text[:40]!r}: at least 1s (no heartbeat keeps up with less)"
        )
    return seconds


def parse_max_age(text: str | None) -> float | None:
    """A ``--max-age`` value: seconds, or None when not given. Under
    :data:`MIN_STALE_AFTER_S` is refused (exit 2), as zero, negatives, more
    than ten years and anything else that is no duration are."""
    if text is None:
        return None
    seconds = parse_duration(text)
    if seconds < MIN_STALE_AFTER_S:
        raise BadDuration(f"invalid max-age {text[:40]!r}: at least 1s")
    return seconds
