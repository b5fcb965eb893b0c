-- 0002: a claim and a lock are held by an agent *at an instance* (one working
-- tree of one clone); instances are named for people by host and path.

ALTER TABLE lac_tasks ADD COLUMN instance TEXT;
ALTER TABLE lac_locks ADD COLUMN instance TEXT;

CREATE TABLE lac_instances (
    id        TEXT PRIMARY KEY,
    agent     TEXT NOT NULL,
    host      TEXT NOT NULL,
    path      TEXT NOT NULL,
    last_seen REAL NOT NULL
);
