"""What a door does with input it did not expect (issue 22, a newcomer's
attack): a board URL naming no board, a damaged committed ``.lacconfig``,
odd identities, titles and durations. Each is one clear line, a documented
exit code, nothing written, no traceback. Real repositories, real hooks
fired by real ``git commit``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, git, lac_inprocess, lac_process
from .test_doors import clone, database, guarded_server, schemas, setup_clone
from .test_guard import head, run_git
from .test_server_guard import commit, write

__all__ = ["database"]  # a fixture, used by name

Lac = Callable[..., Result]

READ_ONLY = [
    ("tasks",),
    ("locks",),
    ("status",),
    ("check", "core/auth.py"),
    ("claim", "--next"),
    ("heartbeat", "1"),
    ("done", "1"),
    ("boards",),
    ("log",),
    ("ready",),
    ("show", "1"),
    ("sweep",),
    ("forecast",),
    ("keeper",),
]


def one_line(result: Result, code: int) -> str:
    assert result.code == code, result
    assert "Traceback" not in result.err, result.err
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    return lines[0]


@pytest.mark.parametrize("target", ["absent/dir/board.db", "board.db"])
def test_a_url_naming_no_board_is_never_created_but_by_init(
    repo: Path, tmp_path: Path, target: str
) -> None:
    board = tmp_path / "elsewhere" / target
    git(repo, "config", "lac.url", f"sqlite://{board}")
    for args in READ_ONLY:
        line = one_line(lac_inprocess(repo, *args), 3)
        assert line == f"git lac: no board at {board}: run `git lac init` first", args
    assert not (tmp_path / "elsewhere").exists()
    assert not (repo / ".git" / "lacunari" / "board.db").exists()
    # The hook does not make it either: it is an unreachable board, by policy.
    (repo / "README").write_text("changed\n")
    git(repo, "config", "lac.guard.offline", "refuse")
    assert lac_process(repo, "hooks", "install").code == 0
    proc = lac_process(repo, "guard", "pre-commit")
    assert proc.code != 0 and not (tmp_path / "elsewhere").exists()
    # Only init makes it; then every command uses it.
    assert lac_inprocess(repo, "init").code == 0
    assert board.is_file()
    assert lac_inprocess(repo, "tasks").code == 0


def test_the_embedded_board_is_still_made_on_first_use(repo: Path) -> None:
    assert lac_inprocess(repo, "tasks").code == 0
    assert (repo / ".git" / "lacunari" / "board.db").is_file()


# --- a committed .lacconfig that cannot say which board: fail closed ------------

DAMAGED = {
    "unclosed": "[lac\n",
    "no-value": "[lac]\n\tboard\n",
    "empty-value": "[lac]\n\tboard =\n",
    "misspelt-key": "[lac]\n\tbaord = shop\n",
    "two-boards": "[lac]\n\tboard = shop\n\tboard = other\n",
    "invalid-name": "[lac]\n\tboard = Drop;Table\n",
    "binary": "\xff\xfe[lac]\n",
}


@pytest.mark.parametrize("damage", sorted(DAMAGED))
def test_a_damaged_lacconfig_fails_closed_at_every_door(
    repo: Path, tmp_path: Path, database: str, damage: str
) -> None:
    assert lac_inprocess(repo, "init", "--url", database, "--board", "shop", "--share").code == 0
    git(repo, "commit", "-qm", "share the board", "--no-verify")
    assert lac_inprocess(repo, "lock", "core/auth.py", "--as", "dana").code == 0
    where = clone(repo, tmp_path / "clone")
    setup_clone(where, database)  # lac.url only: the committed .lacconfig names the board
    (where / ".lacconfig").write_text(DAMAGED[damage])
    git(where, "add", ".lacconfig")
    git(where, "commit", "-qm", "damage", "--no-verify")
    before = schemas(database)
    for args in (("tasks",), ("status",), ("check", "core/auth.py"), ("claim", "--next")):
        line = one_line(lac_inprocess(where, *args), 3)
        assert line.startswith("git lac: the .lacconfig committed at HEAD "), line
        assert "git config lac.board NAME" in line, line
    # The hook, fired by a real commit: refused in one line, nothing committed.
    before_head = head(where)
    (where / "README").write_text("erin\n")
    git(where, "add", "README")
    refused = run_git(where, "commit", "-qm", "erin", agent="erin")
    assert refused.code != 0, refused
    ours = [line for line in refused.err.splitlines() if ".lacconfig" in line]
    assert len(ours) == 1 and "committed at HEAD" in ours[0], refused.err
    assert "Traceback" not in refused.err
    assert head(where) == before_head
    assert schemas(database) == before
    # Named by the clone's own config, it works again.
    git(where, "config", "lac.board", "shop")
    assert lac_inprocess(where, "tasks").code == 0


def test_a_damaged_lacconfig_is_refused_by_the_server(
    repo: Path, tmp_path: Path, database: str
) -> None:
    assert lac_inprocess(repo, "init", "--url", database, "--board", "shop", "--share").code == 0
    git(repo, "commit", "-qm", "share the board", "--no-verify")
    server = guarded_server(repo, tmp_path, database)
    git(server.bare, "config", "--unset", "lac.board")  # the server reads its HEAD's file
    commit(repo, "damage", write(".lacconfig", "[lac\n"))
    before = server.has("main")
    refused = server.push("main", "-o", "lac.agent=erin")
    assert refused.code != 0 and "Traceback" not in refused.err
    ours = [line for line in refused.err.splitlines() if "git lac" in line]
    assert len(ours) == 1 and "changes which board guards" in ours[0], refused.err
    assert server.has("main") == before


# --- identity: one rule for a name given, one for a default --------------------


@pytest.mark.parametrize(
    "email",
    ["da\u200bna@x", "da\x1bna@x", "da\u202e\u2028na@x", "da\x85na@x", "da\u00adna@x"],
    ids=["zero-width", "esc", "bidi-and-separator", "c1", "soft-hyphen"],
)
def test_a_default_from_user_email_turns_odd_characters_into_a_dash(repo: Path, email: str) -> None:
    git(repo, "config", "user.email", email)
    who = lac_inprocess(repo, "--json", "whoami")
    assert who.code == 0, who.err
    assert who.json["agent"] == "da-na"
    assert lac_inprocess(repo, "task", "add", "t").code == 0
    claimed = lac_inprocess(repo, "claim", "1")
    assert claimed.code == 0, claimed.err
    assert "da-na" in lac_inprocess(repo, "tasks").out


def test_a_default_from_a_very_long_user_email_is_cut_and_kept_apart(repo: Path) -> None:
    """A local part past the 200 characters a name may have is the user's
    email, not a name they gave: cut, never refused, and two that differ only
    past the cut stay two agents."""
    names = []
    for last in "ab":
        git(repo, "config", "user.email", "d" * 300 + last + "@x")
        who = lac_inprocess(repo, "--json", "whoami")
        assert who.code == 0, who.err
        names.append(who.json["agent"])
    assert all(len(n) == 200 and n.startswith("d" * 191 + "~") for n in names), names
    assert names[0] != names[1]
    assert lac_inprocess(repo, "task", "add", "t").code == 0
    claimed = lac_inprocess(repo, "--json", "claim", "1")
    assert claimed.code == 0, claimed.err
    assert claimed.json["task"]["owner"] == names[1]


@pytest.mark.parametrize(
    "name", ["da\u200bna", "da\x1bna", "da\u202ena", "da\u2028na", "da\x85na", "da na", ""]
)
@pytest.mark.parametrize("how", ["--as", "LAC_AGENT", "lac.agent"])
def test_a_name_given_with_odd_characters_is_refused_in_one_line(
    repo: Path, name: str, how: str
) -> None:
    env: dict[str, str] = {}
    args: tuple[str, ...] = ("tasks",)
    if how == "--as":
        args = ("--as", name, "tasks")
    elif how == "LAC_AGENT":
        env["LAC_AGENT"] = name
    else:
        git(repo, "config", "lac.agent", name)
    result = lac_inprocess(repo, *args, env=env)
    if name == "" and how != "--as":  # unset: the default from user.email
        assert result.code == 0, result.err
        return
    line = one_line(result, 2)
    assert line.startswith("git lac: agent name "), line
    assert "\x1b" not in line and "\u200b" not in line and "\u202e" not in line
    assert not (repo / ".git" / "lacunari" / "board.db").exists()


# --- titles are one line; durations are ASCII; advice that can be followed ------


@pytest.mark.parametrize(
    "title",
    ["a\nb", "a\x85b", "a\u2028b", "a\u2029b", "a\x9b2Jb", "a\rb", "a\x7fb"],
    ids=["newline", "nel", "line-separator", "paragraph-separator", "c1-csi", "cr", "del"],
)
def test_a_title_that_breaks_the_line_is_refused_writing_nothing(lac: Lac, title: str) -> None:
    for args in (("task", "add", title), ("task", "add", "ok", "--after", "1")):
        if args[2] == "ok":
            assert lac("task", "add", "first").code == 0
            edit = lac("task", "edit", "1", "--title", title)
            line = one_line(edit, 2)
        else:
            line = one_line(lac(*args), 2)
        assert line.startswith("git lac: title must be one line"), line
        assert "U+" in line and title not in line
    listed = lac("--json", "tasks")
    assert [t["title"] for t in listed.json["tasks"]] == ["first"]


@pytest.mark.parametrize(
    "duration", ["\u0661\u0665m", "\u0661\u0662", "1\u0665s", "\uff11\uff12s", "\u00b2s"]
)
def test_durations_take_ascii_digits_only(lac: Lac, duration: str) -> None:
    assert lac("task", "add", "t").code == 0
    line = one_line(lac("claim", "1", "--stale-after", duration), 2)
    assert line.startswith("git lac: invalid duration"), line
    assert lac("--json", "show", "1").json["task"]["state"] == "open"
    line = one_line(lac("init", "--stale-after", duration), 2)
    assert "invalid duration" in line


def test_the_guard_advice_for_odd_names_can_be_followed(lac: Lac, repo: Path) -> None:
    odd = "evil/a\x1b[2J\nrefused: x\u200b.txt"
    plain = "evil/plain.txt"
    (repo / "evil").mkdir()
    for name in (odd, plain):
        (repo / name).write_text("first\n")
    git(repo, "add", "evil")
    git(repo, "commit", "-qm", "names")
    assert lac_process(repo, "hooks", "install").code == 0
    assert lac("lock", "evil/", "--as", "dana").code == 0
    for name in (odd, plain):
        (repo / name).write_text("erin's\n")
    git(repo, "add", "evil")
    refused = run_git(repo, "commit", "-qm", "erin", agent="erin")
    assert refused.code == 1, refused
    (what_now,) = [ln for ln in refused.err.splitlines() if ln.startswith("What now:")]
    assert "see who holds what with `git lac locks` (a name shown escaped" in what_now
    # Followed, it names the holder of the lock that covers the odd name.
    locks = lac("locks", "--as", "erin")
    assert locks.code == 0 and "evil/" in locks.out and "dana" in locks.out
    # A plain name keeps the advice as the README shows it.
    (repo / odd).write_text("first\n")
    git(repo, "add", "evil")
    only_plain = run_git(repo, "commit", "-qm", "erin", agent="erin")
    assert only_plain.code == 1 and "with `git lac check PATH`" in only_plain.err


@pytest.mark.parametrize("digits", ["\u0661\u0662", "\uff11", "\u00b2", "1\u0662", "\u0967"])
@pytest.mark.parametrize(
    "args",
    [
        ("task", "add", "t", "--priority", "{}"),
        ("task", "edit", "1", "--priority", "{}"),
        ("tasks", "--limit", "{}"),
        ("log", "--limit", "{}"),
        ("drain", "--lane", "x", "--once", "--max", "{}", "--", "true"),
        ("serve", "--port", "{}"),
        ("serve", "--max-clients", "{}"),
    ],
    ids=lambda a: "-".join(a[:2]) if isinstance(a, tuple) else None,
)
def test_whole_numbers_take_ascii_digits_only(lac: Lac, digits: str, args: tuple[str, ...]) -> None:
    assert lac("task", "add", "first").code == 0
    before = lac("--json", "log").json
    given = [a.replace("{}", digits) for a in args]
    result = lac(*given)
    assert result.code == 2, result
    assert "is not a whole number (ASCII digits 0-9)" in result.err.splitlines()[0]
    assert "Traceback" not in result.err
    assert lac("--json", "log").json == before


@pytest.mark.parametrize(
    "args",
    [("status",), ("tasks",), ("claim", "--next"), ("whoami",), ("hooks", "install"), ("mcp",)],
    ids=lambda a: "-".join(a),
)
def test_a_removed_working_directory_is_one_line_not_a_traceback(
    repo: Path, args: tuple[str, ...]
) -> None:
    # A shell left in a worktree that was removed under it: git itself says
    # "Unable to read current working directory"; so do we, in one line.
    assert lac_process(repo, "init").code == 0
    gone = repo / "gone"
    gone.mkdir()
    proc = subprocess.run(
        ["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec git-lac "$@"', "sh", str(gone), *args],
        cwd=repo,
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
        capture_output=True,
        text=True,
        input="",
        timeout=60,
        check=False,
    )
    assert proc.returncode == 3, proc.stderr
    assert (
        proc.stderr == "git lac: the current directory no longer exists: cd into a working tree\n"
    )
    assert proc.stdout == ""
