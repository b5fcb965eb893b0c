"""A guard's verdict, as data: what it decided about one hook's changes, and
the facts the views need to say so (:mod:`git_lacunari.views.guard`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..errors import CannotWorkHere
from ..model import Conflict
from .policy import Pusher

HOOK_OF = {"commit": "pre-commit", "push": "pre-push", "merge": "pre-merge-commit"}
WHAT_OF = {"pre-push": "push", "pre-merge-commit": "merge", "pre-receive": "push"}


class Decision(StrEnum):
    """What a guard decided."""

    ALLOWED = "allowed"  # asked the board: nothing changed is held by another agent
    SWITCHED_OFF = "switched-off"  # LAC_GUARD=off: not asked, and said so
    NO_BOARD = "no-board"  # no board here at all: not asked, silently
    UNCHECKED = "unchecked"  # the board gave no answer; the policy lets it through
    BLOCKED = "blocked"  # the board gave no answer; the policy stops it (exit 1)
    FAILED = "failed"  # reached but no answer; the policy stops it with the board's error
    REFUSED = "refused"  # changes to paths another agent holds


@dataclass(frozen=True)
class Verdict:
    hook: str  # pre-commit, pre-push, pre-merge-commit, pre-receive
    decision: Decision
    checked: int = 0  # paths the board was asked about
    trouble: CannotWorkHere | None = None  # why the board gave no answer
    policy_key: str | None = None  # the config key whose value decided, then
    # Refused: the holdings, per staged path (a commit) or per ref, commit and
    # path (a push, a merge, a received push), and the board's clock to age them.
    refused: tuple[Conflict, ...] = ()
    now: float = 0.0
    pusher: Pusher | None = None  # pre-receive: who pushes, as far as the server knows
    ask_pusher_name: bool = False  # pre-receive refused: nobody said who pushes
    # Allowed, but said: paths another live claim changed undeclared.
    warnings: tuple[str, ...] = ()
    # pre-receive: lines said under a refusal (another instance of the pusher's name).
    elsewhere: tuple[str, ...] = ()

    @property
    def what(self) -> str:
        """The action the hook guards, as messages name it."""
        return WHAT_OF.get(self.hook, "commit")
