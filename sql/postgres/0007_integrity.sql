-- 0007: the database enforces what the CLI promises, for every
-- caller and every isolation level. The schema: the rules as CHECK
-- constraints, the columns and the table by which the database writes the
-- history itself, the trigger that settles it. The bodies of the functions
-- live in functions/integrity.sql and functions/team.sql; the few this
-- migration itself calls (CHECKs, a default, the trigger) are created here
-- first (sql/README.md), and functions/ re-asserts them.
-- Two write functions change their signature (DROP here, functions/ creates
-- them again): lac_api_release takes who releases, lac_api_expire returns
-- the locks it freed.
DROP FUNCTION lac_api_release(bigint, text);
DROP FUNCTION lac_api_expire(text, bigint, text, double precision);

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
-- search_path.
-- The character classes were generated from Python's unicodedata;
-- tests/test_integrity.py compares every code point with Python's answer.
CREATE OR REPLACE FUNCTION lac_safe(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT t !~ '[\U00000001-\U0000001F\U0000007F-\U0000009F\U000000AD\U00000600-\U00000605\U0000061C\U000006DD\U0000070F\U00000890-\U00000891\U000008E2\U0000180E\U0000200B-\U0000200F\U00002028-\U0000202E\U00002060-\U00002064\U00002066-\U0000206F\U0000FEFF\U0000FFF9-\U0000FFFB\U000110BD\U000110CD\U00013430-\U00013438\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0001\U000E0020-\U000E007F]' $$;

CREATE OR REPLACE FUNCTION lac_valid_name(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
    SELECT length(t) BETWEEN 1 AND 200 AND lac_safe(t)
       AND t !~ '[\U00000020\U000000A0\U00001680\U00002000-\U0000200A\U0000202F\U0000205F\U00003000]'
    $$;

CREATE OR REPLACE FUNCTION lac_valid_names(j jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
    SELECT jsonb_typeof(j) = 'array'
       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(j) AS e(v)
                        WHERE jsonb_typeof(e.v) <> 'string' OR NOT lac_valid_name(e.v #>> '{}'))
    $$;

CREATE OR REPLACE FUNCTION lac_valid_pattern(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
    SELECT length(t) BETWEEN 1 AND 4096 AND lac_safe(t)
       AND left(t, 1) <> '/' AND strpos(t, '//') = 0
       AND t !~ '(^|/)\.\.?(/|$)'
    $$;

CREATE OR REPLACE FUNCTION lac_valid_duration(x double precision) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT x > 0 AND x <= 315360000 $$;

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

-- NOT VALID: a board that already holds a row these refuse still migrates
-- (the row stays, as it was); every row written from now on is checked.
ALTER TABLE lac_tasks
    ADD CONSTRAINT lac_tasks_title_ok
        CHECK (length(title) BETWEEN 1 AND 500 AND title !~ '[\U00000001-\U0000001F\U0000007F]'
               AND title ~ '[^[:space:]]') NOT VALID,
    ADD CONSTRAINT lac_tasks_body_ok CHECK (length(body) <= 1000000) NOT VALID,
    ADD CONSTRAINT lac_tasks_lane_ok CHECK (lac_valid_name(lane)) NOT VALID,
    ADD CONSTRAINT lac_tasks_needs_ok CHECK (lac_valid_names(needs)) NOT VALID,
    ADD CONSTRAINT lac_tasks_owner_ok CHECK (owner IS NULL OR lac_valid_name(owner)) NOT VALID,
    ADD CONSTRAINT lac_tasks_creator_ok CHECK (lac_valid_name(created_by)) NOT VALID,
    ADD CONSTRAINT lac_tasks_stale_after_ok
        CHECK (stale_after IS NULL OR lac_valid_duration(stale_after)) NOT VALID,
    ADD CONSTRAINT lac_tasks_attempts_ok CHECK (attempts >= 0) NOT VALID,
    ADD CONSTRAINT lac_tasks_instance_ok
        CHECK (instance IS NULL OR (length(instance) <= 200 AND lac_safe(instance))) NOT VALID;
ALTER TABLE lac_task_paths
    ADD CONSTRAINT lac_task_paths_pattern_ok CHECK (lac_valid_pattern(pattern)) NOT VALID;
ALTER TABLE lac_locks
    ADD CONSTRAINT lac_locks_pattern_ok CHECK (lac_valid_pattern(pattern)) NOT VALID,
    ADD CONSTRAINT lac_locks_agent_ok CHECK (lac_valid_name(agent)) NOT VALID,
    ADD CONSTRAINT lac_locks_blob_ok
        CHECK (base_blob IS NULL OR base_blob ~ '^[0-9a-f]{40}([0-9a-f]{24})?$') NOT VALID;
ALTER TABLE lac_agents
    ADD CONSTRAINT lac_agents_name_ok CHECK (lac_valid_name(name)) NOT VALID,
    ADD CONSTRAINT lac_agents_caps_ok CHECK (lac_valid_names(capabilities)) NOT VALID;
ALTER TABLE lac_task_deps
    ADD CONSTRAINT lac_task_deps_not_self CHECK (task_id <> depends_on) NOT VALID;
ALTER TABLE lac_settings
    ADD CONSTRAINT lac_settings_name_ok CHECK (length(name) BETWEEN 1 AND 300 AND lac_safe(name))
        NOT VALID,
    ADD CONSTRAINT lac_settings_stale_after_ok
        CHECK (name <> 'stale_after' OR lac_valid_duration_text(value)) NOT VALID;
ALTER TABLE lac_events
    ADD CONSTRAINT lac_events_kind_ok CHECK (lac_valid_name(kind)) NOT VALID;

-- --- the history, written by the database --------------------------------------
-- Every write function records what it changed in lac_changes (kind, task,
-- acting agent, the facts it knows), in the caller's transaction. At commit
-- a deferred constraint trigger (lac_trg_settle) settles the transaction:
-- * every event the caller wrote through lac_api_insert_event must stand for
--   a change of a matching kind that this transaction made to the same task
--   as the same agent (lac_absorbs), or the whole transaction is refused;
--   the caller's detail is its prose (reason, where), but the facts the
--   database knows (the locks a release freed) are the database's;
-- * every change no event stands for gets one written by the database, with
--   the facts it recorded;
-- then the transaction's lac_changes rows are deleted (the table stays empty
-- between transactions). So an agent cannot write an event for something it
-- did not do, and a state change cannot commit without its event.
ALTER TABLE lac_events ADD COLUMN tx xid8;
ALTER TABLE lac_events ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
ALTER TABLE lac_events ADD COLUMN unsettled boolean NOT NULL DEFAULT false;
ALTER TABLE lac_events ALTER COLUMN at SET DEFAULT lac_clock();
CREATE INDEX lac_events_tx ON lac_events (tx);

CREATE TABLE lac_changes (
    id      bigserial PRIMARY KEY,
    tx      xid8   NOT NULL DEFAULT pg_current_xact_id(),
    kind    text   NOT NULL,
    task_id bigint,
    agent   text   NOT NULL,
    facts   jsonb  NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(facts) = 'object')
);
CREATE INDEX lac_changes_tx ON lac_changes (tx);

-- Bound below; its body is functions/integrity.sql's (applied next, in this
-- same transaction).
CREATE OR REPLACE FUNCTION lac_trg_settle() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RETURN NULL; END $$;

CREATE CONSTRAINT TRIGGER lac_changes_settle AFTER INSERT ON lac_changes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION lac_trg_settle();
CREATE CONSTRAINT TRIGGER lac_events_settle AFTER INSERT ON lac_events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.unsettled)
    EXECUTE FUNCTION lac_trg_settle();
