-- CREATE OR REPLACE: applied after the migrations on every board that reaches
-- the latest schema version (sql/README.md). The one place these bodies live.

-- First created by 0009: a claim's branch and tip, and locks that
-- last until the claim's work lands in the destination. Whether it has landed
-- is git's answer (git_lacunari/landing.py), asked by whoever can see the
-- destination (the worker's `done`, `git lac sweep`, the keeper, the server's
-- post-receive); the database keeps the claim, its write locks and the history.

-- How long a landing claim may stay silent before the keeper expires it: the
-- board's landing_period (`git lac init --landing-period D`), else a day. A
-- claim that starts landing takes it as its stale-after, so every staleness
-- rule (lac_api_stale_claims, lac_api_expire, the page) applies unchanged.
CREATE OR REPLACE FUNCTION lac_landing_period() RETURNS double precision
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN coalesce((SELECT s.value::double precision FROM lac_settings s
                    WHERE s.name = 'landing_period'), 86400.0);
END
$$;

-- Where the holder's claims stand: p_tracks is [[task, branch, tip], ...];
-- only claims of p_agent at p_instance move (a heartbeat's, a hook's). The
-- CHECK constraints refuse a branch or tip that is not one (bad input).
-- Not an event: it changes no one's rights, and happens on every commit.
CREATE OR REPLACE FUNCTION lac_api_track(p_agent text, p_instance text, p_tracks jsonb)
    RETURNS TABLE (id bigint)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a text := lac_actor(p_agent);
BEGIN
    PERFORM lac_require_current();
    IF p_tracks IS NULL OR jsonb_typeof(p_tracks) <> 'array' OR EXISTS (
            SELECT 1 FROM jsonb_array_elements(p_tracks) AS e(v)
             WHERE jsonb_typeof(e.v) <> 'array' OR jsonb_array_length(e.v) <> 3) THEN
        PERFORM lac_invalid('the claims to track are a list of [task, branch, tip]');
    END IF;
    RETURN QUERY WITH moved AS (
        UPDATE lac_tasks t
           SET branch = coalesce(e.v ->> 1, t.branch), tip = e.v ->> 2
          FROM jsonb_array_elements(p_tracks) AS e(v)
         WHERE t.id = (e.v ->> 0)::bigint AND t.state = 'claimed'
           AND t.owner = a AND t.instance = p_instance
           AND t.tip IS DISTINCT FROM e.v ->> 2
        RETURNING t.id)
    SELECT moved.id FROM moved;
END
$$;

-- `done` before the work is in the destination: the claim stays, landing
-- since now, its stale-after the landing period (never shorter than its own);
-- its write locks stay (its read locks are freed next, by
-- lac_api_delete_task_read_locks). Again on a landing claim: the tip moves,
-- landing_since stays.
CREATE OR REPLACE FUNCTION lac_api_land(p_task bigint, p_agent text, p_instance text,
                                        p_branch text, p_tip text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_actor(p_agent);
    landing lac_tasks;
BEGIN
    PERFORM lac_require_current();
    IF p_tip IS NULL THEN
        PERFORM lac_invalid(format('task #%s: a landing claim needs the tip of its work', p_task));
    END IF;
    UPDATE lac_tasks t
       SET landing_since = coalesce(t.landing_since, lac_now()), heartbeat_at = lac_now(),
           stale_after = greatest(coalesce(t.stale_after, lac_default_stale()),
                                  lac_landing_period()),
           branch = coalesce(p_branch, t.branch), tip = p_tip,
           returned_at = NULL, returned = NULL
     WHERE t.id = p_task AND t.state = 'claimed' AND t.owner = a AND t.instance = p_instance
    RETURNING t.* INTO landing;
    IF FOUND THEN
        PERFORM lac_changed('landing', p_task, a,
                            jsonb_build_object('tip', p_tip, 'branch', landing.branch));
        RETURN NEXT landing;
    END IF;
END
$$;

-- The landing claim's work is in the destination (p_how: merged, rebased,
-- cherry-picked or squashed, landing.py's answer): done, its locks freed. Only while its tip
-- is still p_tip (a holder who moved it since is asked again); in team mode
-- by its holder or a keeper (the server's post-receive runs as one).
CREATE OR REPLACE FUNCTION lac_api_landed(p_task bigint, p_tip text, p_how text, p_agent text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_who(p_agent);
    was lac_tasks;
    finished lac_tasks;
BEGIN
    PERFORM lac_require_current();
    IF p_how IS NULL OR p_how NOT IN ('merged', 'rebased', 'cherry-picked', 'squashed') THEN
        PERFORM lac_invalid(format('work lands merged, rebased, cherry-picked or squashed, not %s',
                                   coalesce(p_how, 'null')));
    END IF;
    IF lac_team() THEN
        PERFORM lac_actor(p_agent);  -- refuses a name that is not the session's
    END IF;
    SELECT * INTO was FROM lac_tasks t WHERE t.id = p_task;
    IF FOUND AND NOT lac_keeps(was.owner) THEN
        PERFORM lac_refuse(format(
            'team mode: only its holder or a keeper settles the landing of task #%s', p_task));
    END IF;
    UPDATE lac_tasks t SET state = 'done', heartbeat_at = lac_now()
     WHERE t.id = p_task AND t.state = 'claimed' AND t.landing_since IS NOT NULL
       AND t.tip = p_tip
    RETURNING t.* INTO finished;
    IF FOUND THEN
        PERFORM lac_changed('landed', p_task, a, jsonb_build_object(
            'how', p_how, 'tip', p_tip, 'holder', was.owner,
            'locks', lac_free_task_locks(p_task)));
        RETURN NEXT finished;
    END IF;
END
$$;

-- The landing queue (0016): the lander could not take the landing line at
-- p_tip onto the destination (p_detail: the conflicting paths, or the
-- check's exit code and output). The claim goes back to its holder, in
-- work, its locks kept: not done, not open, not another's. Only while its
-- tip is still p_tip; in team mode by its holder or a keeper (the server's
-- lander runs as one), as lac_api_landed.
CREATE OR REPLACE FUNCTION lac_api_return_line(p_task bigint, p_tip text, p_detail jsonb,
                                               p_agent text)
    RETURNS SETOF lac_tasks
    LANGUAGE plpgsql
    AS $$
DECLARE
    a text := lac_who(p_agent);
    was lac_tasks;
    back lac_tasks;
BEGIN
    PERFORM lac_require_current();
    IF lac_team() THEN
        PERFORM lac_actor(p_agent);  -- refuses a name that is not the session's
    END IF;
    SELECT * INTO was FROM lac_tasks t WHERE t.id = p_task;
    IF FOUND AND NOT lac_keeps(was.owner) THEN
        PERFORM lac_refuse(format(
            'team mode: only its holder or a keeper returns the landing line of task #%s', p_task));
    END IF;
    UPDATE lac_tasks t SET landing_since = NULL, returned_at = lac_now(),
                           returned = coalesce(p_detail, '{}'::jsonb)
     WHERE t.id = p_task AND t.state = 'claimed' AND t.landing_since IS NOT NULL
       AND t.tip = p_tip
    RETURNING t.* INTO back;
    IF FOUND THEN
        PERFORM lac_changed('returned', p_task, a, jsonb_build_object(
            'tip', p_tip, 'holder', was.owner));
        RETURN NEXT back;
    END IF;
END
$$;

-- A landing claim's read locks: nothing it still changes is read against them.
CREATE OR REPLACE FUNCTION lac_api_delete_task_read_locks(p_task bigint) RETURNS SETOF lac_locks
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM lac_require_current();
    PERFORM lac_require_change(p_task);
    RETURN QUERY WITH gone AS (
        DELETE FROM lac_locks l WHERE l.task_id = p_task AND l.mode = 'r' RETURNING l.*),
    recorded AS (
        SELECT lac_record_unlocked(jsonb_agg(g.pattern ORDER BY g.id), p_task) FROM gone g
    )
    SELECT g.* FROM gone g, recorded;
END
$$;
