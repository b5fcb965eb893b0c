"""`git lac guard edit`: each path judged by the work tree that holds it.

Real repositories, linked worktrees (`git worktree add`), real boards on
both backends, the hook a real process. The payload's cwd only resolves
relative paths: an absolute path is judged by the repository it lies in,
found from its real path as git finds one, whatever directory the agent
stands in; whose agent asks is the harness's project directory
(``CLAUDE_PROJECT_DIR``, ``GEMINI_PROJECT_DIR``), else the payload's cwd.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Result, git, lac_inprocess, make_repo, pg_schema
from .test_edit_guard import claude, claude_allowed, claude_denied, gemini, hook

Lac = Callable[..., Result]


def write_to(path: Path, cwd: Path) -> dict[str, Any]:
    """A Claude Code Write of ``path`` (absolute), the agent standing in ``cwd``."""
    return claude(cwd, "Write", {"file_path": str(path), "content": "x"}, cwd=cwd)


def bash(command: str, cwd: Path) -> dict[str, Any]:
    return claude(cwd, "Bash", {"command": command, "description": "d"}, cwd=cwd)


@pytest.fixture
def held(lac: Lac, repo: Path) -> Path:
    """dana holds core/auth.py on task #1, in the main work tree."""
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "dana"}).code == 0
    return repo


@pytest.fixture
def sibling(held: Path, tmp_path: Path) -> Path:
    """A linked worktree of the same clone: it shares the board."""
    wt = tmp_path / "wt"
    git(held, "worktree", "add", "-q", "-b", "side", str(wt))
    return wt


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A directory in no repository."""
    path = tmp_path / "elsewhere"
    path.mkdir()
    return path


def test_an_absolute_path_from_a_sibling_worktree_is_judged_by_its_board(
    held: Path, sibling: Path
) -> None:
    reason = claude_denied(hook(sibling, write_to(held / "core/auth.py", sibling)))
    # Said as the agent in its own tree would wait for it (the board names
    # paths relative to any work tree of the clone).
    assert reason == "dana holds core/auth.py on task #1; git lac wait core/auth.py"
    # And the sibling's own copy of the path is the same lock.
    reason = claude_denied(hook(sibling, write_to(sibling / "core/auth.py", sibling)))
    assert reason.startswith("dana holds core/auth.py on task #1")
    claude_allowed(hook(sibling, write_to(held / "README", sibling)))


def test_cwd_outside_any_repository(held: Path, elsewhere: Path) -> None:
    """The payload's cwd in no repository (the hook's own too): the absolute
    path is still the repository's, and held."""
    reason = claude_denied(hook(elsewhere, write_to(held / "core/auth.py", elsewhere)))
    assert reason.startswith("dana holds core/auth.py on task #1; git lac wait ")
    claude_allowed(hook(elsewhere, write_to(elsewhere / "auth.py", elsewhere)))


def test_cd_elsewhere_then_write_into_the_repository(held: Path, elsewhere: Path) -> None:
    """After a `cd`, Claude Code's cwd is /tmp-like: the shell's targets are
    still found in the repository they name."""
    reason = claude_denied(hook(elsewhere, bash(f"cd {held} && echo x > core/auth.py", elsewhere)))
    assert reason.startswith("dana holds core/auth.py on task #1")
    reason = claude_denied(hook(elsewhere, bash(f"echo x > {held}/core/auth.py", elsewhere)))
    assert reason.startswith("dana holds core/auth.py on task #1")
    claude_allowed(hook(elsewhere, bash(f"echo x > {elsewhere}/auth.py", elsewhere)))


def test_a_symlinked_directory_into_the_repository(held: Path, elsewhere: Path) -> None:
    (elsewhere / "into").symlink_to(held / "core")
    reason = claude_denied(hook(elsewhere, write_to(elsewhere / "into/auth.py", elsewhere)))
    assert reason.startswith("dana holds core/auth.py on task #1")
    claude_allowed(hook(elsewhere, write_to(elsewhere / "into/free.py", elsewhere)))


def test_spaces_and_unicode_in_the_repository_path(
    board_url: str | None, tmp_path: Path, elsewhere: Path
) -> None:
    repo = make_repo(tmp_path / "my répo x")
    init = ["init"] + (["--url", board_url] if board_url else [])
    assert lac_inprocess(repo, *init).code == 0
    name = "docs/a b é.md"
    assert lac_inprocess(repo, "lock", name, env={"LAC_AGENT": "dana"}).code == 0
    reason = claude_denied(hook(elsewhere, write_to(repo / name, elsewhere)))
    assert reason.startswith(f"dana holds {name} (no task); git lac wait ")


@pytest.fixture
def second(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A second repository with its own board (on the same backend): erin
    holds lib/x.py there."""
    other = make_repo(tmp_path / "other")
    (other / "lib").mkdir()

    def made(url: str | None) -> Path:
        assert lac_inprocess(other, "init", *(["--url", url] if url else [])).code == 0
        assert lac_inprocess(other, "lock", "lib/x.py", env={"LAC_AGENT": "erin"}).code == 0
        return other

    if backend == "sqlite":
        yield made(None)
        return
    with pg_schema(request.getfixturevalue("pg_server")) as url:
        yield made(url)


def test_a_path_in_another_repository_is_judged_by_its_board(held: Path, second: Path) -> None:
    reason = claude_denied(hook(held, write_to(second / "lib/x.py", held)))
    assert reason.startswith("erin holds lib/x.py (no task); git lac wait ")
    claude_allowed(hook(held, write_to(second / "lib/free.py", held)))
    # One call, two repositories: each judged by its own board, refused if any refuses.
    both = bash(f"echo x > README; echo x > {second}/lib/x.py", held)
    assert claude_denied(hook(held, both)).startswith("erin holds lib/x.py")
    both = bash(f"echo x > {second}/lib/free.py; echo x > core/auth.py", held)
    assert claude_denied(hook(held, both)).startswith("dana holds core/auth.py")
    claude_allowed(hook(held, bash(f"echo x > README; echo x > {second}/lib/free.py", held)))


def test_the_asking_agent_is_the_project_directorys(
    held: Path, sibling: Path, elsewhere: Path, lac: Lac
) -> None:
    """alice locks core/ok.py from the linked worktree: a write of it, in
    either tree, is hers when the project directory is that worktree, and
    another place's (refused) when it is the main tree, whatever the cwd."""
    assert lac("lock", "core/ok.py", cwd=sibling, env={"LAC_AGENT": "alice"}).code == 0
    for target in (sibling / "core/ok.py", held / "core/ok.py"):
        payload = write_to(target, elsewhere)
        claude_allowed(hook(elsewhere, payload, env={"CLAUDE_PROJECT_DIR": str(sibling)}))
        reason = claude_denied(hook(elsewhere, payload, env={"CLAUDE_PROJECT_DIR": str(held)}))
        assert reason.startswith("alice holds core/ok.py (no task)"), reason
    # No project directory: the payload's cwd tells.
    claude_allowed(hook(sibling, write_to(held / "core/ok.py", sibling)))
    assert claude_denied(hook(held, write_to(sibling / "core/ok.py", held))).startswith(
        "alice holds core/ok.py"
    )
    # Gemini CLI's own variable.
    payload = gemini(elsewhere, "write_file", {"file_path": str(held / "core/ok.py")})
    said = hook(elsewhere, payload, env={"GEMINI_PROJECT_DIR": str(sibling)})
    assert (said.code, json.loads(said.out)) == (0, {}), said.err


def test_a_repository_without_a_board_is_not_ours(
    held: Path, tmp_path: Path, elsewhere: Path
) -> None:
    """Its paths pass, under the policy of no board: the project's own
    (lac.edit.unclaimed = deny) is not theirs; nothing is made there."""
    plain = make_repo(tmp_path / "plain")
    git(held, "config", "lac.edit.unclaimed", "deny")
    claude_allowed(hook(held, write_to(plain / "core/auth.py", held)))
    claude_allowed(hook(elsewhere, bash(f"rm -rf {plain}/core", elsewhere)))
    assert not (plain / ".git" / "lacunari").exists()
    assert claude_denied(hook(held, write_to(held / "README", held))).startswith(
        "claim a task first"
    )


def test_directory_targets_cover_all_under_them(held: Path, lac: Lac) -> None:
    (held / "docs").mkdir()
    assert lac("lock", "docs/*.md", env={"LAC_AGENT": "erin"}).code == 0
    for command in ("rm -rf core", "rm -rf .", "rm -rf docs", f"rm -rf {held}", "mv core gone"):
        reason = claude_denied(hook(held, bash(command, held)))
        assert "holds" in reason, command
    assert "erin holds docs/*.md (no task) (in docs/)" in claude_denied(
        hook(held, bash("rm -rf docs", held))
    )
    # A file tool aimed at a directory, or at the top of the tree.
    for target in (held / "core", held):
        edit = claude(held, "Edit", {"file_path": str(target), "old_string": "a"})
        assert "dana holds" in claude_denied(hook(held, edit)), target
    # A directory nobody else holds anything under passes; so does the holder's own.
    (held / "free").mkdir()
    claude_allowed(hook(held, bash("rm -rf free", held)))
    assert lac("unlock", "docs/*.md", env={"LAC_AGENT": "erin"}).code == 0
    claude_allowed(hook(held, bash("rm -rf core", held), agent="dana"))


def test_a_glob_lock_of_the_whole_tree_covers_a_directory(repo: Path, lac: Lac) -> None:
    """``**/*.py`` could match under pkg/ (empty now): removing pkg/ is refused."""
    assert lac("lock", "**/*.py", env={"LAC_AGENT": "erin"}).code == 0
    (repo / "pkg").mkdir()
    reason = claude_denied(hook(repo, bash("rm -r pkg", repo)))
    assert reason.startswith("erin holds **/*.py (no task) (in pkg/)"), reason
    claude_allowed(hook(repo, bash("rm -r pkg", repo), agent="erin"))


def test_tree_targets_of_the_shell_reader(held: Path, tmp_path: Path) -> None:
    """A Write marked a tree is asked as a directory though it is not on disk
    (``mv build out``: what is held under ``out/`` is written over)."""
    from git_lacunari.edit_guard import ROOT, Target, judged_groups, where

    project = where(str(held))
    assert project is not None
    groups = judged_groups(
        [Target(str(held / "out"), True), Target(str(held / "new.py")), Target(str(held))],
        project,
    )
    assert [(g.place.top, g.written) for g in groups] == [(str(held), ["out/", "new.py", ROOT])]
    assert judged_groups([Target(str(tmp_path / "nowhere"), True)], project) == []


def test_gemini_dir_path_and_directory(held: Path) -> None:
    for field in ("dir_path", "directory"):
        shell = gemini(held, "run_shell_command", {"command": "echo x > auth.py", field: "core"})
        said = hook(held, shell)
        assert said.code == 0 and json.loads(said.out) == {
            "decision": "deny",
            "reason": "dana holds core/auth.py on task #1; git lac wait core/auth.py",
        }, field
    # dir_path wins over the older field, and is resolved from the project root.
    fields = {"command": "echo x > auth.py", "dir_path": ".", "directory": "core"}
    shell = gemini(held, "run_shell_command", fields)
    said = hook(held / "core", shell, env={"GEMINI_PROJECT_DIR": str(held)})
    assert json.loads(said.out) == {}, said.err


def test_powershell_is_read_as_a_shell(held: Path) -> None:
    payload = claude(held, "PowerShell", {"command": "echo x > core/auth.py"})
    assert claude_denied(hook(held, payload)).startswith("dana holds core/auth.py")
    claude_allowed(hook(held, claude(held, "PowerShell", {"command": "Get-ChildItem"})))


def test_several_paths_in_one_work_tree_ask_one_board(held: Path) -> None:
    """The generic protocol's paths, all of one tree: one group, as before."""
    result = hook(held, {"paths": ["README", "core/new.py", str(held / "x.py")], "cwd": str(held)})
    assert result.code == 0, result.err
    assert json.loads(result.out)["checked"] == ["README", "core/new.py", "x.py"]
    assert os.path.isdir(held)


def test_the_project_trees_helper_answers_for_a_sibling_worktree(
    held: Path, sibling: Path, second: Path
) -> None:
    """The resident helper of the project's tree answers for a path of a
    linked worktree of its clone (one board); a path of another repository
    is decided in the hook, and its helper is not started."""
    payload = write_to(held / "core/auth.py", sibling)
    first = hook(sibling, payload, helper=True)  # decides itself, starts the sibling's helper
    git_dir = Path(git(sibling, "rev-parse", "--absolute-git-dir").strip())
    deadline = time.monotonic() + 30
    while not list((git_dir / "lacunari").glob("edit-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list((git_dir / "lacunari").glob("edit-*.sock")), "the helper did not start"
    try:
        second_answer = hook(sibling, payload, helper=True)
        assert (second_answer.code, second_answer.out) == (first.code, first.out)
        assert claude_denied(second_answer).startswith("dana holds core/auth.py on task #1")
        foreign = hook(sibling, write_to(second / "lib/x.py", sibling), helper=True)
        assert claude_denied(foreign).startswith("erin holds lib/x.py")
        assert not list((second / ".git" / "lacunari").glob("edit-*.sock"))
    finally:
        for sock in (git_dir / "lacunari").glob("edit-*.sock"):
            sock.unlink()


def test_the_shell_readers_answer_is_read_either_way() -> None:
    """Before and after the shell reader's rewrite: a path, or a ``Write``
    with ``.path`` and ``.tree``."""
    from typing import NamedTuple

    from git_lacunari.edit_guard import Target, _target

    class Write(NamedTuple):
        path: str
        tree: bool

    assert _target("/r/a.py") == Target("/r/a.py", False)
    assert _target(Write("/r/build", True)) == Target("/r/build", True)
    assert _target(Write("/r/a.py", False)) == Target("/r/a.py", False)
