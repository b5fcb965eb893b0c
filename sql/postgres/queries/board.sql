-- The board's settings, events, agents and instances.
--
-- Named queries of a PostgreSQL board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.
-- Every write is a call of a lac_api_* function (0005_team.sql): one write
-- path for plain and team mode; reads are plain SELECTs.

-- name: get_setting
SELECT value FROM lac_settings WHERE name = :name

-- name: set_setting
SELECT lac_api_set_setting(:name, :value)

-- name: insert_event
SELECT lac_api_insert_event(:task_id::bigint, :agent, :kind, :detail::jsonb)

-- name: agent_seen
-- Every command is a sign of life of its agent, claims or not: the keeper
-- returns task-less locks of agents silent for the stale period.
SELECT lac_api_agent_seen(:agent)

-- name: upsert_instance
-- Where an agent runs, for people: refusals name the holder's host and path.
SELECT lac_api_upsert_instance(:instance, :agent, :host, :path)

-- name: get_instance
SELECT * FROM lac_instances WHERE id = :instance

-- name: agent_instances
-- `git lac instance list`: the working trees an agent has acted from, the
-- most recent first, each with the claims and locks it holds now. A row's
-- agent is the last one seen there (one tree may act under several names),
-- so a tree where the agent still holds something is listed too.
SELECT * FROM (
    SELECT i.id, i.host, i.path, i.last_seen, i.agent,
           (SELECT count(*) FROM lac_tasks t
             WHERE t.instance = i.id AND t.owner = :agent AND t.state = 'claimed') AS claims,
           (SELECT count(*) FROM lac_locks l
             WHERE l.instance = i.id AND l.agent = :agent) AS locks
    FROM lac_instances i
) AS seen
WHERE agent = :agent OR claims > 0 OR locks > 0
ORDER BY last_seen DESC, id

-- name: instance_claims
-- The agent's claims held at one instance (`git lac instance adopt`).
SELECT id FROM lac_tasks
WHERE instance = :instance AND owner = :agent AND state = 'claimed'
ORDER BY id
