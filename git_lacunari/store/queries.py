"""Load the named queries and migrations of a dialect from ``sql/<dialect>/``.

Two files of named blocks per dialect: ``queries.sql``, the board's
vocabulary, and ``store.sql``, the store's own machinery (version table,
migration lock, session locks, the work channel). Both dialects define the
same names in each (tests/test_store.py); a fragment of either file may be
inlined in the other.
"""

from __future__ import annotations

import functools
import re

from ..shipped import shipped

NAME_LINE = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)
FRAGMENT = re.compile(r"\{\{(\w+)\}\}")
MIGRATION = re.compile(r"^(\d{4})_\w+\.sql$")
NAMED_FILES = ("queries.sql", "store.sql")

SQL_DIR = shipped("sql")


def _sql_text(dialect: str, filename: str) -> str:
    return (SQL_DIR / dialect / filename).read_text("utf-8")


def _strip_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


def named_blocks(dialect: str, filename: str) -> dict[str, str]:
    """The raw ``-- name: X`` blocks of one file, comments stripped, fragments not inlined."""
    parts = NAME_LINE.split(_sql_text(dialect, filename))
    names = parts[1::2]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"sql/{dialect}/{filename} names {duplicated} twice")
    return {parts[i]: _strip_comments(parts[i + 1]).strip() for i in range(1, len(parts), 2)}


@functools.cache
def load_queries(dialect: str) -> dict[str, str]:
    """Every named block of the dialect's files, fragments inlined."""
    raw: dict[str, str] = {}
    for filename in NAMED_FILES:
        blocks = named_blocks(dialect, filename)
        clash = sorted(raw.keys() & blocks.keys())
        if clash:
            raise ValueError(f"sql/{dialect}/{filename} repeats {clash} of another file")
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


def fresh_schema(dialect: str) -> str:
    return _sql_text(dialect, "schema.sql")


def latest_version(dialect: str) -> int:
    return migrations(dialect)[-1][0]
