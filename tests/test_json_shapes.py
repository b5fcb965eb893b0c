"""The shown proof of the command-line contract: every command's ``--json``
output, for success and for each refusal it can give, matches the one shape
documented in the README ("JSON output"), and ``"ok"`` is true exactly when
the exit code is 0.

The schemas are small JSON Schemas, checked by the few lines of validator
below (the subset they use: type, const, enum, properties, required,
additionalProperties, items); no dependency is needed for that.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from git_lacunari import edge
from git_lacunari.cli import cli
from git_lacunari.errors import (
    BadUsage,
    BoardUnreachable,
    NotFound,
    RefusalReason,
)
from git_lacunari.model import EventKind, LockMode, TaskState
from git_lacunari.reconcile import BaseSource, Outcome

from .conftest import Boards, Result, board_sql, git, lac_process

Lac = Callable[..., Result]
Schema = dict[str, Any]


# --- a validator for the subset of JSON Schema used here ---------------------------

TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def problems(value: Any, schema: Schema, where: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty: it validates)."""
    found: list[str] = []
    kinds = schema.get("type")
    if kinds is not None:
        allowed = [kinds] if isinstance(kinds, str) else kinds
        if not any(TYPES[k](value) for k in allowed):
            return [f"{where}: {value!r} is not {' or '.join(allowed)}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        props: dict[str, Schema] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                found.append(f"{where}: missing {key!r}")
        for key, item in value.items():
            if key in props:
                found += problems(item, props[key], f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                found.append(f"{where}: unexpected key {key!r}")
    if isinstance(value, list) and "items" in schema:
        for n, item in enumerate(value):
            found += problems(item, schema["items"], f"{where}[{n}]")
    return found


def test_the_validator_can_fail() -> None:
    shape = obj(a=INT, b=nullable(STR))
    assert problems({"a": 1, "b": None}, shape) == []
    assert problems({"a": 1}, shape) == ["$: missing 'b'"]
    assert problems({"a": True, "b": "x"}, shape) == ["$.a: True is not integer"]
    assert problems({"a": 1, "b": "x", "c": 0}, shape) == ["$: unexpected key 'c'"]
    assert problems([1, "x"], {"type": "array", "items": INT}) == ["$[1]: 'x' is not integer"]


# --- the documented shapes (README, "JSON output") ---------------------------------

STR: Schema = {"type": "string"}
INT: Schema = {"type": "integer"}
NUM: Schema = {"type": "number"}
BOOL: Schema = {"type": "boolean"}
ANY_OBJECT: Schema = {"type": "object"}


def nullable(schema: Schema) -> Schema:
    return {**schema, "type": [schema["type"], "null"]}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def obj(**props: Schema) -> Schema:
    """An object with exactly these keys, all required (see :func:`with_optional`)."""
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def with_optional(optional: tuple[str, ...], **props: Schema) -> Schema:
    """An object with exactly these keys, all required but ``optional``."""
    schema = obj(**props)
    schema["required"] = [k for k in props if k not in optional]
    return schema


MODE: Schema = {"type": "string", "enum": [m.value for m in LockMode]}
STATE: Schema = {"type": "string", "enum": [s.value for s in TaskState]}
RESOURCE = obj(name=STR, value=STR)
LOCK = obj(
    id=INT,
    pattern=STR,
    mode=MODE,
    agent=STR,
    task_id=nullable(INT),
    acquired_at=NUM,
    base_blob=nullable(STR),
    instance=nullable(STR),
)
TASK = obj(
    id=INT,
    title=STR,
    body=STR,
    lane=STR,
    priority=INT,
    state=STATE,
    owner=nullable(STR),
    claimed_at=nullable(NUM),
    heartbeat_at=nullable(NUM),
    stale_after=nullable(NUM),
    attempts=INT,
    needs=array(STR),
    created_at=NUM,
    created_by=STR,
    depends_on=array(obj(id=INT, title=STR, state=STATE)),
    paths=array(obj(pattern=STR, mode=MODE)),
    locks=array(LOCK),
    stale=BOOL,
    instance=nullable(STR),
    branch=nullable(STR),
    tip=nullable(STR),
    landing_since=nullable(NUM),
    landing=BOOL,
    returned_at=nullable(NUM),
    returned=nullable(ANY_OBJECT),
    shown_state=STR,
    max_age=nullable(NUM),
    expires_at=nullable(NUM),
)
EVENT = obj(
    id=INT,
    at=NUM,
    task_id=nullable(INT),
    agent=STR,
    kind={"type": "string", "enum": [k.value for k in EventKind]},
    detail=ANY_OBJECT,
)
HOOK_CHANGE = obj(hook=STR, action=STR, path=STR)
# A take-over notice (issue 22): a claim or lock of ours removed by force,
# or a claim of ours the keeper expired (why: stale or max_age).
NOTICE = obj(
    event=INT,
    kind={"type": "string", "enum": ["force_released", "force_unlocked", "expired"]},
    by=STR,
    person=nullable(STR),
    at=NUM,
    task=nullable(INT),
    locks=array(STR),
    reason=nullable(STR),
    why={"type": ["string", "null"], "enum": ["stale", "max_age", None]},
    max_age=nullable(NUM),
    stale_after=nullable(NUM),
    message=STR,
)
GUARD = {"hook": STR, "checked": INT, "skipped": BOOL, "offline": BOOL}
EXPIRED = with_optional(
    ("max_age", "age", "stale_after"),
    task=INT,
    previous_owner=STR,
    previous_instance=nullable(STR),
    silent_for=NUM,
    attempts=INT,
    locks=array(STR),
    why={"type": "string", "enum": ["stale", "max_age"]},
    max_age=NUM,
    age=NUM,
    stale_after=NUM,
)
CONFLICT = with_optional(
    ("ref", "commit"),
    path=STR,
    wanted=MODE,
    holder=STR,
    task=nullable(INT),
    pattern=STR,
    mode=MODE,
    heartbeat_at=nullable(NUM),
    landing_tip=nullable(STR),
    ref=STR,
    commit=STR,
)


def reason(name: str, **facts: Schema) -> Schema:
    return obj(reason={"type": "string", "const": name}, **facts)


REFUSALS: dict[str, Schema] = {
    "already_claimed": reason(
        "already_claimed", task=nullable(INT), holder=nullable(STR), where=nullable(STR)
    ),
    "unmet_dependency": reason(
        "unmet_dependency", task=INT, dependency=INT, dependency_state=STATE
    ),
    "missing_capability": reason("missing_capability", task=INT, capability=STR),
    "path_locked": reason(
        "path_locked",
        path=STR,
        wanted=MODE,
        holder=STR,
        task=nullable(INT),
        pattern=STR,
        mode=MODE,
        conflicts=array(CONFLICT),
    ),
    "not_open": reason("not_open", task=INT, state=STATE),
    "built_on": reason("built_on", task=INT, built_on_by=array(INT), holder=nullable(STR)),
    "not_found": reason(
        "not_found",
        task=nullable(INT),
        lane=nullable(STR),
        blocked_by_paths=array(INT),
        blocked_by_resources=array(INT),
    ),
    "resource_unavailable": reason(
        "resource_unavailable", task=INT, resource=STR, wanted=INT, held=INT, free=INT, total=INT
    ),
    "resource_held": reason(
        "resource_held", resource=STR, value=STR, task=INT, holder=nullable(STR)
    ),
    "not_owner": reason("not_owner", task=nullable(INT), holder=nullable(STR), path=nullable(STR)),
    "hook_conflict": reason("hook_conflict", path=STR),
    "already_open": reason("already_open", task=INT),
    "not_permitted": reason("not_permitted", role=nullable(STR)),
    "conflict_markers": reason("conflict_markers", paths=array(STR)),
    "not_queued": reason("not_queued", task=INT, said=STR),
}


DOCTOR_CHECK: Schema = {
    "type": "object",
    "properties": {
        "check": STR,
        "verdict": {"type": "string", "enum": ["ok", "warn", "fail"]},
        "says": STR,
        "facts": ANY_OBJECT,
    },
    "required": ["check", "verdict", "says", "facts"],
    "additionalProperties": False,
}


def told(schema: Schema) -> Schema:
    """Any command that succeeds (or is unfinished) may tell notices: the
    next command tells (README, "Honest leases"); those that always say
    them (status, heartbeat, done) require the key."""
    schema["properties"].setdefault("notices", array(NOTICE))
    return schema


def success(**data: Schema) -> Schema:
    return told(obj(ok={"type": "boolean", "const": True}, **data))


def unfinished(**data: Schema) -> Schema:
    return told(obj(ok={"type": "boolean", "const": False}, unfinished=STR, **data))


def refusal(name: RefusalReason) -> Schema:
    return told(obj(ok={"type": "boolean", "const": False}, refused=REFUSALS[name], message=STR))


def error(kind: str) -> Schema:
    return obj(
        ok={"type": "boolean", "const": False},
        error=obj(kind={"type": "string", "const": kind}, message=STR),
    )


SUCCESS: dict[str, Schema] = {
    "init": success(
        url=STR,
        board=nullable(STR),
        dialect=STR,
        schema_version=INT,
        stale_after=NUM,
        shared=nullable(STR),
        case=nullable(STR),
        landing_period=NUM,
        fleet=BOOL,
        push_options=nullable(array(STR)),
    ),
    "boards": success(boards=array(STR), current=nullable(STR)),
    "whoami": success(
        agent=STR,
        source=STR,
        capabilities=array(STR),
        capabilities_source=STR,
        instance=STR,
        where=STR,
        instance_source=STR,
    ),
    "instance list": success(
        agent=STR,
        instances=array(obj(id=STR, where=STR, last_seen=NUM, claims=INT, locks=INT, here=BOOL)),
    ),
    "instance adopt": success(adopted=array(INT), tasks=array(TASK), instance=STR, **{"from": STR}),
    "task add": success(id=INT, task=TASK),
    "task after": success(task=TASK),
    "tasks": success(tasks=array(TASK), now=NUM, limit=nullable(INT), more=INT, more_exact=BOOL),
    "show": success(
        task=TASK,
        now=NUM,
        resources=array(RESOURCE),
        resource_needs=array(obj(name=STR, count=INT)),
    ),
    "resource add": success(name=STR, added=array(STR), already=array(STR)),
    "resource remove": success(name=STR, removed=array(STR), pool_removed=BOOL),
    "resource list": success(
        pools=array(
            obj(
                name=STR,
                total=INT,
                free=INT,
                values=array(obj(value=STR, task=nullable(INT), holder=nullable(STR))),
            )
        )
    ),
    "log": success(events=array(EVENT), limit=nullable(INT), more=INT, more_exact=BOOL),
    "claim": success(
        task=TASK,
        again=BOOL,
        locks=array(LOCK),
        passed_over=array(obj(task=INT, meets=array(STR), landing=array(INT))),
        resources=array(RESOURCE),
        start_from=array(
            obj(task=INT, branch=nullable(STR), tip=nullable(STR), holder=nullable(STR))
        ),
    ),
    "release": success(task=TASK),
    "env": success(task=INT, env=obj(LAC_TASK_ID=STR, LAC_AGENT=STR)),
    "desks": success(
        desks=array(
            obj(
                path=STR,
                task=INT,
                branch=nullable(STR),
                state=nullable(STR),
                holder=nullable(STR),
                live=BOOL,
                missing=BOOL,
                clean=BOOL,
                uncommitted=nullable(obj(modified=INT, staged=INT, untracked=INT)),
            )
        ),
        removed=array(obj(path=STR, task=INT, branch=nullable(STR), branch_deleted=BOOL)),
        kept=array(obj(path=STR, task=INT, why=STR)),
    ),
    "done": success(
        task=TASK,
        notices=array(NOTICE),
        landing=BOOL,
        destination=nullable(STR),
        how=nullable(STR),
    ),
    "forecast": success(
        destination=STR,
        commit=STR,
        lines=array(
            obj(
                task=INT,
                owner=STR,
                branch=nullable(STR),
                tip=STR,
                landing=BOOL,
                declared=array(STR),
                changed=array(STR),
            )
        ),
        meetings=array(
            obj(
                first=nullable(INT),
                second=INT,
                both=array(STR),
                undeclared=array(STR),
                conflicts=array(STR),
                conflicting=BOOL,
            )
        ),
        missing=array(obj(task=INT, owner=STR, tip=STR)),
    ),
    "sweep": success(
        destination=STR,
        landed=array(obj(task=INT, how=STR, tip=STR)),
        landing=array(obj(task=INT, owner=STR, tip=STR)),
    ),
    "land": success(
        task=TASK, destination=nullable(STR), outcome=STR, returned=nullable(ANY_OBJECT)
    ),
    "lander": success(
        destination=STR,
        landed=array(INT),
        returned=array(ANY_OBJECT),
        waiting=array(INT),
        batches=INT,
    ),
    "lock": success(locks=array(LOCK), now=NUM),
    "unlock": success(unlocked=array(LOCK)),
    "locks": success(locks=array(LOCK), now=NUM),
    "check": success(paths=array(STR)),
    "heartbeat": success(refreshed=array(INT), notices=array(NOTICE)),
    "guard pre-commit": success(**GUARD),
    "guard pre-push": success(**GUARD),
    "guard pre-merge-commit": success(**GUARD),
    "guard pre-receive": success(**GUARD, pusher=nullable(STR)),
    "guard post-commit": success(hook=STR, tracked=BOOL),
    "guard commit-msg": success(hook=STR, named=array(INT)),
    "guard post-receive": success(hook=STR, landed=array(obj(task=INT, how=STR, tip=STR))),
    "hooks install": success(hooks=array(HOOK_CHANGE), push_options=nullable(array(STR))),
    # `git lac doctor`: one object per check; its facts differ per check.
    "doctor": success(checks=array(DOCTOR_CHECK)),
    "doctor unhealthy": unfinished(checks=array(DOCTOR_CHECK)),
    "help": success(command=STR, help=STR),
    "hooks uninstall": success(hooks=array(HOOK_CHANGE)),
    # `hooks install|uninstall --agent NAME`: a harness's project settings (issue 23).
    # With --mcp (and uninstall): the MCP files; for a harness that reads
    # AGENTS.md: its git-lacunari section.
    "hooks install --agent": with_optional(
        ("mcp", "agents_md"),
        ok={"type": "boolean", "const": True},
        agents=array(obj(harness=STR, path=STR, action=STR, scope=STR)),
        mcp=array(obj(harness=STR, path=STR, action=STR, scope=STR)),
        agents_md=obj(harness=STR, path=STR, action=STR, scope=STR),
    ),
    "prime": success(
        version=STR,
        steps=array(obj(step=STR, command=STR, says=STR)),
        more=STR,
        text=STR,
    ),
    "wait": success(paths=array(STR), waited=NUM, locked=array(LOCK), finished=array(INT)),
    "keeper": success(
        expired=array(EXPIRED),
        expired_locks=array(obj(agent=STR, silent_for=NUM, locks=array(STR))),
        landed=array(obj(task=INT, how=STR, tip=STR)),
    ),
    "task edit": success(task=TASK),
    "task cancel": success(task=TASK),
    "task reopen": success(task=TASK),
    "ready": success(
        lane=STR,
        ready=array(TASK),
        blocked=array(obj(task=TASK, refused={"type": "object"})),
        now=NUM,
        limit=nullable(INT),
        more=INT,
        more_exact=BOOL,
    ),
    "status": success(
        agent=STR,
        instance=STR,
        source=STR,
        capabilities=array(STR),
        board=obj(url=STR, dialect=STR, schema_version=INT, stale_after=NUM),
        claims=array(obj(task=TASK, heartbeat_age=NUM, stale_in=NUM, resources=array(RESOURCE))),
        locks=array(LOCK),
        hooks=obj(
            **{
                "pre-commit": BOOL,
                "pre-push": BOOL,
                "pre-merge-commit": BOOL,
                "post-commit": BOOL,
                "commit-msg": BOOL,
            }
        ),
        notices=array(NOTICE),
        now=NUM,
    ),
    "completion": success(shell=STR, script=STR),
    "team enable": success(
        board=STR,
        roles=obj(owner=STR, agent=STR, keeper=STR, admin=STR, reader=STR),
        created=array(STR),
    ),
    "team add": success(
        role=STR, groups=array(STR), capabilities=array(STR), created=BOOL, password=nullable(STR)
    ),
    "team remove": success(role=STR, released=array(INT), locks=array(STR), dropped=BOOL),
    "team list": success(
        members=array(
            obj(
                role=STR,
                login=BOOL,
                kinds=array(STR),
                capabilities=array(STR),
                last_seen=nullable(NUM),
            )
        )
    ),
    "drain": success(
        done=array(INT),
        failed=array(INT),
        parked=array(INT),
        landing=array(INT),
        exit_codes=ANY_OBJECT,
    ),
    "reconcile": success(
        dry_run=BOOL,
        clean=BOOL,
        files=array(
            obj(
                path=STR,
                outcome={"type": "string", "enum": [o.value for o in Outcome]},
                base=nullable(STR),
                base_source={"type": "string", "enum": [b.value for b in BaseSource]},
                reason=STR,
            )
        ),
        counts={"type": "object"},
        conflicts=array(STR),
    ),
}

CLAIM_DESK = success(
    **{k: v for k, v in SUCCESS["claim"]["properties"].items() if k not in ("ok", "notices")},
    desk=obj(
        path=STR,
        branch=STR,
        base=STR,
        commit=STR,
        continued=BOOL,
        env=STR,
        notes=array(STR),
        setup=obj(
            command=nullable(STR),
            exit_code=nullable(INT),
            log=nullable(STR),
            last_lines=array(STR),
        ),
    ),
)


# --- every command, every answer -----------------------------------------------------


class Seen:
    """Runs commands with --json and checks each answer against its shape."""

    def __init__(self, lac: Lac) -> None:
        self.lac = lac
        self.failures: list[str] = []
        self.commands: set[str] = set()
        self.reasons: set[str] = set()

    def __call__(self, shape: Schema, code: int, *args: str, **kw: Any) -> Result:
        cut = args.index("--") if "--" in args else len(args)  # options go before a command
        result = self.lac(*args[:cut], "--json", *args[cut:], **kw)
        label = " ".join(args)
        self.check(label, result, shape, code)
        command = " ".join(a for a in args[:2] if not a.startswith("-") and not a.isdigit())
        if code == 0:
            self.commands.add(command if command in SUCCESS else args[0])
        return result

    def check(self, label: str, result: Result, shape: Schema, code: int) -> None:
        try:
            body = result.json
        except ValueError:
            self.failures.append(f"{label}: stdout is not one JSON object: {result.out!r}")
            return
        if result.code != code:
            self.failures.append(f"{label}: exit {result.code}, expected {code}: {result.err}")
        if body.get("ok") is not (result.code == 0):
            self.failures.append(f"{label}: ok={body.get('ok')!r} with exit {result.code}")
        self.failures += [f"{label}: {p}" for p in problems(body, shape)]
        if isinstance(body.get("refused"), dict):
            self.reasons.add(body["refused"]["reason"])

    def refused(self, name: RefusalReason, *args: str, **kw: Any) -> Result:
        return self(refusal(name), 1, *args, **kw)


def commit(repo: Path, path: str, text: str) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-qm", f"change {path}", "--no-verify")
    return git(repo, "rev-parse", "HEAD").strip()


def test_every_command_json_matches_its_documented_shape(
    lac: Lac, repo: Path, boards: Boards, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Installed as a user installs it: git-lac on PATH, so the hooks that
    # `hooks install` writes here (in-process, argv[0] is pytest) can run it.
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":" + os.environ["PATH"])
    seen = Seen(lac)
    S = SUCCESS
    seen(S["init"], 0, "init")
    seen(S["whoami"], 0, "whoami")
    seen(S["instance list"], 0, "instance", "list")
    # Another working tree of dana's, as the board would have recorded it.
    board_sql(
        boards.store(),
        "INSERT INTO lac_instances (id, agent, host, path, last_seen)"
        " VALUES ('0123456789abcdef', 'dana', 'elsewhere', '/old', 0)",
    )
    seen(S["instance adopt"], 0, "instance", "adopt", "0123456789abcdef", "--as", "dana")
    seen(error("invalid_input"), 2, "instance", "adopt", "no-such-instance")
    seen(S["boards"], 0, "boards")
    seen(S["task add"], 0, "task", "add", "Auth", "--write", "core/auth.py")  # 1
    seen(S["task add"], 0, "task", "add", "Docs", "--after", "1")  # 2
    seen(S["task add"], 0, "task", "add", "GPU", "--needs", "gpu")  # 3
    seen(S["task add"], 0, "task", "add", "Core", "--write", "core/")  # 4
    seen(S["task add"], 0, "task", "add", "Soon done", "--lane", "other")  # 5
    seen(S["task after"], 0, "task", "after", "4", "5")
    seen.refused("not_found", "task", "after", "99", "1")

    seen(S["claim"], 0, "claim", "1", "--as", "dana")
    seen(S["claim"], 0, "claim", "5", "--as", "dana")
    seen(S["done"], 0, "done", "5", "--as", "dana")
    seen.refused("already_claimed", "claim", "1", "--as", "erin")
    seen.refused("unmet_dependency", "claim", "2", "--as", "erin")
    seen.refused("missing_capability", "claim", "3", "--as", "erin")
    seen.refused("path_locked", "claim", "4", "--as", "erin")
    seen.refused("not_open", "claim", "5", "--as", "erin")
    seen.refused("not_found", "claim", "77", "--as", "erin")
    seen.refused("not_found", "claim", "--next", "--lane", "empty", "--as", "erin")
    # A desk: the claim's keys and "desk"; a setup that fails is unfinished.
    seen(S["task add"], 0, "task", "add", "At a desk", "--lane", "desk")  # 6
    seen(S["task add"], 0, "task", "add", "Setup fails", "--lane", "desk")  # 7
    at = Path(seen(CLAIM_DESK, 0, "claim", "6", "--worktree", "--as", "dana").json["desk"]["path"])
    seen(S["env"], 0, "env", "6")
    seen(error("invalid_input"), 2, "env", "--as", "fred")
    seen(S["desks"], 0, "desks")
    commit(repo, ".lacconfig", '[lac "desk"]\n\tsetup = exit 37\n')
    failed = {k: v for k, v in CLAIM_DESK.items() if k != "properties"}
    failed["properties"] = {**CLAIM_DESK["properties"], **unfinished()["properties"]}
    failed["required"] = [*CLAIM_DESK["required"], "unfinished"]
    seen(failed, 1, "claim", "7", "--worktree", "--as", "dana")
    seen(error("invalid_input"), 2, "claim", "7", "--worktree", str(repo), "--as", "dana")
    seen(error("usage"), 2, "claim", "7", "--branch", "b", "--as", "dana")
    assert seen.lac("release", "6", cwd=at).code == 0
    seen(S["desks"], 0, "desks", "--prune")
    git(repo, "rm", "-q", ".lacconfig")
    git(repo, "commit", "-qm", "no desk setup", "--no-verify")

    seen(S["tasks"], 0, "tasks")
    seen(S["show"], 0, "show", "1")
    seen(S["resource add"], 0, "resource", "add", "port", "8100-8101")
    seen(S["resource add"], 0, "resource", "add", "port", "8101", "8102")
    seen(error("invalid_input"), 2, "resource", "add", "Port", "1")
    seen(S["task add"], 0, "task", "add", "Serve", "--needs-resource", "port:2", "--lane", "web")
    seen(S["task add"], 0, "task", "add", "Serve 2", "--needs-resource", "port:2", "--lane", "web")
    web = [t["id"] for t in lac("tasks", "--lane", "web", "--json").json["tasks"]]
    seen(S["claim"], 0, "claim", str(web[0]), "--as", "dana")
    seen(S["show"], 0, "show", str(web[0]))
    seen(S["resource list"], 0, "resource", "list")
    seen.refused("resource_unavailable", "claim", str(web[1]), "--as", "erin")
    seen.refused("resource_held", "resource", "remove", "port", "8100")
    seen.refused("not_found", "claim", "--next", "--lane", "web", "--as", "erin")
    seen(S["resource remove"], 0, "resource", "remove", "port", "8102")
    seen.refused("not_found", "show", "77")
    seen(S["log"], 0, "log")
    seen(S["log"], 0, "log", "1")
    seen.refused("not_found", "log", "77")

    seen(S["heartbeat"], 0, "heartbeat", "--as", "dana")
    # A lock of dana's removed by force: her next heartbeat tells it, exit 1 (issue 22).
    seen(S["lock"], 0, "lock", "tmp/", "--as", "dana")
    seen(S["unlock"], 0, "unlock", "tmp/", "--force", "--reason", "shape", "--as", "erin")
    taken = unfinished(refreshed=array(INT), notices=array(NOTICE))
    seen(taken, 1, "heartbeat", "--as", "dana")
    seen.refused("not_owner", "heartbeat", "1", "--as", "erin")
    seen.refused("not_found", "heartbeat", "77", "--as", "erin")

    seen(S["lock"], 0, "lock", "docs/", "--as", "erin")
    seen(S["lock"], 0, "lock", "README", "--read", "--as", "erin")
    seen.refused("path_locked", "lock", "core/", "--as", "erin")
    seen.refused("not_owner", "lock", "x/", "--task", "1", "--as", "erin")
    seen(S["locks"], 0, "locks")
    seen(S["check"], 0, "check", "lib/free.py", "--as", "erin")
    seen.refused("path_locked", "check", "core/auth.py", "README", "--as", "fred")
    seen(S["unlock"], 0, "unlock", "docs/", "--as", "erin")
    seen.refused("not_owner", "unlock", "core/auth.py", "--as", "erin")

    seen.refused("not_open", "release", "2", "--as", "erin")
    seen.refused("not_owner", "release", "1", "--as", "erin")
    seen.refused("not_found", "release", "77", "--as", "erin")
    seen.refused("not_open", "done", "2", "--as", "erin")
    seen.refused("not_owner", "done", "1", "--as", "erin")
    seen.refused("not_found", "done", "77", "--as", "erin")

    # The guards: allowed, skipped, refused; pre-push through the framework's range.
    seen(S["guard pre-commit"], 0, "guard", "pre-commit", "--as", "erin")
    (repo / "core" / "auth.py").write_text("erin's edit\n")
    git(repo, "add", "core/auth.py")
    seen.refused("path_locked", "guard", "pre-commit", "--as", "erin")
    seen(S["guard pre-commit"], 0, "guard", "pre-commit", "--as", "erin", env={"LAC_GUARD": "off"})
    seen(S["guard pre-commit"], 0, "guard", "pre-commit", "--as", "dana")
    git(repo, "reset", "-q")
    git(repo, "checkout", "-q", "--", "core/auth.py")
    base = git(repo, "rev-parse", "HEAD").strip()
    pushed = {"PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_FROM_REF": base}
    free = commit(repo, "lib/free.py", "free\n")
    seen(S["guard pre-push"], 0, "guard", "pre-push", env={**pushed, "PRE_COMMIT_TO_REF": free})
    held = commit(repo, "core/auth.py", "pushed edit\n")
    result = seen.refused(
        "path_locked",
        "guard",
        "pre-push",
        "--as",
        "erin",
        env={**pushed, "PRE_COMMIT_TO_REF": held},
    )
    assert result.json["refused"]["conflicts"][0]["commit"] == held

    seen(S["guard pre-merge-commit"], 0, "guard", "pre-merge-commit", "--as", "erin")
    stdin, sys.stdin = sys.stdin, io.StringIO("")  # git's ref lines: none
    try:
        seen(S["guard pre-receive"], 0, "guard", "pre-receive", env={"GIT_PUSH_OPTION_COUNT": "0"})
    finally:
        sys.stdin = stdin
    seen(S["guard post-commit"], 0, "guard", "post-commit", "--as", "dana")
    message = repo / "MSG"
    message.write_text("a change\n")
    seen(S["guard commit-msg"], 0, "guard", "commit-msg", str(message), "--as", "dana")
    stdin, sys.stdin = sys.stdin, io.StringIO("")
    try:
        seen(S["guard post-receive"], 0, "guard", "post-receive")
    finally:
        sys.stdin = stdin
    seen(S["sweep"], 0, "sweep")
    seen(S["forecast"], 0, "forecast")
    added = lac("task", "add", "Land it", "--json")
    landed = str(added.json["task"]["id"])
    assert lac("claim", landed, "--as", "dana").code == 0
    seen(S["land"], 0, "land", landed, "--as", "dana")  # its branch is in the destination
    seen(S["lander"], 0, "lander", "--once")

    seen(S["doctor unhealthy"], 1, "doctor")  # no hooks yet
    seen(S["hooks install"], 0, "hooks", "install")
    seen(S["doctor"], 0, "doctor")
    seen(S["hooks uninstall"], 0, "hooks", "uninstall")
    seen(S["hooks install --agent"], 0, "hooks", "install", "--agent", "claude-code")
    seen(S["hooks install --agent"], 0, "hooks", "uninstall", "--agent", "claude-code")
    seen(S["hooks install --agent"], 0, "hooks", "install", "--agent", "codex", "--mcp")
    seen(S["hooks install --agent"], 0, "hooks", "uninstall", "--agent", "codex")
    seen(S["prime"], 0, "prime")
    seen(S["wait"], 0, "wait", "lib/free.py", "--as", "erin")
    seen(S["wait"], 0, "wait", "lib/free.py", "--lock", "--as", "erin")
    seen.refused("path_locked", "wait", "lib/free.py", "--timeout", "0.1", "--as", "dana")
    seen(S["unlock"], 0, "unlock", "lib/free.py", "--as", "erin")
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\n")
    (hooks / "pre-commit.legacy").write_text("#!/bin/sh\n")
    seen.refused("hook_conflict", "hooks", "install")
    (hooks / "pre-commit.legacy").unlink()

    seen(S["keeper"], 0, "keeper", "--once")
    cmd = ("--", "true")
    seen(S["drain"], 0, "drain", "--lane", "quiet", "--once", *cmd)
    for name, args in (
        ("keeper", ("keeper", "--once")),
        ("drain:busy", ("drain", "--lane", "busy", "--once", *cmd)),
    ):
        held_elsewhere = boards("someone").store.exclusive(name)
        assert held_elsewhere is not None
        try:
            seen.refused("already_claimed", *args)
        finally:
            held_elsewhere.release()

    # The whole life of a task (issue 14): edit, cancel, reopen, unlock --force, ready, status.
    seen(S["task edit"], 0, "task", "edit", "2", "--title", "Docs, retitled")
    seen.refused("not_owner", "task", "edit", "1", "--title", "x", "--as", "erin")
    seen(S["task cancel"], 0, "task", "cancel", "3", "--reason", "no gpu")
    seen(S["task reopen"], 0, "task", "reopen", "3")
    seen.refused("already_open", "task", "reopen", "3")
    seen(S["ready"], 0, "ready", "--as", "erin")
    seen(S["status"], 0, "status", "--as", "dana")
    seen(S["lock"], 0, "lock", "spare/", "--as", "erin")
    seen(S["unlock"], 0, "unlock", "--force", "spare/", "--reason", "tidy", "--as", "admin")
    seen(error("invalid_input"), 2, "unlock", "--force", "docs/")
    seen(S["completion"], 0, "completion", "bash")
    seen(S["release"], 0, "release", "1", "--force", "--reason", "dana left", "--as", "erin")
    seen(S["reconcile"], 0, "reconcile", "HEAD")

    # Errors: bad usage (exit 2) and invalid input; the error envelope.
    seen(error("usage"), 2, "claim", "1", "--next")
    seen(error("usage"), 2, "frobnicate")
    seen(error("invalid_input"), 2, "tasks", "--state", "finished")
    seen(S["help"], 0, "help", "task", "add")
    seen(error("invalid_input"), 2, "help", "no-such-verb")
    seen(error("bad_path"), 2, "lock", "/etc/passwd")

    postgres_only = {"team enable", "team add", "team remove", "team list", "not_permitted"}
    if boards.url is not None:  # team mode, last: it turns the board into a team board
        team_shapes(seen, repo, boards.url)
    else:
        seen.commands |= postgres_only
        seen.reasons.add("not_permitted")

    assert not seen.failures, "\n".join(seen.failures)
    # `serve` runs until it is stopped: its one --json object is printed when
    # it listens ("ok": true, its url), and the stop is told by the exit code;
    # checked on a real process in tests/test_serve.py.
    # `guard edit` (and its helper), `guard probe` and `mcp` speak other protocols
    # than --json (an agent harness's, MCP's): tests/test_edit_guard.py,
    # tests/test_agent_install.py and tests/test_mcp.py.
    every_command = {
        " ".join(path)
        for path in walk(cli)
        if path
        not in (
            ["task"],
            ["resource"],
            ["guard"],
            ["hooks"],
            ["team"],
            ["instance"],
            ["serve"],
            ["guard", "edit"],
            ["guard", "edit-helper"],
            ["guard", "probe"],
            ["mcp"],
        )
    }
    assert every_command - seen.commands == set(), "commands without a checked --json success"
    # Produced (and checked) by test_reconcile_conflicts_left_and_path_locked_shapes.
    seen.reasons.add("conflict_markers")
    # Produced (the whole object compared) by tests/test_landing_truth.py's release test.
    seen.reasons.add("built_on")
    # Produced (the whole object compared) by tests/test_land_queue.py's server refusal.
    seen.reasons.add("not_queued")
    assert set(REFUSALS) - seen.reasons == set(), "refusal reasons never produced"


def team_shapes(seen: Seen, repo: Path, url: str) -> None:
    """The team commands, as the administrator; a refusal by the database as an agent."""
    import uuid

    import psycopg

    from git_lacunari.team import role_names

    from .team_fixtures import as_role

    S = SUCCESS
    role = "shape_" + uuid.uuid4().hex[:10]
    board = None
    try:
        result = seen(S["team enable"], 0, "team", "enable")
        board = result.json["board"]
        seen(S["team add"], 0, "team", "add", role, "--caps", "py", "--no-password")
        seen(S["team list"], 0, "team", "list")
        task = seen(S["task add"], 0, "task", "add", "Held by the administrator").json["id"]
        seen(S["claim"], 0, "claim", str(task))
        git(repo, "config", "lac.url", as_role(url, role))
        seen.refused("not_permitted", "release", str(task), "--force", "--reason", "mine")
        git(repo, "config", "lac.url", url)
        seen(S["team remove"], 0, "team", "remove", role)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            for name in [role, *(role_names(board).values() if board else ())]:
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone():
                    conn.execute(f'DROP OWNED BY "{name}" CASCADE')  # the owner's triggers
                    conn.execute(f'DROP ROLE "{name}"')


def walk(group: click.Group, prefix: tuple[str, ...] = ()) -> list[list[str]]:
    found: list[list[str]] = []
    for name, command in group.commands.items():
        found.append([*prefix, name])
        if isinstance(command, click.Group):
            found += walk(command, (*prefix, name))
    return found


def test_offline_guard_shapes(lac: Lac, repo: Path) -> None:
    """Allowed unchecked (ok, exit 0), or refused unchecked: unfinished, exit 1."""
    git(repo, "config", "lac.url", "postgresql://nobody@127.0.0.1:1/nowhere")
    (repo / "README").write_text("offline\n")
    git(repo, "add", "README")
    seen = Seen(lac)
    seen(SUCCESS["guard pre-commit"], 0, "guard", "pre-commit")
    git(repo, "config", "lac.guard.offline", "refuse")
    result = seen(unfinished(**GUARD), 1, "guard", "pre-commit")
    assert result.json["offline"] is True and "commit refused" in result.err
    seen(error("board_unreachable"), 3, "tasks")
    assert not seen.failures, "\n".join(seen.failures)


def test_outside_a_repository_error_shape(tmp_path: Path) -> None:
    from .conftest import lac_inprocess

    result = lac_inprocess(tmp_path, "tasks", "--json")
    assert result.code == 3 and problems(result.json, error("not_a_repository")) == []


# --- reconcile: conflicts left (unfinished) and a held path (refused) ---------------


def test_reconcile_conflicts_left_and_path_locked_shapes(lac: Lac, repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "theirs")
    commit(repo, "README", "theirs\n")
    git(repo, "checkout", "-q", "main")
    commit(repo, "README", "ours\n")
    assert base
    seen = Seen(lac)
    assert lac("lock", "README", "--as", "dana").code == 0
    seen.refused("path_locked", "reconcile", "theirs", "--as", "erin")
    assert lac("unlock", "README", "--as", "dana").code == 0
    files = SUCCESS["reconcile"]["properties"]
    shape = unfinished(**{k: v for k, v in files.items() if k not in ("ok", "notices")})
    seen(shape, 1, "reconcile", "theirs")
    seen(unfinished(ref=STR, paths=array(STR), conflicts=array(STR)), 1, "reconcile", "--continue")
    git(repo, "add", "README")  # the markers with it
    seen.refused("conflict_markers", "reconcile", "--continue")
    seen.refused("conflict_markers", "guard", "pre-commit")
    seen(success(aborted=STR), 0, "reconcile", "--abort")
    seen(error("invalid_input"), 2, "reconcile", "--abort")
    assert not seen.failures, "\n".join(seen.failures)


# --- the edge itself ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "code", "ok"),
    [
        (edge.Result({"x": 1}), 0, True),
        (edge.Result(unfinished="2 conflict(s) left"), 1, False),
        (edge.Result(stopped_by=signal.SIGTERM), 128 + 15, False),
        (KeyboardInterrupt(), 128 + 2, False),
        (NotFound(task=3), 1, False),
        (BadUsage("no"), 2, False),
        (BoardUnreachable("gone"), 3, False),
    ],
)
def test_the_edge_picks_code_and_ok_together(
    outcome: edge.Outcome, code: int, ok: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    assert edge.render(outcome, as_json=True) == code
    body = json.loads(capsys.readouterr().out)
    assert body["ok"] is ok
    if isinstance(outcome, edge.Result) and outcome.stopped_by is not None:
        assert body["stopped_by"] == "SIGTERM"


def test_hook_fast_path_and_full_command_line_speak_alike(lac: Lac, repo: Path) -> None:
    """`git-lac guard pre-commit` skips click; the same refusal, the same exit code."""
    assert lac("lock", "README", "--as", "dana").code == 0
    (repo / "README").write_text("changed\n")
    git(repo, "add", "README")
    env = {"LAC_AGENT": "erin"}
    fast = lac_process(repo, "guard", "pre-commit", env=env)
    full = lac_process(repo, "guard", "pre-commit", "--as", "erin", env=env)
    assert fast.code == full.code == 1
    assert fast.err.splitlines()[0] == "refused: dana holds README (no task)"
    aged = re.compile(r"\d+s ago")  # the two runs are a moment apart
    assert aged.sub("Ns ago", fast.err) == aged.sub("Ns ago", full.err)
    as_json = lac_process(repo, "guard", "pre-commit", "--json", env=env)
    assert problems(as_json.json, refusal("path_locked")) == []
    assert subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=repo).returncode == 1
