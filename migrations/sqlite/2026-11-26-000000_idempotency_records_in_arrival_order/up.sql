-- The idempotency records become an ordinary (rowid) table, rows in the order they arrive, with
-- the key as a UNIQUE constraint beside them; SQLite dialect only (PostgreSQL's heap already
-- keeps rows in arrival order). Measured (docs/benchmarks.md, The price of an idempotency key):
-- a WITHOUT ROWID table keeps its ~200-byte rows in key order, so every keyed create inserted a
-- whole row into the middle of a B-tree (page splits that copy three pages, one page written to
-- the WAL per create for random keys); a rowid table appends the row and puts only the key
-- (and rowid) in key order.
--
-- Compatible with the release before: the same name, columns and uniqueness, so its statements
-- (`ON CONFLICT (owner, key)`) run unchanged. `SELECT *` on purpose, as in 2026-11-25-000002.
CREATE TABLE idempotency_records_in_arrival_order (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    status INTEGER NOT NULL,
    -- The response's headers, one `name: value` per line.
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    stored_at BIGINT NOT NULL,
    UNIQUE (owner, key)
);
INSERT INTO idempotency_records_in_arrival_order SELECT * FROM idempotency_records ORDER BY stored_at;
DROP TABLE idempotency_records;
ALTER TABLE idempotency_records_in_arrival_order RENAME TO idempotency_records;
CREATE INDEX idempotency_records_stored_at ON idempotency_records (stored_at);
