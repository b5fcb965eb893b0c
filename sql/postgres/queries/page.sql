-- The live page (`git lac serve`): one snapshot, read at once.
--
-- Named queries of a PostgreSQL board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.
-- Every write is a call of a lac_api_* function (0005_team.sql): one write
-- path for plain and team mode; reads are plain SELECTs.

-- name: page_tasks
-- Every unfinished task, and the newest :finished done or cancelled ones.
SELECT * FROM lac_tasks WHERE state IN ('open', 'claimed', 'parked')
UNION ALL
(SELECT * FROM lac_tasks WHERE state IN ('done', 'cancelled')
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
SELECT * FROM (SELECT * FROM lac_events ORDER BY id DESC LIMIT :n) AS newest ORDER BY id

-- name: page_done_since
SELECT count(*) AS n FROM lac_events WHERE kind = 'done' AND at >= :since

-- name: page_instances
SELECT id, host, path FROM lac_instances

-- name: page_agents
SELECT name, capabilities, last_seen FROM lac_agents

-- name: page_role
-- Who the page's connection is (team mode: the board's reader role).
SELECT current_user AS role

-- name: page_set_role
-- Team mode, actions off: the page reads as the board's read-only role.
SELECT set_config('role', :role, false) AS role

-- name: page_may_set_role
-- May this login become :role (a member of it, or a superuser) without a
-- grant of its own? A team agent is not a member of the reader role: it
-- then reads as itself, which its own policies already allow.
SELECT coalesce((SELECT pg_has_role(session_user, r.oid, 'MEMBER')
                   FROM pg_roles r WHERE r.rolname = :role), false) AS may

-- name: page_read_only
-- A read-only page's connections cannot write, whatever runs on them: every
-- transaction is READ ONLY, SECURITY DEFINER functions included.
SELECT set_config('default_transaction_read_only', 'on', false) AS read_only
