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
