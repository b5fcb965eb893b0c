"""The obvious write targets of a shell command: a best-effort reading.

An agent's shell tool can write anywhere, in ways no parser can follow
(a script, an interpreter, ``$(…)``, a variable). This reads only what a
command says on its face, so that the common cases are refused before they
run: redirections (``>``, ``>>``, ``>|``, ``&>``, ``&>>``), ``sed -i``,
``tee``, ``mv``, ``cp``, ``rm``, ``git checkout [TREE] -- PATH…`` and
``git restore PATH…``, through ``cd DIR`` steps, leading ``VAR=value``
assignments, ``sudo``/``env``/``command``, pipes, lists and here-documents.
Whatever it misses, the commit, push and server guards still refuse.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from typing import NamedTuple


class Write(NamedTuple):
    """One path a command may write."""

    path: str  # absolute, normalised (os.path.normpath), not symlink-resolved
    tree: bool  # True: everything under path may be written


SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", "{", "}"})
REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
PREFIXES = frozenset({"sudo", "env", "command", "nohup", "time", "exec", "builtin"})
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")


def _unquote(word: str) -> str | None:
    """The word as the shell would see it, or None when it cannot be known
    here (a variable, a command substitution, a brace expansion)."""
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        inner = word[1:-1]
        if word[0] == '"' and ("$" in inner or "`" in inner):
            return None
        return inner
    if any(c in word for c in "$`{'\""):
        return None
    return word.replace("\\", "")


def _lines(command: str) -> list[str]:
    """The command's lines, here-document bodies left out."""
    kept: list[str] = []
    until: str | None = None
    for line in command.splitlines():
        if until is not None:
            if line.strip() == until:
                until = None
            continue
        kept.append(line)
        found = HEREDOC.search(line)
        if found:
            until = found.group(2)
    return kept


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line.replace("<<", " "), posix=False, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def _simple_commands(command: str) -> list[list[str]]:
    commands: list[list[str]] = []
    for line in _lines(command):
        try:
            words = _words(line)
        except ValueError:  # unbalanced quotes: nothing we can read
            continue
        current: list[str] = []
        for word in words:
            if word in SEPARATORS:
                commands.append(current)
                current = []
            else:
                current.append(word)
        commands.append(current)
    return [c for c in commands if c]


def _operands(args: list[str], valued: frozenset[str] = frozenset()) -> list[str]:
    """Arguments that are not options (``--`` ends options); ``valued`` take a value."""
    found: list[str] = []
    skip = False
    options = True
    for arg in args:
        if skip:
            skip = False
            continue
        if options and arg == "--":
            options = False
            continue
        if options and arg.startswith("-") and arg != "-":
            if arg in valued:
                skip = True
            continue
        found.append(arg)
    return found


def _sed_targets(args: list[str]) -> list[str]:
    in_place = any(
        a == "--in-place"
        or a.startswith("--in-place=")
        or (a.startswith("-") and not a.startswith("--") and "i" in a[1:])
        for a in args
    )
    if not in_place:
        return []
    scripted = any(a in ("-e", "-f", "--expression", "--file") for a in args) or any(
        a.startswith(("--expression=", "--file=")) for a in args
    )
    operands = _operands(args, frozenset({"-e", "-f", "--expression", "--file", "-l"}))
    return operands if scripted else operands[1:]


def _git_targets(args: list[str]) -> list[str]:
    # git's own options before the subcommand (-C DIR changes where paths are).
    while args and args[0].startswith("-"):
        args = args[2:] if args[0] in ("-C", "-c") else args[1:]
    if not args:
        return []
    sub, rest = args[0], args[1:]
    if sub == "checkout" and "--" in rest:
        return rest[rest.index("--") + 1 :]
    if sub == "restore":
        return _operands(rest, frozenset({"-s", "--source"}))
    return []


def _command_targets(words: list[str]) -> tuple[list[str], str | None]:
    """(write targets, directory a ``cd`` moves to) of one simple command."""
    targets: list[str] = []
    argv: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in REDIRECTS:
            if argv and argv[-1].isdigit():  # `2>f`: the 2 is the redirect's, not an argument
                argv.pop()
            if i + 1 < len(words):
                nxt = words[i + 1]
                if not (word == ">&" and (nxt.isdigit() or nxt == "-")):
                    targets.append(nxt)
            i += 2
            continue
        if word == "<" or word == "<<<":
            i += 2
            continue
        argv.append(word)
        i += 1
    while argv and (ASSIGNMENT.match(argv[0]) or argv[0] in PREFIXES):
        argv = argv[1:]
        while argv and argv[0].startswith("-"):  # sudo -u x, env -i: best effort
            argv = argv[1:]
    if not argv:
        return targets, None
    name, args = os.path.basename(argv[0]), argv[1:]
    if name == "cd":
        operands = _operands(args)
        return targets, operands[0] if operands else None
    if name == "sed":
        targets += _sed_targets(args)
    elif name == "tee" or name == "rm":
        targets += _operands(args)
    elif name in ("mv", "cp"):
        operands = _operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
        target_dir = next(
            (args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")),
            None,
        )
        if target_dir is not None:
            targets += [os.path.join(target_dir, os.path.basename(s)) for s in operands]
            if name == "mv":
                targets += operands
        elif len(operands) >= 2:
            *sources, dest = operands
            targets.append(dest)
            targets += [os.path.join(dest, os.path.basename(s.rstrip("/"))) for s in sources]
            if name == "mv":
                targets += sources
    elif name == "git":
        targets += _git_targets(args)
    return targets, None


def write_targets(command: str, cwd: str) -> list[Write]:
    """Absolute paths the command obviously writes (created, changed, moved or
    removed), resolved from ``cwd`` and its ``cd`` steps; globs expanded as
    the shell would. What cannot be read here (variables, substitutions) is
    left out: this is best effort, by design."""
    found: list[str] = []
    here = cwd
    for words in _simple_commands(command):
        raw, moved_to = _command_targets(words)
        if moved_to is not None:
            where = _unquote(moved_to)
            if where is None or where.startswith("~") or where == "-":
                here = cwd  # unknowable: go on from where the command started
            else:
                here = os.path.normpath(os.path.join(here, where))
            continue
        for word in raw:
            target = _unquote(word)
            if target is None or target == "" or target.startswith("~"):
                continue
            full = os.path.normpath(os.path.join(here, target))
            if full.startswith("/dev/"):
                continue
            if any(c in target for c in "*?[") and word[0] not in "'\"":
                found.extend(sorted(glob.glob(full)) or [])
            else:
                found.append(full)
    return [Write(p, False) for p in dict.fromkeys(found)]
