-- 0018 (claim --max-age): a claim's life capped from claimed_at, heartbeats
-- or not. max_age is seconds, NULL for no cap; every new claim sets it
-- (lac_api_claim and lac_api_claim_next_free clear it, lac_api_cap_claim
-- sets it in the same transaction). The keeper expires a claim in work (not
-- landing) past claimed_at + max_age: lac_api_stale_claims answers those too,
-- with what the keeper records (its return type changes: DROP here,
-- functions/team.sql creates it again; `git lac init` gives it team mode's
-- rules, as for 0011's changed function), and lac_api_expire takes them.
--
-- Expiry is told to its holder as take-over notices are (board/notices.py):
-- the expired event records where the claim was held (previous_instance),
-- and this index finds an agent's expired events without reading the rest.

ALTER TABLE lac_tasks ADD COLUMN max_age double precision;
ALTER TABLE lac_tasks
    ADD CONSTRAINT lac_tasks_max_age_ok
        CHECK (max_age IS NULL OR lac_valid_duration(max_age));

CREATE INDEX lac_events_expired_owner ON lac_events ((detail ->> 'previous_owner'))
 WHERE kind = 'expired';

DROP FUNCTION lac_api_stale_claims(double precision, double precision);
