"""Text from the board made safe for a terminal: the one escaper.

Every human message that carries text someone else chose (titles, names,
lanes, patterns, file names from a tree, reasons) passes through
:func:`shown`, whoever composes it: the views, a guard's verdict, a
workflow's refusal. It is a leaf (no imports from the package) so that every
layer can use the same rule; :mod:`git_lacunari.views` re-exports it.
"""

from __future__ import annotations

import unicodedata

# Shown escaped in human output, so text from the board cannot drive the
# terminal (OSC, CSI) or reorder what people read (bidi controls).
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def shown(text: str, *, keep: str = "") -> str:
    """``text`` with control, bidi and separator characters escaped (``\\x1b``),
    except those in ``keep`` (a body keeps its newlines and tabs)."""
    out: list[str] = []
    for char in text:
        cat = unicodedata.category(char)
        if char not in keep and (cat in ("Cc", "Cs", "Zl", "Zp") or char in BIDI_CONTROLS):
            out.append(char.encode("unicode_escape", "backslashreplace").decode("ascii"))
        else:
            out.append(char)
    return "".join(out)
