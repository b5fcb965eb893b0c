-- 0017: named resource pools (`git lac resource add port 8100-8104`). A
-- pool is a set of values (ports, databases) on the board; a task names how
-- many of which pools it needs (lac_task_resources, `task add
-- --needs-resource`, `claim --resource`), and its claim is granted that many
-- distinct free values in the claim's own transaction, or refused whole.
-- A value is held by one claim (task_id) until the claim ends: release,
-- done (landing included), cancel, expiry; the trigger lac_tasks_free_resources
-- (functions/triggers.sql) frees them whichever statement ended it.
-- ord: the order values are handed out in (a range in its numeric order,
-- strings in the order they were added).

CREATE TABLE lac_resources (
    name       TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    ord        INTEGER NOT NULL,
    task_id    INTEGER REFERENCES lac_tasks (id),
    granted_at REAL,
    PRIMARY KEY (name, value)
);
-- A grant takes the first free values of a pool, in order.
CREATE INDEX lac_resources_free ON lac_resources (name, ord) WHERE task_id IS NULL;
CREATE INDEX lac_resources_task ON lac_resources (task_id) WHERE task_id IS NOT NULL;

CREATE TABLE lac_task_resources (
    task_id INTEGER NOT NULL REFERENCES lac_tasks (id),
    name    TEXT    NOT NULL,
    count   INTEGER NOT NULL CHECK (count BETWEEN 1 AND 10000),
    PRIMARY KEY (task_id, name)
);
