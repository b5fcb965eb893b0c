"""A real PgBouncer (Debian's package, /usr/sbin/pgbouncer) in transaction
pooling mode, in front of the test server, for the tests of issue 24.

Each one runs on a free port with its own ini, auth file, log and pid file in
a private temporary directory, as the postgres account (PgBouncer refuses to
run as root), and is stopped (by its own pid) and removed after. Without the
binary the tests that need it skip, or fail under LAC_REQUIRE_PG=1 (`.ci/run`
installs the package when it is missing).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

PGBOUNCER = "/usr/sbin/pgbouncer"
START_WAIT_S = 15.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def require_pgbouncer() -> str:
    found = PGBOUNCER if os.access(PGBOUNCER, os.X_OK) else shutil.which("pgbouncer")
    if found:
        return found
    reason = f"PgBouncer tests SKIPPED: no {PGBOUNCER} (Debian's pgbouncer package)"
    if os.environ.get("LAC_REQUIRE_PG") == "1":
        pytest.fail(reason + " (LAC_REQUIRE_PG=1 forbids skipping)")
    print("\n" + "!" * 78 + f"\n{reason}\n" + "!" * 78, file=sys.stderr)
    pytest.skip(reason)


@contextlib.contextmanager
def pgbouncer(server: str, *, pool_size: int = 10, max_clients: int = 1000) -> Iterator[str]:
    """PgBouncer in pool_mode = transaction in front of ``server`` (a
    postgresql:// URL, trust auth); yields the same URL through it."""
    binary = require_pgbouncer()
    parts = urlsplit(server)
    host, port = parts.hostname or "127.0.0.1", parts.port or 5432
    user = parts.username or "postgres"
    here = Path(tempfile.mkdtemp(prefix="lac-pgbouncer-"))
    run_as: list[str] = []
    if os.geteuid() == 0:  # "PgBouncer should not run as root"
        run_as = ["runuser", "-u", "postgres", "--"]
        shutil.chown(here, "postgres")
    listen = _free_port()
    (here / "users.txt").write_text(f'"{user}" ""\n')
    (here / "pgbouncer.ini").write_text(
        "\n".join(
            [
                "[databases]",
                f"* = host={host} port={port}",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                f"listen_port = {listen}",
                "unix_socket_dir =",
                "auth_type = trust",
                f"auth_file = {here / 'users.txt'}",
                "pool_mode = transaction",
                f"max_client_conn = {max_clients}",
                f"default_pool_size = {pool_size}",
                "reserve_pool_size = 0",
                f"logfile = {here / 'pgbouncer.log'}",
                "log_connections = 0",
                "log_disconnections = 0",
                "",
            ]
        )
    )
    for name in ("users.txt", "pgbouncer.ini"):
        (here / name).chmod(0o644)
    proc = subprocess.Popen(
        [*run_as, binary, str(here / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + START_WAIT_S
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", listen)) == 0:
                    break
            if proc.poll() is not None:
                raise RuntimeError(
                    f"pgbouncer exited at start: {proc.stderr.read() if proc.stderr else ''}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError("pgbouncer did not start listening in time")
            time.sleep(0.05)
        netloc = f"{user}@127.0.0.1:{listen}"
        yield urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    finally:
        proc.terminate()  # our own process, by its pid (runuser passes SIGTERM on)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
        shutil.rmtree(here, ignore_errors=True)
