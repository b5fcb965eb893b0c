-- Named queries of the embedded board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.

-- name: now
(julianday('now') - 2440587.5) * 86400.0

-- name: claimable
-- The SQLite twin of PostgreSQL's lac_claimable(t.id, :agent): every
-- dependency done, every needed capability held by the agent.
(NOT EXISTS (SELECT 1 FROM lac_task_deps d JOIN lac_tasks dt ON dt.id = d.depends_on
              WHERE d.task_id = t.id AND dt.state <> 'done')
 AND NOT EXISTS (SELECT 1 FROM json_each(t.needs) n
                  WHERE n.value NOT IN (SELECT c.value FROM lac_agents a, json_each(a.capabilities) c
                                         WHERE a.name = :agent)))

-- name: serialize_locks
-- Every write transaction is BEGIN IMMEDIATE, so lock grants are already serial.
SELECT 1

-- name: upsert_agent
INSERT INTO lac_agents (name, capabilities, last_seen) VALUES (:agent, :caps, {{now}})
ON CONFLICT (name) DO UPDATE SET capabilities = excluded.capabilities, last_seen = excluded.last_seen

-- name: insert_task
INSERT INTO lac_tasks (title, body, lane, priority, needs, created_at, created_by)
VALUES (:title, :body, :lane, :priority, :needs, {{now}}, :agent)
RETURNING id

-- name: insert_dep
INSERT INTO lac_task_deps (task_id, depends_on) VALUES (:task_id, :depends_on)
ON CONFLICT DO NOTHING

-- name: insert_task_path
INSERT INTO lac_task_paths (task_id, pattern, mode) VALUES (:task_id, :pattern, :mode)
ON CONFLICT (task_id, pattern) DO UPDATE SET mode = max(mode, excluded.mode)

-- name: missing_tasks
SELECT value AS id FROM json_each(:ids) WHERE value NOT IN (SELECT id FROM lac_tasks)

-- name: depends_transitively
-- Does any of :deps (or what they depend on) depend on :task_id?
WITH RECURSIVE reach(id) AS (
    SELECT value FROM json_each(:deps)
    UNION
    SELECT d.depends_on FROM lac_task_deps d JOIN reach r ON d.task_id = r.id
)
SELECT 1 AS hit FROM reach WHERE id = :task_id LIMIT 1

-- name: claim
UPDATE lac_tasks AS t
   SET state = 'claimed', owner = :agent, claimed_at = {{now}}, heartbeat_at = {{now}},
       stale_after = :stale_after, attempts = attempts + 1, instance = :instance
 WHERE t.id = :task_id AND t.state = 'open' AND {{claimable}}
-- RETURNING sees the table by its own name, not by its alias.
RETURNING *, EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = lac_tasks.id) AS has_paths

-- name: next_candidate
SELECT t.id, EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = t.id) AS has_paths
  FROM lac_tasks t
 WHERE t.lane = :lane AND t.state = 'open' AND {{claimable}}
   AND t.id NOT IN (SELECT value FROM json_each(:skip))
 ORDER BY t.priority DESC, t.created_at, t.id
 LIMIT 1

-- name: claim_next_free
-- The whole of `claim --next` in one statement when the best candidate
-- declares no paths (most tasks): pick, guard, claim. Zero rows sends the
-- caller to the general path, which also explains a refusal.
UPDATE lac_tasks AS u
   SET state = 'claimed', owner = :agent, claimed_at = {{now}}, heartbeat_at = {{now}},
       stale_after = :stale_after, attempts = attempts + 1, instance = :instance
 WHERE u.state = 'open'
   AND u.id = (SELECT t.id FROM lac_tasks t
                WHERE t.lane = :lane AND t.state = 'open' AND {{claimable}}
                ORDER BY t.priority DESC, t.created_at, t.id
                LIMIT 1)
   AND NOT EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = u.id)
RETURNING *, false AS has_paths

-- name: get_task
SELECT * FROM lac_tasks WHERE id = :task_id

-- name: task_deps
SELECT d.depends_on AS id, t.state AS state, t.title AS title
  FROM lac_task_deps d JOIN lac_tasks t ON t.id = d.depends_on
 WHERE d.task_id = :task_id ORDER BY d.depends_on

-- name: task_paths
SELECT pattern, mode FROM lac_task_paths WHERE task_id = :task_id ORDER BY pattern

-- name: covering_locks
-- Every lock whose key is one of :keys, with its claim's heartbeat (the guards).
SELECT l.*, t.heartbeat_at AS task_heartbeat_at
  FROM lac_locks l LEFT JOIN lac_tasks t ON t.id = l.task_id
 WHERE l.key IN (SELECT value FROM json_each(:keys))

-- name: insert_lock
INSERT INTO lac_locks (pattern, key, mode, agent, task_id, acquired_at, base_blob, instance)
VALUES (:pattern, :key, :mode, :agent, :task_id, {{now}}, :base_blob, :instance)
RETURNING *

-- name: upgrade_lock
UPDATE lac_locks SET mode = 'w' WHERE id = :lock_id

-- name: list_locks
SELECT * FROM lac_locks WHERE (:agent IS NULL OR agent = :agent) ORDER BY pattern, id

-- name: task_locks
SELECT * FROM lac_locks WHERE task_id = :task_id ORDER BY pattern

-- name: delete_task_locks
DELETE FROM lac_locks WHERE task_id = :task_id RETURNING *

-- name: delete_agent_lock
DELETE FROM lac_locks WHERE agent = :agent AND instance = :instance AND pattern = :pattern
RETURNING *

-- name: release
UPDATE lac_tasks
   SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL, stale_after = NULL
 WHERE id = :task_id AND state = 'claimed' AND owner = :owner
RETURNING *

-- name: done
UPDATE lac_tasks SET state = 'done', heartbeat_at = {{now}}
 WHERE id = :task_id AND state = 'claimed' AND owner = :agent AND instance = :instance
RETURNING *

-- name: heartbeat
UPDATE lac_tasks SET heartbeat_at = {{now}}
 WHERE owner = :agent AND instance = :instance AND state = 'claimed'
   AND (:ids IS NULL OR id IN (SELECT value FROM json_each(:ids)))
RETURNING id

-- name: stale_claims
-- Claims silent for longer than their own stale-after (the board's for claims
-- made before claims carried one), and never shorter than :at_least (a keeper's).
SELECT id, lane, owner, heartbeat_at, attempts, {{now}} - heartbeat_at AS silent_for
  FROM lac_tasks
 WHERE state = 'claimed'
   AND heartbeat_at + max(coalesce(stale_after, :default_stale), :at_least) < {{now}}
 ORDER BY heartbeat_at

-- name: expire
-- Back to the board, unless it heartbeat since the keeper looked.
UPDATE lac_tasks
   SET state = :state, owner = NULL, claimed_at = NULL, heartbeat_at = NULL, stale_after = NULL
 WHERE id = :task_id AND state = 'claimed' AND owner = :owner AND heartbeat_at = :heartbeat_at
RETURNING id

-- name: get_setting
SELECT value FROM lac_settings WHERE name = :name

-- name: set_setting
INSERT INTO lac_settings (name, value) VALUES (:name, :value)
ON CONFLICT (name) DO UPDATE SET value = excluded.value

-- name: notify_work
-- PostgreSQL wakes `claim --next --wait`; SQLite waiters poll.
SELECT 1

-- name: park
UPDATE lac_tasks
   SET state = 'parked', owner = NULL, claimed_at = NULL, heartbeat_at = NULL, stale_after = NULL
 WHERE id = :task_id AND state = 'claimed' AND owner = :owner
RETURNING *

-- name: lock_bases
SELECT pattern, base_blob FROM lac_locks
 WHERE base_blob IS NOT NULL AND pattern IN (SELECT value FROM json_each(:paths))
 ORDER BY acquired_at

-- name: insert_event
INSERT INTO lac_events (at, task_id, agent, kind, detail)
VALUES ({{now}}, :task_id, :agent, :kind, :detail)

-- name: now_value
SELECT {{now}} AS now

-- --- the whole life of a task, and lock administration (issue 14) ---------

-- name: edit_task
-- Editable while open, or by its owner while claimed (the rule team mode's
-- row-level security states too).
UPDATE lac_tasks
   SET title = :title, body = :body, lane = :lane, priority = :priority, needs = :needs
 WHERE id = :task_id
   AND (state = 'open' OR (state = 'claimed' AND owner = :agent AND instance = :instance))
RETURNING id

-- name: delete_task_path
DELETE FROM lac_task_paths WHERE task_id = :task_id AND pattern = :pattern RETURNING *

-- name: delete_task_lock
DELETE FROM lac_locks WHERE task_id = :task_id AND pattern = :pattern RETURNING *

-- name: delete_dep
DELETE FROM lac_task_deps WHERE task_id = :task_id AND depends_on = :depends_on
RETURNING depends_on

-- name: dependents
SELECT d.task_id AS id, t.state AS state
  FROM lac_task_deps d JOIN lac_tasks t ON t.id = d.task_id
 WHERE d.depends_on = :task_id ORDER BY d.task_id

-- name: cancel
UPDATE lac_tasks
   SET state = 'cancelled', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
       stale_after = NULL
 WHERE id = :task_id
   AND (state IN ('open', 'parked')
        OR (state = 'claimed' AND owner = :agent AND instance = :instance))
RETURNING *

-- name: reopen
-- Back to open with its attempts reset: a reopened task is new work, and a
-- kept count would park it again at its first failure.
UPDATE lac_tasks
   SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
       stale_after = NULL, attempts = 0
 WHERE id = :task_id AND state IN ('done', 'cancelled', 'parked')
RETURNING *

-- name: delete_pattern_locks
-- Every agent's lock on exactly :pattern (`unlock --force`).
DELETE FROM lac_locks WHERE pattern = :pattern RETURNING *

-- name: agent_seen
-- Every command is a sign of life of its agent, claims or not: the keeper
-- returns task-less locks of agents silent for the stale period.
INSERT INTO lac_agents (name, last_seen) VALUES (:agent, {{now}})
ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen

-- name: silent_agent_locks
-- Task-less locks whose agent has not been seen (nor locked anything) for :stale.
SELECT l.*, {{now}} - max(l.acquired_at, coalesce(a.last_seen, 0)) AS silent_for
  FROM lac_locks l LEFT JOIN lac_agents a ON a.name = l.agent
 WHERE l.task_id IS NULL AND max(l.acquired_at, coalesce(a.last_seen, 0)) + :stale < {{now}}
 ORDER BY l.agent, l.id

-- name: expire_lock
-- Unless its agent was seen since the keeper looked.
DELETE FROM lac_locks
 WHERE id = :lock_id AND task_id IS NULL
   AND NOT EXISTS (SELECT 1 FROM lac_agents a
                    WHERE a.name = lac_locks.agent AND a.last_seen + :stale >= {{now}})
RETURNING *

-- name: lane_open_tasks
-- Every open task of a lane in the order `claim --next` takes them, with the
-- one claimable rule's answer for this agent.
SELECT t.*, {{claimable}} AS claimable,
       EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = t.id) AS has_paths
  FROM lac_tasks t
 WHERE t.lane = :lane AND t.state = 'open'
 ORDER BY t.priority DESC, t.created_at, t.id

-- name: upsert_instance
-- Where an agent runs, for people: refusals name the holder's host and path.
INSERT INTO lac_instances (id, agent, host, path, last_seen)
VALUES (:instance, :agent, :host, :path, {{now}})
ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, host = excluded.host,
    path = excluded.path, last_seen = excluded.last_seen

-- name: get_instance
SELECT * FROM lac_instances WHERE id = :instance

-- name: take_over
-- The same agent moves its claim to this instance (`claim --take-over`).
UPDATE lac_tasks SET instance = :instance, heartbeat_at = {{now}}
 WHERE id = :task_id AND state = 'claimed' AND owner = :agent
RETURNING *

-- name: take_over_locks
UPDATE lac_locks SET instance = :instance WHERE task_id = :task_id AND agent = :agent

-- --- lists that scale, and a grant in a few statements (issue 12) ---------
-- Pages of `git lac tasks`: LIMIT :limit rows in id order (:limit NULL is all),
-- and how many more match, counted only up to :cap (a count never reads more
-- than :cap index entries). :lane and :owner are optional (NULL).

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

-- name: candidate_locks_batch
-- The locks that may overlap any of a grant's wanted patterns, in one query:
-- those whose key is one of :exact (the wanted keys and their ancestors), and
-- those whose key lies in one of :ranges ([{"lo": key, "hi": key + U+10FFFF}],
-- the wanted keys' subtrees). A lock may come twice; the caller dedupes.
SELECT * FROM lac_locks WHERE key IN (SELECT value FROM json_each(:exact))
UNION ALL
SELECT l.* FROM json_each(:ranges) AS r
  JOIN lac_locks AS l
    ON l.key >= json_extract(r.value, '$.lo') AND l.key < json_extract(r.value, '$.hi')

-- name: own_locks_on
-- This agent's locks at this instance on exactly these patterns (a regrant).
SELECT * FROM lac_locks
 WHERE agent = :agent AND pattern IN (SELECT value FROM json_each(:patterns))

-- name: insert_locks
-- Every lock of one grant in one statement: :locks is
-- [{"pattern", "key", "mode", "base_blob"}].
INSERT INTO lac_locks (pattern, key, mode, agent, task_id, acquired_at, base_blob, instance)
SELECT json_extract(value, '$.pattern'), json_extract(value, '$.key'),
       json_extract(value, '$.mode'), :agent, :task_id, {{now}},
       json_extract(value, '$.base_blob'), :instance
  FROM json_each(:locks)
RETURNING *

-- --- the live page (`git lac serve`, issue 15): one snapshot, read at once ------

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
