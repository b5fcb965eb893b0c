"""The hermetic seal (``conftest.sealed_env``) holds against a poisoned caller.

``test_the_seal_holds`` checks what every test can rely on; the second test
runs it again in a child pytest whose environment carries every leak the seal
must stop, so a hole in the seal is a red test, not a flake somewhere else.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import REPO_ROOT, git, lac_process, make_repo

POISON_AGENT = "leaked-agent"


def test_the_seal_holds(tmp_path: Path) -> None:
    cwd = Path.cwd()
    assert list(cwd.iterdir()) == [], "the working directory is not an empty one of its own"
    assert REPO_ROOT not in (cwd, *cwd.parents)
    outside = subprocess.run(["git", "rev-parse", "--git-dir"], capture_output=True, text=True)
    assert outside.returncode != 0, f"a repository above the test's cwd: {outside.stdout}"

    leaked = sorted(
        var
        for var in os.environ
        if var.startswith(("PRE_COMMIT", "GIT_CONFIG_", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX"))
        or (var.startswith("LAC_") and not var.startswith(("LAC_TEST_", "LAC_REQUIRE_PG")))
        or var in ("EMAIL", "GIT_AUTHOR_NAME", "GIT_COMMITTER_EMAIL")
    )
    # Both set by the seal itself: no system config, and no resident helper
    # (LAC_EDIT_HELPER=off; require under LAC_TEST_RESIDENT=1).
    assert leaked == ["GIT_CONFIG_NOSYSTEM", "LAC_EDIT_HELPER"], leaked
    assert os.environ["LAC_EDIT_HELPER"] in ("off", "require")

    repo = make_repo(tmp_path / "repo")
    home = Path(os.environ["HOME"])
    for line in git(repo, "config", "--list", "--show-scope", "--show-origin").splitlines():
        scope, origin, _ = line.split("\t", 2)
        assert (scope, origin) in (
            ("global", f"file:{home / '.gitconfig'}"),
            ("local", "file:.git/config"),
        ), line
    assert git(repo, "var", "GIT_EDITOR").strip() == "false"
    assert git(repo, "log", "-1", "--format=%an <%ae> %cn <%ce>").strip() == (
        "Test User <tester@example.com> Test User <tester@example.com>"
    )
    who = lac_process(repo, "whoami", "--json")
    assert who.code == 0, who.err
    assert (who.json["agent"], who.json["capabilities"]) == ("tester", []), who.json


def test_a_poisoned_environment_does_not_reach_a_test(tmp_path: Path) -> None:
    poisoned_home = tmp_path / "home"
    (poisoned_home / ".config" / "git").mkdir(parents=True)
    leak = f"[user]\n\temail = {POISON_AGENT}@example.com\n[lac]\n\tagent = {POISON_AGENT}\n"
    (poisoned_home / ".gitconfig").write_text(leak)
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "config").write_text(leak + "[core]\n\teditor = vi\n")
    poison = {
        "HOME": str(poisoned_home),
        "XDG_CONFIG_HOME": str(xdg),
        "GIT_CONFIG_PARAMETERS": f"'lac.agent'='{POISON_AGENT}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "lac.capabilities",
        "GIT_CONFIG_VALUE_0": "gpu",
        "GIT_CONFIG_GLOBAL": str(poisoned_home / ".gitconfig"),
        "GIT_DIR": str(tmp_path / "nowhere.git"),
        "GIT_INDEX_FILE": str(tmp_path / "index"),
        "GIT_AUTHOR_NAME": "Leak",
        "GIT_COMMITTER_EMAIL": "leak@example.com",
        "EMAIL": "leak@example.com",
        "GIT_EDITOR": "vi",
        "PRE_COMMIT": "1",
        "PRE_COMMIT_REMOTE_NAME": "origin",
        "LAC_AGENT": POISON_AGENT,
        "LAC_CAPS": "gpu",
        "LAC_GUARD": "off",
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'inner'}",
            f"{Path(__file__).resolve()}::test_the_seal_holds",
        ],
        cwd=REPO_ROOT,
        env={**os.environ, **poison},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr
