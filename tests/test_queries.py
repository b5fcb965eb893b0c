"""The named queries: one vocabulary over both dialects, typed, and used.

sql/<dialect>/queries/*.sql define the names; store/query_names.py types
them (mypy refuses a call of any other name); the code calls them. These
tests hold the three to one another."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

import pytest

from git_lacunari.store.queries import DIALECT_ONLY, load_queries, query_files
from git_lacunari.store.query_names import QueryName

from .conftest import REPO_ROOT

DIALECTS = ("sqlite", "postgres")
PACKAGE = REPO_ROOT / "git_lacunari"
# The methods that run a named query, on a store (or the store itself), and
# team.py's helpers, which run team.sql's on the PostgreSQL connection.
RUNNERS = {"one", "all", "run", "atomic"}
TEAM_RUNNERS = {"_one", "_all", "_ddl"}


def sql_names() -> set[str]:
    return set(load_queries("sqlite")) | set(load_queries("postgres"))


def test_both_dialects_define_the_same_files_and_names() -> None:
    files = {d: query_files(d) for d in DIALECTS}
    assert files["sqlite"] and files["postgres"]
    for name in sorted(files["sqlite"].keys() | files["postgres"].keys()):
        have = [d for d in DIALECTS if name in files[d]]
        if name in DIALECT_ONLY:
            assert have == [DIALECT_ONLY[name]], (
                f"queries/{name} is declared {DIALECT_ONLY[name]}'s"
            )
            continue
        assert have == list(DIALECTS), f"queries/{name} exists only in {have}"
        only = {d: set(files[d][name]) for d in DIALECTS}
        assert only["sqlite"] == only["postgres"], {
            "file": name,
            "only sqlite": sorted(only["sqlite"] - only["postgres"]),
            "only postgres": sorted(only["postgres"] - only["sqlite"]),
        }


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_fragment_resolves(dialect: str) -> None:
    for name, sql in load_queries(dialect).items():
        assert "{{" not in sql, f"{dialect}:{name} keeps an unknown fragment"
        assert sql.strip(), f"{dialect}:{name} is empty"


def test_the_query_name_type_is_exactly_the_sql() -> None:
    typed = get_args(QueryName)
    assert len(typed) == len(set(typed)), "a name is listed twice in QueryName"
    assert set(typed) == sql_names(), {
        "typed, not in sql/": sorted(set(typed) - sql_names()),
        "in sql/, not typed": sorted(sql_names() - set(typed)),
    }


def _source_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def query_calls(tree: ast.AST) -> list[ast.expr]:
    """The name argument of every call that runs a named query: ``X.one(…)``
    and its siblings on a store (or on ``self`` inside the store), team.py's
    helpers, and ``…queries[…]`` lookups."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            receiver = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
            if (
                isinstance(func, ast.Attribute)
                and func.attr in RUNNERS
                and (receiver.endswith("store") or receiver == "self")
            ):
                found.append(node.args[0])
            elif isinstance(func, ast.Name) and func.id in TEAM_RUNNERS and len(node.args) > 1:
                found.append(node.args[1])  # team.py's helpers: (store, query, ...)
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith(
            ("queries", "queries()")
        ):
            found.append(node.slice)
    return found


def literal_query_calls() -> dict[str, list[str]]:
    """Name -> where the code calls it by a literal."""
    calls: dict[str, list[str]] = {}
    for path in _source_files():
        for arg in query_calls(ast.parse(path.read_text(), str(path))):
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                where = f"{path.relative_to(REPO_ROOT)}:{arg.lineno}"
                calls.setdefault(arg.value, []).append(where)
    return calls


def test_no_code_calls_a_query_that_does_not_exist() -> None:
    calls = literal_query_calls()
    # The scan sees the board's calls (not vacuous): dozens of names.
    assert len(calls) > 60 and "claim" in calls and "team_enable_ddl" in calls
    unknown = {name: where for name, where in calls.items() if name not in sql_names()}
    assert unknown == {}


def test_the_scan_catches_an_unknown_name() -> None:
    tree = ast.parse(
        "def f(store):\n    store.one('no_such_query', x=1)\n    _ddl(s, 'nor_this')\n"
    )
    assert [ast.literal_eval(a) for a in query_calls(tree)] == ["no_such_query", "nor_this"]


def test_every_named_query_is_used() -> None:
    """Each name is called somewhere (as a string literal: mypy types every
    call with QueryName, so the names the code passes around are literals
    somewhere too), or inlined into another query as ``{{name}}``."""
    literals = {
        node.value
        for path in _source_files()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    inlined = {
        name
        for folder in (REPO_ROOT / "sql").glob("*/queries")
        for path in folder.glob("*.sql")
        for name in re.findall(r"\{\{(\w+)\}\}", path.read_text())
    }
    unused = sorted(sql_names() - literals - inlined)
    assert unused == [], f"named queries nothing uses: {unused}"
