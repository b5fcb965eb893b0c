"""The overlap rule on the server (sql/postgres/functions/overlap.sql) says what
git_lacunari/paths.py says: lac_covers = paths.covers, lac_overlap =
paths.overlap, lac_index_key = paths.index_key, lac_ancestor_keys =
paths.ancestor_keys, lac_head = paths.head, lac_lower / lac_casefold =
str.lower / str.casefold; and the indexed path (lac_require_free_all, which
compares a pattern only with the locks lac_locks_head finds) refuses exactly
when comparing every pair says so.

A Hypothesis property compares them on generated patterns and paths, many
pairs per round trip; examples pin every wildmatch feature; a pathological
pattern shows the cost is polynomial."""

from __future__ import annotations

import unicodedata
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_lacunari import casemap, paths
from git_lacunari.errors import BadPath
from git_lacunari.store.postgres import PostgresStore

from .conftest import pg_schema

Conn = psycopg.Connection[tuple[Any, ...]]


@pytest.fixture(scope="module")
def db(pg_server: str) -> Iterator[Conn]:
    """A connection whose search_path is a freshly migrated board."""
    with pg_schema(pg_server) as url:
        store = PostgresStore(url)
        store.migrate(create=True)
        store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            yield conn


def sql_rule(db: Conn, triples: list[tuple[str, str, str]]) -> list[list[bool]]:
    """For each (a, b, path): covers(a, path) and overlap(a, b), each case-sensitive
    and not, in one round trip."""
    row = db.execute(
        "SELECT array_agg(ARRAY[lac_covers(a, p, false), lac_covers(a, p, true),"
        " lac_overlap(a, b, false), lac_overlap(a, b, true)] ORDER BY o)"
        " FROM unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS u(a, b, p, o)",
        ([t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples]),
    ).fetchone()
    assert row is not None
    return list(row[0])


def py_rule(a: str, b: str, path: str) -> list[bool]:
    return [
        paths.covers(a, path, False),
        paths.covers(a, path, True),
        paths.overlap(a, b, False),
        paths.overlap(a, b, True),
    ]


# --- the property -----------------------------------------------------------------

TOKENS = [
    "*", "**", "***", "?", "/", ".", "-", "a", "b", "c", "x", "A", "B", "C", "X",
    "\u00e9", "\u00c9", "\u03a3", "\u03c3", "\u03c2", "\u0130", "i", "\u00df",
    "**/", "/**", "\\", "\\*", "\\a", "[", "]",
    "[a-c]", "[A-C]", "[!x]", "[^a]", "[]a]", "[!]b]", "[a-]", "[\\]]", "[!/]", "[/]",
    "[c-a]", "[\u00c0-\u00d6]", "[\u00e0-\u00f6]", "[\u03a3]", "[\u0130]", "[.-0]",
    "[[:alpha:]]", "[!a-zA-Z]", "[a-\\]",
]  # fmt: skip
PATH_CHARS = "abcxABCX/.-[]*?\\\u00e9\u00c9\u03a3\u03c3\u03c2\u0130i\u0307\u00df"

# Common heads: the SQL drops a shared literal head before building automata.
HEADS = st.sampled_from(["", "", "src/", "a/", "a/b/", "A/", "src/a"])
pattern_st = st.builds(
    lambda head, tokens: head + "".join(tokens),
    HEADS,
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=7),
)
path_st = st.builds(lambda head, tail: head + tail, HEADS, st.text(alphabet=PATH_CHARS, max_size=9))


def normalized(pattern: str) -> str:
    try:
        return paths.normalize(pattern)
    except BadPath:
        return pattern


@settings(
    max_examples=30,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(batch=st.lists(st.tuples(pattern_st, pattern_st, path_st), min_size=60, max_size=60))
def test_sql_agrees_with_python(db: Conn, batch: list[tuple[str, str, str]]) -> None:
    # Raw patterns (a superset of what reaches the board) and their normalized form.
    triples = batch + [(normalized(a), normalized(b), p) for a, b, p in batch]
    got = sql_rule(db, triples)
    for (a, b, path), answer in zip(triples, got, strict=True):
        assert answer == py_rule(a, b, path), (a, b, path)
    keys = [a for a, _, _ in triples]
    row = db.execute(
        "SELECT array_agg(lac_index_key(k) ORDER BY o), array_agg(array_to_json("
        "lac_ancestor_keys(lac_index_key(k)))::text ORDER BY o)"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS u(k, o)",
        (keys,),
    ).fetchone()
    assert row is not None
    import json

    assert row[0] == [paths.index_key(k) for k in keys]
    heads = db.execute(
        "SELECT array_agg(lac_head(k) ORDER BY o), array_agg(array_to_json("
        "lac_head_prefixes(lac_head(k)))::text ORDER BY o)"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS u(k, o)",
        (keys,),
    ).fetchone()
    assert heads is not None
    assert heads[0] == [paths.head(k) for k in keys]
    assert [json.loads(x) for x in heads[1]] == [
        [paths.head(k)[:i] for i in range(len(paths.head(k)) + 1)] for k in keys
    ]
    assert [json.loads(x) for x in row[1]] == [
        paths.ancestor_keys(paths.index_key(k)) for k in keys
    ]


# --- the indexed path: lac_require_free_all against every pair ------------------


def valid(pattern: str) -> bool:
    try:
        return paths.normalize(pattern) == pattern
    except BadPath:
        return False


@settings(
    max_examples=25,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    held=st.lists(st.tuples(pattern_st.filter(valid), st.booleans()), max_size=10),
    wanted=st.lists(st.tuples(pattern_st.filter(valid), st.booleans()), min_size=1, max_size=6),
    folds=st.booleans(),
)
def test_indexed_check_agrees_with_every_pair(
    db: Conn, held: list[tuple[str, bool]], wanted: list[tuple[str, bool]], folds: bool
) -> None:
    """Team mode's check finds its candidates through the head index; the
    first conflict it reports is the first that comparing every wanted
    pattern (in order) with every held lock (by id) finds."""
    with db.transaction():
        db.execute("DELETE FROM lac_locks")
        db.execute(
            "INSERT INTO lac_settings (name, value) VALUES ('case', %s)"
            " ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
            ("fold" if folds else "exact",),
        )
        ids = [
            row[0]
            for pattern, write in held
            for row in db.execute(
                "INSERT INTO lac_locks (pattern, key, mode, agent, acquired_at, instance)"
                " VALUES (%s, %s, %s, 'other', 0, 'there') RETURNING id",
                (pattern, paths.index_key(pattern), "w" if write else "r"),
            ).fetchall()
        ]
    first = next(
        (
            (w, h)
            for w, w_write in wanted
            for (h, h_write), _ in sorted(zip(held, ids, strict=True), key=lambda x: x[1])
            if (w_write or h_write) and paths.overlap(h, w, folds)
        ),
        None,
    )
    import json

    locks = json.dumps([{"pattern": w, "mode": "w" if write else "r"} for w, write in wanted])
    try:
        db.execute("SELECT lac_require_free_all('me', 'here', %s::jsonb, NULL)", (locks,))
        got = None
    except psycopg.Error as exc:
        assert exc.sqlstate == "LAC01", exc
        assert exc.diag.message_detail is not None
        detail = json.loads(exc.diag.message_detail)
        got = (detail["path"], detail["pattern"])
    assert got == first


def test_head_end_bounds_exactly_the_heads_below(db: Conn) -> None:
    """lac_head_end(h): every text starting with h sorts before it (in
    COLLATE "C"), and no other text above h does; U+10FFFF in a head (a
    character patterns may hold) does not hide a lock from the range."""
    top = "\U0010ffff"
    cases = {
        "a": "b",
        "d/a": "d/b",
        "d/a" + top: "d/b",
        top + top: None,
        "": None,
        "x\ud7ff": "x\ue000",
        "\u00e9": "\u00ea",
    }
    row = db.execute(
        "SELECT array_agg(lac_head_end(h) ORDER BY o)"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS u(h, o)",
        (list(cases),),
    ).fetchone()
    assert row is not None and row[0] == list(cases.values())
    with db.transaction():
        db.execute("DELETE FROM lac_locks")
        db.execute(
            "INSERT INTO lac_locks (pattern, key, mode, agent, acquired_at, instance)"
            " VALUES (%s, 'd/', 'w', 'other', 0, 'there')",
            ("d/a" + top + "b*",),
        )
    assert paths.overlap("d/a*", "d/a" + top + "b*")
    with pytest.raises(psycopg.Error) as refused:
        db.execute(
            "SELECT lac_require_free_all('me', 'here', %s::jsonb, NULL)",
            ('[{"pattern": "d/a*", "mode": "w"}]',),
        )
    assert refused.value.sqlstate == "LAC01"


# --- examples: every wildmatch feature --------------------------------------------

COVERS = [
    # (pattern, path, ignorecase, covered)
    ("src", "src", False, True),
    ("src", "src/a.py", False, True),
    ("src/", "src/a/b.py", False, True),
    ("src", "srcx", False, False),
    ("src/", "src", False, True),
    ("Src", "src/a", True, True),
    ("Src", "src/a", False, False),
    ("*.py", "a.py", False, True),
    ("*.py", "d/a.py", False, False),  # * never crosses /
    ("d/*", "d/a/b", False, True),  # ...but covering d/a covers below it
    ("?.py", "a.py", False, True),
    ("?.py", "ab.py", False, False),
    ("?", "/", False, False),
    ("**", "a/b/c", False, True),
    ("**/x", "x", False, True),  # zero directories
    ("**/x", "a/b/x", False, True),
    ("a/**/x", "a/x", False, True),
    ("a/**/x", "a/b/c/x", False, True),
    ("a/**/x", "ax", False, False),
    ("a/**", "a/b", False, True),
    ("a/**", "a", False, False),
    ("a**b", "a/b", False, False),  # not a whole component: one level
    ("a**b", "axxb", False, True),
    ("[a-c].py", "b.py", False, True),
    ("[a-c].py", "d.py", False, False),
    ("[!a-c].py", "d.py", False, True),
    ("[^a-c].py", "a.py", False, False),
    ("[!x]", "/", False, False),  # a class never matches /
    ("[]a]", "]", False, True),  # ] first is literal
    ("[!]a]", "]", False, False),
    ("[a-]", "-", False, True),
    ("[\\]]", "]", False, True),
    ("[ab", "[ab", False, True),  # unterminated: [ is literal
    ("\\*", "*", False, True),
    ("\\*", "a", False, False),
    ("[[:alpha:]]", "a]", False, True),  # no named classes: [[:alph] then ]
    ("[[:alpha:]]", "b", False, False),
    ("[A-C]x", "bX", True, True),
    ("[a-c]x", "BX", True, True),
    ("\u00c9cole/*", "\u00e9cole/a", True, True),
    ("\u00c9cole/*", "\u00e9cole/a", False, False),
    ("[\u00c0-\u00d6]", "\u00e9", True, True),  # lowered: [\u00e0-\u00f6]
    ("\u0130*", "i\u0307x", True, True),  # U+0130 lowers to two characters
    ("a\u03a3", "a\u03c2", True, True),  # final sigma: lowered to \u03c2
    ("*\u03a3", "a\u03c2", True, False),  # after "*" it is not final: \u03c3
    ("*\u03a3b", "a\u03c3b", True, True),
]
OVERLAP = [
    # (a, b, ignorecase, overlap)
    ("src/", "src/a.py", False, True),
    ("src/a.py", "src/b.py", False, False),
    ("src/*.py", "src/a.py", False, True),
    ("src/*.py", "src/a/b.py", False, False),
    ("src/*", "src/a/b.py", False, True),  # src/a is covered, so below it
    ("*.py", "*.txt", False, False),
    ("*.py", "a*", False, True),
    ("**/*.py", "docs/**", False, True),
    ("a/**/b", "a/*/b", False, True),
    ("a/?/b", "a/xx/b", False, False),
    ("[a-c]*", "[d-f]*", False, False),
    ("[a-c]*", "[c-f]*", False, True),
    ("[!a]", "a", False, False),
    ("[!a]", "[!b]", False, True),
    ("[!a-z]", "[a-z]", False, False),
    ("[!a-c]", "[a-d]", False, True),  # d
    ("[/]x", "**", False, False),  # an empty class matches nothing
    ("Src/", "src/a", True, True),
    ("Src/", "src/a", False, False),
    ("*.PY", "a.py", True, True),
    ("\\*", "[*]", False, True),
    ("\u00c9*", "\u00e9t\u00e9", True, True),
]


def test_examples(db: Conn) -> None:
    rows = db.execute(
        "SELECT array_agg(lac_covers(a, b, ic) ORDER BY o)"
        " FROM unnest(%s::text[], %s::text[], %s::bool[]) WITH ORDINALITY AS u(a, b, ic, o)",
        ([c[0] for c in COVERS], [c[1] for c in COVERS], [c[2] for c in COVERS]),
    ).fetchone()
    assert rows is not None
    for (pattern, path, ic, want), got in zip(COVERS, rows[0], strict=True):
        assert paths.covers(pattern, path, ic) == want, ("python", pattern, path, ic)
        assert got == want, ("sql", pattern, path, ic)
    rows = db.execute(
        "SELECT array_agg(ARRAY[lac_overlap(a, b, ic), lac_overlap(b, a, ic)] ORDER BY o)"
        " FROM unnest(%s::text[], %s::text[], %s::bool[]) WITH ORDINALITY AS u(a, b, ic, o)",
        ([c[0] for c in OVERLAP], [c[1] for c in OVERLAP], [c[2] for c in OVERLAP]),
    ).fetchone()
    assert rows is not None
    for (a, b, ic, want), got in zip(OVERLAP, rows[0], strict=True):
        assert paths.overlap(a, b, ic) == want, ("python", a, b, ic)
        assert got == [want, want], ("sql", a, b, ic)


def test_strict_null_and_empty(db: Conn) -> None:
    row = db.execute(
        "SELECT lac_overlap(NULL, 'a', false), lac_covers('a', NULL, true),"
        " lac_covers('*', '', false), lac_overlap('', 'x', false), lac_index_key('')"
    ).fetchone()
    assert row == (None, None, paths.covers("*", ""), paths.overlap("", "x"), "")


HOSTILE = [
    ("*a" * 120 + "*b", "a" * 300 + "c"),  # many stars: backtracking would never end
    ("*a" * 120 + "*b", "*a" * 120 + "*c"),
    ("**/" * 60 + "x", "a/" * 100 + "y"),
    ("[" * 200, "[" * 200 + "/x"),  # unterminated classes: all literal
    ("[\u0001-\U0010ffff]" * 3, "[!\u0001-\U0010ffff]*"),  # huge ranges, capped
    ("[!\u0001-\uffff][!\U00010000-\U0010ffff]", "??"),
    ("a/" * 300 + "*", "a/" * 299 + "a/b"),  # a long pattern
]


def test_pathological_patterns_cost_polynomial_time(db: Conn) -> None:
    """A backtracking matcher takes exponential time on ``*a*a*a...*b`` against
    ``aaaa...c``; the product search visits each pair of states once. The
    statement timeout only turns "forever" into a failure."""
    db.execute("SET statement_timeout = '20s'")
    try:
        row = db.execute(
            "SELECT array_agg(ARRAY[lac_overlap(a, b, false), lac_covers(a, b, true)] ORDER BY o)"
            " FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS u(a, b, o)",
            ([h[0] for h in HOSTILE], [h[1] for h in HOSTILE]),
        ).fetchone()
    finally:
        db.execute("RESET statement_timeout")
    assert row is not None
    for (a, b), got in zip(HOSTILE, row[0], strict=True):
        assert got == [paths.overlap(a, b), paths.covers(a, b, True)], (a[:40], b[:40])


# --- case folding -----------------------------------------------------------------


def _interesting_chars() -> list[str]:
    """Every character str.lower or str.casefold changes, every Cased or
    Case_Ignorable one (the Final_Sigma context), and every 251st other."""
    t = casemap.tables()
    chosen = set(t.lower) | set(t.fold) | set(t.fold_long) | {casemap.DOTTED_I}
    for lo, hi in [*t.cased, *t.ignorable]:
        chosen.update(chr(c) for c in range(lo, hi + 1))
    chars = casemap._chars()
    chosen.update(chars[::251])
    return sorted(chosen)


def test_lower_and_casefold_agree_with_python(db: Conn) -> None:
    chars = _interesting_chars()
    sigma = casemap.SIGMA
    t = casemap.tables()
    context = [chr(c) for lo, hi in [*t.cased, *t.ignorable] for c in range(lo, hi + 1)]
    context += chars[::7]
    words = [
        *chars,
        *(c + sigma for c in context),
        *("A" + c + sigma for c in context),
        *("A" + sigma + c for c in context),
        "".join(c for c in chars if c != sigma),
        sigma,
        "A" + sigma * 3,
        f"{sigma}A{sigma}.{sigma}",
        "x/\u0130\u03a3/" + sigma,
    ]
    row = db.execute(
        "SELECT array_agg(lac_lower(w) ORDER BY o), array_agg(lac_casefold(w) ORDER BY o)"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS u(w, o)",
        (words,),
    ).fetchone()
    assert row is not None
    lowered, folded = row
    bad_lower = [w for w, got in zip(words, lowered, strict=True) if got != w.lower()]
    bad_fold = [w for w, got in zip(words, folded, strict=True) if got != w.casefold()]
    assert bad_lower == [] and bad_fold == []


def test_generated_case_functions_are_current() -> None:
    """functions/casemap.sql holds what git_lacunari.casemap generates
    (`python -m git_lacunari.casemap --write` rewrites it), and only it."""
    assert [p.name for p in casemap.targets()] == ["casemap.sql"]
    assert all(p.parent.name == "functions" for p in casemap.targets())
    block = casemap.generate()
    for target in casemap.targets():
        text = target.read_text("utf-8")
        header = text[text.index(casemap.BEGIN) :].split("\n", 1)[0]
        if f"(Unicode {unicodedata.unidata_version})" not in header:
            pytest.skip(f"{target.name} is generated for another Unicode version: {header}")
        assert block in text, f"{target} is stale: run python -m git_lacunari.casemap --write"


# --- the functions as a SECURITY DEFINER function sees them ------------------------


def test_declared_immutable_strict_parallel_safe_with_a_pinned_search_path(db: Conn) -> None:
    rows = db.execute(
        "SELECT proname, provolatile, proisstrict, proparallel, proconfig FROM pg_proc"
        " WHERE pronamespace = current_schema()::regnamespace AND proname = ANY (%s)",
        (["lac_covers", "lac_overlap", "lac_wildmatch", "lac_index_key"],),
    ).fetchall()
    assert len(rows) == 4
    for name, volatile, strict, parallel, config in rows:
        assert (volatile, strict, parallel) == ("i", True, "s"), name
        assert any(c.startswith("search_path=") for c in config or []), name


def test_a_hostile_search_path_cannot_change_the_answer(db: Conn) -> None:
    """Called with an attacker's schema first on the search_path (one holding
    its own lac_lower and lac_wildmatch), the board's functions still use the
    board's own: their search_path is pinned."""
    board = db.execute("SELECT current_schema()").fetchone()
    assert board is not None
    evil = "lac_evil_" + uuid.uuid4().hex[:10]
    db.execute(f'CREATE SCHEMA "{evil}"')
    try:
        db.execute(
            f'CREATE FUNCTION "{evil}".lac_lower(s text) RETURNS text'
            " LANGUAGE sql AS $$ SELECT 'x' $$"
        )
        db.execute(
            f'CREATE FUNCTION "{evil}".lac_wildmatch(a text, b text, i boolean, o boolean)'
            " RETURNS boolean LANGUAGE sql AS $$ SELECT false $$"
        )
        db.execute(f'SET search_path = "{evil}", "{board[0]}"')
        row = db.execute(
            f"SELECT \"{board[0]}\".lac_overlap('A/*', 'a/b', true),"
            f" \"{board[0]}\".lac_covers('A*', 'ab', true)"
        ).fetchone()
        assert row == (True, True)
    finally:
        db.execute(f'SET search_path = "{board[0]}"')
        db.execute(f'DROP SCHEMA "{evil}" CASCADE')
