"""`git lac serve`: a real server process, a real headless Chromium.

The server is started as `git lac serve --port 0` (a real process, the port it
took read from the line it prints) on a scratch board of each backend; the
page is driven by Playwright on the system's Chromium (``/usr/bin/chromium``,
Debian's package: nothing is downloaded; .ci/run installs it). One browser
for the module. Changes are made from the command line (real processes) or
under the board (``backdate_claim``, raw SQL) and must show on the open page
within a second, without a reload.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO_ROOT, Result, backdate_claim, lac_inprocess, lac_process

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = REPO_ROOT / "docs" / "serve.png"
LIVE_WITHIN_S = 1.0
# Read at import, before the seal drops every LAC_ variable from the tests' environment.
UPDATE_SCREENSHOT = os.environ.get("LAC_UPDATE_SCREENSHOT") == "1"

playwright_api = pytest.importorskip("playwright.sync_api")

if not CHROMIUM.exists():  # pragma: no cover - .ci/run installs it
    if os.environ.get("LAC_REQUIRE_BROWSER") == "1":  # CI: a skip would hide it
        raise RuntimeError(f"no {CHROMIUM}: apt-get install -y chromium")
    pytest.skip(f"no {CHROMIUM}: apt-get install -y chromium", allow_module_level=True)


# --- a real server ------------------------------------------------------------------


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    lines: list[str]
    token: str | None = None  # the one the server made and printed

    @property
    def open_url(self) -> str:
        """What a person opens: the printed URL, with the token if one was made."""
        return f"{self.url}?token={self.token}" if self.token else self.url

    def _auth(self, headers: dict[str, str] | None, auth: bool) -> dict[str, str]:
        given = dict(headers or {})
        if auth and self.token and "Authorization" not in given:
            given["Authorization"] = f"Bearer {self.token}"
        return given

    def get(
        self, path: str, headers: dict[str, str] | None = None, *, auth: bool = True
    ) -> tuple[int, bytes, dict[str, str]]:
        return http(self.url.rstrip("/") + path, headers=self._auth(headers, auth))

    def post(
        self,
        path: str,
        body: Any,
        headers: dict[str, str] | None = None,
        *,
        auth: bool = True,
    ) -> tuple[int, bytes, dict[str, str]]:
        data = json.dumps(body).encode()
        given = self._auth(headers, auth)
        return http(self.url.rstrip("/") + path, data=data, headers=given, method="POST")

    def snapshot(self) -> dict[str, Any]:
        code, body, _ = self.get("/api/snapshot")
        assert code == 200, body
        data: dict[str, Any] = json.loads(body)
        return data


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def http(
    url: str,
    *,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
    method: str = "GET",
) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def start_server(
    repo: Path, *args: str, env: dict[str, str] | None = None, expect_url: bool = True
) -> Served:
    full_env = {**os.environ, **(env or {})}
    full_env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + full_env.get("PATH", "")
    proc = subprocess.Popen(
        ["git", "lac", "serve", "--port", "0", *args],
        cwd=repo,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    url = ""
    selector = selectors.DefaultSelector()
    selector.register(proc.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        if not selector.select(timeout=0.2):
            continue
        line = proc.stderr.readline()
        lines.append(line)
        if line.startswith("git lac serve: http"):
            url = line.split()[3]
            host = args[args.index("--host") + 1] if "--host" in args else "127.0.0.1"
            loopback = host.startswith("127.") or host in ("localhost", "::1", "[::1]")
            if ("--allow-actions" in args or not loopback) and "--token" not in args:
                # actions, or a non-loopback bind: the token line follows at once
                lines.append(proc.stderr.readline())
            break
    selector.close()
    if not url and expect_url:
        stop(Served(proc, "", lines))
        raise AssertionError(f"the server did not start: {''.join(lines)}{proc.stderr.read()}")
    made = [line for line in lines if "token (shown once)" in line]
    token = made[0].rsplit("token=", 1)[1].strip() if made else None
    return Served(proc, url, lines, token)


def stop(served: Served) -> int:
    if served.proc.poll() is None:
        os.killpg(served.proc.pid, signal.SIGINT)
        try:
            served.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(served.proc.pid, signal.SIGKILL)
            served.proc.wait(10)
    return served.proc.returncode


@contextlib.contextmanager
def serving(repo: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    served = start_server(repo, *args, env=env)
    try:
        yield served
    finally:
        code = stop(served)
        rest = served.proc.stderr.read() if served.proc.stderr else ""
        assert "Traceback" not in rest, rest
        # Ctrl-C: git-lac says so and exits 130; git, its parent, dies of the same SIGINT.
        assert code in (130, -signal.SIGINT), (code, rest)
        assert "git lac: interrupted" in rest, rest


# --- one browser for the module ----------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    assert errors == [], errors


def open_page(page: Any, served: Served) -> None:
    page.goto(served.open_url)
    page.wait_for_selector("#live.on", timeout=10_000)
    page.wait_for_selector(".card", timeout=10_000)
    page.evaluate("window.__not_reloaded = true")


def card(page: Any, task_id: int) -> Any:
    return page.locator(f".card[data-task='{task_id}']")


def wait_until(page: Any, predicate: str, arg: Any = None, timeout_s: float = 5.0) -> float:
    """Seconds until the JS ``predicate`` holds on the page."""
    start = time.monotonic()
    page.wait_for_function(predicate, arg=arg, timeout=timeout_s * 1000, polling="raf")
    return time.monotonic() - start


@pytest.fixture
def board(repo: Path, board_url: str | None) -> Callable[..., Result]:
    """An initialised board on the backend under test, with four tasks."""
    init = ["init"] + (["--url", board_url] if board_url else [])
    assert lac_inprocess(repo, *init).code == 0

    def call(*args: str) -> Result:
        result = lac_inprocess(repo, *args)
        assert result.code == 0, result.err
        return result

    call("task", "add", "write the <script>alert(1)</script> parser", "--write", "core/")
    call("task", "add", "test the parser", "--after", "1", "--lane", "qa")
    call("task", "add", "train the model", "--needs", "gpu", "--lane", "qa")
    call("task", "add", "touch auth", "--write", "core/auth.py")
    return call


def store_of(repo: Path, url: str | None) -> Any:
    from git_lacunari.repo import discover
    from git_lacunari.store import open_store

    return open_store(url, discover(repo).common_dir)


# --- the page, on both backends -----------------------------------------------------


def test_page_is_live_and_read_only(
    board: Callable[..., Result],
    repo: Path,
    board_url: str | None,
    backend: str,
    page: Any,
    tmp_path: Path,
) -> None:
    with serving(repo) as served:
        open_page(page, served)
        # The page lists the board's tasks; board text is text, never markup.
        assert page.locator(".card").count() == 4
        assert "<script>alert(1)</script>" in card(page, 1).inner_text()
        assert page.locator(".card script").count() == 0
        # Why the open tasks are blocked.
        assert "waiting on #1 (open)" in card(page, 2).inner_text()
        assert "needs capability gpu" in card(page, 3).inner_text()

        # A claim from the command line (a real process) shows within a second.
        claimed = lac_process(repo, "claim", "1", env={"LAC_AGENT": "dana"})
        assert claimed.code == 0, claimed.err
        took = wait_until(
            page,
            "() => document.querySelector(\".card[data-task='1']\").dataset.state === 'claimed'",
        )
        assert took < LIVE_WITHIN_S, f"the claim showed after {took:.2f}s"
        assert "dana" in card(page, 1).inner_text()
        # Its path lock is in the tree; the task that wants a path under it is blocked by it.
        assert "core" in page.locator("#locks").inner_text()
        assert "dana" in page.locator("#locks [data-lock='core/']").inner_text()
        wait_until(
            page,
            "() => document.querySelector(\".card[data-task='4']\").innerText"
            ".includes('held by dana')",
        )

        # A claim whose holder went silent is shown stale (its heartbeat moved back).
        assert card(page, 1).get_attribute("data-stale") == "0"
        store = store_of(repo, board_url)
        try:
            backdate_claim(store, 1, 3 * 3600)
        finally:
            store.close()
        took = wait_until(
            page, "() => document.querySelector(\".card[data-task='1']\").dataset.stale === '1'"
        )
        assert took < LIVE_WITHIN_S
        assert "STALE" in card(page, 1).inner_text()
        assert page.locator("#count-stale").inner_text() == "1"
        assert "3h" in card(page, 1).inner_text()  # heartbeat 3h0m ago

        # Filters: lane, state, agent.
        page.select_option("#filter-lane", "qa")
        assert sorted(page.locator(".card").evaluate_all("n => n.map(c => c.dataset.task)")) == [
            "2",
            "3",
        ]
        page.select_option("#filter-lane", "")
        page.select_option("#filter-state", "claimed")
        assert page.locator(".card").evaluate_all("n => n.map(c => c.dataset.task)") == ["1"]
        page.select_option("#filter-state", "")
        page.select_option("#filter-agent", "dana")
        assert page.locator(".card").evaluate_all("n => n.map(c => c.dataset.task)") == ["1"]
        page.select_option("#filter-agent", "")
        assert page.locator(".card").count() == 4

        # A task's timeline.
        card(page, 1).click()
        page.wait_for_selector("#detail-events li[data-kind='claimed']")
        assert "created" in page.locator("#detail-events").inner_text()

        # Read-only: no control that changes state, and every action endpoint refuses,
        # even a request forged with every header the page would send.
        assert page.locator("[data-action]").count() == 0
        assert page.locator("#detail-actions button, form").count() == 0
        assert page.locator("#who-box").is_hidden()
        for verb in ("release", "force-release", "reopen", "cancel", "anything"):
            code, body, _ = served.post(
                f"/api/action/{verb}",
                {"task": 1, "person": "mallory", "reason": "forged"},
                headers={"Content-Type": "application/json", "X-Lac-Csrf": "guess"},
            )
            assert code == 403, (verb, code, body)
        in_page = page.evaluate(
            """async () => (await fetch('/api/action/force-release', {method: 'POST',
                 headers: {'Content-Type': 'application/json'},
                 body: JSON.stringify({task: 1, person: 'x', reason: 'y'})})).status"""
        )
        assert in_page == 403
        shown = lac_inprocess(repo, "show", "1", "--json")
        assert shown.json["task"]["state"] == "claimed"  # nothing was released

        # Done from the command line: the counts follow.
        done = lac_process(repo, "done", "1", env={"LAC_AGENT": "dana"})
        assert done.code == 0, done.err
        wait_until(page, "() => document.querySelector('#count-done').innerText === '1'")
        assert page.evaluate("window.__not_reloaded") is True
        # The page never polled: one stream, and the timeline read once per change.
        assert served.snapshot()["version"] >= 4

        if backend == "sqlite" and UPDATE_SCREENSHOT:
            make_screenshot(page, repo)


def make_screenshot(page: Any, repo: Path) -> None:
    """docs/serve.png for the README: a small night's board (run with
    LAC_UPDATE_SCREENSHOT=1)."""
    for title, args in [
        ("index the archive", ["--lane", "batch", "--write", "archive/"]),
        ("resize thumbnails", ["--lane", "batch", "--read", "archive/", "--write", "thumbs/"]),
        ("nightly report", ["--lane", "batch", "--after", "5"]),
    ]:
        assert lac_inprocess(repo, "task", "add", title, *args).code == 0
    assert lac_process(repo, "claim", "5", env={"LAC_AGENT": "night-bot-1"}).code == 0
    assert lac_process(repo, "claim", "4", env={"LAC_AGENT": "erin"}).code == 0
    page.wait_for_selector(".card[data-task='5'][data-state='claimed']")
    card(page, 5).click()
    page.wait_for_selector("#detail-events li[data-kind='claimed']")
    time.sleep(0.3)
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)


def test_a_write_from_any_client_wakes_the_page_through_the_feed(
    board: Callable[..., Result], repo: Path, board_url: str | None, backend: str, page: Any
) -> None:
    """Raw SQL on another connection (psql, say): on PostgreSQL only NOTIFY from
    0006's triggers can carry it — even with the writer on another search_path."""
    with serving(repo) as served:
        open_page(page, served)
        if backend == "postgres":
            import psycopg

            assert board_url is not None
            schema = board_url.rsplit("search_path%3D", 1)[1]
            server = board_url.split("?")[0]
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(
                    f'UPDATE "{schema}".lac_tasks SET title = %s WHERE id = 3', ["by psql"]
                )
        else:
            store = store_of(repo, board_url)
            try:
                store.run("set_setting", name="unrelated", value="1")  # a write elsewhere
                from .conftest import board_sql

                board_sql(store, "UPDATE lac_tasks SET title = 'by psql' WHERE id = 3")
            finally:
                store.close()
        took = wait_until(
            page,
            "() => document.querySelector(\".card[data-task='3']\").innerText.includes('by psql')",
        )
        assert took < LIVE_WITHIN_S


def test_actions_on_act_and_are_audited(
    board: Callable[..., Result], repo: Path, backend: str, page: Any
) -> None:
    lac_process(repo, "claim", "1", env={"LAC_AGENT": "dana"})
    with serving(repo, "--allow-actions", env={"LAC_AGENT": "night-desk"}) as served:
        assert "actions on, as night-desk" in served.lines[0]
        open_page(page, served)
        page.fill("#who", "Robin Oncall")
        card(page, 1).click()
        page.wait_for_selector("[data-action='force-release']")
        # Force-release needs a reason: refused on the page, nothing changes.
        page.click("[data-action='force-release']")
        page.wait_for_function("() => document.querySelector('#action-result.bad')")
        assert "reason" in page.locator("#action-result").inner_text()
        page.fill("#action-reason", "dana's machine died")
        page.click("[data-action='force-release']")
        took = wait_until(
            page, "() => document.querySelector(\".card[data-task='1']\").dataset.state === 'open'"
        )
        assert took < LIVE_WITHIN_S
        log = lac_inprocess(repo, "log", "1", "--json").json["events"]
        forced = [e for e in log if e["kind"] == "force_released"]
        assert len(forced) == 1
        assert forced[0]["agent"] == "night-desk"
        assert forced[0]["detail"]["person"] == "Robin Oncall"
        assert forced[0]["detail"]["via"] == "git lac serve"
        assert forced[0]["detail"]["reason"] == "dana's machine died"
        assert forced[0]["detail"]["previous_owner"] == "dana"

        # A refusal is the board's own message.
        page.wait_for_selector(".card[data-task='1'][data-state='open']")
        card(page, 1).click()
        page.wait_for_selector("[data-action='cancel']")
        # CSRF: without the page's header, or from another origin, refused (403).
        csrf = page.locator('meta[name="lac-csrf"]').get_attribute("content")
        assert csrf
        body = {"task": 1, "person": "x"}
        json_type = {"Content-Type": "application/json"}
        assert served.post("/api/action/cancel", body, headers=json_type)[0] == 403
        evil = {**json_type, "X-Lac-Csrf": csrf, "Origin": "http://evil.example"}
        assert served.post("/api/action/cancel", body, headers=evil)[0] == 403
        as_form = {"Content-Type": "text/plain", "X-Lac-Csrf": csrf}
        assert served.post("/api/action/cancel", body, headers=as_form)[0] == 403
        # Bad input is 400 with the one-line message; a refusal is 409.
        good = {**json_type, "X-Lac-Csrf": csrf}
        code, raw, _ = served.post("/api/action/cancel", {"task": 1}, headers=good)
        assert code == 400 and b"say who you are" in raw
        code, raw, _ = served.post("/api/action/cancel", {"task": "1; drop", "person": "x"}, good)
        assert code == 400
        code, raw, _ = served.post("/api/action/reopen", {"task": 1, "person": "x"}, good)
        assert code == 409 and json.loads(raw)["refused"]["reason"] == "already_open"
        code, raw, _ = served.post("/api/action/cancel", {"task": 99, "person": "x"}, good)
        assert code == 409 and json.loads(raw)["refused"]["reason"] == "not_found"
        assert lac_inprocess(repo, "show", "1", "--json").json["task"]["state"] == "open"


# --- access: token, host, the extra ------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_token_guards_every_request(board: Callable[..., Result], repo: Path, page: Any) -> None:
    token = "t0ken-" + uuid.uuid4().hex
    with serving(repo, "--token", token) as served:
        assert token not in "".join(served.lines)  # a token given is never printed
        for path in ("/", "/api/snapshot", "/api/events", "/static/app.js", "/api/task/1"):
            assert served.get(path)[0] == 401, path
        assert served.get("/api/snapshot", {"Authorization": f"Bearer {token}"})[0] == 200
        assert served.get("/api/snapshot", {"Authorization": "Bearer wrong"})[0] == 401
        code, _, headers = served.get(f"/?token={token}")
        assert code == 303 and "token" not in headers["location"]
        assert "HttpOnly" in headers["set-cookie"] and "SameSite=strict" in headers["set-cookie"]
        page.goto(f"{served.url}?token={token}")
        page.wait_for_selector(".card")
        assert "token" not in page.url


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_non_loopback_bind_makes_a_token_and_prints_it_once(
    board: Callable[..., Result], repo: Path
) -> None:
    served = start_server(repo, "--host", "0.0.0.0")
    try:
        shown = [line for line in served.lines if "token (shown once)" in line]
        assert len(shown) == 1, served.lines
        token = shown[0].rsplit("token=", 1)[1].strip()
        assert len(token) >= 16
        base = served.url.replace("0.0.0.0", "127.0.0.1")
        assert http(base + "api/snapshot")[0] == 401
        assert http(base + "api/snapshot", headers={"Authorization": f"Bearer {token}"})[0] == 200
    finally:
        assert stop(served) in (130, -signal.SIGINT)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_loopback_serves_only_loopback_host_names(board: Callable[..., Result], repo: Path) -> None:
    """A site that rebinds its own name to 127.0.0.1 is refused by Host."""
    with serving(repo) as served:
        assert served.get("/api/snapshot", {"Host": "evil.example"})[0] == 400
        assert served.get("/api/snapshot", {"Host": "localhost:1"})[0] == 200


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--port", "70000"], 2, "--port 70000"),
        (["--host", "no-such-host.invalid"], 2, "does not resolve"),
        (["--token", "short"], 2, "at least 16"),
    ],
)
def test_bad_options_are_one_line(repo: Path, args: list[str], code: int, message: str) -> None:
    result = lac_process(repo, "serve", *args)
    assert result.code == code and message in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err


def test_a_port_in_use_is_exit_3_one_line(repo: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = lac_process(repo, "serve", "--port", str(port))
    assert result.code == 3 and "cannot listen on" in result.err, result
    assert len(result.err.strip().splitlines()) == 1


def test_without_the_web_extra_one_line_and_exit_3(repo: Path) -> None:
    probe = (
        "import sys\n"
        "sys.modules['starlette'] = None\n"  # as if `pip install git-lacunari` alone
        "from git_lacunari.cli import run\n"
        "sys.exit(run(['serve']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 3, proc
    assert proc.stderr.strip().splitlines() == [
        "git lac: git lac serve needs the web extra (starlette is missing): "
        "pip install 'git-lacunari[web]'"
    ]


def test_the_command_line_and_the_hooks_never_import_the_web_stack(repo: Path) -> None:
    probe = (
        "import sys, contextlib, io\n"
        "from git_lacunari import entry\n"
        "from git_lacunari.cli import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    run(['tasks']); run(['serve', '--help'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn')"
        " or m.startswith('git_lacunari.web'))\n"
        "print(bad)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_serve_without_a_board_is_exit_3(tmp_path: Path) -> None:
    from .conftest import make_repo

    repo = make_repo(tmp_path / "r")
    from .conftest import git

    git(repo, "config", "lac.url", "postgresql://postgres@127.0.0.1:1/none")
    result = lac_process(repo, "serve")
    assert result.code == 3 and "cannot reach the board" in result.err, result


# --- PostgreSQL: the channel, team mode --------------------------------------------


def test_two_boards_in_one_database_do_not_wake_each_other(pg_server: str) -> None:
    from git_lacunari.store.postgres import PostgresStore

    long_name = "b" * 63  # the longest board name: its channel is its md5
    names = ["lac_w_" + uuid.uuid4().hex[:10], "lac_w_" + uuid.uuid4().hex[:10]]
    stores: list[PostgresStore] = []
    try:
        for name in [*names, long_name]:
            store = PostgresStore(pg_server, board=name)
            store.create_board()
            store.migrate(create=True)
            stores.append(store)
        watch_a, watch_long = stores[0], stores[2]
        assert watch_a.wait_for_change(0) is True  # starts listening
        assert watch_long.wait_for_change(0) is True
        writer_b = PostgresStore(pg_server, board=names[1])
        writer_long = PostgresStore(pg_server, board=long_name)
        try:
            writer_b.run("set_setting", name="x", value="1")
            assert watch_a.wait_for_change(0.5) is False, "board B woke board A"
            writer_long.run("set_setting", name="x", value="1")
            assert watch_long.wait_for_change(5) is True
            assert watch_a.wait_for_change(0.3) is False
            writer_a = PostgresStore(pg_server, board=names[0])
            writer_a.run("set_setting", name="x", value="2")
            writer_a.close()
            assert watch_a.wait_for_change(5) is True
        finally:
            writer_b.close()
            writer_long.close()
    finally:
        import psycopg

        for store in stores:
            store.close()
        with psycopg.connect(pg_server, autocommit=True) as conn:
            for name in [*names, long_name]:
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def test_no_trigger_of_a_board_notifies(pg_server: str) -> None:
    """A NOTIFY-ing commit holds one lock for the whole cluster through its
    WAL flush: a trigger that notified would make every claim's commit wait
    for every other's flush (issue 24: 0.14-0.26 of the ceiling with 8
    claimers). The page polls the change counter instead."""
    import psycopg

    from git_lacunari.store.postgres import PostgresStore

    name = "lac_w_" + uuid.uuid4().hex[:10]
    store = PostgresStore(pg_server, board=name)
    try:
        store.create_board()
        store.migrate(create=True)
        rows = store.conn.execute(
            "SELECT DISTINCT p.proname::text AS name, pg_get_functiondef(p.oid) AS body"
            "  FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid"
            "  JOIN pg_class c ON c.oid = t.tgrelid"
            " WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal"
        ).fetchall()
        assert rows, "the change feed's triggers are gone"
        for row in rows:
            assert "notify" not in row["body"].lower().replace("lac_notify_change", ""), row
    finally:
        store.close()
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def test_a_write_counted_before_it_commits_wakes_the_page_again_when_it_does(
    pg_server: str,
) -> None:
    """The change counter moves when a statement writes, before its
    transaction commits: the read that follows may not see the write. The
    watcher is woken once more when every counted write has ended."""
    import psycopg

    from git_lacunari.store.postgres import PostgresStore

    name = "lac_w_" + uuid.uuid4().hex[:10]
    watcher = PostgresStore(pg_server, board=name)
    try:
        watcher.create_board()
        watcher.migrate(create=True)
        assert watcher.wait_for_change(0) is True  # the first look
        assert watcher.wait_for_change(0.3) is False
        with psycopg.connect(pg_server, autocommit=True) as writer:
            writer.execute(f'SET search_path = "{name}"')
            writer.execute("BEGIN")
            writer.execute("INSERT INTO lac_settings VALUES ('late', 'yes')")
            assert watcher.wait_for_change(5) is True  # counted, not committed
            assert watcher.one("get_setting", name="late") is None
            assert watcher.wait_for_change(0.3) is False, "woke while still in flight"
            writer.execute("COMMIT")
        assert watcher.wait_for_change(5) is True, "the commit never woke the page"
        assert watcher.one("get_setting", name="late") == {"value": "yes"}
        assert watcher.wait_for_change(0.3) is False
    finally:
        watcher.close()
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.mark.parametrize("backend", ["postgres"])
def test_team_mode_reads_as_the_reader_role(
    repo: Path, board_url: str | None, pg_server: str
) -> None:
    import psycopg

    assert board_url is not None
    schema = board_url.rsplit("search_path%3D", 1)[1]
    role = f"lac_{schema}_reader"
    assert lac_inprocess(repo, "init", "--url", board_url).code == 0
    assert lac_inprocess(repo, "task", "add", "seen by the reader").code == 0
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"INSERT INTO \"{schema}\".lac_settings VALUES ('team_mode', 'on')")
    # No reader role yet: the page reads as the login itself, read-only.
    with serving(repo) as served:
        assert served.snapshot()["board"]["role"] == "postgres"
    try:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f'CREATE ROLE "{role}" NOLOGIN')
            conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"')
            conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO "{role}"')
        with serving(repo) as served:
            snap = served.snapshot()
            assert snap["board"]["team_mode"] is True
            assert snap["board"]["role"] == role
            assert [t["title"] for t in snap["tasks"]] == ["seen by the reader"]
            code, raw, _ = served.get("/api/task/1")
            assert code == 200, raw
        with serving(repo, "--allow-actions") as served:  # acts as its own login role
            assert served.snapshot()["board"]["role"] == "postgres"
    finally:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f'DROP OWNED BY "{role}"')
            conn.execute(f'DROP ROLE IF EXISTS "{role}"')


@pytest.mark.parametrize("backend", ["sqlite"])
def test_hostile_requests_get_one_line_answers(board: Callable[..., Result], repo: Path) -> None:
    with serving(repo, "--allow-actions") as served:
        for bad in ("0", "-1", "99999999999999999999999", "1;drop", "%00"):
            code, raw, _ = served.get(f"/api/task/{bad}")
            assert code == 400 and json.loads(raw)["ok"] is False, (bad, code, raw)
        code, raw, _ = served.get("/api/task/99")
        assert code == 409 and json.loads(raw)["refused"]["reason"] == "not_found"
        for path in ("/static/../../../../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd"):
            code, raw, _ = served.get(path)
            assert code == 404 and b"root:" not in raw, path
        code, page, _ = served.get("/")
        csrf = page.split(b'name="lac-csrf" content="')[1].split(b'"')[0].decode()
        good = {"Content-Type": "application/json", "X-Lac-Csrf": csrf}
        for body in (
            {"task": 1, "person": "x" * 20_000},  # too large a request
            [1, 2],  # not an object
            {"task": 1, "person": "two\nlines"},
            {"task": 1, "person": "x", "reason": "r" * 2000},
            {"task": 1, "person": "x", "reason": "nul\x00"},
            {"task": 2**70, "person": "x"},
        ):
            code, raw, _ = served.post("/api/action/cancel", body, headers=good)
            assert code == 400, (body, code, raw)
            assert json.loads(raw)["error"]["kind"] == "invalid_input"
        assert lac_inprocess(repo, "show", "1", "--json").json["task"]["state"] == "open"


def read_line(stream: Any, timeout_s: float = 10.0) -> str:
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    try:
        assert selector.select(timeout=timeout_s), "nothing within the time"
        return str(stream.readline())
    finally:
        selector.close()


@pytest.mark.parametrize("backend", ["sqlite"])
def test_json_is_one_object_as_soon_as_it_listens(board: Callable[..., Result], repo: Path) -> None:
    """--json: the one object is printed when the server listens (a supervisor
    reads the URL there, with --port 0); the stop is told by the exit code
    (SIGTERM: 143) and stderr, nothing more on stdout."""
    served = start_server(repo, "--json", "--allow-actions")
    assert served.proc.stdout is not None
    line = read_line(served.proc.stdout)
    body = json.loads(line)
    assert body == {
        "ok": True,
        "url": served.url,
        "token_url": served.open_url,
        "actions": True,
        "role": None,
    }
    assert http(body["url"] + "api/snapshot")[0] == 401  # actions on: the token is needed
    code, _, _ = http(
        body["url"] + "api/snapshot", headers={"Authorization": f"Bearer {served.token}"}
    )
    assert code == 200
    os.kill(served.proc.pid, signal.SIGTERM)  # git passes it on to git-lac
    out, err = served.proc.communicate(timeout=15)
    assert served.proc.returncode in (143, -signal.SIGTERM), (served.proc.returncode, err)
    assert out == ""  # one object in all
    assert "stopped by SIGTERM" in err and "Traceback" not in err


def test_team_mode_with_actions_names_the_role_it_acts_as(repo: Path, pg_server: str) -> None:
    """On a team board the agent is the session's role: the banner names it,
    not the name git config would give (that one is never used there)."""
    from .team_fixtures import team_board

    with team_board(pg_server) as crew:
        alice = crew.add("alice")
        assert lac_inprocess(repo, "init", "--url", crew.url_of(alice)).code == 0
        with serving(repo, "--allow-actions") as served:
            banner = next(line for line in served.lines if line.startswith("git lac serve: http"))
            assert f"actions on, as {alice};" in banner, banner


# --- issue 26: a hostile local network, a hundred open tabs -------------------------


def server_pid(served: Served) -> int:
    """The git-lac process under `git lac` (git runs it as its child)."""
    pid = served.proc.pid
    for _ in range(50):
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.1)
    return pid  # git exec'd it


def board_connections(pid: int, backend: str) -> int:
    """The board connections the server process holds right now: sockets to
    PostgreSQL's port, or file descriptors on the SQLite board file."""
    fds = Path(f"/proc/{pid}/fd")
    links = []
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):
            links.append(os.readlink(fd))
    if backend == "sqlite":
        return sum(1 for link in links if link.endswith("board.db"))
    inodes = {link[8:-1] for link in links if link.startswith("socket:[")}
    count = 0
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            cols = row.split()
            if cols[2].endswith(":1538") and cols[3] == "01" and cols[9] in inodes:
                count += 1
    return count


@pytest.mark.parametrize("backend", ["sqlite"])
def test_actions_need_the_token_on_loopback_too(
    board: Callable[..., Result], repo: Path, browser: Any
) -> None:
    """Any local process could read the page's CSRF value and act as the
    serving agent: with actions on, loopback needs the token like any bind."""
    with serving(repo, "--allow-actions") as served:
        assert served.token and len(served.token) >= 16
        # A local process without the token: no page (so no CSRF value), no action.
        assert served.get("/", auth=False)[0] == 401
        assert served.get("/api/snapshot", auth=False)[0] == 401
        forged = {"Content-Type": "application/json", "X-Lac-Csrf": "x"}
        code, _, _ = served.post(
            "/api/action/cancel", {"task": 1, "person": "m"}, forged, auth=False
        )
        assert code == 401
        # The same in a real browser: the plain URL is refused, and so is a
        # request the page's script would send.
        context = browser.new_context()
        try:
            page = context.new_page()
            response = page.goto(served.url)
            assert response.status == 401
            status = page.evaluate(
                """async () => (await fetch('/api/action/cancel', {method: 'POST',
                     headers: {'Content-Type': 'application/json', 'X-Lac-Csrf': 'x'},
                     body: JSON.stringify({task: 1, person: 'mallory'})})).status"""
            )
            assert status == 401
            # With the printed URL, the page works and can act.
            page.goto(served.open_url)
            page.wait_for_selector("#live.on")
            page.fill("#who", "Robin")
            card(page, 1).click()
            page.click("[data-action='cancel']")
            page.wait_for_selector(".card[data-task='1'][data-state='cancelled']")
        finally:
            context.close()
        log = lac_inprocess(repo, "log", "1", "--json").json["events"]
        assert [e["detail"].get("person") for e in log if e["kind"] == "cancelled"] == ["Robin"]


def test_two_served_boards_work_side_by_side_in_one_browser(tmp_path: Path, browser: Any) -> None:
    """One cookie per server (named for its port; HttpOnly, SameSite=Strict,
    Path=/): opening a second board never locks the first one out."""
    from .conftest import make_repo

    repos = [make_repo(tmp_path / "a"), make_repo(tmp_path / "b")]
    for i, repo in enumerate(repos):
        assert lac_inprocess(repo, "task", "add", f"board {'AB'[i]} task").code == 0
    with serving(repos[0], "--allow-actions") as a, serving(repos[1], "--allow-actions") as b:
        assert a.token != b.token
        context = browser.new_context()
        try:
            first, second = context.new_page(), context.new_page()
            first.goto(a.open_url)
            first.wait_for_selector(".card")
            second.goto(b.open_url)
            second.wait_for_selector(".card")
            # Both pages stay live; and each opens again by its plain URL (its cookie).
            for page, served, name in ((first, a, "A"), (second, b, "B")):
                page.goto(served.url)
                page.wait_for_selector("#live.on")
                assert f"board {name} task" in card(page, 1).inner_text()
            cookies = {c["name"]: c for c in context.cookies()}
            ports = {a.url.rsplit(":", 1)[1].strip("/"), b.url.rsplit(":", 1)[1].strip("/")}
            assert set(cookies) == {f"lac_token_{port}" for port in ports}
            for cookie in cookies.values():
                assert cookie["httpOnly"] is True
                assert cookie["sameSite"] == "Strict"
                assert cookie["path"] == "/"
            # A server started again on a port whose cookie is stale: its new URL works.
            context.add_cookies(
                [
                    {"name": f"lac_token_{p}", "value": "stale-" + "x" * 20, "url": a.url}
                    for p in ports
                ]
            )
            first.goto(a.open_url)
            first.wait_for_selector("#live.on")
        finally:
            context.close()


def test_a_loopback_alias_serves_its_printed_url(
    board: Callable[..., Result], repo: Path, backend: str, page: Any
) -> None:
    if backend != "sqlite":
        pytest.skip("the host check does not depend on the backend")
    with serving(repo, "--host", "127.0.0.2") as served:
        assert served.url.startswith("http://127.0.0.2:")
        assert served.token is None  # read-only on loopback: open, as documented
        open_page(page, served)
        assert page.locator(".card").count() == 4
        assert served.get("/api/snapshot", {"Host": "evil.example"})[0] == 400


@pytest.mark.parametrize("backend", ["sqlite"])
def test_bidi_text_is_isolated(board: Callable[..., Result], repo: Path, page: Any) -> None:
    """A right-to-left override in a title must not reorder the text beside it
    (here the priority after the title): the CLI escapes it, the page isolates it."""
    title = "evil \u202eretlif"
    assert lac_inprocess(repo, "task", "add", title, "--priority", "37").code == 0
    with serving(repo) as served:
        open_page(page, served)
        page.wait_for_selector(".card[data-task='5']")
        # Where each character of " p37" is drawn, left to right.
        xs = page.evaluate(
            """() => {
                const card = document.querySelector(".card[data-task='5']");
                const walker = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
                let node;
                while ((node = walker.nextNode())) if (node.data === " p37") break;
                const xs = [];
                for (let i = 1; i < node.data.length; i++) {
                    const range = document.createRange();
                    range.setStart(node, i);
                    range.setEnd(node, i + 1);
                    xs.push(range.getBoundingClientRect().left);
                }
                return xs;
            }"""
        )
        assert xs == sorted(xs) and len(set(xs)) == 3, xs  # "p", "3", "7" left to right
        assert page.locator(".card[data-task='5'] bdi.title").inner_text() == title


def test_a_board_that_is_gone_is_shown_gone_and_recovers(
    board: Callable[..., Result], repo: Path, board_url: str | None, backend: str, page: Any
) -> None:
    with serving(repo) as served:
        open_page(page, served)
        gone = "() => document.body.dataset.gone === '1'"
        back = "() => document.body.dataset.gone === '0' && document.querySelector('#live.on')"
        if backend == "sqlite":
            path = repo / ".git" / "lacunari" / "board.db"
            aside = path.with_name("aside.db")
            os.rename(path, aside)  # removed
            wait_until(page, gone, timeout_s=5)
            assert "removed" in page.locator("#trouble").inner_text()
            assert served.get("/api/snapshot")[0] == 503
            assert not path.exists()  # the page never made a new board there
            path.write_bytes(b"not a board " * 100)  # replaced by something else
            time.sleep(2)
            assert page.evaluate("document.body.dataset.gone") == "1"
            os.replace(aside, path)  # the board is back
        else:
            import psycopg

            assert board_url is not None
            schema = board_url.rsplit("search_path%3D", 1)[1]
            server = board_url.split("?")[0]
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(f'ALTER SCHEMA "{schema}" RENAME TO "{schema}_away"')
                try:
                    wait_until(page, gone, timeout_s=5)
                    assert "renamed or dropped" in page.locator("#trouble").inner_text()
                finally:
                    conn.execute(f'ALTER SCHEMA "{schema}_away" RENAME TO "{schema}"')
        wait_until(page, back, timeout_s=8)
        assert page.locator("#trouble").is_hidden()
        assert page.locator(".card").count() == 4
        # Live again: a claim shows.
        assert lac_process(repo, "claim", "1", env={"LAC_AGENT": "dana"}).code == 0
        wait_until(
            page,
            "() => document.querySelector(\".card[data-task='1']\").dataset.state === 'claimed'",
        )


def test_a_flood_of_task_requests_stays_within_the_pool(
    board: Callable[..., Result], repo: Path, backend: str
) -> None:
    """Unauthenticated local requests cannot multiply board connections: the
    watcher's one and the pool's (at most POOL_SIZE) whatever the flood."""
    from concurrent.futures import ThreadPoolExecutor

    from git_lacunari.web.pool import POOL_SIZE

    with serving(repo) as served:
        pid = server_pid(served)
        served.snapshot()
        before = board_connections(pid, backend)
        assert before >= 1  # the watcher's
        seen: list[int] = []
        stop_sampling = False

        def sample() -> None:
            while not stop_sampling:
                seen.append(board_connections(pid, backend))
                time.sleep(0.02)

        def ask(i: int) -> int:
            return served.get(f"/api/task/{1 + i % 4}")[0]

        sampler = ThreadPoolExecutor(1)
        sampling = sampler.submit(sample)
        with ThreadPoolExecutor(64) as flood:
            codes = list(flood.map(ask, range(400)))
        stop_sampling = True
        sampling.result()
        sampler.shutdown()
        assert codes.count(200) == 400, sorted(set(codes))
        assert max(seen) > before, seen  # the pool was used
        # The pool adds at most its size to what the server held before (the
        # watcher's connection; SQLite may keep a closed connection's file open
        # a while, as its POSIX locks require: counted in `before`).
        assert max(seen) - before <= POOL_SIZE, (before, max(seen))
        assert backend == "sqlite" or before == 1


def test_a_team_agent_serves_read_only_as_itself(repo: Path, pg_server: str, page: Any) -> None:
    """An ordinary agent is not in the reader role, and needs no grant: its page
    reads as itself, and cannot write (every transaction READ ONLY)."""
    from .team_fixtures import team_board

    with team_board(pg_server) as crew:
        alice = crew.add("alice")
        assert lac_inprocess(repo, "init", "--url", crew.url_of(alice)).code == 0
        assert lac_inprocess(repo, "task", "add", "seen by alice").code == 0
        with serving(repo) as served:
            assert "read-only" in served.lines[0]
            snap = served.snapshot()
            assert snap["board"]["team_mode"] is True and snap["board"]["role"] == alice
            open_page(page, served)
            assert "seen by alice" in card(page, 1).inner_text()
            assert f"reading as {alice}" in page.locator("#where").inner_text()
            card(page, 1).click()
            page.wait_for_selector("#detail-events li[data-kind='created']")
            assert page.locator("[data-action]").count() == 0
            code, _, _ = served.post(
                "/api/action/cancel",
                {"task": 1, "person": "x"},
                {"Content-Type": "application/json", "X-Lac-Csrf": ""},
            )
            assert code == 403


def test_a_page_turned_away_by_the_cap_connects_by_itself_later(
    board: Callable[..., Result], repo: Path, backend: str, page: Any
) -> None:
    import socket

    if backend != "sqlite":
        pytest.skip("the cap does not depend on the backend")
    with serving(repo, "--max-clients", "1") as served:
        host, port = served.url[len("http://") :].rstrip("/").rsplit(":", 1)
        hog = socket.create_connection((host, int(port)))
        try:
            hog.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            assert hog.recv(12) == b"HTTP/1.1 200"
            code, raw, headers = served.get("/api/events")
            assert code == 503 and headers["retry-after"] == "5", (code, raw)
            assert json.loads(raw)["error"]["kind"] == "too_many_pages"
            page.goto(served.url)
            page.wait_for_selector("#live.off", timeout=10_000)
            time.sleep(1.5)
            assert page.locator(".card").count() == 0
        finally:
            hog.close()
        page.wait_for_selector("#live.on", timeout=20_000)
        page.wait_for_selector(".card")


def test_a_page_that_stops_reading_is_dropped(
    board: Callable[..., Result], repo: Path, backend: str
) -> None:
    """A stream whose reader stalls while newer snapshots wait is cut off (its
    buffer freed), and a page that reads on is not."""
    import socket

    if backend != "sqlite":
        pytest.skip("the feed does not depend on the backend")
    from git_lacunari.repo import discover
    from git_lacunari.store import open_store

    store = open_store(None, discover(repo).common_dir)
    try:
        from git_lacunari.board import Board
        from git_lacunari.identity import Identity

        filler = Board(store, Identity("filler", "test", (), "test"))
        for i in range(1500):
            filler.add_task(f"a long title to make the snapshot large, number {i} " + "x" * 440)
    finally:
        store.close()
    with serving(repo) as served:
        assert len(served.get("/api/snapshot")[1]) > 1_000_000
        host, port = served.url[len("http://") :].rstrip("/").rsplit(":", 1)
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect((host, int(port)))
        stalled.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        time.sleep(1.0)  # it has taken its first bytes and stopped
        for n in range(3):  # newer snapshots
            assert lac_inprocess(repo, "task", "add", f"newer {n}").code == 0
            time.sleep(1.0)
        time.sleep(3.0)
        newest = served.snapshot()["version"]
        assert newest >= 2
        stalled.settimeout(10)
        received = bytearray()
        with contextlib.suppress(ConnectionResetError):
            while chunk := stalled.recv(65536):  # the server ended it: this ends
                received += chunk
        stalled.close()
        # It was cut off before the newest snapshot reached it whole (what it
        # got is what the kernels' buffers held when it was dropped).
        whole = [
            int(m) for m in re.findall(rb"id: (\d+)\nevent: snapshot\ndata: [^\n]*\n\n", received)
        ]
        assert newest not in whole, (newest, whole, len(received))
        assert served.get("/api/snapshot")[0] == 200
