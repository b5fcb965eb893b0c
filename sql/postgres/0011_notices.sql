-- 0011: take-over notices, and `task after` on another's claim.
-- A holder's heartbeat, status and done look for the force actions
-- (release --force, unlock --force) that took a claim or a lock of theirs
-- (queries/lists.sql force_events_about); this index holds only those
-- events, so the look never reads the whole history.
CREATE INDEX lac_events_force ON lac_events (id)
 WHERE kind IN ('force_released', 'force_unlocked');

-- lac_api_insert_dep takes who adds the dependency and where it runs, and
-- refuses a task claimed by another agent (or by the same agent in another
-- working tree), as `git lac task after` does: the signature changes (DROP
-- here, functions/team.sql creates it again; `git lac init` gives it team
-- mode's rules, as for 0007's changed functions).
DROP FUNCTION lac_api_insert_dep(bigint, bigint);
