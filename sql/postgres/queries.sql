-- Named queries of a PostgreSQL board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.
-- Every write is a call of a lac_api_* function (0005_team.sql): one write
-- path for plain and team mode; reads are plain SELECTs.

-- name: now
lac_now()

-- name: claimable
EXISTS (SELECT 1 FROM lac_claimable(t.id, :agent) AS ok WHERE ok)

-- name: serialize_locks
-- Lock grants are check-then-insert; under READ COMMITTED that races, so
-- every transaction that grants locks on this board takes this first.
SELECT pg_advisory_xact_lock(hashtext('lac_locks:' || current_schema()))

-- name: upsert_agent
SELECT lac_api_upsert_agent(:agent, :caps::jsonb)

-- name: insert_task
SELECT lac_api_insert_task(:title, :body, :lane, :priority::integer, :needs::jsonb, :agent) AS id

-- name: insert_dep
SELECT lac_api_insert_dep(:task_id::bigint, :depends_on::bigint)

-- name: insert_task_path
SELECT lac_api_insert_task_path(:task_id::bigint, :pattern, :mode)

-- name: missing_tasks
SELECT v::bigint AS id FROM jsonb_array_elements_text(:ids::jsonb) AS v
 WHERE v::bigint NOT IN (SELECT id FROM lac_tasks)

-- name: depends_transitively
-- Does any of :deps (or what they depend on) depend on :task_id?
WITH RECURSIVE reach(id) AS (
    SELECT v::bigint FROM jsonb_array_elements_text(:deps::jsonb) AS v
    UNION
    SELECT d.depends_on FROM lac_task_deps d JOIN reach r ON d.task_id = r.id
)
SELECT 1 AS hit FROM reach WHERE id = :task_id LIMIT 1

-- name: claim
-- The claim and its `claimed` event, in one statement.
SELECT c.*, EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = c.id) AS has_paths
  FROM lac_api_claim(:task_id::bigint, :agent, :instance, :stale_after::double precision) AS c

-- name: next_candidate
-- SKIP LOCKED: claimers never queue behind each other's candidate row.
SELECT * FROM lac_api_next_candidate(:lane, :agent, :skip::jsonb)

-- name: claim_next_free
-- The whole of `claim --next` in one statement when the best candidate
-- declares no paths (most tasks): pick, guard, claim, record. Zero rows sends
-- the caller to the general path, which also explains a refusal.
SELECT c.*, false AS has_paths
  FROM lac_api_claim_next_free(:lane, :agent, :instance, :stale_after::double precision) AS c

-- name: get_task
SELECT * FROM lac_tasks WHERE id = :task_id

-- name: task_deps
SELECT d.depends_on AS id, t.state AS state, t.title AS title
  FROM lac_task_deps d JOIN lac_tasks t ON t.id = d.depends_on
 WHERE d.task_id = :task_id ORDER BY d.depends_on

-- name: task_paths
SELECT pattern, mode FROM lac_task_paths WHERE task_id = :task_id ORDER BY pattern

-- name: covering_locks
-- Every lock whose key is one of :keys, with its claim's heartbeat (the guards).
SELECT l.*, t.heartbeat_at AS task_heartbeat_at
  FROM lac_locks l LEFT JOIN lac_tasks t ON t.id = l.task_id
 WHERE l.key = ANY (ARRAY(SELECT jsonb_array_elements_text(:keys::jsonb)))

-- name: insert_lock
SELECT * FROM lac_api_insert_lock(:pattern, :key, :mode, :agent, :task_id::bigint, :base_blob,
                                   :instance)

-- name: upgrade_lock
SELECT lac_api_upgrade_lock(:lock_id::bigint)

-- name: list_locks
SELECT * FROM lac_locks WHERE (:agent::text IS NULL OR agent = :agent) ORDER BY pattern, id

-- name: task_locks
SELECT * FROM lac_locks WHERE task_id = :task_id ORDER BY pattern

-- name: delete_task_locks
SELECT * FROM lac_api_delete_task_locks(:task_id::bigint)

-- name: delete_agent_lock
SELECT * FROM lac_api_delete_agent_lock(:agent, :instance, :pattern)

-- name: release
SELECT * FROM lac_api_release(:task_id::bigint, :owner)

-- name: done
SELECT * FROM lac_api_done(:task_id::bigint, :agent, :instance)

-- name: heartbeat
SELECT * FROM lac_api_heartbeat(:agent, :instance, :ids::jsonb)

-- name: stale_claims
-- Claims silent for longer than their own stale-after (the board's for claims
-- made before claims carried one), and never shorter than :at_least (a keeper's).
SELECT * FROM lac_api_stale_claims(:default_stale::double precision, :at_least::double precision)

-- name: expire
-- Back to the board, unless it heartbeat since the keeper looked.
SELECT * FROM lac_api_expire(:state, :task_id::bigint, :owner, :heartbeat_at::double precision)

-- name: get_setting
SELECT value FROM lac_settings WHERE name = :name

-- name: set_setting
SELECT lac_api_set_setting(:name, :value)

-- name: notify_work
-- Wakes `claim --next --wait` on this board (delivered at commit).
SELECT pg_notify({{work_channel}}, :lane)

-- name: park
SELECT * FROM lac_api_park(:task_id::bigint, :owner)

-- name: lock_bases
SELECT pattern, base_blob FROM lac_locks
 WHERE base_blob IS NOT NULL
   AND pattern = ANY (ARRAY(SELECT jsonb_array_elements_text(:paths::jsonb)))
 ORDER BY acquired_at

-- name: insert_event
SELECT lac_api_insert_event(:task_id::bigint, :agent, :kind, :detail::jsonb)

-- name: now_value
SELECT {{now}} AS now

-- --- the whole life of a task, and lock administration (issue 14) ---------

-- name: edit_task
-- Editable while open, or by its owner while claimed (the rule team mode's
-- row-level security states too).
SELECT * FROM lac_api_edit_task(:task_id::bigint, :agent, :instance, :title, :body, :lane,
                                 :priority::integer, :needs::jsonb)

-- name: delete_task_path
SELECT * FROM lac_api_delete_task_path(:task_id::bigint, :pattern)

-- name: delete_task_lock
SELECT * FROM lac_api_delete_task_lock(:task_id::bigint, :pattern)

-- name: delete_dep
SELECT lac_api_delete_dep AS depends_on
  FROM lac_api_delete_dep(:task_id::bigint, :depends_on::bigint)

-- name: dependents
SELECT d.task_id AS id, t.state AS state
  FROM lac_task_deps d JOIN lac_tasks t ON t.id = d.task_id
 WHERE d.depends_on = :task_id ORDER BY d.task_id

-- name: cancel
SELECT * FROM lac_api_cancel(:task_id::bigint, :agent, :instance)

-- name: reopen
-- Back to open with its attempts reset: a reopened task is new work, and a
-- kept count would park it again at its first failure.
SELECT * FROM lac_api_reopen(:task_id::bigint)

-- name: delete_pattern_locks
-- Every agent's lock on exactly :pattern (`unlock --force`).
SELECT * FROM lac_api_delete_pattern_locks(:pattern)

-- name: agent_seen
-- Every command is a sign of life of its agent, claims or not: the keeper
-- returns task-less locks of agents silent for the stale period.
SELECT lac_api_agent_seen(:agent)

-- name: silent_agent_locks
-- Task-less locks whose agent has not been seen (nor locked anything) for :stale.
SELECT * FROM lac_api_silent_agent_locks(:stale::double precision)

-- name: expire_lock
-- Unless its agent was seen since the keeper looked.
SELECT * FROM lac_api_expire_lock(:lock_id::bigint, :stale::double precision)

-- name: lane_open_tasks
-- Every open task of a lane in the order `claim --next` takes them, with the
-- one claimable rule's answer for this agent.
SELECT t.*, {{claimable}} AS claimable,
       EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = t.id) AS has_paths
  FROM lac_tasks t
 WHERE t.lane = :lane AND t.state = 'open'
 ORDER BY t.priority DESC, t.created_at, t.id

-- name: upsert_instance
-- Where an agent runs, for people: refusals name the holder's host and path.
SELECT lac_api_upsert_instance(:instance, :agent, :host, :path)

-- name: get_instance
SELECT * FROM lac_instances WHERE id = :instance

-- name: take_over
-- The same agent moves its claim to this instance (`claim --take-over`).
SELECT * FROM lac_api_take_over(:task_id::bigint, :agent, :instance)

-- name: take_over_locks
SELECT lac_api_take_over_locks(:task_id::bigint, :agent, :instance)

-- --- lists that scale, and a grant in a few statements (issue 12) ---------
-- Pages of `git lac tasks`: LIMIT :limit rows in id order (:limit NULL is
-- all), and how many more match, counted only up to :cap (a count never
-- reads more than :cap index entries). :lane and :owner are optional (NULL).

-- name: live_tasks_filter
state NOT IN ('done', 'cancelled')
   AND (:lane::text IS NULL OR lane = :lane) AND (:owner::text IS NULL OR owner = :owner)

-- name: live_tasks_page
SELECT * FROM lac_tasks WHERE {{live_tasks_filter}} ORDER BY id LIMIT :limit

-- name: live_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{live_tasks_filter}} AND id > :after LIMIT :cap) AS m

-- name: state_tasks_filter
state = ANY (ARRAY(SELECT jsonb_array_elements_text(:states::jsonb)))
   AND (:lane::text IS NULL OR lane = :lane) AND (:owner::text IS NULL OR owner = :owner)

-- name: state_tasks_page
SELECT * FROM lac_tasks WHERE {{state_tasks_filter}} ORDER BY id LIMIT :limit

-- name: state_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{state_tasks_filter}} AND id > :after LIMIT :cap) AS m

-- name: all_tasks_filter
(:lane::text IS NULL OR lane = :lane) AND (:owner::text IS NULL OR owner = :owner)

-- name: all_tasks_page
SELECT * FROM lac_tasks WHERE {{all_tasks_filter}} ORDER BY id LIMIT :limit

-- name: all_tasks_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_tasks
                            WHERE {{all_tasks_filter}} AND id > :after LIMIT :cap) AS m

-- name: events_page
-- The newest :limit events (the caller shows them oldest first).
SELECT * FROM lac_events ORDER BY id DESC LIMIT :limit

-- name: events_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_events WHERE id < :before LIMIT :cap) AS m

-- name: task_events_page
SELECT * FROM lac_events WHERE task_id = :task_id ORDER BY id DESC LIMIT :limit

-- name: task_events_more
SELECT count(*) AS n FROM (SELECT 1 FROM lac_events
                            WHERE task_id = :task_id AND id < :before LIMIT :cap) AS m

-- name: candidate_locks_batch
-- The locks that may overlap any of a grant's wanted patterns, in one round
-- trip: those whose key is one of :exact (the wanted keys and their
-- ancestors), and those whose key lies in one of :ranges
-- ([{"lo": key, "hi": key + U+10FFFF}], the wanted keys' subtrees), each
-- range an index scan. A lock may come twice; the caller dedupes.
SELECT * FROM lac_locks
 WHERE key = ANY (ARRAY(SELECT jsonb_array_elements_text(:exact::jsonb)))
UNION ALL
SELECT l.* FROM jsonb_to_recordset(:ranges::jsonb) AS r(lo text, hi text)
 CROSS JOIN LATERAL (SELECT * FROM lac_locks WHERE key >= r.lo AND key < r.hi) AS l

-- name: own_locks_on
-- This agent's locks on exactly these patterns (a regrant).
SELECT * FROM lac_locks
 WHERE agent = :agent
   AND pattern = ANY (ARRAY(SELECT jsonb_array_elements_text(:patterns::jsonb)))

-- name: insert_locks
-- Every lock of one grant in one statement (one round trip): :locks is
-- [{"pattern", "key", "mode", "base_blob"}].
SELECT * FROM lac_api_insert_locks(:locks::jsonb, :agent, :task_id::bigint, :instance)

-- --- the live page (`git lac serve`, issue 15): one snapshot, read at once ------

-- name: page_tasks
-- Every unfinished task, and the newest :finished done or cancelled ones.
SELECT * FROM lac_tasks WHERE state IN ('open', 'claimed', 'parked')
UNION ALL
(SELECT * FROM lac_tasks WHERE state IN ('done', 'cancelled')
  ORDER BY id DESC LIMIT :finished)
ORDER BY id

-- name: page_state_counts
SELECT state, count(*) AS n FROM lac_tasks GROUP BY state

-- name: page_deps
-- What unfinished tasks wait on, with the state of each dependency.
SELECT d.task_id, d.depends_on, dt.state
  FROM lac_task_deps d
  JOIN lac_tasks t ON t.id = d.task_id
  JOIN lac_tasks dt ON dt.id = d.depends_on
 WHERE t.state IN ('open', 'claimed', 'parked')
 ORDER BY d.task_id, d.depends_on

-- name: page_task_paths
SELECT p.task_id, p.pattern, p.mode
  FROM lac_task_paths p JOIN lac_tasks t ON t.id = p.task_id
 WHERE t.state IN ('open', 'claimed', 'parked')
 ORDER BY p.task_id, p.pattern

-- name: page_locks
SELECT * FROM lac_locks ORDER BY pattern, id

-- name: page_events
-- The newest :n events, oldest first.
SELECT * FROM (SELECT * FROM lac_events ORDER BY id DESC LIMIT :n) AS newest ORDER BY id

-- name: page_done_since
SELECT count(*) AS n FROM lac_events WHERE kind = 'done' AND at >= :since

-- name: page_instances
SELECT id, host, path FROM lac_instances

-- name: page_agents
SELECT name, capabilities, last_seen FROM lac_agents

-- name: page_role
-- Who the page's connection is (team mode: the board's reader role).
SELECT current_user AS role

-- name: page_set_role
-- Team mode, actions off: the page reads as the board's read-only role.
SELECT set_config('role', :role, false) AS role
