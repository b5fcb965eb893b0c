-- 0008: the live page's change feed without NOTIFY. A notifying
-- commit takes one lock for the whole cluster and holds it through its WAL
-- flush (PostgreSQL serialises every NOTIFY-ing commit so that notices keep
-- commit order): with 0006's triggers every claim held it, so claims could
-- not share a flush and 8 claimers ran at the speed of one disk flush each
-- (bench/claims.py: 0.14-0.26 of the ceiling). Now every statement that
-- writes a board table moves a sequence instead: nextval is not
-- transactional and takes no lock past the statement. The page's one
-- watcher polls it (store/postgres.py, PostgresStore.wait_for_change), which
-- also works through a transaction pooler, where LISTEN does not.

CREATE SEQUENCE lac_change_count;

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

-- Nothing listens on the change channel any more (the body above no longer
-- names it; functions/change_feed.sql holds the current bodies).
DROP FUNCTION lac_change_channel(text);
