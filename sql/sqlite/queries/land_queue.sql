-- The landing queue (0016, `git lac land`): lines the lander returned to
-- their holders.

-- name: return_line
-- The lander could not take the landing line at :tip onto the destination:
-- the claim goes back to its holder, in work, its locks kept (0016).
UPDATE lac_tasks SET landing_since = NULL, returned_at = {{now}}, returned = :detail
 WHERE id = :task_id AND state = 'claimed' AND landing_since IS NOT NULL AND tip = :tip
RETURNING *

-- name: returned_claims
-- Every claim whose landing line came back, oldest id first.
SELECT * FROM lac_tasks WHERE state = 'claimed' AND returned_at IS NOT NULL ORDER BY id
