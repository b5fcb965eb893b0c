-- SQLite has no stored functions and no CREATE OR REPLACE: its analogue of
-- PostgreSQL's functions/ is a trigger (or a view) dropped and created again,
-- applied after the migrations on every board that reaches the latest schema
-- version (sql/README.md). The one place these bodies live; the rules a
-- PostgreSQL function holds (lac_claimable's twin, `now`) are fragments of
-- the named queries here (queries/tasks.sql), inlined where they are used.

-- A claim is recorded in the statement that made it. SQLite has no
-- data-modifying CTEs (PostgreSQL's claim queries use one), so a trigger
-- (first created by 0001).
DROP TRIGGER IF EXISTS lac_tasks_claimed;
CREATE TRIGGER lac_tasks_claimed AFTER UPDATE OF state ON lac_tasks
WHEN OLD.state <> 'claimed' AND NEW.state = 'claimed'
BEGIN
    INSERT INTO lac_events (at, task_id, agent, kind, detail)
    VALUES ((julianday('now') - 2440587.5) * 86400.0, NEW.id, NEW.owner, 'claimed',
            json_object('attempt', NEW.attempts));
END;
