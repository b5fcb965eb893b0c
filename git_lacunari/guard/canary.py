"""The probe's canary: ``LAC_PROBE_HELD=PATH`` (a path relative to the top of
the work tree) makes every guard answer as if the agent ``lac-probe`` held
PATH, without asking the board about it: ``git lac guard edit`` refuses an
edit of PATH in the harness's own form, ``guard pre-commit`` refuses a commit
that stages it, and the server's ``guard pre-receive`` a push that changes it.

It only ever adds a refusal: every other path is judged as always, except
the probe's own free paths (under ``.lac-probe/``, which no work tree uses),
which are let through without the board. So `git lac guard probe` and
`git lac doctor` can see the whole guard refuse and allow, as the harness or
git runs it, writing nothing to the board (a read-only team board too).

Nothing is imported at the top: the edit hook loads this only when the
variable is set.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Conflict
    from .changes import Plan
    from .policy import Pusher
    from .verdict import Verdict

VARIABLE = "LAC_PROBE_HELD"
HOLDER = "lac-probe"
PROBE_DIR = ".lac-probe/"  # the probe's own paths: the held one, and a free one
HELD = PROBE_DIR + "held"
FREE = PROBE_DIR + "free"


def held() -> str | None:
    """The path the canary holds, as this repository names it, or None."""
    value = os.environ.get(VARIABLE, "").strip().replace("\\", "/")
    while value.startswith("./"):
        value = value[2:]
    value = value.strip("/")
    return value or None


def refusal(path: str) -> str:
    return f"{HOLDER} holds {path} (the guard's probe, {VARIABLE}: nothing is held on the board)"


def edit_answer(rel: list[str]) -> tuple[bool, str] | None:
    """The edit guard's answer for these repo-relative paths under the canary:
    (allowed, reason), or None when the board decides as always."""
    path = held()
    if path is None:
        return None
    if path in (p.rstrip("/") for p in rel):
        return False, refusal(path)
    if rel and all(p.startswith(PROBE_DIR) for p in rel):
        return True, ""
    return None


def _conflict(path: str, ref: str | None = None, commit: str | None = None) -> Conflict:
    import time

    from ..model import Conflict, Lock, LockMode

    lock = Lock(0, path, LockMode.WRITE, HOLDER, None, time.time(), None)
    return Conflict(path, lock, ref=ref, commit=commit)


def commit_verdict(changed: list[str]) -> Verdict | None:
    """``guard pre-commit``: refused when the commit stages the held path."""
    path = held()
    if path is None or path not in changed:
        return None
    import time

    from .verdict import Decision, Verdict

    refused = (_conflict(path),)
    return Verdict("pre-commit", Decision.REFUSED, checked=1, refused=refused, now=time.time())


def receive_verdict(plan: Plan, pusher: Pusher | None) -> Verdict | None:
    """``guard pre-receive``: refused when a pushed commit changes the held path."""
    path = held()
    if path is None:
        return None
    found = tuple(_conflict(path, ref, commit) for ref, commit, ps in plan if path in ps)
    if not found:
        return None
    import time

    from .verdict import Decision, Verdict

    return Verdict(
        "pre-receive",
        Decision.REFUSED,
        checked=1,
        refused=found,
        now=time.time(),
        pusher=pusher,
    )
