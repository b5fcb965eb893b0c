-- 0016 (the landing queue, `git lac land`): a landing line the lander could
-- not take onto the destination (it conflicts there, or lac.land.check
-- failed on the merged tree) goes back to its holder: the claim stays the
-- holder's, with its locks, in work again (landing_since cleared), and
-- returned_at says since when; returned holds why (the tip, the conflicting
-- paths, or the check's exit code and last lines). Shown as the state
-- `returned`. `land` again, or a new claim, clears both.
-- New function (functions/landing.sql): lac_api_return_line; changed:
-- lac_api_land, lac_api_claim, lac_api_claim_next_free (they clear the two
-- columns), lac_absorbs (the returned event).

ALTER TABLE lac_tasks ADD COLUMN returned_at double precision;
ALTER TABLE lac_tasks ADD COLUMN returned jsonb;
ALTER TABLE lac_tasks
    ADD CONSTRAINT lac_tasks_returned_ok
        CHECK (returned IS NULL OR jsonb_typeof(returned) = 'object');
