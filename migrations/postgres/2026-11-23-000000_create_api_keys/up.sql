-- The API key registry, PostgreSQL dialect: the same schema as migrations/sqlite. Writers lock
-- the table (SHARE ROW EXCLUSIVE, which readers do not wait for) so that revisions commit in
-- the order they are taken, across instances.
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY CHECK (char_length(id) = 32),
    name TEXT NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT,
    last_used_at BIGINT,
    revision BIGINT NOT NULL
);

CREATE INDEX api_keys_revision ON api_keys (revision);
