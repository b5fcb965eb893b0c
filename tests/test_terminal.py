"""Nothing that someone else chose reaches a terminal raw.

File names, titles, lanes, reasons: ESC (CSI, OSC), CR, newline, C1 controls,
bidi overrides, zero-width characters and line separators are escaped by the
one escaper (``text.shown``) in every human line, whichever door writes it:
the command line, the real pre-commit, pre-push and pre-receive hooks fired
by real git, the keeper, the drainer, reconcile. JSON stays exact. Both
backends.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from git_lacunari import edge
from git_lacunari.errors import CannotWorkHere, PathLocked
from git_lacunari.model import Conflict, Lock, LockMode
from git_lacunari.text import ESCAPED_CATEGORIES, shown, shown_painted

from .conftest import Boards, Result, git, lac_process
from .test_server_guard import server_for

Lac = Callable[..., Result]
BIN = str(Path(sys.executable).parent)

# Each a way to drive or fool a terminal.
HOSTILE = {
    "csi": "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "osc": "\x1b]0;owned\x07",  # set the window title
    "cr": "ok\rFORGED",  # overwrite the start of the line
    "newline": "a\nrefused: nothing",  # forge a line
    "c1": "\x9b31m\x85",  # 8-bit CSI, NEL
    "del": "x\x7fy",
    "rlo": "txt.\u202eexe",  # right-to-left override
    "isolate": "\u2066a\u2069",
    "zwsp": "pay\u200bpal",  # zero-width space
    "bom": "\ufeffhidden",
    "tag": "t\U000e0041\U000e0042",  # invisible tag characters
    "lsep": "one\u2028two\u2029three",
}
# Names a file may have on disk and in git (no NUL, no slash).
FILE_NAMES = {key: f"{key}-{text}.txt" for key, text in HOSTILE.items()}
# What a title may hold (the board refuses every control, C1 and NEL too, and
# the line and paragraph separators in a title: it is one line).
TITLE_PARTS = "\u202e \u200b \u2066 \ufeff \u00ad \U000e0041"


def raw_unsafe(text: str, *, lines: bool = True) -> list[str]:
    """The characters in ``text`` that must never reach a terminal raw.
    ``lines``: newlines separate lines (stdout, or several stderr lines)."""
    allowed = "\n\t" if lines else ""
    found = []
    for char in text:
        if char in allowed:
            continue
        if unicodedata.category(char) in ESCAPED_CATEGORIES and char != "\u200d":
            found.append(f"U+{ord(char):04X}")
    return found


def assert_clean(result: Result | subprocess.CompletedProcess[str], what: str) -> None:
    out = result.out if isinstance(result, Result) else result.stdout
    err = result.err if isinstance(result, Result) else result.stderr
    assert not raw_unsafe(out), f"{what}: raw on stdout: {raw_unsafe(out)}\n{out!r}"
    assert not raw_unsafe(err), f"{what}: raw on stderr: {raw_unsafe(err)}\n{err!r}"


# --- the escaper ------------------------------------------------------------------


def test_every_code_point_is_escaped_or_kept_as_it_is() -> None:
    for code in range(0x110000):
        char = chr(code)
        said = shown(char)
        assert not raw_unsafe(said, lines=False), f"U+{code:04X}"
        if unicodedata.category(char) in ESCAPED_CATEGORIES:
            assert said != char and said.isascii(), f"U+{code:04X} -> {said!r}"
        else:
            assert said == char, f"U+{code:04X}"
        assert shown(said) == said  # idempotent


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("\x1b[2J", "\\x1b[2J"),
        ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),
        ("a\rb\nc", "a\\rb\\nc"),
        ("\x9b\x85\x7f", "\\x9b\\x85\\x7f"),
        ("txt.\u202eexe", "txt.\\u202eexe"),
        ("pay\u200bpal", "pay\\u200bpal"),
        ("\u2066a\u2069\u200e\u061c", "\\u2066a\\u2069\\u200e\\u061c"),
        ("\ufeffx\u00ad", "\\ufeffx\\xad"),
        ("\U000e0041", "\\U000e0041"),
        ("one\u2028two\u2029", "one\\u2028two\\u2029"),
        ("bad \udcff byte", "bad \\xff byte"),  # a byte that was not UTF-8
        ("lone \ud800", "lone \\ud800"),
        ("a\u200db", "a\\u200db"),  # a joiner between letters hides nothing we allow
    ],
)
def test_shown_escapes(text: str, said: str) -> None:
    assert shown(text) == said


@pytest.mark.parametrize(
    "text",
    [
        "café naïve Ærø",
        "中文路径/文件.py",
        "日本語 한국어 العربية עברית",  # right-to-left scripts, without overrides
        "emoji 🎉 🚀 👍🏽",
        "family 👨\u200d👩\u200d👧 coder 👩🏽\u200d💻 flag 🏳\ufe0f\u200d🌈",  # ZWJ sequences
        "tab\tinside",
    ],
)
def test_ordinary_unicode_stays_readable(text: str) -> None:
    keep = "\t" if "\t" in text else ""
    assert shown(text, keep=keep) == text


def test_only_the_colours_a_view_paints_survive_on_a_terminal() -> None:
    painted = "\x1b[1mbold\x1b[0m \x1b[31mred\x1b[0m"
    assert shown_painted(painted) == painted
    hostile = "\x1b[2J\x1b[8mhidden\x1b[0m\x1b]0;t\x07\x1b[31;1m"
    assert shown_painted(hostile) == "\\x1b[2J\\x1b[8mhidden\x1b[0m\\x1b]0;t\\x07\\x1b[31;1m"


# --- the edge escapes what a view forgot --------------------------------------------


def render(outcome: edge.Outcome, *, as_json: bool = False) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = edge.render(outcome, as_json=as_json)
    return code, out.getvalue(), err.getvalue()


def lock_on(pattern: str, agent: str = "dana") -> Lock:
    return Lock(
        id=1,
        pattern=pattern,
        mode=LockMode.WRITE,
        agent=agent,
        task_id=7,
        acquired_at=0.0,
        base_blob=None,
    )


def test_the_edge_escapes_every_human_line_and_keeps_json_exact() -> None:
    evil = "x\x1b[2J\u202e\u200b\nrefused: forged"
    result = edge.Result({"title": evil}, f"title {evil}\nsecond line\ttab", warnings=[evil])
    code, out, err = render(result)
    assert code == 0
    assert out == "title x\\x1b[2J\\u202e\\u200b\nrefused: forged\nsecond line\ttab\n"
    assert err == "x\\x1b[2J\\u202e\\u200b\\nrefused: forged\n"  # a message is one line
    code, out, err = render(result, as_json=True)
    assert json.loads(out)["title"] == evil  # JSON escapes it, exactly

    refused = PathLocked([Conflict(path=evil, lock=lock_on("*.txt"))], details=[f"  {evil}  held"])
    code, out, err = render(refused)
    assert code == 1 and out == "" and not raw_unsafe(err)
    assert len(err.splitlines()) == 2 and "\\nrefused: forged  held" in err
    code, out, _ = render(refused, as_json=True)
    assert json.loads(out)["refused"]["path"] == evil

    code, out, err = render(CannotWorkHere(f"git said: {evil}", hint=evil))
    assert code == 3 and not raw_unsafe(err) and len(err.splitlines()) == 2


# --- real doors, real git -------------------------------------------------------------


def run_git(repo: Path, *args: str, agent: str) -> Result:
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], "LAC_AGENT": agent}
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def add_hostile_files(repo: Path) -> None:
    (repo / "evil").mkdir()
    for name in FILE_NAMES.values():
        (repo / "evil" / name).write_text("first\n")
    git(repo, "add", "evil")
    git(repo, "commit", "-qm", "hostile names")


def test_a_refused_commit_push_and_receive_show_hostile_names_escaped(
    lac: Lac, repo: Path, tmp_path: Path, board_url: str | None
) -> None:
    add_hostile_files(repo)
    server = server_for(repo, tmp_path, board_url, "path")
    assert lac_process(repo, "hooks", "install").code == 0
    title = f"Fix {TITLE_PARTS}"
    assert lac("task", "add", title, "--write", "evil/").code == 0
    assert lac("claim", "1", "--as", "dana").code == 0
    for name in FILE_NAMES.values():
        (repo / "evil" / name).write_text("erin's\n")
    git(repo, "add", "evil")

    refused = run_git(repo, "commit", "-qm", "erin", agent="erin")
    assert refused.code == 1, refused
    assert_clean(refused, "pre-commit")
    assert "commit refused: 12 staged path(s)" in refused.err
    assert "evil/csi-\\x1b[2J\\x1b[H.txt" in refused.err
    assert "evil/newline-a\\nrefused: nothing.txt" in refused.err
    assert "evil/rlo-txt.\\u202eexe.txt" in refused.err
    # One line per path: no name forged a line of its own.
    assert len([ln for ln in refused.err.splitlines() if "held by dana" in ln]) == 12

    assert run_git(repo, "commit", "-qm", "erin", "--no-verify", agent="erin").code == 0
    pushed = run_git(repo, "push", str(server.bare), "main", agent="erin")
    assert pushed.code != 0
    assert_clean(pushed, "pre-push")
    assert "push refused: 12 change(s)" in pushed.err

    received = server.push("main", env={"LAC_AGENT": "erin"})
    assert received.code != 0
    # Git itself also neutralises what comes back on the sideband; ours must
    # be clean before that.
    assert_clean(received, "pre-receive")
    assert "evil/osc-\\x1b]0;owned\\x07.txt" in received.err


def test_every_listing_and_refusal_of_a_hostile_title_is_escaped(lac: Lac, repo: Path) -> None:
    title = f"Fix {TITLE_PARTS}"
    assert lac("task", "add", title, "--write", "src/a.py", "--body", "body\x1b[2J\n").code == 0
    assert lac("task", "add", f"Later {TITLE_PARTS}", "--after", "1").code == 0
    calls: list[tuple[str, ...]] = [
        ("tasks",),
        ("tasks", "--state", "open"),
        ("show", "1"),
        ("ready",),
        ("claim", "1", "--as", "dana"),
        ("status", "--as", "dana"),
        ("locks",),
        ("check", "src/a.py", "--as", "erin"),
        ("lock", "src/", "--as", "erin"),
        ("claim", "1", "--as", "erin"),
        ("heartbeat", "--as", "dana"),
        ("release", "1", "--as", "erin", "--force", "--reason", "r\x1b[2J\u202e"),
        ("claim", "1", "--as", "dana"),
        ("done", "1", "--as", "dana"),
        ("task", "reopen", "1", "--reason", "again\u200b"),
        ("task", "cancel", "2", "--reason", "no\u2028more"),
        ("task", "edit", "1", "--title", f"Edited {TITLE_PARTS}"),
        ("log",),
        ("whoami",),
    ]
    for call in calls:
        result = lac(*call)
        assert result.code in (0, 1), (call, result)
        assert_clean(result, " ".join(call))
    shown_title = lac("show", "1").out
    assert "\\u202e \\u200b \\u2066 \\ufeff \\xad \\U000e0041" in shown_title
    # --json keeps the title exactly.
    assert lac("show", "2", "--json").json["task"]["title"] == f"Later {TITLE_PARTS}"


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_paths_and_names_given_as_arguments_are_refused_escaped(
    lac: Lac, text: str
) -> None:
    for call in (
        ("check", f"src/{text}"),
        ("lock", f"src/{text}"),
        ("unlock", f"src/{text}"),
        ("locks", "--path", f"src/{text}"),
        ("wait", f"src/{text}", "--timeout", "0s"),
        ("task", "add", "t", "--write", f"src/{text}"),
        ("task", "add", "t", "--lane", text),
        ("tasks", "--lane", text),
        ("claim", "--as", text),
        ("reconcile", text),
    ):
        result = lac(*call)
        assert result.code in (1, 2, 3), (call, result)
        assert "Traceback" not in result.err
        assert_clean(result, " ".join(call))


def test_the_keeper_and_the_drainer_say_hostile_titles_escaped(
    lac: Lac, repo: Path, boards: Boards
) -> None:
    title = f"Drain {TITLE_PARTS}"
    assert lac("task", "add", title, "--lane", "night").code == 0
    drained = lac_process(repo, "drain", "--lane", "night", "--once", "--", "true")
    assert drained.code == 0, drained
    assert_clean(drained, "drain")
    assert "\\u202e" in drained.err
    assert lac("task", "add", title, "--write", "notes/").code == 0
    assert lac("claim", "2", "--as", "ghost").code == 0
    boards.backdate(2, 3600)
    kept = lac_process(repo, "keeper", "--once")
    assert kept.code == 0, kept
    assert_clean(kept, "keeper")
    assert "expired: task #2 of ghost" in kept.out


def test_reconcile_reports_hostile_names_escaped(lac: Lac, repo: Path) -> None:
    git(repo, "checkout", "-qb", "peer")
    add_hostile_files(repo)
    git(repo, "checkout", "-q", "main")
    for call in (("reconcile", "peer", "--dry-run"), ("reconcile", "peer")):
        result = lac_process(repo, *call)
        assert result.code == 0, result
        assert_clean(result, " ".join(call))
        assert "evil/cr-ok\\rFORGED.txt" in result.out
        assert len([ln for ln in result.out.splitlines() if ln.startswith("taken")]) == 12
