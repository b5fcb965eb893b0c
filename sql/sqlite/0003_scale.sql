-- 0003 (lists that scale): `git lac tasks` and `git lac log` page.
-- The default listing is of live tasks (neither done nor cancelled) in id
-- order: a partial index holds only those, so a board of 100,000 finished
-- tasks lists its few live ones without reading the rest. `--state S` walks
-- (state, id); `--lane L` among live tasks walks (lane, id). The log pages
-- from the newest event back along its primary key (lac_events_task for one
-- task), so it needs no new index.

CREATE INDEX lac_tasks_live ON lac_tasks (id) WHERE state NOT IN ('done', 'cancelled');
CREATE INDEX lac_tasks_live_lane ON lac_tasks (lane, id) WHERE state NOT IN ('done', 'cancelled');
CREATE INDEX lac_tasks_state ON lac_tasks (state, id);
