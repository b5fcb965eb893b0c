"""What the board accepts, checked before any SQL: ids, priorities, names,
titles, bodies, states, page sizes. Each refusal is one clear ``InvalidInput``."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..errors import (
    InvalidInput,
)
from ..identity import validate_name
from ..model import (
    STATES,
)
from ..paths import describe_char, unsafe_char

# What a one-line title may not hold: controls (C0, DEL and C1, NEL among
# them) and the line and paragraph separators.
NOT_IN_A_LINE = frozenset(("Cc", "Zl", "Zp"))

MAX_TITLE = 500
MAX_BODY = 1_000_000
# What both backends store: ids are 64-bit (SQLite INTEGER, PostgreSQL
# bigint), priorities 32-bit (PostgreSQL integer). Checked before any SQL.
MAX_TASK_ID = 2**63 - 1
PRIORITY_RANGE = (-(2**31), 2**31 - 1)


def validate_task_id(value: Any) -> int:
    try:
        number = int(str(value), 10)
    except ValueError:
        number = 0
    if number <= 0 or str(value).strip().lstrip("+") != str(number):
        raise InvalidInput(f"task id {str(value)[:40]!r} is not a positive whole number")
    if number > MAX_TASK_ID:
        raise InvalidInput(f"task id {number} is too large: at most {MAX_TASK_ID}")
    return number


def validate_priority(value: int) -> int:
    low, high = PRIORITY_RANGE
    if not low <= value <= high:
        raise InvalidInput(f"priority {value} is out of range: from {low} to {high}")
    return value


def _no_surrogates(text: str, what: str) -> str:
    # Lone surrogates are bytes argv could not decode: no backend stores them
    # and no terminal can be written them.
    if any("\ud800" <= c <= "\udfff" for c in text):
        raise InvalidInput(f"{what} is not valid UTF-8 text")
    return text


def validate_lane(lane: str) -> str:
    return validate_name(lane, "lane")


def validate_title(title: str) -> str:
    if not title.strip():
        raise InvalidInput("a task needs a non-empty title")
    if len(title) > MAX_TITLE:
        raise InvalidInput(
            f"title is {len(title)} characters; at most {MAX_TITLE} (put the rest in --body)"
        )
    bad = next((c for c in title if unicodedata.category(c) in NOT_IN_A_LINE), None)
    if bad is not None:  # a newline, but also NEL (U+0085) and U+2028/U+2029 break lines
        raise InvalidInput(
            f"title must be one line without control characters: it holds {describe_char(bad)}"
        )
    return _no_surrogates(title, "title").strip()


def validate_body(body: str) -> str:
    if len(body) > MAX_BODY:
        raise InvalidInput(f"body is {len(body)} characters; at most {MAX_BODY}")
    if "\0" in body:
        raise InvalidInput("body must not contain NUL characters")
    return _no_surrogates(body, "body")


def validate_state(state: str) -> str:
    if state not in STATES:
        raise InvalidInput(f"unknown state {state[:40]!r}: one of {', '.join(STATES)}")
    return state


def validate_limit(limit: int | None) -> int | None:
    """A page size: a positive whole number, or None (or 0) for no limit."""
    if limit is None or limit == 0:
        return None
    if limit < 0 or limit > MAX_TASK_ID:
        raise InvalidInput(f"--limit {limit} is out of range: 0 (no limit) or a positive number")
    return limit


_TIP = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def validate_tip(tip: str) -> str:
    """A commit id as git prints it in full: SHA-1 (40) or SHA-256 (64) hex."""
    if not isinstance(tip, str) or _TIP.fullmatch(tip) is None:
        raise InvalidInput(f"tip {str(tip)[:80]!r} is not a full commit id")
    return tip


def validate_branch(branch: str | None) -> str | None:
    """A branch name as recorded on a claim (git's own check made it one)."""
    if branch is None:
        return None
    if not 1 <= len(branch) <= 1000 or any(c.isspace() for c in branch) or unsafe_char(branch):
        raise InvalidInput(f"branch {branch[:80]!r} is not a branch name")
    return branch
