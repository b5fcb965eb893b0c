"""Who am I: the agent name and capabilities a command acts as."""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidInput
from .paths import describe_char, unsafe_char
from .repo import Repo

NAME_MAX = 200
NAME_OK = re.compile(r"^[^\x00-\x1f\x7f\s]{1,200}$")


@dataclass(frozen=True)
class Identity:
    name: str
    source: str  # where the name came from, for `git lac whoami`
    capabilities: tuple[str, ...]
    capabilities_source: str
    # Where: one working tree of one clone (see :func:`instance_of`). Empty for
    # boards opened without a repository (tests, benches): one anonymous place.
    instance: str = ""
    instance_where: str = ""  # host:path, for people
    instance_source: str = ""


def validate_name(name: str, what: str = "agent name") -> str:
    if not NAME_OK.match(name):
        raise InvalidInput(
            f"{what} {name!r} must be 1-200 characters without spaces or control characters"
        )
    bad = unsafe_char(name)
    if bad is not None:  # a bidi override or zero-width space makes two names look alike
        raise InvalidInput(f"{what} {name!r} contains {describe_char(bad)}")
    return name


def _defaulted(base: str) -> str:
    """A default name from ``user.email`` or the login name, which are not
    ours to refuse: each run of whitespace and of the characters no name may
    hold (controls, format characters such as zero-width and bidi ones,
    separators, bytes that were not UTF-8) becomes ``-``, alike, so that
    one odd character never stops every command."""
    marked = "".join("\0" if c.isspace() or unsafe_char(c) else c for c in base)
    name = re.sub("\0+", "-", marked) or "agent"
    if len(name) > NAME_MAX:
        # Too long for a name: cut, and keep two long ones apart by a digest
        # of the whole (a default is never refused, and never shared by chance).
        import hashlib

        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        name = f"{name[: NAME_MAX - 9]}~{digest}"
    return name


def parse_capabilities(text: str) -> tuple[str, ...]:
    caps = [c for c in re.split(r"[,\s]+", text.strip()) if c]
    return tuple(sorted({validate_name(c, "capability") for c in caps}))


def name_of(repo: Repo, as_name: str | None = None) -> tuple[str, str]:
    """The agent name (validated) and where it came from, as :func:`resolve`
    finds them; nothing is written (no instance file is made)."""
    if as_name is not None:  # `--as ''` is refused below, never the default
        name, source = as_name, "--as"
    elif os.environ.get("LAC_AGENT"):
        name, source = os.environ["LAC_AGENT"], "environment LAC_AGENT"
    elif repo.get("lac.agent"):
        name, source = repo.get("lac.agent") or "", "git config lac.agent"
    else:
        email = repo.get("user.email")
        if email:
            base = email.split("@", 1)[0]
        else:
            import getpass  # imported only here: a claim's whole process is timed

            base = getpass.getuser()
        source = "default from user.email" if email else "default from the login name"
        if repo.worktree_name:
            base = f"{base}@{repo.worktree_name}"
            source += " and the worktree name"
        name = _defaulted(base)
    return validate_name(name), source  # before any instance file: exit 2 writes nothing


def resolve(repo: Repo, as_name: str | None = None) -> Identity:
    """``--as`` > ``LAC_AGENT`` > ``lac.agent`` > a default from ``user.email``.

    The default is the local part of ``user.email`` (or the login name), and
    in a linked worktree ``@`` and the worktree's name are added, so two
    worktrees of one person are two distinct, stable agents.
    """
    name, source = name_of(repo, as_name)
    if os.environ.get("LAC_CAPS") is not None:
        caps, caps_source = parse_capabilities(os.environ["LAC_CAPS"]), "environment LAC_CAPS"
    elif repo.get("lac.capabilities") is not None:
        caps = parse_capabilities(repo.get("lac.capabilities") or "")
        caps_source = "git config lac.capabilities"
    else:
        caps, caps_source = (), "none set"
    inst = instance_of(repo)
    return Identity(name, source, caps, caps_source, inst.id, inst.where, inst.source)


# --- instances: where an agent runs -------------------------------------------------

INSTANCE_FILE = Path("lacunari") / "instance.json"


def _hostname() -> str:
    """socket.gethostname()'s answer without importing socket (POSIX: uname)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


INSTANCE_OK = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class Instance:
    id: str
    host: str
    path: str
    source: str

    @property
    def where(self) -> str:
        return f"{self.host}:{self.path}"


def _read_instance(file: Path) -> Instance | None:
    try:
        data = json.loads(file.read_text())
        ident, host, path = str(data["id"]), str(data["host"]), str(data["path"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Instance(ident, host, path, str(file)) if INSTANCE_OK.match(ident) else None


def _still_there(inst: Instance) -> bool:
    """Whether the working tree ``inst`` names still holds ``inst``: then a
    tree found elsewhere with the same file is a copy of it (``cp -r``), a
    new place; if not, that tree was moved here."""
    top = Path(inst.path)
    dotgit = top / ".git"
    try:
        if dotgit.is_dir():
            git_dir = dotgit
        elif dotgit.is_file():  # a linked worktree: "gitdir: PATH"
            key, _, value = dotgit.read_text().partition(":")
            if key.strip() != "gitdir":
                return False
            git_dir = Path(value.strip())
            git_dir = git_dir if git_dir.is_absolute() else top / git_dir
        else:
            return False
    except OSError:
        return False
    there = _read_instance(git_dir / INSTANCE_FILE)
    return there is not None and there.id == inst.id and Path(there.path) == top


def new_instance(path: Path) -> Instance:
    """A new instance for a working tree about to be made at ``path`` (a
    desk): its id is known before the tree is, so the claim can be held there."""
    import secrets

    return Instance(secrets.token_hex(8), _hostname(), str(path), "new")


def read_instance(file: Path) -> Instance | None:
    """The instance an instance file records (None: none, or damaged)."""
    return _read_instance(file)


def _instance_files(repo: Repo) -> list[Path]:
    """Every instance file of this repository's working trees (main and linked)."""
    return [repo.common_dir / INSTANCE_FILE] + sorted(
        repo.common_dir.glob(f"worktrees/*/{INSTANCE_FILE.as_posix()}")
    )


def instance_of(repo: Repo) -> Instance:
    """This working tree's instance: a random id made at first use and kept
    in its own git dir (so a clone, or a linked worktree, is a new instance).

    ``LAC_INSTANCE`` is how a drainer lends its instance to the command it
    runs (in its tree or in a task worktree of the same repository); it is
    honoured only when it names an instance of one of this repository's
    working trees, so it cannot make a clone pass for another clone. A file
    whose recorded host or path is not ours was copied with the tree (cp -r,
    rsync): that copy is a new place, and gets a new id.
    """
    lent = os.environ.get("LAC_INSTANCE")
    if lent:
        for file in _instance_files(repo):
            found = _read_instance(file)
            if found is not None and found.id == lent:
                return Instance(found.id, found.host, found.path, "environment LAC_INSTANCE")
        raise InvalidInput(
            f"LAC_INSTANCE={lent!r} names no working tree of this repository "
            "(only `git lac drain` sets it, for the command it runs)"
        )
    host, path = _hostname(), str(repo.toplevel)
    file = repo.git_dir / INSTANCE_FILE
    found = _read_instance(file)
    if found is not None and (found.host, found.path) == (host, path):
        return found
    if found is not None and found.host == host and not _still_there(found):
        # Moved (`git worktree move`, `mv` of a clone, then `git worktree
        # repair`): the tree it names holds it no more, so this is the same
        # working tree at a new path. It keeps its id, and its claims.
        made = Instance(found.id, host, path, str(file))
    else:
        import secrets  # only for a new instance (hmac and hashlib, 4 ms at each start)

        made = Instance(secrets.token_hex(8), host, path, str(file))
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"id": made.id, "host": host, "path": path}) + "\n")
    if found is None and not file.exists():
        # The first use: link, not rename, so of two first uses at once one
        # wins and both go on with the winner's id.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, file)
        tmp.unlink()
    else:
        os.replace(tmp, file)
    return _read_instance(file) or made
