-- A tag's rows carry their pet's category and status, so a listing filtered by a tag with a
-- category and a status reads only the rows it answers: `pet_tags_tag_category` orders a tag's
-- rows by category then pet id, with the status beside them. Kept equal to the pet's by
-- triggers, whichever release writes: a tag row inserted without them (by the release before)
-- copies them from its pet, and a change of a pet's category or status rewrites its tag rows.
--
-- Expand-only: new nullable columns, an index and triggers.
ALTER TABLE pet_tags ADD COLUMN category_id BIGINT;
ALTER TABLE pet_tags ADD COLUMN status TEXT;
UPDATE pet_tags
SET category_id = (SELECT category_id FROM pets WHERE pets.id = pet_tags.pet_id),
    status = (SELECT status FROM pets WHERE pets.id = pet_tags.pet_id);
CREATE INDEX pet_tags_tag_category ON pet_tags (tag, category_id, pet_id, status);

CREATE TRIGGER pet_tags_copy_pet_filters AFTER INSERT ON pet_tags
WHEN NEW.category_id IS NULL OR NEW.status IS NULL
BEGIN
    UPDATE pet_tags
    SET category_id = (SELECT category_id FROM pets WHERE pets.id = NEW.pet_id),
        status = (SELECT status FROM pets WHERE pets.id = NEW.pet_id)
    WHERE tag = NEW.tag AND pet_id = NEW.pet_id;
END;

CREATE TRIGGER pets_filters_to_tags AFTER UPDATE OF category_id, status ON pets
WHEN OLD.category_id IS NOT NEW.category_id OR OLD.status IS NOT NEW.status
BEGIN
    UPDATE pet_tags SET category_id = NEW.category_id, status = NEW.status WHERE pet_id = NEW.id;
END;
