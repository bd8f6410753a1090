-- The category listing's index holds only the live pets, with their status: a category with a
-- status skips the other statuses' pets in the index, without reading their rows.
-- Expand-only: the release before reads a category's pets through this index as well as
-- through `pets_category_id_id`, which it replaces.
CREATE INDEX pets_category_live ON pets (category_id, id, status) WHERE removed_at IS NULL;
DROP INDEX pets_category_id_id;
