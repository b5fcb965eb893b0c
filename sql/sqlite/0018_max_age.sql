-- 0018 (claim --max-age): a claim's life capped from claimed_at, heartbeats
-- or not. max_age is seconds, NULL for no cap; every new claim sets it (the
-- claiming statements clear it, `claim --max-age` sets it in the same
-- transaction). The keeper expires a claim in work (not landing) past
-- claimed_at + max_age (queries/tasks.sql stale_claims, expire).
--
-- Expiry is told to its holder as take-over notices are (board/notices.py):
-- the expired event records where the claim was held (previous_instance),
-- and this index finds an agent's expired events without reading the rest.

ALTER TABLE lac_tasks ADD COLUMN max_age REAL
    CHECK (max_age IS NULL OR (max_age > 0 AND max_age <= 315360000));

CREATE INDEX lac_events_expired_owner ON lac_events (json_extract(detail, '$.previous_owner'))
 WHERE kind = 'expired';
