-- Landing: a claim's branch and tip, and claims that wait for
-- their work to land in the destination (lac.target).
--
-- Named queries of the embedded board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.

-- name: claim_tracks
-- The holder's claims here, with the branch and tip recorded for each.
SELECT id, branch, tip, landing_since FROM lac_tasks
 WHERE state = 'claimed' AND owner = :agent AND instance = :instance
 ORDER BY id

-- name: track_claims
-- :tracks is [[task, branch, tip], ...]: the holder's claims here move to
-- those tips (a null branch keeps the one recorded).
UPDATE lac_tasks AS t
   SET branch = coalesce((SELECT json_extract(e.value, '$[1]') FROM json_each(:tracks) e
                           WHERE json_extract(e.value, '$[0]') = t.id), t.branch),
       tip = (SELECT json_extract(e.value, '$[2]') FROM json_each(:tracks) e
               WHERE json_extract(e.value, '$[0]') = t.id)
 WHERE t.state = 'claimed' AND t.owner = :agent AND t.instance = :instance
   AND t.id IN (SELECT json_extract(e.value, '$[0]') FROM json_each(:tracks) e)
RETURNING id

-- name: land
-- `done` before the work is in the destination: the claim stays, landing
-- since now (kept if it already was), silent for at most the landing period
-- (never less than its own stale-after) before the keeper expires it.
UPDATE lac_tasks
   SET landing_since = coalesce(landing_since, {{now}}), heartbeat_at = {{now}},
       stale_after = max(coalesce(stale_after,
                                  (SELECT CAST(s.value AS REAL) FROM lac_settings s
                                    WHERE s.name = 'stale_after'), 1800.0),
                         coalesce((SELECT CAST(s.value AS REAL) FROM lac_settings s
                                    WHERE s.name = 'landing_period'), 86400.0)),
       branch = coalesce(:branch, branch), tip = :tip, returned_at = NULL, returned = NULL
 WHERE id = :task_id AND state = 'claimed' AND owner = :agent AND instance = :instance
RETURNING *

-- name: delete_task_read_locks
DELETE FROM lac_locks WHERE task_id = :task_id AND mode = 'r' RETURNING *

-- name: landing_claims
SELECT * FROM lac_tasks WHERE state = 'claimed' AND landing_since IS NOT NULL ORDER BY id

-- name: landed
-- Its work is in the destination: done, while its tip is still the one checked.
UPDATE lac_tasks SET state = 'done', heartbeat_at = {{now}}
 WHERE id = :task_id AND state = 'claimed' AND landing_since IS NOT NULL AND tip = :tip
RETURNING *

-- name: live_claims
-- Every claim whose tip is known: the lines of work the forecast compares.
SELECT * FROM lac_tasks WHERE state = 'claimed' AND tip IS NOT NULL ORDER BY id

-- name: live_claim_paths
-- The declared paths of every live_claims task, in one read (not one per claim).
SELECT p.task_id, p.pattern, p.mode
  FROM lac_task_paths p JOIN lac_tasks t ON t.id = p.task_id
 WHERE t.state = 'claimed' AND t.tip IS NOT NULL
 ORDER BY p.task_id, p.pattern
