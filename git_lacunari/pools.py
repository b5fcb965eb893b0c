"""Named resource pools, as words: what a pool's name and values may be,
how ``NAME[:N]`` asks for some, and how granted values become environment
variables. Pure functions: the board (board/resources.py) stores and grants.

A pool's name is the environment variable it becomes, ``LAC_`` + its name in
capitals, so it is refused, not mapped, when it is not one: lower case ASCII
letters, digits and ``_``, a letter first, never ending in ``_<digits>``
(``LAC_PORT_0`` is the first of several values of the pool ``port``), and
never a name whose variable git-lacunari itself reads or sets
(:data:`RESERVED`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .errors import InvalidInput
from .identity import validate_name
from .model import ResourceValue

# How many values one pool may hold (a grant counts a pool's free values);
# PostgreSQL's lac_pool_cap() says the same.
POOL_CAP = 10_000
NAME_MAX = 63
_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")
_INDEXED = re.compile(r"_[0-9]+$")
# ``A-B``: an integer range. Any run of ASCII digits is read as one, so that
# a range too long for the cap is refused as a range rather than kept as a
# single string value; only up to 18 digits are turned into integers (both
# backends' integers hold them, and a longer range passes the cap anyway).
_RANGE = re.compile(r"([0-9]+)-([0-9]+)")
_DIGITS_MAX = 18
VALUE_MAX = 200
_NEED = re.compile(r"(?P<name>[^:]*)(?::(?P<count>[0-9]+))?")
# LAC_<NAME> variables git-lacunari reads or sets itself.
RESERVED = frozenset(
    {
        "agent",
        "allow_markers",
        "caps",
        "edit_helper",
        "guard",
        "instance",
        "land_commit",
        # the test seams land_queue.py and reconcile/worktree.py read: a pool
        # of these names would kill or stop a lander run in a claim's env
        "test_lander_crash",
        "test_stop_at",
        "lane",
        "listen_url",
        "pooler",
        "probe_held",
        "task_id",
        "task_paths",
        "task_title",
        "timeout",
    }
)
ENV_PREFIX = "LAC_"


def validate_pool_name(name: str) -> str:
    """``name`` if it may name a pool (see the module's docstring), else
    :class:`InvalidInput` saying why, in one line."""
    shown = name[:80]
    if not _NAME.fullmatch(name):
        raise InvalidInput(
            f"resource pool name {shown!r}: a lower-case letter, then up to "
            f"{NAME_MAX - 1} of a-z 0-9 _ (it names the variable LAC_<NAME>)"
        )
    if _INDEXED.search(name):
        raise InvalidInput(
            f"resource pool name {name!r} ends in _<digits>, which names one value of "
            f"several of another pool (LAC_{name.upper()})"
        )
    if name in RESERVED:
        raise InvalidInput(
            f"resource pool name {name!r} is reserved: git-lacunari uses LAC_{name.upper()}"
        )
    return name


def parse_values(given: Sequence[str]) -> list[str]:
    """The values ``resource add`` and ``resource remove`` are given, each
    ``A-B`` an integer range (A <= B, in numeric order, no leading zero:
    ``08-10`` is refused, as it would not make ``08``), else a string (a
    name's rules: 1-200 characters, no whitespace or control character);
    duplicates dropped, the first kept. More than :data:`POOL_CAP` values
    are refused before any is made."""
    if not given:
        raise InvalidInput("give at least one value (e.g. 8100-8104, or app_1 app_2)")
    found: dict[str, None] = {}
    for item in given:
        span = _RANGE.fullmatch(item)
        if span is None:
            if len(item) > VALUE_MAX:  # the message shows the start, not 10,000 characters
                raise InvalidInput(
                    f"resource value {item[:40]!r}... is {len(item):,} characters; "
                    f"at most {VALUE_MAX}"
                )
            found[validate_name(item, "resource value")] = None
        else:
            ends = span.group(1), span.group(2)
            if any(len(end) > _DIGITS_MAX for end in ends):
                raise InvalidInput(
                    f"range {item[:80]!r} is too long: a pool holds at most {POOL_CAP:,} values"
                )
            if any(len(end) > 1 and end.startswith("0") for end in ends):
                # 08-10 would make 8 9 10, never the 08 a lone value keeps:
                # say which is meant rather than guess
                raise InvalidInput(
                    f"range {item!r} has a leading zero: write "
                    f"{int(ends[0])}-{int(ends[1])}, or list the values as they are"
                )
            low, high = int(ends[0]), int(ends[1])
            if low > high:
                raise InvalidInput(f"range {item!r} runs backwards: write {high}-{low}")
            size = high - low + 1
            if size > POOL_CAP or len(found) + size > POOL_CAP:
                raise InvalidInput(
                    f"range {item!r} is {size:,} values; a pool holds at most {POOL_CAP:,}"
                )
            found.update((str(v), None) for v in range(low, high + 1))
        if len(found) > POOL_CAP:
            raise InvalidInput(f"{len(found):,} values; a pool holds at most {POOL_CAP:,}")
    return list(found)


def parse_need(text: str) -> tuple[str, int]:
    """``NAME[:N]`` (``--needs-resource``, ``--resource``): the pool and how
    many of its values (N from 1 to :data:`POOL_CAP`, default 1)."""
    match = _NEED.fullmatch(text)
    if match is None:
        raise InvalidInput(f"resource {text[:80]!r}: write NAME or NAME:N (e.g. port:2)")
    name = validate_pool_name(match.group("name"))
    digits = (match.group("count") or "1").lstrip("0") or "0"
    # port:1000000 is a count out of range, not a misspelling; its digits
    # are counted first (int() of thousands of digits is slow, then refused)
    count = int(digits) if len(digits) <= 6 else POOL_CAP + 1
    if not 1 <= count <= POOL_CAP:
        raise InvalidInput(f"resource {text[:80]!r}: N is from 1 to {POOL_CAP:,}")
    return name, count


def parse_needs(given: Iterable[str]) -> list[tuple[str, int]]:
    """Every ``NAME[:N]`` given, one need per pool (the larger N of two),
    sorted by name."""
    needs: dict[str, int] = {}
    for text in given:
        name, count = parse_need(text)
        needs[name] = max(count, needs.get(name, 0))
    return sorted(needs.items())


def resource_env(values: Iterable[ResourceValue | tuple[str, str]]) -> dict[str, str]:
    """A claim's granted values as environment variables.

    ``values``: what :meth:`Board.claim_resources` returns (or ``(pool,
    value)`` pairs), each pool's in the order granted. Each pool ``name`` gives
    ``LAC_<NAME>`` = its first value; a pool with several values also gives
    ``LAC_<NAME>_0``, ``LAC_<NAME>_1``… for each in order::

        >>> resource_env([("port", "8101")])
        {'LAC_PORT': '8101'}
        >>> resource_env([("db", "app_1"), ("db", "app_2")])
        {'LAC_DB': 'app_1', 'LAC_DB_0': 'app_1', 'LAC_DB_1': 'app_2'}

    Names are the pools' own, which ``resource add`` accepts only when they
    make these variables (:func:`validate_pool_name`), so no two pools'
    variables meet. The values are returned as they are: quoting them for a
    shell is the caller's (``shlex.quote``)."""
    by_pool: dict[str, list[str]] = {}
    for item in values:
        name, value = (item.name, item.value) if isinstance(item, ResourceValue) else item
        by_pool.setdefault(name, []).append(value)
    env: dict[str, str] = {}
    for name, held in by_pool.items():
        key = ENV_PREFIX + name.upper()
        env[key] = held[0]
        if len(held) > 1:
            env.update((f"{key}_{i}", value) for i, value in enumerate(held))
    return env
