-- Lists that scale (issue 12): `git lac tasks` and `git lac log`, paged.
--
-- Named queries of a PostgreSQL board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.
-- Every write is a call of a lac_api_* function (0005_team.sql): one write
-- path for plain and team mode; reads are plain SELECTs.

-- name: live_tasks_filter
state NOT IN ('done', 'cancelled')
   AND (:lane::text IS NULL OR lane = :lane) AND (:owner::text IS NULL OR owner = :owner)

-- name: live_tasks_page
SELECT * FROM lac_tasks WHERE {{live_tasks_filter}} ORDER BY id LIMIT :limit

-- name: live_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{live_tasks_filter}} AND id > :after LIMIT :cap) AS m

-- name: state_tasks_filter
state = ANY (ARRAY(SELECT jsonb_array_elements_text(:states::jsonb)))
   AND (:lane::text IS NULL OR lane = :lane) AND (:owner::text IS NULL OR owner = :owner)

-- name: state_tasks_page
SELECT * FROM lac_tasks WHERE {{state_tasks_filter}} ORDER BY id LIMIT :limit

-- name: state_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{state_tasks_filter}} AND id > :after LIMIT :cap) AS m

-- name: all_tasks_filter
(:lane::text IS NULL OR lane = :lane) AND (:owner::text IS NULL OR owner = :owner)

-- name: all_tasks_page
SELECT * FROM lac_tasks WHERE {{all_tasks_filter}} ORDER BY id LIMIT :limit

-- name: all_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{all_tasks_filter}} AND id > :after LIMIT :cap) AS m

-- name: events_page
-- The newest :limit events (the caller shows them oldest first).
SELECT * FROM lac_events ORDER BY id DESC LIMIT :limit

-- name: events_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_events WHERE id < :before LIMIT :cap) AS m

-- name: task_events_page
SELECT * FROM lac_events WHERE task_id = :task_id ORDER BY id DESC LIMIT :limit

-- name: task_events_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_events
                            WHERE task_id = :task_id AND id < :before LIMIT :cap) AS m

-- name: force_events_about
-- The force actions that took a claim or a lock of :agent (take-over notices,
-- board/notices.py), oldest first, along 0011's partial index lac_events_force.
SELECT * FROM lac_events
 WHERE kind IN ('force_released', 'force_unlocked')
   AND (detail ->> 'previous_owner' = :agent::text
        OR detail -> 'previous_holders' @> jsonb_build_array(:agent::text))
 ORDER BY id
