-- PostgreSQL reads its listing from partial indexes of the live pets in this version
-- (migrations/postgres, 2026-12-01-000100), so that its plan does not hang on statistics a table
-- may not have yet. SQLite plans without statistics, by the indexes alone, and keeps its own.
-- The version exists on both so that every database carries the same list of migrations.
SELECT 1;
