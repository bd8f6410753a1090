CREATE INDEX IF NOT EXISTS idempotency_records_stored_at ON idempotency_records (stored_at);
