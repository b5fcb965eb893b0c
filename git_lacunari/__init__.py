"""git-lacunari: `git lac`, a shared board of claims and path locks for a fleet of workers.

The public Python API, imported lazily (``import git_lacunari`` costs nothing
until a name is used)::

    import git_lacunari as lac

    board = lac.open_board("path/to/repo", as_name="bot-1")
    try:
        got = board.claim_next("default")
    except lac.Refused as refused:
        print(refused.message)
    finally:
        board.store.close()

:func:`open_board` is the one way a board is opened (the command line, the
hooks, the page and the keeper use it too); :class:`Board` holds the verbs;
the records (:class:`Task`, :class:`Lock`, :class:`Event`, :class:`Claim`, …)
are what they return; every failure is a :class:`LacError`, a refusal by
the board a :class:`Refused`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "open_board": "front_door",
    "Board": "board",
    "Claim": "board",
    "Page": "board",
    "Identity": "identity",
    "Task": "model",
    "Lock": "model",
    "Event": "model",
    "Conflict": "model",
    "PathSpec": "model",
    "LockMode": "model",
    "TaskState": "model",
    "LacError": "errors",
    "InvalidInput": "errors",
    "BadUsage": "errors",
    "BadPath": "errors",
    "BadDuration": "errors",
    "CannotWorkHere": "errors",
    "NotARepository": "errors",
    "BoardUnreachable": "errors",
    "BoardTooNew": "errors",
    "BoardBusy": "errors",
    "BoardCorrupt": "errors",
    "BoardFailed": "errors",
    "Refused": "errors",
    "AlreadyClaimed": "errors",
    "UnmetDependency": "errors",
    "MissingCapability": "errors",
    "NotOpen": "errors",
    "NotFound": "errors",
    "NotOwner": "errors",
    "PathLocked": "errors",
    "AlreadyOpen": "errors",
    "NotPermitted": "errors",
    "HeldOnBoard": "errors",
}

__all__ = [
    "__version__",
    "open_board",
    "Board",
    "Claim",
    "Page",
    "Identity",
    "Task",
    "Lock",
    "Event",
    "Conflict",
    "PathSpec",
    "LockMode",
    "TaskState",
    "LacError",
    "InvalidInput",
    "BadUsage",
    "BadPath",
    "BadDuration",
    "CannotWorkHere",
    "NotARepository",
    "BoardUnreachable",
    "BoardTooNew",
    "BoardBusy",
    "BoardCorrupt",
    "BoardFailed",
    "Refused",
    "AlreadyClaimed",
    "UnmetDependency",
    "MissingCapability",
    "NotOpen",
    "NotFound",
    "NotOwner",
    "PathLocked",
    "AlreadyOpen",
    "NotPermitted",
    "HeldOnBoard",
]

if TYPE_CHECKING:
    from .board import Board, Claim, Page
    from .errors import (
        AlreadyClaimed,
        AlreadyOpen,
        BadDuration,
        BadPath,
        BadUsage,
        BoardBusy,
        BoardCorrupt,
        BoardFailed,
        BoardTooNew,
        BoardUnreachable,
        CannotWorkHere,
        HeldOnBoard,
        InvalidInput,
        LacError,
        MissingCapability,
        NotARepository,
        NotFound,
        NotOpen,
        NotOwner,
        NotPermitted,
        PathLocked,
        Refused,
        UnmetDependency,
    )
    from .front_door import open_board
    from .identity import Identity
    from .model import Conflict, Event, Lock, LockMode, PathSpec, Task, TaskState


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once: later uses skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
