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


def parse_stale(text: str | None) -> float | None:
    """A ``--stale-after`` value: seconds, or None when not given."""
    return parse_duration(text) if text is not None else None
