-- The whole current schema of a team board, applied in one go by a fresh
-- `git lac init --url postgresql://...`. Older boards reach the same schema
-- through the numbered migrations beside this file (tests/test_migrations.py).
-- Times are epoch seconds taken from the server clock, so that workers on
-- several machines agree on heartbeat ages.

CREATE FUNCTION lac_now() RETURNS double precision
    LANGUAGE sql STABLE
    AS $$ SELECT extract(epoch FROM now())::double precision $$;

CREATE TABLE lac_tasks (
    id           bigserial PRIMARY KEY,
    title        text             NOT NULL,
    body         text             NOT NULL DEFAULT '',
    lane         text             NOT NULL DEFAULT 'default',
    priority     integer          NOT NULL DEFAULT 0,
    state        text             NOT NULL DEFAULT 'open'
                 CHECK (state IN ('open', 'claimed', 'done', 'cancelled', 'parked')),
    owner        text,
    claimed_at   double precision,
    heartbeat_at double precision,
    stale_after  double precision,
    attempts     integer          NOT NULL DEFAULT 0,
    needs        jsonb            NOT NULL DEFAULT '[]',
    created_at   double precision NOT NULL DEFAULT lac_now(),
    created_by   text             NOT NULL,
    instance     text  -- the holder's instance (0002)
);
-- Only open tasks are queued: a claim takes its row out of this index.
CREATE INDEX lac_tasks_queue ON lac_tasks (lane, priority DESC, created_at, id) WHERE state = 'open';
CREATE INDEX lac_tasks_owner ON lac_tasks (owner, state);
-- The keeper's sweep looks only at claims, oldest heartbeat first.
CREATE INDEX lac_tasks_heartbeat ON lac_tasks (heartbeat_at) WHERE state = 'claimed';

CREATE TABLE lac_task_deps (
    task_id    bigint NOT NULL REFERENCES lac_tasks (id),
    depends_on bigint NOT NULL REFERENCES lac_tasks (id),
    PRIMARY KEY (task_id, depends_on)
);
CREATE INDEX lac_task_deps_on ON lac_task_deps (depends_on);

CREATE TABLE lac_task_paths (
    task_id bigint NOT NULL REFERENCES lac_tasks (id),
    pattern text   NOT NULL,
    mode    text   NOT NULL CHECK (mode IN ('r', 'w')),
    PRIMARY KEY (task_id, pattern)
);

CREATE TABLE lac_locks (
    id          bigserial PRIMARY KEY,
    pattern     text             NOT NULL,
    key         text COLLATE "C" NOT NULL,
    mode        text             NOT NULL CHECK (mode IN ('r', 'w')),
    agent       text             NOT NULL,
    task_id     bigint REFERENCES lac_tasks (id),
    acquired_at double precision NOT NULL DEFAULT lac_now(),
    base_blob   text,
    instance    text  -- the holder's instance (0002)
);
CREATE INDEX lac_locks_key ON lac_locks (key);
CREATE INDEX lac_locks_task ON lac_locks (task_id);
CREATE INDEX lac_locks_agent ON lac_locks (agent, pattern);

CREATE TABLE lac_agents (
    name         text PRIMARY KEY,
    capabilities jsonb            NOT NULL DEFAULT '[]',
    last_seen    double precision NOT NULL DEFAULT lac_now()
);

-- Where agents run (0002): one working tree of one clone, by host and path.
CREATE TABLE lac_instances (
    id        text PRIMARY KEY,
    agent     text NOT NULL,
    host      text NOT NULL,
    path      text NOT NULL,
    last_seen double precision NOT NULL DEFAULT lac_now()
);

CREATE TABLE lac_events (
    id      bigserial PRIMARY KEY,
    at      double precision NOT NULL DEFAULT lac_now(),
    task_id bigint,
    agent   text             NOT NULL,
    kind    text             NOT NULL,
    detail  jsonb            NOT NULL DEFAULT '{}'
);
CREATE INDEX lac_events_task ON lac_events (task_id, id);

CREATE TABLE lac_settings (
    name  text PRIMARY KEY,
    value text NOT NULL
);

-- The one rule "may this agent claim this task" (state aside, which the
-- claiming UPDATE checks itself): every dependency done, every capability
-- the task needs held by the agent. Every claimer uses it, as
--   EXISTS (SELECT 1 FROM lac_claimable(t.id, :agent) AS ok WHERE ok)
-- (`SELECT lac_claimable(12, 'dana')` answers for one task). Why a one-row
-- set-returning SQL function: a scalar SQL function with sub-selects is never
-- inlined and is planned again by every query that calls it (1.3 ms per
-- claim); this one is inlined into the caller's plan like a view, so the
-- prepared claim statement carries the rule at no call cost.
CREATE FUNCTION lac_claimable(p_task bigint, p_agent text) RETURNS SETOF boolean
    LANGUAGE sql STABLE ROWS 1
    AS $$
    SELECT NOT EXISTS (
               SELECT 1 FROM lac_task_deps d JOIN lac_tasks dt ON dt.id = d.depends_on
                WHERE d.task_id = p_task AND dt.state <> 'done')
       AND coalesce((SELECT t.needs <@ coalesce(
                                (SELECT a.capabilities FROM lac_agents a WHERE a.name = p_agent),
                                '[]'::jsonb)
                       FROM lac_tasks t WHERE t.id = p_task), false)
    $$;

-- --- 0006: the live page's change feed (git lac serve) ----------------------

-- The channel of a board (a schema): its name, or for a name too long for a
-- channel (63 bytes) its md5, so two boards of a database never share one.
CREATE FUNCTION lac_change_channel(p_board text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT CASE WHEN octet_length('lac_change_' || p_board) <= 63
                      THEN 'lac_change_' || p_board
                      ELSE 'lac_change_' || md5(p_board) END $$;

-- The table's own schema, not the writer's search_path: a psql session on
-- another search_path writing board.lac_tasks wakes this board's pages.
CREATE FUNCTION lac_notify_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
    AS $$ BEGIN PERFORM pg_notify(lac_change_channel(TG_TABLE_SCHEMA), ''); RETURN NULL; END $$;

CREATE TRIGGER lac_tasks_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lac_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION lac_notify_change();
CREATE TRIGGER lac_task_deps_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lac_task_deps
    FOR EACH STATEMENT EXECUTE FUNCTION lac_notify_change();
CREATE TRIGGER lac_task_paths_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lac_task_paths
    FOR EACH STATEMENT EXECUTE FUNCTION lac_notify_change();
CREATE TRIGGER lac_locks_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lac_locks
    FOR EACH STATEMENT EXECUTE FUNCTION lac_notify_change();
CREATE TRIGGER lac_events_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lac_events
    FOR EACH STATEMENT EXECUTE FUNCTION lac_notify_change();
CREATE TRIGGER lac_settings_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lac_settings
    FOR EACH STATEMENT EXECUTE FUNCTION lac_notify_change();
