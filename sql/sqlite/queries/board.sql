-- The board's settings, events, agents and instances.
--
-- Named queries of the embedded board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.

-- name: get_setting
SELECT value FROM lac_settings WHERE name = :name

-- name: set_setting
INSERT INTO lac_settings (name, value) VALUES (:name, :value)
ON CONFLICT (name) DO UPDATE SET value = excluded.value

-- name: insert_event
INSERT INTO lac_events (at, task_id, agent, kind, detail)
VALUES ({{now}}, :task_id, :agent, :kind, :detail)

-- name: agent_seen
-- Every command is a sign of life of its agent, claims or not: the keeper
-- returns task-less locks of agents silent for the stale period.
INSERT INTO lac_agents (name, last_seen) VALUES (:agent, {{now}})
ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen

-- name: upsert_instance
-- Where an agent runs, for people: refusals name the holder's host and path.
INSERT INTO lac_instances (id, agent, host, path, last_seen)
VALUES (:instance, :agent, :host, :path, {{now}})
ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, host = excluded.host,
    path = excluded.path, last_seen = excluded.last_seen

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
