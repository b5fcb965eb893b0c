-- The store's own statements for the embedded board (store/base.py and
-- store/sqlite.py run them; the board layer never does). Every name here
-- exists in sql/postgres/queries/store.sql too (tests/test_queries.py); where
-- SQLite needs nothing, the twin says why.

-- name: open_session
-- WAL lets readers run beside the one writer; the busy timeout is set by the
-- driver (sqlite3.connect(timeout=…), from lac.timeout).
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
PRAGMA foreign_keys=ON;

-- name: begin_write
-- Takes the write lock up front: a deferred transaction that upgrades later
-- can fail with SQLITE_BUSY instead of waiting; this also makes every
-- check-then-insert on the board serial.
BEGIN IMMEDIATE

-- name: begin_read
BEGIN

-- name: commit
COMMIT

-- name: rollback
ROLLBACK

-- name: version_table
CREATE TABLE IF NOT EXISTS lac_schema_version (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)

-- name: has_version_table
SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'lac_schema_version') AS e

-- name: board_tables
-- `git lac init` checks each table the migrations made is there (store/base.py).
SELECT name FROM sqlite_master WHERE type = 'table'

-- name: schema_version
SELECT max(version) AS v FROM lac_schema_version

-- name: record_version
INSERT INTO lac_schema_version (version, name, applied_at) VALUES (:version, :name, {{now}})

-- name: function_attributes_ddl
-- PostgreSQL's team mode only (SECURITY DEFINER survives functions/ there);
-- an SQLite trigger has no attributes to keep.
SELECT NULL AS ddl WHERE 0

-- name: serialize_migrations
-- Every write transaction is BEGIN IMMEDIATE: migrations are already serial.
SELECT 1

-- name: try_exclusive
-- One keeper, one drainer per lane: an OS file lock beside the board file
-- (FileExclusive in store/sqlite.py) does it; SQLite has no session lock.
SELECT 1 AS got

-- name: ping
-- FileExclusive needs no query; the twin of PostgreSQL's.
SELECT 1

-- name: work_channel
-- No channel: SQLite waiters poll.
NULL

-- name: listen_work
-- SQLite waiters poll (`claim --next --wait`); there is nothing to listen to.
SELECT 1

-- name: session_settings
-- PostgreSQL only (a connection through a service file); never run here.
SELECT 1

-- name: create_board_ddl
-- PostgreSQL only: the embedded board is one file per repository.
SELECT NULL AS ddl

-- name: list_boards
-- The embedded board is one file per repository: it is the only one.
SELECT 'main' AS board

-- name: default_isolation
-- What a caller that sets nothing gets (PostgreSQL: `git lac doctor`). SQLite:
-- none to report, every write begins IMMEDIATE.
SELECT NULL AS level

-- name: isolation_guarded
-- PostgreSQL only (`git lac doctor`): SQLite has no isolation levels to refuse.
SELECT 1 AS guarded

-- name: current_board
SELECT 'main' AS board

-- --- the live page's change feed (0006, `git lac serve`) ----------------------

-- name: change_counter
-- Moves whenever another connection commits to the file: one cheap read.
PRAGMA data_version

-- name: begin_snapshot
-- A deferred read transaction: in WAL mode it sees one instant of the file.
BEGIN

-- name: local_settings
-- PostgreSQL behind a transaction pooler only; never run here.
SELECT 1

-- name: try_exclusive_xact
-- PostgreSQL behind a transaction pooler only; never run here.
SELECT 1 AS got
