-- 0013 ("globs that scale"): locks indexed by their literal head.
-- lac_head(pattern) (functions/overlap.sql, paths.head) is the casefolded
-- text before a pattern's first wildcard; two patterns overlap only when one
-- head starts the other, so a grant compares a pattern only with the locks
-- this index finds (lac_require_free_all, team mode's check; the board's own
-- check does the same in Python, paths.PrefixIndex). Changed functions:
-- lac_require_free (now lac_require_free_all's one-lock form),
-- lac_api_insert_locks (one check for the whole batch).
-- The index calls lac_head, so the migration creates it first; functions/
-- re-asserts the same body after.
CREATE OR REPLACE FUNCTION lac_head(pattern text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
DECLARE
    lit text := pattern;
    ch text;
    i integer;
BEGIN
    IF strpos(pattern, '*') = 0 AND strpos(pattern, '?') = 0
       AND strpos(pattern, '[') = 0 AND strpos(pattern, E'\\') = 0 THEN
        lit := rtrim(pattern, '/');
    ELSE
        FOREACH ch IN ARRAY ARRAY['*', '?', '[', E'\\'] LOOP
            i := strpos(lit, ch);
            IF i > 0 THEN
                lit := left(lit, i - 1);
            END IF;
        END LOOP;
    END IF;
    RETURN lac_casefold(lit);
END
$$;

CREATE INDEX lac_locks_head ON lac_locks ((lac_head(pattern)) COLLATE "C");
