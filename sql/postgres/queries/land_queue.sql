-- The landing queue (0016, `git lac land`): lines the lander returned to
-- their holders. The writes go through functions/landing.sql.

-- name: return_line
-- The lander could not take the landing line at :tip onto the destination:
-- the claim goes back to its holder, in work, its locks kept (0016).
SELECT * FROM lac_api_return_line(:task_id::bigint, :tip, :detail::jsonb, :agent)

-- name: returned_claims
-- Every claim whose landing line came back, oldest id first.
SELECT * FROM lac_tasks WHERE state = 'claimed' AND returned_at IS NOT NULL ORDER BY id
