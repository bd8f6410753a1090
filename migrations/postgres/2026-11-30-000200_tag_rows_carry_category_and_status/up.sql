-- A tag's rows carry their pet's category and status, so a listing filtered by a tag with a
-- category and a status reads only the rows it answers: `pet_tags_tag_category` orders a tag's
-- rows by category then pet id, with the status beside them. Kept equal to the pet's by
-- triggers, whichever release writes: a tag row inserted without them (by the release before)
-- copies them from its pet, and a change of a pet's category or status rewrites its tag rows.
--
-- Expand-only: new nullable columns, an index and triggers.
--
-- The release still serving writes pets' statuses without their tag rows until the triggers
-- exist: changes of pets wait while the rows are copied (their reads go on), so none is copied
-- stale. Locked in the order every transaction takes them, pets then their tag rows.
LOCK TABLE pets IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE pet_tags IN ACCESS EXCLUSIVE MODE;
ALTER TABLE pet_tags ADD COLUMN category_id BIGINT, ADD COLUMN status TEXT;
UPDATE pet_tags SET category_id = pets.category_id, status = pets.status
FROM pets WHERE pets.id = pet_tags.pet_id;
CREATE INDEX pet_tags_tag_category ON pet_tags (tag, category_id, pet_id) INCLUDE (status);

CREATE FUNCTION pet_tags_copy_pet_filters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT category_id, status INTO NEW.category_id, NEW.status FROM pets WHERE id = NEW.pet_id;
    RETURN NEW;
END
$$;
CREATE TRIGGER pet_tags_copy_pet_filters BEFORE INSERT ON pet_tags FOR EACH ROW
WHEN (NEW.category_id IS NULL OR NEW.status IS NULL)
EXECUTE FUNCTION pet_tags_copy_pet_filters();

CREATE FUNCTION pets_filters_to_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE pet_tags SET category_id = NEW.category_id, status = NEW.status
    WHERE pet_id = NEW.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER pets_filters_to_tags AFTER UPDATE OF category_id, status ON pets FOR EACH ROW
WHEN (OLD.category_id IS DISTINCT FROM NEW.category_id OR OLD.status IS DISTINCT FROM NEW.status)
EXECUTE FUNCTION pets_filters_to_tags();
