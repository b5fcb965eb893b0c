-- CREATE OR REPLACE: applied after the migrations on every board that reaches
-- the latest schema version (sql/README.md). The one place these bodies live.

-- The live page's change feed (`git lac serve`; first created by 0006). The
-- triggers that call lac_notify_change are bindings, not bodies: they stay
-- in 0006_change_feed.sql.

-- The channel of a board (a schema): its name, or for a name too long for a
-- channel (63 bytes) its md5, so two boards of a database never share one.
CREATE OR REPLACE FUNCTION lac_change_channel(p_board text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT CASE WHEN octet_length('lac_change_' || p_board) <= 63
                      THEN 'lac_change_' || p_board
                      ELSE 'lac_change_' || md5(p_board) END $$;

-- The table's own schema, not the writer's search_path: a psql session on
-- another search_path writing board.lac_tasks wakes this board's pages.
CREATE OR REPLACE FUNCTION lac_notify_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
    AS $$ BEGIN PERFORM pg_notify(lac_change_channel(TG_TABLE_SCHEMA), ''); RETURN NULL; END $$;
