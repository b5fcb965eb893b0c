-- 0006: the live page's change feed (`git lac serve`). Every statement that
-- writes a board table, from any client (the command line, a drainer, psql),
-- notifies the board's own change channel; the page's one watcher LISTENs
-- there. NOTIFY is delivered at commit and folded to one per transaction.

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
