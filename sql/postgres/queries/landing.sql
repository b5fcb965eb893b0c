-- Landing: a claim's branch and tip, and claims that wait for
-- their work to land in the destination (lac.target). The writes go through
-- functions/landing.sql's lac_api_* functions.

-- name: claim_tracks
-- The holder's claims here, with the branch and tip recorded for each.
SELECT id, branch, tip, landing_since FROM lac_tasks
 WHERE state = 'claimed' AND owner = :agent AND instance = :instance
 ORDER BY id

-- name: track_claims
-- :tracks is [[task, branch, tip], ...]: the holder's claims here move to
-- those tips (a null branch keeps the one recorded).
SELECT * FROM lac_api_track(:agent, :instance, :tracks::jsonb)

-- name: land
SELECT * FROM lac_api_land(:task_id::bigint, :agent, :instance, :branch, :tip)

-- name: delete_task_read_locks
SELECT * FROM lac_api_delete_task_read_locks(:task_id::bigint)

-- name: landing_claims
SELECT * FROM lac_tasks WHERE state = 'claimed' AND landing_since IS NOT NULL ORDER BY id

-- name: landed
SELECT * FROM lac_api_landed(:task_id::bigint, :tip, :how, :agent)

-- name: live_claims
-- Every claim whose tip is known: the lines of work the forecast compares.
SELECT * FROM lac_tasks WHERE state = 'claimed' AND tip IS NOT NULL ORDER BY id

-- name: live_claim_paths
-- The declared paths of every live_claims task, in one read (not one per claim).
SELECT p.task_id, p.pattern, p.mode
  FROM lac_task_paths p JOIN lac_tasks t ON t.id = p.task_id
 WHERE t.state = 'claimed' AND t.tip IS NOT NULL
 ORDER BY p.task_id, p.pattern
