"""Error types. Each carries the exit code of DESIGN.md's contract.

The command line turns any LacError into one clean line on stderr (and, with
``--json``, one JSON object on stdout); nothing else should reach the user as a
traceback.
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_CANNOT_WORK = 3


class LacError(Exception):
    """Base of every error git-lacunari reports to its user."""

    exit_code = EXIT_CANNOT_WORK
    kind = "error"

    def __init__(self, message: str | None = None) -> None:
        # The docstring of a subclass is its default user-facing message.
        super().__init__(message or (type(self).__doc__ or "").strip())

    @property
    def message(self) -> str:
        return str(self.args[0])

    def to_json(self) -> dict[str, Any]:
        return {"ok": False, "error": {"kind": self.kind, "message": self.message}}


class InvalidInput(LacError):
    """Invalid input."""

    exit_code = EXIT_USAGE
    kind = "invalid_input"


class BadPath(InvalidInput):
    """Invalid path pattern."""

    kind = "bad_path"


class BadDuration(InvalidInput):
    """Invalid duration."""

    kind = "bad_duration"


class CannotWorkHere(LacError):
    """Cannot work here."""

    exit_code = EXIT_CANNOT_WORK
    kind = "cannot_work"


class NotARepository(CannotWorkHere):
    """Not a git repository (or any of the parent directories)."""

    kind = "not_a_repository"


class BoardUnreachable(CannotWorkHere):
    """The board cannot be reached."""

    kind = "board_unreachable"


class BoardTooNew(CannotWorkHere):
    """The board's schema is newer than this git-lacunari; upgrade git-lacunari."""

    kind = "board_too_new"


class Refused(LacError):
    """The board refused.

    ``reason`` is one of the refusal reasons of DESIGN.md; ``facts`` are the
    details behind it (holder, task, path, dependency, capability), printed
    under ``refused`` in ``--json`` output.
    """

    exit_code = EXIT_REFUSED
    kind = "refused"

    def __init__(self, reason: str, message: str, **facts: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.facts = facts

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": False,
            "refused": {"reason": self.reason, **self.facts},
            "message": self.message,
        }


class BoardBusy(CannotWorkHere):
    """The board is busy; retry in a moment.

    A wait on the board ran out (``lac.timeout``): its SQLite file held by
    another writer, a PostgreSQL lock or statement timeout, a deadlock or a
    serialization failure. The board was reached and nothing was written: this
    is never the guards' offline policy. ``cause`` names which wait it was
    (``locked``, ``lock_timeout``, ``statement_timeout``, ``cancelled``,
    ``deadlock``, ``serialization_failure``).
    """

    kind = "board_busy"

    def __init__(self, message: str, *, cause: str, transient: bool = False) -> None:
        super().__init__(message)
        self.cause = cause
        # Rolled back by the server for a reason that a second try may not
        # meet (deadlock, serialization): safe to retry a one-statement
        # transaction. A timeout already waited its bound.
        self.transient = transient

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": False,
            "error": {"kind": self.kind, "cause": self.cause, "message": self.message},
        }


class BoardCorrupt(CannotWorkHere):
    """The board's database file is damaged."""

    kind = "board_corrupt"


class BoardFailed(CannotWorkHere):
    """The board reported an error it could not work past."""

    kind = "board_failed"
