"""What a door does with input it did not expect (issue 22, a newcomer's
attack): a board URL naming no board, a damaged committed ``.lacconfig``,
odd identities, titles and durations. Each is one clear line, a documented
exit code, nothing written, no traceback. Real repositories, real hooks
fired by real ``git commit``."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Result, git, lac_inprocess, lac_process

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
