"""Granting path locks: :meth:`Grants._grant` is the only way a lock is granted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .. import paths, rules
from ..errors import (
    PathLocked,
)
from ..model import (
    Conflict,
    Lock,
    LockMode,
    PathSpec,
)
from .core import BoardCore


class Grants(BoardCore):
    def _conflicts(self, wanted: Sequence[PathSpec]) -> list[Conflict]:
        """Other agents' locks overlapping ``wanted``.

        Candidates come from the key index in one query for all wanted keys
        (``candidate_locks_batch``: the keys' ancestors exactly, their
        subtrees as index ranges). Plain paths and directories are matched
        through a :class:`paths.LiteralIndex`, so N wanted against M held in
        one directory costs about N lookups, not N x M comparisons; only globs
        (wanted or held) are compared pattern by pattern, and only with the
        candidates of their key.

        Before granting on the strength of this answer, a transaction must
        hold :meth:`_serialize_grants`, or two grants could race past it.
        """
        if not wanted:
            return []
        keys = sorted({paths.index_key(spec.pattern) for spec in wanted})
        # A subtree range covers the ranges of the keys below it: ask for the
        # outermost only, and each ancestor key once.
        outer = [k for i, k in enumerate(keys) if not any(k.startswith(o) for o in keys[:i])]
        exact = sorted({a for k in keys for a in paths.ancestor_keys(k)})
        rows = self.store.all(
            "candidate_locks_batch",
            exact=json.dumps(exact),
            ranges=json.dumps([{"lo": k, "hi": k + paths.KEY_RANGE_END} for k in outer]),
        )
        by_lock_key: dict[str, list[Lock]] = {}
        seen: set[int] = set()
        for row in rows:
            lock = Lock.from_row(row)
            if lock.id in seen or self._is_ours(lock.agent, lock.instance):
                continue
            seen.add(lock.id)
            by_lock_key.setdefault(str(row["key"]), []).append(lock)
        lock_keys = sorted(by_lock_key)
        by_key: dict[str, tuple[paths.LiteralIndex[Lock], list[Lock], list[Lock]]] = {}
        found: list[Conflict] = []
        for spec in wanted:
            key = paths.index_key(spec.pattern)
            if key not in by_key:
                by_key[key] = self._candidates(key, by_lock_key, lock_keys)
            index, held_globs, others = by_key[key]
            if paths.is_literal(spec.pattern):
                hits = index.overlapping(spec.pattern) + [
                    lk
                    for lk in held_globs
                    if paths.overlap(lk.pattern, spec.pattern, self.ignorecase)
                ]
            else:
                hits = [
                    lk for lk in others if paths.overlap(lk.pattern, spec.pattern, self.ignorecase)
                ]
            for lock in sorted(hits, key=lambda lk: lk.id):
                if not rules.modes_conflict(spec.mode, lock.mode):
                    continue
                found.append(Conflict(spec.pattern, lock, wanted=spec.mode))
        return found

    def _candidates(
        self, key: str, by_lock_key: dict[str, list[Lock]], lock_keys: list[str]
    ) -> tuple[paths.LiteralIndex[Lock], list[Lock], list[Lock]]:
        """The fetched locks that may overlap a pattern of ``key`` (those of
        its ancestor keys and of its subtree), literal ones indexed."""
        import bisect

        others = [lk for a in paths.ancestor_keys(key) for lk in by_lock_key.get(a, [])]
        at = bisect.bisect_left(lock_keys, key)
        while at < len(lock_keys) and lock_keys[at].startswith(key):
            if lock_keys[at] != key:  # the key itself is one of its ancestor keys
                others += by_lock_key[lock_keys[at]]
            at += 1
        index: paths.LiteralIndex[Lock] = paths.LiteralIndex(self.ignorecase)
        held_globs: list[Lock] = []
        for lock in others:
            if paths.is_literal(lock.pattern):
                index.add(lock.pattern, lock)
            else:
                held_globs.append(lock)
        return index, held_globs, others

    def _serialize_grants(self) -> None:
        self.store.one("serialize_locks")

    def _grant(self, wanted: Sequence[PathSpec], task_id: int | None) -> list[Lock]:
        """Grant every lock in ``wanted`` or refuse them all (raising rolls back).

        What does not depend on other grants (the blob ids, from git) is
        looked up first; then the board-wide serialisation is taken for the
        short grant itself: one query for the candidates, one for our own
        locks on these patterns, one statement inserting every new lock.
        """
        if not wanted:
            return []
        self._granted_new = False  # did this grant change anything (a lock taken or upgraded)?
        literal = [s.pattern.rstrip("/") for s in wanted if paths.is_literal(s.pattern)]
        blobs = self.blob_ids(literal) if self.blob_ids and literal else {}
        self._serialize_grants()
        conflicts = self._conflicts(wanted)
        if conflicts:
            raise PathLocked(conflicts)
        mine = {
            (lk.pattern, lk.task_id): lk
            for lk in (
                Lock.from_row(r)
                for r in self.store.all(
                    "own_locks_on",
                    agent=self.agent,
                    patterns=json.dumps(sorted({s.pattern for s in wanted})),
                )
            )
            if lk.instance == self.instance
        }
        granted: dict[str, Lock] = {}
        new: list[dict[str, Any]] = []
        for spec in wanted:
            held = mine.get((spec.pattern, task_id))
            if held is not None:
                if held.mode == LockMode.READ and spec.mode == LockMode.WRITE:
                    self.store.run("upgrade_lock", lock_id=held.id)
                    held.mode = LockMode.WRITE
                    self._granted_new = True
                granted[spec.pattern] = held
                continue
            new.append(
                {
                    "pattern": spec.pattern,
                    "key": paths.index_key(spec.pattern),
                    "mode": spec.mode.code,
                    "base_blob": blobs.get(spec.pattern.rstrip("/")),
                }
            )
        if new:
            self._granted_new = True
            for row in self.store.all(
                "insert_locks",
                locks=json.dumps(new),
                agent=self.agent,
                task_id=task_id,
                instance=self.instance,
            ):
                lock = Lock.from_row(row)
                granted[lock.pattern] = lock
        return [granted[spec.pattern] for spec in wanted]
