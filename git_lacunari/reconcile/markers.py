"""Conflict markers left in what is about to be committed, while a reconcile
is in progress.

Git lets ``git commit -a`` commit a file that still holds ``<<<<<<<`` and
``>>>>>>>`` lines after a merge; an agent's habit makes that likely. A
reconcile knows which paths it left conflicted, so the pre-commit hook and
``reconcile --continue`` look at exactly those: a path whose staged content
(stage 0) still holds more marker lines than either side had is refused.

A marker line is git's (``git diff --check``): the marker character repeated
``conflict-marker-size`` times (7 unless ``.gitattributes`` says otherwise)
at the start of a line, then whitespace or the end of the line. The size is
read as git reads it (leading digits; 0, none or junk: 7; no upper bound),
both as the attributes stood when the reconcile wrote the markers (recorded
then) and as they stand now: a ``.gitattributes`` that the merge brought in,
or that was edited or removed since, never hides the markers git wrote. ``<`` and
``>`` markers are counted; a lone ``=======`` is an underline in many a
document and is not. Binary content (a NUL in the first 8,000 bytes, git's
test) is never looked at; neither are symlinks and submodules. Outside a
reconcile nothing is looked at at all.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence

from ..repo import Repo, git
from .objects import path_name

ALLOW_ENV = "LAC_ALLOW_MARKERS"
DEFAULT_SIZE = 7
BINARY_PROBE = 8000  # the bytes git looks at for a NUL to call content binary
REGULAR = ("100644", "100755")


def allowed_by_env() -> bool:
    """``LAC_ALLOW_MARKERS=1``: commit markers on purpose."""
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def marker_lines(data: bytes, size: int = DEFAULT_SIZE) -> int:
    """How many ``<``/``>`` conflict-marker lines ``data`` holds (0 for binary)."""
    if b"\0" in data[:BINARY_PROBE]:
        return 0
    pattern = re.compile(rb"^(?:<{%d}|>{%d})(?:[ \t\r\n\f\v]|$)" % (size, size), re.M)
    return len(pattern.findall(data))


def _attr_size(value: str) -> int:
    """A ``conflict-marker-size`` value as git reads it (``atoi``; not
    positive: the default)."""
    digits = re.match(r"[0-9]*", value.strip())
    size = int(digits.group()) if digits and digits.group() else 0
    return size if size > 0 else DEFAULT_SIZE


def marker_sizes(repo: Repo, paths: Sequence[str]) -> dict[str, int]:
    """Each path's marker size as git would use it now (``git check-attr
    conflict-marker-size``; the default where nothing sets one)."""
    if not paths:
        return {}
    names = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
    out = git(
        "check-attr", "--stdin", "-z", "conflict-marker-size", input=names, cwd=repo.toplevel
    ).split(b"\0")
    sizes = {p: DEFAULT_SIZE for p in paths}
    for i in range(0, len(out) - 2, 3):
        sizes[path_name(out[i])] = _attr_size(out[i + 2].decode("ascii", "replace"))
    return sizes


def _staged(repo: Repo, paths: Sequence[str]) -> dict[str, str]:
    """Regular files resolved in the index (stage 0): path -> blob id. The
    index is the one git hands the hook (``GIT_INDEX_FILE``: `commit -a`)."""
    literal = [f":(literal){p}" for p in paths]
    out = git("ls-files", "-s", "-z", "--", *literal, cwd=repo.toplevel)
    found: dict[str, str] = {}
    for item in out.split(b"\0"):
        meta, _, name = item.partition(b"\t")
        fields = meta.decode().split()
        if len(fields) == 3 and fields[2] == "0" and fields[0] in REGULAR:
            found[path_name(name)] = fields[1]
    return found


def _in_tree(repo: Repo, treeish: str, paths: Sequence[str]) -> dict[str, str]:
    literal = [f":(literal){p}" for p in paths]
    out = git("ls-tree", "-r", "-z", "--full-tree", treeish, "--", *literal, cwd=repo.toplevel)
    found: dict[str, str] = {}
    for item in out.split(b"\0"):
        meta, _, name = item.partition(b"\t")
        fields = meta.decode().split()
        if len(fields) == 3 and fields[0] in REGULAR:
            found[path_name(name)] = fields[2]
    return found


def _blobs(repo: Repo, oids: Iterable[str]) -> dict[str, bytes]:
    """The content of each blob, from one `git cat-file --batch`."""
    wanted = sorted(set(oids))
    if not wanted:
        return {}
    proc = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=repo.toplevel,
        input="".join(f"{oid}\n" for oid in wanted).encode(),
        capture_output=True,
        check=False,
    )
    out, found, at = proc.stdout, {}, 0
    for oid in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            found[oid] = out[at : at + size]
            at += size + 1  # the content, then a newline
    return found


def markers_staged(
    repo: Repo,
    paths: Sequence[str],
    sides: Sequence[str],
    written: Mapping[str, int] | None = None,
) -> list[str]:
    """The ``paths`` whose staged content holds more conflict-marker lines
    than any of ``sides`` (commits: ours, theirs) had at that path, at the
    marker size the path has now or had when the markers were ``written``."""
    if not paths:
        return []
    staged = _staged(repo, paths)
    if not staged:
        return []
    names = sorted(staged)
    before = [_in_tree(repo, side, names) for side in sides]
    blobs = _blobs(repo, [*staged.values(), *(o for side in before for o in side.values())])
    sizes = marker_sizes(repo, names)
    left = []
    for path in names:
        then = (written or {}).get(path)
        for size in sorted({sizes[path], *([then] if then else [])}):
            now = marker_lines(blobs.get(staged[path], b""), size)
            sides_had = [marker_lines(blobs.get(s[path], b""), size) for s in before if path in s]
            if now > max(sides_had, default=0):
                left.append(path)
                break
    return left
