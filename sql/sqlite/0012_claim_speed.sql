-- 0012: PostgreSQL's 0012 re-applies its functions (the name,
-- names and pattern validators became PL/pgSQL). SQLite has no stored
-- functions and its checks call none: nothing changes here; the number
-- keeps both dialects at one schema version.
SELECT 1;
