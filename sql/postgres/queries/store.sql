-- The store's own statements for a PostgreSQL board (store/base.py and
-- store/postgres.py run them; the board layer never does). Every name here
-- exists in sql/sqlite/queries/store.sql too (tests/test_queries.py).
-- Everything is keyed by current_schema(), so two boards in one database
-- never share a lock or a channel.

-- name: open_session
-- The session's settings (lock_timeout, statement_timeout) travel as libpq
-- startup options (store/postgres.py): no round trip.
SELECT 1

-- name: begin_write
-- READ COMMITTED, said here whatever the server's, the database's, the
-- role's or PGOPTIONS' default: every statement then reads the board as it
-- is after the locks it waited for (a grant is decided on current data), and
-- the write functions refuse any other level (lac_require_current, 0007).
-- Races READ COMMITTED does not settle are serialised by advisory locks.
BEGIN ISOLATION LEVEL READ COMMITTED

-- name: begin_read
BEGIN ISOLATION LEVEL READ COMMITTED

-- name: commit
COMMIT

-- name: rollback
ROLLBACK

-- name: version_table
CREATE TABLE IF NOT EXISTS lac_schema_version (
    version integer PRIMARY KEY, name text NOT NULL,
    applied_at double precision NOT NULL DEFAULT extract(epoch FROM now()))

-- name: has_version_table
SELECT to_regclass('lac_schema_version') IS NOT NULL AS e

-- name: board_tables
-- `git lac init` checks each table the migrations made is there (store/base.py).
SELECT c.relname AS name FROM pg_catalog.pg_class c
WHERE c.relkind IN ('r', 'p')
  AND c.relnamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = current_schema())

-- name: schema_version
SELECT max(version) AS v FROM lac_schema_version

-- name: record_version
INSERT INTO lac_schema_version (version, name) VALUES (:version, :name)

-- name: function_attributes_ddl
-- Before functions/ is applied (store/base.py): what puts back the attributes
-- a CREATE OR REPLACE would reset on a team board's functions (`team
-- enable`: SECURITY DEFINER, search_path pinned), one statement a row. A
-- search_path is written back as PostgreSQL flattened it (names quoted).
SELECT format('ALTER FUNCTION %s SECURITY DEFINER', p.oid::regprocedure) AS ddl
  FROM pg_proc p
 WHERE p.pronamespace = current_schema()::regnamespace AND p.prosecdef
UNION ALL
SELECT format('ALTER FUNCTION %s SET %I = %s', p.oid::regprocedure, split_part(c, '=', 1),
              CASE WHEN split_part(c, '=', 1) = 'search_path'
                   THEN substr(c, strpos(c, '=') + 1)
                   ELSE quote_literal(substr(c, strpos(c, '=') + 1)) END)
  FROM pg_proc p, unnest(p.proconfig) AS c
 WHERE p.pronamespace = current_schema()::regnamespace AND p.prosecdef

-- name: serialize_migrations
-- Taken first in every migration transaction: concurrent first uses create
-- the schema once (CREATE … IF NOT EXISTS itself races on the catalog).
SELECT pg_advisory_xact_lock(hashtext('lac_migrate:' || current_schema()))

-- name: try_exclusive
-- One keeper, one drainer per lane: a session advisory lock, dropped by the
-- server when its connection dies.
SELECT pg_try_advisory_lock(hashtext(:name || ':' || current_schema())) AS got

-- name: ping
-- Is a session lock's connection still there?
SELECT 1

-- name: work_channel
-- The one spelling of the channel that wakes `claim --next --wait`; a board
-- name too long for a channel (63 bytes) is spelled by its md5
-- (the prefix takes 9 of them, leaving 54 for the name).
'lac_work_' || CASE WHEN octet_length(current_schema()) <= 54
                    THEN current_schema() ELSE md5(current_schema()) END

-- name: listen_work
DO $$ BEGIN EXECUTE format('LISTEN %I', {{work_channel}}); END $$

-- name: session_settings
-- What connect() passes as startup options, for a connection through a
-- service file (whose own options an options argument would replace).
SELECT set_config('lock_timeout', :lock_ms, false),
       set_config('statement_timeout', :statement_ms, false),
       set_config('default_transaction_isolation', 'read committed', false),
       CASE WHEN :board::text IS NULL THEN NULL
            ELSE set_config('search_path', :board, false) END

-- name: create_board_ddl
-- One board per project: a board is a schema of the database (`--board NAME`).
-- None when it exists: an agent of a team board may not create schemas.
SELECT CASE WHEN to_regnamespace(quote_ident(:board::text)) IS NULL
            THEN format('CREATE SCHEMA IF NOT EXISTS %I', :board::text) END AS ddl

-- name: list_boards
-- A board is a schema with a version table; its version and task count.
SELECT n.nspname AS board
  FROM pg_namespace n
 WHERE to_regclass(format('%I.lac_schema_version', n.nspname)) IS NOT NULL
 ORDER BY n.nspname

-- name: default_isolation
-- What a caller that sets nothing gets (`git lac doctor`), on a connection
-- that passes no options: the server's, the database's or the role's default
-- (ALTER DATABASE / ALTER ROLE ... SET), and where it comes from; and every
-- such setting of another role in this database (an agent's own role).
SELECT s.setting AS level,
       s.source AS source,
       (SELECT coalesce(json_agg(json_build_object(
                   'role', coalesce(r.rolname, ''),
                   'database', coalesce(d.datname, ''),
                   'level', substr(c.cfg, length('default_transaction_isolation=') + 1))
                 ORDER BY r.rolname NULLS FIRST, d.datname NULLS FIRST), '[]'::json)
          FROM pg_db_role_setting rs
          CROSS JOIN LATERAL unnest(rs.setconfig) AS c(cfg)
          LEFT JOIN pg_roles r ON r.oid = rs.setrole
          LEFT JOIN pg_database d ON d.oid = rs.setdatabase
         WHERE c.cfg LIKE 'default_transaction_isolation=%'
           AND (rs.setdatabase = 0 OR d.datname = current_database())) AS settings
  FROM pg_settings s
 WHERE s.name = 'default_transaction_isolation'

-- name: isolation_guarded
-- Whether this board's write functions refuse any level but READ COMMITTED
-- (lac_require_current, 0007): then a caller on another level gets LAC02,
-- never a stale grant.
SELECT to_regprocedure('lac_require_current()') IS NOT NULL AS guarded

-- name: current_board
SELECT current_schema() AS board

-- --- the live page's change feed (0006, `git lac serve`) ----------------------

-- name: change_counter
-- The board's change counter (0007: every statement that writes a board
-- table moves it) and whether every write it counts has ended.
SELECT n, settled FROM lac_changes_seen()

-- name: begin_snapshot
-- One instant across every statement of the page's snapshot (READ COMMITTED
-- would let each statement see a later board); read-only, so it never fails
-- on serialization.
BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY

-- --- behind a transaction pooler (lac.pooler = transaction) ---------
-- PgBouncer in transaction mode hands each transaction to any server
-- connection: nothing may outlive one. No startup options (it refuses them),
-- no session settings, no session locks: every transaction says its own.

-- name: local_settings
-- Said right after BEGIN, in the same round trip (store/postgres.py): the
-- session settings connect() would have passed as startup options, for this
-- transaction only. :lock_ms, :statement_ms and :board are formatted in by
-- the store (a whole number, and a validated plain identifier or '' for the
-- server's search_path); no parameters, since BEGIN shares its round trip.
SET LOCAL lock_timeout = {lock_ms}; SET LOCAL statement_timeout = {statement_ms}{search_path}

-- name: try_exclusive_xact
-- try_exclusive for a connection through a pooler: held by a transaction the
-- holder keeps open on a connection of its own (it takes no snapshot to keep
-- under READ COMMITTED, so it holds back no vacuum), released when it ends.
SELECT pg_try_advisory_xact_lock(hashtext(:name || ':' || current_schema())) AS got
