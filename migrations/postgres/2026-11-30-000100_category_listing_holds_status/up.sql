-- The category listing's index holds only the live pets, with their status: a category with a
-- status skips the other statuses' pets in the index, without reading their rows.
-- Expand-only: the release before reads a category's pets through this index as well as
-- through `pets_category_id_id`, which it replaces.
--
-- The table is locked first, at the strength the `DROP INDEX` needs: a lock taken weaker and
-- strengthened later could wait on a change of a pet that waits on it (a deadlock). Requests of
-- the release still serving wait for the index's build, about a second a million pets.
LOCK TABLE pets IN ACCESS EXCLUSIVE MODE;
CREATE INDEX pets_category_live ON pets (category_id, id) INCLUDE (status)
WHERE removed_at IS NULL;
DROP INDEX pets_category_id_id;
