-- 0017: named resource pools (`git lac resource add port 8100-8104`). A
-- pool is a set of values (ports, databases) on the board; a task names how
-- many of which pools it needs (lac_task_resources, `task add
-- --needs-resource`, `claim --resource`), and its claim is granted that many
-- distinct free values in the claim's own transaction, or refused whole.
-- A value is held by one claim (task_id) until the claim ends: release,
-- done (landing included), cancel, expiry, `team remove`; the trigger
-- lac_tasks_free_resources frees them whichever statement ended it.
-- ord: the order values are handed out in (a range in its numeric order,
-- strings in the order they were added).
-- New functions (functions/resources.sql): lac_api_resource_add,
-- lac_api_resource_remove, lac_api_insert_task_resource,
-- lac_api_grant_resources, lac_trg_free_resources; changed:
-- lac_api_claim_next_free (its one-statement claim takes no task that needs
-- a resource), lac_absorbs and lac_change_event (the new events).

CREATE TABLE lac_resources (
    name       text   NOT NULL,
    value      text   NOT NULL,
    ord        bigint NOT NULL,
    task_id    bigint REFERENCES lac_tasks (id),
    granted_at double precision,
    PRIMARY KEY (name, value),
    -- A pool's name is the environment variable LAC_<NAME> (`git lac env`):
    -- lower case, a shell identifier, never ending in _<digits> (LAC_PORT_0
    -- names the first of several values of the pool `port`).
    CONSTRAINT lac_resources_name_ok
        CHECK (name ~ '^[a-z][a-z0-9_]{0,62}$' AND name !~ '_[0-9]+$'),
    CONSTRAINT lac_resources_value_ok CHECK (lac_valid_name(value))
);
CREATE INDEX lac_resources_free ON lac_resources (name, ord) WHERE task_id IS NULL;
CREATE INDEX lac_resources_task ON lac_resources (task_id) WHERE task_id IS NOT NULL;

CREATE TABLE lac_task_resources (
    task_id bigint  NOT NULL REFERENCES lac_tasks (id),
    name    text    NOT NULL,
    count   integer NOT NULL,
    PRIMARY KEY (task_id, name),
    CONSTRAINT lac_task_resources_name_ok
        CHECK (name ~ '^[a-z][a-z0-9_]{0,62}$' AND name !~ '_[0-9]+$'),
    CONSTRAINT lac_task_resources_count_ok CHECK (count BETWEEN 1 AND 10000)
);

-- Bound below; its body is functions/resources.sql's (applied next, in this
-- same transaction).
CREATE OR REPLACE FUNCTION lac_trg_free_resources() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RETURN NULL; END $$;
-- Fires only when a claim ends or goes landing: a claim, a heartbeat or a
-- track never runs it (the WHEN is checked without calling the function).
CREATE TRIGGER lac_tasks_free_resources AFTER UPDATE OF state, landing_since ON lac_tasks
    FOR EACH ROW
    WHEN (OLD.state = 'claimed'
          AND (NEW.state <> 'claimed'
               OR (OLD.landing_since IS NULL AND NEW.landing_since IS NOT NULL)))
    EXECUTE FUNCTION lac_trg_free_resources();
