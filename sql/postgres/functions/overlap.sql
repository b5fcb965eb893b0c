-- CREATE OR REPLACE: applied after the migrations on every board that reaches
-- the latest schema version (sql/README.md). The one place these bodies live.

-- The engine behind lac_covers (p_overlap false: does pattern p_first cover
-- the path p_second?) and lac_overlap (p_overlap true: is some path covered
-- by both patterns?). Call those two.
CREATE OR REPLACE FUNCTION lac_wildmatch(p_first text, p_second text, p_ignorecase boolean, p_overlap boolean)
    RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
DECLARE
    -- Both automata in one set of arrays: the first pattern's states, then
    -- the second's. A state has up to two character edges (charset eNc,
    -- target eNt; charset 0: no edge) and up to two empty edges (xN; 0: none).
    -- A charset is -c for the one character of code c, 1 for any character,
    -- 2 for any but `/`, or the number of a class below.
    e1c integer[]; e1t integer[]; e2c integer[]; e2t integer[];
    x1 integer[]; x2 integer[];
    acc boolean[];
    ns integer := 0;
    -- Classes: negated or not, and their ranges ilo..ihi (cfirst..clast of
    -- them). A class's ranges never hold `/` (47) unless it is negated, and a
    -- negated class always excludes `/`. Classes 1 and 2 are "any" and "any
    -- but /".
    cneg boolean[] := ARRAY[true, true];
    cfirst integer[] := ARRAY[1, 1];
    clast integer[] := ARRAY[0, 1];
    ilo integer[] := ARRAY[47];
    ihi integer[] := ARRAY[47];
    ncls integer := 2;
    niv integer := 1;

    pats text[];
    starts integer[] := ARRAY[0, 0];
    side integer;
    p text;
    q text;
    chars text[];
    n integer;
    i integer;
    j integer;
    k integer;
    ch text;
    state integer;
    nxt integer;
    dirs integer;
    cs integer;
    dbl boolean;
    neg boolean;
    first boolean;
    closed boolean;
    mark integer;
    lo integer;
    hi integer;
    heads integer[];

    -- the search
    c integer;
    ca integer;
    cb integer;
    ta integer;
    tb integer;
    a integer;
    b integer;
    pc integer;
    nc integer;
    np integer;
    ok boolean;
    found boolean;
    pos integer;
    cur integer[];
    ncur integer;
    nxts integer[];
    nnxt integer;
    seen integer[];
    step integer;
    x integer;
    y integer;
    bstart integer;
    nb integer;
    visited boolean[];
    sx integer[];
    sy integer[];
    sp integer;
    mx integer[] := array_fill(0, ARRAY[8]);
    my integer[] := array_fill(0, ARRAY[8]);
    m integer;
    lit_a boolean;
    lit_b boolean;
BEGIN
    -- Literal patterns: string comparisons (paths.covers / paths.overlap).
    lit_a := strpos(p_first, '*') = 0 AND strpos(p_first, '?') = 0
             AND strpos(p_first, '[') = 0 AND strpos(p_first, E'\\') = 0;
    IF NOT p_overlap AND lit_a THEN
        p := rtrim(p_first, '/');
        q := p_second;
        IF p_ignorecase THEN
            p := lac_lower(p);
            q := lac_lower(q);
        END IF;
        RETURN p IN ('', '**') OR q = p OR starts_with(q, p || '/');
    END IF;
    IF p_overlap THEN
        lit_b := strpos(p_second, '*') = 0 AND strpos(p_second, '?') = 0
                 AND strpos(p_second, '[') = 0 AND strpos(p_second, E'\\') = 0;
        IF lit_a AND lit_b THEN
            p := rtrim(p_first, '/');
            q := rtrim(p_second, '/');
            IF p_ignorecase THEN
                p := lac_lower(p);
                q := lac_lower(q);
            END IF;
            RETURN p IN ('', '**') OR q = p OR starts_with(q, p || '/')
                OR q IN ('', '**') OR starts_with(p, q || '/');
        END IF;
        pats := ARRAY[p_first, p_second];
    ELSE
        pats := ARRAY[p_first];
    END IF;

    -- Fold, drop trailing slashes (paths.compile_pattern), and compare the
    -- literal heads: every path a pattern covers starts with the characters
    -- before its first `*?[\`, so two heads that differ share no path.
    heads := ARRAY[0, 0];
    FOR side IN 1 .. array_length(pats, 1) LOOP
        p := pats[side];
        IF p_ignorecase THEN
            p := lac_lower(p);
        END IF;
        p := rtrim(p, '/');
        IF p = '' THEN
            p := '**';
        END IF;
        pats[side] := p;
        k := length(p) + 1;
        FOREACH ch IN ARRAY ARRAY['*', '?', '[', E'\\'] LOOP
            i := strpos(p, ch);
            IF i > 0 AND i < k THEN
                k := i;
            END IF;
        END LOOP;
        heads[side] := k - 1;
    END LOOP;
    -- When they agree, the common head up to its last `/` is dropped from
    -- both (and from the path): what follows starts a component there as it
    -- did in the whole pattern, so it is parsed alike, and covers exactly
    -- what the whole covers after the head.
    IF p_overlap THEN
        k := least(heads[1], heads[2]);
        p := left(pats[1], k);
        IF p <> left(pats[2], k) THEN
            RETURN false;
        END IF;
    ELSE
        q := CASE WHEN p_ignorecase THEN lac_lower(p_second) ELSE p_second END;
        p := left(pats[1], heads[1]);
        IF NOT starts_with(q, p) THEN
            RETURN false;
        END IF;
    END IF;
    i := strpos(reverse(p), '/');
    IF i > 0 THEN
        k := length(p) - i + 1;  -- the head's last "/"
        pats[1] := substr(pats[1], k + 1);
        IF p_overlap THEN
            pats[2] := substr(pats[2], k + 1);
        ELSE
            q := substr(q, k + 1);
        END IF;
    END IF;
    n := length(pats[1]) + coalesce(length(pats[2]), 0) + 4;
    e1c := array_fill(0, ARRAY[n]);
    e1t := e1c; e2c := e1c; e2t := e1c; x1 := e1c; x2 := e1c;
    acc := array_fill(false, ARRAY[n]);

    -- Build the automata: paths.compile_pattern, statement for statement
    -- (Python's 0-based pattern[i] is chars[i + 1] here).
    FOR side IN 1 .. array_length(pats, 1) LOOP
        chars := string_to_array(pats[side], NULL);
        n := coalesce(array_length(chars, 1), 0);
        ns := ns + 1;
        state := ns;
        starts[side] := state;
        i := 0;
        WHILE i < n LOOP
            ch := chars[i + 1];
            IF ch = '*' THEN
                j := i;
                WHILE j < n AND chars[j + 1] = '*' LOOP
                    j := j + 1;
                END LOOP;
                dbl := j - i >= 2 AND (i = 0 OR chars[i] = '/') AND (j = n OR chars[j + 1] = '/');
                IF dbl AND j < n THEN  -- "**/": nothing, or anything ending in "/"
                    dirs := ns + 1;
                    nxt := ns + 2;
                    ns := ns + 2;
                    x1[state] := nxt;
                    x2[state] := dirs;
                    e1c[dirs] := 1;
                    e1t[dirs] := dirs;
                    e2c[dirs] := -47;
                    e2t[dirs] := nxt;
                    state := nxt;
                    i := j + 1;
                    CONTINUE;
                END IF;
                ns := ns + 1;
                nxt := ns;
                e1c[state] := CASE WHEN dbl THEN 1 ELSE 2 END;
                e1t[state] := state;
                x1[state] := nxt;
                state := nxt;
                i := j;
                CONTINUE;
            END IF;
            cs := NULL;
            IF ch = '?' THEN
                cs := 2;
                i := i + 1;
            ELSIF ch = '[' THEN
                -- paths._parse_class: None when unterminated (then `[` is literal)
                j := i + 1;
                neg := j < n AND chars[j + 1] IN ('!', '^');
                IF neg THEN
                    j := j + 1;
                END IF;
                mark := niv;
                first := true;
                closed := false;
                WHILE j < n LOOP
                    ch := chars[j + 1];
                    IF ch = ']' AND NOT first THEN
                        closed := true;
                        EXIT;
                    END IF;
                    first := false;
                    IF ch = E'\\' AND j + 1 < n THEN
                        j := j + 1;
                        ch := chars[j + 1];
                    END IF;
                    lo := ascii(ch);
                    hi := lo;
                    IF j + 2 < n AND chars[j + 2] = '-' AND chars[j + 3] <> ']' THEN
                        hi := least(ascii(chars[j + 3]), lo + 65536);
                        j := j + 3;
                    ELSE
                        j := j + 1;
                    END IF;
                    IF lo > hi THEN
                        CONTINUE;
                    END IF;
                    IF NOT neg AND lo <= 47 AND hi >= 47 THEN  -- chars.discard("/")
                        IF lo <= 46 THEN
                            niv := niv + 1;
                            ilo[niv] := lo;
                            ihi[niv] := 46;
                        END IF;
                        IF hi >= 48 THEN
                            niv := niv + 1;
                            ilo[niv] := 48;
                            ihi[niv] := hi;
                        END IF;
                    ELSE
                        niv := niv + 1;
                        ilo[niv] := lo;
                        ihi[niv] := hi;
                    END IF;
                END LOOP;
                IF closed THEN
                    IF neg THEN  -- a negated class never matches "/" either
                        niv := niv + 1;
                        ilo[niv] := 47;
                        ihi[niv] := 47;
                    END IF;
                    ncls := ncls + 1;
                    cneg[ncls] := neg;
                    cfirst[ncls] := mark + 1;
                    clast[ncls] := niv;
                    cs := ncls;
                    i := j + 1;
                ELSE
                    niv := mark;
                    cs := -91;  -- "["
                    i := i + 1;
                END IF;
            ELSIF ch = E'\\' AND i + 1 < n THEN
                cs := -ascii(chars[i + 2]);
                i := i + 2;
            ELSE
                cs := -ascii(ch);
                i := i + 1;
            END IF;
            ns := ns + 1;
            nxt := ns;
            e1c[state] := cs;
            e1t[state] := nxt;
            state := nxt;
        END LOOP;
        -- Covering a directory covers everything below it.
        ns := ns + 1;
        e1c[state] := -47;
        e1t[state] := ns;
        e1c[ns] := 1;
        e1t[ns] := ns;
        acc[state] := true;
        acc[ns] := true;
    END LOOP;

    IF NOT p_overlap THEN
        -- Run the path through the automaton: the set of states it can be
        -- in (cur), closed under empty edges; seen[s] = the step s was added.
        chars := string_to_array(q, NULL);
        seen := array_fill(0, ARRAY[ns]);
        cur := array_fill(0, ARRAY[ns]);
        nxts := cur;
        step := 1;
        cur[1] := 1;
        ncur := 1;
        seen[1] := 1;
        pos := 0;
        LOOP
            -- close cur under empty edges
            i := 1;
            WHILE i <= ncur LOOP
                x := cur[i];
                IF x1[x] <> 0 AND seen[x1[x]] <> step THEN
                    seen[x1[x]] := step;
                    ncur := ncur + 1;
                    cur[ncur] := x1[x];
                END IF;
                IF x2[x] <> 0 AND seen[x2[x]] <> step THEN
                    seen[x2[x]] := step;
                    ncur := ncur + 1;
                    cur[ncur] := x2[x];
                END IF;
                i := i + 1;
            END LOOP;
            pos := pos + 1;
            EXIT WHEN pos > coalesce(array_length(chars, 1), 0);
            c := ascii(chars[pos]);
            step := step + 1;
            nnxt := 0;
            FOR i IN 1 .. ncur LOOP
                x := cur[i];
                FOR a IN 1 .. 2 LOOP
                    IF a = 1 THEN
                        cs := e1c[x];
                        ta := e1t[x];
                    ELSE
                        cs := e2c[x];
                        ta := e2t[x];
                    END IF;
                    CONTINUE WHEN cs = 0 OR seen[ta] = step;
                    IF cs < 0 THEN
                        ok := c = -cs;
                    ELSE
                        found := false;
                        FOR k IN cfirst[cs] .. clast[cs] LOOP
                            IF c BETWEEN ilo[k] AND ihi[k] THEN
                                found := true;
                                EXIT;
                            END IF;
                        END LOOP;
                        ok := found <> cneg[cs];
                    END IF;
                    IF ok THEN
                        seen[ta] := step;
                        nnxt := nnxt + 1;
                        nxts[nnxt] := ta;
                    END IF;
                END LOOP;
            END LOOP;
            IF nnxt = 0 THEN
                RETURN false;
            END IF;
            cur := nxts;
            ncur := nnxt;
        END LOOP;
        FOR i IN 1 .. ncur LOOP
            IF acc[cur[i]] THEN
                RETURN true;
            END IF;
        END LOOP;
        RETURN false;
    END IF;

    -- Overlap: search the product for a pair of accepting states. Moves:
    -- either side alone along an empty edge, or both along character edges
    -- whose charsets share a character (paths.CharSet.meets). Each pair is
    -- pushed once (visited), so the search ends after at most |A| * |B| pairs.
    bstart := starts[2];
    nb := ns - bstart + 1;
    visited := array_fill(false, ARRAY[(bstart - 1) * nb]);
    sx := ARRAY[1];
    sy := ARRAY[bstart];
    visited[1] := true;  -- the pair (1, bstart)
    sp := 1;
    WHILE sp > 0 LOOP
        x := sx[sp];
        y := sy[sp];
        sp := sp - 1;
        IF acc[x] AND acc[y] THEN
            RETURN true;
        END IF;
        m := 0;
        IF x1[x] <> 0 THEN m := m + 1; mx[m] := x1[x]; my[m] := y; END IF;
        IF x2[x] <> 0 THEN m := m + 1; mx[m] := x2[x]; my[m] := y; END IF;
        IF x1[y] <> 0 THEN m := m + 1; mx[m] := x; my[m] := x1[y]; END IF;
        IF x2[y] <> 0 THEN m := m + 1; mx[m] := x; my[m] := x2[y]; END IF;
        FOR a IN 1 .. 2 LOOP
            IF a = 1 THEN
                ca := e1c[x];
                ta := e1t[x];
            ELSE
                ca := e2c[x];
                ta := e2t[x];
            END IF;
            CONTINUE WHEN ca = 0;
            FOR b IN 1 .. 2 LOOP
                IF b = 1 THEN
                    cb := e1c[y];
                    tb := e1t[y];
                ELSE
                    cb := e2c[y];
                    tb := e2t[y];
                END IF;
                CONTINUE WHEN cb = 0;
                IF ca < 0 AND cb < 0 THEN
                    ok := ca = cb;
                ELSIF ca < 0 OR cb < 0 THEN  -- one character against a class
                    c := -least(ca, cb);
                    cs := greatest(ca, cb);
                    found := false;
                    FOR k IN cfirst[cs] .. clast[cs] LOOP
                        IF c BETWEEN ilo[k] AND ihi[k] THEN
                            found := true;
                            EXIT;
                        END IF;
                    END LOOP;
                    ok := found <> cneg[cs];
                ELSIF cneg[ca] AND cneg[cb] THEN  -- two co-finite sets: they meet
                    ok := true;
                ELSIF NOT cneg[ca] AND NOT cneg[cb] THEN  -- two finite sets: ranges cross?
                    ok := false;
                    FOR i IN cfirst[ca] .. clast[ca] LOOP
                        FOR j IN cfirst[cb] .. clast[cb] LOOP
                            IF greatest(ilo[i], ilo[j]) <= least(ihi[i], ihi[j]) THEN
                                ok := true;
                                EXIT;
                            END IF;
                        END LOOP;
                        EXIT WHEN ok;
                    END LOOP;
                ELSE
                    -- A finite set P against a co-finite one (everything but
                    -- N): does P hold a character outside N? If so, the least
                    -- such is the start of one of P's ranges or one past the
                    -- end of one of N's: try those.
                    IF cneg[ca] THEN
                        pc := cb;
                        nc := ca;
                    ELSE
                        pc := ca;
                        nc := cb;
                    END IF;
                    np := clast[pc] - cfirst[pc] + 1;
                    ok := false;
                    FOR i IN 1 .. np + clast[nc] - cfirst[nc] + 1 LOOP
                        c := CASE WHEN i <= np THEN ilo[cfirst[pc] + i - 1]
                                  ELSE ihi[cfirst[nc] + i - np - 1] + 1 END;
                        found := false;  -- c in P?
                        FOR k IN cfirst[pc] .. clast[pc] LOOP
                            IF c BETWEEN ilo[k] AND ihi[k] THEN
                                found := true;
                                EXIT;
                            END IF;
                        END LOOP;
                        CONTINUE WHEN NOT found;
                        found := false;  -- c in N?
                        FOR k IN cfirst[nc] .. clast[nc] LOOP
                            IF c BETWEEN ilo[k] AND ihi[k] THEN
                                found := true;
                                EXIT;
                            END IF;
                        END LOOP;
                        IF NOT found THEN
                            ok := true;
                            EXIT;
                        END IF;
                    END LOOP;
                END IF;
                IF ok THEN
                    m := m + 1;
                    mx[m] := ta;
                    my[m] := tb;
                END IF;
            END LOOP;
        END LOOP;
        FOR i IN 1 .. m LOOP
            k := (mx[i] - 1) * nb + (my[i] - bstart + 1);
            IF NOT visited[k] THEN
                visited[k] := true;
                sp := sp + 1;
                sx[sp] := mx[i];
                sy[sp] := my[i];
            END IF;
        END LOOP;
    END LOOP;
    RETURN false;
END
$$;

-- Does `pattern` cover the concrete repo-relative `path`? (paths.covers)
CREATE OR REPLACE FUNCTION lac_covers(pattern text, path text, ignorecase boolean) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
BEGIN
    RETURN lac_wildmatch(pattern, path, ignorecase, false);
END
$$;

-- Is there a path both patterns cover? (paths.overlap) Two locks conflict
-- when this holds, one of them is a write, and their holders differ.
CREATE OR REPLACE FUNCTION lac_overlap(a text, b text, ignorecase boolean) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
BEGIN
    RETURN lac_wildmatch(a, b, ignorecase, true);
END
$$;

-- The lock index key (paths.index_key): the directory part of the pattern's
-- literal head, casefolded. A lock can overlap a pattern only when its key is
-- one of lac_ancestor_keys(the pattern's key) or starts with that key, so a
-- grant need compare a new lock only with the locks found by
--   key = ANY (lac_ancestor_keys(k)) OR (key >= k AND key < k || E'\U0010ffff')
-- (lac_locks.key is COLLATE "C"; the same filter as the query candidate_locks).
CREATE OR REPLACE FUNCTION lac_index_key(pattern text) RETURNS text
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
    i := strpos(reverse(lit), '/');
    IF i = 0 THEN
        RETURN '';
    END IF;
    RETURN lac_casefold(left(lit, length(lit) - i + 1));
END
$$;

-- 'a/b/' -> {'', 'a/', 'a/b/'} (paths.ancestor_keys).
CREATE OR REPLACE FUNCTION lac_ancestor_keys(key text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT ARRAY[''] || ARRAY(SELECT left(key, i) FROM generate_series(1, length(key)) AS i
                               WHERE substr(key, i, 1) = '/' ORDER BY i)
$$;

-- The literal head (paths.head): the characters before the first `*?[\`
-- (a plain path or dir/: the whole path, its trailing `/` dropped),
-- casefolded. Every path a pattern covers starts with its head, so two
-- patterns overlap only when one's head starts the other's: the expression
-- index lac_locks_head (0013) finds a pattern's candidates as
--   lac_head(pattern) = ANY (lac_head_prefixes(h))       (the heads above h)
--   OR h < lac_head(pattern) < lac_head_end(h)            (the heads below it)
-- and only those are compared with lac_overlap (lac_require_free_all).
-- Changing this body changes what lac_locks_head holds: a migration must
-- REINDEX it.
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

-- 'ab' -> {'', 'a', 'ab'}: the heads a head's candidates may have above it.
CREATE OR REPLACE FUNCTION lac_head_prefixes(head text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT ARRAY(SELECT left(head, i) FROM generate_series(0, length(head)) AS i ORDER BY i)
$$;

-- The least text above every text that starts with `prefix` (code point
-- order, which is COLLATE "C" order in UTF-8): its last character below
-- U+10FFFF incremented, what follows dropped. NULL when there is none (''
-- or only U+10FFFF): every text above `prefix` then starts with it. Exact
-- where `prefix || U+10FFFF` is not: 'a' || U+10FFFF || 'b' starts with 'a'
-- and sorts after it.
CREATE OR REPLACE FUNCTION lac_head_end(prefix text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
DECLARE
    n integer := length(prefix);
    c integer;
BEGIN
    WHILE n > 0 LOOP
        c := ascii(substr(prefix, n, 1));
        IF c < 1114111 THEN  -- U+10FFFF; U+D7FF's successor skips the surrogates
            RETURN left(prefix, n - 1) || chr(CASE WHEN c = 55295 THEN 57344 ELSE c + 1 END);
        END IF;
        n := n - 1;
    END LOOP;
    RETURN NULL;
END
$$;
