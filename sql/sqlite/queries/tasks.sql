-- The life of a task: adding, claiming, finishing, editing, its dependencies and declared paths.
--
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

-- name: upsert_agent
INSERT INTO lac_agents (name, capabilities, last_seen) VALUES (:agent, :caps, {{now}})
ON CONFLICT (name) DO UPDATE SET capabilities = excluded.capabilities, last_seen = excluded.last_seen

-- name: insert_task
INSERT INTO lac_tasks (title, body, lane, priority, needs, created_at, created_by)
VALUES (:title, :body, :lane, :priority, :needs, {{now}}, :agent)
RETURNING id

-- name: insert_dep
-- Never to another agent's claim, nor to ours from another working tree
-- (`git lac task after`, which says why first).
INSERT INTO lac_task_deps (task_id, depends_on)
SELECT :task_id, :depends_on
 WHERE NOT EXISTS (SELECT 1 FROM lac_tasks
                    WHERE id = :task_id AND state = 'claimed'
                      AND (owner IS NOT :agent OR instance IS NOT :instance))
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
       stale_after = :stale_after, attempts = attempts + 1, instance = :instance,
       branch = NULL, tip = NULL, landing_since = NULL, returned_at = NULL, returned = NULL,
       max_age = NULL
 WHERE t.id = :task_id AND t.state = 'open' AND {{claimable}}
-- RETURNING sees the table by its own name, not by its alias.
RETURNING *, EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = lac_tasks.id) AS has_paths,
          EXISTS (SELECT 1 FROM lac_task_resources r WHERE r.task_id = lac_tasks.id)
              AS has_resources

-- name: next_candidate
SELECT t.id, EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = t.id) AS has_paths,
       EXISTS (SELECT 1 FROM lac_task_resources r WHERE r.task_id = t.id) AS has_resources
  FROM lac_tasks t
 WHERE t.lane = :lane AND t.state = 'open' AND {{claimable}}
   AND t.id NOT IN (SELECT value FROM json_each(:skip))
 ORDER BY t.priority DESC, t.created_at, t.id
 LIMIT 1

-- name: claim_next_free
-- The whole of `claim --next` in one statement when the best candidate
-- declares no paths (most tasks): pick, guard, claim. Zero rows sends the
-- caller to the general path, which also explains a refusal. :stale_after
-- NULL is the board's, read here (as lac_default_stale does on PostgreSQL).
UPDATE lac_tasks AS u
   SET state = 'claimed', owner = :agent, claimed_at = {{now}}, heartbeat_at = {{now}},
       stale_after = coalesce(:stale_after, (SELECT CAST(s.value AS REAL) FROM lac_settings s
                                              WHERE s.name = 'stale_after'), 1800.0),
       attempts = attempts + 1, instance = :instance,
       branch = NULL, tip = NULL, landing_since = NULL, returned_at = NULL, returned = NULL,
       max_age = NULL
 WHERE u.state = 'open'
   AND u.id = (SELECT t.id FROM lac_tasks t
                WHERE t.lane = :lane AND t.state = 'open' AND {{claimable}}
                ORDER BY t.priority DESC, t.created_at, t.id
                LIMIT 1)
   AND NOT EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = u.id)
   -- a task that needs resources is granted them on the general path
   AND NOT EXISTS (SELECT 1 FROM lac_task_resources r WHERE r.task_id = u.id)
RETURNING *, false AS has_paths, false AS has_resources

-- name: get_task
SELECT * FROM lac_tasks WHERE id = :task_id

-- name: task_deps
SELECT d.depends_on AS id, t.state AS state, t.title AS title
  FROM lac_task_deps d JOIN lac_tasks t ON t.id = d.depends_on
 WHERE d.task_id = :task_id ORDER BY d.depends_on

-- name: task_paths
SELECT pattern, mode FROM lac_task_paths WHERE task_id = :task_id ORDER BY pattern

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

-- name: cap_claim
-- `claim --max-age`: our claim here lives at most :max_age seconds from
-- claimed_at, in the transaction that claimed it.
UPDATE lac_tasks SET max_age = :max_age
 WHERE id = :task_id AND state = 'claimed' AND owner = :agent AND instance = :instance
RETURNING id

-- name: stale_claims
-- Claims silent for longer than their own stale-after (the board's for claims
-- made before claims carried one), and never shorter than :at_least (a keeper's);
-- and claims in work past their max-age (0018), heartbeats or not: ``aged``.
SELECT id, lane, owner, instance, heartbeat_at, attempts, stale_after, max_age,
       {{now}} - heartbeat_at AS silent_for, {{now}} - claimed_at AS age,
       ({{aged}}) AS aged
  FROM lac_tasks
 WHERE state = 'claimed'
   AND (heartbeat_at + max(coalesce(stale_after, :default_stale), :at_least) < {{now}}
        OR {{aged}})
 ORDER BY heartbeat_at

-- name: aged
-- A claim in work (not landing) past claimed_at + max_age (0018).
(max_age IS NOT NULL AND landing_since IS NULL AND claimed_at + max_age < {{now}})

-- name: expire
-- Back to the board, unless it heartbeat since the keeper looked (a claim
-- past its max-age goes whatever its heartbeat).
UPDATE lac_tasks
   SET state = :state, owner = NULL, claimed_at = NULL, heartbeat_at = NULL, stale_after = NULL,
       max_age = NULL
 WHERE id = :task_id AND state = 'claimed' AND owner = :owner
   AND (heartbeat_at = :heartbeat_at OR {{aged}})
RETURNING id

-- name: notify_work
-- PostgreSQL wakes `claim --next --wait`; SQLite waiters poll.
SELECT 1

-- name: park
UPDATE lac_tasks
   SET state = 'parked', owner = NULL, claimed_at = NULL, heartbeat_at = NULL, stale_after = NULL
 WHERE id = :task_id AND state = 'claimed' AND owner = :owner
RETURNING *

-- name: now_value
SELECT {{now}} AS now

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

-- name: take_over
-- The same agent moves its claim to this instance (`claim --take-over`).
UPDATE lac_tasks SET instance = :instance, heartbeat_at = {{now}}
 WHERE id = :task_id AND state = 'claimed' AND owner = :agent
RETURNING *
