"""The layer contracts (pyproject's [tool.importlinter], run by .ci/run as
`lint-imports`) hold on this code, and each one demonstrably fails: a copy of
the package with one forbidden import injected breaks exactly that contract."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> tuple[int, dict[str, str]]:
    """Run lint-imports on the package under ``root``: its exit code, and
    each contract's verdict (KEPT or BROKEN) by name."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    verdicts = dict(re.findall(r"^(.+?) (KEPT|BROKEN)\b", proc.stdout, re.MULTILINE))
    return proc.returncode, verdicts


def copy_of_the_package(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    root.mkdir()
    shutil.copy(REPO_ROOT / "pyproject.toml", root)
    shutil.copytree(
        REPO_ROOT / "git_lacunari",
        root / "git_lacunari",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return root


CONTRACTS = {
    "leaves": "Leaves (errors, model, paths, identity, repo) import nothing above them",
    "store": "The store imports neither the board nor anything above it",
    "click": "Nothing below the CLI imports click, directly or through another module",
    "acyclic": "No import cycles between sibling modules",
}


def test_the_contracts_hold_on_this_code(tmp_path: Path) -> None:
    code, verdicts = lint_imports(copy_of_the_package(tmp_path))
    assert verdicts == {name: "KEPT" for name in CONTRACTS.values()}
    assert code == 0


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("paths.py", "from . import durations", "leaves"),  # render now reaches views
        ("store/base.py", "from .. import hooks", "store"),
        ("board/core.py", "import click", "click"),
        ("reconcile/merge.py", "from .. import views", "acyclic"),  # views render reconcile
    ],
)
def test_an_injected_violation_breaks_its_contract(
    tmp_path: Path, module: str, line: str, broken: str
) -> None:
    root = copy_of_the_package(tmp_path)
    target = root / "git_lacunari" / module
    text = target.read_text()
    # After the module's `from __future__` line, so the copy still imports.
    future = "from __future__ import annotations\n"
    assert future in text
    target.write_text(text.replace(future, f"{future}{line}  # injected\n", 1))
    code, verdicts = lint_imports(root)
    assert code == 1
    expected = {name: "KEPT" for name in CONTRACTS.values()}
    expected[CONTRACTS[broken]] = "BROKEN"
    assert verdicts == expected
