-- A pet's own tag rows, found without reading every tag's: a change of a pet replaces its tag
-- rows (`DELETE FROM pet_tags WHERE pet_id = ?`), which the key `(tag, pet_id)` cannot serve.
-- Expand-only: the release before does not use the index.
CREATE INDEX pet_tags_pet_id ON pet_tags (pet_id);
