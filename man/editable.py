"""The editable install's build step (``pip install -e .``; pyproject.toml's
``[tool.setuptools.cmdclass]``). setuptools installs no data files in editable
mode, so ``man git-lac``, which is what ``git lac --help`` runs, found no page
there: this installs them as a regular install does (``share/man/man1``)."""

from __future__ import annotations

from setuptools.command.editable_wheel import editable_wheel


class EditableWithData(editable_wheel):  # type: ignore[misc]
    def _run_install(self, category: str) -> None:
        super()._run_install(category)
        if category == "data" and self.distribution.has_data_files():
            self.run_command("install_data")
