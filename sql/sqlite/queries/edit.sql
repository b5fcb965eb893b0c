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
-- Never run: on SQLite the waiters of a path queue as ticket files beside the
-- board (git_lacunari/turns.py), which a dead waiter's kernel lock releases.
SELECT NULL AS got

-- name: take_turn_xact
-- Never run: SQLite's turns are ticket files (git_lacunari/turns.py).
SELECT NULL AS got
