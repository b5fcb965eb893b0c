"""Property: whatever the arguments and environment, `git lac` answers with
an exit code from the table, one line instead of a traceback, strict JSON
under --json, and on exit 2 it has written nothing to the board.

The verbs and their options are read from the click tree itself, so a verb
added later is driven too. Commands that would run forever are given the flag
that makes them finish (keeper and drain: --once).
"""

from __future__ import annotations

import io
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_lacunari.cli import _wants_json, cli

from .conftest import Result

Lac = Callable[..., Result]

# Verbs that block unless told otherwise: the flags that make them finish;
# None: not driven here (a server).
FINISHING: dict[str, list[str] | None] = {
    "keeper": ["--once", "--interval", "0.1"],
    "drain": ["--once"],
    "lander": ["--once"],
    "land": ["--timeout", "1s"],  # --wait on a queue no lander serves
    "serve": None,
    # Blocks until paths are free (tests/test_wait.py); serves MCP on stdin
    # (tests/test_mcp.py); serves the edit hook on a socket (tests/test_edit_guard.py).
    "wait": None,
    "mcp": None,
    "edit-helper": None,
}
NASTY = [
    "1",
    "2",
    "0",
    "-1",
    "+1",
    "01",
    " 1",
    "1.5",
    "abc",
    "",
    " ",
    "9223372036854775807",
    "9223372036854775808",
    "2147483648",
    "-2147483649",
    "99999999999999999999999999",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "NaN",
    "1s",
    "0s",
    "90m",
    "nandnanh",
    "9" * 400 + "d",
    "1h30m",
    "default",
    "core/",
    "core/auth.py",
    "README",
    "**",
    "*.py",
    "a/**/b",
    "[",
    "[!a]",
    "../x",
    "/abs",
    ".",
    "..",
    "a\\b",
    "a\u202eb",
    "a\u200bb",
    "x\x1b]0;t\x07",
    "x\x85y",
    "\udcff",
    "\u2028",
    "postgresql://[::1/x",
    "postgresql://h:99999/x",
    "sqlite:",
    "sqlite:///nonexistent/dir/b.db",
    "HEAD",
    "main",
    "--",
    "-x",
    "--json",
]
GOOD = ["1", "2", "core/auth.py", "core/", "README", "default", "bob", "1s", "30m", "docs/"]
VALUE = st.one_of(
    st.sampled_from(GOOD),
    st.sampled_from(GOOD),
    st.sampled_from(NASTY),
    st.text(st.characters(exclude_characters="\x00"), max_size=8),
)
# Integers at the edges of what the backends store (ids 64-bit, priority 32-bit).
EDGES = [0, 1, 2, -1, 2**31 - 1, 2**31, -(2**31) - 1, 2**63 - 1, 2**63, 10**30]
NUMBER = st.one_of(st.sampled_from(EDGES), st.integers()).map(str)
SHORT_WAITS = ["0.1", "0", "nan", "x", "1e400"]  # never a long --wait on an empty lane
ENV_KEYS = ["LAC_AGENT", "LAC_CAPS", "LAC_TIMEOUT", "LAC_GUARD"]


def _commands(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
        elif FINISHING.get(name, []) is not None:
            found.append(((*prefix, name), command))
    return found


COMMANDS = _commands(cli)


# `tasks --state`: states alone, comma lists of them, and near misses.
STATE_VALUES = st.one_of(
    st.sampled_from(["open", "done", "cancelled", "claimed", "parked", "done,cancelled"]),
    st.sampled_from(["open, claimed", ",", "open,", "Open", "finished", "done,,x", ""]),
    st.lists(st.sampled_from(["open", "done", "parked", "nope"]), max_size=4).map(",".join),
)
# `--limit`: the page sizes people give, and what no page size is.
LIMIT_VALUES = st.one_of(
    st.sampled_from(["0", "1", "2", "50", "-1", "1.5", "x", str(2**63), str(2**63 - 1)]),
    st.integers(-3, 5).map(str),
)


def _values(param: click.Parameter) -> st.SearchStrategy[str]:
    """Numbers where a number is wanted (half the time), anything otherwise."""
    if param.name == "states":
        return st.one_of(STATE_VALUES, VALUE)
    if param.name == "limit":
        return st.one_of(LIMIT_VALUES, NUMBER)
    if param.name == "worktree":
        # A desk's PATH: relative ones land in the test's own directories; an
        # absolute one would make a desk wherever it names, outside the test.
        return VALUE.filter(lambda v: not v.startswith("/"))
    numeric = isinstance(param.type, click.types.IntParamType) or "id" in (param.name or "")
    numeric = numeric or param.name in ("after", "deps", "task")
    return st.one_of(NUMBER, VALUE) if numeric else VALUE


LISTINGS: list[tuple[tuple[str, ...], click.Command]] = [
    (path, command) for path, command in COMMANDS if path in (("tasks",), ("log",))
]


@st.composite
def invocations(
    draw: st.DrawFn, commands: list[tuple[tuple[str, ...], click.Command]] = COMMANDS
) -> tuple[list[str], dict[str, str]]:
    path, command = draw(st.sampled_from(commands))
    args: list[str] = list(path)
    args += FINISHING.get(path[-1]) or []
    trailing: list[str] = []
    for param in command.params:
        if isinstance(param, click.Option):
            if draw(st.integers(0, 3)) != 0:  # each option in one call of four
                continue
            opt = param.opts[0]
            if param.is_flag:
                args.append(opt)
            elif opt == "--wait":
                args += [opt, draw(st.sampled_from(SHORT_WAITS))]
            else:
                for _ in range(draw(st.integers(1, 2)) if param.multiple else 1):
                    args += [opt, draw(_values(param))]
        elif isinstance(param, click.Argument):
            if param.name == "command":  # drain's COMMAND, after --
                trailing = ["--", draw(st.sampled_from(["true", "false", "no-such-command-x"]))]
                continue
            count = draw(st.integers(0, 3)) if param.nargs == -1 else draw(st.integers(0, 1))
            args += [draw(_values(param)) for _ in range(count)]
    if draw(st.booleans()):
        args.append("--json")
    if draw(st.booleans()):
        args[len(path) : len(path)] = ["--as", draw(VALUE)]
    if draw(st.integers(0, 9)) == 0:  # the group's own options
        args[:0] = draw(st.sampled_from([["--version"], ["--json"], ["--as", "bob"]]))
    env = draw(st.dictionaries(st.sampled_from(ENV_KEYS), VALUE.filter(bool), max_size=2))
    if "LAC_TIMEOUT" in env:
        env["LAC_TIMEOUT"] = draw(st.sampled_from(["0.5", "1", "nan", "inf", "0", "x", "1e309"]))
    return args + trailing, env


def snapshot(repo: Path, url: str | None) -> list[tuple[str, list[str]]]:
    """Every row of every board table, in a stable order."""
    if url is None:
        conn = sqlite3.connect(f"file:{repo / '.git' / 'lacunari' / 'board.db'}?mode=ro", uri=True)
        try:
            names = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            return [
                (n, sorted(repr(r) for r in conn.execute(f'SELECT * FROM "{n}"')))
                for n in sorted(names)
            ]
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        names = [
            r[0]
            for r in pg.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema()"
            )
        ]
        return [
            (n, sorted(repr(r) for r in pg.execute(f'SELECT * FROM "{n}"'))) for n in sorted(names)
        ]


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


FUZZ_SETTINGS = settings(
    max_examples=120,
    deadline=None,
    database=None,
    # The same examples every run, so a failure in CI replays here.
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ_SETTINGS
@given(call=invocations())
def test_every_verb_answers_within_the_contract(
    lac: Lac, repo: Path, board_url: str | None, monkeypatch: pytest.MonkeyPatch, call: Any
) -> None:
    answers_within_the_contract(lac, repo, board_url, monkeypatch, call)


@settings(FUZZ_SETTINGS, max_examples=60)
@given(call=invocations(LISTINGS))
def test_listings_answer_within_the_contract(
    lac: Lac, repo: Path, board_url: str | None, monkeypatch: pytest.MonkeyPatch, call: Any
) -> None:
    """`tasks` and `log` alone, so their paging flags (--limit, --state, --all)
    are drawn often; a page is never longer than its --limit."""
    argv, _ = call
    result = answers_within_the_contract(lac, repo, board_url, monkeypatch, call)
    given = [argv[n + 1] for n, word in enumerate(argv[:-1]) if word == "--limit"]
    if result.code == 0 and _wants_json(argv) and given:
        limit = int(given[-1])  # click took it: a whole number
        body = strict_json(result.out)
        rows = body.get("tasks", body.get("events"))
        if rows is not None:  # not --version or --help
            assert limit == 0 or len(rows) <= limit, result
            assert body["limit"] == (limit or None) and body["more"] >= 0, result


def answers_within_the_contract(
    lac: Lac, repo: Path, board_url: str | None, monkeypatch: pytest.MonkeyPatch, call: Any
) -> Result:
    argv, env = call
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # pre-push reads refs from stdin
    # Something to act on: a task, a claim and a lock of the default agent.
    if lac("show", "1").code != 0:
        assert lac("task", "add", "seed", "--write", "core/").code == 0
        assert lac("claim", "1").code == 0
    before = snapshot(repo, board_url)
    result = lac(*argv, env=env)
    shown = f"argv={argv!r} env={env!r}\nstdout={result.out!r}\nstderr={result.err!r}"
    assert result.code in (0, 1, 2, 3), shown
    assert "Traceback" not in result.err, shown
    if _wants_json(argv) and not ("-h" in argv or "--help" in argv):
        lines = result.out.splitlines()
        assert len(lines) == 1, shown
        body = strict_json(lines[0])
        assert isinstance(body, dict) and body["ok"] == (result.code == 0), shown
    if result.code == 2:
        assert snapshot(repo, board_url) == before, shown
    return result
