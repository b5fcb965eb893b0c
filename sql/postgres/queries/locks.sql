-- Path locks: granting (one grant in a few statements), listing, releasing, expiring.
--
-- Named queries of a PostgreSQL board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.
-- Every write is a call of a lac_api_* function (0005_team.sql): one write
-- path for plain and team mode; reads are plain SELECTs.

-- name: serialize_locks
-- Lock grants are check-then-insert; under READ COMMITTED that races, so
-- every transaction that grants locks on this board takes this first.
SELECT pg_advisory_xact_lock(hashtext('lac_locks:' || current_schema()))

-- name: covering_locks
-- Every lock whose key is one of :keys, with its claim's heartbeat and, when
-- that claim is landing, its tip (the guards; a commit built on that tip is
-- not refused by it).
SELECT l.*, t.heartbeat_at AS task_heartbeat_at,
       CASE WHEN t.state = 'claimed' AND t.landing_since IS NOT NULL THEN t.tip END AS landing_tip
  FROM lac_locks l LEFT JOIN lac_tasks t ON t.id = l.task_id
 WHERE l.key = ANY (ARRAY(SELECT jsonb_array_elements_text(:keys::jsonb)))

-- name: insert_lock
SELECT * FROM lac_api_insert_lock(:pattern, :key, :mode, :agent, :task_id::bigint, :base_blob,
                                   :instance)

-- name: upgrade_lock
SELECT lac_api_upgrade_lock(:lock_id::bigint)

-- name: list_locks
SELECT * FROM lac_locks WHERE (:agent::text IS NULL OR agent = :agent) ORDER BY pattern, id

-- name: task_locks
SELECT * FROM lac_locks WHERE task_id = :task_id ORDER BY pattern

-- name: delete_task_locks
SELECT * FROM lac_api_delete_task_locks(:task_id::bigint)

-- name: delete_agent_lock
SELECT * FROM lac_api_delete_agent_lock(:agent, :instance, :pattern)

-- name: lock_bases
SELECT pattern, base_blob FROM lac_locks
 WHERE base_blob IS NOT NULL
   AND pattern = ANY (ARRAY(SELECT jsonb_array_elements_text(:paths::jsonb)))
 ORDER BY acquired_at

-- name: delete_task_lock
SELECT * FROM lac_api_delete_task_lock(:task_id::bigint, :pattern)

-- name: delete_pattern_locks
-- Every agent's lock on exactly :pattern (`unlock --force`).
SELECT * FROM lac_api_delete_pattern_locks(:pattern)

-- name: silent_agent_locks
-- Task-less locks whose agent has not been seen (nor locked anything) for :stale.
SELECT * FROM lac_api_silent_agent_locks(:stale::double precision)

-- name: expire_lock
-- Unless its agent was seen since the keeper looked.
SELECT * FROM lac_api_expire_lock(:lock_id::bigint, :stale::double precision)

-- name: take_over_locks
SELECT lac_api_take_over_locks(:task_id::bigint, :agent, :instance)

-- --- lists that scale, and a grant in a few statements ---------
-- Pages of `git lac tasks`: LIMIT :limit rows in id order (:limit NULL is
-- all), and how many more match, counted only up to :cap (a count never
-- reads more than :cap index entries). :lane and :owner are optional (NULL).

-- name: candidate_locks_batch
-- The locks that may overlap any of a grant's wanted patterns, in one round
-- trip: those whose key is one of :exact (the wanted keys and their
-- ancestors), and those whose key lies in one of :ranges
-- ([{"lo": key, "hi": key + U+10FFFF}], the wanted keys' subtrees), each
-- range an index scan. A lock may come twice; the caller dedupes.
-- Each with its claim's tip when that claim is landing (done, its work not
-- in the destination yet): such a lock does not refuse a claim built on
-- that tip (stacking; Grants._conflicts).
SELECT c.*, CASE WHEN t.state = 'claimed' AND t.landing_since IS NOT NULL
                 THEN t.tip END AS landing_tip
  FROM (SELECT * FROM lac_locks
        WHERE key = ANY (ARRAY(SELECT jsonb_array_elements_text(:exact::jsonb)))
       UNION ALL
       SELECT l.* FROM jsonb_to_recordset(:ranges::jsonb) AS r(lo text, hi text)
        CROSS JOIN LATERAL (SELECT * FROM lac_locks WHERE key >= r.lo AND key < r.hi) AS l) AS c
  LEFT JOIN lac_tasks t ON t.id = c.task_id

-- name: own_locks_on
-- This agent's locks on exactly these patterns (a regrant).
SELECT * FROM lac_locks
 WHERE agent = :agent
   AND pattern = ANY (ARRAY(SELECT jsonb_array_elements_text(:patterns::jsonb)))

-- name: insert_locks
-- Every lock of one grant in one statement (one round trip): :locks is
-- [{"pattern", "key", "mode", "base_blob"}].
SELECT * FROM lac_api_insert_locks(:locks::jsonb, :agent, :task_id::bigint, :instance)
