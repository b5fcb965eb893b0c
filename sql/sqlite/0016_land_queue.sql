-- 0016 (the landing queue, `git lac land`): a landing line the lander could
-- not take onto the destination (it conflicts there, or lac.land.check
-- failed on the merged tree) goes back to its holder: the claim stays the
-- holder's, with its locks, in work again (landing_since cleared), and
-- returned_at says since when; returned holds why, as JSON (the tip, the
-- conflicting paths, or the check's exit code and last lines). Shown as the
-- state `returned`. `land` again, or a new claim, clears both.

ALTER TABLE lac_tasks ADD COLUMN returned_at REAL;
ALTER TABLE lac_tasks ADD COLUMN returned TEXT CHECK (returned IS NULL OR json_valid(returned));
