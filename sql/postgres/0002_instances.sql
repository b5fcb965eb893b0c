-- 0002: a claim and a lock are held by an agent *at an instance* (one working
-- tree of one clone); instances are named for people by host and path.

ALTER TABLE lac_tasks ADD COLUMN instance text;
ALTER TABLE lac_locks ADD COLUMN instance text;

CREATE TABLE lac_instances (
    id        text PRIMARY KEY,
    agent     text             NOT NULL,
    host      text             NOT NULL,
    path      text             NOT NULL,
    last_seen double precision NOT NULL DEFAULT lac_now()
);
