-- Orders have owners, and the store has staff (issue 25), PostgreSQL dialect: the same schema
-- as migrations/sqlite.

-- api_keys.scope also allows `store`, the staff's scope.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check
    CHECK (scope IN ('read', 'write', 'store'));

-- The key that placed an order (its id, the token's `jti`). NULL for the orders placed before
-- this migration: they belong to no key, so only the staff see them. No foreign key: keys are
-- revoked, never deleted, and an order outlives its key's use.
ALTER TABLE orders ADD COLUMN placed_by TEXT CHECK (char_length(placed_by) = 32);

-- Serves a key's listing, `WHERE placed_by = $1 AND id > $2 ORDER BY id LIMIT $3`, without a
-- sort.
CREATE INDEX orders_placed_by_id ON orders (placed_by, id);
-- Serves the count of a key's open orders, in every placing transaction: only open ones are
-- in it, so it stays as small as the bound on them.
CREATE INDEX orders_open_placed_by ON orders (placed_by) WHERE status = 'placed';
