"""Who am I: the agent name and capabilities a command acts as."""

from __future__ import annotations

import getpass
import os
import re
from dataclasses import dataclass

from .errors import InvalidInput
from .paths import describe_char, unsafe_char
from .repo import Repo

NAME_OK = re.compile(r"^[^\x00-\x1f\x7f\s]{1,200}$")


@dataclass(frozen=True)
class Identity:
    name: str
    source: str  # where the name came from, for `git lac whoami`
    capabilities: tuple[str, ...]
    capabilities_source: str


def validate_name(name: str, what: str = "agent name") -> str:
    if not NAME_OK.match(name):
        raise InvalidInput(
            f"{what} {name!r} must be 1-200 characters without spaces or control characters"
        )
    bad = unsafe_char(name)
    if bad is not None:  # a bidi override or zero-width space makes two names look alike
        raise InvalidInput(f"{what} {name!r} contains {describe_char(bad)}")
    return name


def parse_capabilities(text: str) -> tuple[str, ...]:
    caps = [c for c in re.split(r"[,\s]+", text.strip()) if c]
    return tuple(sorted({validate_name(c, "capability") for c in caps}))


def resolve(repo: Repo, as_name: str | None = None) -> Identity:
    """``--as`` > ``LAC_AGENT`` > ``lac.agent`` > a default from ``user.email``.

    The default is the local part of ``user.email`` (or the login name), and
    in a linked worktree ``@`` and the worktree's name are added, so two
    worktrees of one person are two distinct, stable agents.
    """
    if as_name is not None:  # `--as ''` is refused below, never the default
        name, source = as_name, "--as"
    elif os.environ.get("LAC_AGENT"):
        name, source = os.environ["LAC_AGENT"], "environment LAC_AGENT"
    elif repo.get("lac.agent"):
        name, source = repo.get("lac.agent") or "", "git config lac.agent"
    else:
        email = repo.get("user.email")
        base = email.split("@", 1)[0] if email else getpass.getuser()
        source = "default from user.email" if email else "default from the login name"
        if repo.worktree_name:
            base = f"{base}@{repo.worktree_name}"
            source += " and the worktree name"
        name = re.sub(r"[\x00-\x1f\x7f\s]+", "-", base) or "agent"
    if os.environ.get("LAC_CAPS") is not None:
        caps, caps_source = parse_capabilities(os.environ["LAC_CAPS"]), "environment LAC_CAPS"
    elif repo.get("lac.capabilities") is not None:
        caps = parse_capabilities(repo.get("lac.capabilities") or "")
        caps_source = "git config lac.capabilities"
    else:
        caps, caps_source = (), "none set"
    return Identity(validate_name(name), source, caps, caps_source)
