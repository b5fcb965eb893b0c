-- 0014 ("claims near the ceiling"): a claim, a heartbeat, a
-- release and a landing each rewrite a task's row, and PostgreSQL checks
-- every CHECK constraint of a row on every UPDATE, whichever columns
-- changed: the rules on the title, body, lane, needs and creator (regular
-- expressions over the text, a walk of the jsonb) ran on every claim,
-- though a claim writes none of those columns. They move to a trigger that
-- fires only when one of them is written (INSERT, or UPDATE OF them): the
-- same rules, the same refusal (SQLSTATE 23514, check_violation, with the
-- message the constraint gave, which the store reports as bad input,
-- nothing written). The owner and instance rules stay CHECKs: a claim
-- writes those. A trigger, unlike a CHECK, can be disabled, but only by
-- the table's owner or a superuser, who can drop a CHECK as well; a team
-- agent is neither (0005). It is also skipped under session_replication_role
-- = replica (a superuser's setting, unless one grants SET on it; a logical
-- replication apply worker runs so): such a writer is trusted with the rows.
-- The check runs in a BEFORE trigger: one added later that changes NEW must
-- sort before lac_task_text (triggers fire in name order).
-- functions/ changes too: the scalar functions that read a table (lac_team,
-- lac_has, lac_may_change, lac_default_stale, lac_folds, lac_landing_period,
-- lac_created_now) and lac_valid_duration are PL/pgSQL now, which keeps its
-- plans for the session, where a SQL function that cannot be inlined is
-- planned again in every statement that calls it (sql/README.md).
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

ALTER TABLE lac_tasks
    DROP CONSTRAINT lac_tasks_title_ok,
    DROP CONSTRAINT lac_tasks_body_ok,
    DROP CONSTRAINT lac_tasks_lane_ok,
    DROP CONSTRAINT lac_tasks_needs_ok,
    DROP CONSTRAINT lac_tasks_creator_ok;

CREATE TRIGGER lac_task_text BEFORE INSERT OR UPDATE OF title, body, lane, needs, created_by
    ON lac_tasks FOR EACH ROW EXECUTE FUNCTION lac_trg_task_text();
