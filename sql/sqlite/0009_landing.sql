-- 0009: locks that last until the work lands. A claim records
-- the branch it works on and that branch's tip (set by `claim`, moved by
-- `heartbeat` and the post-commit and pre-push hooks); `done` on a claim
-- whose tip is not yet in the destination (lac.target) keeps the claim and
-- its write locks with landing_since set (the task is shown as landing)
-- until the work is seen in the destination (`git lac sweep`, the keeper,
-- the server's post-receive). A claim clears all three.

ALTER TABLE lac_tasks ADD COLUMN branch TEXT;
ALTER TABLE lac_tasks ADD COLUMN tip TEXT;
ALTER TABLE lac_tasks ADD COLUMN landing_since REAL;
-- The landing checks read only the claims that wait to land.
CREATE INDEX lac_tasks_landing ON lac_tasks (id) WHERE state = 'claimed' AND landing_since IS NOT NULL;
