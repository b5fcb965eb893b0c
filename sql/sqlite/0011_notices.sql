-- 0011: take-over notices. A holder's heartbeat, status and done
-- look for the force actions (release --force, unlock --force) that took a
-- claim or a lock of theirs (queries/lists.sql force_events_about); this
-- index holds only those events, so the look never reads the whole history.
CREATE INDEX lac_events_force ON lac_events (id)
 WHERE kind IN ('force_released', 'force_unlocked');
