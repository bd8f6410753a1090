-- SQLite drops its `stored_at` index of idempotency records in this version and purges them by
-- arrival (migrations/sqlite, 2026-11-26-000001). PostgreSQL keeps its index: its purge finds
-- the expired records with it. The version exists on both so that every database carries the
-- same list of migrations.
SELECT 1;
