CREATE TABLE idempotency_records_by_key (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    status INTEGER NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    stored_at BIGINT NOT NULL,
    PRIMARY KEY (owner, key)
) WITHOUT ROWID;
INSERT INTO idempotency_records_by_key SELECT * FROM idempotency_records;
DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_by_key RENAME TO idempotency_records;
CREATE INDEX idempotency_records_stored_at ON idempotency_records (stored_at);
