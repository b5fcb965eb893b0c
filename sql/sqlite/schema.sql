-- The whole current schema of the embedded board, applied in one go by a
-- fresh `git lac init`. Older boards reach the same schema through the
-- numbered migrations beside this file (tests/test_migrations.py proves it).

CREATE TABLE lac_tasks (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    title        TEXT    NOT NULL,
    body         TEXT    NOT NULL DEFAULT '',
    lane         TEXT    NOT NULL DEFAULT 'default',
    priority     INTEGER NOT NULL DEFAULT 0,
    state        TEXT    NOT NULL DEFAULT 'open'
                 CHECK (state IN ('open', 'claimed', 'done', 'cancelled', 'parked')),
    owner        TEXT,
    claimed_at   REAL,
    heartbeat_at REAL,
    stale_after  REAL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    needs        TEXT    NOT NULL DEFAULT '[]',
    created_at   REAL    NOT NULL,
    created_by   TEXT    NOT NULL,
    instance     TEXT  -- the holder's instance (0002)
);
-- Only open tasks are queued: a claim takes its row out of this index.
CREATE INDEX lac_tasks_queue ON lac_tasks (lane, priority DESC, created_at, id) WHERE state = 'open';
CREATE INDEX lac_tasks_owner ON lac_tasks (owner, state);
-- The keeper's sweep looks only at claims, oldest heartbeat first.
CREATE INDEX lac_tasks_heartbeat ON lac_tasks (heartbeat_at) WHERE state = 'claimed';

CREATE TABLE lac_task_deps (
    task_id    INTEGER NOT NULL REFERENCES lac_tasks (id),
    depends_on INTEGER NOT NULL REFERENCES lac_tasks (id),
    PRIMARY KEY (task_id, depends_on)
);
CREATE INDEX lac_task_deps_on ON lac_task_deps (depends_on);

CREATE TABLE lac_task_paths (
    task_id INTEGER NOT NULL REFERENCES lac_tasks (id),
    pattern TEXT    NOT NULL,
    mode    TEXT    NOT NULL CHECK (mode IN ('r', 'w')),
    PRIMARY KEY (task_id, pattern)
);

CREATE TABLE lac_locks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    pattern     TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    mode        TEXT    NOT NULL CHECK (mode IN ('r', 'w')),
    agent       TEXT    NOT NULL,
    task_id     INTEGER REFERENCES lac_tasks (id),
    acquired_at REAL    NOT NULL,
    base_blob   TEXT,
    instance    TEXT  -- the holder's instance (0002)
);
CREATE INDEX lac_locks_key ON lac_locks (key);
CREATE INDEX lac_locks_task ON lac_locks (task_id);
CREATE INDEX lac_locks_agent ON lac_locks (agent, pattern);

CREATE TABLE lac_agents (
    name         TEXT PRIMARY KEY,
    capabilities TEXT NOT NULL DEFAULT '[]',
    last_seen    REAL NOT NULL
);

-- Where agents run (0002): one working tree of one clone, by host and path.
CREATE TABLE lac_instances (
    id        TEXT PRIMARY KEY,
    agent     TEXT NOT NULL,
    host      TEXT NOT NULL,
    path      TEXT NOT NULL,
    last_seen REAL NOT NULL
);

CREATE TABLE lac_events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      REAL    NOT NULL,
    task_id INTEGER,
    agent   TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    detail  TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX lac_events_task ON lac_events (task_id, id);

-- A claim is recorded in the statement that made it. SQLite has no
-- data-modifying CTEs (PostgreSQL's claim queries use one), so a trigger.
CREATE TRIGGER lac_tasks_claimed AFTER UPDATE OF state ON lac_tasks
WHEN OLD.state <> 'claimed' AND NEW.state = 'claimed'
BEGIN
    INSERT INTO lac_events (at, task_id, agent, kind, detail)
    VALUES ((julianday('now') - 2440587.5) * 86400.0, NEW.id, NEW.owner, 'claimed',
            json_object('attempt', NEW.attempts));
END;

CREATE TABLE lac_settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- 0003 (issue 12, lists that scale): the paged listings of tasks.
CREATE INDEX lac_tasks_live ON lac_tasks (id) WHERE state NOT IN ('done', 'cancelled');
CREATE INDEX lac_tasks_live_lane ON lac_tasks (lane, id) WHERE state NOT IN ('done', 'cancelled');
CREATE INDEX lac_tasks_state ON lac_tasks (state, id);

-- 0004 (overlap): nothing on SQLite; see sql/sqlite/0004_overlap.sql.

-- 0005 (team): nothing on SQLite; see sql/sqlite/0005_team.sql.

-- 0006: the live page's change feed needs nothing here: its watcher reads
-- PRAGMA data_version (git lac serve).
