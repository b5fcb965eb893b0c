-- Lists that scale: `git lac tasks` and `git lac log`, paged.
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

-- name: taken_events_about
-- What took a claim or a lock of :agent (take-over notices, board/notices.py),
-- oldest first: the force actions, along 0011's partial index
-- lac_events_force, and the keeper's expiry of a claim held at :instance,
-- along 0018's lac_events_expired_owner.
SELECT * FROM lac_events
 WHERE kind IN ('force_released', 'force_unlocked')
   AND (json_extract(detail, '$.previous_owner') = :agent
        OR EXISTS (SELECT 1 FROM json_each(detail, '$.previous_holders') AS h
                    WHERE h.value = :agent))
UNION ALL
SELECT * FROM lac_events
 WHERE kind = 'expired'
   AND json_extract(detail, '$.previous_owner') = :agent
   AND json_extract(detail, '$.previous_instance') = :instance
 ORDER BY id

-- name: tasks_details
-- What `tasks --json` and `ready --json` report of each task of a page:
-- its declared paths, its locks and what it depends on, for every task of
-- the page (:ids, JSON) in one query, as JSON arrays (text).
SELECT i.id,
       (SELECT json_group_array(json(x)) FROM (
            SELECT json_object('pattern', p.pattern, 'mode', p.mode) AS x
              FROM lac_task_paths p WHERE p.task_id = i.id ORDER BY p.pattern)) AS paths,
       (SELECT json_group_array(json(x)) FROM (
            SELECT json_object('id', l.id, 'pattern', l.pattern, 'mode', l.mode,
                               'agent', l.agent, 'task_id', l.task_id,
                               'acquired_at', quote(l.acquired_at),  -- exact: quote() round-trips a REAL
                               'base_blob', l.base_blob,
                               'instance', l.instance) AS x
              FROM lac_locks l WHERE l.task_id = i.id ORDER BY l.pattern)) AS locks,
       (SELECT json_group_array(json(x)) FROM (
            SELECT json_object('id', d.depends_on, 'state', t.state, 'title', t.title) AS x
              FROM lac_task_deps d JOIN lac_tasks t ON t.id = d.depends_on
             WHERE d.task_id = i.id ORDER BY d.depends_on)) AS depends_on
  FROM (SELECT DISTINCT CAST(value AS INTEGER) AS id FROM json_each(:ids)) AS i

-- name: lane_open_page
-- `git lac ready`: the open tasks of a lane in the order `claim --next` takes
-- them, a page at a time: at most :limit (NULL: all) after
-- the task (:after_priority, :after_created, :after_id) the last page ended
-- with (:after_id NULL: from the start), so a long listing is read in pages.
SELECT t.*, {{claimable}} AS claimable,
       EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = t.id) AS has_paths
  FROM lac_tasks t
 WHERE t.lane = :lane AND t.state = 'open'
   AND (:after_id IS NULL
        OR t.priority < :after_priority
        OR (t.priority = :after_priority
            AND (t.created_at > :after_created
                 OR (t.created_at = :after_created AND t.id > :after_id))))
 ORDER BY t.priority DESC, t.created_at, t.id
 LIMIT coalesce(:limit, -1)

-- name: lane_open_more
-- How many open tasks of the lane there are, counted up to :cap.
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE lane = :lane AND state = 'open' LIMIT :cap) AS m
