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
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN coalesce((SELECT s.value = 'on' FROM lac_settings s WHERE s.name = 'team_mode'), false);
END
$$;

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
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN coalesce((SELECT pg_has_role(session_user, s.value, 'MEMBER')
                       FROM lac_settings s
                      WHERE s.name = 'team_role:' || p_kind
                        AND EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = s.value)), false);
END
$$;

CREATE OR REPLACE FUNCTION lac_refuse(p_message text) RETURNS void
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = p_message; END $$;

-- A task claimed by someone is changed (paths, dependencies, locks) only by
-- its holder, or an admin; in plain mode by anyone, as before.
CREATE OR REPLACE FUNCTION lac_may_change(p_task bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN NOT lac_team() OR lac_has('admin')
        OR NOT EXISTS (SELECT 1 FROM lac_tasks t
                        WHERE t.id = p_task AND t.state = 'claimed'
                          AND t.owner IS DISTINCT FROM session_user::text);
END
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
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN coalesce((SELECT s.value::double precision FROM lac_settings s
                    WHERE s.name = 'stale_after'), 1800.0);
END
$$;

-- The board's case rule (0010: `git lac init` records 'case' = fold or exact):
-- does a grant fold case when it compares patterns? A board without one
-- compares exactly, as before.
CREATE OR REPLACE FUNCTION lac_folds() RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN coalesce((SELECT s.value = 'fold' FROM lac_settings s WHERE s.name = 'case'), false);
END
$$;

-- Team mode's conflict check, the database's own (rules.conflict): refuses
-- (LAC01) when any of p_locks ([{"pattern", "mode"}]) meets another holder's
-- lock, at least one of the two a write, their patterns overlapping. Each
-- wanted pattern is compared (lac_overlap) only with the locks whose literal
-- head nests with its own, found through lac_locks_head (0013): a grant of N
-- paths or globs beside M held costs N index lookups and the pairs that may
-- overlap, not N x M comparisons. p_except: a lock to leave out (an upgrade's
-- own). The first conflict in p_locks' order is the one reported. A wanted
-- lock's "built_on" ([{"task", "tip"}], stacking, as
-- Grants._conflicts): a lock of a landing claim at one of those tips does
-- not refuse it. The database cannot see that the caller's branch holds
-- that tip; the guards check it at the commit and the push.
CREATE OR REPLACE FUNCTION lac_require_free_all(p_agent text, p_instance text, p_locks jsonb,
                                                p_except bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    held record;
    folds boolean := lac_folds();
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('lac_locks:' || current_schema()));
    -- Each wanted pattern's head and the heads above it, computed once.
    WITH w AS MATERIALIZED (
        SELECT r.pattern, r.mode, r.n, r.built_on, h.head, lac_head_prefixes(h.head) AS above,
               lac_head_end(h.head) AS below
          FROM ROWS FROM (jsonb_to_recordset(p_locks)
                         AS (pattern text, mode text, built_on jsonb))
               WITH ORDINALITY AS r(pattern, mode, built_on, n)
         CROSS JOIN LATERAL (SELECT lac_head(r.pattern) AS head) AS h
    )
    SELECT w.pattern AS wanted, w.mode AS wanted_mode, l.pattern, l.agent, l.task_id, l.mode
      INTO held
      FROM w CROSS JOIN LATERAL (
            SELECT h.* FROM lac_locks h
             WHERE lac_head(h.pattern) COLLATE "C" = ANY (w.above)
            UNION ALL
            SELECT h.* FROM lac_locks h
             WHERE lac_head(h.pattern) COLLATE "C" > w.head
               AND lac_head(h.pattern) COLLATE "C" < w.below
            UNION ALL  -- no end (an empty head): every head below it
            SELECT h.* FROM lac_locks h
             WHERE w.below IS NULL AND lac_head(h.pattern) COLLATE "C" > w.head) AS l
     WHERE l.id IS DISTINCT FROM p_except
       AND NOT (l.agent = p_agent AND l.instance IS NOT DISTINCT FROM p_instance)
       AND (l.mode = 'w' OR w.mode = 'w')
       AND lac_overlap(l.pattern, w.pattern, folds)
       AND NOT (w.built_on IS NOT NULL AND EXISTS (
            SELECT 1 FROM lac_tasks t
             WHERE t.id = l.task_id AND t.state = 'claimed' AND t.landing_since IS NOT NULL
               AND t.tip IS NOT NULL  -- a null names no commit: never waived
               AND w.built_on @> jsonb_build_array(jsonb_build_object('task', t.id, 'tip', t.tip))))
     ORDER BY w.n, l.id
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'LAC01',
            MESSAGE = format('%s holds %s, which overlaps %s', held.agent, held.pattern, held.wanted),
            DETAIL = jsonb_build_object('path', held.wanted, 'wanted', held.wanted_mode,
                                        'holder', held.agent, 'task', held.task_id,
                                        'pattern', held.pattern, 'mode', held.mode)::text;
    END IF;
END
$$;

-- One lock's check: lac_require_free_all of one.
CREATE OR REPLACE FUNCTION lac_require_free(p_agent text, p_instance text, p_pattern text, p_mode text,
                                 p_except bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_free_all(p_agent, p_instance,
                                 jsonb_build_array(jsonb_build_object('pattern', p_pattern,
                                                                      'mode', p_mode)),
                                 p_except);
END
$$;

-- --- the write API (each refuses a snapshot transaction, validates
-- what it is given, records its change for the history) -------------------

-- The silence after which a task-less lock is stale: the caller's period,
-- but in team mode never shorter than the board's stale-after (a keeper's
-- own period, even NULL or negative, does not make a live agent's lock stale).
CREATE OR REPLACE FUNCTION lac_lock_stale(p_stale double precision) RETURNS double precision
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN lac_team() THEN greatest(p_stale, lac_default_stale()) ELSE p_stale END
    $$;

CREATE OR REPLACE FUNCTION lac_api_upsert_agent(p_agent text, p_caps jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
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
    PERFORM lac_require_current();
    INSERT INTO lac_agents (name, last_seen) VALUES (lac_actor(p_agent), lac_now())
    ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_upsert_instance(p_instance text, p_agent text, p_host text,
                                                   p_path text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    IF p_instance IS NULL OR length(p_instance) > 200 OR NOT lac_safe(p_instance)
       OR length(coalesce(p_host, '')) > 1000 OR length(coalesce(p_path, '')) > 4096 THEN
        PERFORM lac_invalid('an instance is an id of at most 200 safe characters, '
                            'a host of at most 1000 and a path of at most 4096');
    END IF;
    INSERT INTO lac_instances AS i (id, agent, host, path, last_seen)
    VALUES (p_instance, a, p_host, p_path, lac_now())
    ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, host = excluded.host,
        path = excluded.path, last_seen = excluded.last_seen
     WHERE NOT lac_team() OR i.agent = excluded.agent;  -- never another's instance
END
$$;

CREATE OR REPLACE FUNCTION lac_api_insert_task(p_title text, p_body text, p_lane text,
                                               p_priority integer, p_needs jsonb, p_agent text)
    RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    made bigint;
BEGIN
    PERFORM lac_require_current();
    INSERT INTO lac_tasks (title, body, lane, priority, needs, created_at, created_by)
    VALUES (p_title, p_body, p_lane, p_priority, p_needs, lac_now(), a)
    RETURNING id INTO made;
    PERFORM lac_changed('created', made, a,
                        jsonb_build_object('title', p_title, 'lane', p_lane,
                                           'priority', p_priority, 'needs', p_needs,
                                           'after', '[]'::jsonb, 'paths', '[]'::jsonb));
    RETURN made;
END
$$;

-- A dependency is added to an open task, or to our own claim where it is
-- held (`git lac task after`); never to another agent's claim. Without
-- p_instance (a caller that does not say where it runs) our own claim from
-- anywhere.
CREATE OR REPLACE FUNCTION lac_api_insert_dep(p_task bigint, p_depends_on bigint,
                                              p_agent text DEFAULT NULL,
                                              p_instance text DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_who(p_agent);
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_shape(p_task, true);
    IF EXISTS (SELECT 1 FROM lac_tasks t
                WHERE t.id = p_task AND t.state = 'claimed'
                  AND (t.owner IS DISTINCT FROM a
                       OR (p_instance IS NOT NULL AND t.instance IS DISTINCT FROM p_instance))) THEN
        PERFORM lac_refuse(format('task #%s is claimed by %s: only its owner, where it is '
                                  'claimed, adds a dependency to it', p_task,
                                  (SELECT t.owner FROM lac_tasks t WHERE t.id = p_task)));
    END IF;
    IF p_task = p_depends_on OR EXISTS (
            WITH RECURSIVE reach(id) AS (
                SELECT p_depends_on
                UNION
                SELECT d.depends_on FROM lac_task_deps d JOIN reach r ON d.task_id = r.id)
            SELECT 1 FROM reach WHERE reach.id = p_task) THEN
        PERFORM lac_invalid(format('task #%s cannot wait on #%s: that would be a dependency '
                                   'cycle', p_task, p_depends_on));
    END IF;
    INSERT INTO lac_task_deps (task_id, depends_on) VALUES (p_task, p_depends_on)
    ON CONFLICT DO NOTHING;
    PERFORM lac_changed(CASE WHEN lac_created_now(p_task) THEN 'created' ELSE 'depends' END,
                        p_task, NULL, jsonb_build_object('after', jsonb_build_array(p_depends_on)));
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_dep(p_task bigint, p_depends_on bigint)
    RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    gone bigint;
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_shape(p_task, false);
    DELETE FROM lac_task_deps d WHERE d.task_id = p_task AND d.depends_on = p_depends_on
    RETURNING d.depends_on INTO gone;
    IF FOUND THEN
        PERFORM lac_changed('undepends', p_task, NULL,
                            jsonb_build_object('changes', jsonb_build_object(
                                'dropped_after', jsonb_build_array(gone))));
        RETURN NEXT gone;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_insert_task_path(p_task bigint, p_pattern text, p_mode text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    was text;
    now_mode text;
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_shape(p_task, true);
    SELECT p.mode INTO was FROM lac_task_paths p WHERE p.task_id = p_task AND p.pattern = p_pattern;
    INSERT INTO lac_task_paths AS p (task_id, pattern, mode) VALUES (p_task, p_pattern, p_mode)
    ON CONFLICT (task_id, pattern) DO UPDATE SET mode = greatest(p.mode, excluded.mode)
    RETURNING p.mode INTO now_mode;
    IF lac_created_now(p_task) THEN
        PERFORM lac_changed('created', p_task, NULL, jsonb_build_object(
            'paths', jsonb_build_array(jsonb_build_array(p_pattern, now_mode))));
    ELSIF was IS DISTINCT FROM now_mode THEN
        PERFORM lac_changed('paths_added', p_task, NULL, jsonb_build_object(
            'changes', jsonb_build_object('added_paths',
                jsonb_build_array(jsonb_build_array(p_pattern, now_mode)))));
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_task_path(p_task bigint, p_pattern text)
    RETURNS SETOF lac_task_paths
    LANGUAGE plpgsql
    AS $$
DECLARE
    gone lac_task_paths;
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_shape(p_task, false);
    DELETE FROM lac_task_paths p WHERE p.task_id = p_task AND p.pattern = p_pattern
    RETURNING p.* INTO gone;
    IF FOUND THEN
        PERFORM lac_changed('paths_dropped', p_task, NULL, jsonb_build_object(
            'changes', jsonb_build_object('dropped_paths', jsonb_build_array(p_pattern))));
        RETURN NEXT gone;
    END IF;
END
$$;

-- The claim: the same single guarded UPDATE (lac_claimable, the one rule)
-- and its `claimed` event, written here.
CREATE OR REPLACE FUNCTION lac_api_claim(p_task bigint, p_agent text, p_instance text,
                                         p_stale_after double precision) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_finite(p_stale_after, 'stale-after', false);
    RETURN QUERY WITH claimed AS (
        UPDATE lac_tasks AS t
           SET state = 'claimed', owner = a, claimed_at = lac_now(), heartbeat_at = lac_now(),
               stale_after = p_stale_after, attempts = t.attempts + 1, instance = p_instance,
               branch = NULL, tip = NULL, landing_since = NULL, returned_at = NULL, returned = NULL,
               max_age = NULL
         WHERE t.id = p_task AND t.state = 'open'
           AND EXISTS (SELECT 1 FROM lac_claimable(t.id, a) AS ok WHERE ok)
        RETURNING t.*
    ), recorded AS (
        INSERT INTO lac_events (at, task_id, agent, kind, detail)
        SELECT lac_clock(), c.id, c.owner, 'claimed', jsonb_build_object('attempt', c.attempts)
          FROM claimed c
    )
    SELECT * FROM claimed;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_claim_next_free(p_lane text, p_agent text, p_instance text,
                                                   p_stale_after double precision)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_finite(p_stale_after, 'stale-after', false);
    RETURN QUERY WITH claimed AS (
        UPDATE lac_tasks AS u
           SET state = 'claimed', owner = a, claimed_at = lac_now(), heartbeat_at = lac_now(),
               stale_after = p_stale_after, attempts = u.attempts + 1, instance = p_instance,
               branch = NULL, tip = NULL, landing_since = NULL, returned_at = NULL, returned = NULL,
               max_age = NULL
         WHERE u.state = 'open'
           AND u.id = (SELECT t.id FROM lac_tasks t
                        WHERE t.lane = p_lane AND t.state = 'open'
                          AND EXISTS (SELECT 1 FROM lac_claimable(t.id, a) AS ok WHERE ok)
                        ORDER BY t.priority DESC, t.created_at, t.id
                        LIMIT 1
                          FOR UPDATE SKIP LOCKED)
           AND NOT EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = u.id)
           -- a task that needs resources is granted them on the general path
           AND NOT EXISTS (SELECT 1 FROM lac_task_resources r WHERE r.task_id = u.id)
        RETURNING u.*
    ), recorded AS (
        INSERT INTO lac_events (at, task_id, agent, kind, detail)
        SELECT lac_clock(), c.id, c.owner, 'claimed', jsonb_build_object('attempt', c.attempts)
          FROM claimed c
    )
    SELECT * FROM claimed;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_next_candidate(p_lane text, p_agent text, p_skip jsonb)
    RETURNS TABLE (id bigint, has_paths boolean)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    IF jsonb_typeof(p_skip) IS DISTINCT FROM 'array' OR jsonb_array_length(p_skip) > 100000 THEN
        PERFORM lac_invalid('the tasks to skip are a list of task ids');
    END IF;
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

CREATE OR REPLACE FUNCTION lac_api_insert_lock(p_pattern text, p_key text, p_mode text,
                                               p_agent text, p_task bigint, p_base_blob text,
                                               p_instance text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    k text := p_key;
    made lac_locks;
BEGIN
    PERFORM lac_require_current();
    IF lac_team() THEN
        k := lac_index_key(p_pattern);  -- never the caller's
        IF p_task IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM lac_tasks t WHERE t.id = p_task AND t.state = 'claimed'
                   AND t.owner = a) THEN
            PERFORM lac_refuse(format('team mode: task #%s is not claimed by %s', p_task, a));
        END IF;
        PERFORM lac_require_free(a, p_instance, p_pattern, p_mode, NULL);
    END IF;
    INSERT INTO lac_locks (pattern, key, mode, agent, task_id, acquired_at, base_blob, instance)
    VALUES (p_pattern, k, p_mode, a, p_task, lac_now(), p_base_blob, p_instance)
    RETURNING * INTO made;
    PERFORM lac_changed('locked', p_task, a, jsonb_build_object(
        'paths', jsonb_build_array(jsonb_build_array(made.pattern, made.mode))));
    RETURN NEXT made;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_insert_locks(p_locks jsonb, p_agent text, p_task bigint,
                                                p_instance text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    IF jsonb_typeof(p_locks) IS DISTINCT FROM 'array' THEN
        PERFORM lac_invalid('the locks to insert are a list of {"pattern", "mode", ...}');
    END IF;
    IF lac_team() THEN
        IF p_task IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM lac_tasks t WHERE t.id = p_task AND t.state = 'claimed'
                   AND t.owner = a) THEN
            PERFORM lac_refuse(format('team mode: task #%s is not claimed by %s', p_task, a));
        END IF;
        -- A landing line is built on under a claim only (Board.lock: the
        -- guards pass a change beside it only under one): a task-less lock
        -- names no line, whatever it says.
        PERFORM lac_require_free_all(a, p_instance,
            CASE WHEN p_task IS NULL
                 THEN coalesce((SELECT jsonb_agg(e - 'built_on' ORDER BY n)
                                  FROM jsonb_array_elements(p_locks) WITH ORDINALITY AS x(e, n)),
                               '[]'::jsonb)
                 ELSE p_locks END,
            NULL);
    END IF;
    RETURN QUERY WITH made AS (
        INSERT INTO lac_locks (pattern, key, mode, agent, task_id, acquired_at, base_blob,
                               instance)
        SELECT r.pattern, CASE WHEN lac_team() THEN lac_index_key(r.pattern) ELSE r.key END,
               r.mode, a, p_task, lac_now(), r.base_blob, p_instance
          FROM ROWS FROM (jsonb_to_recordset(p_locks)
                          AS (pattern text, key text, mode text, base_blob text))
               WITH ORDINALITY AS r(pattern, key, mode, base_blob, n)
         ORDER BY r.n
        RETURNING *
    ), recorded AS (
        INSERT INTO lac_changes (kind, task_id, agent, facts)
        SELECT 'locked', p_task, lac_who(a),
               jsonb_build_object('paths', jsonb_agg(jsonb_build_array(m.pattern, m.mode)
                                                     ORDER BY m.id))
          FROM made m HAVING count(*) > 0
    )
    SELECT * FROM made;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_upgrade_lock(p_lock bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(NULL);
    held lac_locks;
BEGIN
    PERFORM lac_require_current();
    SELECT * INTO held FROM lac_locks l WHERE l.id = p_lock;
    IF lac_team() AND FOUND THEN
        IF held.agent <> a THEN
            PERFORM lac_refuse(format('team mode: lock %s is not %s''s', p_lock, a));
        END IF;
        PERFORM lac_require_free(a, held.instance, held.pattern, 'w', p_lock);
    END IF;
    UPDATE lac_locks SET mode = 'w' WHERE id = p_lock AND mode <> 'w';
    IF FOUND THEN
        PERFORM lac_changed('locked', held.task_id, held.agent, jsonb_build_object(
            'paths', jsonb_build_array(jsonb_build_array(held.pattern, 'w'))));
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_task_locks(p_task bigint) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (DELETE FROM lac_locks l WHERE l.task_id = p_task RETURNING l.*),
    recorded AS (
        SELECT lac_record_unlocked(jsonb_agg(g.pattern ORDER BY g.id), p_task) FROM gone g
    )
    SELECT g.* FROM gone g, recorded;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_task_lock(p_task bigint, p_pattern text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks l WHERE l.task_id = p_task AND l.pattern = p_pattern
        RETURNING l.*),
    recorded AS (
        SELECT lac_record_unlocked(jsonb_agg(g.pattern ORDER BY g.id), p_task) FROM gone g
    )
    SELECT g.* FROM gone g, recorded;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_delete_agent_lock(p_agent text, p_instance text,
                                                     p_pattern text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks l WHERE l.agent = a AND l.instance = p_instance
                                  AND l.pattern = p_pattern
        RETURNING l.*
    ), recorded AS (
        INSERT INTO lac_changes (kind, task_id, agent, facts)
        SELECT 'unlocked', g.task_id, lac_who(a),
               jsonb_build_object('paths', jsonb_agg(g.pattern ORDER BY g.id))
          FROM gone g GROUP BY g.task_id
    )
    SELECT * FROM gone;
END
$$;

-- Every agent's lock on exactly this pattern (`unlock --force`): in team
-- mode another agent's lock only for an admin.
CREATE OR REPLACE FUNCTION lac_api_delete_pattern_locks(p_pattern text) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_current();
    IF lac_team() AND NOT lac_has('admin') AND EXISTS (
            SELECT 1 FROM lac_locks l
             WHERE l.pattern = p_pattern AND l.agent <> session_user::text) THEN
        PERFORM lac_refuse(format(
            'team mode: only an admin removes another agent''s lock on %s', p_pattern));
    END IF;
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks l WHERE l.pattern = p_pattern RETURNING l.*
    ), recorded AS (
        INSERT INTO lac_changes (kind, task_id, agent, facts)
        SELECT 'force_unlocked', g.task_id, lac_who(NULL),
               jsonb_build_object('locks', jsonb_agg(jsonb_build_array(g.pattern, g.mode, g.agent)
                                                     ORDER BY g.id))
          FROM gone g GROUP BY g.task_id
    )
    SELECT * FROM gone;
END
$$;

-- Back to open, with the claim's locks freed. In team mode another agent's
-- claim only for an admin (`release --force`), recorded as force_released.
CREATE OR REPLACE FUNCTION lac_api_release(p_task bigint, p_owner text, p_agent text DEFAULT NULL)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_who(p_agent);
    freed lac_tasks;
BEGIN
    PERFORM lac_require_current();
    IF lac_team() THEN
        PERFORM lac_actor(p_agent);  -- refuses a name that is not the session's
    END IF;
    IF lac_team() AND p_owner IS DISTINCT FROM session_user::text AND NOT lac_has('admin') THEN
        PERFORM lac_refuse(format(
            'team mode: only an admin releases another agent''s claim (task #%s)', p_task));
    END IF;
    UPDATE lac_tasks t
       SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
           stale_after = NULL
     WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = p_owner
    RETURNING t.* INTO freed;
    IF FOUND THEN
        IF a = p_owner THEN
            PERFORM lac_changed('released', p_task, a,
                                jsonb_build_object('locks', lac_free_task_locks(p_task)));
        ELSE
            PERFORM lac_changed('force_released', p_task, a,
                                jsonb_build_object('previous_owner', p_owner,
                                                   'locks', lac_free_task_locks(p_task)));
        END IF;
        RETURN NEXT freed;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_park(p_task bigint, p_owner text) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_owner);
    parked lac_tasks;
BEGIN
    PERFORM lac_require_current();
    UPDATE lac_tasks t
       SET state = 'parked', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
           stale_after = NULL
     WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a
    RETURNING t.* INTO parked;
    IF FOUND THEN
        PERFORM lac_changed('parked', p_task, a,
                            jsonb_build_object('attempts', parked.attempts,
                                               'locks', lac_free_task_locks(p_task)));
        RETURN NEXT parked;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_done(p_task bigint, p_agent text, p_instance text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    finished lac_tasks;
BEGIN
    PERFORM lac_require_current();
    UPDATE lac_tasks t SET state = 'done', heartbeat_at = lac_now()
     WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a AND t.instance = p_instance
    RETURNING t.* INTO finished;
    IF FOUND THEN
        PERFORM lac_changed('done', p_task, a,
                            jsonb_build_object('locks', lac_free_task_locks(p_task)));
        RETURN NEXT finished;
    END IF;
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
    PERFORM lac_require_current();
    IF p_ids IS NOT NULL AND jsonb_typeof(p_ids) <> 'array' THEN
        PERFORM lac_invalid('the tasks to heartbeat are a list of task ids');
    END IF;
    RETURN QUERY WITH beat AS (
        UPDATE lac_tasks t SET heartbeat_at = lac_now()
         WHERE t.owner = a AND t.instance = p_instance AND t.state = 'claimed'
           AND (p_ids IS NULL
                OR t.id IN (SELECT v::bigint FROM jsonb_array_elements_text(p_ids) AS v))
        RETURNING t.id)
    SELECT beat.id FROM beat;
END
$$;

-- `claim --max-age` (0018): our own claim here lives at most p_max_age
-- seconds from claimed_at; run in the transaction that claimed it.
CREATE OR REPLACE FUNCTION lac_api_cap_claim(p_task bigint, p_agent text, p_instance text,
                                             p_max_age double precision)
    RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_finite(p_max_age, 'max-age', false);
    RETURN QUERY WITH capped AS (
        UPDATE lac_tasks t SET max_age = p_max_age
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a
           AND t.instance = p_instance
        RETURNING t.id)
    SELECT capped.id FROM capped;
END
$$;

-- Claims silent past their stale-after, and claims in work past their
-- max-age (0018, ``aged``: heartbeats or not), with what the keeper records.
CREATE OR REPLACE FUNCTION lac_api_stale_claims(p_default_stale double precision,
                                                p_at_least double precision)
    RETURNS TABLE (id bigint, lane text, owner text, instance text,
                   heartbeat_at double precision, attempts integer,
                   stale_after double precision, max_age double precision,
                   silent_for double precision, age double precision, aged boolean)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_finite(p_default_stale, 'stale-after', false);
    PERFORM lac_require_finite(p_at_least, 'stale-after', true);
    RETURN QUERY
    SELECT t.id, t.lane, t.owner, t.instance, t.heartbeat_at, t.attempts, t.stale_after,
           t.max_age, lac_now() - t.heartbeat_at, lac_now() - t.claimed_at,
           coalesce(t.max_age IS NOT NULL AND t.landing_since IS NULL
                    AND t.claimed_at + t.max_age < lac_now(), false)
      FROM lac_tasks t
     WHERE t.state = 'claimed'
       AND (t.heartbeat_at + greatest(coalesce(t.stale_after, p_default_stale), p_at_least)
            < lac_now()
            OR (t.max_age IS NOT NULL AND t.landing_since IS NULL
                AND t.claimed_at + t.max_age < lac_now()))
       AND lac_keeps(t.owner)
     ORDER BY t.heartbeat_at
       FOR UPDATE OF t SKIP LOCKED;
END
$$;

-- Back to the board with its locks, unless it heartbeat since the keeper
-- looked; the staleness is checked again here, against the claim's own.
-- It returns the locks it freed with the task's id.
CREATE OR REPLACE FUNCTION lac_api_expire(p_state text, p_task bigint, p_owner text,
                               p_heartbeat_at double precision)
    RETURNS TABLE (id bigint, locks jsonb)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    was lac_tasks;
    freed jsonb;
BEGIN
    PERFORM lac_require_current();
    IF NOT lac_keeps(p_owner) THEN
        PERFORM lac_refuse(format(
            'team mode: only a keeper expires another agent''s claim (task #%s)', p_task));
    END IF;
    IF p_state IS DISTINCT FROM 'open' THEN  -- an expired claim goes back to the board
        PERFORM lac_refuse(format('an expired claim becomes open, not %s', p_state));
    END IF;
    SELECT * INTO was FROM lac_tasks t WHERE t.id = p_task;
    -- Stale (silent past its own stale-after, and not heartbeat since the
    -- keeper looked), or in work past its max-age (0018), heartbeats or not.
    UPDATE lac_tasks t
       SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
           stale_after = NULL, max_age = NULL
     WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = p_owner
       AND ((t.heartbeat_at = p_heartbeat_at
             AND t.heartbeat_at + coalesce(t.stale_after, lac_default_stale()) < lac_now())
            OR (t.max_age IS NOT NULL AND t.landing_since IS NULL
                AND t.claimed_at + t.max_age < lac_now()));
    IF FOUND THEN
        freed := lac_free_task_locks(p_task);
        PERFORM lac_changed('expired', p_task, NULL, jsonb_build_object(
            'previous_owner', p_owner,
            'silent_for', round((lac_now() - was.heartbeat_at)::numeric, 3),
            'attempts', was.attempts,
            'locks', freed));
        RETURN QUERY SELECT p_task, freed;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_silent_agent_locks(p_stale double precision)
    RETURNS TABLE (id bigint, pattern text, agent text, silent_for double precision)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    stale double precision;
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_finite(p_stale, 'stale-after', false);
    stale := lac_lock_stale(p_stale);
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
    stale double precision;
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_finite(p_stale, 'stale-after', false);
    stale := lac_lock_stale(p_stale);
    IF NOT lac_keeps((SELECT l.agent FROM lac_locks l WHERE l.id = p_lock)) THEN
        PERFORM lac_refuse('team mode: only a keeper expires another agent''s lock');
    END IF;
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks AS l
         WHERE l.id = p_lock AND l.task_id IS NULL
           AND NOT EXISTS (SELECT 1 FROM lac_agents a
                            WHERE a.name = l.agent AND a.last_seen + stale >= lac_now())
        RETURNING l.*
    ), recorded AS (
        INSERT INTO lac_changes (kind, task_id, agent, facts)
        SELECT 'locks_expired', NULL, lac_who(NULL),
               jsonb_build_object('previous_owner', g.agent, 'locks', jsonb_build_array(g.pattern))
          FROM gone g
    )
    SELECT * FROM gone;
END
$$;

-- Settings. Team mode: team_* only through `git lac team`; a holder:NAME
-- (who runs the keeper, a lane's drainer) only by a session whose role holds
-- that advisory lock right now, and in its own name; the rest an admin's.
-- Every setting but a holder is recorded as an event.
CREATE OR REPLACE FUNCTION lac_api_set_setting(p_name text, p_value text) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    k bigint;
BEGIN
    PERFORM lac_require_current();
    IF p_name IS NULL OR p_value IS NULL OR length(p_value) > 1000 OR NOT lac_safe(p_value) THEN
        PERFORM lac_invalid('a setting is a name and a value of at most 1000 safe characters');
    END IF;
    IF p_name IN ('stale_after', 'landing_period') AND NOT lac_valid_duration_text(p_value) THEN
        PERFORM lac_invalid(format('%s %s is not a duration: more than 0 and at '
                                   'most 10 years', p_name, p_value));
    END IF;
    IF lac_team() THEN
        IF p_name = 'team_mode' OR p_name LIKE 'team\_%' THEN
            PERFORM lac_refuse(format('team mode: %s is set by `git lac team`', p_name));
        ELSIF p_name LIKE 'holder:%' THEN
            k := hashtext(substr(p_name, 8) || ':' || current_schema());
            IF NOT EXISTS (
                    SELECT 1 FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
                     WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                       AND l.database = (SELECT oid FROM pg_database
                                          WHERE datname = current_database())
                       AND l.classid = ((k >> 32) & 4294967295)::oid
                       AND l.objid = (k & 4294967295)::oid
                       AND s.usename = session_user) THEN
                PERFORM lac_refuse(format('team mode: %s is recorded only by its holder, and %s '
                                          'does not hold it', p_name, session_user));
            END IF;
            IF p_value NOT LIKE session_user::text || ' %' AND p_value <> session_user::text THEN
                PERFORM lac_refuse(format('team mode: %s names its holder, %s', p_name,
                                          session_user));
            END IF;
        ELSIF NOT lac_has('admin') THEN
            PERFORM lac_refuse(format('team mode: only an admin sets %s', p_name));
        END IF;
    END IF;
    INSERT INTO lac_settings (name, value) VALUES (p_name, p_value)
    ON CONFLICT (name) DO UPDATE SET value = excluded.value;
    IF p_name NOT LIKE 'holder:%' THEN
        PERFORM lac_changed('setting', NULL, NULL,
                            jsonb_build_object('name', p_name, 'value', p_value));
    END IF;
END
$$;

-- The caller's account of a change it made in this transaction: its reason,
-- where it ran. It stands only with a change of a matching kind made by the
-- same agent to the same task in the same transaction (checked at commit,
-- 0007's lac_trg_settle), so no event can be written for something that did
-- not happen. `reconciled` (a merge done in git, which the board does not
-- see) is the one kind an agent writes on its own word, in its own name.
CREATE OR REPLACE FUNCTION lac_api_insert_event(p_task bigint, p_agent text, p_kind text,
                                                p_detail jsonb)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_current();
    IF p_kind IS NULL OR NOT lac_valid_name(p_kind) OR p_kind = 'claimed' THEN
        PERFORM lac_refuse(format('the board writes %s events itself', coalesce(p_kind, 'null')));
    END IF;
    IF octet_length(coalesce(p_detail, '{}')::text) > 100000 THEN
        PERFORM lac_invalid('an event''s detail is at most 100000 bytes');
    END IF;
    INSERT INTO lac_events (at, task_id, agent, kind, detail, unsettled)
    VALUES (lac_clock(), p_task, lac_actor(p_agent), p_kind, coalesce(p_detail, '{}'), true);
END
$$;

CREATE OR REPLACE FUNCTION lac_api_edit_task(p_task bigint, p_agent text, p_instance text,
                                             p_title text, p_body text, p_lane text,
                                             p_priority integer, p_needs jsonb)
    RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
    was lac_tasks;
    changes jsonb := '{}';
BEGIN
    PERFORM lac_require_current();
    SELECT * INTO was FROM lac_tasks t WHERE t.id = p_task;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF was.needs IS DISTINCT FROM p_needs THEN
        PERFORM lac_require_shape(p_task, false);
        IF lac_team() AND NOT lac_has('admin') AND EXISTS (
                SELECT 1 FROM jsonb_array_elements_text(was.needs) AS n(cap)
                 WHERE NOT p_needs ? n.cap
                   AND NOT coalesce((SELECT ag.capabilities ? n.cap FROM lac_agents ag
                                      WHERE ag.name = a), false)) THEN
            PERFORM lac_refuse(format('team mode: only an admin drops a need %s lacks from '
                                      'task #%s', a, p_task));
        END IF;
    END IF;
    UPDATE lac_tasks t
       SET title = p_title, body = p_body, lane = p_lane, priority = p_priority,
           needs = p_needs
     WHERE t.id = p_task
       AND (t.state = 'open'
            OR (t.state = 'claimed' AND t.owner = a AND t.instance = p_instance));
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF was.title IS DISTINCT FROM p_title THEN
        changes := changes || jsonb_build_object('title', jsonb_build_array(was.title, p_title));
    END IF;
    IF was.body IS DISTINCT FROM p_body THEN
        changes := changes || jsonb_build_object('body', jsonb_build_object(
            'before_chars', length(was.body), 'after_chars', length(p_body)));
    END IF;
    IF was.lane IS DISTINCT FROM p_lane THEN
        changes := changes || jsonb_build_object('lane', jsonb_build_array(was.lane, p_lane));
    END IF;
    IF was.priority IS DISTINCT FROM p_priority THEN
        changes := changes || jsonb_build_object('priority',
                                                 jsonb_build_array(was.priority, p_priority));
    END IF;
    IF was.needs IS DISTINCT FROM p_needs THEN
        changes := changes || jsonb_build_object('needs', jsonb_build_array(was.needs, p_needs));
    END IF;
    IF changes <> '{}' THEN
        PERFORM lac_changed('edited', p_task, a, jsonb_build_object('changes', changes));
    END IF;
    RETURN QUERY SELECT p_task;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_cancel(p_task bigint, p_agent text, p_instance text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    was lac_tasks;
    cancelled lac_tasks;
BEGIN
    PERFORM lac_require_current();
    SELECT * INTO was FROM lac_tasks t WHERE t.id = p_task;
    UPDATE lac_tasks t
       SET state = 'cancelled', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
           stale_after = NULL
     WHERE t.id = p_task
       AND (t.state IN ('open', 'parked')
            OR (t.state = 'claimed' AND t.owner = a AND t.instance = p_instance))
    RETURNING t.* INTO cancelled;
    IF FOUND THEN
        PERFORM lac_changed('cancelled', p_task, a, jsonb_build_object(
            'previous_state', was.state,
            'locks', lac_free_task_locks(p_task),
            'waiting', (SELECT coalesce(jsonb_agg(d.task_id ORDER BY d.task_id), '[]')
                          FROM lac_task_deps d JOIN lac_tasks w ON w.id = d.task_id
                         WHERE d.depends_on = p_task AND w.state NOT IN ('done', 'cancelled'))));
        RETURN NEXT cancelled;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_reopen(p_task bigint) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    was lac_tasks;
    reopened lac_tasks;
BEGIN
    PERFORM lac_require_current();
    SELECT * INTO was FROM lac_tasks t WHERE t.id = p_task;
    UPDATE lac_tasks t
       SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
           stale_after = NULL, attempts = 0
     WHERE t.id = p_task AND t.state IN ('done', 'cancelled', 'parked')
    RETURNING t.* INTO reopened;
    IF FOUND THEN
        PERFORM lac_changed('reopened', p_task, NULL, jsonb_build_object(
            'previous_state', was.state, 'previous_owner', was.owner,
            'attempts', was.attempts));
        RETURN NEXT reopened;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_take_over(p_task bigint, p_agent text, p_instance text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    was lac_tasks;
    moved lac_tasks;
BEGIN
    PERFORM lac_require_current();
    SELECT * INTO was FROM lac_tasks t WHERE t.id = p_task;
    UPDATE lac_tasks t SET instance = p_instance, heartbeat_at = lac_now()
     WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a
    RETURNING t.* INTO moved;
    IF FOUND THEN
        PERFORM lac_changed('taken_over', p_task, a, jsonb_build_object(
            'previous_instance', was.instance, 'instance', p_instance));
        RETURN NEXT moved;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lac_api_take_over_locks(p_task bigint, p_agent text, p_instance text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    UPDATE lac_locks SET instance = p_instance WHERE task_id = p_task AND agent = a;
    IF FOUND THEN
        PERFORM lac_changed('taken_over', p_task, a, '{}');
    END IF;
END
$$;
