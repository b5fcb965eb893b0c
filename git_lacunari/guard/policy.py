"""The guards' policy: what a hook does when the board cannot answer, who a
server's pusher is, when a guard is switched off or has no board to ask, and
how long a hook may wait. Read from git config and the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import BoardUnreachable, InvalidInput
from ..identity import validate_name
from ..repo import Repo

OFFLINE_CHOICES = ("warn", "refuse")
SERVER_OFFLINE_CHOICES = ("refuse", "allow")
PUSH_OPTION = "lac.agent="


def offline_policy(repo: Repo, default: str, key: str = "lac.guard.offline") -> str:
    value = (repo.get(key) or default).strip().lower()
    if value not in OFFLINE_CHOICES:
        raise InvalidInput(f"{key} is {value!r}; use warn or refuse")
    return value


# The offline policy (README, "When the board cannot answer"): what a client
# hook does when the board gives no answer, by trouble and by hook.
# - unreachable (no connection, a configured board file missing):
#   lac.guard.offline, default warn (commit, merge) and refuse (push);
# - reached but no answer (busy or locked past the bound, damaged, too new,
#   failed, disk full): lac.guard.unanswered, default refuse on every hook,
#   so a slow or broken board never lets work through unchecked unless the
#   repository says so.
def trouble_policy(repo: Repo, what: str, unreachable: bool) -> tuple[str, str]:
    """(policy, the key that sets it) for a board that cannot be reached, or
    one that was reached but did not answer, on this hook."""
    if unreachable:
        key, default = "lac.guard.offline", "refuse" if what == "push" else "warn"
    else:
        key, default = "lac.guard.unanswered", "refuse"
    return offline_policy(repo, default, key), key


def push_options(env: dict[str, str]) -> list[str]:
    """``git push -o`` values, as git hands them to the hooks."""
    try:
        count = int(env.get("GIT_PUSH_OPTION_COUNT", "0"))
    except ValueError:
        return []
    return [env.get(f"GIT_PUSH_OPTION_{n}", "") for n in range(count)]


@dataclass(frozen=True)
class Pusher:
    name: str | None  # None: nobody known, so nothing held is anyone's own
    source: str
    # The working tree the push says it comes from (push option lac.instance=ID,
    # which `git lac init` and `hooks install` set); None: not said.
    instance: str | None = None


INSTANCE_OPTION = "lac.instance="


def pushed_instance(env: dict[str, str]) -> str | None:
    """The push option ``lac.instance=ID`` (the last one), checked."""
    from ..identity import INSTANCE_OK

    said = [o[len(INSTANCE_OPTION) :] for o in push_options(env) if o.startswith(INSTANCE_OPTION)]
    if not said:
        return None
    if not INSTANCE_OK.match(said[-1]):
        raise InvalidInput(
            f"push option lac.instance={said[-1][:40]!r} is not an instance id (16 hex "
            "digits, `git lac instance list`)"
        )
    return said[-1]


def server_pusher(repo: Repo, env: dict[str, str]) -> Pusher:
    """Who is pushing (README, "Guarding the server", who trusts what).

    When ``lac.guard.server.pusher-env`` names a variable, the hosting layer
    has authenticated the pusher and that variable alone says who it is: a
    push option may only repeat it (a different name is refused), and when
    the variable is unset nobody is known. Without it, the push option
    ``lac.agent=NAME`` is taken at its word, as ``LAC_AGENT`` is on a client.
    """
    claimed = [o[len(PUSH_OPTION) :] for o in push_options(env) if o.startswith(PUSH_OPTION)]
    option = claimed[-1] if claimed else None
    variable = (repo.get("lac.guard.server.pusher-env") or "").strip()
    if variable:
        hosted = env.get(variable) or None
        if option is not None and option != hosted:
            raise InvalidInput(
                f"push option lac.agent={option} does not match the pusher the server "
                f"authenticated ({variable}={hosted or 'unset'}); drop the option"
            )
        if hosted is not None:
            return Pusher(validate_name(hosted), f"environment {variable}", pushed_instance(env))
        return Pusher(None, f"environment {variable} is unset")
    if option is not None:
        return Pusher(validate_name(option), "push option lac.agent", pushed_instance(env))
    return Pusher(None, "no push option lac.agent")


# --- which board, and whether there is one ---------------------------------------


class NoBoard(Exception):
    """No lac.url and no embedded board: nothing is held, so nothing to guard."""


def require_existing_board(repo: Repo, url: str | None) -> None:
    """A hook never creates a board: with no ``lac.url`` and no embedded board
    file there is none (:class:`NoBoard`); a configured SQLite file that is
    missing is a board that cannot be reached."""
    from ..store import is_postgres_url
    from ..store.sqlite import sqlite_path

    if url and is_postgres_url(url):
        return
    path = sqlite_path(url, repo.common_dir)
    if path.exists():
        return
    if not url:
        raise NoBoard()
    raise BoardUnreachable(f"cannot reach the board: no board at {path}")


def guard_disabled(env: dict[str, str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get("LAC_GUARD", "").strip().lower()
    return value in ("off", "0", "false", "no")


HOOK_TIMEOUT_S = 2.0  # a commit should not stand still for long on a busy board


def hook_timeout(repo: Repo) -> str:
    """The client hooks' bound on any one wait: ``lac.guard.timeout``, else
    the shorter of ``lac.timeout`` and 2 s (``LAC_TIMEOUT`` beats both, as
    everywhere)."""
    from ..durations import parse_duration
    from ..errors import BadDuration
    from ..store.base import MAX_TIMEOUT_S, resolve_timeout

    given = repo.get("lac.guard.timeout")
    if given:
        try:
            seconds = parse_duration(given, at_most=MAX_TIMEOUT_S)
        except BadDuration as exc:
            raise BadDuration(f"lac.guard.timeout: {exc.message}") from None
    else:
        seconds = min(resolve_timeout(repo.get("lac.timeout")), HOOK_TIMEOUT_S)
    return f"{max(seconds, 0.001):.3f}"


def server_offline_policy(repo: Repo) -> str:
    """``lac.guard.server.offline``: refuse (default) or allow a push the
    board could not judge."""
    value = (repo.get("lac.guard.server.offline") or "refuse").strip().lower()
    if value not in SERVER_OFFLINE_CHOICES:
        raise InvalidInput(f"lac.guard.server.offline is {value!r}; use refuse or allow")
    return value
