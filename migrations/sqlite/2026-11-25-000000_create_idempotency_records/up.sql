-- The responses kept for idempotency keys (Idempotency-Key on POST): one per API key (`owner`)
-- and client key, stored in the same transaction as the write it answered, replayed to retries
-- until the purge removes it after the retention (PETSTORE_IDEMPOTENCY_TTL, a day by default).
CREATE TABLE idempotency_records (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    status INTEGER NOT NULL,
    -- The response's headers, one `name: value` per line.
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    stored_at BIGINT NOT NULL,
    PRIMARY KEY (owner, key)
) WITHOUT ROWID; -- the key is the table: no rowid B-tree beside it

CREATE INDEX idempotency_records_stored_at ON idempotency_records (stored_at);
