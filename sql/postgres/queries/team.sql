-- Team mode's administration (git_lacunari/team.py runs these; PostgreSQL
-- only: declared so in store/queries.py's DIALECT_ONLY). Role names are computed in Python
-- (team.role_names) and passed in; DDL is built here with format(%I/%L)
-- from the catalog, so every table and function of the board is covered,
-- whichever migration made it.

-- name: team_self
-- Who this session is on the board, in one round trip: its role, whether
-- the board is in team mode, and the capabilities the board records for it.
SELECT session_user::text AS role, lac_team() AS team,
       (SELECT a.capabilities FROM lac_agents a WHERE a.name = session_user::text) AS caps

-- name: team_admin_rights
SELECT r.rolsuper AS superuser, r.rolsuper OR r.rolcreaterole AS createrole,
       current_user::text AS who, current_schema()::text AS board
  FROM pg_roles r WHERE r.rolname = current_user

-- name: team_role
-- createrole: such a role grants itself any other (the board's admin group,
-- its owner) and so is never held to team mode's rules, nor is one that is
-- already in the board's owner role (:owner, NULL when not asked).
SELECT r.rolname::text AS name, r.rolcanlogin AS login, r.rolsuper AS superuser,
       r.rolbypassrls AS bypassrls, r.rolcreaterole AS createrole,
       coalesce((SELECT pg_has_role(r.oid, o.oid, 'MEMBER') FROM pg_roles o
                  WHERE o.rolname = :owner::text), false) AS owner
  FROM pg_roles r WHERE r.rolname = :role

-- name: team_role_climb
-- The first membership chain from :role (direct or through other roles, with
-- or without INHERIT: SET ROLE works either way) to a role that is a
-- superuser, bypasses row-level security, may create roles, or is the board's
-- owner (:owner): such a role could rewrite the board, so it cannot join.
WITH RECURSIVE up(oid, chain) AS (
    SELECT r.oid, ARRAY[r.rolname::text] FROM pg_roles r WHERE r.rolname = :role
    UNION ALL
    SELECT m.roleid, up.chain || g.rolname::text
      FROM up
      JOIN pg_auth_members m ON m.member = up.oid
      JOIN pg_roles g ON g.oid = m.roleid
     WHERE NOT g.rolname::text = ANY (up.chain) AND cardinality(up.chain) < 64
)
SELECT array_to_string(up.chain, ' -> ') AS chain,
       CASE WHEN g.rolsuper THEN 'a superuser'
            WHEN g.rolbypassrls THEN 'bypasses row-level security'
            WHEN g.rolcreaterole THEN 'may create roles'
            ELSE 'the board''s owner role' END AS what
  FROM up JOIN pg_roles g ON g.oid = up.oid
 WHERE cardinality(up.chain) > 1
   AND (g.rolsuper OR g.rolbypassrls OR g.rolcreaterole OR g.rolname = :owner::text)
 ORDER BY cardinality(up.chain)
 LIMIT 1

-- name: team_membership_through
-- The shortest chain by which :role is already a member of one of the
-- board's groups (:groups, a JSON array) through another role (two steps or
-- more; a direct grant is what `team add` makes, so it may be made again):
-- adding it would grant what it already has, and `team remove` could not take
-- that away.
WITH RECURSIVE up(oid, chain) AS (
    SELECT r.oid, ARRAY[r.rolname::text] FROM pg_roles r WHERE r.rolname = :role
    UNION ALL
    SELECT m.roleid, up.chain || g.rolname::text
      FROM up
      JOIN pg_auth_members m ON m.member = up.oid
      JOIN pg_roles g ON g.oid = m.roleid
     WHERE NOT g.rolname::text = ANY (up.chain) AND cardinality(up.chain) < 64
)
SELECT up.chain[cardinality(up.chain)] AS "group", up.chain[2:cardinality(up.chain) - 1] AS via
  FROM up
 WHERE cardinality(up.chain) > 2
   -- through the board's own groups (an admin is a keeper) is the board's doing
   AND NOT up.chain[2] = ANY (ARRAY(SELECT jsonb_array_elements_text(:groups::jsonb)))
   AND up.chain[cardinality(up.chain)] = ANY (ARRAY(SELECT jsonb_array_elements_text(:groups::jsonb)))
 ORDER BY cardinality(up.chain), 1
 LIMIT 1

-- name: team_membership_cycle
-- The shortest chain by which one of the board's groups (:groups) is a member
-- of :role (directly or through other roles): granting that group to :role
-- would make a membership cycle, which PostgreSQL refuses.
WITH RECURSIVE down(oid, chain) AS (
    SELECT r.oid, ARRAY[r.rolname::text] FROM pg_roles r WHERE r.rolname = :role
    UNION ALL
    SELECT m.member, down.chain || g.rolname::text
      FROM down
      JOIN pg_auth_members m ON m.roleid = down.oid
      JOIN pg_roles g ON g.oid = m.member
     WHERE NOT g.rolname::text = ANY (down.chain) AND cardinality(down.chain) < 64
)
SELECT down.chain[cardinality(down.chain)] AS "group", down.chain[2:cardinality(down.chain) - 1] AS via
  FROM down
 WHERE cardinality(down.chain) > 1
   AND down.chain[cardinality(down.chain)] = ANY (ARRAY(SELECT jsonb_array_elements_text(:groups::jsonb)))
 ORDER BY cardinality(down.chain), 1
 LIMIT 1

-- name: team_create_group_ddl
SELECT format('CREATE ROLE %I NOLOGIN', :role::text) AS ddl

-- name: team_grant_ddl
SELECT format('GRANT %I TO %I', :group::text, :role::text) AS ddl

-- name: team_revoke_ddl
SELECT format('REVOKE %I FROM %I', :group::text, :role::text) AS ddl

-- name: team_create_login_ddl
-- The password arrives already hashed by libpq (SCRAM): the clear text never
-- travels in a statement, so no server log can show it.
SELECT format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS', :role::text)
       || CASE WHEN :verifier::text IS NULL THEN '' ELSE format(' PASSWORD %L', :verifier::text) END
       AS ddl

-- name: team_drop_role_ddl
SELECT format('DROP ROLE %I', :role::text) AS ddl

-- name: team_enable_ddl
-- Everything `team enable` does to the board's objects, in order. :owner
-- owns the write functions (SECURITY DEFINER, search_path pinned to the
-- board then pg_temp, as PostgreSQL's manual advises); agents read through
-- a policy and write only by calling those functions.
WITH s AS (SELECT current_schema()::text AS board),
tables AS (
    SELECT c.relname::text AS name FROM pg_class c, s
     WHERE c.relnamespace = s.board::regnamespace AND c.relkind IN ('r', 'p')
),
seqs AS (
    SELECT c.relname::text AS name FROM pg_class c, s
     WHERE c.relnamespace = s.board::regnamespace AND c.relkind = 'S'
),
funcs AS (
    SELECT p.oid::regprocedure::text AS sig, p.proname::text AS name FROM pg_proc p, s
     WHERE p.pronamespace = s.board::regnamespace AND p.prokind = 'f'
),
readers AS (
    SELECT format('%I, %I, %I, %I', :agent::text, :keeper::text, :admin::text, :reader::text) AS r
)
SELECT ddl FROM (
    SELECT 1 AS step, '' AS k, format('REVOKE ALL ON SCHEMA %I FROM PUBLIC', board) AS ddl FROM s
    UNION ALL
    SELECT 2, '', format('GRANT USAGE ON SCHEMA %I TO %I, %s', board, :owner::text, r)
      FROM s, readers
    UNION ALL
    SELECT 3, '', format('GRANT CREATE ON SCHEMA %I TO %I', board, :owner::text) FROM s
    UNION ALL
    SELECT 4, name, format('ALTER TABLE %I.%I ENABLE ROW LEVEL SECURITY', board, name)
      FROM tables, s
    UNION ALL
    SELECT 5, name, format('ALTER TABLE %I.%I FORCE ROW LEVEL SECURITY', board, name)
      FROM tables, s
    UNION ALL
    SELECT 6, name, format('REVOKE ALL ON TABLE %I.%I FROM PUBLIC, %s', board, name, r)
      FROM tables, s, readers
    UNION ALL
    SELECT 7, name, format('GRANT SELECT ON TABLE %I.%I TO %s', board, name, r)
      FROM tables, s, readers
    UNION ALL
    SELECT 8, name, format('GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE %I.%I TO %I',
                           board, name, :owner::text)
      FROM tables, s
    UNION ALL
    SELECT 9, name, format('DROP POLICY IF EXISTS lac_read ON %I.%I', board, name) FROM tables, s
    UNION ALL
    SELECT 10, name, format('CREATE POLICY lac_read ON %I.%I FOR SELECT TO %s USING (true)',
                            board, name, r)
      FROM tables, s, readers
    UNION ALL
    SELECT 11, name, format('DROP POLICY IF EXISTS lac_write ON %I.%I', board, name)
      FROM tables, s
    UNION ALL
    SELECT 12, name, format(
        'CREATE POLICY lac_write ON %I.%I FOR ALL TO %I USING (true) WITH CHECK (true)',
        board, name, :owner::text)
      FROM tables, s
    UNION ALL
    SELECT 13, name, format('REVOKE ALL ON SEQUENCE %I.%I FROM PUBLIC, %s', board, name, r)
      FROM seqs, s, readers
    UNION ALL
    SELECT 14, name, format('GRANT USAGE, SELECT, UPDATE ON SEQUENCE %I.%I TO %I',
                            board, name, :owner::text)
      FROM seqs, s
    UNION ALL
    SELECT 15, sig, format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', sig) FROM funcs
    UNION ALL
    SELECT 16, sig, format('GRANT EXECUTE ON FUNCTION %s TO %I, %I, %I, %I', sig,
                           :owner::text, :agent::text, :keeper::text, :admin::text)
      FROM funcs
    UNION ALL
    SELECT 17, sig, format('GRANT EXECUTE ON FUNCTION %s TO %I', sig, :reader::text)
      FROM funcs WHERE name NOT LIKE 'lac\_api\_%'
    UNION ALL
    SELECT 18, sig, format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = %I, pg_temp',
                           sig, board)
      FROM funcs, s WHERE name LIKE 'lac\_api\_%' OR name LIKE 'lac\_trg\_%'
    UNION ALL
    SELECT 19, sig, format('ALTER FUNCTION %s OWNER TO %I', sig, :owner::text)
      FROM funcs WHERE name LIKE 'lac\_api\_%' OR name LIKE 'lac\_trg\_%'
) AS steps
ORDER BY step, k

-- name: team_set
-- Team mode's own settings, written by the database administrator directly
-- (lac_api_set_setting refuses them).
INSERT INTO lac_settings (name, value) VALUES (:name, :value)
ON CONFLICT (name) DO UPDATE SET value = excluded.value

-- name: team_record_agent
-- An agent's capabilities are the board's record (team mode ignores LAC_CAPS).
INSERT INTO lac_agents (name, capabilities, last_seen) VALUES (:role, :caps::jsonb, lac_now())
ON CONFLICT (name) DO UPDATE SET capabilities = excluded.capabilities

-- name: team_members
-- Every role in one of the board's groups, with its groups and the board's record.
SELECT m.rolname::text AS name, m.rolcanlogin AS login,
       array_agg(g.rolname::text ORDER BY g.rolname) AS groups,
       (SELECT a.capabilities FROM lac_agents a WHERE a.name = m.rolname::text) AS caps,
       (SELECT a.last_seen FROM lac_agents a WHERE a.name = m.rolname::text) AS last_seen
  FROM pg_auth_members am
  JOIN pg_roles g ON g.oid = am.roleid
  JOIN pg_roles m ON m.oid = am.member
 WHERE g.rolname::text = ANY (ARRAY(SELECT jsonb_array_elements_text(:groups::jsonb)))
   AND NOT m.rolname::text = ANY (ARRAY(SELECT jsonb_array_elements_text(:groups::jsonb)))
 GROUP BY m.rolname, m.rolcanlogin
 ORDER BY m.rolname

-- name: team_other_memberships
-- How many roles :role belongs to outside this board's groups (another
-- board's team, say): it is dropped only when none.
SELECT count(*) AS n FROM pg_auth_members am
  JOIN pg_roles g ON g.oid = am.roleid
  JOIN pg_roles m ON m.oid = am.member
 WHERE m.rolname = :role
   AND NOT g.rolname::text = ANY (ARRAY(SELECT jsonb_array_elements_text(:groups::jsonb)))

-- name: team_release_all
-- A removed agent's claims go back to the board, their locks freed; what
-- they were is returned for the record.
WITH freed AS (
    UPDATE lac_tasks t
       SET state = 'open', owner = NULL, claimed_at = NULL, heartbeat_at = NULL,
           stale_after = NULL
     WHERE t.state = 'claimed' AND t.owner = :role
    RETURNING t.id
), unlocked AS (
    DELETE FROM lac_locks l WHERE l.agent = :role RETURNING l.pattern, l.task_id
)
SELECT (SELECT coalesce(jsonb_agg(id ORDER BY id), '[]') FROM freed) AS tasks,
       (SELECT coalesce(jsonb_agg(pattern ORDER BY pattern), '[]') FROM unlocked) AS locks

-- name: team_event
INSERT INTO lac_events (at, task_id, agent, kind, detail)
VALUES (lac_now(), NULL, current_user, :kind, :detail::jsonb)
