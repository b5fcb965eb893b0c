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
from ..rules import LandingLine
from .core import BoardCore


class Grants(BoardCore):
    def _conflicts(
        self, wanted: Sequence[PathSpec], lines: Sequence[LandingLine] = ()
    ) -> list[Conflict]:
        """Other agents' locks overlapping ``wanted``, but for those of a
        landing claim built on: ``lines``, the landing lines (task and tip)
        the claim starts from or its branch contains. A landing claim's work
        is finished; a line built on its tip has that work in its base, so
        nothing of the two can conflict (stacking). A newer tip
        than the one built on refuses again.

        Candidates come from the key index in one query for all wanted keys
        (``candidate_locks_batch``: the keys' ancestors exactly, their
        subtrees as index ranges). Those are indexed by literal head
        (:class:`paths.PrefixIndex`), and each wanted pattern is compared
        (:func:`paths.overlap`) only with the held ones whose head nests
        with its own: N wanted against M held in one directory, plain paths
        or globs, costs about N lookups plus the pairs that may overlap, not
        N x M comparisons.

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
        built_on = {(line.task, line.tip) for line in lines if line.tip}
        index: paths.PrefixIndex[Lock] = paths.PrefixIndex()
        seen: set[int] = set()
        landing: dict[int, str] = {}  # lock id -> its landing claim's tip
        for row in rows:
            lock = Lock.from_row(row)
            if lock.id in seen or self._is_ours(lock.agent, lock.instance):
                continue
            seen.add(lock.id)
            tip = row["landing_tip"]
            if tip is not None and (lock.task_id, tip) in built_on:
                continue  # a landing line the claim is built on
            if tip is not None:
                landing[lock.id] = tip
            index.add(lock.pattern, lock)
        found: list[Conflict] = []
        for spec in wanted:
            hits = [
                lk
                for lk in index.candidates(spec.pattern)
                if rules.modes_conflict(spec.mode, lk.mode)
                and paths.overlap(lk.pattern, spec.pattern, self.ignorecase)
            ]
            for lock in sorted(hits, key=lambda lk: lk.id):
                found.append(
                    Conflict(spec.pattern, lock, wanted=spec.mode, landing_tip=landing.get(lock.id))
                )
        return found

    def _serialize_grants(self) -> None:
        self.store.one("serialize_locks")

    def _grant(
        self,
        wanted: Sequence[PathSpec],
        task_id: int | None,
        lines: Sequence[LandingLine] = (),
    ) -> list[Lock]:
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
        conflicts = self._conflicts(wanted, lines)
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
        built_on = [{"task": line.task, "tip": line.tip} for line in lines if line.tip]
        for spec in wanted:
            held = mine.get((spec.pattern, task_id))
            if held is not None:
                if held.mode == LockMode.READ and spec.mode == LockMode.WRITE:
                    self.store.run("upgrade_lock", lock_id=held.id)
                    held.mode = LockMode.WRITE
                    self._granted_new = True
                granted[spec.pattern] = held
                continue
            row: dict[str, Any] = {
                "pattern": spec.pattern,
                "key": paths.index_key(spec.pattern),
                "mode": spec.mode.code,
                "base_blob": blobs.get(spec.pattern.rstrip("/")),
            }
            if built_on:  # the landing lines the database's own check (team mode) waives too
                row["built_on"] = built_on
            new.append(row)
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
