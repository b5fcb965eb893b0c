"""One snapshot of the board for the live page (its read model): what the
page shows, read in one transaction through the board's named queries.

Times are absolute, on the board's clock, with that clock's ``now`` beside
them: the page measures every age and staleness against ``now`` plus the
time passed since it received the snapshot, so a claim going stale shows
without anything being pushed (time-driven changes). When a
claim goes stale is computed here (``stale_at``, :func:`rules.stale_at`);
the page only compares it with its clock.

Why an open task is blocked is the board's one rule (:mod:`git_lacunari.rules`),
asked for no agent in particular: a dependency not done; a set of needed
capabilities that no one known agent holds whole; a declared path in
conflict with a held lock.

No web framework here: the snapshot is a plain dict, testable without a server.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import rules
from ..model import TaskState

if TYPE_CHECKING:
    from . import Board

FINISHED_SHOWN = 300  # done and cancelled tasks shown, newest first (counts are whole)
EVENTS_SHOWN = 200
DONE_WINDOW_S = 24 * 3600.0  # "done overnight": done in the last 24 hours
MAX_BLOCK_CHECKS = 200_000  # open paths x locks compared for "path held by"


def _caps(value: Any) -> list[str]:
    return list(json.loads(value) if isinstance(value, str) else value or [])


def _detail(value: Any) -> dict[str, Any]:
    return dict(json.loads(value) if isinstance(value, str) else value or {})


def snapshot(board: Board, *, actions: bool = False) -> dict[str, Any]:
    """The whole page's data: tasks with why each open one is blocked, locks,
    recent events, counts, and the board's clock."""
    store = board.store
    with store.snapshot():
        now = board.now()
        default_stale = board.default_stale_after()
        team = store.one("get_setting", name="team_mode")
        tasks = store.all("page_tasks", finished=FINISHED_SHOWN)
        counts = {str(r["state"]): int(r["n"]) for r in store.all("page_state_counts")}
        deps = store.all("page_deps")
        task_paths = store.all("page_task_paths")
        locks = store.all("page_locks")
        events = store.all("page_events", n=EVENTS_SHOWN)
        done_recently = store.one("page_done_since", since=now - DONE_WINDOW_S)
        instances = {r["id"]: f"{r['host']}:{r['path']}" for r in store.all("page_instances")}
        agents = store.all("page_agents")
        role = store.one("page_role")

    agents_caps = [_caps(agent["capabilities"]) for agent in agents]
    held_caps = {cap for caps in agents_caps for cap in caps}
    waits: dict[int, list[dict[str, Any]]] = {}
    for d in deps:
        waits.setdefault(int(d["task_id"]), []).append(
            {"id": int(d["depends_on"]), "state": d["state"]}
        )
    declared: dict[int, list[list[str]]] = {}
    for p in task_paths:
        declared.setdefault(int(p["task_id"]), []).append(
            [p["pattern"], "write" if p["mode"] == "w" else "read"]
        )
    lock_list = [
        {
            "id": int(lk["id"]),
            "pattern": lk["pattern"],
            "mode": "write" if lk["mode"] == "w" else "read",
            "agent": lk["agent"],
            "task": None if lk["task_id"] is None else int(lk["task_id"]),
            "instance": lk.get("instance"),
            "where": instances.get(lk.get("instance") or ""),
            "acquired_at": float(lk["acquired_at"]),
        }
        for lk in locks
    ]

    checks = 0
    shown_tasks = []
    for row in tasks:
        task_id = int(row["id"])
        state = row["state"]
        needs = _caps(row["needs"])
        blocked: list[dict[str, Any]] = []
        if state == TaskState.OPEN:
            unmet = rules.unmet_dependencies((d["id"], d["state"]) for d in waits.get(task_id, []))
            for dep_id, dep_state in unmet:
                blocked.append({"kind": "waiting", "task": dep_id, "state": dep_state})
            for cap in rules.missing_capabilities(needs, held_caps):
                blocked.append({"kind": "capability", "capability": cap})
            if not rules.claimable_by_someone(needs, agents_caps) and all(
                cap in held_caps for cap in needs
            ):
                # Each is held, but by different agents: none may claim it.
                blocked.append({"kind": "capabilities", "capabilities": needs})
            for pattern, mode in declared.get(task_id, []):
                for lk in lock_list:
                    checks += 1
                    if checks > MAX_BLOCK_CHECKS:
                        break
                    if rules.conflict(pattern, mode, lk["pattern"], lk["mode"], board.ignorecase):
                        blocked.append(
                            {
                                "kind": "path",
                                "path": pattern,
                                "pattern": lk["pattern"],
                                "holder": lk["agent"],
                                "task": lk["task"],
                            }
                        )
                        break
        shown_tasks.append(
            {
                "id": task_id,
                "title": row["title"],
                "lane": row["lane"],
                "priority": int(row["priority"]),
                "state": state,
                "owner": row["owner"],
                "instance": row.get("instance"),
                "where": instances.get(row.get("instance") or ""),
                "claimed_at": row["claimed_at"],
                "heartbeat_at": row["heartbeat_at"],
                "stale_after": row["stale_after"],
                "stale_at": rules.stale_at(
                    state, row["heartbeat_at"], row["stale_after"], default_stale
                ),
                "attempts": int(row["attempts"]),
                "needs": needs,
                "created_at": float(row["created_at"]),
                "created_by": row["created_by"],
                "after": [d["id"] for d in waits.get(task_id, [])],
                "paths": declared.get(task_id, []),
                "blocked": blocked,
            }
        )
    return {
        "board": {
            "dialect": store.dialect,
            "where": store.where,
            "team_mode": bool(team and team["value"] == "on"),
            "role": role["role"] if role else None,
        },
        "now": now,
        "stale_after": default_stale,
        "actions": actions,
        "counts": {
            "by_state": counts,
            "done_recently": int(done_recently["n"]) if done_recently else 0,
            "done_window": DONE_WINDOW_S,
            "finished_shown": FINISHED_SHOWN,
        },
        "tasks": shown_tasks,
        "locks": lock_list,
        "events": [
            {
                "id": int(e["id"]),
                "at": float(e["at"]),
                "task": None if e["task_id"] is None else int(e["task_id"]),
                "agent": e["agent"],
                "kind": e["kind"],
                "detail": _detail(e["detail"]),
            }
            for e in events
        ],
    }


# --- the page's connections: who it reads as, and whether its board is there --


def current_board(board: Board) -> str | None:
    """The schema this connection's board is (None: its search_path names
    none, e.g. the schema was renamed or dropped); the embedded board: main."""
    row = board.store.one("current_board")
    return None if row is None or row["board"] is None else str(row["board"])


def page_session(board: Board, *, actions: bool, reader: Callable[[str], str]) -> str | None:
    """Set up one of the page's connections; the role its reads run as.

    With actions off every connection is read-only (PostgreSQL: each
    transaction READ ONLY, SECURITY DEFINER functions included; SQLite:
    ``query_only``), so whoever serves — an admin included — the page cannot
    write. On a team board it reads as the board's reader role (``reader``
    names it from the board's name) when the login may become it (the
    administrator); an agent, which may not, reads as itself: its policies
    let it read the whole board, and it needs no grant."""
    store = board.store
    if not actions:
        team = store.one("get_setting", name="team_mode")
        if store.dialect == "postgres" and team and team["value"] == "on":
            role = reader(current_board(board) or "")
            may = store.one("page_may_set_role", role=role)
            if may and may["may"]:
                store.one("page_set_role", role=role)
        store.one("page_read_only")
    row = store.one("page_role")
    return None if row is None or row["role"] is None else str(row["role"])
