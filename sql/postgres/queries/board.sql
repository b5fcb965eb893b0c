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
