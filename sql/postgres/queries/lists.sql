-- Lists that scale: `git lac tasks` and `git lac log`, paged.
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

-- name: taken_events_about
-- What took a claim or a lock of :agent (take-over notices, board/notices.py),
-- oldest first: the force actions, along 0011's partial index
-- lac_events_force, and the keeper's expiry of a claim held at :instance,
-- along 0018's lac_events_expired_owner.
SELECT * FROM lac_events
 WHERE kind IN ('force_released', 'force_unlocked')
   AND (detail ->> 'previous_owner' = :agent::text
        OR detail -> 'previous_holders' @> jsonb_build_array(:agent::text))
UNION ALL
SELECT * FROM lac_events
 WHERE kind = 'expired'
   AND detail ->> 'previous_owner' = :agent::text
   AND detail ->> 'previous_instance' = :instance::text
 ORDER BY id

-- name: tasks_details
-- What `tasks --json` and `ready --json` report of each task of a page:
-- its declared paths, its locks and what it depends on, for every task of
-- the page (:ids, JSON) in one query, as JSON arrays.
SELECT i.id,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('pattern', p.pattern, 'mode', p.mode)
                                  ORDER BY p.pattern)
                   FROM lac_task_paths p WHERE p.task_id = i.id), '[]') AS paths,
       COALESCE((SELECT jsonb_agg(jsonb_build_object(
                          'id', l.id, 'pattern', l.pattern, 'mode', l.mode, 'agent', l.agent,
                          'task_id', l.task_id, 'acquired_at', l.acquired_at,
                          'base_blob', l.base_blob, 'instance', l.instance) ORDER BY l.pattern)
                   FROM lac_locks l WHERE l.task_id = i.id), '[]') AS locks,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('id', d.depends_on, 'state', t.state,
                                                     'title', t.title) ORDER BY d.depends_on)
                   FROM lac_task_deps d JOIN lac_tasks t ON t.id = d.depends_on
                  WHERE d.task_id = i.id), '[]') AS depends_on
  FROM (SELECT DISTINCT v::bigint AS id FROM jsonb_array_elements_text(:ids::jsonb) AS v) AS i

-- name: lane_open_page
-- `git lac ready`: the open tasks of a lane in the order `claim --next` takes
-- them, a page at a time: at most :limit (NULL: all) after
-- the task (:after_priority, :after_created, :after_id) the last page ended
-- with (:after_id NULL: from the start), so a long listing is read in pages.
SELECT t.*, {{claimable}} AS claimable,
       EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = t.id) AS has_paths
  FROM lac_tasks t
 WHERE t.lane = :lane AND t.state = 'open'
   AND (:after_id::bigint IS NULL
        OR t.priority < :after_priority::int
        OR (t.priority = :after_priority::int
            AND (t.created_at > :after_created::double precision
                 OR (t.created_at = :after_created::double precision
                     AND t.id > :after_id::bigint))))
 ORDER BY t.priority DESC, t.created_at, t.id
 LIMIT :limit

-- name: lane_open_more
-- How many open tasks of the lane there are, counted up to :cap.
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE lane = :lane AND state = 'open' LIMIT :cap) AS m
