-- CREATE OR REPLACE: applied after the migrations on every board that reaches
-- the latest schema version (sql/README.md). The one place these bodies live.

-- Named resource pools (0017): values (ports, databases) a claim is granted
-- in its own transaction and holds until it ends. Every grant and every
-- change of a pool takes the board's grant lock (serialize_locks, the one
-- lac_require_free_all takes): what is free when a claim looks stays free
-- until it commits, and a claim that needs paths and resources takes one
-- lock, never two in an order another could reverse.

-- How many values a pool may hold: a grant counts a pool's free values.
CREATE OR REPLACE FUNCTION lac_pool_cap() RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT 10000 $$;

-- Add values to a pool (made by its first value). A value already there is
-- kept as it is (held or free) and returned with added = false. Team mode:
-- an admin's, as the board's settings are.
CREATE OR REPLACE FUNCTION lac_api_resource_add(p_name text, p_values jsonb)
    RETURNS TABLE (value text, added boolean)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    had integer;
BEGIN
    PERFORM lac_require_current();
    IF lac_team() AND NOT lac_has('admin') THEN
        PERFORM lac_refuse(format('team mode: only an admin adds to the resource pool %s',
                                  p_name));
    END IF;
    IF jsonb_typeof(p_values) IS DISTINCT FROM 'array' OR jsonb_array_length(p_values) = 0
       OR jsonb_array_length(p_values) > lac_pool_cap()
       OR EXISTS (SELECT 1 FROM jsonb_array_elements(p_values) AS e(v)
                   WHERE jsonb_typeof(e.v) <> 'string') THEN
        PERFORM lac_invalid('the values to add are a list of at most 10000 strings');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('lac_locks:' || current_schema()));
    SELECT count(*) INTO had FROM lac_resources r WHERE r.name = p_name;
    IF had + (SELECT count(DISTINCT e.v) FROM jsonb_array_elements_text(p_values) AS e(v)
               WHERE NOT EXISTS (SELECT 1 FROM lac_resources r
                                  WHERE r.name = p_name AND r.value = e.v)) > lac_pool_cap() THEN
        PERFORM lac_invalid(format('a pool holds at most %s values', lac_pool_cap()));
    END IF;
    RETURN QUERY WITH given AS (
        SELECT e.v, min(e.n) AS n
          FROM jsonb_array_elements_text(p_values) WITH ORDINALITY AS e(v, n) GROUP BY e.v
    ), made AS (
        INSERT INTO lac_resources AS r (name, value, ord)
        SELECT p_name, g.v,
               coalesce((SELECT max(o.ord) FROM lac_resources o WHERE o.name = p_name), 0) + g.n
          FROM given g ORDER BY g.n
        ON CONFLICT (name, value) DO NOTHING
        RETURNING r.value
    ), recorded AS (
        INSERT INTO lac_changes (kind, task_id, agent, facts)
        SELECT 'resource_added', NULL, lac_who(NULL),
               jsonb_build_object('name', p_name, 'added', jsonb_agg(m.value))
          FROM made m HAVING count(*) > 0
    )
    SELECT g.v, EXISTS (SELECT 1 FROM made m WHERE m.value = g.v)
      FROM given g ORDER BY g.n;
END
$$;

-- Remove values from a pool (p_values NULL: the whole pool). A value held by
-- a claim is never removed: the call is refused whole. Team mode: an admin's.
CREATE OR REPLACE FUNCTION lac_api_resource_remove(p_name text, p_values jsonb)
    RETURNS TABLE (value text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    held record;
BEGIN
    PERFORM lac_require_current();
    IF lac_team() AND NOT lac_has('admin') THEN
        PERFORM lac_refuse(format('team mode: only an admin removes from the resource pool %s',
                                  p_name));
    END IF;
    IF p_values IS NOT NULL AND (jsonb_typeof(p_values) <> 'array'
       OR EXISTS (SELECT 1 FROM jsonb_array_elements(p_values) AS e(v)
                   WHERE jsonb_typeof(e.v) <> 'string')) THEN
        PERFORM lac_invalid('the values to remove are a list of strings');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('lac_locks:' || current_schema()));
    SELECT r.value, r.task_id INTO held FROM lac_resources r
     WHERE r.name = p_name AND r.task_id IS NOT NULL
       AND (p_values IS NULL OR r.value IN (SELECT jsonb_array_elements_text(p_values)))
     ORDER BY r.ord LIMIT 1;
    IF FOUND THEN
        PERFORM lac_invalid(format('%s %s is held by task #%s: it is freed when that claim ends',
                                   p_name, held.value, held.task_id));
    END IF;
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_resources r
         WHERE r.name = p_name
           AND (p_values IS NULL OR r.value IN (SELECT jsonb_array_elements_text(p_values)))
        RETURNING r.value, r.ord
    ), recorded AS (
        INSERT INTO lac_changes (kind, task_id, agent, facts)
        SELECT 'resource_removed', NULL, lac_who(NULL),
               jsonb_build_object('name', p_name, 'removed', jsonb_agg(g.value ORDER BY g.ord))
          FROM gone g HAVING count(*) > 0
    )
    SELECT g.value FROM gone g ORDER BY g.ord;
END
$$;

-- A task needs p_count values of pool p_name (at least; a second need of
-- the same pool keeps the larger). Team mode: its creator's (or an
-- admin's), or its holder's on its own claim (lac_require_shape).
CREATE OR REPLACE FUNCTION lac_api_insert_task_resource(p_task bigint, p_name text,
                                                        p_count integer)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    was integer;
    now_count integer;
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_shape(p_task, true);
    SELECT n.count INTO was FROM lac_task_resources n
     WHERE n.task_id = p_task AND n.name = p_name;
    INSERT INTO lac_task_resources AS n (task_id, name, count) VALUES (p_task, p_name, p_count)
    ON CONFLICT (task_id, name) DO UPDATE SET count = greatest(n.count, excluded.count)
    RETURNING n.count INTO now_count;
    IF lac_created_now(p_task) THEN
        PERFORM lac_changed('created', p_task, NULL, jsonb_build_object(
            'resources', jsonb_build_array(jsonb_build_object('name', p_name,
                                                               'count', now_count))));
    ELSIF was IS DISTINCT FROM now_count THEN
        PERFORM lac_changed('resources_added', p_task, NULL, jsonb_build_object(
            'changes', jsonb_build_object('added_resources',
                jsonb_build_array(jsonb_build_object('name', p_name, 'count', now_count)))));
    END IF;
END
$$;

-- Grant the claim of p_task (the caller's, here, not landing) what it still
-- lacks of each pool it needs: the first free values in the pool's order.
-- All or nothing: a pool with too few free values refuses the whole grant
-- (LAC03; the board looks first, under the same lock, and refuses the claim
-- with resource_unavailable). Returns the values granted now.
CREATE OR REPLACE FUNCTION lac_api_grant_resources(p_task bigint, p_agent text, p_instance text)
    RETURNS TABLE (name text, value text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
    short record;
BEGIN
    PERFORM lac_require_current();
    IF NOT EXISTS (SELECT 1 FROM lac_tasks t
                    WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a
                      AND t.instance IS NOT DISTINCT FROM p_instance
                      AND t.landing_since IS NULL) THEN
        PERFORM lac_refuse(format('task #%s is not %s''s claim here: only its holder is '
                                  'granted its resources', p_task, a));
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('lac_locks:' || current_schema()));
    SELECT n.name, n.count AS wanted,
           (SELECT count(*) FROM lac_resources f WHERE f.name = n.name AND f.task_id IS NULL)
               AS free,
           (SELECT count(*) FROM lac_resources h WHERE h.name = n.name AND h.task_id = p_task)
               AS held
      INTO short
      FROM lac_task_resources n
     WHERE n.task_id = p_task
       AND (SELECT count(*) FROM lac_resources f WHERE f.name = n.name AND f.task_id IS NULL)
           < n.count - (SELECT count(*) FROM lac_resources h
                         WHERE h.name = n.name AND h.task_id = p_task)
     ORDER BY n.name LIMIT 1;
    IF FOUND THEN
        PERFORM lac_invalid(format('task #%s needs %s %s; pool %L has %s free', p_task,
                                   short.wanted, short.name, short.name, short.free));
    END IF;
    RETURN QUERY WITH want AS (
        SELECT n.name, n.count - (SELECT count(*) FROM lac_resources h
                                   WHERE h.name = n.name AND h.task_id = p_task) AS more
          FROM lac_task_resources n WHERE n.task_id = p_task
    ), pick AS (
        SELECT f.name, f.value
          FROM want w CROSS JOIN LATERAL (
                SELECT r.name, r.value FROM lac_resources r
                 WHERE r.name = w.name AND r.task_id IS NULL
                 ORDER BY r.ord LIMIT greatest(w.more, 0)) AS f
    ), granted AS (
        UPDATE lac_resources r SET task_id = p_task, granted_at = lac_now()
          FROM pick p
         WHERE r.name = p.name AND r.value = p.value
        RETURNING r.name, r.value, r.ord
    ), recorded AS (
        INSERT INTO lac_changes (kind, task_id, agent, facts)
        SELECT 'granted', p_task, lac_who(a),
               jsonb_build_object('resources',
                   jsonb_agg(jsonb_build_object('name', g.name, 'value', g.value)
                             ORDER BY g.name, g.ord))
          FROM granted g HAVING count(*) > 0
    )
    SELECT g.name, g.value FROM granted g ORDER BY g.name, g.ord;
END
$$;

-- A claim's values go back to their pools when it ends (released, done,
-- cancelled, expired, parked, its agent removed from the team) or goes
-- landing (done, its work not in the destination yet: the work that used
-- them is finished), whichever statement ended it (bound by 0017 to UPDATE
-- OF state, landing_since). The change is recorded as `freed`.
CREATE OR REPLACE FUNCTION lac_trg_free_resources() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
    AS $$
DECLARE
    freed jsonb;
BEGIN
    WITH gone AS (
        UPDATE lac_resources r SET task_id = NULL, granted_at = NULL
         WHERE r.task_id = OLD.id
        RETURNING r.name, r.value, r.ord
    )
    SELECT jsonb_agg(jsonb_build_object('name', g.name, 'value', g.value)
                     ORDER BY g.name, g.ord)
      INTO freed FROM gone g;
    IF freed IS NOT NULL THEN
        PERFORM lac_changed('freed', OLD.id, OLD.owner,
                            jsonb_build_object('holder', OLD.owner, 'resources', freed));
    END IF;
    RETURN NULL;
END
$$;
