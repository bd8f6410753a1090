-- The API key registry, SQLite dialect: one row per issued key. Times are Unix seconds.
-- `revision` orders inserts and revocations: every instance reads the rows whose revision is
-- past the last one it saw (SQLite admits one writer at a time, so revisions commit in order).
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT,
    last_used_at BIGINT,
    revision BIGINT NOT NULL
);

CREATE INDEX api_keys_revision ON api_keys (revision);
