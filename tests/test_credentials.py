"""No password is ever written to git config or printed.

A board URL carrying a password is refused by `init` (choice: refused, not
stripped; a stripped URL would fail later, further from the cause) with a
one-line pointer to libpq's own means; every message that shows a URL
redacts a password in any spelling it can take.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from git_lacunari.store import has_password, redact

from .conftest import git, lac_inprocess, pg_schema

SECRET = "s3cret-Pw-91"


def everything_said(repo: Path, *results: object) -> str:
    config = (repo / ".git" / "config").read_text()
    return config + "".join(f"{r.out}{r.err}" for r in results)  # type: ignore[attr-defined]


def with_password(server: str, how: str) -> str:
    parts = urlsplit(server)
    if how == "userinfo":
        user = parts.username or "postgres"
        host = parts.netloc.rsplit("@", 1)[-1]
        return parts._replace(netloc=f"{user}:{quote(SECRET)}@{host}").geturl()
    sep = "&" if "?" in server else "?"
    return f"{server}{sep}password={SECRET}"


@pytest.mark.parametrize("how", ["userinfo", "query"])
def test_init_refuses_a_url_with_a_password_and_stores_nothing(
    repo: Path, pg_server: str, how: str
) -> None:
    url = with_password(pg_server, how)
    result = lac_inprocess(repo, "init", "--url", url)
    assert result.code == 2, result
    message = result.err.strip()
    assert len(message.splitlines()) == 1, message
    for pointer in ("PGPASSWORD", "~/.pgpass", "service"):
        assert pointer in message
    assert "***" in message
    as_json = lac_inprocess(repo, "init", "--url", url, "--json")
    assert as_json.code == 2 and as_json.json["error"]["kind"] == "invalid_input"
    assert SECRET not in everything_said(repo, result, as_json)
    assert "lac.url" not in git(repo, "config", "--list")


def test_a_service_file_and_pgpassword_work_and_never_show(
    repo: Path, pg_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = urlsplit(pg_server)
    with pg_schema(pg_server) as board:
        schema = board.rsplit("search_path%3D", 1)[-1]
        service = tmp_path / "pg_service.conf"
        service.write_text(
            f"[lacsvc]\nhost={parts.hostname}\nport={parts.port or 5432}\n"
            f"dbname={parts.path.lstrip('/')}\nuser={parts.username or 'postgres'}\n"
            f"password={SECRET}\n"
        )
        monkeypatch.setenv("PGSERVICEFILE", str(service))
        monkeypatch.setenv("PGPASSWORD", SECRET + "-env")
        url = "postgresql://?service=lacsvc"
        said = [
            lac_inprocess(repo, "init", "--url", url, "--board", schema),
            lac_inprocess(repo, "init", "--url", url, "--board", schema, "--json"),
            lac_inprocess(repo, "task", "add", "one", "--write", "README", "--json"),
            lac_inprocess(repo, "claim", "1"),
            lac_inprocess(repo, "locks", "--json"),
            lac_inprocess(repo, "whoami", "--json"),
        ]
        assert [r.code for r in said] == [0] * len(said), [r.err for r in said]
        assert said[1].json["url"] == url and said[1].json["board"] == schema
        assert git(repo, "config", "lac.url").strip() == "postgresql://?service=lacsvc"
        assert SECRET not in everything_said(repo, *said)


def test_messages_redact_a_stored_password_in_every_spelling(repo: Path) -> None:
    # A URL written by hand (or by an older version) into git config: the
    # board is unreachable, and the message says where without the secret.
    url = f"postgresql://u:{SECRET}@127.0.0.1:1/db?sslmode=disable&password={SECRET}x"
    git(repo, "config", "lac.url", url)
    for args in (["tasks"], ["tasks", "--json"], ["claim", "1"]):
        result = lac_inprocess(repo, *args, env={"LAC_TIMEOUT": "2"})
        assert result.code == 3, result
        assert "127.0.0.1:1" in result.out + result.err
        assert SECRET not in result.out + result.err


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://u:pw@h/db", "postgresql://u:***@h/db"),
        ("postgres://u:p%40w@h:5/db?x=1", "postgres://u:***@h:5/db?x=1"),
        # libpq reads the password up to the last "@": "?", "#" and "@" in it
        ("postgresql://u:pa?ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:pa#ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:pa@ss@h/db", "postgresql://u:***@h/db"),
        (
            "postgresql://h/db?password=pw&sslmode=require",
            "postgresql://h/db?password=***&sslmode=require",
        ),
        (
            "postgresql://h/db?sslmode=require&PASSWORD=pw",
            "postgresql://h/db?sslmode=require&PASSWORD=***",
        ),
        ("host=h password=pw dbname=d", "host=h password=*** dbname=d"),
        ("host=h password = 'p w' dbname=d", "host=h password = *** dbname=d"),
        ("postgresql://u@h/db?service=lac", "postgresql://u@h/db?service=lac"),
    ],
)
def test_redact_every_form(text: str, shown: str) -> None:
    assert redact(text) == shown
    assert has_password(text) == (text != shown)
