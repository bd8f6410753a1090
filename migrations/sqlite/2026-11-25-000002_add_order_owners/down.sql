DROP INDEX orders_open_placed_by;
DROP INDEX orders_placed_by_id;
ALTER TABLE orders DROP COLUMN placed_by;

-- The scopes before `store`: a staff key keeps what a `write` key may do.
CREATE TABLE api_keys_without_store (
    id TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT,
    last_used_at BIGINT,
    revision BIGINT NOT NULL
);
UPDATE api_keys SET scope = 'write' WHERE scope = 'store';
INSERT INTO api_keys_without_store SELECT * FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_without_store RENAME TO api_keys;
CREATE INDEX api_keys_revision ON api_keys (revision);
