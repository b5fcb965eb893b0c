-- The live page (`git lac serve`): one snapshot, read at once.
--
-- Named queries of the embedded board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.

-- name: page_tasks
-- Every unfinished task, and the newest :finished done or cancelled ones.
SELECT * FROM lac_tasks WHERE state IN ('open', 'claimed', 'parked')
UNION ALL
SELECT * FROM (SELECT * FROM lac_tasks WHERE state IN ('done', 'cancelled')
                ORDER BY id DESC LIMIT :finished)
ORDER BY id

-- name: page_state_counts
SELECT state, count(*) AS n FROM lac_tasks GROUP BY state

-- name: page_deps
-- What unfinished tasks wait on, with the state of each dependency.
SELECT d.task_id, d.depends_on, dt.state
  FROM lac_task_deps d
  JOIN lac_tasks t ON t.id = d.task_id
  JOIN lac_tasks dt ON dt.id = d.depends_on
 WHERE t.state IN ('open', 'claimed', 'parked')
 ORDER BY d.task_id, d.depends_on

-- name: page_task_paths
SELECT p.task_id, p.pattern, p.mode
  FROM lac_task_paths p JOIN lac_tasks t ON t.id = p.task_id
 WHERE t.state IN ('open', 'claimed', 'parked')
 ORDER BY p.task_id, p.pattern

-- name: page_locks
SELECT * FROM lac_locks ORDER BY pattern, id

-- name: page_events
-- The newest :n events, oldest first.
SELECT * FROM (SELECT * FROM lac_events ORDER BY id DESC LIMIT :n) ORDER BY id

-- name: page_done_since
SELECT count(*) AS n FROM lac_events WHERE kind = 'done' AND at >= :since

-- name: page_instances
SELECT id, host, path FROM lac_instances

-- name: page_agents
SELECT name, capabilities, last_seen FROM lac_agents

-- name: page_role
-- An embedded board has no roles.
SELECT NULL AS role

-- name: page_set_role
-- PostgreSQL only (team mode); never run here.
SELECT NULL AS role

-- name: page_may_set_role
-- PostgreSQL only (team mode): an embedded board has no roles.
SELECT 0 AS may

-- name: page_read_only
-- A read-only page's connections cannot write, whatever runs on them.
PRAGMA query_only = ON
