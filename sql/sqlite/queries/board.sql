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
