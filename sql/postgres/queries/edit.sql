-- Edit time: the agent-harness hook, MCP and `git lac wait`.

-- name: own_claims
-- Our claims at this instance, those in work before those landing, newest
-- first, with the board's clock: what the edit hook lets an undeclared path be
-- locked under (the newest in work: a landing claim's locks go when its work
-- lands, which an edit made now is not part of), and whose heartbeat it renews.
SELECT id, claimed_at, heartbeat_at, landing_since, {{now}} AS now
  FROM lac_tasks
 WHERE owner = :agent AND state = 'claimed' AND instance = :instance
 ORDER BY landing_since IS NOT NULL, claimed_at DESC, id DESC

-- name: take_turn
-- `wait --lock`: queue for one path's turn. A session advisory lock, waited
-- for in the server's lock queue (first come, first served; bounded by the
-- connection's lock_timeout) and dropped when the connection ends.
SELECT pg_advisory_lock(hashtext('turn:' || :name || ':' || current_schema())) AS got

-- name: take_turn_xact
-- take_turn behind a transaction pooler: the turn is held by a transaction
-- its waiter keeps open on a connection of its own.
SELECT pg_advisory_xact_lock(hashtext('turn:' || :name || ':' || current_schema())) AS got
