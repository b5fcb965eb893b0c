"""Load the named queries and migrations of a dialect from ``sql/<dialect>/``."""

from __future__ import annotations

import functools
import re
from pathlib import Path

NAME_LINE = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)
FRAGMENT = re.compile(r"\{\{(\w+)\}\}")
MIGRATION = re.compile(r"^(\d{4})_\w+\.sql$")


# Plain files beside the code (shipped as package data): importlib.resources
# would cost the hook path several milliseconds of imports for nothing.
SQL_DIR = Path(__file__).resolve().parent.parent / "sql"


def _sql_text(dialect: str, filename: str) -> str:
    return (SQL_DIR / dialect / filename).read_text("utf-8")


def _strip_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


@functools.cache
def load_queries(dialect: str) -> dict[str, str]:
    """Every ``-- name: X`` block of ``queries.sql``, fragments inlined."""
    text = _sql_text(dialect, "queries.sql")
    parts = NAME_LINE.split(text)
    raw = {parts[i]: _strip_comments(parts[i + 1]).strip() for i in range(1, len(parts), 2)}

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


def fresh_schema(dialect: str) -> str:
    return _sql_text(dialect, "schema.sql")


def latest_version(dialect: str) -> int:
    return migrations(dialect)[-1][0]
