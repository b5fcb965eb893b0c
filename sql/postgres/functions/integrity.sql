-- CREATE OR REPLACE: applied after the migrations on every board that reaches
-- the latest schema version (sql/README.md). The one place these bodies live.

-- the database enforces what the CLI promises, for every caller and
-- every isolation level. The rules of the Python validators in SQL (0007's
-- CHECK constraints use them), the isolation guard every write function
-- calls first, and the machinery by which the database writes the history
-- (lac_changes, settled at commit by lac_trg_settle).

-- --- one clock, read when it is asked ---------------------------------------
-- Events are stamped with the time they are written, not the time their
-- transaction began (lac_now()): a claim made possible by a release is never
-- shown before it.
CREATE OR REPLACE FUNCTION lac_clock() RETURNS double precision
    LANGUAGE sql VOLATILE
    AS $$ SELECT extract(epoch FROM clock_timestamp())::double precision $$;

-- --- the rules of git_lacunari's validators, in SQL ---------------------------
-- lac_safe(t): t holds no character of Unicode categories Cc, Cf, Zl, Zp
-- (paths.unsafe_char: control, bidi override, zero-width, separators).
-- lac_valid_name(t): identity.validate_name (names, lanes, capabilities):
-- 1-200 characters, no whitespace, lac_safe.
-- lac_valid_pattern(t): what paths.normalize returns: 1-4096 characters,
-- lac_safe, relative, no empty, `.` or `..` component (a trailing `/` kept).
-- lac_valid_duration(x): durations.parse_duration's range: finite, > 0, at
-- most ten years (NaN and Infinity are refused: NaN > 0 is true in SQL, but
-- NaN <= bound is not).
-- Those that call another are pinned to the board's schema (SET search_path
-- FROM CURRENT): a CHECK constraint runs them for any client, whatever its
-- search_path. Those are PL/pgSQL (since 0012): a SQL function
-- with SET is never inlined, and the executor parsed and planned its body
-- again for every statement that checked a row (every claim, for the lane,
-- owner, creator and needs of the task and the kind of its event: 0.15 ms
-- of a claim's 0.45 ms, bench/claims.py); PL/pgSQL keeps its compiled body
-- and plans for the session.
-- The character classes were generated from Python's unicodedata;
-- tests/test_integrity.py compares every code point with Python's answer.
CREATE OR REPLACE FUNCTION lac_safe(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT t !~ '[\U00000001-\U0000001F\U0000007F-\U0000009F\U000000AD\U00000600-\U00000605\U0000061C\U000006DD\U0000070F\U00000890-\U00000891\U000008E2\U0000180E\U0000200B-\U0000200F\U00002028-\U0000202E\U00002060-\U00002064\U00002066-\U0000206F\U0000FEFF\U0000FFF9-\U0000FFFB\U000110BD\U000110CD\U00013430-\U00013438\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0001\U000E0020-\U000E007F]' $$;

CREATE OR REPLACE FUNCTION lac_valid_name(t text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
BEGIN
    RETURN length(t) BETWEEN 1 AND 200 AND lac_safe(t)
       AND t !~ '[\U00000020\U000000A0\U00001680\U00002000-\U0000200A\U0000202F\U0000205F\U00003000]';
END
$$;

CREATE OR REPLACE FUNCTION lac_valid_names(j jsonb) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
BEGIN
    RETURN jsonb_typeof(j) = 'array'
       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(j) AS e(v)
                        WHERE jsonb_typeof(e.v) <> 'string' OR NOT lac_valid_name(e.v #>> '{}'));
END
$$;

CREATE OR REPLACE FUNCTION lac_valid_pattern(t text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
BEGIN
    RETURN length(t) BETWEEN 1 AND 4096 AND lac_safe(t)
       AND left(t, 1) <> '/' AND strpos(t, '//') = 0
       AND t !~ '(^|/)\.\.?(/|$)';
END
$$;

CREATE OR REPLACE FUNCTION lac_valid_duration(x double precision) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ BEGIN RETURN x > 0 AND x <= 315360000; END $$;

-- A setting's text, when the setting is a duration (stale_after).
CREATE OR REPLACE FUNCTION lac_valid_duration_text(t text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
BEGIN
    RETURN lac_valid_duration(t::double precision);
EXCEPTION WHEN invalid_text_representation THEN
    RETURN false;
END
$$;

-- One spelling of "bad input" for the write functions: SQLSTATE LAC03,
-- which the store reports as bad input (exit 2), as it does a CHECK
-- constraint's refusal (23514).
CREATE OR REPLACE FUNCTION lac_invalid(p_message text) RETURNS void
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = 'LAC03', MESSAGE = p_message; END $$;

-- --- every grant on current data ---------------------------------------------
-- The write functions decide on what they read (is the task open, is the
-- path free). Under READ COMMITTED each statement of a function reads the
-- board as it is when the statement starts, after the advisory lock that
-- serialises grants has been taken; under REPEATABLE READ or SERIALIZABLE it
-- would read the snapshot of the caller's first statement, possibly taken
-- before that lock was granted, and so grant a path another session just
-- took. The store begins every transaction READ COMMITTED whatever the
-- server's, the role's or PGOPTIONS' default (store.sql, store/postgres.py);
-- every write function refuses any other level, so a caller with its own
-- transaction gets a clear refusal (SQLSTATE LAC02), never a stale grant.
CREATE OR REPLACE FUNCTION lac_require_current() RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION USING ERRCODE = 'LAC02',
            MESSAGE = format('the board writes only under READ COMMITTED, so that every grant '
                             'is decided on current data; this transaction is %s '
                             '(BEGIN ISOLATION LEVEL READ COMMITTED)',
                             upper(current_setting('transaction_isolation')));
    END IF;
END
$$;

-- The kinds of change an event of kind p_kind may stand for.
CREATE OR REPLACE FUNCTION lac_absorbs(p_kind text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE p_kind
        WHEN 'created' THEN ARRAY['created', 'depends', 'paths_added']
        WHEN 'depends' THEN ARRAY['depends']
        WHEN 'edited' THEN ARRAY['edited', 'depends', 'undepends', 'paths_added',
                                 'paths_dropped', 'locked', 'unlocked', 'resources_added']
        WHEN 'locked' THEN ARRAY['locked']
        WHEN 'unlocked' THEN ARRAY['unlocked']
        WHEN 'released' THEN ARRAY['released', 'unlocked']
        WHEN 'force_released' THEN ARRAY['released', 'force_released', 'unlocked']
        WHEN 'done' THEN ARRAY['done', 'unlocked']
        WHEN 'landing' THEN ARRAY['landing', 'unlocked']
        WHEN 'landed' THEN ARRAY['landed', 'unlocked']
        WHEN 'returned' THEN ARRAY['returned']
        WHEN 'expired' THEN ARRAY['expired', 'unlocked']
        WHEN 'failed' THEN ARRAY['released', 'parked', 'unlocked']
        WHEN 'parked' THEN ARRAY['parked']
        WHEN 'cancelled' THEN ARRAY['cancelled', 'unlocked']
        WHEN 'reopened' THEN ARRAY['reopened']
        WHEN 'force_unlocked' THEN ARRAY['force_unlocked', 'unlocked']
        WHEN 'locks_expired' THEN ARRAY['locks_expired']
        WHEN 'taken_over' THEN ARRAY['taken_over']
        WHEN 'granted' THEN ARRAY['granted']
        WHEN 'resource_added' THEN ARRAY['resource_added']
        WHEN 'resource_removed' THEN ARRAY['resource_removed']
        ELSE ARRAY[]::text[]
    END
    $$;

-- The event the database writes for a change no caller's event stands for.
CREATE OR REPLACE FUNCTION lac_change_event(p_change text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE WHEN p_change IN ('paths_added', 'paths_dropped', 'undepends', 'resources_added')
                THEN 'edited'
                ELSE p_change END
    $$;

-- Facts of several changes as one: objects merged key by key, lists joined.
CREATE OR REPLACE FUNCTION lac_merge(a jsonb, b jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE
        WHEN a IS NULL THEN b
        WHEN b IS NULL THEN a
        WHEN jsonb_typeof(a) = 'object' AND jsonb_typeof(b) = 'object' THEN
            (SELECT coalesce(jsonb_object_agg(k, lac_merge(a -> k, b -> k)), '{}')
               FROM (SELECT jsonb_object_keys(a) UNION SELECT jsonb_object_keys(b)) AS keys(k))
        WHEN jsonb_typeof(a) = 'array' AND jsonb_typeof(b) = 'array' THEN a || b
        ELSE b
    END
    $$;

-- Who acts, for the record: the session's role in team mode, else the name
-- the caller gave (or the database user, when it gave none).
CREATE OR REPLACE FUNCTION lac_who(p_agent text) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT CASE WHEN lac_team() THEN session_user::text
                      ELSE coalesce(p_agent, current_user::text) END $$;

CREATE OR REPLACE FUNCTION lac_changed(p_kind text, p_task bigint, p_agent text, p_facts jsonb)
    RETURNS void
    LANGUAGE sql
    AS $$
    INSERT INTO lac_changes (kind, task_id, agent, facts)
    VALUES (p_kind, p_task, lac_who(p_agent), coalesce(p_facts, '{}'))
    $$;

-- Does event e (its kind, task, agent) stand for change c?
CREATE OR REPLACE FUNCTION lac_stands_for(e_kind text, e_task bigint, e_agent text,
                               c_kind text, c_task bigint, c_agent text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT c_kind = ANY (lac_absorbs(e_kind))
       AND (e_task IS NULL OR e_task IS NOT DISTINCT FROM c_task)
       AND (NOT lac_team() OR e_agent = c_agent)
    $$;

-- A task's text rules, when its text is written (0014: a trigger, not
-- CHECKs, so that a claim, which writes none of it, does not run them).
CREATE OR REPLACE FUNCTION lac_trg_task_text() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
    AS $$
DECLARE
    broken text;
BEGIN
    IF NOT (length(NEW.title) BETWEEN 1 AND 500
            AND NEW.title !~ '[\U00000001-\U0000001F\U0000007F]'
            AND NEW.title ~ '[^[:space:]]') THEN
        broken := 'lac_tasks_title_ok';
    ELSIF NOT (length(NEW.body) <= 1000000) THEN
        broken := 'lac_tasks_body_ok';
    ELSIF NOT lac_valid_name(NEW.lane) THEN
        broken := 'lac_tasks_lane_ok';
    ELSIF NOT lac_valid_names(NEW.needs) THEN
        broken := 'lac_tasks_needs_ok';
    ELSIF NOT lac_valid_name(NEW.created_by) THEN
        broken := 'lac_tasks_creator_ok';
    END IF;
    IF broken IS NOT NULL THEN
        RAISE EXCEPTION 'new row for relation "lac_tasks" violates check constraint "%"', broken
            USING ERRCODE = 'check_violation', CONSTRAINT = broken, TABLE = 'lac_tasks';
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION lac_trg_settle() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT  -- it runs at commit, for any client
    AS $$
DECLARE
    me xid8 := pg_current_xact_id();
    e record;
    c record;
    known jsonb;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM lac_changes ch WHERE ch.tx = me)
       AND NOT EXISTS (SELECT 1 FROM lac_events ev WHERE ev.tx = me AND ev.unsettled) THEN
        RETURN NULL;  -- settled already, by this transaction's first firing
    END IF;
    FOR e IN SELECT * FROM lac_events ev WHERE ev.tx = me AND ev.unsettled ORDER BY ev.id LOOP
        IF e.kind <> 'reconciled' AND NOT EXISTS (
                SELECT 1 FROM lac_changes ch
                 WHERE ch.tx = me
                   AND lac_stands_for(e.kind, e.task_id, e.agent, ch.kind, ch.task_id, ch.agent)) THEN
            RAISE EXCEPTION USING ERRCODE = '42501',
                MESSAGE = format('the board writes %s events itself: this transaction made no '
                                 'such change%s as %s', e.kind,
                                 CASE WHEN e.task_id IS NULL THEN ''
                                      ELSE format(' to task #%s', e.task_id) END, e.agent);
        END IF;
        -- The facts only the database knows for sure: the locks a release,
        -- done, cancel or expiry freed (the function freed them itself).
        known := NULL;
        IF e.kind IN ('released', 'force_released', 'done', 'cancelled', 'expired',
                      'landed') THEN
            SELECT ch.facts -> 'locks' INTO known FROM lac_changes ch
             WHERE ch.tx = me AND ch.kind IN ('released', 'force_released', 'done', 'cancelled',
                                              'expired', 'landed')
               AND lac_stands_for(e.kind, e.task_id, e.agent, ch.kind, ch.task_id, ch.agent)
               AND ch.facts ? 'locks'
             ORDER BY ch.id LIMIT 1;
        END IF;
        UPDATE lac_events ev
           SET unsettled = false,
               detail = CASE WHEN known IS NULL THEN ev.detail
                             ELSE ev.detail || jsonb_build_object('locks', known) END
         WHERE ev.id = e.id;
    END LOOP;
    FOR c IN
        SELECT lac_change_event(ch.kind) AS kind, ch.task_id, ch.agent,
               array_agg(ch.facts ORDER BY ch.id) AS facts, min(ch.id) AS first
          FROM lac_changes ch
         WHERE ch.tx = me
           AND NOT EXISTS (SELECT 1 FROM lac_events ev
                            WHERE ev.tx = me
                              AND lac_stands_for(ev.kind, ev.task_id, ev.agent,
                                                 ch.kind, ch.task_id, ch.agent))
         GROUP BY 1, 2, 3
         ORDER BY first
    LOOP
        known := '{}';
        FOR i IN 1 .. cardinality(c.facts) LOOP
            known := lac_merge(known, c.facts[i]);
        END LOOP;
        INSERT INTO lac_events (at, task_id, agent, kind, detail)
        VALUES (lac_clock(), c.task_id, c.agent, c.kind, known);
    END LOOP;
    DELETE FROM lac_changes ch WHERE ch.tx = me;
    RETURN NULL;
END
$$;

-- Team mode: the needs, paths and dependencies of a task are its creator's
-- (or an admin's) to change; a holder may add paths and dependencies to its
-- own claim (that only narrows it). p_adding: is the change an addition?
CREATE OR REPLACE FUNCTION lac_require_shape(p_task bigint, p_adding boolean) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    t lac_tasks;
BEGIN
    IF NOT lac_team() OR lac_has('admin') THEN
        RETURN;
    END IF;
    SELECT * INTO t FROM lac_tasks WHERE id = p_task;
    IF NOT FOUND THEN
        PERFORM lac_invalid(format('no task #%s', p_task));
    END IF;
    IF t.state = 'claimed' AND t.owner IS DISTINCT FROM session_user::text THEN
        PERFORM lac_refuse(format('team mode: task #%s is claimed by another agent', p_task));
    END IF;
    IF t.created_by = session_user::text THEN
        RETURN;
    END IF;
    IF p_adding AND t.state = 'claimed' AND t.owner = session_user::text THEN
        RETURN;
    END IF;
    PERFORM lac_refuse(format(
        'team mode: only the creator of task #%s (%s) or an admin changes its needs, paths '
        'and dependencies', p_task, t.created_by));
END
$$;

-- Was task p_task created in this transaction (its creation not yet settled)?
CREATE OR REPLACE FUNCTION lac_created_now(p_task bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM lac_changes c
                    WHERE c.tx = pg_current_xact_id() AND c.kind = 'created'
                      AND c.task_id = p_task);
END
$$;

CREATE OR REPLACE FUNCTION lac_require_finite(p_value double precision, p_what text,
                                              p_zero_ok boolean) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_value IS NULL THEN
        RETURN;
    END IF;
    IF NOT (lac_valid_duration(p_value) OR (p_zero_ok AND p_value = 0)) THEN
        PERFORM lac_invalid(format('%s %s is not a duration: more than 0 and at most 10 years '
                                   '(315360000 seconds)', p_what, p_value));
    END IF;
END
$$;

-- The locks freed, for the record: their patterns in the order they were taken.
CREATE OR REPLACE FUNCTION lac_record_unlocked(p_gone jsonb, p_task bigint) RETURNS void
    LANGUAGE sql
    AS $$
    INSERT INTO lac_changes (kind, task_id, agent, facts)
    SELECT 'unlocked', p_task, lac_who(NULL), jsonb_build_object('paths', p_gone)
     WHERE jsonb_array_length(p_gone) > 0
    $$;

-- Frees a task's locks; their patterns, for the record.
CREATE OR REPLACE FUNCTION lac_free_task_locks(p_task bigint) RETURNS jsonb
    LANGUAGE sql
    AS $$
    WITH gone AS (DELETE FROM lac_locks l WHERE l.task_id = p_task RETURNING l.id, l.pattern)
    SELECT coalesce(jsonb_agg(g.pattern ORDER BY g.id), '[]') FROM gone g
    $$;

