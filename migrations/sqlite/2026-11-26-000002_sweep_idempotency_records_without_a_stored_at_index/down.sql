-- PostgreSQL drops its `stored_at` index of idempotency records in this version and sweeps the
-- table instead (migrations/postgres, 2026-11-26-000002). SQLite dropped its own in
-- 2026-11-26-000001 and purges by arrival. The version exists on both so that every database
-- carries the same list of migrations.
SELECT 1;
