"""The server's pre-receive guard: a real bare repository, real pushes over a
local path and file://, the hook installed by `git lac hooks install --server`."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import Result, git, lac_process
from .test_guard import BIN, head, remote_head

Lac = Callable[..., Result]


@dataclass
class Server:
    client: Path  # erin's clone (and where the test board lives, on SQLite)
    bare: Path
    url: str  # how the client reaches it: a local path or file://

    def push(self, *args: str, env: dict[str, str] | None = None) -> Result:
        """`git push` from the client; its own hooks are not what is tested here."""
        full = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"]}
        full.update(env or {})
        proc = subprocess.run(
            ["git", "push", "--no-verify", self.url, *args],
            cwd=self.client,
            env=full,
            capture_output=True,
            text=True,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def has(self, ref: str) -> str | None:
        return remote_head(self.bare, ref)


def server_for(repo: Path, tmp_path: Path, board_url: str | None, transport: str) -> Server:
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    # Before the guard: the server starts with the client's history.
    git(repo, "push", "-q", "--no-verify", str(bare), "main")
    installed = lac_process(bare, "hooks", "install", "--server", "--json")
    assert installed.code == 0, installed.err
    assert [(h["hook"], h["action"]) for h in installed.json["hooks"]] == [
        ("pre-receive", "installed"),
        ("post-receive", "installed"),  # landing (issue 25): tests/test_landing_flow.py
    ]
    board = board_url or f"sqlite://{repo / '.git' / 'lacunari' / 'board.db'}"
    git(bare, "config", "lac.url", board)
    url = str(bare) if transport == "path" else f"file://{bare}"
    return Server(repo, bare, url)


@pytest.fixture(params=["path", "file"])
def server(
    request: pytest.FixtureRequest, lac: Lac, repo: Path, tmp_path: Path, board_url: str | None
) -> Server:
    return server_for(repo, tmp_path, board_url, str(request.param))


def commit(repo: Path, message: str, change: Callable[[Path], None]) -> str:
    change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, "--no-verify")
    return head(repo)


def write(path: str, text: str) -> Callable[[Path], None]:
    def change(repo: Path) -> None:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)

    return change


def assert_refused(result: Result, *lines: str) -> None:
    assert result.code != 0, result
    assert "push refused" in result.err, result.err
    for line in lines:
        assert line in result.err, f"{line!r} not in:\n{result.err}"


# --- what is refused, and the message ------------------------------------------------

KINDS = ["modify", "delete", "rename-away", "rename-onto", "mode"]


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_change_to_a_held_path_is_refused(server: Server, lac: Lac, kind: str) -> None:
    repo = server.client
    held = "lib/auth.py" if kind == "rename-onto" else "core/auth.py"
    lac("task", "add", "auth", "--write", held)
    assert lac("claim", "1", "--as", "dana").code == 0

    def change(repo: Path) -> None:
        if kind == "modify":
            (repo / "core" / "auth.py").write_text("erin's edit\n")
        elif kind == "delete":
            (repo / "core" / "auth.py").unlink()
        elif kind in ("rename-away", "rename-onto"):
            (repo / "lib").mkdir()
            git(repo, "mv", "core/auth.py", "lib/auth.py")
        else:
            (repo / "core" / "auth.py").chmod(0o755)

    sha = commit(repo, kind, change)
    before = server.has("main")
    refused = server.push("main", env={"LAC_AGENT": "dana"})  # a client variable: not trusted
    assert_refused(
        refused,
        f"refs/heads/main {sha[:12]} {held}  held by dana (write lock {held}, task #1",
        "To get a release:",
        "git push -o lac.agent=NAME",
    )
    assert "(pusher: unknown, no push option lac.agent)" in refused.err
    assert server.has("main") == before
    allowed = server.push("-o", "lac.agent=dana", "main")
    assert allowed.code == 0, allowed.err
    assert server.has("main") == sha


def test_the_pushers_lac_guard_off_does_not_switch_off_the_server(server: Server, lac: Lac) -> None:
    """A push over a local path or file:// hands the pusher's environment to
    the server's hook: LAC_GUARD there is the pusher's, never obeyed."""
    repo = server.client
    base = head(repo)
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    bad = commit(repo, "bad", write("core/auth.py", "bad\n"))
    refused = server.push("main", "-o", "lac.agent=erin", env={"LAC_GUARD": "off"})
    assert_refused(refused, f"refs/heads/main {bad[:12]} core/auth.py  held by dana")
    assert server.has("main") == base


def test_one_offending_ref_rejects_the_whole_push(server: Server, lac: Lac) -> None:
    repo = server.client
    base = head(repo)
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    clean = commit(repo, "clean", write("README", "clean\n"))
    git(repo, "checkout", "-q", "-b", "feature", base)
    bad = commit(repo, "bad", write("core/auth.py", "bad\n"))
    refused = server.push("main", "feature", "-o", "lac.agent=erin")
    assert_refused(refused, f"refs/heads/feature {bad[:12]} core/auth.py  held by dana")
    assert "(pusher: erin, push option lac.agent)" in refused.err
    assert server.has("main") == base and server.has("feature") is None
    assert clean != base


def test_a_merge_commits_own_change_is_refused(server: Server, lac: Lac) -> None:
    """A merge of two clean sides whose result edits a held path itself."""
    repo = server.client
    base = head(repo)
    commit(repo, "main side", write("README", "main side\n"))
    git(repo, "checkout", "-q", "-b", "side", base)
    commit(repo, "other side", write("docs/x.md", "x\n"))
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    (repo / "core" / "auth.py").write_text("slipped into the merge\n")
    git(repo, "add", "core/auth.py")
    git(repo, "commit", "-qm", "merge side", "--no-verify")
    merge = head(repo)
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    assert_refused(
        server.push("main", "-o", "lac.agent=erin"),
        f"refs/heads/main {merge[:12]} core/auth.py  held by dana",
    )
    assert server.has("main") == base


# --- what passes ---------------------------------------------------------------------


def test_carrying_in_a_held_change_the_server_has_moves_the_branch(
    server: Server, lac: Lac
) -> None:
    """A feature branch that changed the path was pushed before the lock; a
    clean merge of it into main brings no new change of its own, but main's
    copy of the held path changes: judged by main's old and new trees
    (the holder may; nobody else). The same history under a new name passes."""
    repo = server.client
    base = head(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    old = commit(repo, "before the lock", write("core/auth.py", "old work\n"))
    assert server.push("feature").code == 0
    git(repo, "checkout", "-q", "main")
    commit(repo, "main moves", write("README", "moved\n"))
    git(repo, "merge", "-q", "--no-edit", "--no-verify", "feature")
    merge = head(repo)
    assert git(repo, "rev-list", "--parents", "-1", "HEAD").split()[1:] != [base]
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    assert_refused(
        server.push("main", "-o", "lac.agent=erin"),
        "refs/heads/main (ref update) core/auth.py  held by dana",
    )
    assert server.has("main") == base
    pushed = server.push("main", "-o", "lac.agent=dana")
    assert pushed.code == 0, pushed.err
    assert server.has("main") == merge
    # The same history under a new name: nothing new at all.
    assert server.push(f"{old}:refs/heads/copy").code == 0


def test_a_new_branch_whose_only_new_commit_is_clean_passes(server: Server, lac: Lac) -> None:
    repo = server.client
    commit(repo, "old history", write("core/auth.py", "old\n"))
    assert server.push("main").code == 0
    assert lac("lock", "core/", "--as", "dana").code == 0
    git(repo, "checkout", "-q", "-b", "fresh")
    clean = commit(repo, "clean", write("README", "fresh\n"))
    pushed = server.push("fresh", "-o", "lac.agent=erin")
    assert pushed.code == 0, pushed.err
    assert server.has("fresh") == clean


def test_tags_and_deletions_pass(server: Server, lac: Lac) -> None:
    repo = server.client
    old = commit(repo, "old", write("core/auth.py", "old\n"))
    assert server.push("main", f"{old}:refs/heads/doomed").code == 0
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    git(repo, "tag", "-a", "-m", "release", "v1", old)
    git(repo, "tag", "light", old)
    tagged = server.push("v1", "light")
    assert tagged.code == 0, tagged.err
    deleted = server.push(":doomed", ":light")
    assert deleted.code == 0, deleted.err
    assert server.has("doomed") is None and server.has("light") is None
    # A new tag on a new commit that changes the held path is new work: refused.
    bad = commit(repo, "bad", write("core/auth.py", "bad\n"))
    git(repo, "tag", "v2", bad)
    assert_refused(server.push("v2"), f"refs/tags/v2 {bad[:12]} core/auth.py")


# --- who is pushing --------------------------------------------------------------------


def test_the_hosting_layers_variable_names_the_pusher(server: Server, lac: Lac) -> None:
    repo = server.client
    git(server.bare, "config", "lac.guard.server.pusher-env", "GL_USERNAME")
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    sha = commit(repo, "dana's", write("core/auth.py", "dana\n"))
    # Once the server names a variable, a push option cannot speak for someone else.
    spoofed = server.push("main", "-o", "lac.agent=dana", env={"GL_USERNAME": "erin"})
    assert spoofed.code != 0 and "does not match the pusher" in spoofed.err
    as_erin = server.push("main", env={"GL_USERNAME": "erin"})
    assert_refused(as_erin, "(pusher: erin, environment GL_USERNAME)")
    unset = server.push("main", "-o", "lac.agent=dana")
    assert unset.code != 0 and "GL_USERNAME=unset" in unset.err
    as_dana = server.push("main", "-o", "lac.agent=dana", env={"GL_USERNAME": "dana"})
    assert as_dana.code == 0, as_dana.err
    assert server.has("main") == sha


# --- the hook itself -------------------------------------------------------------------


def test_a_foreign_pre_receive_is_chained_and_push_options_advertised(
    repo: Path, tmp_path: Path
) -> None:
    assert lac_process(repo, "init").code == 0
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    hook = bare / "hooks" / "pre-receive"
    foreign = '#!/bin/sh\ncat >> "$GIT_DIR/foreign.log"\n'
    hook.write_text(foreign)
    hook.chmod(0o755)
    installed = lac_process(bare, "hooks", "install", "--server", "--json")
    assert [h["action"] for h in installed.json["hooks"]] == ["chained", "installed"]
    assert git(bare, "config", "receive.advertisePushOptions").strip() == "true"
    git(bare, "config", "lac.url", f"sqlite://{repo / '.git' / 'lacunari' / 'board.db'}")
    server = Server(repo, bare, str(bare))
    assert server.push("main").code == 0
    assert (bare / "foreign.log").read_text().split()[1:] == [head(repo), "refs/heads/main"]
    (bare / "hooks" / "pre-receive.legacy").write_text("#!/bin/sh\nexit 9\n")
    commit(repo, "x", write("README", "x\n"))
    assert server.push("main").code != 0, "a refusing foreign hook still rejects the push"
    removed = lac_process(bare, "hooks", "uninstall", "--server", "--json")
    assert [h["action"] for h in removed.json["hooks"]] == ["restored", "removed"]
    assert hook.read_text() == "#!/bin/sh\nexit 9\n"


def test_git_lac_gone_from_the_server_refuses_unless_allowed(repo: Path, tmp_path: Path) -> None:
    assert lac_process(repo, "init").code == 0
    server = server_for(repo, tmp_path, None, "path")
    hook = server.bare / "hooks" / "pre-receive"
    hook.write_text(hook.read_text().replace(str(Path(BIN) / "git-lac"), "/nowhere/git-lac"))
    commit(repo, "x", write("README", "x\n"))
    env = {"PATH": "/usr/bin:/bin"}  # no git-lac on it
    refused = server.push("main", env=env)
    assert refused.code != 0 and "git-lac is not installed on the server" in refused.err
    git(server.bare, "config", "lac.guard.server.offline", "allow")
    allowed = server.push("main", env=env)
    assert allowed.code == 0 and "push allowed unchecked" in allowed.err


# --- a board that cannot answer ----------------------------------------------------------


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word (a hung board)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(sock.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    sock.close()


@pytest.mark.parametrize("board", ["down", "hung", "missing", "unset"])
def test_a_board_that_cannot_answer_refuses_in_one_line_within_the_timeout(
    repo: Path, tmp_path: Path, silent_port: int, board: str
) -> None:
    server = server_for(repo, tmp_path, None, "path")
    url = {
        "down": "postgresql://nobody@127.0.0.1:1/nowhere",
        "hung": f"postgresql://nobody@127.0.0.1:{silent_port}/nowhere",
        "missing": f"sqlite://{tmp_path / 'no-such' / 'board.db'}",
        "unset": None,
    }[board]
    if url is None:
        git(server.bare, "config", "--unset", "lac.url")
    else:
        git(server.bare, "config", "lac.url", url)
    git(server.bare, "config", "lac.timeout", "1")
    commit(repo, "x", write("README", "x\n"))
    start = time.monotonic()
    refused = server.push("main")
    elapsed = time.monotonic() - start
    assert refused.code != 0
    ours = [line for line in refused.err.splitlines() if "git lac" in line]
    assert len(ours) == 1 and "push refused" in ours[0], refused.err
    assert "lac.guard.server.offline = refuse" in ours[0]
    # psycopg's connect timeout is at least 2 s; the rest is two git processes.
    assert elapsed < 6, f"took {elapsed:.1f}s"
    assert not (tmp_path / "no-such").exists(), "the guard created a board"
    assert not (server.bare / "lacunari").exists(), "the guard created a board"
    git(server.bare, "config", "lac.guard.server.offline", "allow")
    allowed = server.push("main")
    assert allowed.code == 0 and "push allowed unchecked" in allowed.err


# --- failing safe on what the guard cannot read (the attacker's findings) ----------------


def test_a_hook_that_hides_the_quarantine_refuses_every_push(server: Server, lac: Lac) -> None:
    """A wrapper that clears git's quarantine variables before the guard: the
    pushed objects are invisible to it, so nothing can be judged: refused,
    never taken as a push that changes nothing."""
    repo = server.client
    base = head(repo)
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    hook = server.bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "unset GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_QUARANTINE_PATH\n"
        f"exec '{Path(BIN) / 'git-lac'}' guard pre-receive\n"
    )
    bad = commit(repo, "bad", write("core/auth.py", "bad\n"))
    refused = server.push("main", "-o", "lac.agent=erin")
    assert refused.code != 0, refused
    ours = [line for line in refused.err.splitlines() if "git lac" in line]
    assert len(ours) == 1, refused.err
    assert f"push refused: the server cannot read {bad}" in ours[0]
    assert "GIT_QUARANTINE_PATH" in ours[0] and "nothing was checked" in ours[0]
    assert server.has("main") == base
    clean_too = server.push("main", "-o", "lac.agent=dana")  # the holder: still nothing readable
    assert clean_too.code != 0 and "cannot read" in clean_too.err
    assert server.has("main") == base


RECEIVE_LINES = {
    "missing commit": ("{main} " + "deadbeef" * 5 + " refs/heads/main\n", 3),
    "missing tag": ("0" * 40 + " " + "deadbeef" * 5 + " refs/tags/v9\n", 3),
    "missing old": ("deadbeef" * 5 + " {main} refs/heads/main\n", 3),
    "not ids": ("x y refs/heads/main\n", 2),
    "short id": ("{main} deadbeef refs/heads/main\n", 2),
    "two fields": ("{main} refs/heads/main\n", 2),
    "not a ref": ("{main} {main} main\n", 2),
}


@pytest.mark.parametrize("case", list(RECEIVE_LINES))
def test_an_unreadable_or_malformed_line_refuses_in_one_line(
    lac: Lac, repo: Path, tmp_path: Path, board_url: str | None, case: str
) -> None:
    """README, exit codes: a line the guard cannot read is invalid input (2);
    an id the server cannot read, a server that cannot work (3). Never ok."""
    server = server_for(repo, tmp_path, board_url, "path")
    text, code = RECEIVE_LINES[case]
    main = server.has("main")
    assert main is not None
    given = text.format(main=main)
    said = lac_process(server.bare, "--json", "guard", "pre-receive", input=given)
    assert said.code == code, said
    assert said.json["ok"] is False, said.json
    assert "push refused" in said.json["error"]["message"]
    human = lac_process(server.bare, "guard", "pre-receive", input=given)
    assert human.code == code
    assert len([line for line in human.err.splitlines() if line.strip()]) == 1, human.err


def test_a_readable_tag_of_a_blob_still_passes(server: Server, lac: Lac) -> None:
    repo = server.client
    blob = git(repo, "hash-object", "-w", "--stdin", input="a note\n").strip()
    git(repo, "tag", "note", blob)
    pushed = server.push("note")
    assert pushed.code == 0, pushed.err


# --- deleting a branch is judged like a rewind to the destination --------------------------


def delete(server: Server, branch: str, agent: str | None = None) -> Result:
    """`git push origin --delete BRANCH` from the client, as ``agent`` says."""
    if "origin" not in git(server.client, "remote").split():
        git(server.client, "remote", "add", "origin", server.url)
    said = ["-o", f"lac.agent={agent}"] if agent else []
    full = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"]}
    proc = subprocess.run(
        ["git", "push", "--no-verify", *said, "origin", "--delete", branch],
        cwd=server.client,
        env=full,
        capture_output=True,
        text=True,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def claimed_line(server: Server, lac: Lac, branch: str) -> str:
    """dana claims task #1 (core/auth.py), works on ``branch`` and pushes it:
    its tip, as the board records it."""
    repo = server.client
    assert lac("task", "add", "auth", "--write", "core/auth.py").code == 0
    assert lac("claim", "1", env={"LAC_AGENT": "dana"}).code == 0
    git(repo, "checkout", "-q", "-b", branch)
    commit(repo, "elsewhere", write("README", "dana\n"))
    work = commit(repo, "dana's work", write("core/auth.py", "dana's work\n"))
    assert lac("heartbeat", env={"LAC_AGENT": "dana"}).code == 0
    assert lac("show", "1", "--json").json["task"]["tip"] == work
    assert server.push(branch, "-o", "lac.agent=dana").code == 0
    git(repo, "checkout", "-q", "main")
    return work


def test_deleting_a_held_claims_unlanded_line_is_refused(server: Server, lac: Lac) -> None:
    """dana's unlanded work on feat3 survives erin's delete (and so her
    delete-and-recreate): one line names the holder and the task."""
    base = head(server.client)
    branch = "feat3-ü"
    work = claimed_line(server, lac, branch)
    forced = server.push("-f", f"{base}:refs/heads/{branch}", "-o", "lac.agent=erin")
    assert_refused(forced, f"refs/heads/{branch} (ref update) core/auth.py  held by dana")
    said = f"refused: {branch} carries task #1's unlanded work, claimed by dana"
    for who in ("erin", None):  # a pusher nobody names holds nothing either
        deleted = delete(server, branch, who)
        assert deleted.code != 0
        remote = [ln.removeprefix("remote:").strip() for ln in deleted.err.splitlines()]
        lines = [ln for ln in remote if ln and ln.startswith(("refused", "git lac"))]
        assert lines == [f"{said}; only dana may delete it"], deleted.err
        assert server.has(branch) == work
    # The holder's own delete passes; then the name is anyone's again.
    own = delete(server, branch, "dana")
    assert own.code == 0, own.err
    assert server.has(branch) is None
    again = server.push(f"{base}:refs/heads/{branch}", "-o", "lac.agent=erin")
    assert again.code == 0, again.err


def test_deleting_a_branch_that_is_no_claims_line_passes(server: Server, lac: Lac) -> None:
    """A branch that changes a held path but carries no claim's unlanded
    work takes nothing from anyone: its deletion passes, as does that of a
    line whose claim's work is in the destination, and of an unrelated one."""
    repo = server.client
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    git(repo, "checkout", "-q", "-b", "scratch")
    commit(repo, "scratch", write("core/auth.py", "scratch\n"))
    assert server.push("scratch", "-o", "lac.agent=dana").code == 0
    git(repo, "checkout", "-q", "--orphan", "island")
    commit(repo, "island", write("core/auth.py", "island\n"))
    assert server.push("island", "-o", "lac.agent=dana").code == 0
    git(repo, "checkout", "-q", "main")
    for branch in ("scratch", "island"):
        deleted = delete(server, branch, "erin")
        assert deleted.code == 0, deleted.err
        assert server.has(branch) is None
    # A claim's line whose work the destination has: nothing unlanded on it.
    assert lac("unlock", "core/auth.py", "--as", "dana").code == 0
    work = claimed_line(server, lac, "landed")
    git(repo, "merge", "-q", "--ff-only", "landed")
    assert server.push("main", "-o", "lac.agent=dana").code == 0
    assert server.has("main") == work
    deleted = delete(server, "landed", "erin")
    assert deleted.code == 0, deleted.err
    assert server.has("landed") is None


def test_deleting_a_branch_already_in_the_destination_or_clean_passes(
    server: Server, lac: Lac
) -> None:
    repo = server.client
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    git(repo, "checkout", "-q", "-b", "merged")
    commit(repo, "before the lock", write("core/auth.py", "old\n"))
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "merged")
    assert server.push("main", "merged", "-o", "lac.agent=dana").code == 0
    git(repo, "checkout", "-q", "-b", "clean")
    commit(repo, "clean", write("README", "clean\n"))
    assert server.push("clean").code == 0
    deleted = server.push(":merged", ":clean", "-o", "lac.agent=erin")
    assert deleted.code == 0, deleted.err
    assert server.has("merged") is None and server.has("clean") is None


# --- the destination: HEAD at an unborn branch ---------------------------------------------


def test_a_head_at_an_unborn_branch_falls_back_to_main(server: Server, lac: Lac) -> None:
    """HEAD names an unborn master while main has commits: main is the
    destination (README), for a new branch's base and the deletion rule."""
    repo = server.client
    base = head(repo)
    git(server.bare, "symbolic-ref", "HEAD", "refs/heads/master")
    work = commit(repo, "dana's work", write("core/auth.py", "dana's work\n"))
    assert server.push("main", "-o", "lac.agent=dana").code == 0
    assert lac("lock", "core/auth.py", "--as", "dana").code == 0
    clean = commit(repo, "clean", write("README", "erin\n"))
    pushed = server.push("main", "-o", "lac.agent=erin")
    assert pushed.code == 0, pushed.err
    assert server.has("main") == clean
    made_again = server.push(f"{base}:refs/heads/release", "-o", "lac.agent=erin")
    assert_refused(made_again, "refs/heads/release (ref update) core/auth.py  held by dana")
    assert_refused(
        server.push(":main", "-o", "lac.agent=erin"),
        "refs/heads/main (ref update) core/auth.py  held by dana",
    )
    assert server.has("main") == clean and work != clean
    doctor = lac_process(server.bare, "doctor")
    assert "no commit yet" not in doctor.out, doctor.out
