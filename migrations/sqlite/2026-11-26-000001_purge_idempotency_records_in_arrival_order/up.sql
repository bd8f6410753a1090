-- The purge finds expired idempotency records by arrival (rowid) instead of by `stored_at`, so
-- the `stored_at` index goes; SQLite dialect only (PostgreSQL keeps it). Since 2026-11-26-000000
-- rows are in arrival order, and a record replaced after its expiry is a new row, so the oldest
-- rows are the expired ones (docs/benchmarks.md, Records in arrival order). The index cost every
-- keyed write a third B-tree insert and a page more in the WAL every other commit.
--
-- Compatible with the release before: its purge (`ORDER BY stored_at`) still finds the expired
-- records, by reading the table instead of the index.
DROP INDEX idempotency_records_stored_at;
