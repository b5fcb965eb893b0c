-- 0004: placeholder on branch `team` for the overlap helper's lac_overlap /
-- lac_covers (the coordinator keeps overlap's file at merge time). This
-- STAND-IN is exact for literal patterns (paths and dir/ subtrees) and, for
-- globs, conservative: two patterns whose literal prefixes nest are taken to
-- overlap. Only team mode's lock-grant function calls it.

CREATE FUNCTION lac_covers(p_pattern text, p_path text, p_ignorecase boolean) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN p_ignorecase THEN lower(rtrim(p_pattern, '/')) ELSE rtrim(p_pattern, '/') END
               IN ('', '**')
        OR (CASE WHEN p_ignorecase THEN lower(p_path) ELSE p_path END)
           = (CASE WHEN p_ignorecase THEN lower(rtrim(p_pattern, '/')) ELSE rtrim(p_pattern, '/') END)
        OR starts_with(CASE WHEN p_ignorecase THEN lower(p_path) ELSE p_path END,
                       (CASE WHEN p_ignorecase THEN lower(rtrim(p_pattern, '/'))
                             ELSE rtrim(p_pattern, '/') END) || '/')
    $$;

CREATE FUNCTION lac_overlap(p_first text, p_second text, p_ignorecase boolean) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE
        WHEN p_first !~ '[*?[\\]' AND p_second !~ '[*?[\\]' THEN
            lac_covers(p_first, rtrim(p_second, '/'), p_ignorecase)
            OR lac_covers(p_second, rtrim(p_first, '/'), p_ignorecase)
        ELSE
            starts_with(lower(substring(p_first FROM '^[^*?[\\]*')),
                        lower(substring(p_second FROM '^[^*?[\\]*')))
            OR starts_with(lower(substring(p_second FROM '^[^*?[\\]*')),
                           lower(substring(p_first FROM '^[^*?[\\]*')))
        END
    $$;

-- lac_index_key / lac_ancestor_keys (paths.index_key / ancestor_keys), with
-- the same signatures as overlap's: this stand-in folds case with lower(),
-- overlap's with Python's casefold exactly.
CREATE FUNCTION lac_index_key(pattern text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$
    SELECT coalesce(lower(substring(lit FROM '^(.*/)')), '')
      FROM (SELECT CASE WHEN pattern !~ '[*?[\\]' THEN rtrim(pattern, '/')
                        ELSE substring(pattern FROM '^[^*?[\\]*') END AS lit) AS l
    $$;

CREATE FUNCTION lac_ancestor_keys(key text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT
    AS $$
    SELECT ARRAY[''] || ARRAY(SELECT left(key, i) FROM generate_series(1, length(key)) AS i
                               WHERE substr(key, i, 1) = '/' ORDER BY i)
    $$;
