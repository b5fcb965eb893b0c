-- The life of a task: adding, claiming, finishing, editing, its dependencies and declared paths.
--
-- Named queries of a PostgreSQL board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.
-- Every write is a call of a lac_api_* function (0005_team.sql): one write
-- path for plain and team mode; reads are plain SELECTs.

-- name: now
lac_now()

-- name: claimable
EXISTS (SELECT 1 FROM lac_claimable(t.id, :agent) AS ok WHERE ok)

-- name: upsert_agent
SELECT lac_api_upsert_agent(:agent, :caps::jsonb)

-- name: insert_task
SELECT lac_api_insert_task(:title, :body, :lane, :priority::integer, :needs::jsonb, :agent) AS id

-- name: insert_dep
SELECT lac_api_insert_dep(:task_id::bigint, :depends_on::bigint, :agent, :instance)

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
SELECT c.*, EXISTS (SELECT 1 FROM lac_task_paths p WHERE p.task_id = c.id) AS has_paths,
       EXISTS (SELECT 1 FROM lac_task_resources r WHERE r.task_id = c.id) AS has_resources
  FROM lac_api_claim(:task_id::bigint, :agent, :instance, :stale_after::double precision) AS c

-- name: next_candidate
-- SKIP LOCKED: claimers never queue behind each other's candidate row.
SELECT c.*, EXISTS (SELECT 1 FROM lac_task_resources r WHERE r.task_id = c.id) AS has_resources
  FROM lac_api_next_candidate(:lane, :agent, :skip::jsonb) AS c

-- name: claim_next_free
-- The whole of `claim --next` in one statement when the best candidate
-- declares no paths (most tasks): pick, guard, claim, record. Zero rows sends
-- the caller to the general path, which also explains a refusal.
-- :stale_after NULL is the board's (lac_default_stale), read here: no round trip.
SELECT c.*, false AS has_paths, false AS has_resources
  FROM lac_api_claim_next_free(:lane, :agent, :instance,
                               coalesce(:stale_after::double precision, lac_default_stale())) AS c

-- name: get_task
SELECT * FROM lac_tasks WHERE id = :task_id

-- name: task_deps
SELECT d.depends_on AS id, t.state AS state, t.title AS title
  FROM lac_task_deps d JOIN lac_tasks t ON t.id = d.depends_on
 WHERE d.task_id = :task_id ORDER BY d.depends_on

-- name: task_paths
SELECT pattern, mode FROM lac_task_paths WHERE task_id = :task_id ORDER BY pattern

-- name: release
-- Back to open with the claim's locks freed; :agent is who releases (an
-- admin's release of another's claim is recorded as force_released).
SELECT * FROM lac_api_release(:task_id::bigint, :owner, :agent)

-- name: done
SELECT * FROM lac_api_done(:task_id::bigint, :agent, :instance)

-- name: heartbeat
SELECT * FROM lac_api_heartbeat(:agent, :instance, :ids::jsonb)

-- name: cap_claim
-- `claim --max-age`: our claim here lives at most :max_age seconds from
-- claimed_at, in the transaction that claimed it.
SELECT * FROM lac_api_cap_claim(:task_id::bigint, :agent, :instance, :max_age::double precision)

-- name: stale_claims
-- Claims silent for longer than their own stale-after (the board's for claims
-- made before claims carried one), and never shorter than :at_least (a keeper's);
-- and claims in work past their max-age (0018), heartbeats or not: ``aged``.
SELECT * FROM lac_api_stale_claims(:default_stale::double precision, :at_least::double precision)

-- name: aged
-- A claim in work (not landing) past claimed_at + max_age (0018); the
-- functions (lac_api_stale_claims, lac_api_expire) spell the same rule.
(max_age IS NOT NULL AND landing_since IS NULL AND claimed_at + max_age < lac_now())

-- name: expire
-- Back to the board, unless it heartbeat since the keeper looked.
SELECT * FROM lac_api_expire(:state, :task_id::bigint, :owner, :heartbeat_at::double precision)

-- name: notify_work
-- Wakes `claim --next --wait` on this board (delivered at commit).
SELECT pg_notify({{work_channel}}, :lane)

-- name: park
SELECT * FROM lac_api_park(:task_id::bigint, :owner)

-- name: now_value
SELECT {{now}} AS now

-- name: edit_task
-- Editable while open, or by its owner while claimed (the rule team mode's
-- row-level security states too).
SELECT * FROM lac_api_edit_task(:task_id::bigint, :agent, :instance, :title, :body, :lane,
                                 :priority::integer, :needs::jsonb)

-- name: delete_task_path
SELECT * FROM lac_api_delete_task_path(:task_id::bigint, :pattern)

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

-- name: take_over
-- The same agent moves its claim to this instance (`claim --take-over`).
SELECT * FROM lac_api_take_over(:task_id::bigint, :agent, :instance)
