-- The purge sweeps the table a slice of blocks per round (crates/petstore-persistence,
-- `record_sweep.rs`) instead of finding expired records by `stored_at`, so this index, which
-- every keyed write paid for, goes. A release before this one, still running during a rolling
-- update, purges by a scan of the table until it is replaced: slower, as correct.
DROP INDEX IF EXISTS idempotency_records_stored_at;
