"""`git lac ready` agrees with what `claim --next` then takes; `status`;
`--body-file`; completion (issue 14)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Result, lac_inprocess

Lac = Callable[..., Result]


def test_ready_json_is_the_order_claim_next_takes(lac: Lac) -> None:
    def add(*args: str) -> int:
        return int(lac("task", "add", *args, "--json").json["id"])

    first = add("Low", "--priority", "1")
    dep = add("Dep", "--priority", "9")
    waits = add("Waits on dep", "--priority", "8", "--after", str(dep))
    gpu = add("Needs gpu", "--priority", "7", "--needs", "gpu")
    held = add("Held path", "--priority", "6", "--write", "core/")
    top = add("High", "--priority", "5")
    other_lane = add("Elsewhere", "--lane", "ml", "--priority", "99")
    assert lac("lock", "core/auth.py", "--as", "erin").code == 0
    shown = lac("ready", "--json", "--as", "dana")
    assert shown.code == 0, shown.err
    body = shown.json
    order = [t["id"] for t in body["ready"]]
    assert order == [dep, top, first]
    why = {b["task"]["id"]: b["refused"] for b in body["blocked"]}
    assert why[waits]["reason"] == "unmet_dependency" and why[waits]["dependency"] == dep
    assert why[gpu] == {"reason": "missing_capability", "task": gpu, "capability": "gpu"}
    assert why[held]["reason"] == "path_locked" and why[held]["holder"] == "erin"
    assert other_lane not in order and other_lane not in why
    taken = []
    for _ in order:  # each claim --next takes what ready put first, the claims kept
        first_ready = lac("ready", "--json", "--as", "dana").json["ready"][0]["id"]
        got = lac("claim", "--next", "--json", "--as", "dana")
        assert got.code == 0, got.err
        assert got.json["task"]["id"] == first_ready
        taken.append(first_ready)
    assert taken == order
    assert lac("ready", "--json", "--as", "dana").json["ready"] == []
    assert lac("claim", "--next", "--as", "dana").code == 1
    assert lac("done", str(dep), "--as", "dana").code == 0
    # dep is done now: ready sees "Waits on dep", and so does claim --next.
    again = lac("ready", "--json", "--as", "dana").json
    assert [t["id"] for t in again["ready"]] == [waits]
    assert lac("claim", "--next", "--json", "--as", "dana").json["task"]["id"] == waits
    assert (
        lac("ready", "--json", "--as", "dana", env={"LAC_CAPS": "gpu"}).json["ready"][0]["id"]
        == gpu
    )


def test_ready_human_text_says_why(lac: Lac) -> None:
    lac("task", "add", "Dep")
    lac("task", "add", "Waits", "--after", "1")
    text = lac("ready", "--as", "dana").out
    assert "#1" in text and "ready" in text
    assert "blocked" in text and "waits on task #1 (open)" in text


def test_status_shows_claims_locks_hooks_and_board(lac: Lac) -> None:
    lac("task", "add", "Mine", "--write", "core/")
    lac("claim", "1", "--stale-after", "1h", "--as", "dana")
    lac("lock", "docs/", "--as", "dana")
    lac("hooks", "install")
    got = lac("status", "--json", "--as", "dana")
    assert got.code == 0, got.err
    body = got.json
    assert body["agent"] == "dana" and body["hooks"] == {
        "pre-commit": True,
        "pre-push": True,
        "pre-merge-commit": True,
        "post-commit": True,
        "commit-msg": True,
    }
    (claim,) = body["claims"]
    assert claim["task"]["id"] == 1 and 0 <= claim["heartbeat_age"] < 60
    assert 3500 < claim["stale_in"] <= 3600
    assert sorted(lk["pattern"] for lk in body["locks"]) == ["core/", "docs/"]
    assert body["board"]["dialect"] in ("sqlite", "postgres")
    assert "password" not in json.dumps(body["board"])
    text = lac("status", "--as", "dana").out
    assert "#1" in text and "stale in" in text and "pre-commit installed" in text
    assert "\033[" not in text  # not a terminal: no colour
    lac("hooks", "uninstall")
    assert lac("status", "--json", "--as", "erin").json["claims"] == []


def test_body_file_and_stdin(lac: Lac, repo: Path, tmp_path: Path) -> None:
    long = "line\n" * 2000
    (tmp_path / "body.md").write_text(long)
    made = lac("task", "add", "Long", "--body-file", str(tmp_path / "body.md"), "--json")
    assert made.code == 0 and made.json["task"]["body"] == long
    both = lac("task", "add", "X", "--body", "a", "--body-file", str(tmp_path / "body.md"))
    assert both.code == 2
    missing = lac("task", "add", "X", "--body-file", str(tmp_path / "nope"))
    assert missing.code == 2
    from .conftest import lac_process

    piped = lac_process(repo, "task", "edit", "1", "--body-file", "-", "--json", input="from stdin")
    assert piped.code == 0, piped.err
    assert piped.json["task"]["body"] == "from stdin"


def test_click_completion_and_git_completion(repo: Path, tmp_path: Path) -> None:
    script = lac_inprocess(repo, "completion", "bash").out
    assert "_git_lac()" in script and "complete -o nosort -F" in script
    fish = lac_inprocess(repo, "completion", "fish")
    assert fish.code == 0 and "git-lac" in fish.out
    # `git lac ta<TAB>` through git's completion calls _git_lac with words/cword.
    import sys

    (tmp_path / "c.sh").write_text(script)
    bindir = str(Path(sys.executable).parent)
    run = subprocess.run(
        [
            "bash",
            "-c",
            f'export PATH="{bindir}:$PATH"; source {tmp_path / "c.sh"}; '
            'words=(git lac ta); cword=2; COMPREPLY=(); _git_lac; printf "%s|" "${COMPREPLY[@]}"',
        ],
        capture_output=True,
        text=True,
        cwd=repo,
    )
    assert run.returncode == 0, run.stderr
    assert set(run.stdout.strip("|").split("|")) == {"task ", "tasks "}


def test_colour_only_on_a_terminal_and_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from git_lacunari.views import terminal as render

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(render, "on_terminal", lambda: True)
    assert render.paint("STALE", "red") == "\033[31mSTALE\033[0m"
    monkeypatch.setenv("NO_COLOR", "")
    assert render.paint("STALE", "red") == "STALE"
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr(render, "on_terminal", lambda: False)
    assert render.paint("STALE", "red") == "STALE"


def test_tables_align_and_are_cut_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import shutil

    from git_lacunari.views import terminal as render

    rows = [["#1", "short", "x" * 50], ["#12", "a longer one", "y"]]
    monkeypatch.setattr(render, "on_terminal", lambda: False)
    assert render.table(rows).splitlines() == [
        "#1   short         " + "x" * 50,
        "#12  a longer one  y",
    ]
    monkeypatch.setattr(render, "on_terminal", lambda: True)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(shutil, "get_terminal_size", lambda: os.terminal_size((30, 24)))
    cut = render.table(rows).splitlines()
    assert len(cut[0]) == 30 and cut[0].endswith("…") and cut[1] == "#12  a longer one  y"
    assert render.when(100.0, 160.0).startswith("1m00s ago, ")
