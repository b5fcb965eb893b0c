"""The thin client of the resident helper: the calls the hooks and an agent's
loop make, answered by the helper of this git dir when one runs.

Every hook is a fresh process; deciding in it means importing the board (and
on PostgreSQL its driver) each time, which costs many times the interpreter's
own start. So the exact calls the installed hooks make (``guard pre-commit``,
``guard commit-msg FILE``, ``guard pre-merge-commit``, ``guard post-commit``,
``guard pre-push REMOTE URL``, and on a server ``guard pre-receive`` and
``guard post-receive``) and an agent's ``claim --next``, ``done``,
``heartbeat`` and ``status`` are first offered to the resident helper
(:mod:`edit_server`, the one the edit hook starts): it runs the very same
:func:`entry.dispatch` with this process's argv, environment, working
directory and standard input, and hands back what it printed and its exit
code, which this process prints and exits with. No helper, a dead socket, a
helper busy for longer than READY_TIMEOUT_S, or one of another version: the
call runs here (the direct path), and a helper is started for next time.

Stdlib only, and nothing of the package imported: the hook scripts run this
file itself with ``python -I -S`` (no site, no package) when they can, and
``entry.main`` imports it first otherwise.

The wire: messages of plain values (dicts, lists, strings, numbers), each
``marshal``-ed behind its 4-byte length: ``json`` and ``socket`` alone would
cost this process more than the interpreter's own start (``python -X
importtime``); the interpreter is the same on both ends (its version is in
the key), and the socket is its owner's only. The client sends the call; the
helper says ``ready`` (or why not: the client then runs the call itself);
the client says ``go``; the helper runs it and sends ``{"stdout", "stderr",
"code"}``. A client that gave up before ``go`` closed its end, and the
helper, reading no ``go``, runs nothing: a call is never run twice.
"""

from __future__ import annotations

import _socket
import marshal
import os
import sys

# Not typing's: importing typing costs this process more than all the rest.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

READY_TIMEOUT_S = 1.0  # a helper busy this long with another call: run it here instead
ANSWER_TIMEOUT_S = 300.0  # after go: the helper's waits are bounded by the board's timeouts
KEY_PREFIXES = ("LAC_", "PG", "GIT_CONFIG")
KEY_NAMES = ("HOME", "XDG_CONFIG_HOME")
HERE = os.path.dirname(os.path.abspath(__file__))
# What changes when another version of this code is installed (the version
# itself is in __init__.py): part of the key, so an old helper is never asked.
STAMPED = ("__init__.py", "resident.py", "entry.py", "edit_server.py", "edit_helper.py")

NO_ARGUMENTS = ("pre-commit", "pre-merge-commit", "pre-receive")
AFTER = ("post-commit", "post-receive")
STDIN_HOOKS = ("pre-push", "pre-receive", "post-receive")  # they read the refs on stdin
VERBS = ("done", "heartbeat", "status")


def _mode() -> str:
    return os.environ.get("LAC_EDIT_HELPER", "").strip().lower()


def disabled() -> bool:
    """``LAC_EDIT_HELPER=off``: no helper is asked or started."""
    return _mode() in ("off", "0", "false", "no")


def required() -> bool:
    """``LAC_EDIT_HELPER=require``: every call the helper answers is answered
    by it, started first when none runs, or fails (exit 3): how the test
    suite runs the hooks' own tests through the helper."""
    return _mode() == "require"


def _sha256(data: bytes) -> str:
    try:  # the interpreter's own (hashlib would load OpenSSL first)
        from _sha2 import sha256  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found, no-redef, unused-ignore]
        except ImportError:
            from hashlib import sha256
    return str(sha256(data).hexdigest())


def key() -> str:
    """What decides which helper may answer besides the call itself: the
    environment that names the agent, its board and its git config, and this
    code (its directory and files)."""
    env = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith(KEY_PREFIXES) or k in KEY_NAMES
    )
    stamps = []
    for name in STAMPED:
        try:
            stamps.append(os.stat(os.path.join(HERE, name)).st_mtime_ns)
        except OSError:
            stamps.append(0)
    text = repr([env, HERE, stamps, tuple(sys.version_info[:2])])
    return _sha256(text.encode("utf-8", "surrogateescape"))[:16]


def socket_dir(git_dir: str) -> str:
    return os.path.join(git_dir, "lacunari")


def socket_name(given_key: str | None = None) -> str:
    return f"edit-{given_key or key()}.sock"


Socket = _socket.socket
MAX_MESSAGE = 1 << 30


def connect_helper(directory: str, name: str, timeout: float) -> Socket:
    """A connection to ``directory/name``; the name is given relative to the
    directory (a git dir's path can pass the 108 bytes a socket address holds)."""
    here = os.open(".", os.O_RDONLY)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        os.chdir(directory)
        sock.connect(name)
    except BaseException:
        sock.close()
        raise
    finally:
        os.fchdir(here)
        os.close(here)
    return sock


def _exactly(sock: Socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError("the other end went away")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def send(sock: Socket, message: Any) -> None:
    data = marshal.dumps(message)
    sock.sendall(len(data).to_bytes(4, "big") + data)


def receive(sock: Socket) -> object:
    """One message; EOFError when the other end closed, ValueError for bytes
    that are no message."""
    size = int.from_bytes(_exactly(sock, 4), "big")
    if size > MAX_MESSAGE:
        raise ValueError("too big")
    try:
        return marshal.loads(_exactly(sock, size))
    except (EOFError, TypeError) as exc:
        raise ValueError(str(exc)) from None


# --- which calls ----------------------------------------------------------------------


def hook_call(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """(hook, remote, url) for the exact guard calls the installed hooks make."""
    if len(argv) == 2 and argv[0] == "guard" and argv[1] in NO_ARGUMENTS:
        return argv[1], None, None
    if len(argv) == 4 and argv[:2] == ["guard", "pre-push"] and not argv[2].startswith("-"):
        return "pre-push", argv[2], argv[3]
    return None


class ClaimNext:
    def __init__(self) -> None:
        self.lane = "default"
        self.as_json = False
        self.as_name: str | None = None


def claim_next_call(argv: list[str]) -> ClaimNext | None:
    """`claim --next` with no option but ``--lane``, ``--json`` and ``--as``
    (each at most once): what an agent's loop runs between two tasks, so it
    skips click (about a sixth of the whole process). Anything else, ``-h``
    and ``--wait`` included, is left to click, which parses it and says what
    is wrong."""
    if argv[:1] != ["claim"] or "--next" not in argv:
        return None
    call = ClaimNext()
    valued = {"--lane": "lane", "--as": "as_name"}
    seen: set[str] = set()
    words = iter(argv[1:])
    for word in words:
        name, eq, value = word.partition("=")
        if word in ("--next", "--json") and word not in seen:
            call.as_json = call.as_json or word == "--json"
        elif name in valued and name not in seen:
            given = value if eq else next(words, None)
            if not given or given.startswith("-"):
                return None
            setattr(call, valued[name], given)
            word = name
        else:
            return None
        seen.add(word)
    return call


def resident_call(argv: list[str]) -> bool:
    """Is this a call the helper answers? Only calls that finish on their own
    (no ``claim --next --wait``: the helper answers one call at a time)."""
    if hook_call(argv) is not None or claim_next_call(argv) is not None:
        return True
    if len(argv) == 2 and argv[0] == "guard" and argv[1] in AFTER:
        return True
    if len(argv) == 3 and argv[:2] == ["guard", "commit-msg"] and not argv[2].startswith("-"):
        return True
    return bool(argv) and argv[0] in VERBS


def reads_stdin(argv: list[str]) -> bool:
    return len(argv) >= 2 and argv[0] == "guard" and argv[1] in STDIN_HOOKS


# --- where: the git dir ---------------------------------------------------------------


def git_dir(cwd: str) -> str | None:
    """This call's git dir, as git finds it: ``GIT_DIR`` (a hook on a bare
    repository, or any redirect), else the ``.git`` found walking up from
    ``cwd`` (a directory, or a ``gitdir:`` file), below
    ``GIT_CEILING_DIRECTORIES``. None: none found (the call runs here)."""
    given = os.environ.get("GIT_DIR")
    if given:
        return os.path.normpath(os.path.join(cwd, given))
    ceilings = {
        os.path.realpath(c) for c in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(":") if c
    }
    here = os.path.realpath(cwd)
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            return dot
        try:
            with open(dot, encoding="utf-8") as handle:
                first = handle.readline().strip()
        except (OSError, UnicodeDecodeError):
            first = ""
        if first.startswith("gitdir:"):
            return os.path.normpath(os.path.join(here, first[len("gitdir:") :].strip()))
        parent = os.path.dirname(here)
        if parent == here or parent in ceilings:
            return None
        here = parent


# --- the client -----------------------------------------------------------------------


class Missed:
    """Why the helper did not answer: ``absent`` (no socket, or nobody
    listening: start one) or another reason (it runs, but not for this)."""

    def __init__(self, why: str) -> None:
        self.why = why

    @property
    def absent(self) -> bool:
        return self.why == "absent"


class Answer:
    def __init__(self, stdout: str, stderr: str, code: int) -> None:
        self.stdout, self.stderr, self.code = stdout, stderr, code


def _stdin_text() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.buffer.read().decode("utf-8", "surrogateescape")


def _tty(stream: object) -> bool:
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (OSError, ValueError):
        return False


def ask(argv: list[str], stdin_text: str | None) -> Answer | Missed:
    """The helper's answer to this call, or why there is none (the call then
    runs here). ``stdin_text``: the call's standard input, already read."""
    if disabled():
        return Missed("off")
    try:
        cwd = os.getcwd()
    except OSError:  # a directory removed under the caller: the direct path says so
        return Missed("no repository")
    found = git_dir(cwd)
    if found is None:
        return Missed("no repository")
    wanted = key()
    try:
        sock = connect_helper(socket_dir(found), socket_name(wanted), READY_TIMEOUT_S)
    except OSError:
        return Missed("absent")
    env = dict(os.environ)
    if _tty(sys.stdout) and "COLUMNS" not in env:
        # The helper's own stdout is no terminal: the width this one has.
        try:
            size = os.get_terminal_size(sys.stdout.fileno())
            env["COLUMNS"], env["LINES"] = str(size.columns), str(size.lines)
        except OSError:
            pass
    call = {
        "key": wanted,
        "run": argv,
        "env": env,
        "cwd": cwd,
        "stdin": stdin_text,
        "tty": [_tty(sys.stdin), _tty(sys.stdout), _tty(sys.stderr)],
    }
    try:
        try:
            send(sock, call)
            ready = receive(sock)
        except (OSError, ValueError, EOFError):
            return Missed("no ready")  # busy, or gone: nothing ran
        if not (isinstance(ready, dict) and ready.get("ready") == wanted):
            return Missed("refused")
        try:
            send(sock, {"go": True})
            sock.settimeout(ANSWER_TIMEOUT_S)
            reply = receive(sock)
        except (OSError, ValueError, EOFError):
            reply = None
    finally:
        sock.close()
    if not (
        isinstance(reply, dict)
        and isinstance(reply.get("stdout"), str)
        and isinstance(reply.get("stderr"), str)
        and isinstance(reply.get("code"), int)
    ):
        # It may have run: never run it a second time here.
        said = "git lac: the resident helper took this call and gave no answer; run it again"
        return Answer("", said + "\n", 3)
    return Answer(reply["stdout"], reply["stderr"], reply["code"])


def show(answer: Answer) -> int:
    """Print the helper's answer as the call would have printed it; its exit code."""
    try:
        if answer.stdout:
            sys.stdout.buffer.write(answer.stdout.encode("utf-8", "surrogateescape"))
            sys.stdout.flush()
    except BrokenPipeError:  # as edge._reader_gone: the reader went away
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141
    if answer.stderr:
        sys.stderr.buffer.write(answer.stderr.encode("utf-8", "surrogateescape"))
        sys.stderr.flush()
    return answer.code


def forward_started(argv: list[str], stdin_text: str | None, start: Callable[[], None]) -> int:
    """``LAC_EDIT_HELPER=require``: ``start()`` a helper, wait for it, ask it."""
    import time

    start()
    deadline = time.monotonic() + 20.0
    while True:
        got = ask(argv, stdin_text)
        if isinstance(got, Answer):
            return show(got)
        if time.monotonic() > deadline:
            print(
                f"git lac: no resident helper answered ({got.why}; LAC_EDIT_HELPER=require)",
                file=sys.stderr,
            )
            return 3
        time.sleep(0.05)


def forward(argv: list[str]) -> tuple[int | None, Missed | None, str | None]:
    """(exit code, None, stdin) when the helper answered; else (None, why,
    the standard input read for it, to hand to the direct path)."""
    if not resident_call(argv):
        return None, Missed("not resident"), None
    stdin_text = _stdin_text() if reads_stdin(argv) else None
    got = ask(argv, stdin_text)
    if isinstance(got, Missed):
        return None, got, stdin_text
    return show(got), None, stdin_text


def _direct(lac: str, argv: list[str], stdin_text: str | None) -> int:
    """The direct path, from the hook script's own interpreter: git-lac
    itself, given the standard input this process already read."""
    if stdin_text is None:
        os.execv(lac, [lac, *argv])
    import subprocess

    return subprocess.run(
        [lac, *argv], input=stdin_text.encode("utf-8", "surrogateescape")
    ).returncode


def main() -> None:
    """``python -I -S resident.py GIT_LAC ARGV...``, as the hook scripts run
    it: the helper's answer, or ``GIT_LAC ARGV...`` run as it always was."""
    lac, argv = sys.argv[1], sys.argv[2:]
    code, _, stdin_text = forward(argv)
    if code is None:
        code = _direct(lac, argv, stdin_text)
    sys.exit(code)


if __name__ == "__main__":
    main()
