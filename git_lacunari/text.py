"""Text from the board made safe for a terminal: the one escaper.

Every human message that carries text someone else chose (titles, names,
lanes, patterns, file names from a tree, reasons) passes through
:func:`shown`, whoever composes it: the views, a guard's verdict, a
workflow's refusal. The edge (:mod:`git_lacunari.edge`) passes every line it
writes for people through it once more, so a message composed without it
still cannot drive the terminal. It is a leaf (no imports from the package)
so that every layer can use the same rule; :mod:`git_lacunari.views`
re-exports it.

What is escaped (shown as ``\\x1b``, ``\\u202e``, ``\\U000e0041``; a byte
that was not UTF-8, carried as a lone surrogate, as ``\\xff``):

- C0 and C1 controls and DEL (category Cc): ESC starts CSI and OSC
  sequences (clear the screen, move the cursor, set the title), CR and
  newline forge lines;
- format characters (Cf): zero-width space and joiners, the bidi embeddings,
  overrides and isolates (U+202A-U+202E, U+2066-U+2069), the marks
  (U+200E, U+200F, U+061C), the byte order mark, soft hyphen, tag
  characters; they hide text or reorder what people read;
- line and paragraph separators (Zl, Zp) and lone surrogates (Cs).

Everything else is left readable: accented letters, CJK, emoji, including a
zero-width joiner *inside* an emoji sequence (between two symbols), which is
how a family or a profession emoji is spelled.
"""

from __future__ import annotations

import re
import unicodedata

# Bidi controls: all of category Cf, so escaped by the rule below; named here
# because callers test for them.
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
ESCAPED_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))
ZWJ = "\u200d"
# The colour a terminal view paints (views/terminal.py's COLOURS, and reset):
# SGR sequences that only colour or embolden. The edge lets exactly these
# through on a terminal that wants colour; every other ESC is escaped.
PAINT_CODES = frozenset(("0", "1", "2", "31", "32", "33", "34"))
_PAINT = re.compile(r"\x1b\[(\d{1,2})m")


def _escaped(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return char.encode("unicode_escape", "backslashreplace").decode("ascii")


def unsafe(char: str) -> bool:
    """Whether ``char`` is escaped by :func:`shown` (out of context: a
    zero-width joiner is, unless it joins two symbols)."""
    return unicodedata.category(char) in ESCAPED_CATEGORIES


def _joins_symbols(text: str, at: int) -> bool:
    """A zero-width joiner between two symbols (an emoji ZWJ sequence); an
    emoji's variation selector or skin tone may stand before it."""
    before = at - 1
    while before >= 0 and unicodedata.category(text[before]) in ("Mn", "Sk"):
        before -= 1
    if before < 0 or at + 1 >= len(text):
        return False
    return unicodedata.category(text[before]) == "So" and unicodedata.category(text[at + 1]) == "So"


def shown(text: str, *, keep: str = "") -> str:
    """``text`` with control, format (bidi, zero-width), separator characters
    and lone surrogates escaped (``\\x1b``), except those in ``keep`` (a body
    keeps its newlines and tabs). Idempotent: what it returns has nothing
    left to escape."""
    if text.isascii() and text.isprintable():  # no ASCII control: nothing to escape
        return text
    out: list[str] = []
    for at, char in enumerate(text):
        safe = char in keep or unicodedata.category(char) not in ESCAPED_CATEGORIES
        if safe or (char == ZWJ and _joins_symbols(text, at)):
            out.append(char)
        else:
            out.append(_escaped(char))
    return "".join(out)


def shown_painted(text: str, *, keep: str = "") -> str:
    """:func:`shown`, except that the colour sequences a view paints with
    (:data:`PAINT_CODES`) are kept: for text bound for a terminal that wants
    colour. A sequence with any other code is escaped like any ESC."""
    out: list[str] = []
    start = 0
    for match in _PAINT.finditer(text):
        if match.group(1) not in PAINT_CODES:
            continue
        out.append(shown(text[start : match.start()], keep=keep))
        out.append(match.group(0))
        start = match.end()
    out.append(shown(text[start:], keep=keep))
    return "".join(out)
