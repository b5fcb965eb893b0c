"""Path patterns: validation, git wildmatch, and the one overlap rule.

A pattern is a repo-relative POSIX path, a ``dir/`` subtree, or a glob
following git's wildmatch with ``WM_PATHNAME``: ``*`` and ``?`` never cross
``/``, ``**/`` matches any number of leading directories, ``/**`` everything
below. A pattern *covers* a path when it matches the path or one of the
path's parent directories (as git's pathspecs do), so ``src`` and ``src/``
both cover ``src/a.py``.

Two patterns *overlap* when some path is covered by both. That is decided
exactly, not by heuristics, by exploring the product of the two patterns'
automata: this module is the only place the rule lives.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from .errors import BadPath

T = TypeVar("T")

GLOB_CHARS = frozenset("*?[\\")
# Upper bound used to turn "every key starting with K" into a range query.
KEY_RANGE_END = "\U0010ffff"


# Characters that make two different names look alike, or that a terminal
# acts on: controls (C0, DEL, C1), format characters (bidi embeddings,
# overrides and isolates, zero-width spaces and joiners, BOM), line and
# paragraph separators, and lone surrogates (undecodable bytes from argv).
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
MAX_PATTERN = 4096  # characters, as PATH_MAX bytes


def unsafe_char(text: str) -> str | None:
    """The first character of ``text`` no name, lane or pattern may hold, or None."""
    for char in text:
        if unicodedata.category(char) in UNSAFE_CATEGORIES:
            return char
    return None


def describe_char(char: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE)``: how messages name a refused character."""
    return f"U+{ord(char):04X} ({unicodedata.name(char, unicodedata.category(char))})"


def normalize(pattern: str, prefix: str = "") -> str:
    """Return ``pattern`` as a repo-relative pattern, or raise BadPath.

    ``prefix`` is the current directory relative to the top of the work tree
    (``git rev-parse --show-prefix``), so ``a.py`` typed in ``src/`` becomes
    ``src/a.py``. A trailing ``/`` (a subtree) is kept for display.
    """
    if pattern == "":
        raise BadPath("empty path pattern")
    if len(pattern) > MAX_PATTERN:  # the database's bound too (0007, lac_valid_pattern)
        raise BadPath(f"path pattern is {len(pattern)} characters; at most {MAX_PATTERN}")
    bad = unsafe_char(pattern)
    if bad is not None:
        raise BadPath(
            f"path pattern {pattern!r} contains {describe_char(bad)}: "
            "no control, format (bidi, zero-width) or separator characters"
        )
    if pattern.startswith("/"):
        raise BadPath(f"path pattern {pattern!r} is absolute; give it relative to the repository")
    is_dir = pattern.endswith("/") or pattern in (".", "..") or pattern.endswith(("/.", "/.."))
    parts: list[str] = [p for p in prefix.split("/") if p]
    for part in pattern.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise BadPath(f"path pattern {pattern!r} escapes the repository")
            parts.pop()
            continue
        parts.append(part)
    if not parts:
        return "**"
    result = "/".join(parts) + ("/" if is_dir else "")
    if len(result) > MAX_PATTERN:  # with the current directory's prefix
        raise BadPath(f"path pattern is {len(result)} characters; at most {MAX_PATTERN}")
    return result


def literal(path: str) -> str:
    """A concrete path as a pattern that means only itself: its glob
    characters escaped (a file may be named ``x[1].py``)."""
    return "".join("\\" + c if c in GLOB_CHARS else c for c in path)


def is_literal(pattern: str) -> bool:
    return not any(c in GLOB_CHARS for c in pattern)


def literal_prefix(pattern: str) -> str:
    for i, char in enumerate(pattern):
        if char in GLOB_CHARS:
            return pattern[:i]
    return pattern


def index_key(pattern: str) -> str:
    """The directory part of the pattern's literal prefix, casefolded.

    Stored beside every lock so candidates can be found with an index: a lock
    can only overlap a pattern whose key is an ancestor or a descendant of its
    own (see :func:`candidate_keys`). Casefolding keeps the filter a superset
    when ``core.ignorecase`` is on.
    """
    lit = literal_prefix(pattern.rstrip("/") if is_literal(pattern) else pattern)
    return lit[: lit.rfind("/") + 1].casefold()


def ancestor_keys(key: str) -> list[str]:
    """``a/b/`` -> ``['', 'a/', 'a/b/']``."""
    keys = [""]
    for i, char in enumerate(key):
        if char == "/":
            keys.append(key[: i + 1])
    return keys


@dataclass(frozen=True)
class CandidateKeys:
    """Locks whose key is in ``exact`` or starts with ``below`` may overlap."""

    exact: list[str]
    below: str


def candidate_keys(pattern: str) -> CandidateKeys:
    key = index_key(pattern)
    return CandidateKeys(exact=ancestor_keys(key), below=key)


def covering_keys(paths: Iterable[str]) -> list[str]:
    """Every key a lock covering one of these concrete paths can have."""
    keys: set[str] = set()
    for path in paths:
        folded = path.casefold()
        keys.update(ancestor_keys(folded[: folded.rfind("/") + 1]))
    return sorted(keys)


# --- wildmatch as a small NFA ------------------------------------------------


@dataclass(frozen=True)
class CharSet:
    """A set of characters: exactly ``only``, or everything but ``excluded``."""

    only: frozenset[str] | None
    excluded: frozenset[str] = frozenset()

    def __contains__(self, char: object) -> bool:
        if self.only is not None:
            return char in self.only
        return char not in self.excluded

    def meets(self, other: CharSet) -> bool:
        if self.only is not None and other.only is not None:
            return not self.only.isdisjoint(other.only)
        if self.only is not None:
            return any(c not in other.excluded for c in self.only)
        if other.only is not None:
            return any(c not in self.excluded for c in other.only)
        return True  # two co-finite sets over an infinite alphabet always meet


ANY = CharSet(None)
NOT_SLASH = CharSet(None, frozenset("/"))
SLASH = CharSet(frozenset("/"))


@dataclass
class Automaton:
    # edges[state] = [(charset, target)], eps[state] = [target]
    edges: list[list[tuple[CharSet, int]]]
    eps: list[list[int]]
    accepting: frozenset[int]

    def new_state(self) -> int:
        self.edges.append([])
        self.eps.append([])
        return len(self.edges) - 1

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        stack = list(seen)
        while stack:
            for target in self.eps[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return frozenset(seen)


def _parse_class(pattern: str, start: int) -> tuple[CharSet, int] | None:
    """Parse ``[...]`` at ``start``; None when unterminated (then ``[`` is literal)."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] in "!^"
    if negated:
        i += 1
    chars: set[str] = set()
    first = True
    while i < len(pattern):
        char = pattern[i]
        if char == "]" and not first:
            break
        first = False
        if char == "\\" and i + 1 < len(pattern):
            i += 1
            char = pattern[i]
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            low, high = ord(char), ord(pattern[i + 2])
            chars.update(chr(c) for c in range(low, min(high, low + 65536) + 1))
            i += 3
            continue
        chars.add(char)
        i += 1
    else:
        return None
    chars.discard("/")
    charset = CharSet(None, frozenset(chars) | {"/"}) if negated else CharSet(frozenset(chars))
    return charset, i + 1


@functools.lru_cache(maxsize=65536)
def compile_pattern(pattern: str, ignorecase: bool = False) -> Automaton:
    """The automaton of every path ``pattern`` covers."""
    if ignorecase:
        pattern = pattern.lower()
    pattern = pattern.rstrip("/") or "**"
    auto = Automaton([], [], frozenset())
    state = auto.new_state()
    i = 0
    n = len(pattern)
    while i < n:
        char = pattern[i]
        at_segment_start = i == 0 or pattern[i - 1] == "/"
        if char == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            double = j - i >= 2 and at_segment_start and (j == n or pattern[j] == "/")
            if double and j < n:  # "**/": nothing, or anything ending in "/"
                dirs, nxt = auto.new_state(), auto.new_state()
                auto.eps[state] += [nxt, dirs]
                auto.edges[dirs] += [(ANY, dirs), (SLASH, nxt)]
                state, i = nxt, j + 1
                continue
            run = ANY if double else NOT_SLASH
            nxt = auto.new_state()
            auto.edges[state].append((run, state))
            auto.eps[state].append(nxt)
            state, i = nxt, j
            continue
        if char == "?":
            charset, i = NOT_SLASH, i + 1
        elif char == "[" and (parsed := _parse_class(pattern, i)) is not None:
            charset, i = parsed
        elif char == "\\" and i + 1 < n:
            charset, i = CharSet(frozenset(pattern[i + 1])), i + 2
        else:
            charset, i = CharSet(frozenset(char)), i + 1
        nxt = auto.new_state()
        auto.edges[state].append((charset, nxt))
        state = nxt
    # Covering a directory covers everything below it.
    below = auto.new_state()
    auto.edges[state].append((SLASH, below))
    auto.edges[below].append((ANY, below))
    auto.accepting = frozenset({state, below})
    return auto


def covers(pattern: str, path: str, ignorecase: bool = False) -> bool:
    """Does ``pattern`` cover the concrete repo-relative ``path``?"""
    if is_literal(pattern):
        base = pattern.rstrip("/")
        if ignorecase:
            base, path = base.lower(), path.lower()
        return base in ("", "**") or path == base or path.startswith(base + "/")
    auto = compile_pattern(pattern, ignorecase)
    current = auto.closure([0])
    for char in path.lower() if ignorecase else path:
        step = [t for s in current for cs, t in auto.edges[s] if char in cs]
        if not step:
            return False
        current = auto.closure(step)
    return not current.isdisjoint(auto.accepting)


def overlap(first: str, second: str, ignorecase: bool = False) -> bool:
    """Is there a path that both patterns cover?"""
    if is_literal(first) and is_literal(second):
        return covers(first, second.rstrip("/"), ignorecase) or covers(
            second, first.rstrip("/"), ignorecase
        )
    a = compile_pattern(first, ignorecase)
    b = compile_pattern(second, ignorecase)
    start = [(x, y) for x in a.closure([0]) for y in b.closure([0])]
    seen = set(start)
    stack = list(start)
    while stack:
        x, y = stack.pop()
        if x in a.accepting and y in b.accepting:
            return True
        for cs_a, ta in a.edges[x]:
            for cs_b, tb in b.edges[y]:
                if cs_a.meets(cs_b):
                    for pair in _pairs(a.closure([ta]), b.closure([tb])):
                        if pair not in seen:
                            seen.add(pair)
                            stack.append(pair)
    return False


def _pairs(xs: frozenset[int], ys: frozenset[int]) -> Iterator[tuple[int, int]]:
    for x in xs:
        for y in ys:
            yield x, y


def head(pattern: str) -> str:
    """The literal head of ``pattern``, casefolded: the characters before its
    first ``*?[\\`` (a plain path or ``dir/``: the whole path, its trailing
    ``/`` dropped). Every path a pattern covers starts with its head, so two
    patterns overlap only when one's head starts the other's, and a pattern
    covers a path only when its head starts the path's (each casefolded;
    casefolding is the superset that holds whether or not case is ignored).
    :class:`PrefixIndex` finds those candidates; twin: PostgreSQL
    ``lac_lock_head`` (functions/overlap.sql), pinned by tests/test_overlap_sql.py.
    :func:`index_key` is its directory part."""
    return literal_prefix(pattern.rstrip("/") if is_literal(pattern) else pattern).casefold()


class PrefixIndex(Generic[T]):
    """Patterns indexed by :func:`head`, so that those which may overlap a
    pattern (or cover a path) are found without comparing every pair: the
    held heads that start the wanted head (its prefixes, found by walking a
    sorted list down the common prefixes) and the held heads that start
    with it (a contiguous run of the sorted list). Only those candidates go
    to :func:`overlap` or :func:`covers`, which decide; a pattern whose head
    is empty (``*.py``, ``**``) is every pattern's candidate."""

    def __init__(self) -> None:
        self.by_head: dict[str, list[T]] = {}
        self._sorted: list[str] | None = None

    def add(self, pattern: str, item: T) -> None:
        self.by_head.setdefault(head(pattern), []).append(item)
        self._sorted = None

    def _heads(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.by_head)
        return self._sorted

    def _prefixes_of(self, wanted: str) -> Iterator[str]:
        """Every held head that starts ``wanted`` (itself included)."""
        import bisect

        heads = self._heads()
        rest = wanted
        while heads:
            at = bisect.bisect_right(heads, rest)
            if at == 0:
                return
            found = heads[at - 1]
            if rest.startswith(found):
                yield found
                if not found:
                    return
                rest = found[:-1]
                continue
            # The greatest head <= rest is not a prefix of it: none between
            # it and rest is, so continue from their common prefix.
            common = 0
            for x, y in zip(found, rest, strict=False):
                if x != y:
                    break
                common += 1
            rest = rest[:common]

    def _starting_with(self, wanted: str) -> Iterator[str]:
        import bisect

        heads = self._heads()
        at = bisect.bisect_left(heads, wanted)
        while at < len(heads) and heads[at].startswith(wanted):
            yield heads[at]
            at += 1

    def candidates(self, pattern: str) -> list[T]:
        """The items whose pattern may overlap ``pattern``, each once."""
        wanted = head(pattern)
        hits: list[T] = []
        for found in self._prefixes_of(wanted):
            hits += self.by_head[found]
        for found in self._starting_with(wanted):
            if found != wanted:
                hits += self.by_head[found]
        return hits

    def covering_candidates(self, path: str) -> list[T]:
        """The items whose pattern may cover the concrete ``path``."""
        hits: list[T] = []
        for found in self._prefixes_of(path.casefold()):
            hits += self.by_head[found]
        return hits


# --- paths git would refuse to check out ------------------------------------------

# Code points HFS+ ignores when it compares names, so ".g\u200cit" *is* ".git"
# there (git's is_hfs_dotgit skips the same ones).
HFS_IGNORABLE = frozenset(
    [chr(c) for c in (*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070))]
    + ["\ufeff"]
)
# Files git treats specially, refused as symbolic links, with the 8.3 short
# names NTFS also gives them (git's is_ntfs_dotgitmodules and friends): the
# first six letters or a fixed hashed prefix, then "~" and a digit.
DOTGIT_FILES = {
    ".gitmodules": ("gitmod", "gi7eba"),
    ".gitattributes": ("gitatt", "gi7d29"),
    ".gitignore": ("gitign", "gi250a"),
    ".mailmap": ("mailma", "maba30"),
}


def _is_short_name(name: str, prefixes: tuple[str, ...]) -> bool:
    return len(name) == 8 and name[:6] in prefixes and name[6] == "~" and name[7] in "123456789"


SYMLINK_MODE = "120000"


def _dotgit_spellings(name: str) -> set[str]:
    """What ``name`` is, compared the ways case-insensitive, HFS+ and NTFS
    file systems compare it (git applies all three, whatever the platform)."""
    hfs = "".join(c for c in name if c not in HFS_IGNORABLE).casefold()
    # NTFS: alternate data streams (".git::$INDEX_ALLOCATION") and trailing
    # spaces and periods name the same file.
    ntfs = name.split(":", 1)[0].rstrip(" .").casefold()
    return {name.casefold(), hfs, ntfs}


def checkout_refusal(path: str, mode: str = "100644") -> str | None:
    """Why git would refuse to check ``path`` out (its ``verify_path`` with
    ``core.protectHFS`` and ``core.protectNTFS`` on), or None when it is safe.

    This is what stands between a peer's tree and the git dir: a component
    that is ``.git`` in any spelling, ``..`` or empty, or a path that is not
    repo-relative. Backslashes are separators on NTFS, so they split too.
    """
    if not path or path.startswith("/"):
        return "it is not a relative path"
    if "\0" in path:
        return "it contains a NUL byte"
    components = path.split("/")
    for part in components:
        for piece in part.split("\\"):
            if piece == "":
                return "it has an empty component"
            if piece in (".", ".."):
                return f"it has a {piece!r} component"
            spellings = _dotgit_spellings(piece)
            if ".git" in spellings or "git~1" in spellings:
                if piece == ".git":
                    return "it is inside a .git directory"
                return f"{piece!r} is another spelling of .git"
    if mode == SYMLINK_MODE:
        last = _dotgit_spellings(components[-1].split("\\")[-1])
        for special, short_names in DOTGIT_FILES.items():
            if special in last or any(_is_short_name(n, short_names) for n in last):
                return f"a symbolic link named {special} (in some spelling) is refused by git"
    return None
