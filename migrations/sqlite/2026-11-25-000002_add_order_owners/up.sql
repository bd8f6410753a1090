-- Orders have owners, and the store has staff (issue 25), SQLite dialect: the same schema as
-- migrations/postgres.
--
-- api_keys.scope also allows `store`, the staff's scope. SQLite cannot change a CHECK
-- constraint in place, so the table is rebuilt under its own name. `SELECT *` on purpose: should
-- an earlier migration have added a column this copy does not know, the copy fails (the column
-- counts differ) instead of silently dropping that column.
CREATE TABLE api_keys_with_store (
    id TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write', 'store')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT,
    last_used_at BIGINT,
    revision BIGINT NOT NULL
);
INSERT INTO api_keys_with_store SELECT * FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_with_store RENAME TO api_keys;
CREATE INDEX api_keys_revision ON api_keys (revision);

-- The key that placed an order (its id, the token's `jti`). NULL for the orders placed before
-- this migration: they belong to no key, so only the staff see them. No foreign key: keys are
-- revoked, never deleted, and an order outlives its key's use.
ALTER TABLE orders ADD COLUMN placed_by TEXT CHECK (length(placed_by) = 32);

-- Serves a key's listing, `WHERE placed_by = ? AND id > ? ORDER BY id LIMIT ?`, without a sort.
CREATE INDEX orders_placed_by_id ON orders (placed_by, id);
-- Serves the count of a key's open orders, in every placing transaction: only open ones are
-- in it, so it stays as small as the bound on them.
CREATE INDEX orders_open_placed_by ON orders (placed_by) WHERE status = 'placed';
