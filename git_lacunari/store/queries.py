"""Load a dialect's SQL from ``sql/<dialect>/`` (the layout: sql/README.md).

- ``NNNN_*.sql``: the migrations, in order; never edited once released.
- ``functions/*.sql``: CREATE OR REPLACE (SQLite: DROP and CREATE), applied
  in file-name order after the migrations whenever a board reaches the
  latest version: the one place a function, trigger or view body lives.
- ``queries/*.sql``: the named queries (``-- name: X`` blocks), split by
  concern into files; one namespace per dialect. ``{{X}}`` inlines the block
  named X, from any file of the dialect.

Every name is a :data:`QueryName` (store/query_names.py), so mypy refuses a
call of a name that does not exist; tests/test_queries.py holds the SQL and
that list to each other, across both dialects and every call in the code.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from ..shipped import shipped

NAME_LINE = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)
FRAGMENT = re.compile(r"\{\{(\w+)\}\}")
MIGRATION = re.compile(r"^(\d{4})_\w+\.sql$")
QUERIES = "queries"
FUNCTIONS = "functions"
# A file of queries/ that one dialect alone has, and why; every other file
# exists in both with the same names (tests/test_queries.py).
DIALECT_ONLY = {
    "team.sql": "postgres",  # team mode: roles and row-level security are PostgreSQL's
}

SQL_DIR = shipped("sql")


def _sql_files(dialect: str, folder: str) -> list[Path]:
    where = SQL_DIR / dialect / folder
    return sorted(where.glob("*.sql")) if where.is_dir() else []


def _strip_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


def named_blocks(dialect: str, filename: str) -> dict[str, str]:
    """The raw ``-- name: X`` blocks of one file of ``queries/``, comments
    stripped, fragments not inlined."""
    parts = NAME_LINE.split((SQL_DIR / dialect / QUERIES / filename).read_text("utf-8"))
    names = parts[1::2]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"sql/{dialect}/{QUERIES}/{filename} names {duplicated} twice")
    return {parts[i]: _strip_comments(parts[i + 1]).strip() for i in range(1, len(parts), 2)}


def query_files(dialect: str) -> dict[str, list[str]]:
    """File name -> the names it defines, for every file of ``queries/``."""
    return {
        path.name: list(named_blocks(dialect, path.name)) for path in _sql_files(dialect, QUERIES)
    }


@functools.cache
def load_queries(dialect: str) -> dict[str, str]:
    """Every named block of the dialect's ``queries/``, fragments inlined."""
    raw: dict[str, str] = {}
    for path in _sql_files(dialect, QUERIES):
        blocks = named_blocks(dialect, path.name)
        clash = sorted(raw.keys() & blocks.keys())
        if clash:
            raise ValueError(f"sql/{dialect}/{QUERIES}/{path.name} repeats {clash} of another file")
        raw.update(blocks)

    def expand(sql: str) -> str:
        return FRAGMENT.sub(lambda m: expand(raw[m.group(1)]), sql)

    return {name: expand(sql) for name, sql in raw.items()}


def migrations(dialect: str) -> list[tuple[int, str, str]]:
    """``(version, filename, sql)`` of every numbered migration, in order."""
    found = []
    for entry in (SQL_DIR / dialect).iterdir():
        match = MIGRATION.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text("utf-8")))
    return sorted(found)


def functions(dialect: str) -> str:
    """The dialect's ``functions/`` as one script, its files in name order."""
    return "\n".join(path.read_text("utf-8") for path in _sql_files(dialect, FUNCTIONS))


def latest_version(dialect: str) -> int:
    return migrations(dialect)[-1][0]
