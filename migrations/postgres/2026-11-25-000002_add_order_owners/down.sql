DROP INDEX orders_open_placed_by;
DROP INDEX orders_placed_by_id;
ALTER TABLE orders DROP COLUMN placed_by;

-- The scopes before `store`: a staff key keeps what a `write` key may do.
UPDATE api_keys SET scope = 'write' WHERE scope = 'store';
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'write'));
