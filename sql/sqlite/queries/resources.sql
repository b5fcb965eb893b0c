-- Named resource pools (0017): the pools, what a task needs of them, what
-- a claim holds. Every write here runs under BEGIN IMMEDIATE, so a look and
-- the grant that follows it are one.
--
-- Named queries of the embedded board. `:name` is a parameter; `{{name}}`
-- inlines the fragment of that name. Lists travel as JSON text.

-- name: resource_add
-- :values are new to the pool (the board dropped those it has); each is
-- ordered after the pool's last.
WITH base(b) AS (SELECT coalesce(max(ord), 0) FROM lac_resources WHERE name = :name)
INSERT INTO lac_resources (name, value, ord)
SELECT :name, v.value, base.b + v.key + 1 FROM json_each(:values) AS v, base WHERE true
ON CONFLICT (name, value) DO NOTHING
RETURNING value, 1 AS added

-- name: resource_remove
-- :values NULL: the whole pool. A held value is never removed (the board
-- refuses first; this keeps it even so).
DELETE FROM lac_resources
 WHERE name = :name AND task_id IS NULL
   AND (:values IS NULL OR value IN (SELECT value FROM json_each(:values)))
RETURNING value

-- name: pool_values
-- Every value of every pool (:name NULL) or of one, in the order they are
-- handed out, with the claim holding each.
SELECT r.name, r.value, r.task_id, t.owner AS holder
  FROM lac_resources r LEFT JOIN lac_tasks t ON t.id = r.task_id
 WHERE :name IS NULL OR r.name = :name
 ORDER BY r.name, r.ord

-- name: pool_sizes
SELECT name, count(*) AS total FROM lac_resources
 WHERE name IN (SELECT value FROM json_each(:names))
 GROUP BY name

-- name: insert_task_resource
INSERT INTO lac_task_resources (task_id, name, count) VALUES (:task_id, :name, :count)
ON CONFLICT (task_id, name) DO UPDATE SET count = max(count, excluded.count)

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
 WHERE n.task_id IN (SELECT value FROM json_each(:ids))
 ORDER BY n.task_id, n.name

-- name: grant_resources
-- What our claim (here, not landing) still lacks of each pool it needs: the
-- first free values in the pool's order. The board checked there are enough.
UPDATE lac_resources SET task_id = :task_id, granted_at = {{now}}
 WHERE rowid IN (
     SELECT f.rid
       FROM (SELECT r.rowid AS rid, r.name,
                    row_number() OVER (PARTITION BY r.name ORDER BY r.ord) AS k
               FROM lac_resources r
              WHERE r.task_id IS NULL
                AND r.name IN (SELECT name FROM lac_task_resources WHERE task_id = :task_id)) AS f
       JOIN lac_task_resources n ON n.task_id = :task_id AND n.name = f.name
      WHERE f.k <= n.count - (SELECT count(*) FROM lac_resources h
                               WHERE h.name = n.name AND h.task_id = :task_id))
   AND EXISTS (SELECT 1 FROM lac_tasks t
                WHERE t.id = :task_id AND t.state = 'claimed' AND t.owner = :agent
                  AND t.instance IS :instance AND t.landing_since IS NULL)
RETURNING name, value

-- name: task_resources
SELECT name, value FROM lac_resources WHERE task_id = :task_id ORDER BY name, ord

-- name: claims_resources
SELECT task_id, name, value FROM lac_resources
 WHERE task_id IN (SELECT value FROM json_each(:ids))
 ORDER BY task_id, name, ord
