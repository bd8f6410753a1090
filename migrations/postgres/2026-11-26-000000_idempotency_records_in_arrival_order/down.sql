-- SQLite rebuilds its idempotency table as a rowid table in this version (migrations/sqlite,
-- 2026-11-26-000000). PostgreSQL needs nothing: its heap already stores rows in arrival order
-- with the key in a B-tree index beside them. The version exists on both so that every
-- database carries the same list of migrations.
SELECT 1;
