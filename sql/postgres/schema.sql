-- The whole current schema of a team board, applied in one go by a fresh
-- `git lac init --url postgresql://...`. Older boards reach the same schema
-- through the numbered migrations beside this file (tests/test_migrations.py).
-- Times are epoch seconds taken from the server clock, so that workers on
-- several machines agree on heartbeat ages.

CREATE FUNCTION lac_now() RETURNS double precision
    LANGUAGE sql STABLE
    AS $$ SELECT extract(epoch FROM now())::double precision $$;

CREATE TABLE lac_tasks (
    id           bigserial PRIMARY KEY,
    title        text             NOT NULL,
    body         text             NOT NULL DEFAULT '',
    lane         text             NOT NULL DEFAULT 'default',
    priority     integer          NOT NULL DEFAULT 0,
    state        text             NOT NULL DEFAULT 'open'
                 CHECK (state IN ('open', 'claimed', 'done', 'cancelled', 'parked')),
    owner        text,
    claimed_at   double precision,
    heartbeat_at double precision,
    stale_after  double precision,
    attempts     integer          NOT NULL DEFAULT 0,
    needs        jsonb            NOT NULL DEFAULT '[]',
    created_at   double precision NOT NULL DEFAULT lac_now(),
    created_by   text             NOT NULL,
    instance     text  -- the holder's instance (0002)
);
-- Only open tasks are queued: a claim takes its row out of this index.
CREATE INDEX lac_tasks_queue ON lac_tasks (lane, priority DESC, created_at, id) WHERE state = 'open';
CREATE INDEX lac_tasks_owner ON lac_tasks (owner, state);
-- The keeper's sweep looks only at claims, oldest heartbeat first.
CREATE INDEX lac_tasks_heartbeat ON lac_tasks (heartbeat_at) WHERE state = 'claimed';

CREATE TABLE lac_task_deps (
    task_id    bigint NOT NULL REFERENCES lac_tasks (id),
    depends_on bigint NOT NULL REFERENCES lac_tasks (id),
    PRIMARY KEY (task_id, depends_on)
);
CREATE INDEX lac_task_deps_on ON lac_task_deps (depends_on);

CREATE TABLE lac_task_paths (
    task_id bigint NOT NULL REFERENCES lac_tasks (id),
    pattern text   NOT NULL,
    mode    text   NOT NULL CHECK (mode IN ('r', 'w')),
    PRIMARY KEY (task_id, pattern)
);

CREATE TABLE lac_locks (
    id          bigserial PRIMARY KEY,
    pattern     text             NOT NULL,
    key         text COLLATE "C" NOT NULL,
    mode        text             NOT NULL CHECK (mode IN ('r', 'w')),
    agent       text             NOT NULL,
    task_id     bigint REFERENCES lac_tasks (id),
    acquired_at double precision NOT NULL DEFAULT lac_now(),
    base_blob   text,
    instance    text  -- the holder's instance (0002)
);
CREATE INDEX lac_locks_key ON lac_locks (key);
CREATE INDEX lac_locks_task ON lac_locks (task_id);
CREATE INDEX lac_locks_agent ON lac_locks (agent, pattern);

CREATE TABLE lac_agents (
    name         text PRIMARY KEY,
    capabilities jsonb            NOT NULL DEFAULT '[]',
    last_seen    double precision NOT NULL DEFAULT lac_now()
);

-- Where agents run (0002): one working tree of one clone, by host and path.
CREATE TABLE lac_instances (
    id        text PRIMARY KEY,
    agent     text NOT NULL,
    host      text NOT NULL,
    path      text NOT NULL,
    last_seen double precision NOT NULL DEFAULT lac_now()
);

CREATE TABLE lac_events (
    id      bigserial PRIMARY KEY,
    at      double precision NOT NULL DEFAULT lac_now(),
    task_id bigint,
    agent   text             NOT NULL,
    kind    text             NOT NULL,
    detail  jsonb            NOT NULL DEFAULT '{}'
);
CREATE INDEX lac_events_task ON lac_events (task_id, id);

CREATE TABLE lac_settings (
    name  text PRIMARY KEY,
    value text NOT NULL
);

-- The one rule "may this agent claim this task" (state aside, which the
-- claiming UPDATE checks itself): every dependency done, every capability
-- the task needs held by the agent. Every claimer uses it, as
--   EXISTS (SELECT 1 FROM lac_claimable(t.id, :agent) AS ok WHERE ok)
-- (`SELECT lac_claimable(12, 'dana')` answers for one task). Why a one-row
-- set-returning SQL function: a scalar SQL function with sub-selects is never
-- inlined and is planned again by every query that calls it (1.3 ms per
-- claim); this one is inlined into the caller's plan like a view, so the
-- prepared claim statement carries the rule at no call cost.
CREATE FUNCTION lac_claimable(p_task bigint, p_agent text) RETURNS SETOF boolean
    LANGUAGE sql STABLE ROWS 1
    AS $$
    SELECT NOT EXISTS (
               SELECT 1 FROM lac_task_deps d JOIN lac_tasks dt ON dt.id = d.depends_on
                WHERE d.task_id = p_task AND dt.state <> 'done')
       AND coalesce((SELECT t.needs <@ coalesce(
                                (SELECT a.capabilities FROM lac_agents a WHERE a.name = p_agent),
                                '[]'::jsonb)
                       FROM lac_tasks t WHERE t.id = p_task), false)
    $$;

-- 0003 (issue 12, lists that scale): the paged listings of tasks.
CREATE INDEX lac_tasks_live ON lac_tasks (id) WHERE state NOT IN ('done', 'cancelled');
CREATE INDEX lac_tasks_live_lane ON lac_tasks (lane, id) WHERE state NOT IN ('done', 'cancelled');
CREATE INDEX lac_tasks_state ON lac_tasks (state, id);

-- 0004: the overlap rule of git_lacunari/paths.py on the server, so that a
-- write function (team mode) can judge a lock without trusting its caller.
--
--   lac_covers(pattern, path, ignorecase)  = paths.covers(pattern, path, ignorecase)
--   lac_overlap(a, b, ignorecase)          = paths.overlap(a, b, ignorecase)
--   lac_index_key(pattern)                 = paths.index_key(pattern)
--   lac_ancestor_keys(key)                 = paths.ancestor_keys(key)
--   lac_lower(s), lac_casefold(s)          = str.lower(), str.casefold()
--
-- Exactly, not approximately: tests/test_overlap_sql.py compares each with
-- Python on generated patterns and paths. Patterns are expected as
-- paths.normalize returns them (repo-relative, no `.`/`..`/empty components,
-- a trailing `/` for a subtree), but nothing here depends on that: any text
-- gets the answer paths.py would give it. The database encoding must be UTF8
-- (characters are code points, as in Python).
--
-- The rule, as paths.py has it: git's wildmatch with WM_PATHNAME (`*`, `?`
-- and classes never match `/`; `**` as a whole component crosses
-- directories; `**/` at the start or in the middle matches zero or more
-- directories; `\` escapes; `[...]` with ranges, `!` or `^` negation, `]`
-- first taken literally, an unterminated `[` literal, no `[:alpha:]` names);
-- a pattern covers a path it matches and everything below it; trailing
-- slashes are dropped before matching. Under ignorecase both sides are folded
-- with Python's str.lower() (lac_lower) before anything else.
--
-- How: each pattern becomes the same small automaton as paths.compile_pattern
-- (one state per pattern character at most, plus two: at most two character
-- edges and two empty edges a state). lac_covers runs the path through it
-- (cost O(len(path) * len(pattern))); lac_overlap searches the product of
-- the two automata, where a pair of states is visited at most once: cost
-- O(len(a) * len(b)) pairs, times the cost of comparing two character
-- classes (their ranges), never exponential whatever the stars; memory
-- O(len(a) * len(b)) bits for the visited pairs. Literal patterns (no
-- `*?[\`) are compared as strings, as paths.py does; two patterns whose
-- literal heads differ are told apart before any automaton is built, and a
-- head they share (up to its last `/`) is dropped first.
--
-- One deliberate quirk is kept because paths.py has it: two negated classes
-- are taken to share a character even when together they exclude every one
-- (CharSet.meets: the safe side, an overlap reported).

-- The engine behind lac_covers (p_overlap false: does pattern p_first cover
-- the path p_second?) and lac_overlap (p_overlap true: is some path covered
-- by both patterns?). Call those two.
CREATE FUNCTION lac_wildmatch(p_first text, p_second text, p_ignorecase boolean, p_overlap boolean)
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
CREATE FUNCTION lac_covers(pattern text, path text, ignorecase boolean) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path FROM CURRENT
    AS $$
BEGIN
    RETURN lac_wildmatch(pattern, path, ignorecase, false);
END
$$;

-- Is there a path both patterns cover? (paths.overlap) Two locks conflict
-- when this holds, one of them is a write, and their holders differ.
CREATE FUNCTION lac_overlap(a text, b text, ignorecase boolean) RETURNS boolean
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
CREATE FUNCTION lac_index_key(pattern text) RETURNS text
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
CREATE FUNCTION lac_ancestor_keys(key text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT ARRAY[''] || ARRAY(SELECT left(key, i) FROM generate_series(1, length(key)) AS i
                               WHERE substr(key, i, 1) = '/' ORDER BY i)
$$;

-- BEGIN generated by git_lacunari.casemap (Unicode 14.0.0): do not edit.
-- Regenerate with `python -m git_lacunari.casemap --write`.

-- Python's str.lower(), exactly: one-to-one mappings, U+0130 to two
-- characters, and CPython's Final_Sigma rule for U+03A3 (decided on the
-- original text, before anything is mapped).
CREATE FUNCTION lac_lower(s text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
BEGIN
    IF octet_length(s) = length(s) THEN
        RETURN translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
    END IF;
    IF strpos(s, E'\u03a3') > 0 THEN
        s := regexp_replace(s,
            E'(?<=[\\u0041-\\u005a\\u0061-\\u007a\\u00aa\\u00b5\\u00ba\\u00c0-\\u00d6\\u00d8-\\u00f6'
            '\\u00f8-\\u01ba\\u01bc-\\u01bf\\u01c4-\\u0293\\u0295-\\u02af\\u0370-\\u0373'
            '\\u0376-\\u0377\\u037b-\\u037d\\u037f\\u0386\\u0388-\\u038a\\u038c\\u038e-\\u03a1'
            '\\u03a3-\\u03f5\\u03f7-\\u0481\\u048a-\\u052f\\u0531-\\u0556\\u0560-\\u0588'
            '\\u10a0-\\u10c5\\u10c7\\u10cd\\u10d0-\\u10fa\\u10fd-\\u10ff\\u13a0-\\u13f5'
            '\\u13f8-\\u13fd\\u1c80-\\u1c88\\u1c90-\\u1cba\\u1cbd-\\u1cbf\\u1d00-\\u1d2b'
            '\\u1d6b-\\u1d77\\u1d79-\\u1d9a\\u1e00-\\u1f15\\u1f18-\\u1f1d\\u1f20-\\u1f45'
            '\\u1f48-\\u1f4d\\u1f50-\\u1f57\\u1f59\\u1f5b\\u1f5d\\u1f5f-\\u1f7d\\u1f80-\\u1fb4'
            '\\u1fb6-\\u1fbc\\u1fbe\\u1fc2-\\u1fc4\\u1fc6-\\u1fcc\\u1fd0-\\u1fd3\\u1fd6-\\u1fdb'
            '\\u1fe0-\\u1fec\\u1ff2-\\u1ff4\\u1ff6-\\u1ffc\\u2102\\u2107\\u210a-\\u2113\\u2115'
            '\\u2119-\\u211d\\u2124\\u2126\\u2128\\u212a-\\u212d\\u212f-\\u2134\\u2139\\u213c-\\u213f'
            '\\u2145-\\u2149\\u214e\\u2160-\\u217f\\u2183-\\u2184\\u24b6-\\u24e9\\u2c00-\\u2c7b'
            '\\u2c7e-\\u2ce4\\u2ceb-\\u2cee\\u2cf2-\\u2cf3\\u2d00-\\u2d25\\u2d27\\u2d2d'
            '\\ua640-\\ua66d\\ua680-\\ua69b\\ua722-\\ua76f\\ua771-\\ua787\\ua78b-\\ua78e'
            '\\ua790-\\ua7ca\\ua7d0-\\ua7d1\\ua7d3\\ua7d5-\\ua7d9\\ua7f5-\\ua7f6\\ua7fa'
            '\\uab30-\\uab5a\\uab60-\\uab68\\uab70-\\uabbf\\ufb00-\\ufb06\\ufb13-\\ufb17'
            '\\uff21-\\uff3a\\uff41-\\uff5a\\U00010400-\\U0001044f\\U000104b0-\\U000104d3'
            '\\U000104d8-\\U000104fb\\U00010570-\\U0001057a\\U0001057c-\\U0001058a'
            '\\U0001058c-\\U00010592\\U00010594-\\U00010595\\U00010597-\\U000105a1'
            '\\U000105a3-\\U000105b1\\U000105b3-\\U000105b9\\U000105bb-\\U000105bc'
            '\\U00010c80-\\U00010cb2\\U00010cc0-\\U00010cf2\\U000118a0-\\U000118df'
            '\\U00016e40-\\U00016e7f\\U0001d400-\\U0001d454\\U0001d456-\\U0001d49c'
            '\\U0001d49e-\\U0001d49f\\U0001d4a2\\U0001d4a5-\\U0001d4a6\\U0001d4a9-\\U0001d4ac'
            '\\U0001d4ae-\\U0001d4b9\\U0001d4bb\\U0001d4bd-\\U0001d4c3\\U0001d4c5-\\U0001d505'
            '\\U0001d507-\\U0001d50a\\U0001d50d-\\U0001d514\\U0001d516-\\U0001d51c'
            '\\U0001d51e-\\U0001d539\\U0001d53b-\\U0001d53e\\U0001d540-\\U0001d544\\U0001d546'
            '\\U0001d54a-\\U0001d550\\U0001d552-\\U0001d6a5\\U0001d6a8-\\U0001d6c0'
            '\\U0001d6c2-\\U0001d6da\\U0001d6dc-\\U0001d6fa\\U0001d6fc-\\U0001d714'
            '\\U0001d716-\\U0001d734\\U0001d736-\\U0001d74e\\U0001d750-\\U0001d76e'
            '\\U0001d770-\\U0001d788\\U0001d78a-\\U0001d7a8\\U0001d7aa-\\U0001d7c2'
            '\\U0001d7c4-\\U0001d7cb\\U0001df00-\\U0001df09\\U0001df0b-\\U0001df1e'
            '\\U0001e900-\\U0001e943\\U0001f130-\\U0001f149\\U0001f150-\\U0001f169'
            '\\U0001f170-\\U0001f189][\\u0027\\u002e\\u003a\\u005e\\u0060\\u00a8\\u00ad\\u00af\\u00b4'
            '\\u00b7-\\u00b8\\u02b0-\\u036f\\u0374-\\u0375\\u037a\\u0384-\\u0385\\u0387'
            '\\u0483-\\u0489\\u0559\\u055f\\u0591-\\u05bd\\u05bf\\u05c1-\\u05c2\\u05c4-\\u05c5\\u05c7'
            '\\u05f4\\u0600-\\u0605\\u0610-\\u061a\\u061c\\u0640\\u064b-\\u065f\\u0670\\u06d6-\\u06dd'
            '\\u06df-\\u06e8\\u06ea-\\u06ed\\u070f\\u0711\\u0730-\\u074a\\u07a6-\\u07b0'
            '\\u07eb-\\u07f5\\u07fa\\u07fd\\u0816-\\u082d\\u0859-\\u085b\\u0888\\u0890-\\u0891'
            '\\u0898-\\u089f\\u08c9-\\u0902\\u093a\\u093c\\u0941-\\u0948\\u094d\\u0951-\\u0957'
            '\\u0962-\\u0963\\u0971\\u0981\\u09bc\\u09c1-\\u09c4\\u09cd\\u09e2-\\u09e3\\u09fe'
            '\\u0a01-\\u0a02\\u0a3c\\u0a41-\\u0a42\\u0a47-\\u0a48\\u0a4b-\\u0a4d\\u0a51'
            '\\u0a70-\\u0a71\\u0a75\\u0a81-\\u0a82\\u0abc\\u0ac1-\\u0ac5\\u0ac7-\\u0ac8\\u0acd'
            '\\u0ae2-\\u0ae3\\u0afa-\\u0aff\\u0b01\\u0b3c\\u0b3f\\u0b41-\\u0b44\\u0b4d\\u0b55-\\u0b56'
            '\\u0b62-\\u0b63\\u0b82\\u0bc0\\u0bcd\\u0c00\\u0c04\\u0c3c\\u0c3e-\\u0c40\\u0c46-\\u0c48'
            '\\u0c4a-\\u0c4d\\u0c55-\\u0c56\\u0c62-\\u0c63\\u0c81\\u0cbc\\u0cbf\\u0cc6\\u0ccc-\\u0ccd'
            '\\u0ce2-\\u0ce3\\u0d00-\\u0d01\\u0d3b-\\u0d3c\\u0d41-\\u0d44\\u0d4d\\u0d62-\\u0d63'
            '\\u0d81\\u0dca\\u0dd2-\\u0dd4\\u0dd6\\u0e31\\u0e34-\\u0e3a\\u0e46-\\u0e4e\\u0eb1'
            '\\u0eb4-\\u0ebc\\u0ec6\\u0ec8-\\u0ecd\\u0f18-\\u0f19\\u0f35\\u0f37\\u0f39\\u0f71-\\u0f7e'
            '\\u0f80-\\u0f84\\u0f86-\\u0f87\\u0f8d-\\u0f97\\u0f99-\\u0fbc\\u0fc6\\u102d-\\u1030'
            '\\u1032-\\u1037\\u1039-\\u103a\\u103d-\\u103e\\u1058-\\u1059\\u105e-\\u1060'
            '\\u1071-\\u1074\\u1082\\u1085-\\u1086\\u108d\\u109d\\u10fc\\u135d-\\u135f\\u1712-\\u1714'
            '\\u1732-\\u1733\\u1752-\\u1753\\u1772-\\u1773\\u17b4-\\u17b5\\u17b7-\\u17bd\\u17c6'
            '\\u17c9-\\u17d3\\u17d7\\u17dd\\u180b-\\u180f\\u1843\\u1885-\\u1886\\u18a9\\u1920-\\u1922'
            '\\u1927-\\u1928\\u1932\\u1939-\\u193b\\u1a17-\\u1a18\\u1a1b\\u1a56\\u1a58-\\u1a5e\\u1a60'
            '\\u1a62\\u1a65-\\u1a6c\\u1a73-\\u1a7c\\u1a7f\\u1aa7\\u1ab0-\\u1ace\\u1b00-\\u1b03\\u1b34'
            '\\u1b36-\\u1b3a\\u1b3c\\u1b42\\u1b6b-\\u1b73\\u1b80-\\u1b81\\u1ba2-\\u1ba5'
            '\\u1ba8-\\u1ba9\\u1bab-\\u1bad\\u1be6\\u1be8-\\u1be9\\u1bed\\u1bef-\\u1bf1'
            '\\u1c2c-\\u1c33\\u1c36-\\u1c37\\u1c78-\\u1c7d\\u1cd0-\\u1cd2\\u1cd4-\\u1ce0'
            '\\u1ce2-\\u1ce8\\u1ced\\u1cf4\\u1cf8-\\u1cf9\\u1d2c-\\u1d6a\\u1d78\\u1d9b-\\u1dff\\u1fbd'
            '\\u1fbf-\\u1fc1\\u1fcd-\\u1fcf\\u1fdd-\\u1fdf\\u1fed-\\u1fef\\u1ffd-\\u1ffe'
            '\\u200b-\\u200f\\u2018-\\u2019\\u2024\\u2027\\u202a-\\u202e\\u2060-\\u2064'
            '\\u2066-\\u206f\\u2071\\u207f\\u2090-\\u209c\\u20d0-\\u20f0\\u2c7c-\\u2c7d'
            '\\u2cef-\\u2cf1\\u2d6f\\u2d7f\\u2de0-\\u2dff\\u2e2f\\u3005\\u302a-\\u302d\\u3031-\\u3035'
            '\\u303b\\u3099-\\u309e\\u30fc-\\u30fe\\ua015\\ua4f8-\\ua4fd\\ua60c\\ua66f-\\ua672'
            '\\ua674-\\ua67d\\ua67f\\ua69c-\\ua69f\\ua6f0-\\ua6f1\\ua700-\\ua721\\ua770'
            '\\ua788-\\ua78a\\ua7f2-\\ua7f4\\ua7f8-\\ua7f9\\ua802\\ua806\\ua80b\\ua825-\\ua826\\ua82c'
            '\\ua8c4-\\ua8c5\\ua8e0-\\ua8f1\\ua8ff\\ua926-\\ua92d\\ua947-\\ua951\\ua980-\\ua982'
            '\\ua9b3\\ua9b6-\\ua9b9\\ua9bc-\\ua9bd\\ua9cf\\ua9e5-\\ua9e6\\uaa29-\\uaa2e'
            '\\uaa31-\\uaa32\\uaa35-\\uaa36\\uaa43\\uaa4c\\uaa70\\uaa7c\\uaab0\\uaab2-\\uaab4'
            '\\uaab7-\\uaab8\\uaabe-\\uaabf\\uaac1\\uaadd\\uaaec-\\uaaed\\uaaf3-\\uaaf4\\uaaf6'
            '\\uab5b-\\uab5f\\uab69-\\uab6b\\uabe5\\uabe8\\uabed\\ufb1e\\ufbb2-\\ufbc2\\ufe00-\\ufe0f'
            '\\ufe13\\ufe20-\\ufe2f\\ufe52\\ufe55\\ufeff\\uff07\\uff0e\\uff1a\\uff3e\\uff40\\uff70'
            '\\uff9e-\\uff9f\\uffe3\\ufff9-\\ufffb\\U000101fd\\U000102e0\\U00010376-\\U0001037a'
            '\\U00010780-\\U00010785\\U00010787-\\U000107b0\\U000107b2-\\U000107ba'
            '\\U00010a01-\\U00010a03\\U00010a05-\\U00010a06\\U00010a0c-\\U00010a0f'
            '\\U00010a38-\\U00010a3a\\U00010a3f\\U00010ae5-\\U00010ae6\\U00010d24-\\U00010d27'
            '\\U00010eab-\\U00010eac\\U00010f46-\\U00010f50\\U00010f82-\\U00010f85\\U00011001'
            '\\U00011038-\\U00011046\\U00011070\\U00011073-\\U00011074\\U0001107f-\\U00011081'
            '\\U000110b3-\\U000110b6\\U000110b9-\\U000110ba\\U000110bd\\U000110c2\\U000110cd'
            '\\U00011100-\\U00011102\\U00011127-\\U0001112b\\U0001112d-\\U00011134\\U00011173'
            '\\U00011180-\\U00011181\\U000111b6-\\U000111be\\U000111c9-\\U000111cc\\U000111cf'
            '\\U0001122f-\\U00011231\\U00011234\\U00011236-\\U00011237\\U0001123e\\U000112df'
            '\\U000112e3-\\U000112ea\\U00011300-\\U00011301\\U0001133b-\\U0001133c\\U00011340'
            '\\U00011366-\\U0001136c\\U00011370-\\U00011374\\U00011438-\\U0001143f'
            '\\U00011442-\\U00011444\\U00011446\\U0001145e\\U000114b3-\\U000114b8\\U000114ba'
            '\\U000114bf-\\U000114c0\\U000114c2-\\U000114c3\\U000115b2-\\U000115b5'
            '\\U000115bc-\\U000115bd\\U000115bf-\\U000115c0\\U000115dc-\\U000115dd'
            '\\U00011633-\\U0001163a\\U0001163d\\U0001163f-\\U00011640\\U000116ab\\U000116ad'
            '\\U000116b0-\\U000116b5\\U000116b7\\U0001171d-\\U0001171f\\U00011722-\\U00011725'
            '\\U00011727-\\U0001172b\\U0001182f-\\U00011837\\U00011839-\\U0001183a'
            '\\U0001193b-\\U0001193c\\U0001193e\\U00011943\\U000119d4-\\U000119d7'
            '\\U000119da-\\U000119db\\U000119e0\\U00011a01-\\U00011a0a\\U00011a33-\\U00011a38'
            '\\U00011a3b-\\U00011a3e\\U00011a47\\U00011a51-\\U00011a56\\U00011a59-\\U00011a5b'
            '\\U00011a8a-\\U00011a96\\U00011a98-\\U00011a99\\U00011c30-\\U00011c36'
            '\\U00011c38-\\U00011c3d\\U00011c3f\\U00011c92-\\U00011ca7\\U00011caa-\\U00011cb0'
            '\\U00011cb2-\\U00011cb3\\U00011cb5-\\U00011cb6\\U00011d31-\\U00011d36\\U00011d3a'
            '\\U00011d3c-\\U00011d3d\\U00011d3f-\\U00011d45\\U00011d47\\U00011d90-\\U00011d91'
            '\\U00011d95\\U00011d97\\U00011ef3-\\U00011ef4\\U00013430-\\U00013438'
            '\\U00016af0-\\U00016af4\\U00016b30-\\U00016b36\\U00016b40-\\U00016b43\\U00016f4f'
            '\\U00016f8f-\\U00016f9f\\U00016fe0-\\U00016fe1\\U00016fe3-\\U00016fe4'
            '\\U0001aff0-\\U0001aff3\\U0001aff5-\\U0001affb\\U0001affd-\\U0001affe'
            '\\U0001bc9d-\\U0001bc9e\\U0001bca0-\\U0001bca3\\U0001cf00-\\U0001cf2d'
            '\\U0001cf30-\\U0001cf46\\U0001d167-\\U0001d169\\U0001d173-\\U0001d182'
            '\\U0001d185-\\U0001d18b\\U0001d1aa-\\U0001d1ad\\U0001d242-\\U0001d244'
            '\\U0001da00-\\U0001da36\\U0001da3b-\\U0001da6c\\U0001da75\\U0001da84'
            '\\U0001da9b-\\U0001da9f\\U0001daa1-\\U0001daaf\\U0001e000-\\U0001e006'
            '\\U0001e008-\\U0001e018\\U0001e01b-\\U0001e021\\U0001e023-\\U0001e024'
            '\\U0001e026-\\U0001e02a\\U0001e130-\\U0001e13d\\U0001e2ae\\U0001e2ec-\\U0001e2ef'
            '\\U0001e8d0-\\U0001e8d6\\U0001e944-\\U0001e94b\\U0001f3fb-\\U0001f3ff\\U000e0001'
            '\\U000e0020-\\U000e007f\\U000e0100-\\U000e01ef]*)\\u03a3(?![\\u0027\\u002e\\u003a\\u005e'
            '\\u0060\\u00a8\\u00ad\\u00af\\u00b4\\u00b7-\\u00b8\\u02b0-\\u036f\\u0374-\\u0375\\u037a'
            '\\u0384-\\u0385\\u0387\\u0483-\\u0489\\u0559\\u055f\\u0591-\\u05bd\\u05bf\\u05c1-\\u05c2'
            '\\u05c4-\\u05c5\\u05c7\\u05f4\\u0600-\\u0605\\u0610-\\u061a\\u061c\\u0640\\u064b-\\u065f'
            '\\u0670\\u06d6-\\u06dd\\u06df-\\u06e8\\u06ea-\\u06ed\\u070f\\u0711\\u0730-\\u074a'
            '\\u07a6-\\u07b0\\u07eb-\\u07f5\\u07fa\\u07fd\\u0816-\\u082d\\u0859-\\u085b\\u0888'
            '\\u0890-\\u0891\\u0898-\\u089f\\u08c9-\\u0902\\u093a\\u093c\\u0941-\\u0948\\u094d'
            '\\u0951-\\u0957\\u0962-\\u0963\\u0971\\u0981\\u09bc\\u09c1-\\u09c4\\u09cd\\u09e2-\\u09e3'
            '\\u09fe\\u0a01-\\u0a02\\u0a3c\\u0a41-\\u0a42\\u0a47-\\u0a48\\u0a4b-\\u0a4d\\u0a51'
            '\\u0a70-\\u0a71\\u0a75\\u0a81-\\u0a82\\u0abc\\u0ac1-\\u0ac5\\u0ac7-\\u0ac8\\u0acd'
            '\\u0ae2-\\u0ae3\\u0afa-\\u0aff\\u0b01\\u0b3c\\u0b3f\\u0b41-\\u0b44\\u0b4d\\u0b55-\\u0b56'
            '\\u0b62-\\u0b63\\u0b82\\u0bc0\\u0bcd\\u0c00\\u0c04\\u0c3c\\u0c3e-\\u0c40\\u0c46-\\u0c48'
            '\\u0c4a-\\u0c4d\\u0c55-\\u0c56\\u0c62-\\u0c63\\u0c81\\u0cbc\\u0cbf\\u0cc6\\u0ccc-\\u0ccd'
            '\\u0ce2-\\u0ce3\\u0d00-\\u0d01\\u0d3b-\\u0d3c\\u0d41-\\u0d44\\u0d4d\\u0d62-\\u0d63'
            '\\u0d81\\u0dca\\u0dd2-\\u0dd4\\u0dd6\\u0e31\\u0e34-\\u0e3a\\u0e46-\\u0e4e\\u0eb1'
            '\\u0eb4-\\u0ebc\\u0ec6\\u0ec8-\\u0ecd\\u0f18-\\u0f19\\u0f35\\u0f37\\u0f39\\u0f71-\\u0f7e'
            '\\u0f80-\\u0f84\\u0f86-\\u0f87\\u0f8d-\\u0f97\\u0f99-\\u0fbc\\u0fc6\\u102d-\\u1030'
            '\\u1032-\\u1037\\u1039-\\u103a\\u103d-\\u103e\\u1058-\\u1059\\u105e-\\u1060'
            '\\u1071-\\u1074\\u1082\\u1085-\\u1086\\u108d\\u109d\\u10fc\\u135d-\\u135f\\u1712-\\u1714'
            '\\u1732-\\u1733\\u1752-\\u1753\\u1772-\\u1773\\u17b4-\\u17b5\\u17b7-\\u17bd\\u17c6'
            '\\u17c9-\\u17d3\\u17d7\\u17dd\\u180b-\\u180f\\u1843\\u1885-\\u1886\\u18a9\\u1920-\\u1922'
            '\\u1927-\\u1928\\u1932\\u1939-\\u193b\\u1a17-\\u1a18\\u1a1b\\u1a56\\u1a58-\\u1a5e\\u1a60'
            '\\u1a62\\u1a65-\\u1a6c\\u1a73-\\u1a7c\\u1a7f\\u1aa7\\u1ab0-\\u1ace\\u1b00-\\u1b03\\u1b34'
            '\\u1b36-\\u1b3a\\u1b3c\\u1b42\\u1b6b-\\u1b73\\u1b80-\\u1b81\\u1ba2-\\u1ba5'
            '\\u1ba8-\\u1ba9\\u1bab-\\u1bad\\u1be6\\u1be8-\\u1be9\\u1bed\\u1bef-\\u1bf1'
            '\\u1c2c-\\u1c33\\u1c36-\\u1c37\\u1c78-\\u1c7d\\u1cd0-\\u1cd2\\u1cd4-\\u1ce0'
            '\\u1ce2-\\u1ce8\\u1ced\\u1cf4\\u1cf8-\\u1cf9\\u1d2c-\\u1d6a\\u1d78\\u1d9b-\\u1dff\\u1fbd'
            '\\u1fbf-\\u1fc1\\u1fcd-\\u1fcf\\u1fdd-\\u1fdf\\u1fed-\\u1fef\\u1ffd-\\u1ffe'
            '\\u200b-\\u200f\\u2018-\\u2019\\u2024\\u2027\\u202a-\\u202e\\u2060-\\u2064'
            '\\u2066-\\u206f\\u2071\\u207f\\u2090-\\u209c\\u20d0-\\u20f0\\u2c7c-\\u2c7d'
            '\\u2cef-\\u2cf1\\u2d6f\\u2d7f\\u2de0-\\u2dff\\u2e2f\\u3005\\u302a-\\u302d\\u3031-\\u3035'
            '\\u303b\\u3099-\\u309e\\u30fc-\\u30fe\\ua015\\ua4f8-\\ua4fd\\ua60c\\ua66f-\\ua672'
            '\\ua674-\\ua67d\\ua67f\\ua69c-\\ua69f\\ua6f0-\\ua6f1\\ua700-\\ua721\\ua770'
            '\\ua788-\\ua78a\\ua7f2-\\ua7f4\\ua7f8-\\ua7f9\\ua802\\ua806\\ua80b\\ua825-\\ua826\\ua82c'
            '\\ua8c4-\\ua8c5\\ua8e0-\\ua8f1\\ua8ff\\ua926-\\ua92d\\ua947-\\ua951\\ua980-\\ua982'
            '\\ua9b3\\ua9b6-\\ua9b9\\ua9bc-\\ua9bd\\ua9cf\\ua9e5-\\ua9e6\\uaa29-\\uaa2e'
            '\\uaa31-\\uaa32\\uaa35-\\uaa36\\uaa43\\uaa4c\\uaa70\\uaa7c\\uaab0\\uaab2-\\uaab4'
            '\\uaab7-\\uaab8\\uaabe-\\uaabf\\uaac1\\uaadd\\uaaec-\\uaaed\\uaaf3-\\uaaf4\\uaaf6'
            '\\uab5b-\\uab5f\\uab69-\\uab6b\\uabe5\\uabe8\\uabed\\ufb1e\\ufbb2-\\ufbc2\\ufe00-\\ufe0f'
            '\\ufe13\\ufe20-\\ufe2f\\ufe52\\ufe55\\ufeff\\uff07\\uff0e\\uff1a\\uff3e\\uff40\\uff70'
            '\\uff9e-\\uff9f\\uffe3\\ufff9-\\ufffb\\U000101fd\\U000102e0\\U00010376-\\U0001037a'
            '\\U00010780-\\U00010785\\U00010787-\\U000107b0\\U000107b2-\\U000107ba'
            '\\U00010a01-\\U00010a03\\U00010a05-\\U00010a06\\U00010a0c-\\U00010a0f'
            '\\U00010a38-\\U00010a3a\\U00010a3f\\U00010ae5-\\U00010ae6\\U00010d24-\\U00010d27'
            '\\U00010eab-\\U00010eac\\U00010f46-\\U00010f50\\U00010f82-\\U00010f85\\U00011001'
            '\\U00011038-\\U00011046\\U00011070\\U00011073-\\U00011074\\U0001107f-\\U00011081'
            '\\U000110b3-\\U000110b6\\U000110b9-\\U000110ba\\U000110bd\\U000110c2\\U000110cd'
            '\\U00011100-\\U00011102\\U00011127-\\U0001112b\\U0001112d-\\U00011134\\U00011173'
            '\\U00011180-\\U00011181\\U000111b6-\\U000111be\\U000111c9-\\U000111cc\\U000111cf'
            '\\U0001122f-\\U00011231\\U00011234\\U00011236-\\U00011237\\U0001123e\\U000112df'
            '\\U000112e3-\\U000112ea\\U00011300-\\U00011301\\U0001133b-\\U0001133c\\U00011340'
            '\\U00011366-\\U0001136c\\U00011370-\\U00011374\\U00011438-\\U0001143f'
            '\\U00011442-\\U00011444\\U00011446\\U0001145e\\U000114b3-\\U000114b8\\U000114ba'
            '\\U000114bf-\\U000114c0\\U000114c2-\\U000114c3\\U000115b2-\\U000115b5'
            '\\U000115bc-\\U000115bd\\U000115bf-\\U000115c0\\U000115dc-\\U000115dd'
            '\\U00011633-\\U0001163a\\U0001163d\\U0001163f-\\U00011640\\U000116ab\\U000116ad'
            '\\U000116b0-\\U000116b5\\U000116b7\\U0001171d-\\U0001171f\\U00011722-\\U00011725'
            '\\U00011727-\\U0001172b\\U0001182f-\\U00011837\\U00011839-\\U0001183a'
            '\\U0001193b-\\U0001193c\\U0001193e\\U00011943\\U000119d4-\\U000119d7'
            '\\U000119da-\\U000119db\\U000119e0\\U00011a01-\\U00011a0a\\U00011a33-\\U00011a38'
            '\\U00011a3b-\\U00011a3e\\U00011a47\\U00011a51-\\U00011a56\\U00011a59-\\U00011a5b'
            '\\U00011a8a-\\U00011a96\\U00011a98-\\U00011a99\\U00011c30-\\U00011c36'
            '\\U00011c38-\\U00011c3d\\U00011c3f\\U00011c92-\\U00011ca7\\U00011caa-\\U00011cb0'
            '\\U00011cb2-\\U00011cb3\\U00011cb5-\\U00011cb6\\U00011d31-\\U00011d36\\U00011d3a'
            '\\U00011d3c-\\U00011d3d\\U00011d3f-\\U00011d45\\U00011d47\\U00011d90-\\U00011d91'
            '\\U00011d95\\U00011d97\\U00011ef3-\\U00011ef4\\U00013430-\\U00013438'
            '\\U00016af0-\\U00016af4\\U00016b30-\\U00016b36\\U00016b40-\\U00016b43\\U00016f4f'
            '\\U00016f8f-\\U00016f9f\\U00016fe0-\\U00016fe1\\U00016fe3-\\U00016fe4'
            '\\U0001aff0-\\U0001aff3\\U0001aff5-\\U0001affb\\U0001affd-\\U0001affe'
            '\\U0001bc9d-\\U0001bc9e\\U0001bca0-\\U0001bca3\\U0001cf00-\\U0001cf2d'
            '\\U0001cf30-\\U0001cf46\\U0001d167-\\U0001d169\\U0001d173-\\U0001d182'
            '\\U0001d185-\\U0001d18b\\U0001d1aa-\\U0001d1ad\\U0001d242-\\U0001d244'
            '\\U0001da00-\\U0001da36\\U0001da3b-\\U0001da6c\\U0001da75\\U0001da84'
            '\\U0001da9b-\\U0001da9f\\U0001daa1-\\U0001daaf\\U0001e000-\\U0001e006'
            '\\U0001e008-\\U0001e018\\U0001e01b-\\U0001e021\\U0001e023-\\U0001e024'
            '\\U0001e026-\\U0001e02a\\U0001e130-\\U0001e13d\\U0001e2ae\\U0001e2ec-\\U0001e2ef'
            '\\U0001e8d0-\\U0001e8d6\\U0001e944-\\U0001e94b\\U0001f3fb-\\U0001f3ff\\U000e0001'
            '\\U000e0020-\\U000e007f\\U000e0100-\\U000e01ef]*[\\u0041-\\u005a\\u0061-\\u007a\\u00aa'
            '\\u00b5\\u00ba\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u01ba\\u01bc-\\u01bf'
            '\\u01c4-\\u0293\\u0295-\\u02af\\u0370-\\u0373\\u0376-\\u0377\\u037b-\\u037d\\u037f'
            '\\u0386\\u0388-\\u038a\\u038c\\u038e-\\u03a1\\u03a3-\\u03f5\\u03f7-\\u0481'
            '\\u048a-\\u052f\\u0531-\\u0556\\u0560-\\u0588\\u10a0-\\u10c5\\u10c7\\u10cd'
            '\\u10d0-\\u10fa\\u10fd-\\u10ff\\u13a0-\\u13f5\\u13f8-\\u13fd\\u1c80-\\u1c88'
            '\\u1c90-\\u1cba\\u1cbd-\\u1cbf\\u1d00-\\u1d2b\\u1d6b-\\u1d77\\u1d79-\\u1d9a'
            '\\u1e00-\\u1f15\\u1f18-\\u1f1d\\u1f20-\\u1f45\\u1f48-\\u1f4d\\u1f50-\\u1f57\\u1f59'
            '\\u1f5b\\u1f5d\\u1f5f-\\u1f7d\\u1f80-\\u1fb4\\u1fb6-\\u1fbc\\u1fbe\\u1fc2-\\u1fc4'
            '\\u1fc6-\\u1fcc\\u1fd0-\\u1fd3\\u1fd6-\\u1fdb\\u1fe0-\\u1fec\\u1ff2-\\u1ff4'
            '\\u1ff6-\\u1ffc\\u2102\\u2107\\u210a-\\u2113\\u2115\\u2119-\\u211d\\u2124\\u2126\\u2128'
            '\\u212a-\\u212d\\u212f-\\u2134\\u2139\\u213c-\\u213f\\u2145-\\u2149\\u214e'
            '\\u2160-\\u217f\\u2183-\\u2184\\u24b6-\\u24e9\\u2c00-\\u2c7b\\u2c7e-\\u2ce4'
            '\\u2ceb-\\u2cee\\u2cf2-\\u2cf3\\u2d00-\\u2d25\\u2d27\\u2d2d\\ua640-\\ua66d'
            '\\ua680-\\ua69b\\ua722-\\ua76f\\ua771-\\ua787\\ua78b-\\ua78e\\ua790-\\ua7ca'
            '\\ua7d0-\\ua7d1\\ua7d3\\ua7d5-\\ua7d9\\ua7f5-\\ua7f6\\ua7fa\\uab30-\\uab5a'
            '\\uab60-\\uab68\\uab70-\\uabbf\\ufb00-\\ufb06\\ufb13-\\ufb17\\uff21-\\uff3a'
            '\\uff41-\\uff5a\\U00010400-\\U0001044f\\U000104b0-\\U000104d3\\U000104d8-\\U000104fb'
            '\\U00010570-\\U0001057a\\U0001057c-\\U0001058a\\U0001058c-\\U00010592'
            '\\U00010594-\\U00010595\\U00010597-\\U000105a1\\U000105a3-\\U000105b1'
            '\\U000105b3-\\U000105b9\\U000105bb-\\U000105bc\\U00010c80-\\U00010cb2'
            '\\U00010cc0-\\U00010cf2\\U000118a0-\\U000118df\\U00016e40-\\U00016e7f'
            '\\U0001d400-\\U0001d454\\U0001d456-\\U0001d49c\\U0001d49e-\\U0001d49f\\U0001d4a2'
            '\\U0001d4a5-\\U0001d4a6\\U0001d4a9-\\U0001d4ac\\U0001d4ae-\\U0001d4b9\\U0001d4bb'
            '\\U0001d4bd-\\U0001d4c3\\U0001d4c5-\\U0001d505\\U0001d507-\\U0001d50a'
            '\\U0001d50d-\\U0001d514\\U0001d516-\\U0001d51c\\U0001d51e-\\U0001d539'
            '\\U0001d53b-\\U0001d53e\\U0001d540-\\U0001d544\\U0001d546\\U0001d54a-\\U0001d550'
            '\\U0001d552-\\U0001d6a5\\U0001d6a8-\\U0001d6c0\\U0001d6c2-\\U0001d6da'
            '\\U0001d6dc-\\U0001d6fa\\U0001d6fc-\\U0001d714\\U0001d716-\\U0001d734'
            '\\U0001d736-\\U0001d74e\\U0001d750-\\U0001d76e\\U0001d770-\\U0001d788'
            '\\U0001d78a-\\U0001d7a8\\U0001d7aa-\\U0001d7c2\\U0001d7c4-\\U0001d7cb'
            '\\U0001df00-\\U0001df09\\U0001df0b-\\U0001df1e\\U0001e900-\\U0001e943'
            '\\U0001f130-\\U0001f149\\U0001f150-\\U0001f169\\U0001f170-\\U0001f189])',
            E'\u03c2', 'g');
    END IF;
    s := translate(s,
        E'abcdefghijklmnopqrstuvwxyz/._-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ !"#$%&\u0027()*+,:;<='
        '>?@[\u005c]^`{|}~\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u0009\u000a\u000b'
        '\u000c\u000d\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019'
        '\u001a\u001b\u001c\u001d\u001e\u001f\u007f\u00c0\u00c1\u00c2\u00c3\u00c4\u00c5\u00c6'
        '\u00c7\u00c8\u00c9\u00ca\u00cb\u00cc\u00cd\u00ce\u00cf\u00d0\u00d1\u00d2\u00d3\u00d4'
        '\u00d5\u00d6\u00d8\u00d9\u00da\u00db\u00dc\u00dd\u00de\u0100\u0102\u0104\u0106\u0108'
        '\u010a\u010c\u010e\u0110\u0112\u0114\u0116\u0118\u011a\u011c\u011e\u0120\u0122\u0124'
        '\u0126\u0128\u012a\u012c\u012e\u0132\u0134\u0136\u0139\u013b\u013d\u013f\u0141\u0143'
        '\u0145\u0147\u014a\u014c\u014e\u0150\u0152\u0154\u0156\u0158\u015a\u015c\u015e\u0160'
        '\u0162\u0164\u0166\u0168\u016a\u016c\u016e\u0170\u0172\u0174\u0176\u0178\u0179\u017b'
        '\u017d\u0181\u0182\u0184\u0186\u0187\u0189\u018a\u018b\u018e\u018f\u0190\u0191\u0193'
        '\u0194\u0196\u0197\u0198\u019c\u019d\u019f\u01a0\u01a2\u01a4\u01a6\u01a7\u01a9\u01ac'
        '\u01ae\u01af\u01b1\u01b2\u01b3\u01b5\u01b7\u01b8\u01bc\u01c4\u01c5\u01c7\u01c8\u01ca'
        '\u01cb\u01cd\u01cf\u01d1\u01d3\u01d5\u01d7\u01d9\u01db\u01de\u01e0\u01e2\u01e4\u01e6'
        '\u01e8\u01ea\u01ec\u01ee\u01f1\u01f2\u01f4\u01f6\u01f7\u01f8\u01fa\u01fc\u01fe\u0200'
        '\u0202\u0204\u0206\u0208\u020a\u020c\u020e\u0210\u0212\u0214\u0216\u0218\u021a\u021c'
        '\u021e\u0220\u0222\u0224\u0226\u0228\u022a\u022c\u022e\u0230\u0232\u023a\u023b\u023d'
        '\u023e\u0241\u0243\u0244\u0245\u0246\u0248\u024a\u024c\u024e\u0370\u0372\u0376\u037f'
        '\u0386\u0388\u0389\u038a\u038c\u038e\u038f\u0391\u0392\u0393\u0394\u0395\u0396\u0397'
        '\u0398\u0399\u039a\u039b\u039c\u039d\u039e\u039f\u03a0\u03a1\u03a3\u03a4\u03a5\u03a6'
        '\u03a7\u03a8\u03a9\u03aa\u03ab\u03cf\u03d8\u03da\u03dc\u03de\u03e0\u03e2\u03e4\u03e6'
        '\u03e8\u03ea\u03ec\u03ee\u03f4\u03f7\u03f9\u03fa\u03fd\u03fe\u03ff\u0400\u0401\u0402'
        '\u0403\u0404\u0405\u0406\u0407\u0408\u0409\u040a\u040b\u040c\u040d\u040e\u040f\u0410'
        '\u0411\u0412\u0413\u0414\u0415\u0416\u0417\u0418\u0419\u041a\u041b\u041c\u041d\u041e'
        '\u041f\u0420\u0421\u0422\u0423\u0424\u0425\u0426\u0427\u0428\u0429\u042a\u042b\u042c'
        '\u042d\u042e\u042f\u0460\u0462\u0464\u0466\u0468\u046a\u046c\u046e\u0470\u0472\u0474'
        '\u0476\u0478\u047a\u047c\u047e\u0480\u048a\u048c\u048e\u0490\u0492\u0494\u0496\u0498'
        '\u049a\u049c\u049e\u04a0\u04a2\u04a4\u04a6\u04a8\u04aa\u04ac\u04ae\u04b0\u04b2\u04b4'
        '\u04b6\u04b8\u04ba\u04bc\u04be\u04c0\u04c1\u04c3\u04c5\u04c7\u04c9\u04cb\u04cd\u04d0'
        '\u04d2\u04d4\u04d6\u04d8\u04da\u04dc\u04de\u04e0\u04e2\u04e4\u04e6\u04e8\u04ea\u04ec'
        '\u04ee\u04f0\u04f2\u04f4\u04f6\u04f8\u04fa\u04fc\u04fe\u0500\u0502\u0504\u0506\u0508'
        '\u050a\u050c\u050e\u0510\u0512\u0514\u0516\u0518\u051a\u051c\u051e\u0520\u0522\u0524'
        '\u0526\u0528\u052a\u052c\u052e\u0531\u0532\u0533\u0534\u0535\u0536\u0537\u0538\u0539'
        '\u053a\u053b\u053c\u053d\u053e\u053f\u0540\u0541\u0542\u0543\u0544\u0545\u0546\u0547'
        '\u0548\u0549\u054a\u054b\u054c\u054d\u054e\u054f\u0550\u0551\u0552\u0553\u0554\u0555'
        '\u0556\u10a0\u10a1\u10a2\u10a3\u10a4\u10a5\u10a6\u10a7\u10a8\u10a9\u10aa\u10ab\u10ac'
        '\u10ad\u10ae\u10af\u10b0\u10b1\u10b2\u10b3\u10b4\u10b5\u10b6\u10b7\u10b8\u10b9\u10ba'
        '\u10bb\u10bc\u10bd\u10be\u10bf\u10c0\u10c1\u10c2\u10c3\u10c4\u10c5\u10c7\u10cd\u13a0'
        '\u13a1\u13a2\u13a3\u13a4\u13a5\u13a6\u13a7\u13a8\u13a9\u13aa\u13ab\u13ac\u13ad\u13ae'
        '\u13af\u13b0\u13b1\u13b2\u13b3\u13b4\u13b5\u13b6\u13b7\u13b8\u13b9\u13ba\u13bb\u13bc'
        '\u13bd\u13be\u13bf\u13c0\u13c1\u13c2\u13c3\u13c4\u13c5\u13c6\u13c7\u13c8\u13c9\u13ca'
        '\u13cb\u13cc\u13cd\u13ce\u13cf\u13d0\u13d1\u13d2\u13d3\u13d4\u13d5\u13d6\u13d7\u13d8'
        '\u13d9\u13da\u13db\u13dc\u13dd\u13de\u13df\u13e0\u13e1\u13e2\u13e3\u13e4\u13e5\u13e6'
        '\u13e7\u13e8\u13e9\u13ea\u13eb\u13ec\u13ed\u13ee\u13ef\u13f0\u13f1\u13f2\u13f3\u13f4'
        '\u13f5\u1c90\u1c91\u1c92\u1c93\u1c94\u1c95\u1c96\u1c97\u1c98\u1c99\u1c9a\u1c9b\u1c9c'
        '\u1c9d\u1c9e\u1c9f\u1ca0\u1ca1\u1ca2\u1ca3\u1ca4\u1ca5\u1ca6\u1ca7\u1ca8\u1ca9\u1caa'
        '\u1cab\u1cac\u1cad\u1cae\u1caf\u1cb0\u1cb1\u1cb2\u1cb3\u1cb4\u1cb5\u1cb6\u1cb7\u1cb8'
        '\u1cb9\u1cba\u1cbd\u1cbe\u1cbf\u1e00\u1e02\u1e04\u1e06\u1e08\u1e0a\u1e0c\u1e0e\u1e10'
        '\u1e12\u1e14\u1e16\u1e18\u1e1a\u1e1c\u1e1e\u1e20\u1e22\u1e24\u1e26\u1e28\u1e2a\u1e2c'
        '\u1e2e\u1e30\u1e32\u1e34\u1e36\u1e38\u1e3a\u1e3c\u1e3e\u1e40\u1e42\u1e44\u1e46\u1e48'
        '\u1e4a\u1e4c\u1e4e\u1e50\u1e52\u1e54\u1e56\u1e58\u1e5a\u1e5c\u1e5e\u1e60\u1e62\u1e64'
        '\u1e66\u1e68\u1e6a\u1e6c\u1e6e\u1e70\u1e72\u1e74\u1e76\u1e78\u1e7a\u1e7c\u1e7e\u1e80'
        '\u1e82\u1e84\u1e86\u1e88\u1e8a\u1e8c\u1e8e\u1e90\u1e92\u1e94\u1e9e\u1ea0\u1ea2\u1ea4'
        '\u1ea6\u1ea8\u1eaa\u1eac\u1eae\u1eb0\u1eb2\u1eb4\u1eb6\u1eb8\u1eba\u1ebc\u1ebe\u1ec0'
        '\u1ec2\u1ec4\u1ec6\u1ec8\u1eca\u1ecc\u1ece\u1ed0\u1ed2\u1ed4\u1ed6\u1ed8\u1eda\u1edc'
        '\u1ede\u1ee0\u1ee2\u1ee4\u1ee6\u1ee8\u1eea\u1eec\u1eee\u1ef0\u1ef2\u1ef4\u1ef6\u1ef8'
        '\u1efa\u1efc\u1efe\u1f08\u1f09\u1f0a\u1f0b\u1f0c\u1f0d\u1f0e\u1f0f\u1f18\u1f19\u1f1a'
        '\u1f1b\u1f1c\u1f1d\u1f28\u1f29\u1f2a\u1f2b\u1f2c\u1f2d\u1f2e\u1f2f\u1f38\u1f39\u1f3a'
        '\u1f3b\u1f3c\u1f3d\u1f3e\u1f3f\u1f48\u1f49\u1f4a\u1f4b\u1f4c\u1f4d\u1f59\u1f5b\u1f5d'
        '\u1f5f\u1f68\u1f69\u1f6a\u1f6b\u1f6c\u1f6d\u1f6e\u1f6f\u1f88\u1f89\u1f8a\u1f8b\u1f8c'
        '\u1f8d\u1f8e\u1f8f\u1f98\u1f99\u1f9a\u1f9b\u1f9c\u1f9d\u1f9e\u1f9f\u1fa8\u1fa9\u1faa'
        '\u1fab\u1fac\u1fad\u1fae\u1faf\u1fb8\u1fb9\u1fba\u1fbb\u1fbc\u1fc8\u1fc9\u1fca\u1fcb'
        '\u1fcc\u1fd8\u1fd9\u1fda\u1fdb\u1fe8\u1fe9\u1fea\u1feb\u1fec\u1ff8\u1ff9\u1ffa\u1ffb'
        '\u1ffc\u2126\u212a\u212b\u2132\u2160\u2161\u2162\u2163\u2164\u2165\u2166\u2167\u2168'
        '\u2169\u216a\u216b\u216c\u216d\u216e\u216f\u2183\u24b6\u24b7\u24b8\u24b9\u24ba\u24bb'
        '\u24bc\u24bd\u24be\u24bf\u24c0\u24c1\u24c2\u24c3\u24c4\u24c5\u24c6\u24c7\u24c8\u24c9'
        '\u24ca\u24cb\u24cc\u24cd\u24ce\u24cf\u2c00\u2c01\u2c02\u2c03\u2c04\u2c05\u2c06\u2c07'
        '\u2c08\u2c09\u2c0a\u2c0b\u2c0c\u2c0d\u2c0e\u2c0f\u2c10\u2c11\u2c12\u2c13\u2c14\u2c15'
        '\u2c16\u2c17\u2c18\u2c19\u2c1a\u2c1b\u2c1c\u2c1d\u2c1e\u2c1f\u2c20\u2c21\u2c22\u2c23'
        '\u2c24\u2c25\u2c26\u2c27\u2c28\u2c29\u2c2a\u2c2b\u2c2c\u2c2d\u2c2e\u2c2f\u2c60\u2c62'
        '\u2c63\u2c64\u2c67\u2c69\u2c6b\u2c6d\u2c6e\u2c6f\u2c70\u2c72\u2c75\u2c7e\u2c7f\u2c80'
        '\u2c82\u2c84\u2c86\u2c88\u2c8a\u2c8c\u2c8e\u2c90\u2c92\u2c94\u2c96\u2c98\u2c9a\u2c9c'
        '\u2c9e\u2ca0\u2ca2\u2ca4\u2ca6\u2ca8\u2caa\u2cac\u2cae\u2cb0\u2cb2\u2cb4\u2cb6\u2cb8'
        '\u2cba\u2cbc\u2cbe\u2cc0\u2cc2\u2cc4\u2cc6\u2cc8\u2cca\u2ccc\u2cce\u2cd0\u2cd2\u2cd4'
        '\u2cd6\u2cd8\u2cda\u2cdc\u2cde\u2ce0\u2ce2\u2ceb\u2ced\u2cf2\ua640\ua642\ua644\ua646'
        '\ua648\ua64a\ua64c\ua64e\ua650\ua652\ua654\ua656\ua658\ua65a\ua65c\ua65e\ua660\ua662'
        '\ua664\ua666\ua668\ua66a\ua66c\ua680\ua682\ua684\ua686\ua688\ua68a\ua68c\ua68e\ua690'
        '\ua692\ua694\ua696\ua698\ua69a\ua722\ua724\ua726\ua728\ua72a\ua72c\ua72e\ua732\ua734'
        '\ua736\ua738\ua73a\ua73c\ua73e\ua740\ua742\ua744\ua746\ua748\ua74a\ua74c\ua74e\ua750'
        '\ua752\ua754\ua756\ua758\ua75a\ua75c\ua75e\ua760\ua762\ua764\ua766\ua768\ua76a\ua76c'
        '\ua76e\ua779\ua77b\ua77d\ua77e\ua780\ua782\ua784\ua786\ua78b\ua78d\ua790\ua792\ua796'
        '\ua798\ua79a\ua79c\ua79e\ua7a0\ua7a2\ua7a4\ua7a6\ua7a8\ua7aa\ua7ab\ua7ac\ua7ad\ua7ae'
        '\ua7b0\ua7b1\ua7b2\ua7b3\ua7b4\ua7b6\ua7b8\ua7ba\ua7bc\ua7be\ua7c0\ua7c2\ua7c4\ua7c5'
        '\ua7c6\ua7c7\ua7c9\ua7d0\ua7d6\ua7d8\ua7f5\uff21\uff22\uff23\uff24\uff25\uff26\uff27'
        '\uff28\uff29\uff2a\uff2b\uff2c\uff2d\uff2e\uff2f\uff30\uff31\uff32\uff33\uff34\uff35'
        '\uff36\uff37\uff38\uff39\uff3a\U00010400\U00010401\U00010402\U00010403\U00010404'
        '\U00010405\U00010406\U00010407\U00010408\U00010409\U0001040a\U0001040b\U0001040c'
        '\U0001040d\U0001040e\U0001040f\U00010410\U00010411\U00010412\U00010413\U00010414'
        '\U00010415\U00010416\U00010417\U00010418\U00010419\U0001041a\U0001041b\U0001041c'
        '\U0001041d\U0001041e\U0001041f\U00010420\U00010421\U00010422\U00010423\U00010424'
        '\U00010425\U00010426\U00010427\U000104b0\U000104b1\U000104b2\U000104b3\U000104b4'
        '\U000104b5\U000104b6\U000104b7\U000104b8\U000104b9\U000104ba\U000104bb\U000104bc'
        '\U000104bd\U000104be\U000104bf\U000104c0\U000104c1\U000104c2\U000104c3\U000104c4'
        '\U000104c5\U000104c6\U000104c7\U000104c8\U000104c9\U000104ca\U000104cb\U000104cc'
        '\U000104cd\U000104ce\U000104cf\U000104d0\U000104d1\U000104d2\U000104d3\U00010570'
        '\U00010571\U00010572\U00010573\U00010574\U00010575\U00010576\U00010577\U00010578'
        '\U00010579\U0001057a\U0001057c\U0001057d\U0001057e\U0001057f\U00010580\U00010581'
        '\U00010582\U00010583\U00010584\U00010585\U00010586\U00010587\U00010588\U00010589'
        '\U0001058a\U0001058c\U0001058d\U0001058e\U0001058f\U00010590\U00010591\U00010592'
        '\U00010594\U00010595\U00010c80\U00010c81\U00010c82\U00010c83\U00010c84\U00010c85'
        '\U00010c86\U00010c87\U00010c88\U00010c89\U00010c8a\U00010c8b\U00010c8c\U00010c8d'
        '\U00010c8e\U00010c8f\U00010c90\U00010c91\U00010c92\U00010c93\U00010c94\U00010c95'
        '\U00010c96\U00010c97\U00010c98\U00010c99\U00010c9a\U00010c9b\U00010c9c\U00010c9d'
        '\U00010c9e\U00010c9f\U00010ca0\U00010ca1\U00010ca2\U00010ca3\U00010ca4\U00010ca5'
        '\U00010ca6\U00010ca7\U00010ca8\U00010ca9\U00010caa\U00010cab\U00010cac\U00010cad'
        '\U00010cae\U00010caf\U00010cb0\U00010cb1\U00010cb2\U000118a0\U000118a1\U000118a2'
        '\U000118a3\U000118a4\U000118a5\U000118a6\U000118a7\U000118a8\U000118a9\U000118aa'
        '\U000118ab\U000118ac\U000118ad\U000118ae\U000118af\U000118b0\U000118b1\U000118b2'
        '\U000118b3\U000118b4\U000118b5\U000118b6\U000118b7\U000118b8\U000118b9\U000118ba'
        '\U000118bb\U000118bc\U000118bd\U000118be\U000118bf\U00016e40\U00016e41\U00016e42'
        '\U00016e43\U00016e44\U00016e45\U00016e46\U00016e47\U00016e48\U00016e49\U00016e4a'
        '\U00016e4b\U00016e4c\U00016e4d\U00016e4e\U00016e4f\U00016e50\U00016e51\U00016e52'
        '\U00016e53\U00016e54\U00016e55\U00016e56\U00016e57\U00016e58\U00016e59\U00016e5a'
        '\U00016e5b\U00016e5c\U00016e5d\U00016e5e\U00016e5f\U0001e900\U0001e901\U0001e902'
        '\U0001e903\U0001e904\U0001e905\U0001e906\U0001e907\U0001e908\U0001e909\U0001e90a'
        '\U0001e90b\U0001e90c\U0001e90d\U0001e90e\U0001e90f\U0001e910\U0001e911\U0001e912'
        '\U0001e913\U0001e914\U0001e915\U0001e916\U0001e917\U0001e918\U0001e919\U0001e91a'
        '\U0001e91b\U0001e91c\U0001e91d\U0001e91e\U0001e91f\U0001e920\U0001e921',
        E'abcdefghijklmnopqrstuvwxyz/._-0123456789abcdefghijklmnopqrstuvwxyz !"#$%&\u0027()*+,:;<='
        '>?@[\u005c]^`{|}~\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u0009\u000a\u000b'
        '\u000c\u000d\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019'
        '\u001a\u001b\u001c\u001d\u001e\u001f\u007f\u00e0\u00e1\u00e2\u00e3\u00e4\u00e5\u00e6'
        '\u00e7\u00e8\u00e9\u00ea\u00eb\u00ec\u00ed\u00ee\u00ef\u00f0\u00f1\u00f2\u00f3\u00f4'
        '\u00f5\u00f6\u00f8\u00f9\u00fa\u00fb\u00fc\u00fd\u00fe\u0101\u0103\u0105\u0107\u0109'
        '\u010b\u010d\u010f\u0111\u0113\u0115\u0117\u0119\u011b\u011d\u011f\u0121\u0123\u0125'
        '\u0127\u0129\u012b\u012d\u012f\u0133\u0135\u0137\u013a\u013c\u013e\u0140\u0142\u0144'
        '\u0146\u0148\u014b\u014d\u014f\u0151\u0153\u0155\u0157\u0159\u015b\u015d\u015f\u0161'
        '\u0163\u0165\u0167\u0169\u016b\u016d\u016f\u0171\u0173\u0175\u0177\u00ff\u017a\u017c'
        '\u017e\u0253\u0183\u0185\u0254\u0188\u0256\u0257\u018c\u01dd\u0259\u025b\u0192\u0260'
        '\u0263\u0269\u0268\u0199\u026f\u0272\u0275\u01a1\u01a3\u01a5\u0280\u01a8\u0283\u01ad'
        '\u0288\u01b0\u028a\u028b\u01b4\u01b6\u0292\u01b9\u01bd\u01c6\u01c6\u01c9\u01c9\u01cc'
        '\u01cc\u01ce\u01d0\u01d2\u01d4\u01d6\u01d8\u01da\u01dc\u01df\u01e1\u01e3\u01e5\u01e7'
        '\u01e9\u01eb\u01ed\u01ef\u01f3\u01f3\u01f5\u0195\u01bf\u01f9\u01fb\u01fd\u01ff\u0201'
        '\u0203\u0205\u0207\u0209\u020b\u020d\u020f\u0211\u0213\u0215\u0217\u0219\u021b\u021d'
        '\u021f\u019e\u0223\u0225\u0227\u0229\u022b\u022d\u022f\u0231\u0233\u2c65\u023c\u019a'
        '\u2c66\u0242\u0180\u0289\u028c\u0247\u0249\u024b\u024d\u024f\u0371\u0373\u0377\u03f3'
        '\u03ac\u03ad\u03ae\u03af\u03cc\u03cd\u03ce\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6\u03b7'
        '\u03b8\u03b9\u03ba\u03bb\u03bc\u03bd\u03be\u03bf\u03c0\u03c1\u03c3\u03c4\u03c5\u03c6'
        '\u03c7\u03c8\u03c9\u03ca\u03cb\u03d7\u03d9\u03db\u03dd\u03df\u03e1\u03e3\u03e5\u03e7'
        '\u03e9\u03eb\u03ed\u03ef\u03b8\u03f8\u03f2\u03fb\u037b\u037c\u037d\u0450\u0451\u0452'
        '\u0453\u0454\u0455\u0456\u0457\u0458\u0459\u045a\u045b\u045c\u045d\u045e\u045f\u0430'
        '\u0431\u0432\u0433\u0434\u0435\u0436\u0437\u0438\u0439\u043a\u043b\u043c\u043d\u043e'
        '\u043f\u0440\u0441\u0442\u0443\u0444\u0445\u0446\u0447\u0448\u0449\u044a\u044b\u044c'
        '\u044d\u044e\u044f\u0461\u0463\u0465\u0467\u0469\u046b\u046d\u046f\u0471\u0473\u0475'
        '\u0477\u0479\u047b\u047d\u047f\u0481\u048b\u048d\u048f\u0491\u0493\u0495\u0497\u0499'
        '\u049b\u049d\u049f\u04a1\u04a3\u04a5\u04a7\u04a9\u04ab\u04ad\u04af\u04b1\u04b3\u04b5'
        '\u04b7\u04b9\u04bb\u04bd\u04bf\u04cf\u04c2\u04c4\u04c6\u04c8\u04ca\u04cc\u04ce\u04d1'
        '\u04d3\u04d5\u04d7\u04d9\u04db\u04dd\u04df\u04e1\u04e3\u04e5\u04e7\u04e9\u04eb\u04ed'
        '\u04ef\u04f1\u04f3\u04f5\u04f7\u04f9\u04fb\u04fd\u04ff\u0501\u0503\u0505\u0507\u0509'
        '\u050b\u050d\u050f\u0511\u0513\u0515\u0517\u0519\u051b\u051d\u051f\u0521\u0523\u0525'
        '\u0527\u0529\u052b\u052d\u052f\u0561\u0562\u0563\u0564\u0565\u0566\u0567\u0568\u0569'
        '\u056a\u056b\u056c\u056d\u056e\u056f\u0570\u0571\u0572\u0573\u0574\u0575\u0576\u0577'
        '\u0578\u0579\u057a\u057b\u057c\u057d\u057e\u057f\u0580\u0581\u0582\u0583\u0584\u0585'
        '\u0586\u2d00\u2d01\u2d02\u2d03\u2d04\u2d05\u2d06\u2d07\u2d08\u2d09\u2d0a\u2d0b\u2d0c'
        '\u2d0d\u2d0e\u2d0f\u2d10\u2d11\u2d12\u2d13\u2d14\u2d15\u2d16\u2d17\u2d18\u2d19\u2d1a'
        '\u2d1b\u2d1c\u2d1d\u2d1e\u2d1f\u2d20\u2d21\u2d22\u2d23\u2d24\u2d25\u2d27\u2d2d\uab70'
        '\uab71\uab72\uab73\uab74\uab75\uab76\uab77\uab78\uab79\uab7a\uab7b\uab7c\uab7d\uab7e'
        '\uab7f\uab80\uab81\uab82\uab83\uab84\uab85\uab86\uab87\uab88\uab89\uab8a\uab8b\uab8c'
        '\uab8d\uab8e\uab8f\uab90\uab91\uab92\uab93\uab94\uab95\uab96\uab97\uab98\uab99\uab9a'
        '\uab9b\uab9c\uab9d\uab9e\uab9f\uaba0\uaba1\uaba2\uaba3\uaba4\uaba5\uaba6\uaba7\uaba8'
        '\uaba9\uabaa\uabab\uabac\uabad\uabae\uabaf\uabb0\uabb1\uabb2\uabb3\uabb4\uabb5\uabb6'
        '\uabb7\uabb8\uabb9\uabba\uabbb\uabbc\uabbd\uabbe\uabbf\u13f8\u13f9\u13fa\u13fb\u13fc'
        '\u13fd\u10d0\u10d1\u10d2\u10d3\u10d4\u10d5\u10d6\u10d7\u10d8\u10d9\u10da\u10db\u10dc'
        '\u10dd\u10de\u10df\u10e0\u10e1\u10e2\u10e3\u10e4\u10e5\u10e6\u10e7\u10e8\u10e9\u10ea'
        '\u10eb\u10ec\u10ed\u10ee\u10ef\u10f0\u10f1\u10f2\u10f3\u10f4\u10f5\u10f6\u10f7\u10f8'
        '\u10f9\u10fa\u10fd\u10fe\u10ff\u1e01\u1e03\u1e05\u1e07\u1e09\u1e0b\u1e0d\u1e0f\u1e11'
        '\u1e13\u1e15\u1e17\u1e19\u1e1b\u1e1d\u1e1f\u1e21\u1e23\u1e25\u1e27\u1e29\u1e2b\u1e2d'
        '\u1e2f\u1e31\u1e33\u1e35\u1e37\u1e39\u1e3b\u1e3d\u1e3f\u1e41\u1e43\u1e45\u1e47\u1e49'
        '\u1e4b\u1e4d\u1e4f\u1e51\u1e53\u1e55\u1e57\u1e59\u1e5b\u1e5d\u1e5f\u1e61\u1e63\u1e65'
        '\u1e67\u1e69\u1e6b\u1e6d\u1e6f\u1e71\u1e73\u1e75\u1e77\u1e79\u1e7b\u1e7d\u1e7f\u1e81'
        '\u1e83\u1e85\u1e87\u1e89\u1e8b\u1e8d\u1e8f\u1e91\u1e93\u1e95\u00df\u1ea1\u1ea3\u1ea5'
        '\u1ea7\u1ea9\u1eab\u1ead\u1eaf\u1eb1\u1eb3\u1eb5\u1eb7\u1eb9\u1ebb\u1ebd\u1ebf\u1ec1'
        '\u1ec3\u1ec5\u1ec7\u1ec9\u1ecb\u1ecd\u1ecf\u1ed1\u1ed3\u1ed5\u1ed7\u1ed9\u1edb\u1edd'
        '\u1edf\u1ee1\u1ee3\u1ee5\u1ee7\u1ee9\u1eeb\u1eed\u1eef\u1ef1\u1ef3\u1ef5\u1ef7\u1ef9'
        '\u1efb\u1efd\u1eff\u1f00\u1f01\u1f02\u1f03\u1f04\u1f05\u1f06\u1f07\u1f10\u1f11\u1f12'
        '\u1f13\u1f14\u1f15\u1f20\u1f21\u1f22\u1f23\u1f24\u1f25\u1f26\u1f27\u1f30\u1f31\u1f32'
        '\u1f33\u1f34\u1f35\u1f36\u1f37\u1f40\u1f41\u1f42\u1f43\u1f44\u1f45\u1f51\u1f53\u1f55'
        '\u1f57\u1f60\u1f61\u1f62\u1f63\u1f64\u1f65\u1f66\u1f67\u1f80\u1f81\u1f82\u1f83\u1f84'
        '\u1f85\u1f86\u1f87\u1f90\u1f91\u1f92\u1f93\u1f94\u1f95\u1f96\u1f97\u1fa0\u1fa1\u1fa2'
        '\u1fa3\u1fa4\u1fa5\u1fa6\u1fa7\u1fb0\u1fb1\u1f70\u1f71\u1fb3\u1f72\u1f73\u1f74\u1f75'
        '\u1fc3\u1fd0\u1fd1\u1f76\u1f77\u1fe0\u1fe1\u1f7a\u1f7b\u1fe5\u1f78\u1f79\u1f7c\u1f7d'
        '\u1ff3\u03c9k\u00e5\u214e\u2170\u2171\u2172\u2173\u2174\u2175\u2176\u2177\u2178\u2179'
        '\u217a\u217b\u217c\u217d\u217e\u217f\u2184\u24d0\u24d1\u24d2\u24d3\u24d4\u24d5\u24d6'
        '\u24d7\u24d8\u24d9\u24da\u24db\u24dc\u24dd\u24de\u24df\u24e0\u24e1\u24e2\u24e3\u24e4'
        '\u24e5\u24e6\u24e7\u24e8\u24e9\u2c30\u2c31\u2c32\u2c33\u2c34\u2c35\u2c36\u2c37\u2c38'
        '\u2c39\u2c3a\u2c3b\u2c3c\u2c3d\u2c3e\u2c3f\u2c40\u2c41\u2c42\u2c43\u2c44\u2c45\u2c46'
        '\u2c47\u2c48\u2c49\u2c4a\u2c4b\u2c4c\u2c4d\u2c4e\u2c4f\u2c50\u2c51\u2c52\u2c53\u2c54'
        '\u2c55\u2c56\u2c57\u2c58\u2c59\u2c5a\u2c5b\u2c5c\u2c5d\u2c5e\u2c5f\u2c61\u026b\u1d7d'
        '\u027d\u2c68\u2c6a\u2c6c\u0251\u0271\u0250\u0252\u2c73\u2c76\u023f\u0240\u2c81\u2c83'
        '\u2c85\u2c87\u2c89\u2c8b\u2c8d\u2c8f\u2c91\u2c93\u2c95\u2c97\u2c99\u2c9b\u2c9d\u2c9f'
        '\u2ca1\u2ca3\u2ca5\u2ca7\u2ca9\u2cab\u2cad\u2caf\u2cb1\u2cb3\u2cb5\u2cb7\u2cb9\u2cbb'
        '\u2cbd\u2cbf\u2cc1\u2cc3\u2cc5\u2cc7\u2cc9\u2ccb\u2ccd\u2ccf\u2cd1\u2cd3\u2cd5\u2cd7'
        '\u2cd9\u2cdb\u2cdd\u2cdf\u2ce1\u2ce3\u2cec\u2cee\u2cf3\ua641\ua643\ua645\ua647\ua649'
        '\ua64b\ua64d\ua64f\ua651\ua653\ua655\ua657\ua659\ua65b\ua65d\ua65f\ua661\ua663\ua665'
        '\ua667\ua669\ua66b\ua66d\ua681\ua683\ua685\ua687\ua689\ua68b\ua68d\ua68f\ua691\ua693'
        '\ua695\ua697\ua699\ua69b\ua723\ua725\ua727\ua729\ua72b\ua72d\ua72f\ua733\ua735\ua737'
        '\ua739\ua73b\ua73d\ua73f\ua741\ua743\ua745\ua747\ua749\ua74b\ua74d\ua74f\ua751\ua753'
        '\ua755\ua757\ua759\ua75b\ua75d\ua75f\ua761\ua763\ua765\ua767\ua769\ua76b\ua76d\ua76f'
        '\ua77a\ua77c\u1d79\ua77f\ua781\ua783\ua785\ua787\ua78c\u0265\ua791\ua793\ua797\ua799'
        '\ua79b\ua79d\ua79f\ua7a1\ua7a3\ua7a5\ua7a7\ua7a9\u0266\u025c\u0261\u026c\u026a\u029e'
        '\u0287\u029d\uab53\ua7b5\ua7b7\ua7b9\ua7bb\ua7bd\ua7bf\ua7c1\ua7c3\ua794\u0282\u1d8e'
        '\ua7c8\ua7ca\ua7d1\ua7d7\ua7d9\ua7f6\uff41\uff42\uff43\uff44\uff45\uff46\uff47\uff48'
        '\uff49\uff4a\uff4b\uff4c\uff4d\uff4e\uff4f\uff50\uff51\uff52\uff53\uff54\uff55\uff56'
        '\uff57\uff58\uff59\uff5a\U00010428\U00010429\U0001042a\U0001042b\U0001042c\U0001042d'
        '\U0001042e\U0001042f\U00010430\U00010431\U00010432\U00010433\U00010434\U00010435'
        '\U00010436\U00010437\U00010438\U00010439\U0001043a\U0001043b\U0001043c\U0001043d'
        '\U0001043e\U0001043f\U00010440\U00010441\U00010442\U00010443\U00010444\U00010445'
        '\U00010446\U00010447\U00010448\U00010449\U0001044a\U0001044b\U0001044c\U0001044d'
        '\U0001044e\U0001044f\U000104d8\U000104d9\U000104da\U000104db\U000104dc\U000104dd'
        '\U000104de\U000104df\U000104e0\U000104e1\U000104e2\U000104e3\U000104e4\U000104e5'
        '\U000104e6\U000104e7\U000104e8\U000104e9\U000104ea\U000104eb\U000104ec\U000104ed'
        '\U000104ee\U000104ef\U000104f0\U000104f1\U000104f2\U000104f3\U000104f4\U000104f5'
        '\U000104f6\U000104f7\U000104f8\U000104f9\U000104fa\U000104fb\U00010597\U00010598'
        '\U00010599\U0001059a\U0001059b\U0001059c\U0001059d\U0001059e\U0001059f\U000105a0'
        '\U000105a1\U000105a3\U000105a4\U000105a5\U000105a6\U000105a7\U000105a8\U000105a9'
        '\U000105aa\U000105ab\U000105ac\U000105ad\U000105ae\U000105af\U000105b0\U000105b1'
        '\U000105b3\U000105b4\U000105b5\U000105b6\U000105b7\U000105b8\U000105b9\U000105bb'
        '\U000105bc\U00010cc0\U00010cc1\U00010cc2\U00010cc3\U00010cc4\U00010cc5\U00010cc6'
        '\U00010cc7\U00010cc8\U00010cc9\U00010cca\U00010ccb\U00010ccc\U00010ccd\U00010cce'
        '\U00010ccf\U00010cd0\U00010cd1\U00010cd2\U00010cd3\U00010cd4\U00010cd5\U00010cd6'
        '\U00010cd7\U00010cd8\U00010cd9\U00010cda\U00010cdb\U00010cdc\U00010cdd\U00010cde'
        '\U00010cdf\U00010ce0\U00010ce1\U00010ce2\U00010ce3\U00010ce4\U00010ce5\U00010ce6'
        '\U00010ce7\U00010ce8\U00010ce9\U00010cea\U00010ceb\U00010cec\U00010ced\U00010cee'
        '\U00010cef\U00010cf0\U00010cf1\U00010cf2\U000118c0\U000118c1\U000118c2\U000118c3'
        '\U000118c4\U000118c5\U000118c6\U000118c7\U000118c8\U000118c9\U000118ca\U000118cb'
        '\U000118cc\U000118cd\U000118ce\U000118cf\U000118d0\U000118d1\U000118d2\U000118d3'
        '\U000118d4\U000118d5\U000118d6\U000118d7\U000118d8\U000118d9\U000118da\U000118db'
        '\U000118dc\U000118dd\U000118de\U000118df\U00016e60\U00016e61\U00016e62\U00016e63'
        '\U00016e64\U00016e65\U00016e66\U00016e67\U00016e68\U00016e69\U00016e6a\U00016e6b'
        '\U00016e6c\U00016e6d\U00016e6e\U00016e6f\U00016e70\U00016e71\U00016e72\U00016e73'
        '\U00016e74\U00016e75\U00016e76\U00016e77\U00016e78\U00016e79\U00016e7a\U00016e7b'
        '\U00016e7c\U00016e7d\U00016e7e\U00016e7f\U0001e922\U0001e923\U0001e924\U0001e925'
        '\U0001e926\U0001e927\U0001e928\U0001e929\U0001e92a\U0001e92b\U0001e92c\U0001e92d'
        '\U0001e92e\U0001e92f\U0001e930\U0001e931\U0001e932\U0001e933\U0001e934\U0001e935'
        '\U0001e936\U0001e937\U0001e938\U0001e939\U0001e93a\U0001e93b\U0001e93c\U0001e93d'
        '\U0001e93e\U0001e93f\U0001e940\U0001e941\U0001e942\U0001e943');
    RETURN replace(s, E'\u0130', E'i\u0307');
END
$$;

-- Python's str.casefold(), exactly: one-to-one foldings, then the ones that
-- fold to several characters (no output of either is an input again).
CREATE FUNCTION lac_casefold(s text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
DECLARE
    i integer;
    long_from CONSTANT text[] := ARRAY[
        E'\u00df', E'\u0130', E'\u0149', E'\u01f0', E'\u0390', E'\u03b0', E'\u0587', E'\u1e96',
        E'\u1e97', E'\u1e98', E'\u1e99', E'\u1e9a', E'\u1e9e', E'\u1f50', E'\u1f52', E'\u1f54',
        E'\u1f56', E'\u1f80', E'\u1f81', E'\u1f82', E'\u1f83', E'\u1f84', E'\u1f85', E'\u1f86',
        E'\u1f87', E'\u1f88', E'\u1f89', E'\u1f8a', E'\u1f8b', E'\u1f8c', E'\u1f8d', E'\u1f8e',
        E'\u1f8f', E'\u1f90', E'\u1f91', E'\u1f92', E'\u1f93', E'\u1f94', E'\u1f95', E'\u1f96',
        E'\u1f97', E'\u1f98', E'\u1f99', E'\u1f9a', E'\u1f9b', E'\u1f9c', E'\u1f9d', E'\u1f9e',
        E'\u1f9f', E'\u1fa0', E'\u1fa1', E'\u1fa2', E'\u1fa3', E'\u1fa4', E'\u1fa5', E'\u1fa6',
        E'\u1fa7', E'\u1fa8', E'\u1fa9', E'\u1faa', E'\u1fab', E'\u1fac', E'\u1fad', E'\u1fae',
        E'\u1faf', E'\u1fb2', E'\u1fb3', E'\u1fb4', E'\u1fb6', E'\u1fb7', E'\u1fbc', E'\u1fc2',
        E'\u1fc3', E'\u1fc4', E'\u1fc6', E'\u1fc7', E'\u1fcc', E'\u1fd2', E'\u1fd3', E'\u1fd6',
        E'\u1fd7', E'\u1fe2', E'\u1fe3', E'\u1fe4', E'\u1fe6', E'\u1fe7', E'\u1ff2', E'\u1ff3',
        E'\u1ff4', E'\u1ff6', E'\u1ff7', E'\u1ffc', E'\ufb00', E'\ufb01', E'\ufb02', E'\ufb03',
        E'\ufb04', E'\ufb05', E'\ufb06', E'\ufb13', E'\ufb14', E'\ufb15', E'\ufb16', E'\ufb17'];
    long_to CONSTANT text[] := ARRAY[
        E'ss', E'i\u0307', E'\u02bcn', E'j\u030c', E'\u03b9\u0308\u0301',
        E'\u03c5\u0308\u0301', E'\u0565\u0582', E'h\u0331', E't\u0308', E'w\u030a', E'y\u030a',
        E'a\u02be', E'ss', E'\u03c5\u0313', E'\u03c5\u0313\u0300', E'\u03c5\u0313\u0301',
        E'\u03c5\u0313\u0342', E'\u1f00\u03b9', E'\u1f01\u03b9', E'\u1f02\u03b9',
        E'\u1f03\u03b9', E'\u1f04\u03b9', E'\u1f05\u03b9', E'\u1f06\u03b9', E'\u1f07\u03b9',
        E'\u1f00\u03b9', E'\u1f01\u03b9', E'\u1f02\u03b9', E'\u1f03\u03b9', E'\u1f04\u03b9',
        E'\u1f05\u03b9', E'\u1f06\u03b9', E'\u1f07\u03b9', E'\u1f20\u03b9', E'\u1f21\u03b9',
        E'\u1f22\u03b9', E'\u1f23\u03b9', E'\u1f24\u03b9', E'\u1f25\u03b9', E'\u1f26\u03b9',
        E'\u1f27\u03b9', E'\u1f20\u03b9', E'\u1f21\u03b9', E'\u1f22\u03b9', E'\u1f23\u03b9',
        E'\u1f24\u03b9', E'\u1f25\u03b9', E'\u1f26\u03b9', E'\u1f27\u03b9', E'\u1f60\u03b9',
        E'\u1f61\u03b9', E'\u1f62\u03b9', E'\u1f63\u03b9', E'\u1f64\u03b9', E'\u1f65\u03b9',
        E'\u1f66\u03b9', E'\u1f67\u03b9', E'\u1f60\u03b9', E'\u1f61\u03b9', E'\u1f62\u03b9',
        E'\u1f63\u03b9', E'\u1f64\u03b9', E'\u1f65\u03b9', E'\u1f66\u03b9', E'\u1f67\u03b9',
        E'\u1f70\u03b9', E'\u03b1\u03b9', E'\u03ac\u03b9', E'\u03b1\u0342',
        E'\u03b1\u0342\u03b9', E'\u03b1\u03b9', E'\u1f74\u03b9', E'\u03b7\u03b9',
        E'\u03ae\u03b9', E'\u03b7\u0342', E'\u03b7\u0342\u03b9', E'\u03b7\u03b9',
        E'\u03b9\u0308\u0300', E'\u03b9\u0308\u0301', E'\u03b9\u0342', E'\u03b9\u0308\u0342',
        E'\u03c5\u0308\u0300', E'\u03c5\u0308\u0301', E'\u03c1\u0313', E'\u03c5\u0342',
        E'\u03c5\u0308\u0342', E'\u1f7c\u03b9', E'\u03c9\u03b9', E'\u03ce\u03b9',
        E'\u03c9\u0342', E'\u03c9\u0342\u03b9', E'\u03c9\u03b9', E'ff', E'fi', E'fl', E'ffi',
        E'ffl', E'st', E'st', E'\u0574\u0576', E'\u0574\u0565', E'\u0574\u056b',
        E'\u057e\u0576', E'\u0574\u056d'];
BEGIN
    IF octet_length(s) = length(s) THEN
        RETURN translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
    END IF;
    s := translate(s,
        E'abcdefghijklmnopqrstuvwxyz/._-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ !"#$%&\u0027()*+,:;<='
        '>?@[\u005c]^`{|}~\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u0009\u000a\u000b'
        '\u000c\u000d\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019'
        '\u001a\u001b\u001c\u001d\u001e\u001f\u007f\u00b5\u00c0\u00c1\u00c2\u00c3\u00c4\u00c5'
        '\u00c6\u00c7\u00c8\u00c9\u00ca\u00cb\u00cc\u00cd\u00ce\u00cf\u00d0\u00d1\u00d2\u00d3'
        '\u00d4\u00d5\u00d6\u00d8\u00d9\u00da\u00db\u00dc\u00dd\u00de\u0100\u0102\u0104\u0106'
        '\u0108\u010a\u010c\u010e\u0110\u0112\u0114\u0116\u0118\u011a\u011c\u011e\u0120\u0122'
        '\u0124\u0126\u0128\u012a\u012c\u012e\u0132\u0134\u0136\u0139\u013b\u013d\u013f\u0141'
        '\u0143\u0145\u0147\u014a\u014c\u014e\u0150\u0152\u0154\u0156\u0158\u015a\u015c\u015e'
        '\u0160\u0162\u0164\u0166\u0168\u016a\u016c\u016e\u0170\u0172\u0174\u0176\u0178\u0179'
        '\u017b\u017d\u017f\u0181\u0182\u0184\u0186\u0187\u0189\u018a\u018b\u018e\u018f\u0190'
        '\u0191\u0193\u0194\u0196\u0197\u0198\u019c\u019d\u019f\u01a0\u01a2\u01a4\u01a6\u01a7'
        '\u01a9\u01ac\u01ae\u01af\u01b1\u01b2\u01b3\u01b5\u01b7\u01b8\u01bc\u01c4\u01c5\u01c7'
        '\u01c8\u01ca\u01cb\u01cd\u01cf\u01d1\u01d3\u01d5\u01d7\u01d9\u01db\u01de\u01e0\u01e2'
        '\u01e4\u01e6\u01e8\u01ea\u01ec\u01ee\u01f1\u01f2\u01f4\u01f6\u01f7\u01f8\u01fa\u01fc'
        '\u01fe\u0200\u0202\u0204\u0206\u0208\u020a\u020c\u020e\u0210\u0212\u0214\u0216\u0218'
        '\u021a\u021c\u021e\u0220\u0222\u0224\u0226\u0228\u022a\u022c\u022e\u0230\u0232\u023a'
        '\u023b\u023d\u023e\u0241\u0243\u0244\u0245\u0246\u0248\u024a\u024c\u024e\u0345\u0370'
        '\u0372\u0376\u037f\u0386\u0388\u0389\u038a\u038c\u038e\u038f\u0391\u0392\u0393\u0394'
        '\u0395\u0396\u0397\u0398\u0399\u039a\u039b\u039c\u039d\u039e\u039f\u03a0\u03a1\u03a3'
        '\u03a4\u03a5\u03a6\u03a7\u03a8\u03a9\u03aa\u03ab\u03c2\u03cf\u03d0\u03d1\u03d5\u03d6'
        '\u03d8\u03da\u03dc\u03de\u03e0\u03e2\u03e4\u03e6\u03e8\u03ea\u03ec\u03ee\u03f0\u03f1'
        '\u03f4\u03f5\u03f7\u03f9\u03fa\u03fd\u03fe\u03ff\u0400\u0401\u0402\u0403\u0404\u0405'
        '\u0406\u0407\u0408\u0409\u040a\u040b\u040c\u040d\u040e\u040f\u0410\u0411\u0412\u0413'
        '\u0414\u0415\u0416\u0417\u0418\u0419\u041a\u041b\u041c\u041d\u041e\u041f\u0420\u0421'
        '\u0422\u0423\u0424\u0425\u0426\u0427\u0428\u0429\u042a\u042b\u042c\u042d\u042e\u042f'
        '\u0460\u0462\u0464\u0466\u0468\u046a\u046c\u046e\u0470\u0472\u0474\u0476\u0478\u047a'
        '\u047c\u047e\u0480\u048a\u048c\u048e\u0490\u0492\u0494\u0496\u0498\u049a\u049c\u049e'
        '\u04a0\u04a2\u04a4\u04a6\u04a8\u04aa\u04ac\u04ae\u04b0\u04b2\u04b4\u04b6\u04b8\u04ba'
        '\u04bc\u04be\u04c0\u04c1\u04c3\u04c5\u04c7\u04c9\u04cb\u04cd\u04d0\u04d2\u04d4\u04d6'
        '\u04d8\u04da\u04dc\u04de\u04e0\u04e2\u04e4\u04e6\u04e8\u04ea\u04ec\u04ee\u04f0\u04f2'
        '\u04f4\u04f6\u04f8\u04fa\u04fc\u04fe\u0500\u0502\u0504\u0506\u0508\u050a\u050c\u050e'
        '\u0510\u0512\u0514\u0516\u0518\u051a\u051c\u051e\u0520\u0522\u0524\u0526\u0528\u052a'
        '\u052c\u052e\u0531\u0532\u0533\u0534\u0535\u0536\u0537\u0538\u0539\u053a\u053b\u053c'
        '\u053d\u053e\u053f\u0540\u0541\u0542\u0543\u0544\u0545\u0546\u0547\u0548\u0549\u054a'
        '\u054b\u054c\u054d\u054e\u054f\u0550\u0551\u0552\u0553\u0554\u0555\u0556\u10a0\u10a1'
        '\u10a2\u10a3\u10a4\u10a5\u10a6\u10a7\u10a8\u10a9\u10aa\u10ab\u10ac\u10ad\u10ae\u10af'
        '\u10b0\u10b1\u10b2\u10b3\u10b4\u10b5\u10b6\u10b7\u10b8\u10b9\u10ba\u10bb\u10bc\u10bd'
        '\u10be\u10bf\u10c0\u10c1\u10c2\u10c3\u10c4\u10c5\u10c7\u10cd\u13f8\u13f9\u13fa\u13fb'
        '\u13fc\u13fd\u1c80\u1c81\u1c82\u1c83\u1c84\u1c85\u1c86\u1c87\u1c88\u1c90\u1c91\u1c92'
        '\u1c93\u1c94\u1c95\u1c96\u1c97\u1c98\u1c99\u1c9a\u1c9b\u1c9c\u1c9d\u1c9e\u1c9f\u1ca0'
        '\u1ca1\u1ca2\u1ca3\u1ca4\u1ca5\u1ca6\u1ca7\u1ca8\u1ca9\u1caa\u1cab\u1cac\u1cad\u1cae'
        '\u1caf\u1cb0\u1cb1\u1cb2\u1cb3\u1cb4\u1cb5\u1cb6\u1cb7\u1cb8\u1cb9\u1cba\u1cbd\u1cbe'
        '\u1cbf\u1e00\u1e02\u1e04\u1e06\u1e08\u1e0a\u1e0c\u1e0e\u1e10\u1e12\u1e14\u1e16\u1e18'
        '\u1e1a\u1e1c\u1e1e\u1e20\u1e22\u1e24\u1e26\u1e28\u1e2a\u1e2c\u1e2e\u1e30\u1e32\u1e34'
        '\u1e36\u1e38\u1e3a\u1e3c\u1e3e\u1e40\u1e42\u1e44\u1e46\u1e48\u1e4a\u1e4c\u1e4e\u1e50'
        '\u1e52\u1e54\u1e56\u1e58\u1e5a\u1e5c\u1e5e\u1e60\u1e62\u1e64\u1e66\u1e68\u1e6a\u1e6c'
        '\u1e6e\u1e70\u1e72\u1e74\u1e76\u1e78\u1e7a\u1e7c\u1e7e\u1e80\u1e82\u1e84\u1e86\u1e88'
        '\u1e8a\u1e8c\u1e8e\u1e90\u1e92\u1e94\u1e9b\u1ea0\u1ea2\u1ea4\u1ea6\u1ea8\u1eaa\u1eac'
        '\u1eae\u1eb0\u1eb2\u1eb4\u1eb6\u1eb8\u1eba\u1ebc\u1ebe\u1ec0\u1ec2\u1ec4\u1ec6\u1ec8'
        '\u1eca\u1ecc\u1ece\u1ed0\u1ed2\u1ed4\u1ed6\u1ed8\u1eda\u1edc\u1ede\u1ee0\u1ee2\u1ee4'
        '\u1ee6\u1ee8\u1eea\u1eec\u1eee\u1ef0\u1ef2\u1ef4\u1ef6\u1ef8\u1efa\u1efc\u1efe\u1f08'
        '\u1f09\u1f0a\u1f0b\u1f0c\u1f0d\u1f0e\u1f0f\u1f18\u1f19\u1f1a\u1f1b\u1f1c\u1f1d\u1f28'
        '\u1f29\u1f2a\u1f2b\u1f2c\u1f2d\u1f2e\u1f2f\u1f38\u1f39\u1f3a\u1f3b\u1f3c\u1f3d\u1f3e'
        '\u1f3f\u1f48\u1f49\u1f4a\u1f4b\u1f4c\u1f4d\u1f59\u1f5b\u1f5d\u1f5f\u1f68\u1f69\u1f6a'
        '\u1f6b\u1f6c\u1f6d\u1f6e\u1f6f\u1fb8\u1fb9\u1fba\u1fbb\u1fbe\u1fc8\u1fc9\u1fca\u1fcb'
        '\u1fd8\u1fd9\u1fda\u1fdb\u1fe8\u1fe9\u1fea\u1feb\u1fec\u1ff8\u1ff9\u1ffa\u1ffb\u2126'
        '\u212a\u212b\u2132\u2160\u2161\u2162\u2163\u2164\u2165\u2166\u2167\u2168\u2169\u216a'
        '\u216b\u216c\u216d\u216e\u216f\u2183\u24b6\u24b7\u24b8\u24b9\u24ba\u24bb\u24bc\u24bd'
        '\u24be\u24bf\u24c0\u24c1\u24c2\u24c3\u24c4\u24c5\u24c6\u24c7\u24c8\u24c9\u24ca\u24cb'
        '\u24cc\u24cd\u24ce\u24cf\u2c00\u2c01\u2c02\u2c03\u2c04\u2c05\u2c06\u2c07\u2c08\u2c09'
        '\u2c0a\u2c0b\u2c0c\u2c0d\u2c0e\u2c0f\u2c10\u2c11\u2c12\u2c13\u2c14\u2c15\u2c16\u2c17'
        '\u2c18\u2c19\u2c1a\u2c1b\u2c1c\u2c1d\u2c1e\u2c1f\u2c20\u2c21\u2c22\u2c23\u2c24\u2c25'
        '\u2c26\u2c27\u2c28\u2c29\u2c2a\u2c2b\u2c2c\u2c2d\u2c2e\u2c2f\u2c60\u2c62\u2c63\u2c64'
        '\u2c67\u2c69\u2c6b\u2c6d\u2c6e\u2c6f\u2c70\u2c72\u2c75\u2c7e\u2c7f\u2c80\u2c82\u2c84'
        '\u2c86\u2c88\u2c8a\u2c8c\u2c8e\u2c90\u2c92\u2c94\u2c96\u2c98\u2c9a\u2c9c\u2c9e\u2ca0'
        '\u2ca2\u2ca4\u2ca6\u2ca8\u2caa\u2cac\u2cae\u2cb0\u2cb2\u2cb4\u2cb6\u2cb8\u2cba\u2cbc'
        '\u2cbe\u2cc0\u2cc2\u2cc4\u2cc6\u2cc8\u2cca\u2ccc\u2cce\u2cd0\u2cd2\u2cd4\u2cd6\u2cd8'
        '\u2cda\u2cdc\u2cde\u2ce0\u2ce2\u2ceb\u2ced\u2cf2\ua640\ua642\ua644\ua646\ua648\ua64a'
        '\ua64c\ua64e\ua650\ua652\ua654\ua656\ua658\ua65a\ua65c\ua65e\ua660\ua662\ua664\ua666'
        '\ua668\ua66a\ua66c\ua680\ua682\ua684\ua686\ua688\ua68a\ua68c\ua68e\ua690\ua692\ua694'
        '\ua696\ua698\ua69a\ua722\ua724\ua726\ua728\ua72a\ua72c\ua72e\ua732\ua734\ua736\ua738'
        '\ua73a\ua73c\ua73e\ua740\ua742\ua744\ua746\ua748\ua74a\ua74c\ua74e\ua750\ua752\ua754'
        '\ua756\ua758\ua75a\ua75c\ua75e\ua760\ua762\ua764\ua766\ua768\ua76a\ua76c\ua76e\ua779'
        '\ua77b\ua77d\ua77e\ua780\ua782\ua784\ua786\ua78b\ua78d\ua790\ua792\ua796\ua798\ua79a'
        '\ua79c\ua79e\ua7a0\ua7a2\ua7a4\ua7a6\ua7a8\ua7aa\ua7ab\ua7ac\ua7ad\ua7ae\ua7b0\ua7b1'
        '\ua7b2\ua7b3\ua7b4\ua7b6\ua7b8\ua7ba\ua7bc\ua7be\ua7c0\ua7c2\ua7c4\ua7c5\ua7c6\ua7c7'
        '\ua7c9\ua7d0\ua7d6\ua7d8\ua7f5\uab70\uab71\uab72\uab73\uab74\uab75\uab76\uab77\uab78'
        '\uab79\uab7a\uab7b\uab7c\uab7d\uab7e\uab7f\uab80\uab81\uab82\uab83\uab84\uab85\uab86'
        '\uab87\uab88\uab89\uab8a\uab8b\uab8c\uab8d\uab8e\uab8f\uab90\uab91\uab92\uab93\uab94'
        '\uab95\uab96\uab97\uab98\uab99\uab9a\uab9b\uab9c\uab9d\uab9e\uab9f\uaba0\uaba1\uaba2'
        '\uaba3\uaba4\uaba5\uaba6\uaba7\uaba8\uaba9\uabaa\uabab\uabac\uabad\uabae\uabaf\uabb0'
        '\uabb1\uabb2\uabb3\uabb4\uabb5\uabb6\uabb7\uabb8\uabb9\uabba\uabbb\uabbc\uabbd\uabbe'
        '\uabbf\uff21\uff22\uff23\uff24\uff25\uff26\uff27\uff28\uff29\uff2a\uff2b\uff2c\uff2d'
        '\uff2e\uff2f\uff30\uff31\uff32\uff33\uff34\uff35\uff36\uff37\uff38\uff39\uff3a\U00010400'
        '\U00010401\U00010402\U00010403\U00010404\U00010405\U00010406\U00010407\U00010408'
        '\U00010409\U0001040a\U0001040b\U0001040c\U0001040d\U0001040e\U0001040f\U00010410'
        '\U00010411\U00010412\U00010413\U00010414\U00010415\U00010416\U00010417\U00010418'
        '\U00010419\U0001041a\U0001041b\U0001041c\U0001041d\U0001041e\U0001041f\U00010420'
        '\U00010421\U00010422\U00010423\U00010424\U00010425\U00010426\U00010427\U000104b0'
        '\U000104b1\U000104b2\U000104b3\U000104b4\U000104b5\U000104b6\U000104b7\U000104b8'
        '\U000104b9\U000104ba\U000104bb\U000104bc\U000104bd\U000104be\U000104bf\U000104c0'
        '\U000104c1\U000104c2\U000104c3\U000104c4\U000104c5\U000104c6\U000104c7\U000104c8'
        '\U000104c9\U000104ca\U000104cb\U000104cc\U000104cd\U000104ce\U000104cf\U000104d0'
        '\U000104d1\U000104d2\U000104d3\U00010570\U00010571\U00010572\U00010573\U00010574'
        '\U00010575\U00010576\U00010577\U00010578\U00010579\U0001057a\U0001057c\U0001057d'
        '\U0001057e\U0001057f\U00010580\U00010581\U00010582\U00010583\U00010584\U00010585'
        '\U00010586\U00010587\U00010588\U00010589\U0001058a\U0001058c\U0001058d\U0001058e'
        '\U0001058f\U00010590\U00010591\U00010592\U00010594\U00010595\U00010c80\U00010c81'
        '\U00010c82\U00010c83\U00010c84\U00010c85\U00010c86\U00010c87\U00010c88\U00010c89'
        '\U00010c8a\U00010c8b\U00010c8c\U00010c8d\U00010c8e\U00010c8f\U00010c90\U00010c91'
        '\U00010c92\U00010c93\U00010c94\U00010c95\U00010c96\U00010c97\U00010c98\U00010c99'
        '\U00010c9a\U00010c9b\U00010c9c\U00010c9d\U00010c9e\U00010c9f\U00010ca0\U00010ca1'
        '\U00010ca2\U00010ca3\U00010ca4\U00010ca5\U00010ca6\U00010ca7\U00010ca8\U00010ca9'
        '\U00010caa\U00010cab\U00010cac\U00010cad\U00010cae\U00010caf\U00010cb0\U00010cb1'
        '\U00010cb2\U000118a0\U000118a1\U000118a2\U000118a3\U000118a4\U000118a5\U000118a6'
        '\U000118a7\U000118a8\U000118a9\U000118aa\U000118ab\U000118ac\U000118ad\U000118ae'
        '\U000118af\U000118b0\U000118b1\U000118b2\U000118b3\U000118b4\U000118b5\U000118b6'
        '\U000118b7\U000118b8\U000118b9\U000118ba\U000118bb\U000118bc\U000118bd\U000118be'
        '\U000118bf\U00016e40\U00016e41\U00016e42\U00016e43\U00016e44\U00016e45\U00016e46'
        '\U00016e47\U00016e48\U00016e49\U00016e4a\U00016e4b\U00016e4c\U00016e4d\U00016e4e'
        '\U00016e4f\U00016e50\U00016e51\U00016e52\U00016e53\U00016e54\U00016e55\U00016e56'
        '\U00016e57\U00016e58\U00016e59\U00016e5a\U00016e5b\U00016e5c\U00016e5d\U00016e5e'
        '\U00016e5f\U0001e900\U0001e901\U0001e902\U0001e903\U0001e904\U0001e905\U0001e906'
        '\U0001e907\U0001e908\U0001e909\U0001e90a\U0001e90b\U0001e90c\U0001e90d\U0001e90e'
        '\U0001e90f\U0001e910\U0001e911\U0001e912\U0001e913\U0001e914\U0001e915\U0001e916'
        '\U0001e917\U0001e918\U0001e919\U0001e91a\U0001e91b\U0001e91c\U0001e91d\U0001e91e'
        '\U0001e91f\U0001e920\U0001e921',
        E'abcdefghijklmnopqrstuvwxyz/._-0123456789abcdefghijklmnopqrstuvwxyz !"#$%&\u0027()*+,:;<='
        '>?@[\u005c]^`{|}~\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u0009\u000a\u000b'
        '\u000c\u000d\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019'
        '\u001a\u001b\u001c\u001d\u001e\u001f\u007f\u03bc\u00e0\u00e1\u00e2\u00e3\u00e4\u00e5'
        '\u00e6\u00e7\u00e8\u00e9\u00ea\u00eb\u00ec\u00ed\u00ee\u00ef\u00f0\u00f1\u00f2\u00f3'
        '\u00f4\u00f5\u00f6\u00f8\u00f9\u00fa\u00fb\u00fc\u00fd\u00fe\u0101\u0103\u0105\u0107'
        '\u0109\u010b\u010d\u010f\u0111\u0113\u0115\u0117\u0119\u011b\u011d\u011f\u0121\u0123'
        '\u0125\u0127\u0129\u012b\u012d\u012f\u0133\u0135\u0137\u013a\u013c\u013e\u0140\u0142'
        '\u0144\u0146\u0148\u014b\u014d\u014f\u0151\u0153\u0155\u0157\u0159\u015b\u015d\u015f'
        '\u0161\u0163\u0165\u0167\u0169\u016b\u016d\u016f\u0171\u0173\u0175\u0177\u00ff\u017a'
        '\u017c\u017es\u0253\u0183\u0185\u0254\u0188\u0256\u0257\u018c\u01dd\u0259\u025b\u0192'
        '\u0260\u0263\u0269\u0268\u0199\u026f\u0272\u0275\u01a1\u01a3\u01a5\u0280\u01a8\u0283'
        '\u01ad\u0288\u01b0\u028a\u028b\u01b4\u01b6\u0292\u01b9\u01bd\u01c6\u01c6\u01c9\u01c9'
        '\u01cc\u01cc\u01ce\u01d0\u01d2\u01d4\u01d6\u01d8\u01da\u01dc\u01df\u01e1\u01e3\u01e5'
        '\u01e7\u01e9\u01eb\u01ed\u01ef\u01f3\u01f3\u01f5\u0195\u01bf\u01f9\u01fb\u01fd\u01ff'
        '\u0201\u0203\u0205\u0207\u0209\u020b\u020d\u020f\u0211\u0213\u0215\u0217\u0219\u021b'
        '\u021d\u021f\u019e\u0223\u0225\u0227\u0229\u022b\u022d\u022f\u0231\u0233\u2c65\u023c'
        '\u019a\u2c66\u0242\u0180\u0289\u028c\u0247\u0249\u024b\u024d\u024f\u03b9\u0371\u0373'
        '\u0377\u03f3\u03ac\u03ad\u03ae\u03af\u03cc\u03cd\u03ce\u03b1\u03b2\u03b3\u03b4\u03b5'
        '\u03b6\u03b7\u03b8\u03b9\u03ba\u03bb\u03bc\u03bd\u03be\u03bf\u03c0\u03c1\u03c3\u03c4'
        '\u03c5\u03c6\u03c7\u03c8\u03c9\u03ca\u03cb\u03c3\u03d7\u03b2\u03b8\u03c6\u03c0\u03d9'
        '\u03db\u03dd\u03df\u03e1\u03e3\u03e5\u03e7\u03e9\u03eb\u03ed\u03ef\u03ba\u03c1\u03b8'
        '\u03b5\u03f8\u03f2\u03fb\u037b\u037c\u037d\u0450\u0451\u0452\u0453\u0454\u0455\u0456'
        '\u0457\u0458\u0459\u045a\u045b\u045c\u045d\u045e\u045f\u0430\u0431\u0432\u0433\u0434'
        '\u0435\u0436\u0437\u0438\u0439\u043a\u043b\u043c\u043d\u043e\u043f\u0440\u0441\u0442'
        '\u0443\u0444\u0445\u0446\u0447\u0448\u0449\u044a\u044b\u044c\u044d\u044e\u044f\u0461'
        '\u0463\u0465\u0467\u0469\u046b\u046d\u046f\u0471\u0473\u0475\u0477\u0479\u047b\u047d'
        '\u047f\u0481\u048b\u048d\u048f\u0491\u0493\u0495\u0497\u0499\u049b\u049d\u049f\u04a1'
        '\u04a3\u04a5\u04a7\u04a9\u04ab\u04ad\u04af\u04b1\u04b3\u04b5\u04b7\u04b9\u04bb\u04bd'
        '\u04bf\u04cf\u04c2\u04c4\u04c6\u04c8\u04ca\u04cc\u04ce\u04d1\u04d3\u04d5\u04d7\u04d9'
        '\u04db\u04dd\u04df\u04e1\u04e3\u04e5\u04e7\u04e9\u04eb\u04ed\u04ef\u04f1\u04f3\u04f5'
        '\u04f7\u04f9\u04fb\u04fd\u04ff\u0501\u0503\u0505\u0507\u0509\u050b\u050d\u050f\u0511'
        '\u0513\u0515\u0517\u0519\u051b\u051d\u051f\u0521\u0523\u0525\u0527\u0529\u052b\u052d'
        '\u052f\u0561\u0562\u0563\u0564\u0565\u0566\u0567\u0568\u0569\u056a\u056b\u056c\u056d'
        '\u056e\u056f\u0570\u0571\u0572\u0573\u0574\u0575\u0576\u0577\u0578\u0579\u057a\u057b'
        '\u057c\u057d\u057e\u057f\u0580\u0581\u0582\u0583\u0584\u0585\u0586\u2d00\u2d01\u2d02'
        '\u2d03\u2d04\u2d05\u2d06\u2d07\u2d08\u2d09\u2d0a\u2d0b\u2d0c\u2d0d\u2d0e\u2d0f\u2d10'
        '\u2d11\u2d12\u2d13\u2d14\u2d15\u2d16\u2d17\u2d18\u2d19\u2d1a\u2d1b\u2d1c\u2d1d\u2d1e'
        '\u2d1f\u2d20\u2d21\u2d22\u2d23\u2d24\u2d25\u2d27\u2d2d\u13f0\u13f1\u13f2\u13f3\u13f4'
        '\u13f5\u0432\u0434\u043e\u0441\u0442\u0442\u044a\u0463\ua64b\u10d0\u10d1\u10d2\u10d3'
        '\u10d4\u10d5\u10d6\u10d7\u10d8\u10d9\u10da\u10db\u10dc\u10dd\u10de\u10df\u10e0\u10e1'
        '\u10e2\u10e3\u10e4\u10e5\u10e6\u10e7\u10e8\u10e9\u10ea\u10eb\u10ec\u10ed\u10ee\u10ef'
        '\u10f0\u10f1\u10f2\u10f3\u10f4\u10f5\u10f6\u10f7\u10f8\u10f9\u10fa\u10fd\u10fe\u10ff'
        '\u1e01\u1e03\u1e05\u1e07\u1e09\u1e0b\u1e0d\u1e0f\u1e11\u1e13\u1e15\u1e17\u1e19\u1e1b'
        '\u1e1d\u1e1f\u1e21\u1e23\u1e25\u1e27\u1e29\u1e2b\u1e2d\u1e2f\u1e31\u1e33\u1e35\u1e37'
        '\u1e39\u1e3b\u1e3d\u1e3f\u1e41\u1e43\u1e45\u1e47\u1e49\u1e4b\u1e4d\u1e4f\u1e51\u1e53'
        '\u1e55\u1e57\u1e59\u1e5b\u1e5d\u1e5f\u1e61\u1e63\u1e65\u1e67\u1e69\u1e6b\u1e6d\u1e6f'
        '\u1e71\u1e73\u1e75\u1e77\u1e79\u1e7b\u1e7d\u1e7f\u1e81\u1e83\u1e85\u1e87\u1e89\u1e8b'
        '\u1e8d\u1e8f\u1e91\u1e93\u1e95\u1e61\u1ea1\u1ea3\u1ea5\u1ea7\u1ea9\u1eab\u1ead\u1eaf'
        '\u1eb1\u1eb3\u1eb5\u1eb7\u1eb9\u1ebb\u1ebd\u1ebf\u1ec1\u1ec3\u1ec5\u1ec7\u1ec9\u1ecb'
        '\u1ecd\u1ecf\u1ed1\u1ed3\u1ed5\u1ed7\u1ed9\u1edb\u1edd\u1edf\u1ee1\u1ee3\u1ee5\u1ee7'
        '\u1ee9\u1eeb\u1eed\u1eef\u1ef1\u1ef3\u1ef5\u1ef7\u1ef9\u1efb\u1efd\u1eff\u1f00\u1f01'
        '\u1f02\u1f03\u1f04\u1f05\u1f06\u1f07\u1f10\u1f11\u1f12\u1f13\u1f14\u1f15\u1f20\u1f21'
        '\u1f22\u1f23\u1f24\u1f25\u1f26\u1f27\u1f30\u1f31\u1f32\u1f33\u1f34\u1f35\u1f36\u1f37'
        '\u1f40\u1f41\u1f42\u1f43\u1f44\u1f45\u1f51\u1f53\u1f55\u1f57\u1f60\u1f61\u1f62\u1f63'
        '\u1f64\u1f65\u1f66\u1f67\u1fb0\u1fb1\u1f70\u1f71\u03b9\u1f72\u1f73\u1f74\u1f75\u1fd0'
        '\u1fd1\u1f76\u1f77\u1fe0\u1fe1\u1f7a\u1f7b\u1fe5\u1f78\u1f79\u1f7c\u1f7d\u03c9k\u00e5'
        '\u214e\u2170\u2171\u2172\u2173\u2174\u2175\u2176\u2177\u2178\u2179\u217a\u217b\u217c'
        '\u217d\u217e\u217f\u2184\u24d0\u24d1\u24d2\u24d3\u24d4\u24d5\u24d6\u24d7\u24d8\u24d9'
        '\u24da\u24db\u24dc\u24dd\u24de\u24df\u24e0\u24e1\u24e2\u24e3\u24e4\u24e5\u24e6\u24e7'
        '\u24e8\u24e9\u2c30\u2c31\u2c32\u2c33\u2c34\u2c35\u2c36\u2c37\u2c38\u2c39\u2c3a\u2c3b'
        '\u2c3c\u2c3d\u2c3e\u2c3f\u2c40\u2c41\u2c42\u2c43\u2c44\u2c45\u2c46\u2c47\u2c48\u2c49'
        '\u2c4a\u2c4b\u2c4c\u2c4d\u2c4e\u2c4f\u2c50\u2c51\u2c52\u2c53\u2c54\u2c55\u2c56\u2c57'
        '\u2c58\u2c59\u2c5a\u2c5b\u2c5c\u2c5d\u2c5e\u2c5f\u2c61\u026b\u1d7d\u027d\u2c68\u2c6a'
        '\u2c6c\u0251\u0271\u0250\u0252\u2c73\u2c76\u023f\u0240\u2c81\u2c83\u2c85\u2c87\u2c89'
        '\u2c8b\u2c8d\u2c8f\u2c91\u2c93\u2c95\u2c97\u2c99\u2c9b\u2c9d\u2c9f\u2ca1\u2ca3\u2ca5'
        '\u2ca7\u2ca9\u2cab\u2cad\u2caf\u2cb1\u2cb3\u2cb5\u2cb7\u2cb9\u2cbb\u2cbd\u2cbf\u2cc1'
        '\u2cc3\u2cc5\u2cc7\u2cc9\u2ccb\u2ccd\u2ccf\u2cd1\u2cd3\u2cd5\u2cd7\u2cd9\u2cdb\u2cdd'
        '\u2cdf\u2ce1\u2ce3\u2cec\u2cee\u2cf3\ua641\ua643\ua645\ua647\ua649\ua64b\ua64d\ua64f'
        '\ua651\ua653\ua655\ua657\ua659\ua65b\ua65d\ua65f\ua661\ua663\ua665\ua667\ua669\ua66b'
        '\ua66d\ua681\ua683\ua685\ua687\ua689\ua68b\ua68d\ua68f\ua691\ua693\ua695\ua697\ua699'
        '\ua69b\ua723\ua725\ua727\ua729\ua72b\ua72d\ua72f\ua733\ua735\ua737\ua739\ua73b\ua73d'
        '\ua73f\ua741\ua743\ua745\ua747\ua749\ua74b\ua74d\ua74f\ua751\ua753\ua755\ua757\ua759'
        '\ua75b\ua75d\ua75f\ua761\ua763\ua765\ua767\ua769\ua76b\ua76d\ua76f\ua77a\ua77c\u1d79'
        '\ua77f\ua781\ua783\ua785\ua787\ua78c\u0265\ua791\ua793\ua797\ua799\ua79b\ua79d\ua79f'
        '\ua7a1\ua7a3\ua7a5\ua7a7\ua7a9\u0266\u025c\u0261\u026c\u026a\u029e\u0287\u029d\uab53'
        '\ua7b5\ua7b7\ua7b9\ua7bb\ua7bd\ua7bf\ua7c1\ua7c3\ua794\u0282\u1d8e\ua7c8\ua7ca\ua7d1'
        '\ua7d7\ua7d9\ua7f6\u13a0\u13a1\u13a2\u13a3\u13a4\u13a5\u13a6\u13a7\u13a8\u13a9\u13aa'
        '\u13ab\u13ac\u13ad\u13ae\u13af\u13b0\u13b1\u13b2\u13b3\u13b4\u13b5\u13b6\u13b7\u13b8'
        '\u13b9\u13ba\u13bb\u13bc\u13bd\u13be\u13bf\u13c0\u13c1\u13c2\u13c3\u13c4\u13c5\u13c6'
        '\u13c7\u13c8\u13c9\u13ca\u13cb\u13cc\u13cd\u13ce\u13cf\u13d0\u13d1\u13d2\u13d3\u13d4'
        '\u13d5\u13d6\u13d7\u13d8\u13d9\u13da\u13db\u13dc\u13dd\u13de\u13df\u13e0\u13e1\u13e2'
        '\u13e3\u13e4\u13e5\u13e6\u13e7\u13e8\u13e9\u13ea\u13eb\u13ec\u13ed\u13ee\u13ef\uff41'
        '\uff42\uff43\uff44\uff45\uff46\uff47\uff48\uff49\uff4a\uff4b\uff4c\uff4d\uff4e\uff4f'
        '\uff50\uff51\uff52\uff53\uff54\uff55\uff56\uff57\uff58\uff59\uff5a\U00010428\U00010429'
        '\U0001042a\U0001042b\U0001042c\U0001042d\U0001042e\U0001042f\U00010430\U00010431'
        '\U00010432\U00010433\U00010434\U00010435\U00010436\U00010437\U00010438\U00010439'
        '\U0001043a\U0001043b\U0001043c\U0001043d\U0001043e\U0001043f\U00010440\U00010441'
        '\U00010442\U00010443\U00010444\U00010445\U00010446\U00010447\U00010448\U00010449'
        '\U0001044a\U0001044b\U0001044c\U0001044d\U0001044e\U0001044f\U000104d8\U000104d9'
        '\U000104da\U000104db\U000104dc\U000104dd\U000104de\U000104df\U000104e0\U000104e1'
        '\U000104e2\U000104e3\U000104e4\U000104e5\U000104e6\U000104e7\U000104e8\U000104e9'
        '\U000104ea\U000104eb\U000104ec\U000104ed\U000104ee\U000104ef\U000104f0\U000104f1'
        '\U000104f2\U000104f3\U000104f4\U000104f5\U000104f6\U000104f7\U000104f8\U000104f9'
        '\U000104fa\U000104fb\U00010597\U00010598\U00010599\U0001059a\U0001059b\U0001059c'
        '\U0001059d\U0001059e\U0001059f\U000105a0\U000105a1\U000105a3\U000105a4\U000105a5'
        '\U000105a6\U000105a7\U000105a8\U000105a9\U000105aa\U000105ab\U000105ac\U000105ad'
        '\U000105ae\U000105af\U000105b0\U000105b1\U000105b3\U000105b4\U000105b5\U000105b6'
        '\U000105b7\U000105b8\U000105b9\U000105bb\U000105bc\U00010cc0\U00010cc1\U00010cc2'
        '\U00010cc3\U00010cc4\U00010cc5\U00010cc6\U00010cc7\U00010cc8\U00010cc9\U00010cca'
        '\U00010ccb\U00010ccc\U00010ccd\U00010cce\U00010ccf\U00010cd0\U00010cd1\U00010cd2'
        '\U00010cd3\U00010cd4\U00010cd5\U00010cd6\U00010cd7\U00010cd8\U00010cd9\U00010cda'
        '\U00010cdb\U00010cdc\U00010cdd\U00010cde\U00010cdf\U00010ce0\U00010ce1\U00010ce2'
        '\U00010ce3\U00010ce4\U00010ce5\U00010ce6\U00010ce7\U00010ce8\U00010ce9\U00010cea'
        '\U00010ceb\U00010cec\U00010ced\U00010cee\U00010cef\U00010cf0\U00010cf1\U00010cf2'
        '\U000118c0\U000118c1\U000118c2\U000118c3\U000118c4\U000118c5\U000118c6\U000118c7'
        '\U000118c8\U000118c9\U000118ca\U000118cb\U000118cc\U000118cd\U000118ce\U000118cf'
        '\U000118d0\U000118d1\U000118d2\U000118d3\U000118d4\U000118d5\U000118d6\U000118d7'
        '\U000118d8\U000118d9\U000118da\U000118db\U000118dc\U000118dd\U000118de\U000118df'
        '\U00016e60\U00016e61\U00016e62\U00016e63\U00016e64\U00016e65\U00016e66\U00016e67'
        '\U00016e68\U00016e69\U00016e6a\U00016e6b\U00016e6c\U00016e6d\U00016e6e\U00016e6f'
        '\U00016e70\U00016e71\U00016e72\U00016e73\U00016e74\U00016e75\U00016e76\U00016e77'
        '\U00016e78\U00016e79\U00016e7a\U00016e7b\U00016e7c\U00016e7d\U00016e7e\U00016e7f'
        '\U0001e922\U0001e923\U0001e924\U0001e925\U0001e926\U0001e927\U0001e928\U0001e929'
        '\U0001e92a\U0001e92b\U0001e92c\U0001e92d\U0001e92e\U0001e92f\U0001e930\U0001e931'
        '\U0001e932\U0001e933\U0001e934\U0001e935\U0001e936\U0001e937\U0001e938\U0001e939'
        '\U0001e93a\U0001e93b\U0001e93c\U0001e93d\U0001e93e\U0001e93f\U0001e940\U0001e941'
        '\U0001e942\U0001e943');
    IF s ~ E'[\\u00df\\u0130\\u0149\\u01f0\\u0390\\u03b0\\u0587\\u1e96-\\u1e9a\\u1e9e\\u1f50\\u1f52'
        '\\u1f54\\u1f56\\u1f80-\\u1faf\\u1fb2-\\u1fb4\\u1fb6-\\u1fb7\\u1fbc\\u1fc2-\\u1fc4'
        '\\u1fc6-\\u1fc7\\u1fcc\\u1fd2-\\u1fd3\\u1fd6-\\u1fd7\\u1fe2-\\u1fe4\\u1fe6-\\u1fe7'
        '\\u1ff2-\\u1ff4\\u1ff6-\\u1ff7\\u1ffc\\ufb00-\\ufb06\\ufb13-\\ufb17]' THEN
        FOR i IN 1 .. array_length(long_from, 1) LOOP
            s := replace(s, long_from[i], long_to[i]);
        END LOOP;
    END IF;
    RETURN s;
END
$$;
-- END generated by git_lacunari.casemap

-- ---- 0005: the write API (see 0005_team.sql) ----
-- Is this board in team mode (`git lac team enable`)?
CREATE FUNCTION lac_team() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce((SELECT s.value = 'on' FROM lac_settings s WHERE s.name = 'team_mode'), false) $$;

-- The one place identity is decided: in plain mode the name the caller gives;
-- in team mode the session's role, and a different name given is refused.
CREATE FUNCTION lac_actor(p_claimed text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    IF NOT lac_team() THEN
        RETURN p_claimed;
    END IF;
    IF p_claimed IS NOT NULL AND p_claimed IS DISTINCT FROM session_user::text THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('team mode: this session is the role %s and acts only as %s, not as %s',
                             session_user, session_user, p_claimed);
    END IF;
    RETURN session_user::text;
END
$$;

-- Is the session's role a member of the board's keeper / admin group (team
-- mode; the group names are recorded by `team enable` as team_role:KIND)?
CREATE FUNCTION lac_has(p_kind text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce((SELECT pg_has_role(session_user, s.value, 'MEMBER')
                       FROM lac_settings s
                      WHERE s.name = 'team_role:' || p_kind
                        AND EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = s.value)), false)
    $$;

CREATE FUNCTION lac_refuse(p_message text) RETURNS void
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = p_message; END $$;

-- A task claimed by someone is changed (paths, dependencies, locks) only by
-- its holder, or an admin; in plain mode by anyone, as before.
CREATE FUNCTION lac_may_change(p_task bigint) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT NOT lac_team() OR lac_has('admin')
        OR NOT EXISTS (SELECT 1 FROM lac_tasks t
                        WHERE t.id = p_task AND t.state = 'claimed'
                          AND t.owner IS DISTINCT FROM session_user::text)
    $$;

CREATE FUNCTION lac_require_change(p_task bigint) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    IF NOT lac_may_change(p_task) THEN
        PERFORM lac_refuse(format('team mode: task #%s is claimed by another agent', p_task));
    END IF;
END
$$;

-- Team mode: may the session act on claims and locks of another agent for
-- the keeper's work (expiring what is stale)?
CREATE FUNCTION lac_keeps(p_owner text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT NOT lac_team() OR p_owner = session_user::text OR lac_has('keeper') $$;

-- The board's stale-after for claims that carry none (as board.py reads it).
CREATE FUNCTION lac_default_stale() RETURNS double precision
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce((SELECT s.value::double precision FROM lac_settings s
                      WHERE s.name = 'stale_after'), 1800.0)
    $$;

-- Team mode: the database itself refuses a lock that overlaps another
-- agent's (or another instance's) where either is a write, serialised as
-- board.py serialises grants, and found as board.py finds them: a plain path
-- or directory meets plain ones by name (its ancestors, or below it, through
-- lac_locks_pattern), and globs through their index key (lac_locks_globs),
-- compared with lac_overlap. In team mode every lock's key is computed here
-- (lac_index_key), never taken from the caller, so a forged key hides nothing.
-- Case is compared exactly (core.ignorecase is the caller's own check).
CREATE INDEX lac_locks_pattern ON lac_locks (pattern COLLATE "C");
CREATE INDEX lac_locks_globs ON lac_locks (key) WHERE pattern ~ '[*?[\\]';

CREATE FUNCTION lac_require_free(p_agent text, p_instance text, p_pattern text, p_mode text,
                                 p_except bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    held record;
    w text := rtrim(p_pattern, '/');
    k text := lac_index_key(p_pattern);
    names text[];
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('lac_locks:' || current_schema()));
    IF p_pattern !~ '[*?[\\]' THEN
        -- 'a/b/c.py' meets plain a, a/, a/b, a/b/, a/b/c.py, a/b/c.py/ and all below it
        names := ARRAY(SELECT n FROM generate_series(1, length(w) + 1) AS i,
                                     LATERAL unnest(ARRAY[left(w, i - 1), left(w, i - 1) || '/']) AS n
                        WHERE i = length(w) + 1 OR substr(w, i, 1) = '/');
        SELECT l.pattern, l.agent, l.task_id, l.mode INTO held FROM lac_locks l
         WHERE (l.pattern COLLATE "C" = ANY (names)
                OR (l.pattern COLLATE "C" >= w || '/'
                    AND l.pattern COLLATE "C" < w || '/' || U&'\+10FFFF'))
           AND l.id IS DISTINCT FROM p_except
           AND NOT (l.agent = p_agent AND l.instance IS NOT DISTINCT FROM p_instance)
           AND (l.mode = 'w' OR p_mode = 'w');  -- no LIMIT: it would tempt a seq scan
        IF NOT FOUND THEN
            SELECT l.pattern, l.agent, l.task_id, l.mode INTO held FROM lac_locks l
             WHERE l.pattern ~ '[*?[\\]'
               AND (l.key = ANY (lac_ancestor_keys(k)) OR (l.key >= k AND l.key < k || U&'\+10FFFF'))
               AND l.id IS DISTINCT FROM p_except
               AND NOT (l.agent = p_agent AND l.instance IS NOT DISTINCT FROM p_instance)
               AND (l.mode = 'w' OR p_mode = 'w')
               AND lac_overlap(l.pattern, p_pattern, false)
             LIMIT 1;
        END IF;
    ELSE
        SELECT l.pattern, l.agent, l.task_id, l.mode INTO held FROM lac_locks l
         WHERE (l.key = ANY (lac_ancestor_keys(k)) OR (l.key >= k AND l.key < k || U&'\+10FFFF'))
           AND l.id IS DISTINCT FROM p_except
           AND NOT (l.agent = p_agent AND l.instance IS NOT DISTINCT FROM p_instance)
           AND (l.mode = 'w' OR p_mode = 'w')
           AND lac_overlap(l.pattern, p_pattern, false)
         LIMIT 1;
    END IF;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'LAC01',
            MESSAGE = format('%s holds %s, which overlaps %s', held.agent, held.pattern, p_pattern),
            DETAIL = jsonb_build_object('path', p_pattern, 'wanted', p_mode, 'holder', held.agent,
                                        'task', held.task_id, 'pattern', held.pattern,
                                        'mode', held.mode)::text;
    END IF;
END
$$;

-- --- the write API: one function per named query of queries.sql -------------

CREATE FUNCTION lac_api_upsert_agent(p_agent text, p_caps jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    IF lac_team() THEN  -- capabilities are the board's record (`team add --caps`)
        INSERT INTO lac_agents (name, last_seen) VALUES (a, lac_now())
        ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen;
    ELSE
        INSERT INTO lac_agents (name, capabilities, last_seen) VALUES (a, p_caps, lac_now())
        ON CONFLICT (name) DO UPDATE SET capabilities = excluded.capabilities,
                                         last_seen = excluded.last_seen;
    END IF;
END
$$;

CREATE FUNCTION lac_api_agent_seen(p_agent text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO lac_agents (name, last_seen) VALUES (lac_actor(p_agent), lac_now())
    ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen;
END
$$;

CREATE FUNCTION lac_api_upsert_instance(p_instance text, p_agent text, p_host text, p_path text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    INSERT INTO lac_instances AS i (id, agent, host, path, last_seen)
    VALUES (p_instance, a, p_host, p_path, lac_now())
    ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, host = excluded.host,
        path = excluded.path, last_seen = excluded.last_seen
     WHERE NOT lac_team() OR i.agent = excluded.agent;  -- never another's instance
END
$$;

CREATE FUNCTION lac_api_insert_task(p_title text, p_body text, p_lane text, p_priority integer,
                                    p_needs jsonb, p_agent text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    made bigint;
BEGIN
    INSERT INTO lac_tasks (title, body, lane, priority, needs, created_at, created_by)
    VALUES (p_title, p_body, p_lane, p_priority, p_needs, lac_now(), lac_actor(p_agent))
    RETURNING id INTO made;
    RETURN made;
END
$$;

CREATE FUNCTION lac_api_insert_dep(p_task bigint, p_depends_on bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    INSERT INTO lac_task_deps (task_id, depends_on) VALUES (p_task, p_depends_on)
    ON CONFLICT DO NOTHING;
END
$$;

CREATE FUNCTION lac_api_delete_dep(p_task bigint, p_depends_on bigint) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_task_deps d WHERE d.task_id = p_task AND d.depends_on = p_depends_on
        RETURNING d.depends_on)
    SELECT gone.depends_on FROM gone;
END
$$;

CREATE FUNCTION lac_api_insert_task_path(p_task bigint, p_pattern text, p_mode text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    INSERT INTO lac_task_paths AS p (task_id, pattern, mode) VALUES (p_task, p_pattern, p_mode)
    ON CONFLICT (task_id, pattern) DO UPDATE SET mode = greatest(p.mode, excluded.mode);
END
$$;

CREATE FUNCTION lac_api_delete_task_path(p_task bigint, p_pattern text)
    RETURNS SETOF lac_task_paths
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_task_paths p WHERE p.task_id = p_task AND p.pattern = p_pattern
        RETURNING p.*)
    SELECT * FROM gone;
END
$$;

-- The claim: the same single guarded UPDATE (lac_claimable, the one rule)
-- and its `claimed` event.
CREATE FUNCTION lac_api_claim(p_task bigint, p_agent text, p_instance text,
                              p_stale_after double precision) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH claimed AS (
        UPDATE lac_tasks AS t
           SET state = 'claimed', owner = a, claimed_at = lac_now(), heartbeat_at = lac_now(),
               stale_after = p_stale_after, attempts = t.attempts + 1, instance = p_instance
         WHERE t.id = p_task AND t.state = 'open'
           AND EXISTS (SELECT 1 FROM lac_claimable(t.id, a) AS ok WHERE ok)
        RETURNING t.*
    ), recorded AS (
        INSERT INTO lac_events (at, task_id, agent, kind, detail)
        SELECT lac_now(), c.id, c.owner, 'claimed', jsonb_build_object('attempt', c.attempts)
          FROM claimed c
    )
    SELECT * FROM claimed;
END
$$;

-- `claim --next` in one statement when the best candidate declares no paths.
CREATE FUNCTION lac_api_claim_next_free(p_lane text, p_agent text, p_instance text,
                                        p_stale_after double precision) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH claimed AS (
        UPDATE lac_tasks AS u
           SET state = 'claimed', owner = a, claimed_at = lac_now(), heartbeat_at = lac_now(),
               stale_after = p_stale_after, attempts = u.attempts + 1, instance = p_instance
         WHERE u.state = 'open'
           AND u.id = (SELECT t.id FROM lac_tasks t
                        WHERE t.lane = p_lane AND t.state = 'open'
                          AND EXISTS (SELECT 1 FROM lac_claimable(t.id, a) AS ok WHERE ok)
                        ORDER BY t.priority DESC, t.created_at, t.id
                        LIMIT 1
                          FOR UPDATE SKIP LOCKED)
           AND NOT EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = u.id)
        RETURNING u.*
    ), recorded AS (
        INSERT INTO lac_events (at, task_id, agent, kind, detail)
        SELECT lac_now(), c.id, c.owner, 'claimed', jsonb_build_object('attempt', c.attempts)
          FROM claimed c
    )
    SELECT * FROM claimed;
END
$$;

-- The next candidate, row-locked (SKIP LOCKED) for the caller's transaction:
-- a row lock needs a write privilege, so it is taken here.
CREATE FUNCTION lac_api_next_candidate(p_lane text, p_agent text, p_skip jsonb)
    RETURNS TABLE (id bigint, has_paths boolean)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY
    SELECT t.id, EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = t.id)
      FROM lac_tasks t
     WHERE t.lane = p_lane AND t.state = 'open'
       AND EXISTS (SELECT 1 FROM lac_claimable(t.id, a) AS ok WHERE ok)
       AND t.id NOT IN (SELECT v::bigint FROM jsonb_array_elements_text(p_skip) AS v)
     ORDER BY t.priority DESC, t.created_at, t.id
     LIMIT 1
       FOR UPDATE OF t SKIP LOCKED;
END
$$;

CREATE FUNCTION lac_api_insert_lock(p_pattern text, p_key text, p_mode text, p_agent text,
                                    p_task bigint, p_base_blob text, p_instance text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    k text := p_key;
BEGIN
    IF lac_team() THEN
        k := lac_index_key(p_pattern);  -- never the caller's
        IF p_task IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM lac_tasks t WHERE t.id = p_task AND t.state = 'claimed'
                   AND t.owner = a) THEN
            PERFORM lac_refuse(format('team mode: task #%s is not claimed by %s', p_task, a));
        END IF;
        PERFORM lac_require_free(a, p_instance, p_pattern, p_mode, NULL);
    END IF;
    RETURN QUERY
    INSERT INTO lac_locks (pattern, key, mode, agent, task_id, acquired_at, base_blob, instance)
    VALUES (p_pattern, k, p_mode, a, p_task, lac_now(), p_base_blob, p_instance)
    RETURNING *;
END
$$;

-- Every lock of one grant in one call (scale's batched grant): :p_locks is
-- [{"pattern", "key", "mode", "base_blob"}]. In team mode each is judged as
-- lac_api_insert_lock judges one: the key computed here, the task the
-- actor's, and no conflict with another's lock (lac_require_free).
CREATE FUNCTION lac_api_insert_locks(p_locks jsonb, p_agent text, p_task bigint,
                                     p_instance text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    x record;
BEGIN
    IF lac_team() THEN
        IF p_task IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM lac_tasks t WHERE t.id = p_task AND t.state = 'claimed'
                   AND t.owner = a) THEN
            PERFORM lac_refuse(format('team mode: task #%s is not claimed by %s', p_task, a));
        END IF;
        FOR x IN SELECT * FROM jsonb_to_recordset(p_locks) AS r(pattern text, mode text) LOOP
            PERFORM lac_require_free(a, p_instance, x.pattern, x.mode, NULL);
        END LOOP;
    END IF;
    RETURN QUERY
    INSERT INTO lac_locks (pattern, key, mode, agent, task_id, acquired_at, base_blob, instance)
    SELECT r.pattern, CASE WHEN lac_team() THEN lac_index_key(r.pattern) ELSE r.key END,
           r.mode, a, p_task, lac_now(), r.base_blob, p_instance
      FROM jsonb_to_recordset(p_locks) AS r(pattern text, key text, mode text, base_blob text)
    RETURNING *;
END
$$;

CREATE FUNCTION lac_api_upgrade_lock(p_lock bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(NULL);
    held lac_locks;
BEGIN
    SELECT * INTO held FROM lac_locks l WHERE l.id = p_lock;
    IF lac_team() AND FOUND THEN
        IF held.agent <> a THEN
            PERFORM lac_refuse(format('team mode: lock %s is not %s''s', p_lock, a));
        END IF;
        PERFORM lac_require_free(a, held.instance, held.pattern, 'w', p_lock);
    END IF;
    UPDATE lac_locks SET mode = 'w' WHERE id = p_lock;
END
$$;

CREATE FUNCTION lac_api_delete_task_locks(p_task bigint) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (DELETE FROM lac_locks l WHERE l.task_id = p_task RETURNING l.*)
    SELECT * FROM gone;
END
$$;

CREATE FUNCTION lac_api_delete_task_lock(p_task bigint, p_pattern text) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks l WHERE l.task_id = p_task AND l.pattern = p_pattern
        RETURNING l.*)
    SELECT * FROM gone;
END
$$;

CREATE FUNCTION lac_api_delete_agent_lock(p_agent text, p_instance text, p_pattern text)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks l WHERE l.agent = a AND l.instance = p_instance
                                  AND l.pattern = p_pattern
        RETURNING l.*)
    SELECT * FROM gone;
END
$$;

-- Every agent's lock on exactly this pattern (`unlock --force`): in team
-- mode another agent's lock only for an admin.
CREATE FUNCTION lac_api_delete_pattern_locks(p_pattern text) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF lac_team() AND NOT lac_has('admin') AND EXISTS (
            SELECT 1 FROM lac_locks l
             WHERE l.pattern = p_pattern AND l.agent <> session_user::text) THEN
        PERFORM lac_refuse(format(
            'team mode: only an admin removes another agent''s lock on %s', p_pattern));
    END IF;
    RETURN QUERY WITH gone AS (DELETE FROM lac_locks l WHERE l.pattern = p_pattern RETURNING l.*)
    SELECT * FROM gone;
END
$$;

-- Back to open. In team mode another agent's claim only for an admin
-- (`release --force`, audited by board.py's event in the admin's name).
CREATE FUNCTION lac_api_release(p_task bigint, p_owner text) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF lac_team() AND p_owner IS DISTINCT FROM session_user::text AND NOT lac_has('admin') THEN
        PERFORM lac_refuse(format(
            'team mode: only an admin releases another agent''s claim (task #%s)', p_task));
    END IF;
    RETURN QUERY WITH freed AS (
        UPDATE lac_tasks t
           SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = p_owner
        RETURNING t.*)
    SELECT * FROM freed;
END
$$;

CREATE FUNCTION lac_api_park(p_task bigint, p_owner text) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_owner);
BEGIN
    RETURN QUERY WITH parked AS (
        UPDATE lac_tasks t
           SET state = 'parked', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a
        RETURNING t.*)
    SELECT * FROM parked;
END
$$;

CREATE FUNCTION lac_api_done(p_task bigint, p_agent text, p_instance text) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH finished AS (
        UPDATE lac_tasks t SET state = 'done', heartbeat_at = lac_now()
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a AND t.instance = p_instance
        RETURNING t.*)
    SELECT * FROM finished;
END
$$;

CREATE FUNCTION lac_api_heartbeat(p_agent text, p_instance text, p_ids jsonb)
    RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH beat AS (
        UPDATE lac_tasks t SET heartbeat_at = lac_now()
         WHERE t.owner = a AND t.instance = p_instance AND t.state = 'claimed'
           AND (p_ids IS NULL
                OR t.id IN (SELECT v::bigint FROM jsonb_array_elements_text(p_ids) AS v))
        RETURNING t.id)
    SELECT beat.id FROM beat;
END
$$;

-- Stale claims, row-locked for the sweep. Team mode: a keeper sees every
-- one; any other agent only its own.
CREATE FUNCTION lac_api_stale_claims(p_default_stale double precision,
                                     p_at_least double precision)
    RETURNS TABLE (id bigint, lane text, owner text, heartbeat_at double precision,
                   attempts integer, silent_for double precision)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT t.id, t.lane, t.owner, t.heartbeat_at, t.attempts, lac_now() - t.heartbeat_at
      FROM lac_tasks t
     WHERE t.state = 'claimed'
       AND t.heartbeat_at + greatest(coalesce(t.stale_after, p_default_stale), p_at_least)
           < lac_now()
       AND lac_keeps(t.owner)
     ORDER BY t.heartbeat_at
       FOR UPDATE OF t SKIP LOCKED;
END
$$;

-- Back to the board, unless it heartbeat since the keeper looked; the
-- staleness is checked again here, against the claim's own stale-after.
CREATE FUNCTION lac_api_expire(p_state text, p_task bigint, p_owner text,
                               p_heartbeat_at double precision) RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
BEGIN
    IF NOT lac_keeps(p_owner) THEN
        PERFORM lac_refuse(format(
            'team mode: only a keeper expires another agent''s claim (task #%s)', p_task));
    END IF;
    IF lac_team() AND p_state <> 'open' THEN  -- an expired claim goes back to the board
        PERFORM lac_refuse(format('team mode: an expired claim becomes open, not %s', p_state));
    END IF;
    RETURN QUERY WITH expired AS (
        UPDATE lac_tasks t
           SET state = p_state, owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = p_owner
           AND t.heartbeat_at = p_heartbeat_at
           AND t.heartbeat_at + coalesce(t.stale_after, lac_default_stale()) < lac_now()
        RETURNING t.id)
    SELECT expired.id FROM expired;
END
$$;

-- The silence after which a task-less lock is stale: the caller's period,
-- but in team mode never shorter than the board's stale-after (a keeper's
-- own period, even NULL or negative, does not make a live agent's lock stale).
CREATE FUNCTION lac_lock_stale(p_stale double precision) RETURNS double precision
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN lac_team() THEN greatest(p_stale, lac_default_stale()) ELSE p_stale END
    $$;

-- Task-less locks of agents silent for p_stale, row-locked for the sweep
-- (team mode: a keeper's view, else only the session's own).
CREATE FUNCTION lac_api_silent_agent_locks(p_stale double precision)
    RETURNS TABLE (id bigint, pattern text, agent text, silent_for double precision)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    stale double precision := lac_lock_stale(p_stale);
BEGIN
    RETURN QUERY
    SELECT l.id, l.pattern, l.agent,
           lac_now() - greatest(l.acquired_at, coalesce(a.last_seen, 0))
      FROM lac_locks l LEFT JOIN lac_agents a ON a.name = l.agent
     WHERE l.task_id IS NULL
       AND greatest(l.acquired_at, coalesce(a.last_seen, 0)) + stale < lac_now()
       AND lac_keeps(l.agent)
     ORDER BY l.agent, l.id
       FOR UPDATE OF l SKIP LOCKED;
END
$$;

CREATE FUNCTION lac_api_expire_lock(p_lock bigint, p_stale double precision)
    RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
DECLARE
    stale double precision := lac_lock_stale(p_stale);
BEGIN
    IF NOT lac_keeps((SELECT l.agent FROM lac_locks l WHERE l.id = p_lock)) THEN
        PERFORM lac_refuse('team mode: only a keeper expires another agent''s lock');
    END IF;
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks AS l
         WHERE l.id = p_lock AND l.task_id IS NULL
           AND NOT EXISTS (SELECT 1 FROM lac_agents a
                            WHERE a.name = l.agent AND a.last_seen + stale >= lac_now())
        RETURNING l.*)
    SELECT * FROM gone;
END
$$;

-- Settings: in team mode anyone records a holder (one keeper, one drainer
-- per lane); the rest is an admin's, and the team's own never through here.
CREATE FUNCTION lac_api_set_setting(p_name text, p_value text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF lac_team() THEN
        IF p_name = 'team_mode' OR p_name LIKE 'team\_%' THEN
            PERFORM lac_refuse(format('team mode: %s is set by `git lac team`', p_name));
        ELSIF p_name NOT LIKE 'holder:%' AND NOT lac_has('admin') THEN
            PERFORM lac_refuse(format('team mode: only an admin sets %s', p_name));
        END IF;
    END IF;
    INSERT INTO lac_settings (name, value) VALUES (p_name, p_value)
    ON CONFLICT (name) DO UPDATE SET value = excluded.value;
END
$$;

-- The history is appended to, in the acting agent's name, never changed.
CREATE FUNCTION lac_api_insert_event(p_task bigint, p_agent text, p_kind text, p_detail jsonb)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO lac_events (at, task_id, agent, kind, detail)
    VALUES (lac_now(), p_task, lac_actor(p_agent), p_kind, p_detail);
END
$$;

CREATE FUNCTION lac_api_edit_task(p_task bigint, p_agent text, p_instance text, p_title text,
                                  p_body text, p_lane text, p_priority integer, p_needs jsonb)
    RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH edited AS (
        UPDATE lac_tasks t
           SET title = p_title, body = p_body, lane = p_lane, priority = p_priority,
               needs = p_needs
         WHERE t.id = p_task
           AND (t.state = 'open'
                OR (t.state = 'claimed' AND t.owner = a AND t.instance = p_instance))
        RETURNING t.id)
    SELECT edited.id FROM edited;
END
$$;

CREATE FUNCTION lac_api_cancel(p_task bigint, p_agent text, p_instance text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH cancelled AS (
        UPDATE lac_tasks t
           SET state = 'cancelled', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL
         WHERE t.id = p_task
           AND (t.state IN ('open', 'parked')
                OR (t.state = 'claimed' AND t.owner = a AND t.instance = p_instance))
        RETURNING t.*)
    SELECT * FROM cancelled;
END
$$;

CREATE FUNCTION lac_api_reopen(p_task bigint) RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
BEGIN
    RETURN QUERY WITH reopened AS (
        UPDATE lac_tasks t
           SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
               stale_after = NULL, attempts = 0
         WHERE t.id = p_task AND t.state IN ('done', 'cancelled', 'parked')
        RETURNING t.*)
    SELECT * FROM reopened;
END
$$;

CREATE FUNCTION lac_api_take_over(p_task bigint, p_agent text, p_instance text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    RETURN QUERY WITH moved AS (
        UPDATE lac_tasks t SET instance = p_instance, heartbeat_at = lac_now()
         WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a
        RETURNING t.*)
    SELECT * FROM moved;
END
$$;

CREATE FUNCTION lac_api_take_over_locks(p_task bigint, p_agent text, p_instance text)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE lac_locks SET instance = p_instance
     WHERE task_id = p_task AND agent = lac_actor(p_agent);
END
$$;

-- The write functions store the needs and an event's detail their caller
-- gives: their shape is the tables' own rule, so nothing an agent passes can
-- break another's listing (needs a list of names, a detail an object).
ALTER TABLE lac_tasks ADD CONSTRAINT lac_tasks_needs_names
    CHECK (jsonb_typeof(needs) = 'array'
           AND NOT jsonb_path_exists(needs, '$[*] ? (@.type() != "string")'));
ALTER TABLE lac_events ADD CONSTRAINT lac_events_detail_object
    CHECK (jsonb_typeof(detail) = 'object');

-- --- 0006: the live page's change feed (git lac serve) ----------------------

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
