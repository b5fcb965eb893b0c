"""Renderers: what a command's Result says to people (and the shape of its JSON).

Click-free, shared by the command line (:mod:`git_lacunari.cli`) and the hooks'
fast path (:mod:`git_lacunari.entry`). :func:`shown` is the one terminal
escaper: every text that comes from the board passes through it before a
person reads it.
"""

from .terminal import shown

__all__ = ["shown"]
