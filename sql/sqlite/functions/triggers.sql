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

-- A claim's resource values go back to their pools when the claim ends
-- (released, done, cancelled, expired, parked) or goes landing (done, its
-- work not in the destination yet: the work that used them is finished),
-- whichever statement ended it; the `freed` event says which (first created
-- by 0017).
DROP TRIGGER IF EXISTS lac_tasks_free_resources;
CREATE TRIGGER lac_tasks_free_resources AFTER UPDATE OF state, landing_since ON lac_tasks
WHEN OLD.state = 'claimed'
 AND (NEW.state <> 'claimed' OR (OLD.landing_since IS NULL AND NEW.landing_since IS NOT NULL))
 AND EXISTS (SELECT 1 FROM lac_resources r WHERE r.task_id = OLD.id)
BEGIN
    INSERT INTO lac_events (at, task_id, agent, kind, detail)
    SELECT (julianday('now') - 2440587.5) * 86400.0, OLD.id, OLD.owner, 'freed',
           json_object('holder', OLD.owner,
                       'resources', json_group_array(json_object('name', f.name, 'value', f.value)))
      FROM (SELECT r.name, r.value FROM lac_resources r WHERE r.task_id = OLD.id
             ORDER BY r.name, r.ord) AS f;
    UPDATE lac_resources SET task_id = NULL, granted_at = NULL WHERE task_id = OLD.id;
END;
