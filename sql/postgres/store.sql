-- The store's own statements for a PostgreSQL board (store/base.py and
-- store/postgres.py run them; the board layer never does). Every name here
-- exists in sql/sqlite/store.sql too (tests/test_store.py proves it).
-- Everything is keyed by current_schema(), so two boards in one database
-- never share a lock or a channel.

-- name: open_session
-- The session's settings (lock_timeout, statement_timeout) travel as libpq
-- startup options (store/postgres.py): no round trip.
SELECT 1

-- name: begin_write
-- READ COMMITTED; races it does not settle are serialised by advisory
-- locks. psycopg's Connection.transaction() sends BEGIN/COMMIT/ROLLBACK
-- itself; these four are here so both dialects spell the same machinery.
BEGIN

-- name: begin_read
BEGIN

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

-- name: schema_version
SELECT max(version) AS v FROM lac_schema_version

-- name: record_version
INSERT INTO lac_schema_version (version, name) VALUES (:version, :name)

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
-- The one spelling of the channel that wakes `claim --next --wait`.
'lac_work_' || current_schema()

-- name: listen_work
DO $$ BEGIN EXECUTE format('LISTEN %I', {{work_channel}}); END $$
