-- Named resource pools (0017): the pools, what a task needs of them, what
-- a claim holds. Writes call lac_api_* functions (functions/resources.sql);
-- the board takes the grant lock (serialize_locks) before it looks, so a
-- look and the grant that follows it are one.
--
-- Named queries of a PostgreSQL board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.

-- name: resource_add
SELECT * FROM lac_api_resource_add(:name, :values::jsonb)

-- name: resource_remove
-- :values NULL: the whole pool; a held value refuses the whole call.
SELECT * FROM lac_api_resource_remove(:name, :values::jsonb)

-- name: pool_values
-- Every value of every pool (:name NULL) or of one, in the order they are
-- handed out, with the claim holding each.
SELECT r.name, r.value, r.task_id, t.owner AS holder
  FROM lac_resources r LEFT JOIN lac_tasks t ON t.id = r.task_id
 WHERE :name::text IS NULL OR r.name = :name::text
 ORDER BY r.name, r.ord

-- name: pool_sizes
SELECT name, count(*) AS total FROM lac_resources
 WHERE name IN (SELECT jsonb_array_elements_text(:names::jsonb))
 GROUP BY name

-- name: insert_task_resource
SELECT lac_api_insert_task_resource(:task_id::bigint, :name, :count::integer)

-- name: task_resource_needs
SELECT name, count FROM lac_task_resources WHERE task_id = :task_id ORDER BY name

-- name: resource_needs
-- Each pool the task needs: how many, how many its claim holds already,
-- how many are free, the pool's size.
SELECT n.name, n.count AS wanted,
       (SELECT count(*) FROM lac_resources h WHERE h.name = n.name AND h.task_id = n.task_id)
           AS held,
       (SELECT count(*) FROM lac_resources f WHERE f.name = n.name AND f.task_id IS NULL) AS free,
       (SELECT count(*) FROM lac_resources a WHERE a.name = n.name) AS total
  FROM lac_task_resources n
 WHERE n.task_id = :task_id
 ORDER BY n.name

-- name: tasks_resource_needs
-- resource_needs of many tasks (:ids, JSON) in one query: what `ready` says.
SELECT n.task_id, n.name, n.count AS wanted,
       (SELECT count(*) FROM lac_resources h WHERE h.name = n.name AND h.task_id = n.task_id)
           AS held,
       (SELECT count(*) FROM lac_resources f WHERE f.name = n.name AND f.task_id IS NULL) AS free,
       (SELECT count(*) FROM lac_resources a WHERE a.name = n.name) AS total
  FROM lac_task_resources n
 WHERE n.task_id IN (SELECT v::bigint FROM jsonb_array_elements_text(:ids::jsonb) AS v)
 ORDER BY n.task_id, n.name

-- name: grant_resources
SELECT * FROM lac_api_grant_resources(:task_id::bigint, :agent, :instance)

-- name: task_resources
SELECT name, value FROM lac_resources WHERE task_id = :task_id ORDER BY name, ord

-- name: claims_resources
SELECT task_id, name, value FROM lac_resources
 WHERE task_id IN (SELECT v::bigint FROM jsonb_array_elements_text(:ids::jsonb) AS v)
 ORDER BY task_id, name, ord
