"""The README cannot drift (issue 14): its shell examples run, in order, in a
scratch repository, and their shown output is compared with the real one;
and the man page's DESCRIPTION renders as filled paragraphs.

A ```console block is a series of ``$ COMMAND`` lines, each followed by the
output it shows (stdout then stderr, as a terminal would show them) and
``[exit N]`` when it does not exit 0. Blank lines separate commands. A block
preceded by ``<!-- readme-test: skip (why) -->`` is not run (it needs a
server, a second clone, a crash); ``<!-- readme-test: fresh -->`` starts a new
scratch repository. Times, ages, ids of objects, hashes and scratch paths are
normalised before comparing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
MAN = Path(__file__).resolve().parent.parent / "man" / "git-lac.1"
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"<!--\s*readme-test:\s*(skip|fresh)\b[^>]*-->")


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class Block:
    line: int
    steps: list[Step]
    skip: bool = False
    fresh: bool = False


def console_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    n = 0
    pending: set[str] = set()
    while n < len(lines):
        marker = MARKER.search(lines[n])
        if marker:
            pending.add(marker.group(1))
        fence = FENCE.match(lines[n])
        if fence and fence.group(1) == "console":
            start, n = n + 1, n + 1
            steps: list[Step] = []
            while n < len(lines) and not FENCE.match(lines[n]):
                line = lines[n]
                if line.startswith("$ "):
                    steps.append(Step(line[2:], line=n + 1))
                elif steps and line.strip():
                    steps[-1].shown.append(line)
                n += 1
            blocks.append(Block(start, steps, "skip" in pending, "fresh" in pending))
            pending = set()
        elif fence:  # some other fenced block: skip to its end
            n += 1
            while n < len(lines) and not FENCE.match(lines[n]):
                n += 1
        n += 1
    return blocks


NORMALISE = [
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), "<TIME>"),
    (re.compile(r"\b\d+(\.\d+)?(s|m\d\ds|h\d\dm|d\d\dh) ago\b"), "<AGE> ago"),
    (re.compile(r"\b\d{9,}\.\d+\b"), "<EPOCH>"),
    (re.compile(r"\b[0-9a-f]{7,40}\b"), "<HASH>"),
    (re.compile(r"silent_for=[\d.]+|silent [\dms]+"), "<SILENT>"),
    (re.compile(r"(/tmp|/var)?/[\w./-]*?(scratch|shop2?|fleet)[\w./-]*"), "<PATH>"),
    (re.compile(r"[ \t]+"), " "),
]


def normalise(lines: list[str], scratch: Path) -> list[str]:
    out = []
    for line in lines:
        line = line.replace(str(scratch), "/tmp/scratch")
        for pattern, value in NORMALISE:
            line = pattern.sub(value, line)
        if line.strip():
            out.append(line.strip())
    return out


def scratch_repo(where: Path) -> Path:
    where.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=where, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "start"], cwd=where, check=True)
    return where


def run(step: Step, cwd: Path, env: dict[str, str]) -> list[str]:
    proc = subprocess.run(
        ["bash", "-c", step.command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # interleaved, as a terminal shows them
        text=True,
    )
    got = proc.stdout.splitlines()
    if proc.returncode:
        got.append(f"[exit {proc.returncode}]")
    return got


def blocks_to_run() -> list[Block]:
    return [b for b in console_blocks(README.read_text()) if not b.skip and b.steps]


def test_readme_examples_run_and_show_what_they_print(tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
        "LAC_AGENT": "dana",
        "NO_COLOR": "1",
        "COLUMNS": "200",
        "GIT_AUTHOR_NAME": "dana",
        "GIT_AUTHOR_EMAIL": "dana@example.com",
        "GIT_COMMITTER_NAME": "dana",
        "GIT_COMMITTER_EMAIL": "dana@example.com",
        # The edit hook's resident helper is a speed-up; a test leaves no process behind.
        "LAC_EDIT_HELPER": "off",
    }
    env.pop("LAC_AGENT")  # README examples are dana by default: set through git config
    cwd = None
    failures: list[str] = []
    count = 0
    for n, block in enumerate(blocks_to_run()):
        if cwd is None or block.fresh:
            cwd = scratch_repo(tmp_path / f"scratch{n}")
            for key, value in (("user.email", "dana@example.com"), ("user.name", "Dana")):
                subprocess.run(["git", "config", key, value], cwd=cwd, check=True)
        for step in block.steps:
            count += 1
            got = normalise(run(step, cwd, env), cwd)
            shown = normalise(step.shown, cwd)
            if got != shown:
                failures.append(
                    f"README.md:{step.line}: $ {step.command}\n  shown: {shown}\n  got:   {got}"
                )
    assert count > 0
    assert not failures, "\n".join(failures)


def test_the_collector_sees_commands_outputs_and_markers() -> None:
    text = (
        "<!-- readme-test: skip (needs a server) -->\n```console\n$ a\nout\n```\n"
        "```sh\n$ not a console block\n```\n"
        "<!-- readme-test: fresh -->\n```console\n$ b\n\n$ c\none\n[exit 1]\n```\n"
    )
    first, second = console_blocks(text)
    assert first.skip and [s.command for s in first.steps] == ["a"]
    assert second.fresh and not second.skip
    assert [(s.command, s.shown) for s in second.steps] == [("b", []), ("c", ["one", "[exit 1]"])]


def test_normalising_keeps_what_matters(tmp_path: Path) -> None:
    a = normalise(["claimed: task #1 Fix  the bug  since 3s ago"], tmp_path)
    b = normalise(["claimed: task #1 Fix the bug since 0s ago"], tmp_path)
    c = normalise(["claimed: task #2 Fix the bug since 0s ago"], tmp_path)
    assert a == b and a != c


def test_man_page_description_is_filled_paragraphs() -> None:
    if shutil.which("man") is None or shutil.which("col") is None:
        pytest.skip("no man/col on this machine")
    shown = subprocess.run(
        f"man -l {MAN} | col -b", shell=True, capture_output=True, text=True, check=True
    ).stdout
    description = shown.split("DESCRIPTION", 1)[1].split("\nCOMMANDS", 1)[0]
    paragraphs = [p for p in description.split("\n\n") if p.strip()]
    assert len(paragraphs) == 3, description
    for paragraph in paragraphs:
        lines = paragraph.strip("\n").splitlines()
        indents = {len(line) - len(line.lstrip()) for line in lines}
        assert indents == {7}, f"ragged lines in DESCRIPTION:\n{paragraph}"
        # Filled: no short stray line before the last one of a paragraph.
        assert all(len(line.strip()) > 40 for line in lines[:-1]), paragraph


def test_every_error_kind_is_documented() -> None:
    """Each error kind a caller can meet in ``--json`` is in the README's list."""
    from git_lacunari import errors

    kinds = {
        cls.kind
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.LacError) and "kind" in vars(cls)
    }
    assert {"board_unknown", "board_unreachable", "invalid_input"} <= kinds
    text = README.read_text()
    documented = {k for k in kinds if f"`{k}`" in text}
    assert kinds - documented - {"error", "refused"} == set(), "error kinds missing from README"
