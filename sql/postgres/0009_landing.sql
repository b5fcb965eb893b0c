-- 0009: locks that last until the work lands. A claim records
-- the branch it works on and that branch's tip (set by `claim`, moved by
-- `heartbeat` and the post-commit and pre-push hooks); `done` on a claim
-- whose tip is not yet in the destination (lac.target) keeps the claim and
-- its write locks with landing_since set (the task is shown as landing)
-- until the work is seen in the destination (`git lac sweep`, the keeper,
-- the server's post-receive). A claim clears all three.
-- New functions (functions/landing.sql): lac_api_track, lac_api_land,
-- lac_api_landed, lac_landing_period; changed: lac_api_claim and
-- lac_api_claim_next_free (a claim clears the three columns),
-- lac_api_set_setting (landing_period is a duration), lac_absorbs and
-- lac_trg_settle (the landing and landed events).

ALTER TABLE lac_tasks ADD COLUMN branch text;
ALTER TABLE lac_tasks ADD COLUMN tip text;
ALTER TABLE lac_tasks ADD COLUMN landing_since double precision;
CREATE INDEX lac_tasks_landing ON lac_tasks (id) WHERE state = 'claimed' AND landing_since IS NOT NULL;

ALTER TABLE lac_tasks
    ADD CONSTRAINT lac_tasks_branch_ok
        CHECK (branch IS NULL OR (length(branch) BETWEEN 1 AND 1000 AND lac_safe(branch)
                                  AND branch !~ '[[:space:]]')),
    ADD CONSTRAINT lac_tasks_tip_ok
        CHECK (tip IS NULL OR tip ~ '^[0-9a-f]{40}([0-9a-f]{24})?$');
ALTER TABLE lac_settings
    ADD CONSTRAINT lac_settings_landing_period_ok
        CHECK (name <> 'landing_period' OR lac_valid_duration_text(value)) NOT VALID;
