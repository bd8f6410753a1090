-- The listing reads the live pets from indexes that hold only them, so its plan never depends on
-- the table's statistics. Without statistics (a table filled faster than autovacuum analyses it:
-- a new database's first minute of creates, an import) PostgreSQL takes `removed_at IS NULL` to
-- hold for one row in 200; `ORDER BY id LIMIT 20` through `pets_pkey` then looks dearer than
-- reading every row and sorting them, which is what it did, for every page, until the next
-- `ANALYZE`. A partial index's rows all match, so reading it in order stays the cheapest plan.
-- `pets_status_live` replaces `pets_status_id` (the live pets by status, for a listing with a
-- status and for the inventory's count); `pets_live_id` serves the listing without one.
--
-- Expand-only: the release still serving sends the same statements; its requests wait while
-- the indexes are built.
LOCK TABLE pets IN ACCESS EXCLUSIVE MODE;
CREATE INDEX pets_live_id ON pets (id) WHERE removed_at IS NULL;
CREATE INDEX pets_status_live ON pets (status, id) WHERE removed_at IS NULL;
DROP INDEX pets_status_id;
