"""Where the files that ship beside the code are: ``sql/`` and ``hooks/``.

In the repository they sit at the top level, beside ``git_lacunari/`` (the
repository's layout). The wheel maps them into the package
(``[tool.setuptools] package-dir`` in pyproject.toml), so an installed copy
finds them inside itself, and a source checkout or an editable install finds
them beside it. Plain path checks, not importlib.resources: the hook path would
pay several milliseconds of imports for nothing.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent

# Top-level folder -> its name inside an installed package. `hooks` cannot keep
# its name there: git_lacunari/hooks.py is the installer's module.
INSIDE = {"sql": "sql", "hooks": "hook_scripts"}


def shipped(folder: str) -> Path:
    """The directory of ``folder`` (``sql`` or ``hooks``) for this copy of the code."""
    installed = PACKAGE / INSIDE[folder]
    return installed if installed.is_dir() else PACKAGE.parent / folder
