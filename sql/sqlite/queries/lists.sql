-- Lists that scale (issue 12): `git lac tasks` and `git lac log`, paged.
--
-- Named queries of the embedded board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.

-- name: live_tasks_filter
state NOT IN ('done', 'cancelled')
   AND (:lane IS NULL OR lane = :lane) AND (:owner IS NULL OR owner = :owner)

-- name: live_tasks_page
SELECT * FROM lac_tasks WHERE {{live_tasks_filter}} ORDER BY id LIMIT coalesce(:limit, -1)

-- name: live_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{live_tasks_filter}} AND id > :after LIMIT :cap)

-- name: state_tasks_filter
state IN (SELECT value FROM json_each(:states))
   AND (:lane IS NULL OR lane = :lane) AND (:owner IS NULL OR owner = :owner)

-- name: state_tasks_page
SELECT * FROM lac_tasks WHERE {{state_tasks_filter}} ORDER BY id LIMIT coalesce(:limit, -1)

-- name: state_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{state_tasks_filter}} AND id > :after LIMIT :cap)

-- name: all_tasks_filter
(:lane IS NULL OR lane = :lane) AND (:owner IS NULL OR owner = :owner)

-- name: all_tasks_page
SELECT * FROM lac_tasks WHERE {{all_tasks_filter}} ORDER BY id LIMIT coalesce(:limit, -1)

-- name: all_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{all_tasks_filter}} AND id > :after LIMIT :cap)

-- name: events_page
-- The newest :limit events (the caller shows them oldest first).
SELECT * FROM lac_events ORDER BY id DESC LIMIT coalesce(:limit, -1)

-- name: events_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_events WHERE id < :before LIMIT :cap)

-- name: task_events_page
SELECT * FROM lac_events WHERE task_id = :task_id ORDER BY id DESC LIMIT coalesce(:limit, -1)

-- name: task_events_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_events
                            WHERE task_id = :task_id AND id < :before LIMIT :cap)

-- name: force_events_about
-- The force actions that took a claim or a lock of :agent (take-over notices,
-- board/notices.py), oldest first, along 0011's partial index lac_events_force.
SELECT * FROM lac_events
 WHERE kind IN ('force_released', 'force_unlocked')
   AND (json_extract(detail, '$.previous_owner') = :agent
        OR EXISTS (SELECT 1 FROM json_each(detail, '$.previous_holders') AS h
                    WHERE h.value = :agent))
 ORDER BY id
