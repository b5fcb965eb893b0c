"""The floor plan's rules that import-linter cannot state (README, Architecture).

- Only ``board/`` and ``store/`` run named queries: everything else asks the
  board (``Board``'s methods) or the store's public methods.
- Nothing imports another module's private names (``from .x import _y``).

Both read the package's source with ``ast``; each rule is shown to catch an
injected violation, so it cannot pass by reading nothing.
"""

from __future__ import annotations

import ast

import pytest

from git_lacunari.store.query_names import QueryName

from .conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "git_lacunari"
QUERY_RUNNERS = {"all", "one", "run", "atomic", "team_all", "team_one", "team_ddl"}
MAY_RUN_QUERIES = {"board", "store"}
QUERY_NAMES = set(QueryName.__args__)  # type: ignore[attr-defined]


def sources() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        found.append((relative, ast.parse(path.read_text(), relative)))
    return found


def query_calls(relative: str, tree: ast.Module) -> list[str]:
    """``x.all("name", ...)`` and the like, outside the rooms that may."""
    if relative.split("/")[0] in MAY_RUN_QUERIES:
        return []
    return [
        f"{relative}:{node.lineno} runs {node.args[0].value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in QUERY_RUNNERS
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in QUERY_NAMES
    ]


def private_imports(relative: str, tree: ast.Module) -> list[str]:
    return [
        f"{relative}:{node.lineno} imports {alias.name} from {node.module}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_only_the_board_and_the_store_run_named_queries() -> None:
    assert [hit for rel, tree in sources() for hit in query_calls(rel, tree)] == []


def test_no_module_imports_another_modules_private_names() -> None:
    assert [hit for rel, tree in sources() for hit in private_imports(rel, tree)] == []


@pytest.mark.parametrize(
    ("relative", "code", "check"),
    [
        ("commands/setup.py", "board.store.one('current_board')", query_calls),
        ("web/app.py", "from ..board.core import _secret", private_imports),
    ],
)
def test_each_rule_catches_an_injected_violation(relative: str, code: str, check: object) -> None:
    tree = ast.parse((PACKAGE / relative).read_text() + "\n" + code + "\n")
    assert callable(check)
    assert check(relative, tree) != []
