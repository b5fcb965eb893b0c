-- Path locks: granting (one grant in a few statements), listing, releasing, expiring.
--
-- Named queries of the embedded board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.

-- name: serialize_locks
-- Every write transaction is BEGIN IMMEDIATE, so lock grants are already serial.
SELECT 1

-- name: covering_locks
-- Every lock whose key is one of :keys, with its claim's heartbeat and, when
-- that claim is landing, its tip (the guards; a commit built on that tip is
-- not refused by it).
SELECT l.*, t.heartbeat_at AS task_heartbeat_at,
       CASE WHEN t.state = 'claimed' AND t.landing_since IS NOT NULL THEN t.tip END AS landing_tip
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

-- name: lock_bases
SELECT pattern, base_blob FROM lac_locks
 WHERE base_blob IS NOT NULL AND pattern IN (SELECT value FROM json_each(:paths))
 ORDER BY acquired_at

-- name: delete_task_lock
DELETE FROM lac_locks WHERE task_id = :task_id AND pattern = :pattern RETURNING *

-- name: delete_pattern_locks
-- Every agent's lock on exactly :pattern (`unlock --force`).
DELETE FROM lac_locks WHERE pattern = :pattern RETURNING *

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

-- name: take_over_locks
UPDATE lac_locks SET instance = :instance WHERE task_id = :task_id AND agent = :agent

-- --- lists that scale, and a grant in a few statements ---------
-- Pages of `git lac tasks`: LIMIT :limit rows in id order (:limit NULL is all),
-- and how many more match, counted only up to :cap (a count never reads more
-- than :cap index entries). :lane and :owner are optional (NULL).

-- name: candidate_locks_batch
-- The locks that may overlap any of a grant's wanted patterns, in one query:
-- those whose key is one of :exact (the wanted keys and their ancestors), and
-- those whose key lies in one of :ranges ([{"lo": key, "hi": key + U+10FFFF}],
-- the wanted keys' subtrees). A lock may come twice; the caller dedupes.
-- Each with its claim's tip when that claim is landing (done, its work not
-- in the destination yet): such a lock does not refuse a claim built on
-- that tip (stacking; Grants._conflicts).
SELECT c.*, CASE WHEN t.state = 'claimed' AND t.landing_since IS NOT NULL
                 THEN t.tip END AS landing_tip
  FROM (SELECT * FROM lac_locks WHERE key IN (SELECT value FROM json_each(:exact))
       UNION ALL
       SELECT l.* FROM json_each(:ranges) AS r
         JOIN lac_locks AS l
           ON l.key >= json_extract(r.value, '$.lo') AND l.key < json_extract(r.value, '$.hi')) AS c
  LEFT JOIN lac_tasks t ON t.id = c.task_id

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
