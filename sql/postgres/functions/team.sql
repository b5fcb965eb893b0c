-- CREATE OR REPLACE: applied after the migrations on every board that reaches
-- the latest schema version (sql/README.md). The one place these bodies live.

-- Team mode's write path (first created by 0005): every write the board
-- makes goes through a lac_api_* function (sql/postgres/queries/ calls
-- them), in plain and in team mode.
-- In plain mode they are SECURITY INVOKER and trust the agent name they are
-- given, as the board always has. `git lac team enable` makes them SECURITY
-- DEFINER, owned by a NOLOGIN role, with a pinned search_path, revokes every
-- direct write from the agents and turns row-level security on: then the
-- acting agent is the session's role (lac_actor), never an argument, and the
-- keeper/admin rights are checked here, in the database (git_lacunari/team.py).

-- Is this board in team mode (`git lac team enable`)?
CREATE OR REPLACE FUNCTION lac_team() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce((SELECT s.value = 'on' FROM lac_settings s WHERE s.name = 'team_mode'), false) $$;

-- The one place identity is decided: in plain mode the name the caller gives;
-- in team mode the session's role, and a different name given is refused.
CREATE OR REPLACE FUNCTION lac_actor(p_claimed text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    IF NOT lac_team() THEN
        RETURN p_claimed;
    END IF;
    IF p_claimed IS NOT NULL AND p_claimed IS DISTINCT FROM session_user::text THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('team mode: this session is the role %s and acts only as %s, not as %s',
                             session_user, session_user, p_claimed);
    END IF;
    RETURN session_user::text;
END
$$;

-- Is the session's role a member of the board's keeper / admin group (team
-- mode; the group names are recorded by `team enable` as team_role:KIND)?
CREATE OR REPLACE FUNCTION lac_has(p_kind text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce((SELECT pg_has_role(session_user, s.value, 'MEMBER')
                       FROM lac_settings s
                      WHERE s.name = 'team_role:' || p_kind
                        AND EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = s.value)), false)
    $$;

CREATE OR REPLACE FUNCTION lac_refuse(p_message text) RETURNS void
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = p_message; END $$;

-- A task claimed by someone is changed (paths, dependencies, locks) only by
-- its holder, or an admin; in plain mode by anyone, as before.
CREATE OR REPLACE FUNCTION lac_may_change(p_task bigint) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT NOT lac_team() OR lac_has('admin')
        OR NOT EXISTS (SELECT 1 FROM lac_tasks t
                        WHERE t.id = p_task AND t.state = 'claimed'
                          AND t.owner IS DISTINCT FROM session_user::text)
    $$;

CREATE OR REPLACE FUNCTION lac_require_change(p_task bigint) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    IF NOT lac_may_change(p_task) THEN
        PERFORM lac_refuse(format('team mode: task #%s is claimed by another agent', p_task));
    END IF;
END
$$;

-- Team mode: may the session act on claims and locks of another agent for
-- the keeper's work (expiring what is stale)?
CREATE OR REPLACE FUNCTION lac_keeps(p_owner text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT NOT lac_team() OR p_owner = session_user::text OR lac_has('keeper') $$;

-- The board's stale-after for claims that carry none (as board.py reads it).
CREATE OR REPLACE FUNCTION lac_default_stale() RETURNS double precision
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce((SELECT s.value::double precision FROM lac_settings s
                      WHERE s.name = 'stale_after'), 1800.0)
    $$;

CREATE OR REPLACE FUNCTION lac_require_free(p_agent text, p_instance text, p_pattern text, p_mode text,
                                 p_except bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    held record;
    w text := rtrim(p_pattern, '/');
    k text := lac_index_key(p_pattern);
    names text[];
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('lac_locks:' || current_schema()));
    IF p_pattern !~ '[*?[\\]' THEN
        -- 'a/b/c.py' meets plain a, a/, a/b, a/b/, a/b/c.py, a/b/c.py/ and all below it
        names := ARRAY(SELECT n FROM generate_series(1, length(w) + 1) AS i,
                                     LATERAL unnest(ARRAY[left(w, i - 1), left(w, i - 1) || '/']) AS n
                        WHERE i = length(w) + 1 OR substr(w, i, 1) = '/');
        SELECT l.pattern, l.agent, l.task_id, l.mode INTO held FROM lac_locks l
         WHERE (l.pattern COLLATE "C" = ANY (names)
                OR (l.pattern COLLATE "C" >= w || '/'
                    AND l.pattern COLLATE "C" < w || '/' || U&'\+10FFFF'))
           AND l.id IS DISTINCT FROM p_except
           AND NOT (l.agent = p_agent AND l.instance IS NOT DISTINCT FROM p_instance)
           AND (l.mode = 'w' OR p_mode = 'w');  -- no LIMIT: it would tempt a seq scan
        IF NOT FOUND THEN
            SELECT l.pattern, l.agent, l.task_id, l.mode INTO held FROM lac_locks l
             WHERE l.pattern ~ '[*?[\\]'
               AND (l.key = ANY (lac_ancestor_keys(k)) OR (l.key >= k AND l.key < k || U&'\+10FFFF'))
               AND l.id IS DISTINCT FROM p_except
               AND NOT (l.agent = p_agent AND l.instance IS NOT DISTINCT FROM p_instance)
               AND (l.mode = 'w' OR p_mode = 'w')
               AND lac_overlap(l.pattern, p_pattern, false)
             LIMIT 1;
        END IF;
    ELSE
        SELECT l.pattern, l.agent, l.task_id, l.mode INTO held FROM lac_locks l
         WHERE (l.key = ANY (lac_ancestor_keys(k)) OR (l.key >= k AND l.key < k || U&'\+10FFFF'))
           AND l.id IS DISTINCT FROM p_except
           AND NOT (l.agent = p_agent AND l.instance IS NOT DISTINCT FROM p_instance)
           AND (l.mode = 'w' OR p_mode = 'w')
           AND lac_overlap(l.pattern, p_pattern, false)
         LIMIT 1;
    END IF;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'LAC01',
            MESSAGE = format('%s holds %s, which overlaps %s', held.agent, held.pattern, p_pattern),
            DETAIL = jsonb_build_object('path', p_pattern, 'wanted', p_mode, 'holder', held.agent,
                                        'task', held.task_id, 'pattern', held.pattern,
                                        'mode', held.mode)::text;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_upsert_agent(p_agent text, p_caps jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    IF lac_team() THEN  -- capabilities are the board's record (`team add --caps`)
        INSERT INTO lac_agents (name, last_seen) VALUES (a, lac_now())
        ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen;
    ELSE
        INSERT INTO lac_agents (name, capabilities, last_seen) VALUES (a, p_caps, lac_now())
        ON CONFLICT (name) DO UPDATE SET capabilities = excluded.capabilities,
                                         last_seen = excluded.last_seen;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_agent_seen(p_agent text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO lac_agents (name, last_seen) VALUES (lac_actor(p_agent), lac_now())
    ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_upsert_instance(p_instance text, p_agent text, p_host text, p_path text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    INSERT INTO lac_instances AS i (id, agent, host, path, last_seen)
    VALUES (p_instance, a, p_host, p_path, lac_now())
    ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, host = excluded.host,
        path = excluded.path, last_seen = excluded.last_seen
     WHERE NOT lac_team() OR i.agent = excluded.agent;  -- never another's instance
END
$$;

CREATE OR REPLACE FUNCTION lac_api_insert_task(p_title text, p_body text, p_lane text, p_priority integer,
                                    p_needs jsonb, p_agent text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    made bigint;
BEGIN
    INSERT INTO lac_tasks (title, body, lane, priority, needs, created_at, created_by)
    VALUES (p_title, p_body, p_lane, p_priority, p_needs, lac_now(), lac_actor(p_agent))
    RETURNING id INTO made;
    RETURN made;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_insert_dep(p_task bigint, p_depends_on bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    INSERT INTO lac_task_deps (task_id, depends_on) VALUES (p_task, p_depends_on)
    ON CONFLICT DO NOTHING;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_dep(p_task bigint, p_depends_on bigint) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_task_deps d WHERE d.task_id = p_task AND d.depends_on = p_depends_on
        RETURNING d.depends_on)
    SELECT gone.depends_on FROM gone;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_insert_task_path(p_task bigint, p_pattern text, p_mode text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    INSERT INTO lac_task_paths AS p (task_id, pattern, mode) VALUES (p_task, p_pattern, p_mode)
    ON CONFLICT (task_id, pattern) DO UPDATE SET mode = greatest(p.mode, excluded.mode);
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_task_path(p_task bigint, p_pattern text)
    RETURNS SETOF lac_task_paths
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_task_paths p WHERE p.task_id = p_task AND p.pattern = p_pattern
        RETURNING p.*)
    SELECT * FROM gone;
END
$$;

-- The claim: the same single guarded UPDATE (lac_claimable, the one rule)
-- and its `claimed` event.
CREATE OR REPLACE FUNCTION lac_api_claim(p_task bigint, p_agent text, p_instance text,
                              p_stale_after double precision) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH claimed AS (
        UPDATE lac_tasks AS t
           SET state = 'claimed', owner = a, claimed_at = lac_now(), heartbeat_at = lac_now(),
               stale_after = p_stale_after, attempts = t.attempts + 1, instance = p_instance
         WHERE t.id = p_task AND t.state = 'open'
           AND EXISTS (SELECT 1 FROM lac_claimable(t.id, a) AS ok WHERE ok)
        RETURNING t.*
    ), recorded AS (
        INSERT INTO lac_events (at, task_id, agent, kind, detail)
        SELECT lac_now(), c.id, c.owner, 'claimed', jsonb_build_object('attempt', c.attempts)
          FROM claimed c
    )
    SELECT * FROM claimed;
END
$$;

-- `claim --next` in one statement when the best candidate declares no paths.
CREATE OR REPLACE FUNCTION lac_api_claim_next_free(p_lane text, p_agent text, p_instance text,
                                        p_stale_after double precision) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH claimed AS (
        UPDATE lac_tasks AS u
           SET state = 'claimed', owner = a, claimed_at = lac_now(), heartbeat_at = lac_now(),
               stale_after = p_stale_after, attempts = u.attempts + 1, instance = p_instance
         WHERE u.state = 'open'
           AND u.id = (SELECT t.id FROM lac_tasks t
                        WHERE t.lane = p_lane AND t.state = 'open'
                          AND EXISTS (SELECT 1 FROM lac_claimable(t.id, a) AS ok WHERE ok)
                        ORDER BY t.priority DESC, t.created_at, t.id
                        LIMIT 1
                          FOR UPDATE SKIP LOCKED)
           AND NOT EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = u.id)
        RETURNING u.*
    ), recorded AS (
        INSERT INTO lac_events (at, task_id, agent, kind, detail)
        SELECT lac_now(), c.id, c.owner, 'claimed', jsonb_build_object('attempt', c.attempts)
          FROM claimed c
    )
    SELECT * FROM claimed;
END
$$;

-- The next candidate, row-locked (SKIP LOCKED) for the caller's transaction:
-- a row lock needs a write privilege, so it is taken here.
CREATE OR REPLACE FUNCTION lac_api_next_candidate(p_lane text, p_agent text, p_skip jsonb)
    RETURNS TABLE (id bigint, has_paths boolean)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY
    SELECT t.id, EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = t.id)
      FROM lac_tasks t
     WHERE t.lane = p_lane AND t.state = 'open'
       AND EXISTS (SELECT 1 FROM lac_claimable(t.id, a) AS ok WHERE ok)
       AND t.id NOT IN (SELECT v::bigint FROM jsonb_array_elements_text(p_skip) AS v)
     ORDER BY t.priority DESC, t.created_at, t.id
     LIMIT 1
       FOR UPDATE OF t SKIP LOCKED;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_insert_lock(p_pattern text, p_key text, p_mode text, p_agent text,
                                    p_task bigint, p_base_blob text, p_instance text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    k text := p_key;
BEGIN
    IF lac_team() THEN
        k := lac_index_key(p_pattern);  -- never the caller's
        IF p_task IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM lac_tasks t WHERE t.id = p_task AND t.state = 'claimed'
                   AND t.owner = a) THEN
            PERFORM lac_refuse(format('team mode: task #%s is not claimed by %s', p_task, a));
        END IF;
        PERFORM lac_require_free(a, p_instance, p_pattern, p_mode, NULL);
    END IF;
    RETURN QUERY
    INSERT INTO lac_locks (pattern, key, mode, agent, task_id, acquired_at, base_blob, instance)
    VALUES (p_pattern, k, p_mode, a, p_task, lac_now(), p_base_blob, p_instance)
    RETURNING *;
END
$$;

-- Every lock of one grant in one call (scale's batched grant): :p_locks is
-- [{"pattern", "key", "mode", "base_blob"}]. In team mode each is judged as
-- lac_api_insert_lock judges one: the key computed here, the task the
-- actor's, and no conflict with another's lock (lac_require_free).
CREATE OR REPLACE FUNCTION lac_api_insert_locks(p_locks jsonb, p_agent text, p_task bigint,
                                     p_instance text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    x record;
BEGIN
    IF lac_team() THEN
        IF p_task IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM lac_tasks t WHERE t.id = p_task AND t.state = 'claimed'
                   AND t.owner = a) THEN
            PERFORM lac_refuse(format('team mode: task #%s is not claimed by %s', p_task, a));
        END IF;
        FOR x IN SELECT * FROM jsonb_to_recordset(p_locks) AS r(pattern text, mode text) LOOP
            PERFORM lac_require_free(a, p_instance, x.pattern, x.mode, NULL);
        END LOOP;
    END IF;
    RETURN QUERY
    INSERT INTO lac_locks (pattern, key, mode, agent, task_id, acquired_at, base_blob, instance)
    SELECT r.pattern, CASE WHEN lac_team() THEN lac_index_key(r.pattern) ELSE r.key END,
           r.mode, a, p_task, lac_now(), r.base_blob, p_instance
      FROM jsonb_to_recordset(p_locks) AS r(pattern text, key text, mode text, base_blob text)
    RETURNING *;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_upgrade_lock(p_lock bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(NULL);
    held lac_locks;
BEGIN
    SELECT * INTO held FROM lac_locks l WHERE l.id = p_lock;
    IF lac_team() AND FOUND THEN
        IF held.agent <> a THEN
            PERFORM lac_refuse(format('team mode: lock %s is not %s''s', p_lock, a));
        END IF;
        PERFORM lac_require_free(a, held.instance, held.pattern, 'w', p_lock);
    END IF;
    UPDATE lac_locks SET mode = 'w' WHERE id = p_lock;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_task_locks(p_task bigint) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (DELETE FROM lac_locks l WHERE l.task_id = p_task RETURNING l.*)
    SELECT * FROM gone;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_task_lock(p_task bigint, p_pattern text) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks l WHERE l.task_id = p_task AND l.pattern = p_pattern
        RETURNING l.*)
    SELECT * FROM gone;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_agent_lock(p_agent text, p_instance text, p_pattern text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks l WHERE l.agent = a AND l.instance = p_instance
                                  AND l.pattern = p_pattern
        RETURNING l.*)
    SELECT * FROM gone;
END
$$;

-- Every agent's lock on exactly this pattern (`unlock --force`): in team
-- mode another agent's lock only for an admin.
CREATE OR REPLACE FUNCTION lac_api_delete_pattern_locks(p_pattern text) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF lac_team() AND NOT lac_has('admin') AND EXISTS (
            SELECT 1 FROM lac_locks l
             WHERE l.pattern = p_pattern AND l.agent <> session_user::text) THEN
        PERFORM lac_refuse(format(
            'team mode: only an admin removes another agent''s lock on %s', p_pattern));
    END IF;
    RETURN QUERY WITH gone AS (DELETE FROM lac_locks l WHERE l.pattern = p_pattern RETURNING l.*)
    SELECT * FROM gone;
END
$$;

-- Back to open. In team mode another agent's claim only for an admin
-- (`release --force`, audited by board.py's event in the admin's name).
CREATE OR REPLACE FUNCTION lac_api_release(p_task bigint, p_owner text) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF lac_team() AND p_owner IS DISTINCT FROM session_user::text AND NOT lac_has('admin') THEN
        PERFORM lac_refuse(format(
            'team mode: only an admin releases another agent''s claim (task #%s)', p_task));
    END IF;
    RETURN QUERY WITH freed AS (
        UPDATE lac_tasks t
           SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = p_owner
        RETURNING t.*)
    SELECT * FROM freed;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_park(p_task bigint, p_owner text) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_owner);
BEGIN
    RETURN QUERY WITH parked AS (
        UPDATE lac_tasks t
           SET state = 'parked', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a
        RETURNING t.*)
    SELECT * FROM parked;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_done(p_task bigint, p_agent text, p_instance text) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH finished AS (
        UPDATE lac_tasks t SET state = 'done', heartbeat_at = lac_now()
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a AND t.instance = p_instance
        RETURNING t.*)
    SELECT * FROM finished;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_heartbeat(p_agent text, p_instance text, p_ids jsonb)
    RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH beat AS (
        UPDATE lac_tasks t SET heartbeat_at = lac_now()
         WHERE t.owner = a AND t.instance = p_instance AND t.state = 'claimed'
           AND (p_ids IS NULL
                OR t.id IN (SELECT v::bigint FROM jsonb_array_elements_text(p_ids) AS v))
        RETURNING t.id)
    SELECT beat.id FROM beat;
END
$$;

-- Stale claims, row-locked for the sweep. Team mode: a keeper sees every
-- one; any other agent only its own.
CREATE OR REPLACE FUNCTION lac_api_stale_claims(p_default_stale double precision,
                                     p_at_least double precision)
    RETURNS TABLE (id bigint, lane text, owner text, heartbeat_at double precision,
                   attempts integer, silent_for double precision)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT t.id, t.lane, t.owner, t.heartbeat_at, t.attempts, lac_now() - t.heartbeat_at
      FROM lac_tasks t
     WHERE t.state = 'claimed'
       AND t.heartbeat_at + greatest(coalesce(t.stale_after, p_default_stale), p_at_least)
           < lac_now()
       AND lac_keeps(t.owner)
     ORDER BY t.heartbeat_at
       FOR UPDATE OF t SKIP LOCKED;
END
$$;

-- Back to the board, unless it heartbeat since the keeper looked; the
-- staleness is checked again here, against the claim's own stale-after.
CREATE OR REPLACE FUNCTION lac_api_expire(p_state text, p_task bigint, p_owner text,
                               p_heartbeat_at double precision) RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
BEGIN
    IF NOT lac_keeps(p_owner) THEN
        PERFORM lac_refuse(format(
            'team mode: only a keeper expires another agent''s claim (task #%s)', p_task));
    END IF;
    IF lac_team() AND p_state <> 'open' THEN  -- an expired claim goes back to the board
        PERFORM lac_refuse(format('team mode: an expired claim becomes open, not %s', p_state));
    END IF;
    RETURN QUERY WITH expired AS (
        UPDATE lac_tasks t
           SET state = p_state, owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = p_owner
           AND t.heartbeat_at = p_heartbeat_at
           AND t.heartbeat_at + coalesce(t.stale_after, lac_default_stale()) < lac_now()
        RETURNING t.id)
    SELECT expired.id FROM expired;
END
$$;

-- The silence after which a task-less lock is stale: the caller's period,
-- but in team mode never shorter than the board's stale-after (a keeper's
-- own period, even NULL or negative, does not make a live agent's lock stale).
CREATE OR REPLACE FUNCTION lac_lock_stale(p_stale double precision) RETURNS double precision
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN lac_team() THEN greatest(p_stale, lac_default_stale()) ELSE p_stale END
    $$;

-- Task-less locks of agents silent for p_stale, row-locked for the sweep
-- (team mode: a keeper's view, else only the session's own).
CREATE OR REPLACE FUNCTION lac_api_silent_agent_locks(p_stale double precision)
    RETURNS TABLE (id bigint, pattern text, agent text, silent_for double precision)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    stale double precision := lac_lock_stale(p_stale);
BEGIN
    RETURN QUERY
    SELECT l.id, l.pattern, l.agent,
           lac_now() - greatest(l.acquired_at, coalesce(a.last_seen, 0))
      FROM lac_locks l LEFT JOIN lac_agents a ON a.name = l.agent
     WHERE l.task_id IS NULL
       AND greatest(l.acquired_at, coalesce(a.last_seen, 0)) + stale < lac_now()
       AND lac_keeps(l.agent)
     ORDER BY l.agent, l.id
       FOR UPDATE OF l SKIP LOCKED;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_expire_lock(p_lock bigint, p_stale double precision)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    stale double precision := lac_lock_stale(p_stale);
BEGIN
    IF NOT lac_keeps((SELECT l.agent FROM lac_locks l WHERE l.id = p_lock)) THEN
        PERFORM lac_refuse('team mode: only a keeper expires another agent''s lock');
    END IF;
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks AS l
         WHERE l.id = p_lock AND l.task_id IS NULL
           AND NOT EXISTS (SELECT 1 FROM lac_agents a
                            WHERE a.name = l.agent AND a.last_seen + stale >= lac_now())
        RETURNING l.*)
    SELECT * FROM gone;
END
$$;

-- Settings: in team mode anyone records a holder (one keeper, one drainer
-- per lane); the rest is an admin's, and the team's own never through here.
CREATE OR REPLACE FUNCTION lac_api_set_setting(p_name text, p_value text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF lac_team() THEN
        IF p_name = 'team_mode' OR p_name LIKE 'team\_%' THEN
            PERFORM lac_refuse(format('team mode: %s is set by `git lac team`', p_name));
        ELSIF p_name NOT LIKE 'holder:%' AND NOT lac_has('admin') THEN
            PERFORM lac_refuse(format('team mode: only an admin sets %s', p_name));
        END IF;
    END IF;
    INSERT INTO lac_settings (name, value) VALUES (p_name, p_value)
    ON CONFLICT (name) DO UPDATE SET value = excluded.value;
END
$$;

-- The history is appended to, in the acting agent's name, never changed.
CREATE OR REPLACE FUNCTION lac_api_insert_event(p_task bigint, p_agent text, p_kind text, p_detail jsonb)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO lac_events (at, task_id, agent, kind, detail)
    VALUES (lac_now(), p_task, lac_actor(p_agent), p_kind, p_detail);
END
$$;

CREATE OR REPLACE FUNCTION lac_api_edit_task(p_task bigint, p_agent text, p_instance text, p_title text,
                                  p_body text, p_lane text, p_priority integer, p_needs jsonb)
    RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH edited AS (
        UPDATE lac_tasks t
           SET title = p_title, body = p_body, lane = p_lane, priority = p_priority,
               needs = p_needs
         WHERE t.id = p_task
           AND (t.state = 'open'
                OR (t.state = 'claimed' AND t.owner = a AND t.instance = p_instance))
        RETURNING t.id)
    SELECT edited.id FROM edited;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_cancel(p_task bigint, p_agent text, p_instance text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH cancelled AS (
        UPDATE lac_tasks t
           SET state = 'cancelled', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL
         WHERE t.id = p_task
           AND (t.state IN ('open', 'parked')
                OR (t.state = 'claimed' AND t.owner = a AND t.instance = p_instance))
        RETURNING t.*)
    SELECT * FROM cancelled;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_reopen(p_task bigint) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
BEGIN
    RETURN QUERY WITH reopened AS (
        UPDATE lac_tasks t
           SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL, attempts = 0
         WHERE t.id = p_task AND t.state IN ('done', 'cancelled', 'parked')
        RETURNING t.*)
    SELECT * FROM reopened;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_take_over(p_task bigint, p_agent text, p_instance text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH moved AS (
        UPDATE lac_tasks t SET instance = p_instance, heartbeat_at = lac_now()
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a
        RETURNING t.*)
    SELECT * FROM moved;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_take_over_locks(p_task bigint, p_agent text, p_instance text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE lac_locks SET instance = p_instance
     WHERE task_id = p_task AND agent = lac_actor(p_agent);
END
$$;
