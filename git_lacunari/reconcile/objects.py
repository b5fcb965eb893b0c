"""Reading git for reconcile: trees, diffs and history, with git's own
commands, for what must match git exactly. Names and paths are bytes on disk:
they are kept as str with ``surrogateescape``, so any name round-trips."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from ..repo import Repo, git
from .model import NULL_OID, Entry


def git_rc(
    repo: Repo, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None
) -> tuple[int, bytes, str]:
    proc = subprocess.run(
        ["git", *args],
        cwd=repo.toplevel,
        input=input,
        capture_output=True,
        check=False,
        env={**os.environ, **env} if env else None,
    )
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace").strip()


def is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def path_name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def diff_trees(repo: Repo, a: str, b: str) -> dict[str, tuple[Entry | None, Entry | None]]:
    """Every path whose entry differs between two trees, with both entries."""
    out = git(
        "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", a, b, cwd=repo.toplevel
    )
    fields = out.split(b"\0")
    changed: dict[str, tuple[Entry | None, Entry | None]] = {}
    for i in range(0, len(fields) - 1, 2):
        meta = fields[i].split()
        if not meta:
            break
        mode_a, mode_b, oid_a, oid_b = (m.decode().lstrip(":") for m in meta[:4])
        changed[path_name(fields[i + 1])] = (
            Entry(mode_a, oid_a) if oid_a != NULL_OID else None,
            Entry(mode_b, oid_b) if oid_b != NULL_OID else None,
        )
    return changed


def tree_entries(repo: Repo, treeish: str, paths: Sequence[str]) -> dict[str, Entry]:
    if not paths:
        return {}
    out = git("ls-tree", "-r", "-z", "--full-tree", treeish, "--", *paths, cwd=repo.toplevel)
    found: dict[str, Entry] = {}
    for item in out.split(b"\0"):
        if item:
            meta, _, name = item.partition(b"\t")
            mode, _kind, oid = meta.decode().split()
            found[path_name(name)] = Entry(mode, oid)
    return found


def history_blobs(repo: Repo, commit: str, paths: list[str]) -> dict[str, list[str]]:
    """For each path, the blob ids it had in ``commit``'s history, newest first."""
    if not paths:
        return {}
    out = git(
        "log",
        "--no-renames",
        "--raw",
        "-z",
        "--no-abbrev",
        "--format=",
        commit,
        "--",
        *paths,
        cwd=repo.toplevel,
    )
    found: dict[str, list[str]] = {}
    fields = out.split(b"\0")
    i = 0
    while i < len(fields):
        meta = fields[i].strip()
        if meta.startswith(b":") and i + 1 < len(fields):
            found.setdefault(path_name(fields[i + 1]), []).append(meta.split()[3].decode())
            i += 2
        else:
            i += 1
    return found
