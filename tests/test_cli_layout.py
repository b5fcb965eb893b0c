"""The command line's floor plan (issue 20): click only in cli/, verbs
imported only when invoked, one board (one connection) per command, closed
when it returns, and a public API that costs nothing until it is used."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from git_lacunari.cli import cli
from git_lacunari.cli.registry import COMMANDS

from .conftest import lac_inprocess

PACKAGE = Path(__file__).resolve().parent.parent / "git_lacunari"
README = PACKAGE.parent / "README.md"


def _walk(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    ctx = click.Context(group)
    found: list[tuple[tuple[str, ...], Any]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append(((*prefix, name), command))
        if isinstance(command, click.Group):
            found += _walk(command, (*prefix, name))
    return found


def test_every_command_has_help_text_and_is_in_the_readme() -> None:
    readme = README.read_text()
    every = _walk(cli)
    assert len(every) >= 36
    for path, command in every:
        assert (command.help or "").strip(), f"git lac {' '.join(path)} has no --help text"
        assert f"git lac {' '.join(path)}" in readme, f"README does not mention {path}"


def test_the_registry_names_each_command_by_its_own_name() -> None:
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name


def _imported_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_a_command_imports_only_its_own_family(repo: Path) -> None:
    code = (
        "import os, contextlib, io\n"
        f"os.chdir({str(repo)!r})\n"
        "from git_lacunari.cli import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert run(['whoami']) == 0\n"
    )
    modules = _imported_after(code)
    families = {m for m in modules if m.startswith("git_lacunari.cli.")}
    assert families == {
        "git_lacunari.cli.options",
        "git_lacunari.cli.registry",
        "git_lacunari.cli.whoami",
    }
    assert "git_lacunari.web" not in modules and "git_lacunari.reconcile" not in modules


def test_the_public_api_is_lazy_and_the_hook_path_has_no_click() -> None:
    modules = _imported_after("import git_lacunari; git_lacunari.__version__")
    assert not {"click", "git_lacunari.board", "psycopg"} & modules
    modules = _imported_after("from git_lacunari import views, edge, session, guard, commands")
    assert "click" not in modules


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


@pytest.mark.parametrize("layer", ["commands", "views"])
def test_commands_and_views_import_no_click_and_nothing_above_them(layer: str) -> None:
    for path in sorted((PACKAGE / layer).glob("*.py")):
        imported = _imports(path)
        assert not {i for i in imported if i.split(".")[0] == "click"}, path
        assert not {i for i in imported if i.lstrip(".").startswith("cli")}, path
        if layer == "views":
            assert not {i for i in imported if i.lstrip(".").startswith("commands")}, path


def test_completion_does_not_import_the_command_line_root() -> None:
    """The old cli.py <-> completion.py cycle: the script is made from the
    root of the command that asks for it."""
    imported = _imports(PACKAGE / "cli" / "completion.py")
    assert ".." not in imported and "git_lacunari.cli" not in imported
    assert "." not in imported


def test_one_command_opens_one_board_and_closes_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_lacunari import store as store_module

    assert lac_inprocess(repo, "init").code == 0
    real = store_module.open_store
    opened: list[Any] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        opened.append(real(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(store_module, "open_store", counting)
    for args in (
        ["task", "add", "one", "--write", "core/"],
        ["claim", "1"],
        ["status"],
        ["show", "1"],
        ["locks"],
        ["done", "1"],
    ):
        opened.clear()
        result = lac_inprocess(repo, *args)
        assert result.code == 0, (args, result.err)
        assert len(opened) == 1, args
        with pytest.raises(Exception, match="closed"):
            opened[0].conn.execute("select 1")


def test_open_board_is_the_public_front_door(repo: Path) -> None:
    import git_lacunari as lac

    assert lac_inprocess(repo, "init").code == 0
    board = lac.open_board(repo, as_name="bot-1")
    try:
        task = board.add_task("via the API", writes=["core/"])
        got = board.claim(task.id)
        assert isinstance(got, lac.Claim) and isinstance(got.task, lac.Task)
        assert got.task.owner == "bot-1"
        with pytest.raises(lac.Refused):
            lac.open_board(repo, as_name="bot-2").claim(task.id)
    finally:
        board.store.close()
    shown = lac_inprocess(repo, "show", "1", "--json").json["task"]
    assert shown["owner"] == "bot-1"
    with pytest.raises(AttributeError):
        lac.no_such_name  # noqa: B018


def test_a_session_opens_its_board_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """However often a command (and the workflows it calls: guard, reconcile)
    asks for the board, one connection; a thread's board is its own."""
    from git_lacunari.session import Session

    assert lac_inprocess(repo, "init").code == 0
    monkeypatch.chdir(repo)
    with Session(None, defer_touch=True) as session:
        first = session.board()
        assert session.board() is first
        own = session.new_board(touch=False)
        assert own is not first
        own.store.close()
    with pytest.raises(Exception, match="closed"):
        first.store.conn.execute("select 1")  # type: ignore[attr-defined]
