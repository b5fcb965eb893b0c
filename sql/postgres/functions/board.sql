-- CREATE OR REPLACE: applied after the migrations on every board that reaches
-- the latest schema version (sql/README.md). The one place these bodies live.

-- The board's own functions (first created by 0001).

CREATE OR REPLACE FUNCTION lac_now() RETURNS double precision
    LANGUAGE sql STABLE
    AS $$ SELECT extract(epoch FROM now())::double precision $$;

-- The one rule "may this agent claim this task" (state aside, which the
-- claiming UPDATE checks itself): every dependency done, every capability
-- the task needs held by the agent. Every claimer uses it, as
--   EXISTS (SELECT 1 FROM lac_claimable(t.id, :agent) AS ok WHERE ok)
-- (`SELECT lac_claimable(12, 'dana')` answers for one task). Why a one-row
-- set-returning SQL function: a scalar SQL function with sub-selects is never
-- inlined and is planned again by every query that calls it (1.3 ms per
-- claim); this one is inlined into the caller's plan like a view, so the
-- prepared claim statement carries the rule at no call cost.
CREATE OR REPLACE FUNCTION lac_claimable(p_task bigint, p_agent text) RETURNS SETOF boolean
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
