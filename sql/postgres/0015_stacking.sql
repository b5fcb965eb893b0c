-- 0015 (stacking): lac_require_free_all (functions/team.sql) lets a
-- wanted lock name the landing lines it is built on ("built_on": task and
-- tip); a lock of a landing claim at one of those tips does not refuse it,
-- in team mode as in Grants._conflicts. Only the function's body changes:
-- this migration carries it to existing boards (sql/README.md).
SELECT 1;
