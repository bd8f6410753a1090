-- The name search reads the live pets' names alone: the index holds only pets not removed, so
-- the ids in a name's range are read from the index without a look-up of each row (for
-- `removed_at`), then sorted. Expand-only: the release before does not use the index.
DROP INDEX pets_name_folded_id;
CREATE INDEX pets_name_folded_live ON pets (name_folded, id) WHERE removed_at IS NULL;
