"""The write targets of a shell command, read before it runs: best effort.

An agent's shell tool can write anywhere, in ways no reader can follow, so
this reads what a command says on its face and the commit, push and server
guards stay the backstop. It reads:

- the shell's grammar: lists (``;``, ``&&``, ``||``, ``&``, newlines), pipes,
  subshells ``( … )`` and groups ``{ …; }``, ``if/then/elif/else``,
  ``while/until/for … do … done``, ``case``, ``!``, ``$( … )``, backticks and
  ``<( … )`` (the inner command is read too), here-documents (their
  ``$( … )`` too), ``bash -c``/``sh -c``/``zsh -c`` strings and a here-document
  or here-string fed to a shell, each command in its own directory (``cd``,
  ``pushd``; a ``cd`` in a subshell, a pipe element or a background job does
  not leak), prefixes (``VAR=1``, ``env``, ``sudo``, ``doas``, ``command``,
  ``builtin``, ``nohup``, ``time``, ``exec``, ``nice``, ``timeout``,
  ``stdbuf``, ``xargs`` with its fixed arguments, ``busybox``/``toybox``,
  ``find -exec/-execdir/-ok``), quoting (``'…'``, ``"…"``, ``$'…'`` decoded
  as bash does, ``\\``), brace expansion, ``~`` and
  ``~/``, globs as the shell expands them (an unmatched glob stays literal);
- targets: redirections (``>``, ``>>``, ``>|``, ``N>``, ``&>``, ``&>>``,
  ``<>``, ``>&FILE``; never ``/dev/*``), ``tee``, ``sed -i``, ``perl -i``,
  ``cp``, ``mv`` (both sides), ``ln``, ``rm``, ``rmdir``, ``touch``,
  ``truncate``, ``dd of=``, ``install``, ``chmod``/``chown``/``chgrp``,
  ``patch`` and ``git apply``/``git am`` (the paths in the patch's headers),
  ``find -delete``/``-fprint``, ``curl -o``, ``wget -O``, ``sort -o``,
  ``shred``, ``rsync``, editors' file operands, ``tar``/``unzip``/``cpio``
  (extracting: the directory as a tree), PowerShell's write cmdlets, and
  the git commands
  that change the work tree, judged by what git would change (see
  :func:`_git`);
- interpreters (``python -c``, ``node -e``, ``ruby -e``, ``perl -e``, or their
  code in a here-document): every string literal naming an existing path,
  or naming one after an open mode (``'>f'``).

It misses what only running could tell: variables and ``$(…)`` used as
words, scripts and programs (``python x.py``, ``make``, ``npm``), ``eval``,
aliases and shell functions, paths an interpreter builds, what ``xargs`` or
a pipe feeds in, the names inside an archive. A word it cannot know is left
out; a git command it cannot judge, and input too deep or too large to read,
give the top of the work tree as a tree (refusing broadly rather than
missing).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Literal, TypeAlias

    _Tok: TypeAlias = "_Word | _Redir | str"
    Handler: TypeAlias = "Callable[[_Reader, list[Arg], str, _Input, int], str | None]"


class Write(NamedTuple):
    """One path a command may write."""

    path: str  # absolute, normalised (os.path.normpath), not symlink-resolved
    tree: bool  # True: everything under path may be written


# Bounds on the work one command may cost (hostile input must stay cheap).
MAX_DEPTH = 12  # nested $( ), backticks, bash -c
MAX_TOKENS = 60_000
MAX_PATH = 4096  # longer words name no file (PATH_MAX); not expanded
MAX_EXPANSIONS = 512  # brace alternatives of one word
MAX_GLOBS = 64
MAX_GIT = 12  # git processes per command
GIT_TIMEOUT = 2.0  # seconds, for one git process
GIT_BUDGET = 4.0  # seconds, for all of one command's
MAX_PATCH = 8 << 20  # bytes of a patch file read
MAX_LITERALS = 2000

QUOTED = "\0"  # in a word's text: the next character was quoted
UNKNOWN = "\x01"  # in a word's text: a part only running could tell
UNDECODED = "\x03"  # in a word's text: a $'…' bash decodes to what no path holds
SPECIAL = re.compile(r"[{}\[\]*?,~=\\]")
PLAIN_RUN = re.compile(r"[^ \t\n'\"\\$`;&|<>()]+")
IN_DQ = re.compile(r"[\\\"$`]")
IN_HEREDOC = re.compile(r"[\\$`]")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
OPEN_MODE = re.compile(r"\s*(\+?>>|\+?>|\+?<)\s*([^\s|&>]\S*)?\s*$")
MAGIC = re.compile(r"(?<!\0)[*?\[]")
FOUND = "\x02{}"  # find's {} (never in a real argument: \x02 is dropped from the input)

RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "esac"}
)
LIST_OPS = frozenset({";", "&&", "||", "\n", ";;", ";&", ";;&"})
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh"})
PYTHON = re.compile(r"python(\d+(\.\d+)?)?$")


class _Word:
    __slots__ = ("q", "subs", "text")

    def __init__(self) -> None:
        self.text = ""  # with QUOTED/UNKNOWN marks
        self.q = False  # some of it was quoted
        self.subs: list[list[_Tok]] = []  # command substitutions in it


class _Redir:
    __slots__ = ("body", "op", "quoted", "subs", "target")

    def __init__(self, op: str) -> None:
        self.op = op
        self.target: _Word | None = None
        self.body: str | None = None  # a here-document's
        self.quoted = False
        self.subs: list[list[_Tok]] = []


class _TooMuch(Exception):
    """The input is beyond the bounds: answer broadly."""


class Arg:
    """One argument after expansion (a plain class: a NamedTuple costs import time)."""

    __slots__ = ("pattern", "value")

    def __init__(self, value: str | None, pattern: str | None = None) -> None:
        self.value = value  # None: only running could tell
        self.pattern = pattern  # the glob it came from


class _Input:
    """What a command's standard input is, when it can be known."""

    __slots__ = ("path", "text")

    def __init__(self, text: str | None = None, path: str | None = None) -> None:
        self.text = text  # a here-document or here-string
        self.path = path  # `< FILE`


def _mark(text: str) -> str:
    return SPECIAL.sub(lambda m: QUOTED + m.group(0), text)


def _value(text: str) -> str:
    return text.replace(QUOTED, "")


class _Lexer:
    """Bash's words and operators, with the inner commands of ``$( )``,
    backticks and process substitutions lexed in place."""

    def __init__(self) -> None:
        self.tokens = 0

    def count(self) -> None:
        self.tokens += 1
        if self.tokens > MAX_TOKENS:
            raise _TooMuch

    def lex(self, s: str, i: int, depth: int, closer: bool) -> tuple[list[_Tok], int]:
        """Tokens from ``s[i:]``; with ``closer``, up to the ``)`` closing a
        ``$(`` (returns the index after it)."""
        if depth > MAX_DEPTH:
            raise _TooMuch
        toks: list[_Tok] = []
        word: _Word | None = None
        pieces: list[str] = []
        want_target: _Redir | None = None
        heredocs: list[tuple[_Redir, str, bool]] = []
        want_delim: _Redir | None = None
        parens = 0
        n = len(s)

        def end_word() -> None:
            nonlocal word, want_target, want_delim
            if word is None:
                return
            word.text = "".join(pieces)
            pieces.clear()
            self.count()
            if want_delim is not None:
                delim = word.text
                quoted = word.q
                heredocs.append((want_delim, _value(delim).replace(UNKNOWN, ""), quoted))
                want_delim.quoted = quoted
                want_delim = None
            elif want_target is not None:
                want_target.target = word
                want_target = None
            else:
                toks.append(word)
            word = None

        def start() -> _Word:
            nonlocal word
            if word is None:
                word = _Word()
            return word

        while i < n:
            c = s[i]
            if c in " \t":
                end_word()
                i += 1
            elif c == "\n":
                end_word()
                toks.append("\n")
                self.count()
                i += 1
                for redir, delim, quoted in heredocs:
                    i = self.heredoc(s, i, redir, delim, quoted, depth)
                heredocs.clear()
            elif c == "#" and word is None:
                j = s.find("\n", i)
                i = n if j < 0 else j
            elif c == "\\":
                if i + 1 < n and s[i + 1] == "\n":
                    i += 2
                    continue
                start().q = True
                if i + 1 < n:
                    pieces.append(_mark(s[i + 1]) if SPECIAL.match(s[i + 1]) else s[i + 1])
                    if s[i + 1] in "\\":
                        pieces[-1] = QUOTED + "\\"
                i += 2
            elif c == "'":
                j = s.find("'", i + 1)
                start().q = True
                if j < 0:  # unbalanced: the quote is a character, the rest is read
                    pieces.append("'")
                    i += 1
                else:
                    pieces.append(_mark(s[i + 1 : j]))
                    i = j + 1
            elif c == '"':
                w = start()
                w.q = True
                got = self.quoted(s, i + 1, depth, '"')
                if got is None:
                    pieces.append('"')
                    i += 1
                else:
                    text, subs, i = got
                    pieces.append(text)
                    w.subs += subs
            elif c == "$":
                w = start()
                w.q = w.q or s.startswith(("$'", '$"'), i)
                text, subs, i = self.dollar(s, i, depth)
                pieces.append(text)
                w.subs += subs
            elif c == "`":
                w = start()
                text, subs, i = self.backtick(s, i, depth)
                pieces.append(text)
                w.subs += subs
            elif c in "<>" and i + 1 < n and s[i + 1] == "(" and word is None:
                inner, i = self.lex(s, i + 2, depth + 1, True)
                w = start()
                pieces.append(UNKNOWN)
                w.subs.append(inner)
            elif c in "<>" or (c == "&" and i + 1 < n and s[i + 1] == ">"):
                if word is not None and pieces and "".join(pieces).isdigit():
                    word = None  # `2>f`: the digits are the redirection's
                    pieces.clear()
                end_word()
                op = next(o for o in _REDIR_OPS if s.startswith(o, i))
                i += len(op)
                redir = _Redir(op)
                toks.append(redir)
                self.count()
                if op in ("<<", "<<-"):
                    want_delim = redir
                else:
                    want_target = redir
            elif c in ";&|()":
                end_word()
                if c == "(" and s.startswith("((", i):  # arithmetic: nothing to read
                    i = _skip_balanced(s, i)
                    continue
                if c == "(":
                    parens += 1
                elif c == ")":
                    if closer and parens == 0:
                        end_word()
                        return toks, i + 1
                    parens -= 1
                op = next(o for o in _LIST_OPS if s.startswith(o, i))
                toks.append(op)
                self.count()
                i += len(op)
            else:
                m = PLAIN_RUN.match(s, i)
                assert m is not None
                start()
                pieces.append(m.group(0))
                i = m.end()
        end_word()
        return toks, n

    def heredoc(self, s: str, i: int, redir: _Redir, delim: str, quoted: bool, depth: int) -> int:
        strip = redir.op == "<<-"
        n = len(s)
        j = i
        after = n  # no delimiter line: the rest is the body, as bash reads it
        body = s[i:]
        while j < n:
            k = s.find("\n", j)
            line = s[j : n if k < 0 else k]
            if (line.lstrip("\t") if strip else line) == delim:
                body = s[i:j]
                after = n if k < 0 else k + 1
                break
            if k < 0:
                break
            j = k + 1
        redir.body = body
        if not quoted and body:  # its $( ) and backticks run
            got = self.quoted(body, 0, depth, None)
            if got is not None:
                redir.subs = got[1]
        return after

    def quoted(
        self, s: str, i: int, depth: int, end: str | None
    ) -> tuple[str, list[list[_Tok]], int] | None:
        """A double-quoted string (``end='"'``) or a here-document body
        (``end=None``): its text, substitutions and the index after it;
        None when the closing quote is missing."""
        out: list[str] = []
        subs: list[list[_Tok]] = []
        n = len(s)
        stops = IN_DQ if end else IN_HEREDOC
        while True:
            m = stops.search(s, i)
            j = n if m is None else m.start()
            out.append(_mark(s[i:j]))
            if m is None:
                return None if end else ("".join(out), subs, n)
            c = s[j]
            if c == '"':
                return "".join(out), subs, j + 1
            if c == "\\":
                nxt = s[j + 1 : j + 2]
                if nxt == "\n":
                    i = j + 2
                elif nxt in ("$", "`", '"', "\\"):
                    out.append(_mark(nxt))
                    i = j + 2
                else:
                    out.append(QUOTED + "\\")
                    i = j + 1
            elif c == "$":
                text, more, i = self.dollar(s, j, depth)
                out.append(text)
                subs += more
            else:
                text, more, i = self.backtick(s, j, depth)
                out.append(text)
                subs += more

    def dollar(self, s: str, i: int, depth: int) -> tuple[str, list[list[_Tok]], int]:
        nxt = s[i + 1 : i + 2]
        if nxt == "(":
            if s.startswith("((", i + 1):
                return UNKNOWN, [], _skip_balanced(s, i + 2)
            inner, end = self.lex(s, i + 2, depth + 1, True)
            return UNKNOWN, [inner], end
        if nxt == "{":
            return UNKNOWN, [], _skip_balanced(s, i + 1, "{", "}")
        if nxt == "'":
            text, end = _ansi_c(s, i + 2)
            return _mark(text), [], end
        if nxt == '"':
            got = self.quoted(s, i + 2, depth, '"')
            if got is None:
                return "$", [], i + 1
            return got
        m = NAME.match(s, i + 1)
        if m:
            return UNKNOWN, [], m.end()
        if nxt and nxt in "@*#?$!-0123456789":
            return UNKNOWN, [], i + 2
        return "$", [], i + 1

    def backtick(self, s: str, i: int, depth: int) -> tuple[str, list[list[_Tok]], int]:
        j = i + 1
        n = len(s)
        while j < n and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        if j >= n:
            return "`", [], i + 1  # unbalanced: a character
        inner = re.sub(r"\\([\\`$])", r"\1", s[i + 1 : j])
        toks, _ = self.lex(inner, 0, depth + 1, False)
        return UNKNOWN, [toks], j + 1


_PREFIX_VALUED = {
    "builtin": "",
    "nohup": "",
    "exec": "a",
    "time": "fo",
    "stdbuf": "ioe",
    "ionice": "cnpt",
}
_REDIR_OPS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">")
_LIST_OPS = (";;&", ";;", ";&", "&&", "||", "|&", "|", "&", ";", "(", ")")
_ANSI = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_NUMBER = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}  # base, most digits
_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")


def _ansi_c(s: str, i: int) -> tuple[str, int]:
    """A ``$'…'`` string from after its quote, decoded as bash's ansicstr does
    (its text, the index after the closing quote). A part that cannot be
    decoded safely (a NUL, which ends the word in bash; bytes that are not
    UTF-8; a code point no file name holds) makes it :data:`UNDECODED`."""
    out: list[str] = []
    raw = bytearray()  # \xHH and \NNN give bytes: a UTF-8 sequence may span several
    bad = False
    n = len(s)

    def flush() -> None:
        nonlocal bad
        if raw:
            try:
                out.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                bad = True
            raw.clear()

    while i < n:
        c = s[i]
        if c == "'":
            i += 1
            break
        if c != "\\" or i + 1 >= n:
            flush()
            out.append(c)
            i += 1
            continue
        e = s[i + 1]
        i += 2
        if e in _ANSI_NUMBER or e in _OCTAL:
            base, most = _ANSI_NUMBER.get(e, (8, 3))
            digits = _OCTAL if base == 8 else _HEX
            j = i if base == 16 else i - 1  # an octal escape's first digit is e
            k = j
            while k < n and k - j < most and s[k] in digits:
                k += 1
            if k == j:  # `\x` with no digit: bash keeps it as written
                flush()
                out.append("\\" + e)
                continue
            value = int(s[j:k], base)
            i = k
            if e in "xX" or base == 8:
                raw.append(value & 0xFF)
                bad = bad or value & 0xFF == 0
                continue
            flush()
            if value == 0 or value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                bad = True
            else:
                out.append(chr(value))
            continue
        flush()
        if e == "c":
            if i >= n:
                out.append("\\c")
                continue
            x = s[i]
            i += 1
            value = 0x7F if x == "?" else ord(x.upper()) & 0x1F
            bad = bad or value == 0
            out.append(chr(value))
        else:
            out.append(_ANSI.get(e, "\\" + e))
    flush()
    text = "".join(out)
    if bad or any(m in text for m in (QUOTED, UNKNOWN, FOUND[0], UNDECODED)):
        return UNDECODED, i
    return text, i


def _skip_balanced(s: str, i: int, open_: str = "(", close: str = ")") -> int:
    """The index after the ``close`` matching ``s[i] == open_`` (iterative)."""
    depth = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _braces(text: str, budget: list[int]) -> list[str]:
    """Bash's brace expansion of one word's text (quoted braces are marked)."""
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == QUOTED:
            i += 2
            continue
        if c == "{":
            depth = 0
            commas: list[int] = []
            j = i
            while j < n:
                d = text[j]
                if d == QUOTED:
                    j += 2
                    continue
                if d == "{":
                    depth += 1
                elif d == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif d == "," and depth == 1:
                    commas.append(j)
                j += 1
            if j >= n:
                return [text]
            pre, body, post = text[:i], text[i + 1 : j], text[j + 1 :]
            if commas:
                cuts = [i, *commas, j]
                parts = [text[a + 1 : b] for a, b in zip(cuts, cuts[1:], strict=False)]
            else:
                seq = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])", body)
                if seq is None:
                    i += 1
                    continue
                parts = _sequence(seq.group(1), seq.group(2))
            out: list[str] = []
            for part in parts:
                budget[0] -= 1
                if budget[0] < 0:
                    return [text]
                out += _braces(pre + part + post, budget)
            return out
        i += 1
    return [text]


def _sequence(a: str, b: str) -> list[str]:
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
        lo, hi = int(a), int(b)
        if abs(hi - lo) > MAX_EXPANSIONS:
            return [f"{{{a}..{b}}}"]
        step = 1 if hi >= lo else -1
        return [str(k) for k in range(lo, hi + step, step)]
    if a.isalpha() and b.isalpha():
        step = 1 if ord(b) >= ord(a) else -1
        return [chr(k) for k in range(ord(a), ord(b) + step, step)]
    return [f"{{{a}..{b}}}"]


def _safe(test: Callable[[str], bool], path: str) -> bool:
    try:
        return test(path)
    except (OSError, ValueError):  # a NUL, a lone surrogate, a name too long
        return False


def _isdir(path: str) -> bool:
    return _safe(os.path.isdir, path)


def _exists(path: str) -> bool:
    return _safe(os.path.lexists, path)


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_PATCH).decode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return None


def _operands(args: list[Arg], valued: str = "", long_valued: Iterable[str] = ()) -> list[Arg]:
    """The arguments that are not options: ``valued`` short options and
    ``long_valued`` long ones take a value; ``--`` ends the options."""
    found: list[Arg] = []
    longs = frozenset(long_valued)
    k = 0
    options = True
    while k < len(args):
        a = args[k].value
        k += 1
        if not options or a is None or a == "-" or not a.startswith("-"):
            found.append(args[k - 1])
            continue
        if a == "--":
            options = False
        elif a.startswith("--"):
            if a in longs:
                k += 1
        else:
            for pos, letter in enumerate(a[1:], 1):
                if letter in valued:
                    if pos == len(a) - 1:
                        k += 1
                    break
    return found


def _option(args: list[Arg], short: str, long: str = "") -> str | Literal[False] | None:
    """The value of option ``-X VALUE``/``-XVALUE``/``--long=VALUE``/``--long VALUE``
    (False when absent, None when unknowable)."""
    for k, arg in enumerate(args):
        a = arg.value
        if a is None or not a.startswith("-"):
            continue
        if a == "--":
            break
        if long and (a == long or a.startswith(long + "=")):
            if "=" in a:
                return a.split("=", 1)[1]
            return args[k + 1].value if k + 1 < len(args) else None
        if short and not a.startswith("--") and short in a[1:]:
            rest = a[a.index(short, 1) + 1 :]
            if rest:
                return rest
            return args[k + 1].value if k + 1 < len(args) else None
    return False


def _flag(args: list[Arg], letters: str, longs: Iterable[str] = ()) -> bool:
    names = frozenset(longs)
    for arg in args:
        a = arg.value
        if a is None or not a.startswith("-") or a == "-":
            continue
        if a == "--":
            return False
        if a.startswith("--"):
            if a.split("=", 1)[0] in names:
                return True
        elif any(x in a[1:] for x in letters):
            return True
    return False


STRING_LITERAL = (
    r"'''(.*?)'''|\"\"\"(.*?)\"\"\"|'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"|`([^`]*)`",
    re.S,
)  # compiled when first used: most commands need neither
PATCH_HEADER = (
    r"^(?:diff --git (\S+) (\S+)|(?:---|\+\+\+|\*\*\*) (\S[^\t\n]*)"
    r"|(?:rename|copy) (?:from|to) (.+)|Index: (.+))$",
    re.M,
)


def _patch_paths(text: str) -> list[tuple[str, bool]]:
    """The file names a patch's headers give, as written, each with whether
    it carries a prefix (``a/``; git's rename and copy lines do not, and git
    strips one component less from them: apply.c, gitdiff_renamesrc)."""
    found: list[tuple[str, bool]] = []
    for m in re.compile(*PATCH_HEADER).finditer(text):
        for group, name in enumerate(m.groups()):
            if name is None:
                continue
            name = name.strip()
            if name.startswith('"') and name.endswith('"') and len(name) > 1:
                name = name[1:-1].encode("latin-1", "replace").decode("unicode_escape", "replace")
            if name and name != "/dev/null" and set(name) - {"*"} and not name.startswith("*"):
                found.append((name.split("\t")[0], group < 3))
        if len(found) > 10_000:
            break
    return list(dict.fromkeys(found))


def _strip(path: str, count: int) -> str | None:
    parts = path.split("/")
    return "/".join(parts[count:]) if count < len(parts) else None


class _Reader:
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.found: list[Write] = []
        self.lexer = _Lexer()
        self.globs = 0
        self.gits = 0
        self.git_until = 0.0  # the monotonic time git's budget ends
        self.tops: dict[str, str | None] = {}
        self.on_found: Callable[[], None] | None = None  # inside find -exec

    # -- results ---------------------------------------------------------
    def add(self, here: str, path: str | None, tree: bool = False) -> None:
        if path is None or path == "" or UNKNOWN in path or len(path) > MAX_PATH:
            return
        if UNDECODED in path:  # bash writes somewhere this cannot name: answer broadly
            self.broad(here)
            return
        full = os.path.normpath(os.path.join(here, path))
        if FOUND in full:  # a path find gives: its start directories stand for it
            if self.on_found is not None:
                self.on_found()
            return
        if full == "/dev" or full.startswith("/dev/"):
            return
        self.found.append(Write(full, tree))

    def broad(self, here: str) -> None:
        """The top of the work tree (or ``here``) as a tree: nothing narrower is known."""
        if FOUND in here:  # find -execdir: the start directories are broad enough
            self.add(here, ".")
            return
        top = self.top(here)
        self.found.append(Write(top if top is not None else os.path.normpath(here), True))

    # -- reading ---------------------------------------------------------
    def read(self, command: str, here: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise _TooMuch
        command = command.replace("\0", "").replace(UNKNOWN, "").replace(UNDECODED, "")
        if depth == 0:
            command = command.replace(FOUND[0], "")
        toks, _ = self.lexer.lex(command, 0, depth, False)
        self.run(toks, here, depth)

    def run(self, toks: list[_Tok], here: str, depth: int) -> None:
        saved: list[str] = []
        words: list[_Word] = []
        redirs: list[_Redir] = []
        prev = ""
        mode = ""
        for tok in toks:
            if isinstance(tok, _Word):
                text = tok.text
                if mode:
                    self.subs(tok, here, depth)
                    if mode == "for" and text == "do":
                        mode = ""
                    elif mode == "case" and text == "in":
                        mode = "pattern"
                    elif (
                        (mode == "pattern" and text == "esac")
                        or (mode == "test" and text == "]]")
                        or mode == "function"
                    ):
                        mode = ""
                    continue
                if not words and not redirs:
                    if text in RESERVED and not tok.q:
                        continue
                    if text in ("for", "select"):
                        mode = "for"
                        continue
                    if text in ("case", "function", "coproc"):
                        mode = "case" if text == "case" else "function"
                        if text == "coproc":
                            mode = ""
                        continue
                    if text == "[[":
                        mode = "test"
                        continue
                words.append(tok)
            elif isinstance(tok, _Redir):
                if mode:
                    continue
                redirs.append(tok)
            else:
                if mode == "pattern" and tok == ")":
                    mode = ""
                    continue
                if mode in ("pattern", "test", "case") or (mode == "for" and tok not in ";\n"):
                    continue
                if mode == "for":
                    mode = "for"  # `for x in …;` then `do`
                    continue
                if words or redirs:
                    moved = self.simple(words, redirs, here, depth)
                    if (
                        moved is not None
                        and tok not in ("|", "|&", "&")
                        and prev not in ("|", "|&")
                    ):
                        here = moved
                    words, redirs = [], []
                if tok in (";;", ";&", ";;&"):
                    mode = "pattern"
                elif tok == "(":
                    saved.append(here)
                elif tok == ")" and saved:
                    here = saved.pop()
                prev = tok
        if words or redirs:
            self.simple(words, redirs, here, depth)

    def subs(self, word: _Word, here: str, depth: int) -> None:
        for inner in word.subs:
            self.run(inner, here, depth + 1)

    def simple(self, words: list[_Word], redirs: list[_Redir], here: str, depth: int) -> str | None:
        """Read one simple command; the directory it moves to, if a ``cd``."""
        for word in words:
            self.subs(word, here, depth)
        stdin = _Input()
        for redir in redirs:
            for inner in redir.subs:
                self.run(inner, here, depth + 1)
            if redir.target is not None:
                self.subs(redir.target, here, depth)
            op = redir.op
            if op in ("<<", "<<-"):
                stdin = _Input(text=redir.body)
                continue
            if redir.target is None:
                continue
            targets = self.expand(redir.target, here)
            if op == "<<<":
                stdin = _Input(text=targets[0].value if len(targets) == 1 else None)
            elif op == "<":
                stdin = _Input(path=targets[0].value if len(targets) == 1 else None)
            elif op in WRITE_REDIRECTS or op == ">&":
                for arg in targets:
                    if op == ">&" and (
                        arg.value is None or arg.value.isdigit() or arg.value == "-"
                    ):
                        continue
                    self.add(here, arg.value)
        k = 0
        while k < len(words) and ASSIGNMENT.match(words[k].text):
            k += 1
        args: list[Arg] = []
        for word in words[k:]:
            args += self.expand(word, here)
        return self.command(args, here, stdin, depth)

    def expand(self, word: _Word, here: str) -> list[Arg]:
        text = word.text
        if len(text) > MAX_PATH:
            return [Arg(None if UNKNOWN in text else _value(text))]
        texts = _braces(text, [MAX_EXPANSIONS]) if "{" in text and len(text) <= 1024 else [text]
        out: list[Arg] = []
        for t in texts:
            if UNKNOWN in t:
                out.append(Arg(None))
                continue
            if t.startswith("~"):
                head, sep, rest = t.partition("/")
                home = os.environ.get("HOME")
                if head != "~" or not home:
                    out.append(Arg(None))  # ~user: only the shell knows
                    continue
                t = home + sep + rest
            if MAGIC.search(t):
                pattern = re.sub(r"\0(.)", lambda m: f"[{m.group(1)}]", t, flags=re.S)
                matches = self.glob(pattern, here)
                if matches:
                    out += [Arg(m, pattern) for m in matches]
                    continue
            out.append(Arg(_value(t)))
        return out

    def glob(self, pattern: str, here: str) -> list[str]:
        self.globs += 1
        if self.globs > MAX_GLOBS:
            raise _TooMuch
        import glob

        try:
            return sorted(glob.glob(pattern, root_dir=here))
        except (OSError, ValueError, re.error):
            return []

    # -- commands ----------------------------------------------------------
    def command(self, args: list[Arg], here: str, stdin: _Input, depth: int) -> str | None:
        while args:
            name = args[0].value
            if name is None:
                return None
            base = os.path.basename(name)
            rest = args[1:]
            if base in ("sudo", "doas"):
                chdir = _option(rest, "D", "--chdir")
                if isinstance(chdir, str):
                    here = os.path.join(here, chdir)
                args = _tail(rest, "ugCDhprtUT", ("--user", "--group", "--chdir"))
            elif base == "env":
                chdir = _option(rest, "C", "--chdir")
                if isinstance(chdir, str):
                    here = os.path.join(here, chdir)
                split = _option(rest, "S", "--split-string")
                if isinstance(split, str):
                    self.read(split, here, depth + 1)
                    return None
                args = _tail(rest, "uCS", ("--unset", "--chdir"))
                while args and args[0].value is not None and ASSIGNMENT.match(args[0].value):
                    args = args[1:]
            elif base == "command":
                if _flag(rest[:1], "vV"):
                    return None
                args = _tail(rest, "")
            elif base in _PREFIX_VALUED:
                args = _tail(rest, _PREFIX_VALUED[base])
            elif base == "nice":
                args = _tail(rest, "n", ("--adjustment",))
            elif base == "timeout":
                args = _tail(rest, "sk", ("--signal", "--kill-after"))[1:]
            elif base in ("busybox", "toybox"):
                args = rest  # a multi-call binary: its first argument is the command
            elif base == "xargs":
                self.xargs(rest, here, stdin, depth)
                return None
            else:
                break
        if not args or args[0].value is None:
            return None
        name = os.path.basename(args[0].value)
        handler = _COMMANDS.get(name)
        if name in _PS_ALIASES_POSIX and any(
            (a.value or "").lower() in _PS_NAMED for a in args[1:]
        ):
            handler = None  # PowerShell's alias, by its parameters: not the POSIX tool
        if handler is None:
            cmdlet = name.lower()
            cmdlet = _PS_ALIASES_POSIX.get(cmdlet, cmdlet)
            cmdlet = _PS_ALIASES.get(cmdlet, cmdlet)
            if cmdlet in _PS_WRITES:
                handler = _powershell(cmdlet)
        if handler is not None:
            return handler(self, args[1:], here, stdin, depth)
        if PYTHON.match(name):
            self.python(args[1:], here, stdin)
        return None

    def xargs(self, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
        replace = _option(args, "I", "--replace")
        if replace is False and _flag(args, "i"):
            replace = "{}"
        cmd = _tail(args, "aEdILnPsS", ("--arg-file", "--delimiter", "--max-args", "--eof"))
        if not cmd:
            return
        if isinstance(replace, str) and replace:
            cmd = [Arg(None) if a.value is None or replace in a.value else a for a in cmd]
        elif replace is None:
            cmd = [cmd[0], *(Arg(None) for _ in cmd[1:])]
        else:
            cmd = [*cmd, Arg(None)]  # what xargs feeds in comes last
        self.command(cmd, here, _Input(), depth)

    def python(self, args: list[Arg], here: str, stdin: _Input) -> None:
        k = 0
        while k < len(args):
            a = args[k].value
            k += 1
            if a is None or not a.startswith("-") or a in ("-", "-m", "--"):
                if a == "-" and stdin.text is not None:
                    self.literals(stdin.text, here)
                return
            if "c" in a[1:] and not a.startswith("--"):
                rest = a[a.index("c") + 1 :]
                code = rest or (args[k].value if k < len(args) else None)
                if code is not None:
                    self.literals(code, here)
                return
            if a in ("-X", "-W"):
                k += 1
        if stdin.text is not None:
            self.literals(stdin.text, here)

    def literals(self, code: str, here: str) -> None:
        """Every string literal of an interpreter's code that names an
        existing path (a directory other than ``here`` or above: a tree)."""
        for count, m in enumerate(re.compile(*STRING_LITERAL).finditer(code)):
            if count > MAX_LITERALS:
                break
            text = next(g for g in m.groups() if g is not None)
            if not text or len(text) > MAX_PATH or "\n" in text:
                continue
            text = text.replace("\\\\", "\\")
            full = os.path.normpath(os.path.join(here, text))
            if not _exists(full):
                mode = OPEN_MODE.match(text)  # perl's and ruby's `open F, '>path'`
                if mode is None or not mode.group(2):
                    continue
                text = mode.group(2)
                full = os.path.normpath(os.path.join(here, text))
                if mode.group(1) == "<" and not _exists(full):
                    continue  # read, and no such file: not a path of this tree
                if not _exists(full):
                    self.add(here, text)  # a write named plainly: a new file
                    continue
            if _isdir(full):
                if (
                    os.path.normpath(here).startswith(full.rstrip("/") + "/")
                    or full == os.path.normpath(here)
                    or full == "/"
                ):
                    continue
                self.add(here, text, True)
            else:
                self.add(here, text)

    # -- git -------------------------------------------------------------
    def git_out(self, here: str, args: list[str], free: bool = False) -> str | None:
        """git's output (run in ``here``), None on any failure."""
        import time

        self.gits += 0 if free else 1
        now = time.monotonic()
        if not self.git_until:
            self.git_until = now + GIT_BUDGET
        if self.gits > MAX_GIT or now >= self.git_until:
            return None
        import subprocess

        env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
        try:
            done = subprocess.run(
                ["git", "-c", "core.quotepath=off", *args],
                cwd=here,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=min(GIT_TIMEOUT, self.git_until - now),
                check=False,
            )
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        return done.stdout.decode("utf-8", "surrogateescape")

    def top(self, here: str) -> str | None:
        where = os.path.normpath(here)
        while not _isdir(where) and where != os.path.dirname(where):
            where = os.path.dirname(where)
        if where not in self.tops:
            out = self.git_out(where, ["rev-parse", "--show-toplevel"], free=True)
            self.tops[where] = out.rstrip("\n") if out else None
        return self.tops[where]

    def git_paths(
        self, here: str, args: list[str], relative_to_top: bool = True
    ) -> list[str] | None:
        """The NUL-separated paths a git command prints, made absolute."""
        out = self.git_out(here, args)
        top = self.top(here) if relative_to_top else here
        if out is None or top is None:
            return None
        return [os.path.join(top, p) for p in out.split("\0") if p]

    def changed(self, here: str, pathspecs: list[str], source: str | None = None) -> bool:
        """Add the tracked paths git would put back: modified or staged
        (``source``: differing from that tree), under ``pathspecs``."""
        spec = ["--", *pathspecs] if pathspecs else []
        if source is None:
            out = self.git_out(
                here, ["status", "--porcelain=v1", "-z", "--untracked-files=no", *spec]
            )
            top = self.top(here)
            if out is None or top is None:
                return False
            fields = out.split("\0")
            k = 0
            while k < len(fields):
                entry = fields[k]
                k += 1
                if len(entry) < 4:
                    continue
                self.add(top, entry[3:])
                if entry[0] in "RC":  # a rename's original follows
                    self.add(top, fields[k] if k < len(fields) else None)
                    k += 1
            return True
        paths = self.git_paths(here, ["diff", "--no-relative", "--name-only", "-z", source, *spec])
        if paths is None:
            return False
        for p in paths:
            self.add(here, p)
        return True

    def differs(self, here: str, a: str, b: str) -> bool:
        paths = self.git_paths(here, ["diff", "--no-relative", "--name-only", "-z", a, b, "--"])
        if paths is None:
            return False
        for p in paths:
            self.add(here, p)
        return True

    def pathspecs(self, here: str, args: list[Arg], source: str | None) -> None:
        """What restoring these pathspecs would change: a file is itself; a
        directory, a glob or a magic pathspec is judged by git."""
        judged: list[str] = []
        for arg in args:
            p = arg.value
            if p is None:
                continue
            full = os.path.join(here, p)
            plain = not p.startswith(":") and not MAGIC.search(p)
            # a file is itself; so is find -exec's {} (its starts stand for it)
            if FOUND in p or (plain and _exists(full) and not _isdir(full)):
                self.add(here, p)
            else:
                judged.append(p)
        if judged and not self.changed(here, judged, source):
            self.broad(here)

    def patch_text(self, text: str | None, here: str, strip: int | None, base: str) -> bool:
        if text is None:
            return False
        for name, prefixed in _patch_paths(text):
            if not prefixed:
                self.add(base, _strip(name, max((strip or 1) - 1, 0)))
                continue
            counts = [strip] if strip is not None else [0, 1]
            for count in counts:
                self.add(base, _strip(name, count))
            if strip is None:
                self.add(base, os.path.basename(name))
        return True


def _tail(args: list[Arg], valued: str, long_valued: Iterable[str] = ()) -> list[Arg]:
    """The arguments from the first operand on (a prefix command's command)."""
    longs = frozenset(long_valued)
    k = 0
    while k < len(args):
        a = args[k].value
        if a is None or not a.startswith("-") or a == "-":
            return args[k:]
        k += 1
        if a == "--":
            return args[k:]
        if a.startswith("--"):
            if a in longs:
                k += 1
        elif a[-1] in valued:
            k += 1
    return []


def _cd(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> str | None:
    operands = _operands(args)
    if not operands:
        return os.environ.get("HOME") or r.cwd
    where = operands[0].value
    if where is None or where == "-":
        return r.cwd  # unknowable: go on from where the command started
    return os.path.normpath(os.path.join(here, where))


def _shell(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    k = 0
    while k < len(args):
        a = args[k].value
        if a is None or not a.startswith(("-", "+")) or a in ("-", "--"):
            break
        k += 1
        if a[1:2] in ("o", "O") and len(a) == 2:
            k += 1
        elif "c" in a[1:] and not a.startswith("--"):
            code = args[k].value if k < len(args) else None
            if code is not None:
                r.read(code, here, depth + 1)
            return
    operands = args[k:]
    if (not operands or operands[0].value in ("-", "--")) and stdin.text is not None:
        r.read(stdin.text, here, depth + 1)


def _sed(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    suffix: str | Literal[False] = False  # False: not in place
    script = False
    files: list[Arg] = []
    k = 0
    options = True
    while k < len(args):
        a = args[k].value
        k += 1
        if not options or a is None or not a.startswith("-") or a == "-":
            files.append(args[k - 1])
            continue
        if a == "--":
            options = False
        elif a.startswith("--in-place"):
            suffix = a.partition("=")[2]
        elif a.startswith(("--expression", "--file")):
            script = True
            k += 0 if "=" in a else 1
        elif a.startswith("--line-length") and "=" not in a:
            k += 1
        elif not a.startswith("--"):
            for pos, letter in enumerate(a[1:], 1):
                if letter == "i":
                    suffix = a[pos + 1 :]
                    break
                if letter in "efl":
                    script = script or letter != "l"
                    if pos == len(a) - 1:
                        k += 1
                    break
    if suffix is False:
        return
    targets = files if script else files[1:]
    for arg in targets:
        r.add(here, arg.value)
        if suffix and arg.value is not None:
            r.add(here, _backup(arg.value, suffix))


def _backup(path: str, suffix: str) -> str:
    if "*" in suffix:
        return os.path.join(os.path.dirname(path), suffix.replace("*", os.path.basename(path)))
    return path + suffix


def _perl(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    suffix: str | Literal[False] = False
    code: list[str] = []
    files: list[Arg] = []
    k = 0
    options = True
    while k < len(args):
        a = args[k].value
        k += 1
        if not options or a is None or not a.startswith("-") or a == "-":
            files.append(args[k - 1])
            continue
        if a == "--":
            options = False
            continue
        for pos, letter in enumerate(a[1:], 1):
            rest = a[pos + 1 :]
            if letter == "i":
                suffix = rest
                break
            if letter in "eE":
                value = rest or (args[k].value if k < len(args) else None)
                if not rest:
                    k += 1
                if value is not None:
                    code.append(value)
                break
            if letter in "IMmxCdD0l":
                if letter in "IMm" and not rest:
                    k += 1
                break
    if not code and files:
        files = files[1:]  # the script
    if suffix is not False:
        for arg in files:
            r.add(here, arg.value)
            if suffix and arg.value is not None:
                r.add(here, _backup(arg.value, suffix))
    else:
        for text in code:
            r.literals(text, here)


def _code(option: str, long: str = "") -> Handler:
    def read(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
        for k, arg in enumerate(args):
            a = arg.value
            if a in (option, long, "-p", "--print") and k + 1 < len(args):
                code = args[k + 1].value
                if code is not None:
                    r.literals(code, here)
        given = any(a.value in (option, long, "-p", "--print") for a in args)
        if not given and stdin.text is not None and not _operands(args):
            r.literals(stdin.text, here)

    return read


def _plain(valued: str = "", long_valued: Iterable[str] = (), skip: int = 0) -> Handler:
    """Every operand is written (after ``skip`` leading ones: a mode, an owner)."""
    longs = tuple(long_valued)

    def read(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
        operands = _operands(args, valued, longs)
        given = skip
        if skip and any(a.value and a.value.startswith("--reference") for a in args):
            given = 0
        recursive = _flag(args, "R", ("--recursive",))
        for arg in operands[given:]:
            r.add(here, arg.value, recursive and _tree(here, arg.value))

    return read


def _chmod(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    # a mode may look like an option (`chmod -x f`): only these are options
    options = {"-R", "-c", "-f", "-v", "--recursive", "--changes", "--silent", "--quiet"}
    rest = [a for a in args if a.value not in options and not (a.value or "").startswith("--")]
    recursive = any(a.value in ("-R", "--recursive") for a in args)
    given = 0 if any((a.value or "").startswith("--reference") for a in args) else 1
    for arg in rest[given:]:
        r.add(here, arg.value, recursive and _tree(here, arg.value))


def _tree(here: str, path: str | None) -> bool:
    """A recursive command's operand: a tree unless it is an existing non-directory."""
    if path is None:
        return False
    full = os.path.join(here, path)
    return _isdir(full) or not _exists(full)


def _rm(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    recursive = _flag(args, "rR", ("--recursive",))
    for arg in _operands(args):
        p = arg.value
        if recursive and arg.pattern is not None and re.fullmatch(r"(\./)*\*", arg.pattern):
            r.add(here, ".", True)  # `rm -rf *`: the whole directory
            continue
        r.add(here, p, recursive and _tree(here, p))


def _rmdir(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    parents = _flag(args, "p", ("--parents",))
    for arg in _operands(args):
        p = arg.value
        while p:
            r.add(here, p)
            p = os.path.dirname(p.rstrip("/")) if parents else ""


def _copy(moves: bool, valued: str, long_valued: Iterable[str], link: bool = False) -> Handler:
    """cp, mv, ln, install: the destination (into a directory: DIR/basename,
    a tree for a directory copied recursively); mv's sources too."""
    longs = (*long_valued, "--target-directory")

    def read(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
        operands = _operands(args, valued + "t", longs)
        target = _option(args, "t", "--target-directory")
        recursive = moves or (not link and _flag(args, "rRa", ("--recursive", "--archive")))
        sources = operands
        into: str | None = None
        if isinstance(target, str):
            into = target
        elif target is None:
            pass  # the directory is unknowable
        elif _flag(args, "T", ("--no-target-directory",)) and len(operands) == 2:
            src, dest = operands
            sources = [src]
            r.add(here, dest.value, recursive and _is_dir(here, src.value))
        elif len(operands) >= 2 or (link and len(operands) == 1):
            *sources, last = operands if len(operands) >= 2 else [operands[0], Arg(".")]
            dest_path = last.value
            if dest_path is None:
                pass
            elif len(sources) > 1 or dest_path.endswith("/") or _is_dir(here, dest_path):
                into = dest_path
            else:
                r.add(here, dest_path, recursive and _is_dir(here, sources[0].value))
        else:
            return
        if into is not None:
            for src in sources:
                if src.value is None or FOUND in src.value:
                    r.add(here, into, True)  # an unknowable source: anything in it
                    continue
                name = os.path.basename(src.value.rstrip("/")) or src.value
                r.add(here, os.path.join(into, name), recursive and _is_dir(here, src.value))
        if moves:
            for src in sources:
                r.add(here, src.value, _is_dir(here, src.value))

    return read


def _is_dir(here: str, path: str | None) -> bool:
    return path is not None and _isdir(os.path.join(here, path))


def _dd(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    for arg in args:
        if arg.value is not None and arg.value.startswith("of="):
            r.add(here, arg.value[3:])


def _install(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    if _flag(args, "d", ("--directory",)):
        return  # directories only: no content
    _copy(False, "mogS", ("--mode", "--owner", "--group", "--suffix"), link=True)(
        r, args, here, stdin, depth
    )


def _truncate(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    for arg in _operands(args, "sr", ("--size", "--reference")):
        r.add(here, arg.value)


def _touch(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    for arg in _operands(args, "rdt", ("--reference", "--date")):
        r.add(here, arg.value)


def _find(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    k = 0
    while k < len(args):
        v = args[k].value or ""
        if v in ("-H", "-L", "-P") or (v.startswith("-O") and v != "-ok"):
            k += 1
        elif v == "-D":
            k += 2
        else:
            break
    starts: list[Arg] = []
    while k < len(args):
        a = args[k].value
        if a is not None and (a.startswith("-") or a in ("(", "!", ")", ",")):
            break
        starts.append(args[k])
        k += 1
    if not starts:
        starts = [Arg(".")]

    def everything() -> None:
        for s in starts:
            if s.value is not None:
                r.add(here, s.value, True)

    while k < len(args):
        a = args[k].value or ""
        k += 1
        if a == "-delete":
            everything()
        elif a in ("-fprint", "-fprint0", "-fls", "-fprintf") and k < len(args):
            r.add(here, args[k].value)
            k += 2 if a == "-fprintf" else 1
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[Arg] = []
            while k < len(args) and args[k].value not in (";", "+"):
                val = args[k].value
                inner.append(
                    Arg(val.replace("{}", FOUND) if val is not None else None, args[k].pattern)
                )
                k += 1
            k += 1
            # -execdir runs in each found file's directory: any relative path is under a start
            base = os.path.join("/", FOUND) if a in ("-execdir", "-okdir") else here
            outer, r.on_found = r.on_found, everything
            try:
                r.command(inner, base, _Input(), depth + 1)
            finally:
                r.on_found = outer


def _git(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    """The git commands that change the work tree, judged by what git would
    change, git run in the command's directory:

    - ``checkout [TREE] -- P``, ``restore P``, ``reset --hard [REV]``,
      ``stash``: a file pathspec is itself; a directory, glob or ``.`` is the
      modified or staged files under it (``status --porcelain -z -uno``), or
      with a TREE the files differing from it (``diff --name-only TREE``);
    - ``clean -f``: ``ls-files --others`` (``--exclude-standard`` unless -x);
    - ``checkout BRANCH``, ``switch``, ``merge``, ``rebase``: ``diff
      --name-only HEAD OTHER``; ``cherry-pick C``/``revert C``: what C
      changes (``diff C^ C``), not all that differs from HEAD;
    - ``apply``/``am``: the patch's header paths, from the top;
    - ``pull`` and sequencer steps (``--continue``): nothing is known before
      they fetch or apply, so the top as a tree, as is any git failure."""
    k = 0
    while k < len(args):
        a = args[k].value
        if a is None:
            r.broad(here)
            return
        if not a.startswith("-"):
            break
        if a == "-C" and k + 1 < len(args):
            where = args[k + 1].value
            if where is None:
                r.broad(here)
                return
            here = os.path.join(here, where)
            k += 2
        elif a == "-c":
            k += 2
        elif a.startswith(("--git-dir", "--work-tree")):
            r.broad(here)  # another repository's work tree: not judged here
            return
        else:
            k += 1
    if k >= len(args):
        return
    sub = args[k].value
    rest = args[k + 1 :]
    values = [a.value for a in rest]
    if sub in ("mv", "rm"):
        if _flag(rest, "n", ("--dry-run",)):
            return
        if sub == "mv":
            _copy(True, "", ())(r, rest, here, stdin, depth)
        else:
            recursive = _flag(rest, "r")
            for arg in _operands(rest, "", ("--pathspec-from-file",)):
                p = arg.value
                if p is not None and (p.startswith(":") or MAGIC.search(p)):
                    r.add(here, _literal_prefix(p), True)
                else:
                    r.add(here, p, recursive and _tree(here, p))
    elif sub == "checkout":
        _checkout(r, rest, here)
    elif sub == "switch":
        if _flag(rest, "", ("--orphan",)):
            r.broad(here)
            return
        operands = _operands(rest, "cC", ("--create", "--force-create", "--conflict"))
        target = operands[-1].value if operands else None
        if _flag(rest, "cC", ("--create", "--force-create")) and len(operands) < 1:
            return  # a new branch where HEAD is: nothing changes
        if target is None or not r.differs(here, "HEAD", "@{-1}" if target == "-" else target):
            r.broad(here)
    elif sub == "restore":
        if _flag(rest, "S", ("--staged",)) and not _flag(rest, "W", ("--worktree",)):
            return  # the index only
        if any(v is not None and v.startswith("--pathspec-from-file") for v in values):
            r.broad(here)
            return
        source = _option(rest, "s", "--source")
        if source is None:
            r.broad(here)
            return
        specs = _operands(rest, "s", ("--source",))
        if not specs and _flag(rest, "p", ("--patch",)):
            specs = [Arg(".")]  # restore -p without a pathspec: every modified file
        r.pathspecs(here, specs, source or None)
    elif sub == "reset":
        if not _flag(rest, "", ("--hard", "--keep", "--merge")):
            return  # the index and HEAD only
        operands = _operands(rest)
        rev = operands[0].value if operands else None
        if operands and rev is None:
            r.broad(here)
            return
        ok = r.changed(here, [])
        if rev is not None:
            ok = ok and r.differs(here, "HEAD", rev)
        if not ok:
            r.broad(here)
    elif sub == "stash":
        _stash(r, rest, here)
    elif sub == "clean":
        if _flag(rest, "n", ("--dry-run",)):
            return
        pathspecs = [a.value for a in _operands(rest, "e", ("--exclude",))]
        if None in pathspecs:
            r.broad(here)
            return
        which = ["--others"]
        if _flag(rest, "X"):
            which += ["--ignored", "--exclude-standard"]
        elif not _flag(rest, "x"):
            which += ["--exclude-standard"]
        spec = ["--", *[p for p in pathspecs if p is not None]] if pathspecs else []
        paths = r.git_paths(here, ["ls-files", "-z", "--full-name", *which, *spec])
        if paths is None:
            r.broad(here)
            return
        for p in paths:
            r.add(here, p)
    elif sub in ("apply", "am"):
        if (
            sub == "apply"
            and _flag(rest, "", ("--check", "--stat", "--numstat", "--summary"))
            and not _flag(rest, "", ("--apply",))
        ):
            return
        if sub == "am" and _flag(
            rest, "", ("--abort", "--continue", "--skip", "--quit", "--resolved")
        ):
            r.broad(here)
            return
        strip = _option(rest, "p")
        count = int(strip) if isinstance(strip, str) and strip.isdigit() else 1
        directory = _option(rest, "", "--directory")
        top = r.top(here) or here
        base = os.path.join(top, directory) if isinstance(directory, str) else top
        files = _operands(rest, "pCS", ("--directory", "--exclude", "--include", "--whitespace"))
        texts: list[str | None] = []
        if files:
            texts = [_read(os.path.join(here, f.value)) if f.value else None for f in files]
        elif stdin.text is not None:
            texts = [stdin.text]
        elif stdin.path is not None:
            texts = [_read(os.path.join(here, stdin.path))]
        else:
            return  # a patch on a pipe: unknowable, left out
        for text in texts:
            if text is None:
                r.broad(here)
                continue
            for name, prefixed in _patch_paths(text):
                r.add(base, _strip(name, count if prefixed else max(count - 1, 0)))
    elif sub in ("merge", "pull", "rebase", "cherry-pick", "revert"):
        _rewrite(r, sub, rest, here)
    elif sub in _GIT_BROAD:
        action = values[0] if values else None
        if action in _GIT_BROAD[sub]:
            r.broad(here)  # the work tree, rewritten: judged no finer
        elif sub == "worktree" and action in ("add", "remove", "move"):
            for arg in _operands(rest[1:], "b", ("--reason",))[: 2 if action == "move" else 1]:
                r.add(here, arg.value, True)
        elif sub == "read-tree" and _flag(rest, "u"):
            r.broad(here)


# git commands that rewrite the work tree with what only running tells: the
# subcommands (or first arguments) of each that do
_GIT_BROAD: dict[str, frozenset[str | None]] = {
    "bisect": frozenset({"start", "good", "bad", "new", "old", "skip", "reset", "run", "replay"}),
    "sparse-checkout": frozenset({"set", "add", "reapply", "disable", "init"}),
    "submodule": frozenset({"update", "deinit", "absorbgitdirs"}),
    "checkout-index": frozenset({"-a", "--all", "-f", "--force", "-u", "--index"}),
    "worktree": frozenset(),
    "read-tree": frozenset(),
}


def _literal_prefix(pathspec: str) -> str:
    """The directory above a glob or magic pathspec's first magic part."""
    if pathspec.startswith(":"):
        return "."
    m = MAGIC.search(pathspec)
    head = pathspec[: m.start()] if m else pathspec
    return os.path.dirname(head) or "."


def _checkout(r: _Reader, args: list[Arg], here: str) -> None:
    values = [a.value for a in args]
    if any(v is not None and v.startswith("--pathspec-from-file") for v in values):
        r.broad(here)
        return
    if "--" in values:
        at = values.index("--")
        before = _operands(args[:at], "bB", ("--orphan", "--conflict"))
        source = before[0].value if before else None
        if before and source is None:
            r.broad(here)
            return
        r.pathspecs(here, args[at + 1 :], source)
        return
    create = _flag(args, "bB", ("--orphan",))
    operands = _operands(args, "bB", ("--orphan", "--conflict"))
    if not create and _flag(args, "p", ("--patch",)):
        # -p [TREE] [PATHSPEC…]: hunks of the files under the pathspecs (all without)
        first = operands[0].value if operands else None
        tree = first is not None and (
            r.git_out(
                here, ["rev-parse", "--verify", "--quiet", "--end-of-options", first + "^{tree}"]
            )
            is not None
        )
        specs = operands[1:] if tree else operands
        r.pathspecs(here, specs or [Arg(".")], first if tree else None)
        return
    if not operands:
        return  # `git checkout`, `git checkout -b new`: nothing changes
    first = operands[0].value
    if first is None:
        r.broad(here)
        return
    rev = "@{-1}" if first == "-" else first
    if (
        r.git_out(here, ["rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{tree}"])
        is not None
    ):
        if len(operands) == 1 or create:
            if not r.differs(here, "HEAD", rev):
                r.broad(here)
            return
        r.pathspecs(here, operands[1:], rev)
        return
    r.pathspecs(here, operands, None)


def _stash(r: _Reader, args: list[Arg], here: str) -> None:
    sub = args[0].value if args and not (args[0].value or "-").startswith("-") else "push"
    rest = args[1:] if args and sub == args[0].value else args
    if sub in ("list", "show", "drop", "clear", "create", "store"):
        return
    if sub in ("pop", "apply", "branch"):
        operands = _operands(rest)
        ref = operands[-1].value if operands else "stash@{0}"
        if ref is None or not r.differs(here, ref + "^1", ref):
            r.broad(here)
        return
    if sub not in ("push", "save"):
        r.broad(here)
        return
    pathspecs = [a.value for a in _operands(rest, "m", ("--message", "--pathspec-from-file"))]
    if sub == "save":
        pathspecs = []
    if None in pathspecs:
        r.broad(here)
        return
    specs = [p for p in pathspecs if p is not None]
    ok = r.changed(here, specs)
    if _flag(rest, "ua", ("--include-untracked", "--all")):
        which = ["--others"] if _flag(rest, "a", ("--all",)) else ["--others", "--exclude-standard"]
        paths = r.git_paths(
            here, ["ls-files", "-z", "--full-name", *which, "--", *(specs or [":/"])]
        )
        if paths is None:
            ok = False
        for p in paths or []:
            r.add(here, p)
    if not ok:
        r.broad(here)


def _rewrite(r: _Reader, sub: str, args: list[Arg], here: str) -> None:
    """merge, pull, rebase, cherry-pick, revert: the paths that differ from
    what they bring, where it can be known."""
    if sub == "pull" or _flag(args, "", ("--continue", "--skip", "--abort", "--quit")):
        r.broad(here)  # what a fetch or a sequencer brings is not known yet
        return
    valued = "msXx" if sub in ("merge", "rebase") else "mX"
    longs = ("--onto", "--strategy", "--strategy-option", "--exec", "-m", "--mainline", "-X", "-s")
    operands = _operands(args, valued, longs)
    onto = _option(args, "", "--onto")
    ok = True
    if sub in ("merge", "rebase"):
        others = [a.value for a in operands] or ["@{upstream}"]
        if isinstance(onto, str):
            others.append(onto)
        elif onto is None:
            ok = False
        for other in others:
            ok = ok and other is not None and r.differs(here, "HEAD", other)
    else:
        if not operands:
            ok = False
        for arg in operands:
            c = arg.value
            if c is None:
                ok = False
            elif ".." in c:
                a, _, b = c.partition("..")
                ok = ok and r.differs(here, a.strip(".") or "HEAD", b.lstrip(".") or "HEAD")
            else:
                ok = ok and r.differs(here, c + "^", c)
    if not ok:
        r.broad(here)


def _patch(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    valued = "iIpdoBDFrVYzg"
    longs = (
        "--input",
        "--strip",
        "--directory",
        "--output",
        "--reject-file",
        "--prefix",
        "--suffix",
    )
    directory = _option(args, "d", "--directory")
    base = os.path.join(here, directory) if isinstance(directory, str) else here
    out = _option(args, "o", "--output")
    if isinstance(out, str) and out != "-":
        r.add(base, out)
    strip = _option(args, "p", "--strip")
    count = int(strip) if isinstance(strip, str) and strip.isdigit() else None
    operands = _operands(args, valued, longs)
    given = _option(args, "i", "--input")
    if operands:
        r.add(base, operands[0].value)  # the file to patch, named
        return
    text: str | None = None
    if isinstance(given, str):
        text = _read(os.path.join(here, given))
    elif stdin.text is not None:
        text = stdin.text
    elif stdin.path is not None:
        text = _read(os.path.join(here, stdin.path))
    r.patch_text(text, here, count, base)


def _values(args: list[Arg], valued: str, wanted: str, longs: Iterable[str]) -> list[str | None]:
    """Every value given to options ``wanted`` (short letters, each also in
    ``valued``) or ``longs``, in all their forms: ``-o F``, ``-oF``, ``-sSoF``,
    ``--long F``, ``--long=F``."""
    names = tuple(longs)
    found: list[str | None] = []
    k = 0
    while k < len(args):
        a = args[k].value
        k += 1
        if a is None or not a.startswith("-") or a == "-":
            continue
        if a == "--":
            break
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            if name in names:
                if eq:
                    found.append(value)
                else:
                    found.append(args[k].value if k < len(args) else None)
                    k += 1
            continue
        for pos, letter in enumerate(a[1:], 1):
            if letter in valued:
                value_: str | None = a[pos + 1 :]
                if not value_:
                    value_ = args[k].value if k < len(args) else None
                    k += 1
                if letter in wanted:
                    found.append(value_)
                break
    return found


def _fetch(valued: str, wanted: str, longs: Iterable[str]) -> Handler:
    """curl, wget: the files their output options name (``-`` is stdout)."""
    names = tuple(longs)

    def read(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
        for value in _values(args, valued, wanted, names):
            if value != "-":
                r.add(here, value)

    return read


def _sort(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    for value in _values(args, "kotST", "o", ("--output",)):
        r.add(here, value)


def _rsync(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    """rsync SRC… DEST: DEST, a tree when it is (or is made) a directory or
    --delete prunes it; a remote DEST (``host:path``) is not this tree."""
    operands = _operands(
        args, "eBfTM", ("--rsh", "--filter", "--exclude", "--include", "--temp-dir")
    )
    if len(operands) < 2:
        return
    *sources, last = operands
    dest = last.value
    if dest is None:
        return
    head = dest.split("/", 1)[0]
    if ":" in head or dest.startswith("rsync://"):
        return
    tree = (
        len(sources) > 1
        or dest.endswith("/")
        or _is_dir(here, dest)
        or _flag(args, "ra", ("--recursive", "--archive"))
        or any((a.value or "").startswith("--del") for a in args)
    )
    r.add(here, dest, tree)


def _editor(valued: str, long_valued: Iterable[str] = ()) -> Handler:
    """An editor may write every file it is given (``+LINE`` and ``+cmd`` are not files)."""
    longs = tuple(long_valued)

    def read(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
        for arg in _operands(args, valued, longs):
            if arg.value is not None and not arg.value.startswith("+"):
                r.add(here, arg.value)

    return read


def _tar(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    """tar: extracting writes names only the archive tells, so the directory
    (``-C DIR``) as a tree; creating or appending writes the archive (``-f``)."""
    if args and args[0].value is not None and not args[0].value.startswith("-"):
        args = [Arg("-" + args[0].value), *args[1:]]  # the old style: `tar xzf A`
    directory = _option(args, "C", "--directory")
    if _flag(args, "x", ("--extract", "--get")):
        if directory is None:
            r.broad(here)
        else:
            r.add(here, directory or ".", True)
    elif _flag(args, "cruA", ("--create", "--append", "--update", "--catenate", "--delete")):
        archive = _option(args, "f", "--file")
        if archive is None:
            r.broad(here)
        elif archive and archive != "-":
            r.add(here, archive)


def _unzip(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    if _flag(args, "lvtpzZ"):
        return  # lists, tests or prints: nothing written
    directory = _option(args, "d")
    if directory is None:
        r.broad(here)
    else:
        r.add(here, directory or ".", True)


def _cpio(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
    directory = _option(args, "D", "--directory")
    base = os.path.join(here, directory) if isinstance(directory, str) else here
    if _flag(args, "i", ("--extract",)):
        r.add(base, ".", True)
    elif _flag(args, "p", ("--pass-through",)):
        for arg in _operands(args, "DEFHIMOR", ("--directory", "--file", "--format")):
            r.add(base, arg.value, True)
    else:
        archive = _option(args, "O", "")
        if isinstance(archive, str):
            r.add(base, archive)


# PowerShell's parameters that take a value (the rest read as switches), and
# each write cmdlet's positional parameters, in order (Get-Help CMDLET -Full)
_PS_VALUED = frozenset(
    {
        "path", "literalpath", "filepath", "destination", "value", "encoding", "itemtype",
        "name", "newname", "filter", "include", "exclude", "credential", "stream", "width",
        "inputobject", "delimiter", "target", "pspath", "lp",
    }
)  # fmt: skip
_PS_WRITES: dict[str, tuple[str, ...]] = {
    "set-content": ("path", "value"),
    "add-content": ("path", "value"),
    "clear-content": ("path",),
    "out-file": ("filepath", "encoding"),
    "new-item": ("path", "value"),
    "remove-item": ("path",),
    "move-item": ("path", "destination"),
    "copy-item": ("path", "destination"),
    "rename-item": ("path", "newname"),
}
_PS_ALIASES = {
    "sc": "set-content",
    "ac": "add-content",
    "clc": "clear-content",
    "ni": "new-item",
    "ri": "remove-item",
    "del": "remove-item",
    "erase": "remove-item",
    "rd": "remove-item",
    "move": "move-item",
    "mi": "move-item",
    "copy": "copy-item",
    "cpi": "copy-item",
    "rni": "rename-item",
    "ren": "rename-item",
}

# PowerShell aliases that are POSIX tools' names too: PowerShell's when its
# parameters are given
_PS_ALIASES_POSIX = {
    "rm": "remove-item",
    "rmdir": "remove-item",
    "mv": "move-item",
    "cp": "copy-item",
}
_PS_NAMED = frozenset({"-destination", "-path", "-literalpath", "-recurse"})


def _powershell(cmdlet: str) -> Handler:
    """A PowerShell write cmdlet (best effort: the reader lexes as bash does):
    its ``-Path``/``-LiteralPath``/``-FilePath`` and ``-Destination``, named
    (``-Path X``, ``-Path:X``, a prefix of the name) or positional."""
    positional = _PS_WRITES[cmdlet]

    def read(r: _Reader, args: list[Arg], here: str, stdin: _Input, depth: int) -> None:
        given: dict[str, list[str | None]] = {}
        loose: list[str | None] = []
        switches: set[str] = set()
        k = 0
        while k < len(args):
            a = args[k].value
            k += 1
            if a is None or not a.startswith("-") or len(a) < 2:
                loose.append(a)
                continue
            name, colon, value = a[1:].partition(":")
            name = name.lower()
            full = next((p for p in sorted(_PS_VALUED) if p.startswith(name)), None)
            if full is None:
                switches.add(name)
                continue
            if full in ("lp", "pspath"):
                full = "literalpath"
            if colon:
                given.setdefault(full, []).append(value)
            else:
                given.setdefault(full, []).append(args[k].value if k < len(args) else None)
                k += 1
        named = any(p in given for p in ("path", "literalpath", "filepath"))
        free = [
            p for p in positional if p not in given and not (named and p in ("path", "filepath"))
        ]
        for p, word in zip(free, loose, strict=False):
            given.setdefault(p, []).append(word)
        tree = cmdlet == "remove-item" and any("recurse".startswith(s) for s in switches if s)
        paths = [*given.get("path", []), *given.get("literalpath", []), *given.get("filepath", [])]
        for path in paths:
            if path is None:
                r.broad(here)
                continue
            for part in path.split(","):  # an array: -Path a,b
                if cmdlet == "copy-item":
                    continue  # the source is read
                if MAGIC.search(part):  # the cmdlet expands it: the directory above
                    r.add(here, _literal_prefix(part), True)
                    continue
                if cmdlet == "rename-item":
                    r.add(here, part)
                    for new in given.get("newname", []):
                        r.add(os.path.join(here, os.path.dirname(part)), new)
                    continue
                r.add(here, part, tree or (cmdlet == "move-item" and _is_dir(here, part)))
        if cmdlet in ("copy-item", "move-item"):
            for dest in given.get("destination", []):
                if dest is None:
                    r.broad(here)
                elif _is_dir(here, dest) and paths:
                    for path in paths:
                        for part in (path or "").split(","):
                            name = os.path.basename(part.rstrip("/\\"))
                            if name:
                                r.add(here, os.path.join(dest, name), _is_dir(here, part))
                else:
                    r.add(here, dest, any(_is_dir(here, p or "") for p in paths))

    return read


_COMMANDS: dict[str, Handler] = {
    "cd": _cd,
    "pushd": _cd,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    "tee": _plain(),
    "cp": _copy(False, "S", ("--suffix",)),
    "mv": _copy(True, "S", ("--suffix",)),
    "ln": _copy(False, "S", ("--suffix",), link=True),
    "rm": _rm,
    "unlink": _plain(),
    "shred": _plain("ns", ("--iterations", "--size")),  # -u removes: no value
    "rmdir": _rmdir,
    "touch": _touch,
    "truncate": _truncate,
    "dd": _dd,
    "install": _install,
    "chmod": _chmod,
    "chown": _plain("", ("--from",), skip=1),
    "chgrp": _plain("", (), skip=1),
    "patch": _patch,
    "git": _git,
    "find": _find,
    "node": _code("-e", "--eval"),
    "nodejs": _code("-e", "--eval"),
    "ruby": _code("-e"),
    # curl's options that take a value, from `curl --help all` (8.x): a cluster
    # like -sSo F reads F for -o; -D/--dump-header and -c/--cookie-jar write too
    "curl": _fetch(
        "AbcCdDeEFHKmoPQrtTuUwXxYyz",
        "oDc",
        ("--output", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii", "--stderr"),
    ),
    # wget: -O the document, -o/-a the log (wget --help, 1.21)
    "wget": _fetch(
        "aABDeiIlOoPQTtUwXY",
        "Ooa",
        ("--output-document", "--output-file", "--append-output"),
    ),
    "sort": _sort,
    "rsync": _rsync,
    **dict.fromkeys(("vim", "vi", "nvim", "view", "ex"), _editor("cSuUiTwWstqr")),
    "nano": _editor("oYrs", ("--operatingdir", "--syntax", "--fill", "--speller")),
    "emacs": _editor("lfLu", ("--eval", "--load", "--funcall", "--directory", "--user")),
    "ed": _editor("p", ("--prompt",)),
    "tar": _tar,
    "gtar": _tar,
    "bsdtar": _tar,
    "unzip": _unzip,
    "cpio": _cpio,
    **{name: _shell for name in SHELLS},
}


def read_writes(command: str, cwd: str) -> list[Write]:
    """:func:`write_targets`, raising on a defect (the tests call this)."""
    cwd = os.path.abspath(cwd)
    reader = _Reader(cwd)
    try:
        reader.read(command, cwd, 0)
    except (_TooMuch, RecursionError):
        reader.broad(cwd)
    return list(dict.fromkeys(reader.found))


def write_targets(command: str, cwd: str) -> list[Write]:
    """The paths ``command``, run in ``cwd``, may write (created, changed,
    moved, removed, or their mode changed), deduplicated, in order. Best
    effort: see the module's docstring for what is read and what is missed.
    Never raises; input it cannot read gives the work tree's top as a tree."""
    try:
        return read_writes(command, cwd)
    except Exception:  # noqa: BLE001 - a defect here must not break the hook
        reader = _Reader(cwd)
        try:
            reader.broad(cwd)
        except Exception:  # noqa: BLE001
            return [Write(os.path.normpath(cwd), True)]
        return reader.found
