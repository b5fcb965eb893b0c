-- CREATE OR REPLACE: applied after the migrations on every board that reaches
-- the latest schema version (sql/README.md). The one place these bodies live.

-- The live page's change feed (`git lac serve`; first created by 0006, moved
-- from NOTIFY to the counter lac_change_count by 0008). The triggers that call
-- lac_notify_change are bindings, not bodies: they stay in 0006_change_feed.sql.
-- No NOTIFY here: a notifying commit takes one lock for the whole cluster
-- and holds it through its WAL flush, so every claim's commit ran alone.

-- Before it counts, a writing transaction takes a shared advisory lock that
-- it holds to its end: shared locks never wait for each other, and the
-- watcher can tell, without waiting, whether every write it has counted has
-- ended (then a read sees it). SECURITY DEFINER: any writer of a board table
-- (an agent through the lac_api_* functions, an administrator in psql) moves
-- the board's counter with the rights of the board's creator; search_path is
-- pinned to the board.
CREATE OR REPLACE FUNCTION lac_notify_change() RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path FROM CURRENT
    AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtext('lac_changes:' || TG_TABLE_SCHEMA));
    PERFORM nextval('lac_change_count');
    RETURN NULL;
END
$$;

-- What the watcher reads, for any role that may read the board (team mode's
-- reader has no privilege on the sequence): the counter, then whether every
-- transaction it counted has ended (the exclusive lock is free; tried, never
-- waited for, and let go at once).
CREATE OR REPLACE FUNCTION lac_changes_seen(OUT n bigint, OUT settled boolean)
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path FROM CURRENT
    AS $$
BEGIN
    SELECT CASE WHEN s.is_called THEN s.last_value ELSE 0 END INTO n FROM lac_change_count s;
    settled := pg_try_advisory_xact_lock(hashtext('lac_changes:' || current_schema()));
END
$$;
